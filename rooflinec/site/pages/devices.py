"""Device pages: the devices index and one page per device."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from rooflinec.catalog import LEVELS, Alternative, Device, Fabric, Figure
from rooflinec.engine.terms import COMPUTE, SWEEP_KEYS
from rooflinec.formatting import format_number, format_percent, format_si
from rooflinec.site import charts
from rooflinec.site.pages import reuse
from rooflinec.site.pages.audit import audit_layout, audit_path
from rooflinec.site.pages.calculator import calculator_link
from rooflinec.site.pages.common import (
    MAX_CASES,
    MAX_ROWS,
    MAX_SWEEPS,
    GeneratedPage,
    level_name,
    newest_versions,
)
from rooflinec.site.pages.grouping import group_by_vendor
from rooflinec.site.pages.model import Page
from rooflinec.site.pages.models import device_models
from rooflinec.site.pages.parts import device_row, paged_index, sources_context

if TYPE_CHECKING:
    from rooflinec.site.pages.model import Site


def device_index(site: Site) -> list[GeneratedPage]:
    """`devices/index.md` (and `index-2.md`, ...): one row per device, by vendor."""
    devices = site.catalog.devices
    per_page = site.limits.per_index_page
    groups = group_by_vendor(list(devices), lambda d: devices[d].vendor, per_page)
    return paged_index(
        site,
        list(devices),
        "devices/index.md",
        "Devices",
        "devices_index.md.j2",
        lambda page, chunk: [device_row(site, page, d, groups.anchors.get(d)) for d in chunk],
        chunks=groups.chunks,
        groups=groups,
        index="devices/index.md",
        precision=site.catalog.precisions[site.chart_precision],
    )


#: Other printed values a device page shows, over all its figures together: at most this
#: many rows and this many characters of their quotes and notes. The audit trail lists
#: every one, so a device with many conflicting or long-quoted values keeps a small page.
DEVICE_ALTERNATIVES = 10
DEVICE_ALTERNATIVES_TEXT = 2_400


def shown_alternatives(
    figures: Sequence[Sequence[Alternative]],
    *,
    rows: int = DEVICE_ALTERNATIVES,
    text: int = DEVICE_ALTERNATIVES_TEXT,
) -> list[list[Alternative]]:
    """Per figure, the alternatives a device page shows, in their order.

    Taken a rank at a time (every figure's first, then every figure's second, ...) so
    each figure with conflicts shows one before any shows two; one whose quote and note
    do not fit the text left is skipped, and a shorter one after it may still fit.
    """
    chosen: set[tuple[int, int]] = set()
    used = 0
    for rank in range(max((len(alts) for alts in figures), default=0)):
        for f, alts in enumerate(figures):
            if rank >= len(alts) or len(chosen) >= rows:
                continue
            cost = len(alts[rank].quote or "") + len(alts[rank].note or "")
            if used + cost <= text:
                chosen.add((f, rank))
                used += cost
    return [[a for i, a in enumerate(alts) if (f, i) in chosen] for f, alts in enumerate(figures)]


def _alternative_rows(
    page: Page, path: str, figure: Figure, alts: list[Alternative], rate: str | None = None
) -> dict[str, Any]:
    """A figure's alternatives as its table shows them, and how many more it has; a peak's
    (`rate`, its unit) with their sparsity, pipe and dense rate."""
    return {
        "alternatives": [
            {
                "value": a.text,
                **(
                    {
                        "sparsity": a.sparsity or "dense",
                        "pipe": a.pipe or "–",
                        "dense": format_si(a.dense, rate),
                    }
                    if rate is not None
                    else {}
                ),
                "source": page.link(a.source, f"{path}#source-{a.source}"),
                "quote": a.quote,
                "note": a.note,
            }
            for a in alts
        ],
        "more": len(figure.alternatives) - len(alts),
    }


def device_page(site: Site, device: Device) -> GeneratedPage:
    """`devices/<id>.md`: the device's figures, ridges, kernel results and sources."""
    path = f"devices/{device.id}.md"
    page = Page(path, site)
    cat = site.catalog
    fig = site.compiled.devices[device.id]
    fig_ridges = fig.ridges
    results = reuse.declared(site)[device.id]
    shown = results[:MAX_ROWS]
    levels = [lv for lv in LEVELS if lv in fig.bandwidths]
    chart = charts.device_roofline(site.compiled, device.id, shown, site.chart_precision)
    p_glance = site.chart_precision if site.chart_precision in fig.peaks else next(iter(fig.peaks))
    figures = [peak.figure for peak in device.peaks.values()]
    figures += [mem.bandwidth for mem in device.memory.values()]
    shown_alts = iter(shown_alternatives([f.alternatives for f in figures]))
    peaks = []
    for p, peak in device.peaks.items():
        pr = cat.precisions[p]
        unit = pr.unit
        alts = next(shown_alts)
        peaks.append(
            {
                "precision": pr.label,
                "printed": peak.figure.text,
                "sparsity": peak.sparsity or "dense",
                "pipe": peak.pipe or "–",
                "dense": format_si(peak.dense, f"{unit}/s"),
                "share": format_percent(device.compute_share),
                "sustained": format_si(fig.peaks[p], f"{unit}/s"),
                "source": page.link(peak.figure.source, f"{path}#source-{peak.figure.source}"),
                "quote": peak.figure.quote,
                "note": peak.figure.note,
                **_alternative_rows(page, path, peak.figure, alts, rate=f"{unit}/s"),
                "audit": page.href(audit_layout(site).target(device.id, f"compute.{p}")),
            }
        )
    memory = []
    for lv, mem in device.memory.items():
        alts = next(shown_alts)
        memory.append(
            {
                "level": level_name(lv),
                "label": mem.label,
                "printed": mem.bandwidth.text,
                "share": format_percent(device.share_of(lv)),
                "sustained": format_si(fig.bandwidths[lv], "B/s"),
                "capacity": (
                    f"{format_si(mem.capacity.per_chip, 'B')} ({mem.capacity.text})"
                    if mem.capacity is not None and mem.capacity.binary
                    else format_si(mem.capacity.per_chip, "B")
                    if mem.capacity is not None
                    else "–"
                ),
                "source": page.link(mem.bandwidth.source, f"{path}#source-{mem.bandwidth.source}"),
                "quote": mem.bandwidth.quote,
                "capacity_quote": mem.capacity.quote if mem.capacity else None,
                "note": mem.note or mem.bandwidth.note,
                **_alternative_rows(page, path, mem.bandwidth, alts),
                "audit": page.href(audit_layout(site).target(device.id, f"memory.{lv}")),
            }
        )
    ridges = [
        {
            "precision": cat.precisions[p].label,
            "cells": [
                site.intensity(fig_ridges[p][lv], p) if lv in fig_ridges[p] else "–"
                for lv in levels
            ],
        }
        for p in fig.peaks
    ]
    case_levels = [lv for lv in LEVELS if any(lv in r.bytes for r in shown)]
    has_measured = any(r.measured is not None for r in shown)
    kernels = []
    for n, r in enumerate(shown, start=1):
        intensity = r.intensity
        kernels.append(
            {
                "n": n,
                "case": page.case_link(r.case),
                "case_id": page.case_link(r.case, r.case),
                "precision": cat.precisions[r.precision].label,
                "intensity": [
                    site.intensity(intensity[lv], r.precision) if lv in intensity else "–"
                    for lv in case_levels
                ],
                "ridge": site.intensity(fig_ridges[r.precision]["dram"], r.precision)
                if "dram" in fig_ridges[r.precision]
                else "–",
                "attainable": site.rate(r.attainable, r.precision),
                "limited_by": level_name(r.limited_by) if r.limited_by != COMPUTE else COMPUTE,
                "share": format_percent(r.share_of_peak),
                "time": format_si(r.time, "s"),
                "measured": site.rate(r.measured, r.precision) if r.measured is not None else "–",
                "efficiency": format_percent(r.efficiency) if r.efficiency is not None else "–",
                "bw_sweep": [
                    site.rate(v, r.precision) for f, v in r.bandwidth_sweep.items() if f != "1"
                ],
                "peak_sweep": [
                    site.rate(v, r.precision) for f, v in r.peak_sweep.items() if f != "1"
                ],
            }
        )
    unmodelled: dict[tuple[str, str], list[Markup]] = {}
    for r in shown:
        for lv, why in r.unmodelled:
            unmodelled.setdefault((level_name(lv), why), []).append(page.case_link(r.case))
    for key, links in unmodelled.items():
        if len(links) == len(shown) > 1:
            unmodelled[key] = [Markup("every case")]
    present = {r.case for r in results}
    missing = [
        {"case": page.case_link(case.id), "precision": cat.precisions[case.precision].label}
        for case in cat.cases.values()
        if case.id not in present
    ][:MAX_CASES]
    gemm = gemm_batches(site, device)
    fabrics = [_fabric(page, fabric) for fabric in device.interconnect.values()]
    power = _power(page, device, site.prices.get(device.id))
    models = device_models(site, page, device.id)
    sources = sources_context(site, page, device.id, device.sources, f"{path}#source-")
    versions, earlier = newest_versions(device.versions)
    text = site.render(
        "device.md.j2",
        page,
        device=device,
        audit=page.href(audit_path(device.id)),
        calculator=calculator_link(page, device=device.id),
        glance={
            "precision": cat.precisions[p_glance].label,
            "peak": site.rate(fig.peaks[p_glance], p_glance),
            "dram": device.memory.get("dram"),
            "bandwidth": format_si(fig.bandwidths["dram"], "B/s")
            if "dram" in fig.bandwidths
            else None,
            "ridge": site.intensity(fig_ridges[p_glance]["dram"], p_glance)
            if "dram" in fig.bandwidths
            else None,
            "bound": sum(1 for r in results if r.limited_by != COMPUTE),
            "cases": len(results),
        },
        chart=chart,
        peaks=peaks,
        memory=memory,
        levels=[level_name(lv) for lv in levels],
        ridges=ridges,
        case_levels=[level_name(lv) for lv in case_levels],
        kernels=kernels,
        mixed=len({k["precision"] for k in kernels}) > 1,
        sweeps=kernels[:MAX_SWEEPS],
        has_measured=has_measured,
        sweep_keys=SWEEP_KEYS,
        unmodelled=sorted(unmodelled.items()),
        missing=missing,
        gemm=gemm,
        models=models,
        fabrics=fabrics,
        power=power,
        hidden=len(results) - len(shown),
        compute_share=format_percent(device.compute_share),
        memory_share=format_percent(device.memory_share),
        sources=sources,
        versions=versions,
        earlier=earlier,
        changelog_href=page.href("changelog.md"),
    )
    return GeneratedPage(path, device.name, text, page.slots, page.assets)


def _fabric(page: Page, fabric: Fabric) -> dict[str, Any]:
    """One interconnect level's row and quote on the device page; its note and the quotes
    of its domain, latency and share are on its audit trail, which keeps the page small."""
    path = page.path
    figure = fabric.bandwidth
    printed = figure.text
    if figure.chips != 1:
        printed += f" for {figure.chips} chips"
    return {
        "role": fabric.role.replace("_", "-"),
        "label": fabric.label,
        "printed": printed,
        "direction": fabric.direction,
        "per_direction": format_si(fabric.per_direction, "B/s"),
        "share": format_percent(fabric.share),
        "sustained": format_si(fabric.sustained_per_direction, "B/s"),
        "domain": str(fabric.chips) if fabric.chips is not None else "–",
        "topology": ", ".join(t for t in (fabric.topology, fabric.reduction) if t) or "–",
        "latency": fabric.latency.text if fabric.latency is not None else "–",
        "source": page.link(figure.source, f"{path}#source-{figure.source}"),
        "quote": figure.quote,
    }


def _power(page: Page, device: Device, reader: Fraction | None) -> dict[str, Any]:
    """The power and the quoted price, with their sources, when the device gives them
    ("no quoted price" otherwise), and the reader's price (USD per chip-hour) where the
    site's `prices` option gives one."""
    path = page.path
    power = device.power
    price = device.price
    return {
        "power": None
        if power is None
        else {
            "value": power.text,
            "kind": power.kind,
            "per_chip": format_si(power.per_chip, "W") if power.chips != 1 else None,
            "chips": power.chips,
            "source": page.link(power.source, f"{path}#source-{power.source}"),
            "quote": power.quote,
            "note": power.note,
        },
        "price": None
        if price is None
        else {
            "value": price.text,
            "date": price.date,
            "source": page.link(price.source, f"{path}#source-{price.source}"),
            "quote": price.quote,
            "note": price.note,
        },
        "reader": None if reader is None else f"{format_number(reader, 4)} USD/h",
    }


#: The kernel and symbol of a device page's batch table: the rows M of a GEMM whose
#: weights (K x N) are those of the kernel's first case.
GEMM_KERNEL, GEMM_BATCH = "gemm", "M"


def gemm_batches(site: Site, device: Device) -> dict[str, Any] | None:
    """Per precision, the batch from which the catalog's GEMM case turns compute bound;
    None when the catalog has no `gemm` kernel with a case and an `M`."""
    from rooflinec.site.pages.crossover_cell import crossover_cell

    kernel = site.catalog.kernels.get(GEMM_KERNEL)
    if kernel is None or not kernel.cases or GEMM_BATCH not in kernel.symbols:
        return None
    case = kernel.cases[0]
    page = Page(f"devices/{device.id}.md", site)
    return {
        "case": page.case_link(case.id, case.id),
        "held": ", ".join(f"{k} = {v:,}" for k, v in case.shape.items() if k != GEMM_BATCH),
        "rows": [
            {
                "precision": p,
                "batch": crossover_cell(site, case.id, device.id, p, GEMM_BATCH),
            }
            for p in device.peaks
        ],
    }
