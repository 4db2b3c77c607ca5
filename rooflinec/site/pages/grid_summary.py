"""A grid case on its kernel's page: a summary, never a table of every row.

The summary gives each symbol's values as written, the number of shapes, the range of
intensity per precision and level, the crossovers of each symbol that takes more than
one value, and a link to the grid's results as a CSV download. The crossovers vary one
symbol over 1..10^12 with the others held at their smallest values, and again at their
largest (the grid's first and last shapes): the two ends of the grid, between which a
monotone kernel's crossover moves. Grid rows are not plotted: a chart of a million
markers says nothing a range does not.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from rooflinec.catalog import Case, Kernel
from rooflinec.engine.grids import select
from rooflinec.formulas import Formula, bulk_evaluate
from rooflinec.formulas.vectorised import evaluate_int64
from rooflinec.outputs import results
from rooflinec.site.pages.common import level_name

if TYPE_CHECKING:
    from rooflinec.site.pages.model import Page, Site

#: A grid with more rows than this gets no download on the site (the summary says how
#: to compile it): a site is not the place for a file of hundreds of megabytes.
MAX_DOWNLOAD_ROWS = 200_000
#: Intensity ranges are taken over every shape up to this many; beyond, at the corners.
MAX_SCANNED_SHAPES = 1_000_000
#: Devices in a grid's crossover table.
MAX_CROSSOVER_DEVICES = 4
_CHUNK = 1 << 16


def grid_download(case: Case) -> str:
    """The site path of a grid case's results."""
    return f"results/{case.id}.csv"


def grid_downloads(site: Site) -> dict[str, str]:
    """Each grid case's rows (every device and precision) as CSV, when not too many."""
    out: dict[str, str] = {}
    compiled = site.compiled
    for case in site.catalog.cases.values():
        if case.grid is None:
            continue
        selection = select(compiled, cases=[case.id])
        if len(selection) <= MAX_DOWNLOAD_ROWS:
            out[grid_download(case)] = results.results_text(compiled, selection, "csv")
    return out


def grid_summaries(
    site: Site, page: Page, kernel: Kernel, cases: list[Case]
) -> list[dict[str, Any]]:
    """The summary of each grid case of a kernel page."""
    from rooflinec.site.pages.crossover_cell import crossover_cell

    cat = site.catalog
    out = []
    for case in cases:
        grid = case.grid
        assert grid is not None
        selection = select(site.compiled, cases=[case.id])
        precisions = [
            p
            for p in cat.precisions
            if any(site.compiled.devices[d].peaks.get(p) for d in cat.devices)
        ]
        intensity = [
            {
                "precision": cat.precisions[p].label,
                "level": level_name(lv),
                "range": _range_text(site, kernel, case, p, formula),
            }
            for lv, formula in kernel.bytes.items()
            for p in precisions
        ]
        varied = [axis.symbol for axis in grid.axes if axis.count > 1]
        devices = [d for d in cat.devices if case.precision in site.compiled.devices[d].peaks]
        crossovers = [
            {
                "device": page.device_link(device),
                "cells": [
                    (
                        crossover_cell(site, case.id, device, case.precision, s, shape=grid.first),
                        crossover_cell(site, case.id, device, case.precision, s, shape=grid.last),
                    )
                    for s in varied
                ],
            }
            for device in devices[:MAX_CROSSOVER_DEVICES]
        ]
        rows = len(selection)
        out.append(
            {
                "id": case.id,
                "name": case.name,
                "description": case.description,
                "precision": cat.precisions[case.precision].label,
                "axes": [
                    {"symbol": a.symbol, "written": a.text, "count": f"{a.count:,}"}
                    for a in grid.axes
                ],
                "shapes": f"{grid.size:,}",
                "rows": f"{rows:,}",
                "first": ", ".join(f"{k} = {v:,}" for k, v in grid.first.items()),
                "last": ", ".join(f"{k} = {v:,}" for k, v in grid.last.items()),
                "scanned": grid.size <= MAX_SCANNED_SHAPES,
                "intensity": intensity,
                "varied": varied,
                "crossovers": crossovers,
                "more_devices": max(0, len(devices) - MAX_CROSSOVER_DEVICES),
                "download": page.href(grid_download(case)) if rows <= MAX_DOWNLOAD_ROWS else None,
            }
        )
    return out


def _range_text(site: Site, kernel: Kernel, case: Case, precision: str, bytes_: Formula) -> str:
    """`0.9998 FLOP/B – 3855 FLOP/B`: the least and the greatest intensity of the grid at
    one precision and level (over every shape, or its corners when it is very large)."""
    grid = case.grid
    assert grid is not None
    width = site.catalog.precisions[precision].bytes
    w: int | Fraction = int(width) if width.denominator == 1 else width
    lowest: tuple[float, dict[str, int]] | None = None
    highest: tuple[float, dict[str, int]] | None = None
    chunks: Iterable[dict[str, Any]]
    if grid.size <= MAX_SCANNED_SHAPES:
        chunks = (
            grid.columns(start, min(grid.size, start + _CHUNK))
            for start in range(0, grid.size, _CHUNK)
        )
    else:
        chunks = iter(
            [
                {
                    a.symbol: np.array([a.first, a.last], dtype=np.int64)[
                        (np.arange(1 << len(grid.axes)) >> k) & 1
                    ]
                    for k, a in enumerate(grid.axes)
                }
            ]
            if len(grid.axes) <= 8
            else [{a.symbol: np.array([a.first, a.last], dtype=np.int64) for a in grid.axes}]
        )
    for shapes in chunks:
        ratio = _intensity(kernel.flops, bytes_, shapes, w)
        low_at, high_at = int(np.argmin(ratio)), int(np.argmax(ratio))
        if lowest is None or float(ratio[low_at]) < lowest[0]:
            lowest = (float(ratio[low_at]), {s: int(v[low_at]) for s, v in shapes.items()})
        if highest is None or float(ratio[high_at]) > highest[0]:
            highest = (float(ratio[high_at]), {s: int(v[high_at]) for s, v in shapes.items()})
    assert lowest is not None and highest is not None
    low, high = (_exact(kernel.flops, bytes_, s, w) for _, s in (lowest, highest))
    if low == high:
        return site.intensity(low, precision)
    return f"{site.intensity(low, precision)} – {site.intensity(high, precision)}"


def _intensity(flops: Formula, bytes_: Formula, shapes: dict[str, Any], w: int | Fraction) -> Any:
    """Float intensity of each shape (to find the extremes; the shown values are exact)."""
    values = []
    for formula in (flops, bytes_):
        columns = {s: v for s, v in shapes.items() if s in formula.symbols}
        fast = evaluate_int64(formula, columns, {"w": w})
        if fast is None:
            n = len(next(iter(shapes.values())))
            plain = {s: list(v.tolist()) for s, v in columns.items()}
            if "w" in formula.symbols:
                plain["w"] = [w] * n
            exact = bulk_evaluate(formula, plain) if plain else [formula.evaluate({})] * n
            values.append(np.array([float(x) for x in exact]))
        else:
            values.append(fast.astype(np.float64))
    return values[0] / values[1]


def _exact(flops: Formula, bytes_: Formula, shape: dict[str, int], w: int | Fraction) -> Fraction:
    values: dict[str, int | Fraction] = {**shape, "w": w}
    return flops.evaluate(values) / bytes_.evaluate(values)
