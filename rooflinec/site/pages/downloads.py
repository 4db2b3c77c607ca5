"""Whole-catalog downloads: results, catalog figures and schemas as site-root files."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rooflinec import catalog_export, export
from rooflinec.compiler import Compiled

if TYPE_CHECKING:
    from rooflinec.site.pages.model import Site


def downloads(site: Site) -> dict[str, str]:
    """Whole-catalog files: every result of the plain cases and every device figure (with
    its provenance) as JSON and CSV at the site root, each grid case's results as
    `results/<case>.csv`, and the JSON Schemas under `schemas/`."""
    from rooflinec.resources import schemas_dir

    today = site.catalog_date
    from rooflinec.site.pages.grid_summary import grid_downloads

    out = {
        **results_files(site.compiled),
        **grid_downloads(site),
        "catalog.json": catalog_export.catalog_json(site.catalog, today=today),
        "catalog.csv": catalog_export.catalog_csv(site.catalog, today=today),
    }
    for schema in sorted(schemas_dir().glob("*.json")):
        out[f"schemas/{schema.name}"] = schema.read_text("utf-8")
    if site.changes is not None:
        out.update(site.changes.downloads())
    return out


def results_files(compiled: Compiled) -> dict[str, str]:
    """results.json and results.csv: every cell, as `rooflinec compile` writes it."""
    cells = compiled.rows()
    return {
        "results.json": export.results_text(compiled, cells, "json"),
        "results.csv": export.results_text(compiled, cells, "csv"),
    }
