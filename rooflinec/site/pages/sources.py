"""The sources pages: every distinct source once, with every spec citing it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from rooflinec.catalog import Source
from rooflinec.provenance import STALE_MONTHS, source_info
from rooflinec.site.escape import external_link, md
from rooflinec.site.pages.accuracy import model_accuracy_path
from rooflinec.site.pages.audit import audit_layout, audit_path, read_text
from rooflinec.site.pages.catalog_pages import spec_target
from rooflinec.site.pages.common import (
    MAX_CITED,
    MAX_USES,
    SOURCES_PAGE_BUDGET,
    GeneratedPage,
)
from rooflinec.site.pages.model import Page, pages_by_size
from rooflinec.site.pages.models import serving_sources

if TYPE_CHECKING:
    from rooflinec.site.pages.model import Site


def _specs(site: Site) -> list[tuple[str, str, str, dict[str, Source]]]:
    """(kind, id, name, sources) of every spec: devices, kernels, models, methods, and the
    precisions."""
    cat = site.catalog
    out: list[tuple[str, str, str, dict[str, Source]]] = []
    out += [("device", d.id, d.name, d.sources) for d in cat.devices.values()]
    out += [("kernel", k.id, k.name, k.sources) for k in cat.kernels.values()]
    out += [("model", m.id, m.name, m.sources) for m in cat.models.values()]
    out += [("method", m.id, m.title, m.sources) for m in cat.methods.values()]
    if cat.precision_sources:
        out.append(("precisions", "precisions", "Precisions", cat.precision_sources))
    return out


def sources_pages(site: Site) -> list[GeneratedPage]:
    """Every distinct source (same address and title) once, with every spec citing it,
    when each read it and how old that reading is, and the figures that lean on it."""
    today = site.catalog_date
    specs = _specs(site)
    entries: dict[tuple[str, str], dict[str, Any]] = {}
    for kind, ident, name, sources in specs:
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
    first = Page("sources.md", site)
    rendered = [_entry_text(site, first, e) for e in ordered]
    return pages_by_size(
        site,
        "sources.md",
        "Sources",
        rendered,
        len,
        SOURCES_PAGE_BUDGET,
        "entries",
        total=len(ordered),
        specs=sum(1 for spec in specs if spec[3]),
        today=today.isoformat(),
        stale_months=STALE_MONTHS,
        stale=stale,
    )


def _entry_text(site: Site, page: Page, e: dict[str, Any]) -> Markup:
    """One entry rendered, kept in the session (`Session.sections`, beside the audit
    sections) by the text of everything its template reads: its fields, links and
    citations are strings, numbers and dates, so their `repr` is the entry itself."""
    entry = _source_entry(site, page, e)
    key = ("source entry", repr(entry), site.env)
    hit = site.session.sections.get(key)
    if hit is None:
        text = site.render("source_entry.md.j2", page, s=entry)
        hit = site.session.sections.put(key, text)
    return Markup(hit)


def _source_target(site: Site, kind: str, ident: str, sid: str) -> str:
    """Where a spec lists source `sid`: its page, or for a source only a model's serving
    results cite, the first page of those results."""
    model = site.catalog.models.get(ident) if kind == "model" else None
    if model is not None and sid in serving_sources(model):
        return f"{model_accuracy_path(ident)}#source-{sid}"
    return f"{spec_target(kind, ident)}#source-{sid}"


def _source_entry(site: Site, page: Page, e: dict[str, Any]) -> dict[str, Any]:
    uses = []
    for kind, ident, name, sid, read, is_stale in e["uses"][:MAX_USES]:
        cited = _cited(site, page, kind, ident, sid)
        if len(cited) > MAX_CITED:
            more = len(cited) - MAX_CITED
            target = (
                audit_path(ident) if kind == "device" else _source_target(site, kind, ident, sid)
            )
            cited = [*cited[:MAX_CITED], page.link(f"{more} more", target)]
        uses.append(
            {
                "spec": page.link(name, _source_target(site, kind, ident, sid)),
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


def _cited(site: Site, page: Page, kind: str, ident: str, sid: str) -> list[Markup]:
    """What a spec cites a source for: a device's figures link to their audit trail."""
    if kind == "precisions":
        return [md(p.label) for p in site.catalog.precisions.values() if p.source == sid]
    if kind != "device":
        return [md(c) for c in site.citations.get((ident, sid), [])]
    return [
        page.link(name, target) + (Markup(" ") + md(suffix) if suffix else Markup(""))
        for name, target, suffix in audit_layout(site).uses.get((ident, sid), [])
    ]
