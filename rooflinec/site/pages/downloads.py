"""Whole-catalog downloads: results, catalog figures and schemas as site-root files."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rooflinec import catalog_export, export
from rooflinec.site.pages.base import PageModel


class DownloadFiles(PageModel):
    """The site's download files."""

    def downloads(self) -> dict[str, str]:
        """Whole-catalog files: every result and every device figure (with its provenance)
        as JSON and CSV at the site root, and the JSON Schemas under `schemas/`."""
        from rooflinec.resources import schemas_dir

        results = self.compiled.results
        today = self.catalog_date
        out = {
            **self._results_files(results),
            "catalog.json": catalog_export.catalog_json(self.catalog, today=today),
            "catalog.csv": catalog_export.catalog_csv(self.catalog, today=today),
        }
        for schema in sorted(schemas_dir().glob("*.json")):
            out[f"schemas/{schema.name}"] = schema.read_text("utf-8")
        if self.changes is not None:
            out.update(self.changes.downloads())
        return out

    def _results_files(self, results: Sequence[Any]) -> dict[str, str]:
        """results.json and results.csv: every cell, as `rooflinec compile` writes it."""
        cells = self.compiled.rows()
        return {
            "results.json": export.results_text(self.compiled, cells, "json"),
            "results.csv": export.results_text(self.compiled, cells, "csv"),
        }
