"""Whole-catalog pages: the comparison matrix, the sources list, the glossary and the
changelog."""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from rooflinec.catalog import Source
from rooflinec.compiler import COMPUTE
from rooflinec.formatting import format_number
from rooflinec.site.escape import external_link, md
from rooflinec.site.pages.base import PageModel
from rooflinec.site.pages.common import (
    MAX_CITED,
    MAX_MATRIX_CASES,
    MAX_MATRIX_DEVICES,
    MAX_USES,
    PER_CHANGELOG_PAGE,
    SOURCES_PAGE_BUDGET,
    GeneratedPage,
    _level_name,
    _numbered,
    _Page,
    _pages,
    _pages_by_size,
    _records,
)


class CatalogPages(PageModel):
    """The comparison, sources, glossary and changelog pages."""

    # ----------------------------------------------------------------- comparison

    def comparison_page(self) -> GeneratedPage:
        path = "comparison.md"
        page = _Page(path, self)
        cat = self.catalog
        p = self.chart_precision
        devices = [d for d in cat.devices if p in self.compiled.devices[d].peaks]
        shown_devices = devices[:MAX_MATRIX_DEVICES]
        cases = list(cat.cases.values())[:MAX_MATRIX_CASES]
        header = [page.case_link(c.id, c.id) for c in cases]
        matrix = []
        for d in shown_devices:
            cells = []
            for c in cases:
                r = self.by_precision.get((c.id, d))
                if r is None:
                    cells.append(Markup("–"))
                    continue
                rate = self._fmt_rate(r.attainable, p)
                if r.limited_by == COMPUTE:
                    cells.append(Markup(f"**{md(rate)}**"))
                else:
                    cells.append(Markup(f"{md(rate)}, {md(_level_name(r.limited_by))}"))
            matrix.append({"device": page.device_link(d), "cells": cells})
        precisions = [q for q in cat.precisions]
        ridges = []
        other_levels = []
        for d in list(cat.devices)[:MAX_MATRIX_DEVICES]:
            fig = self.compiled.devices[d]
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
                            "level": _level_name(lv),
                            "cells": [
                                format_number(fig.ridges[q][lv]) if q in fig.ridges else "–"
                                for q in precisions
                            ],
                        }
                    )
        text = self._render(
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

    # ----------------------------------------------------------------- sources

    def _specs(self) -> list[tuple[str, str, str, dict[str, Source]]]:
        """(kind, id, name, sources) of every spec, devices then kernels then methods."""
        cat = self.catalog
        out: list[tuple[str, str, str, dict[str, Source]]] = []
        out += [("device", d.id, d.name, d.sources) for d in cat.devices.values()]
        out += [("kernel", k.id, k.name, k.sources) for k in cat.kernels.values()]
        out += [("method", m.id, m.title, m.sources) for m in cat.methods.values()]
        return out

    def _spec_target(self, kind: str, ident: str) -> str:
        folder = {"device": "devices", "kernel": "kernels", "method": "method"}[kind]
        return f"{folder}/{ident}.md"

    def sources_pages(self) -> list[GeneratedPage]:
        """Every distinct source (same address and title) once, with every spec citing it,
        when each read it and how old that reading is, and the figures that lean on it."""
        from rooflinec.provenance import STALE_MONTHS, source_info
        from rooflinec.site.audit import read_text

        today = self.catalog_date
        entries: dict[tuple[str, str], dict[str, Any]] = {}
        for kind, ident, name, sources in self._specs():
            for sid, src in sources.items():
                entry = entries.setdefault(
                    (src.url, src.title),
                    {
                        "title": src.title,
                        "url": src.url,
                        "publisher": src.publisher,
                        "kind": src.kind,
                        "published": src.published,
                        "notes": [],
                        "uses": [],
                    },
                )
                if src.note and src.note not in entry["notes"]:
                    entry["notes"].append(src.note)
                info = source_info(src, today)
                entry["uses"].append(
                    (kind, ident, name, sid, read_text(info, today, relative_to=False), info.stale)
                )
        ordered = sorted(entries.values(), key=lambda e: (e["title"].lower(), e["url"]))
        stale = sum(1 for e in ordered if any(u[5] for u in e["uses"]))
        # Every sources page is at the site's root: an entry's links are the same on each, so
        # each entry is rendered once and the pages are cut by the entries' real size.
        first = _Page("sources.md", self)
        rendered = [
            Markup(self._render("source_entry.md.j2", first, s=self._source_entry(first, e)))
            for e in ordered
        ]
        chunks = _pages_by_size(rendered, len, SOURCES_PAGE_BUDGET)
        out = []
        for n, chunk in enumerate(chunks, start=1):
            path = _numbered("sources.md", n)
            page = _Page(path, self)
            text = self._render(
                "sources.md.j2",
                page,
                entries=chunk,
                pager=self._pager(page, "sources.md", n, len(chunks)),
                total=len(ordered),
                specs=sum(1 for spec in self._specs() if spec[3]),
                today=today.isoformat(),
                stale_months=STALE_MONTHS,
                stale=stale,
            )
            out.append(GeneratedPage(path, "Sources", text, page.slots, page.assets))
        return out

    def _source_entry(self, page: _Page, e: dict[str, Any]) -> dict[str, Any]:
        uses = []
        for kind, ident, name, sid, read, is_stale in e["uses"][:MAX_USES]:
            cited = self._cited(page, kind, ident, sid)
            if len(cited) > MAX_CITED:
                more = len(cited) - MAX_CITED
                target = f"{self._spec_target(kind, ident)}#source-{sid}"
                if kind == "device":
                    from rooflinec.site.audit import audit_path

                    target = audit_path(ident)
                cited = [*cited[:MAX_CITED], page.link(f"{more} more", target)]
            uses.append(
                {
                    "spec": page.link(name, f"{self._spec_target(kind, ident)}#source-{sid}"),
                    "kind": kind,
                    "read": read,
                    "stale": is_stale,
                    "cited": cited,
                }
            )
        return {
            **e,
            "link": external_link(e["title"], e["url"]),
            "uses": uses,
            "more_uses": max(0, len(e["uses"]) - MAX_USES),
        }

    def _cited(self, page: _Page, kind: str, ident: str, sid: str) -> list[Markup]:
        """What a spec cites a source for: a device's figures link to their audit trail."""
        if kind != "device":
            return [md(c) for c in self.citations.get((ident, sid), [])]
        return [
            page.link(name, target) + (Markup(" ") + md(suffix) if suffix else Markup(""))
            for name, target, suffix in self.audit.uses.get((ident, sid), [])
        ]

    # ----------------------------------------------------------------- glossary, changelog

    def glossary_page(self) -> GeneratedPage:
        path = "glossary.md"
        page = _Page(path, self)
        terms = []
        for m in self.catalog.methods.values():
            for t in _records(m.data.get("glossary")):
                terms.append({**t, "method": page.link(m.title, f"method/{m.id}.md")})
        terms.sort(key=lambda t: str(t.get("term", "")).lower())
        text = self._render("glossary.md.j2", page, terms=terms)
        return GeneratedPage(path, "Glossary", text, page.slots, page.assets)

    def changelog_pages(self) -> list[GeneratedPage]:
        entries: list[tuple[str, str, str, str, Any]] = []
        for kind, ident, name, _ in self._specs():
            specs: dict[str, dict[str, Any]] = {
                "device": dict(self.catalog.devices),
                "kernel": dict(self.catalog.kernels),
                "method": dict(self.catalog.methods),
            }
            spec = specs[kind][ident]
            for v in spec.versions:
                entries.append((v.date, kind, name, ident, v))
        entries.sort(key=lambda e: (e[0], e[1], e[3], e[4].version), reverse=True)
        chunks = _pages(entries, PER_CHANGELOG_PAGE)
        out = []
        for n, chunk in enumerate(chunks, start=1):
            path = _numbered("changelog.md", n)
            page = _Page(path, self)
            rows = [
                {
                    "date": date,
                    "kind": kind,
                    "spec": page.link(name, self._spec_target(kind, ident)),
                    "version": v.version,
                    "change": v.change,
                }
                for date, kind, name, ident, v in chunk
            ]
            text = self._render(
                "changelog.md.j2",
                page,
                rows=rows,
                pager=self._pager(page, "changelog.md", n, len(chunks)),
            )
            out.append(GeneratedPage(path, "Changelog", text, page.slots, page.assets))
        return out
