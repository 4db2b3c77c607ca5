"""Whole-catalog downloads: results, catalog figures and schemas as site-root files."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from rooflinec.outputs import catalog, results

if TYPE_CHECKING:
    from rooflinec.site.pages.model import Site


def downloads(site: Site) -> dict[str, str]:
    """Whole-catalog files: every result of the plain cases and every device figure (with
    its provenance) as JSON and CSV at the site root, each grid case's results as
    `results/<case>.csv`, and the JSON Schemas under `schemas/`."""
    from rooflinec.resources import schemas_dir
    from rooflinec.site.pages.grid_summary import grid_downloads

    out = {
        **results_files(site),
        **grid_downloads(site),
        **catalog_files(site),
    }
    for schema in sorted(schemas_dir().glob("*.json")):
        out[f"schemas/{schema.name}"] = schema.read_text("utf-8")
    if site.changes is not None:
        out.update(site.changes.downloads())
    return out


def catalog_files(site: Site) -> dict[str, str]:
    """catalog.json and catalog.csv: every device figure with its provenance, as `rooflinec
    export` writes them. Each device's part is kept between `serve` rebuilds while its spec
    does not change (`reuse.device_memo`, keyed by the catalog date the trails read)."""
    from rooflinec.site.pages.reuse import device_memo

    cat, today = site.catalog, site.catalog_date
    json_parts: list[str] = []
    csv_parts: list[str] = []
    for device in cat.devices:
        memo = device_memo(site, "catalog figures", device)
        found = memo.get(today)
        if found is None:
            found = memo[today] = (
                catalog.device_json(cat, device, today=today),
                catalog.device_csv(cat, device, today=today),
            )
        json_parts.extend(found[0])
        csv_parts.append(found[1])
    return {
        "catalog.json": catalog.catalog_json_of(json_parts),
        "catalog.csv": catalog.catalog_csv_of(csv_parts),
    }


def results_files(site: Site) -> dict[str, str]:
    """results.json and results.csv: every cell, as `rooflinec compile` writes it."""
    cells = site.compiled.rows()
    return {
        "results.json": results_json(site, cells),
        "results.csv": results_csv(site, cells),
    }


def results_csv(site: Site, cells: Sequence[int]) -> str:
    """`rooflinec compile --format csv` of `cells` (every cell): each device's lines are
    kept between `serve` rebuilds like its JSON rows (`results_json`), and dealt back in
    the cells' order under the one header line."""
    compiled = site.compiled
    lines = _dealt(site, cells, "results.csv lines", _device_csv)
    if lines is None:  # nothing kept, or a value written over several lines
        return results.results_text(compiled, cells, "csv")
    return results.results_text(compiled, [], "csv") + "".join(lines)


def _device_csv(site: Site, device: str) -> tuple[str, ...] | None:
    """The CSV lines of `device`'s cells, without the header; None when they are not
    one line per cell (a quoted value holding a line break)."""
    compiled = site.compiled
    cells = compiled.rows(devices=[device])
    lines = results.results_text(compiled, cells, "csv").splitlines(keepends=True)[1:]
    return tuple(lines) if len(lines) == len(cells) else None


def results_json(site: Site, cells: Sequence[int]) -> str:
    """`rooflinec compile --format json` of `cells` (every cell): each device's rows
    (`results.json_rows` of that device's cells alone) are kept between `serve` rebuilds
    while its spec (and the kernels' and precisions') do not change."""
    compiled = site.compiled
    rows = _dealt(site, cells, "results.json rows", _device_rows)
    if rows is None:  # one document at once is cheaper when nothing is kept
        return results.results_text(compiled, cells, "json")
    out = io.StringIO()
    results.write_json(compiled, cells, out, rows=[rows])
    return out.getvalue()


def _dealt(
    site: Site,
    cells: Sequence[int],
    kind: str,
    of_device: Callable[[Site, str], tuple[str, ...] | None],
) -> list[str] | None:
    """One text per cell of `cells` (the whole catalog's), from each device's texts
    (`of_device`, kept between `serve` rebuilds as `kind`): cells are case-major, so
    the devices' texts are dealt back in the cells' order. None outside a `serve`
    session, or when `of_device` gives None for a device."""
    from rooflinec.site.pages.reuse import for_device, reusing

    if not reusing(site):
        return None
    pair_device = site.compiled.counts.pair_device
    n_pairs = len(pair_device)
    by_device: dict[str, Iterator[str]] = {}
    for device in dict.fromkeys(pair_device[i % n_pairs] for i in cells):
        texts = for_device(site, kind, device, of_device, site, device)
        if texts is None:
            return None
        by_device[device] = iter(texts)
    dealt = [next(by_device[pair_device[i % n_pairs]]) for i in cells]
    # Every cell of each device was dealt: `cells` is the whole catalog's, as documented.
    assert all(next(left, None) is None for left in by_device.values())
    return dealt


def _device_rows(site: Site, device: str) -> tuple[str, ...]:
    """The rows of `device`'s cells as `results.write_json` writes them."""
    compiled = site.compiled
    cells = compiled.rows(devices=[device])
    return tuple(row for batch in results.json_rows(compiled, cells) for row in batch)
