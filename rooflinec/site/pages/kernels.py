"""Kernel pages: the kernels index and one page per kernel."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from rooflinec.catalog import LEVELS, Case, Kernel
from rooflinec.engine.cells import Result
from rooflinec.engine.terms import COMPUTE
from rooflinec.formatting import format_number, format_percent, format_si
from rooflinec.site import charts
from rooflinec.site.escape import md_row
from rooflinec.site.pages import reuse
from rooflinec.site.pages.calculator import calculator_link
from rooflinec.site.pages.common import MAX_ATTAINABLE, MAX_CASES, GeneratedPage, level_name
from rooflinec.site.pages.crossover_cell import crossover_cell
from rooflinec.site.pages.grid_summary import grid_summaries
from rooflinec.site.pages.model import Page
from rooflinec.site.pages.parts import paged_index, sources_context
from rooflinec.site.pages.reuse import device_memo

if TYPE_CHECKING:
    from rooflinec.site.pages.model import Site


def kernel_index(site: Site) -> list[GeneratedPage]:
    """`kernels/index.md` (and `index-2.md`, ...): one row per kernel."""

    def rows(page: Page, chunk: Sequence[str]) -> list[dict[str, Any]]:
        kernels = [site.catalog.kernels[k] for k in chunk]
        return [
            {
                "link": page.kernel_link(kernel.id),
                "flops": page.math(kernel.flops),
                "levels": ", ".join(level_name(lv) for lv in kernel.bytes),
                "cases": len(kernel.cases),
                "description": kernel.description,
            }
            for kernel in kernels
        ]

    return paged_index(
        site,
        list(site.catalog.kernels),
        "kernels/index.md",
        "Kernels",
        "kernels_index.md.j2",
        rows,
    )


def kernel_page(site: Site, kernel: Kernel) -> GeneratedPage:
    """`kernels/<id>.md`: the kernel's formulas, cases, intensities and results."""
    path = f"kernels/{kernel.id}.md"
    page = Page(path, site)
    cat = site.catalog
    grids = [c for c in kernel.cases if c.grid is not None]
    cases = [c for c in kernel.cases if c.grid is None][:MAX_CASES]
    case_ids = {c.id for c in cases}
    results = [r for r in reuse.results_by_kernel(site).get(kernel.id, ()) if r.case in case_ids]
    declared = [r for r in results if r.declared][:MAX_ATTAINABLE]
    hidden_results = sum(1 for r in results if r.declared) - len(declared)
    chart = charts.kernel_chart(site.compiled, kernel.id, declared)
    formulas = [
        {
            "name": "operations",
            "formula": kernel.flops,
            "unit": "FLOP, or OP for integer precisions",
        }
    ]
    formulas += [
        {"name": f"bytes at {level_name(lv)}", "formula": f, "unit": "B"}
        for lv, f in kernel.bytes.items()
    ]
    for f in formulas:
        f["math"] = page.math(f["formula"])
    # Intensity per precision: one row per case, one column per precision evaluated.
    precisions = [p for p in cat.precisions if any(r.precision == p for r in results)]
    intensity: dict[str, list[dict[str, Any]]] = {}
    by_case_precision: dict[tuple[str, str], Result] = {}
    for r in results:
        by_case_precision.setdefault((r.case, r.precision), r)
    # `Result.intensity` divides afresh on every read: once per result here.
    intensities = {key: r.intensity for key, r in by_case_precision.items()}
    for lv in kernel.bytes:
        rows = []
        for c in cases:
            cells = []
            for p in precisions:
                found = intensities.get((c.id, p))
                cells.append(format_number(found[lv]) if found is not None and lv in found else "–")
            rows.append({"case": page.case_link(c.id, c.id), "cells": cells})
        intensity[level_name(lv)] = rows
    measured = []
    traffic: list[dict[str, Any]] = []
    for c in cases:
        for m in c.measured:
            run = site.compiled.result(c.id, m.device, m.precision)
            if run is None or m.device not in cat.devices:
                continue
            measured.append(
                {
                    "case": page.case_link(c.id),
                    "device": page.device_link(m.device),
                    "precision": cat.precisions[m.precision].label,
                    "printed": m.text,
                    "rate": site.rate(run.measured, m.precision)
                    if run.measured is not None
                    else "–",
                    "attainable": site.rate(run.attainable, m.precision),
                    "efficiency": format_percent(run.efficiency)
                    if run.efficiency is not None
                    else "–",
                    "source": m.source,
                    "note": m.note,
                }
            )
            traffic.extend(_traffic_rows(site, page, run, m.precision))
    case_rows = [
        {
            "id": c.id,
            "name": c.name,
            "precision": cat.precisions[c.precision].label,
            "shape": ", ".join(
                [
                    *(f"{k} = {v}" for k, v in c.shape.items()),
                    *(f"{k}: {v}" for k, v in c.widths.items()),
                ]
            ),
            "description": c.description,
            "flops": format_si(
                next((r.flops for r in results if r.case == c.id), Fraction(0)),
                cat.precisions[c.precision].unit,
            ),
        }
        for c in cases
    ]
    attainable = [_attainable_line(site, page, r) for r in declared]
    no_result = sorted(
        {
            (cat.devices[d].name, cat.precisions[c.precision].label)
            for c in cases
            for d in cat.devices
            if c.precision not in site.compiled.devices[d].peaks
        }
    )
    crossover_rows = _crossovers(site, page, kernel, cases)
    text = site.render(
        "kernel.md.j2",
        page,
        kernel=kernel,
        calculator=calculator_link(page, kernel=kernel.id) if cases else None,
        formulas=formulas,
        symbols=[
            *sorted(kernel.symbols.items()),
            *(
                (n, f"{m} (bytes per value: w unless a case binds it)")
                for n, m in kernel.widths.items()
            ),
        ],
        uses_w=any("w" in f.symbols for f in kernel.bytes.values()),
        uses_smem=bool(kernel.shared_levels),
        cases=case_rows,
        hidden=len(kernel.cases) - len(grids) - len(cases),
        grids=grid_summaries(site, page, kernel, grids),
        precisions=[cat.precisions[p].label for p in precisions],
        intensity=intensity,
        chart=chart,
        attainable=attainable,
        no_result=no_result,
        hidden_results=hidden_results,
        measured=measured,
        traffic=traffic,
        crossover_symbols=list(kernel.symbols),
        crossovers=crossover_rows,
        crossovers_capped=len(crossover_rows) == MAX_CROSSOVER_ROWS,
        sources=sources_context(site, page, kernel.id, kernel.sources, f"{path}#source-"),
        versions=sorted(kernel.versions, key=lambda v: -v.version),
    )
    return GeneratedPage(path, kernel.name, text, page.slots, page.assets)


def _attainable_line(site: Site, page: Page, r: Result) -> Markup:
    """A result's row of the attainable table, kept per device between `serve` rebuilds
    (`reuse.device_memo`; its links are relative to the page's folder, part of the key)."""
    memo = device_memo(site, "attainable rows", r.device)
    key = (posixpath.dirname(page.path), r.case, r.precision)
    hit: Markup | None = memo.get(key)
    if hit is None:
        r_intensity = r.intensity
        where = next((lv for lv in LEVELS if lv in r_intensity), None)
        cells = [
            page.case_link(r.case, site.cases[r.case].name),
            page.device_link(r.device),
            site.catalog.precisions[r.precision].label,
            site.intensity(r_intensity[where], r.precision) if where else "–",
            site.rate(r.attainable, r.precision),
            level_name(r.limited_by) if r.limited_by != COMPUTE else COMPUTE,
            format_percent(r.share_of_peak),
            format_si(r.time, "s"),
        ]
        hit = memo[key] = md_row(cells, strong=4)
    return hit


def _traffic_rows(site: Site, page: Page, run: Result, precision: str) -> list[dict[str, Any]]:
    """Measured against modelled traffic of one run, a row per level the profiler counted."""
    if run.run is None:
        return []
    rows = []
    for level, counted in run.run.bytes.items():
        bandwidth = run.measured_bandwidth[level]
        ceiling = run.bandwidths.get(level)
        ratio = run.traffic_ratio.get(level)
        intensity = run.measured_intensity.get(level)
        rows.append(
            {
                "case": page.case_link(run.case),
                "device": page.device_link(run.device),
                "level": level_name(level),
                "modelled": format_si(run.bytes[level], "B") if level in run.bytes else "–",
                "measured": format_si(counted, "B"),
                "ratio": format_number(ratio, 3) if ratio is not None else "–",
                "intensity": site.intensity(intensity, precision) if intensity else "–",
                "bandwidth": format_si(bandwidth, "B/s")
                + (f" ({format_percent(bandwidth / ceiling)})" if ceiling else ""),
                "source": run.run.source,
            }
        )
    return rows


#: Rows of a kernel page's crossover table; `rooflinec solve` answers for any other.
MAX_CROSSOVER_ROWS = 8


def _crossovers(
    site: Site, page: Page, kernel: Kernel, cases: Sequence[Case]
) -> list[dict[str, Any]]:
    """One row per case and device with a peak at the case's declared precision (the
    first `MAX_CROSSOVER_ROWS`: a wide catalog would otherwise outgrow the page)."""
    rows: list[dict[str, Any]] = []
    for case in cases:
        for device in site.catalog.devices:
            if case.precision not in site.compiled.devices[device].peaks:
                continue
            if len(rows) == MAX_CROSSOVER_ROWS:
                return rows
            rows.append(
                {
                    "case": page.case_link(case.id, case.id),
                    "device": page.device_link(device),
                    "precision": site.catalog.precisions[case.precision].label,
                    "cells": [
                        crossover_cell(site, case.id, device, case.precision, symbol)
                        for symbol in kernel.symbols
                    ],
                }
            )
    return rows
