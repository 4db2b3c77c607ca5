"""Whole-catalog pages: the comparison matrix, the glossary and the changelog."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from rooflinec.formatting import format_number
from rooflinec.site.escape import md
from rooflinec.site.pages.common import (
    MAX_MATRIX_CASES,
    MAX_MATRIX_DEVICES,
    PER_CHANGELOG_PAGE,
    GeneratedPage,
    Page,
    chunks_of,
    level_name,
    records,
    split_pages,
)
from rooflinec.terms import COMPUTE

if TYPE_CHECKING:
    from rooflinec.site.pages.model import Site

SPEC_FOLDERS = {"device": "devices", "kernel": "kernels", "method": "method"}


def spec_target(kind: str, ident: str) -> str:
    """The docs-relative page of a spec: `devices/<id>.md`, `kernels/<id>.md`, ..."""
    return f"{SPEC_FOLDERS[kind]}/{ident}.md"


def comparison_page(site: Site) -> GeneratedPage:
    """`comparison.md`: attainable rates of every case on every device at the chart
    precision, and each device's ridge points."""
    path = "comparison.md"
    page = Page(path, site)
    cat = site.catalog
    p = site.chart_precision
    devices = [d for d in cat.devices if p in site.compiled.devices[d].peaks]
    shown_devices = devices[:MAX_MATRIX_DEVICES]
    cases = list(cat.cases.values())[:MAX_MATRIX_CASES]
    header = [page.case_link(c.id, c.id) for c in cases]
    matrix = []
    for d in shown_devices:
        cells = []
        for c in cases:
            r = site.by_precision.get((c.id, d))
            if r is None:
                cells.append(Markup("–"))
                continue
            rate = site.rate(r.attainable, p)
            if r.limited_by == COMPUTE:
                cells.append(Markup(f"**{md(rate)}**"))
            else:
                cells.append(Markup(f"{md(rate)}, {md(level_name(r.limited_by))}"))
        matrix.append({"device": page.device_link(d), "cells": cells})
    precisions = list(cat.precisions)
    ridges = []
    other_levels = []
    for d in list(cat.devices)[:MAX_MATRIX_DEVICES]:
        fig = site.compiled.devices[d]
        ridges.append(
            {
                "device": page.device_link(d),
                "cells": [
                    format_number(fig.ridges[q]["dram"])
                    if q in fig.ridges and "dram" in fig.ridges[q]
                    else "–"
                    for q in precisions
                ],
            }
        )
        for lv in ("l2", "l1"):
            if lv in fig.bandwidths:
                other_levels.append(
                    {
                        "device": page.device_link(d),
                        "level": level_name(lv),
                        "cells": [
                            format_number(fig.ridges[q][lv]) if q in fig.ridges else "–"
                            for q in precisions
                        ],
                    }
                )
    text = site.render(
        "comparison.md.j2",
        page,
        precision=cat.precisions[p],
        header=header,
        cases=cases,
        matrix=matrix,
        hidden_devices=len(devices) - len(shown_devices),
        hidden_cases=len(cat.cases) - len(cases),
        without=[page.device_link(d) for d in cat.devices if d not in devices],
        precision_labels=[cat.precisions[q].label for q in precisions],
        ridges=ridges,
        other_levels=other_levels,
        hidden_ridges=max(0, len(cat.devices) - MAX_MATRIX_DEVICES),
    )
    return GeneratedPage(path, "Comparison", text, page.slots, page.assets)


def glossary_page(site: Site) -> GeneratedPage:
    """`glossary.md`: every method's glossary terms, alphabetically."""
    path = "glossary.md"
    page = Page(path, site)
    terms = []
    for m in site.catalog.methods.values():
        for t in records(m.data.get("glossary")):
            terms.append({**t, "method": page.link(m.title, f"method/{m.id}.md")})
    terms.sort(key=lambda t: str(t.get("term", "")).lower())
    text = site.render("glossary.md.j2", page, terms=terms)
    return GeneratedPage(path, "Glossary", text, page.slots, page.assets)


def changelog_pages(site: Site) -> list[GeneratedPage]:
    """`changelog.md` (and `changelog-2.md`, ...): every spec version, newest first."""
    cat = site.catalog
    entries: list[tuple[str, str, str, str, Any]] = []
    for kind, specs in (("device", cat.devices), ("kernel", cat.kernels)):
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

    chunks = chunks_of(entries, PER_CHANGELOG_PAGE)
    return split_pages(site, "changelog.md", chunks, lambda n: "Changelog", text)
