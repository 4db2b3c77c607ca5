"""Whole-catalog downloads: results, catalog figures and schemas as site-root files."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rooflinec import catalog_export, export
from rooflinec.compiler import Compiled

if TYPE_CHECKING:
    from rooflinec.site.pages.model import Site


def downloads(site: Site) -> dict[str, str]:
    """Whole-catalog files: every result and every device figure (with its provenance)
    as JSON and CSV at the site root, and the JSON Schemas under `schemas/`."""
    from rooflinec.resources import schemas_dir

    today = site.catalog_date
    out = {
        **DownloadFiles(site.compiled)._results_files(site.compiled.results),
        "catalog.json": catalog_export.catalog_json(site.catalog, today=today),
        "catalog.csv": catalog_export.catalog_csv(site.catalog, today=today),
    }
    for schema in sorted(schemas_dir().glob("*.json")):
        out[f"schemas/{schema.name}"] = schema.read_text("utf-8")
    if site.changes is not None:
        out.update(site.changes.downloads())
    return out


class DownloadFiles:
    """The results files of one compiled catalog."""

    def __init__(self, compiled: Compiled) -> None:
        self.compiled = compiled

    def _results_files(self, results: Sequence[Any]) -> dict[str, str]:
        """results.json and results.csv; a large catalog takes the columnar path, as
        `rooflinec compile` does, since exact rows cost ~0.2 ms each to write."""
        from rooflinec.compiler import BULK_ROWS

        if len(results) < BULK_ROWS:
            return {
                "results.json": export.to_json(self.compiled, results),
                "results.csv": export.to_csv(self.compiled, results),
            }
        import io

        from rooflinec import bulk

        table = bulk.bulk_compile(self.compiled.catalog)
        files = {}
        for name, write in (("results.json", bulk.write_json), ("results.csv", bulk.write_csv)):
            buffer = io.StringIO()
            write(table, buffer)
            files[name] = buffer.getvalue()
        return files
