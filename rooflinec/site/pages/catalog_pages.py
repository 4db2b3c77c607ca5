"""Whole-catalog pages: the comparison matrix, the glossary and the changelog."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from rooflinec.catalog import Case, Precision
from rooflinec.engine.terms import COMPUTE
from rooflinec.formatting import format_number
from rooflinec.site.escape import external_link, md
from rooflinec.site.pages import reuse
from rooflinec.site.pages.common import (
    CHANGELOG_PAGE_BUDGET,
    MAX_MATRIX_CASES,
    PER_COMPARISON_PAGE,
    GeneratedPage,
    chunks_by_size,
    level_name,
    records,
)
from rooflinec.site.pages.frontier import frontier_summary
from rooflinec.site.pages.grouping import group_by_vendor
from rooflinec.site.pages.model import Page, split_pages

if TYPE_CHECKING:
    from rooflinec.site.pages.model import Site

SPEC_FOLDERS = {"device": "devices", "kernel": "kernels", "model": "models", "method": "method"}


def spec_target(kind: str, ident: str) -> str:
    """The docs-relative page of a spec: `devices/<id>.md`, `kernels/<id>.md`, ...; the
    precisions are listed on the glossary."""
    if kind == "precisions":
        return "glossary.md"
    return f"{SPEC_FOLDERS[kind]}/{ident}.md"


def comparison_pages(site: Site) -> list[GeneratedPage]:
    """`comparison.md` (and `comparison-2.md`, ...): attainable rates of every case on
    every device at the chart precision, and each device's ridge points; devices by vendor,
    `PER_COMPARISON_PAGE` at most on a page, each vendor's on one page when they fit."""
    cat = site.catalog
    p = site.chart_precision
    with_peak = [d for d in cat.devices if p in site.compiled.devices[d].peaks]
    groups = group_by_vendor(
        list(cat.devices), lambda d: cat.devices[d].vendor, PER_COMPARISON_PAGE
    )
    cases = list(cat.cases.values())[:MAX_MATRIX_CASES]
    precisions = list(cat.precisions)
    # A vendor's anchor sits on its first row of the matrix; a vendor none of whose
    # devices has the chart precision has no matrix row, so its ridge row takes it.
    matrix_anchors: dict[str, str] = {}
    ridge_anchors: dict[str, str] = {}
    for first, anchor in groups.anchors.items():
        vendor = cat.devices[first].vendor
        members = [d for d in cat.devices if cat.devices[d].vendor == vendor]
        shown = [d for d in members if d in with_peak]
        if shown:
            matrix_anchors[shown[0]] = anchor
        else:
            ridge_anchors[first] = anchor

    def text(page: Page, n: int, chunk: Sequence[str], pager: Markup) -> str:
        return site.render(
            "comparison.md.j2",
            page,
            precision=cat.precisions[p],
            header=[page.case_link(c.id, c.id) for c in cases],
            cases=cases,
            matrix=[
                _matrix_row(site, page, d, cases, matrix_anchors.get(d))
                for d in chunk
                if d in with_peak
            ],
            hidden_cases=len(cat.cases) - len(cases),
            without=[page.device_link(d) for d in chunk if d not in with_peak],
            precision_labels=[cat.precisions[q].label for q in precisions],
            ridges=[
                {**_ridge_row(site, page, d, precisions), "anchor": ridge_anchors.get(d)}
                for d in chunk
            ],
            other_levels=[
                row for d in chunk for row in _other_level_rows(site, page, d, precisions)
            ],
            total=len(cat.devices),
            pager=pager,
            vendor_links=groups.links(page, "comparison.md"),
            frontiers=frontier_summary(site, page) if n == 1 and site.frontier else [],
        )

    return split_pages(site, "comparison.md", groups.chunks, lambda n: "Comparison", text)


def _matrix_row(
    site: Site, page: Page, device_id: str, cases: Sequence[Case], anchor: str | None
) -> dict[str, Any]:
    """One device's attainable rate on each case at the chart precision."""
    p = site.chart_precision
    cells = []
    for c in cases:
        r = reuse.by_precision(site).get((c.id, device_id))
        if r is None:
            cells.append(Markup("–"))
            continue
        rate = site.rate(r.attainable, p)
        if r.limited_by == COMPUTE:
            cells.append(Markup(f"**{md(rate)}**"))
        else:
            cells.append(Markup(f"{md(rate)}, {md(level_name(r.limited_by))}"))
    return {
        "device": page.device_link(device_id),
        "vendor": site.catalog.devices[device_id].vendor,
        "anchor": anchor,
        "cells": cells,
    }


def _ridge_row(site: Site, page: Page, device_id: str, precisions: Sequence[str]) -> dict[str, Any]:
    """One device's DRAM ridge point at every precision (`–` where it has no peak)."""
    fig = site.compiled.devices[device_id]
    return {
        "device": page.device_link(device_id),
        "vendor": site.catalog.devices[device_id].vendor,
        "cells": [
            format_number(fig.ridges[q]["dram"])
            if q in fig.ridges and "dram" in fig.ridges[q]
            else "–"
            for q in precisions
        ],
    }


def _other_level_rows(
    site: Site, page: Page, device_id: str, precisions: Sequence[str]
) -> list[dict[str, Any]]:
    """A device's ridge points against its on-chip levels, where it gives their bandwidth."""
    fig = site.compiled.devices[device_id]
    return [
        {
            "device": page.device_link(device_id),
            "vendor": site.catalog.devices[device_id].vendor,
            "level": level_name(lv),
            "cells": [
                format_number(fig.ridges[q][lv]) if q in fig.ridges else "–" for q in precisions
            ],
        }
        for lv in ("l2", "l1")
        if lv in fig.bandwidths
    ]


def glossary_page(site: Site) -> GeneratedPage:
    """`glossary.md`: every method's glossary terms, alphabetically."""
    path = "glossary.md"
    page = Page(path, site)
    terms = []
    for m in site.catalog.methods.values():
        for t in records(m.data.get("glossary")):
            terms.append({**t, "method": page.link(m.title, f"method/{m.id}.md")})
    terms.sort(key=lambda t: str(t.get("term", "")).lower())
    text = site.render(
        "glossary.md.j2",
        page,
        terms=terms,
        precisions=[_precision_row(p) for p in site.catalog.precisions.values()],
        sources=[
            {"id": sid, "link": external_link(src.title, src.url), "source": src}
            for sid, src in site.catalog.precision_sources.items()
        ],
    )
    return GeneratedPage(path, "Glossary", text, page.slots, page.assets)


def _precision_row(p: Precision) -> dict[str, Any]:
    """A precision as the glossary lists it: its bytes per value exactly (and as a
    decimal), how it was written, what it counts and whether a peak may name it."""
    written = f"bytes: {format_number(p.bytes, 6)}" if p.bits is None else f"bits: {p.bits}"
    if p.scale is not None:
        bits, per = p.scale
        written += f"; one {bits}-bit scale per {per:,} values"
    exact = f"{format_number(p.bytes, 6)} B"
    if p.bytes.denominator != 1:
        exact = f"{p.bytes.numerator}/{p.bytes.denominator} = {exact}"
    return {
        "id": p.id,
        "label": p.label,
        "bytes": exact,
        "bits": f"{format_number(p.bytes * 8, 6)}",
        "written": written,
        "unit": p.unit,
        "use": "widths only" if p.width_only else "peaks and widths",
        "source": p.source,
        "quote": p.quote,
        "description": p.description,
    }


def _changelog_weight(entry: tuple[str, str, str, str, Any]) -> int:
    """A changelog row's HTML, estimated: its change, its spec's name (the link's text
    and, about as long, its address) and the cells around them (about 70 bytes)."""
    return len(entry[4].change) + 2 * len(entry[2]) + 70


def changelog_pages(site: Site) -> list[GeneratedPage]:
    """`changelog.md` (and `changelog-2.md`, ...): every spec version, newest first."""
    cat = site.catalog
    entries: list[tuple[str, str, str, str, Any]] = []
    for kind, specs in (("device", cat.devices), ("kernel", cat.kernels), ("model", cat.models)):
        for spec in specs.values():
            entries += [(v.date, kind, spec.name, spec.id, v) for v in spec.versions]
    for method in cat.methods.values():
        entries += [(v.date, "method", method.title, method.id, v) for v in method.versions]
    entries.sort(key=lambda e: (e[0], e[1], e[3], e[4].version), reverse=True)

    def text(page: Page, n: int, chunk: Any, pager: Markup) -> str:
        rows = [
            {
                "date": date,
                "kind": kind,
                "spec": page.link(name, spec_target(kind, ident)),
                "version": v.version,
                "change": v.change,
            }
            for date, kind, name, ident, v in chunk
        ]
        return site.render("changelog.md.j2", page, rows=rows, pager=pager)

    # Cut by the rows' text, not their number: a version's change can be a paragraph.
    chunks = chunks_by_size(entries, _changelog_weight, CHANGELOG_PAGE_BUDGET)
    return split_pages(site, "changelog.md", chunks, lambda n: "Changelog", text)
