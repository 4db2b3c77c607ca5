"""The page model's base: the compiled catalog, the data its pages share (declared
results, citations, the catalog's date), number formatting, rendering, and the parts
several pages show (device rows, pagers, source lists)."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

from markupsafe import Markup

from rooflinec.catalog import Catalog, Source
from rooflinec.compiler import COMPUTE, Compiled, Result
from rooflinec.formatting import format_si
from rooflinec.site.escape import external_link
from rooflinec.site.pages.common import (
    GeneratedPage,
    _index_size,
    _is_date,
    _level_name,
    _numbered,
    _Page,
    _pages,
    environment,
)

if TYPE_CHECKING:
    from rooflinec.site.pages import SiteModel


class PageModel:
    """A compiled catalog, the data its pages share, and rendering; the page modules
    add the pages as mixins and `SiteModel` combines them."""

    def __init__(
        self,
        compiled: Compiled,
        *,
        default_device: str | None = None,
        chart_precision: str = "bf16",
        svg: bool = True,
    ) -> None:
        self.compiled = compiled
        self.catalog: Catalog = compiled.catalog
        devices = list(self.catalog.devices)
        self.default_device = (
            default_device
            if default_device in self.catalog.devices
            else ("nvidia-h100-sxm" if "nvidia-h100-sxm" in self.catalog.devices else None)
        ) or (devices[0] if devices else None)
        precisions = list(self.catalog.precisions)
        self.chart_precision = (
            chart_precision if chart_precision in self.catalog.precisions else precisions[0]
        )
        self.svg = svg
        self.env = environment()
        self.changes: Any = None
        """What the changes page compares (`rooflinec.site.changes.Changes`); set by the
        plugin before `pages()`, None for a build that is not a published version."""

    @cached_property
    def catalog_date(self) -> datetime.date:
        """The newest version date of any spec: the site's "today" (ages of sources, page
        dates), so that two builds of one catalog are identical whenever they run."""
        versions = [v for d in self.catalog.devices.values() for v in d.versions]
        versions += [v for k in self.catalog.kernels.values() for v in k.versions]
        versions += [v for m in self.catalog.methods.values() for v in m.versions]
        dates = [datetime.date.fromisoformat(v.date) for v in versions if _is_date(v.date)]
        return max(dates) if dates else datetime.date.today()

    @cached_property
    def audit(self) -> Any:
        """The audit pages' model (`rooflinec.site.audit.Audit`), shared by the sources page."""
        from rooflinec.site.audit import Audit

        # Every PageModel is built as a SiteModel (the mixins are never used alone).
        return Audit(cast("SiteModel", self))

    # ----------------------------------------------------------------- shared data

    @cached_property
    def declared(self) -> dict[str, list[Result]]:
        """Per device: each case at its declared precision, in catalog order."""
        out: dict[str, list[Result]] = {d: [] for d in self.catalog.devices}
        for r in self.compiled.results:
            if r.declared:
                out[r.device].append(r)
        return out

    @cached_property
    def by_precision(self) -> dict[tuple[str, str], Result]:
        """(case, device) -> result at the chart precision."""
        return {
            (r.case, r.device): r
            for r in self.compiled.results
            if r.precision == self.chart_precision
        }

    @cached_property
    def citations(self) -> dict[tuple[str, str], list[str]]:
        """(spec id, source id) -> the figures that cite it, as short phrases."""
        out: dict[tuple[str, str], list[str]] = {}

        def cite(owner: str, source: str | None, what: str) -> None:
            if source:
                out.setdefault((owner, source), []).append(what)

        cat = self.catalog
        for d in cat.devices.values():
            for p, peak in d.peaks.items():
                label = cat.precisions[p].label if p in cat.precisions else p
                cite(d.id, peak.figure.source, f"{label} peak")
                for a in peak.figure.alternatives:
                    cite(d.id, a.source, f"{label} peak (alternative {a.text})")
            for lv, mem in d.memory.items():
                cite(d.id, mem.bandwidth.source, f"{_level_name(lv)} bandwidth")
                for a in mem.bandwidth.alternatives:
                    cite(d.id, a.source, f"{_level_name(lv)} bandwidth (alternative {a.text})")
                if mem.capacity is not None:
                    cite(d.id, mem.capacity.source, f"{_level_name(lv)} capacity")
        for k in cat.kernels.values():
            for case in k.cases:
                for m in case.measured:
                    cite(k.id, m.source, f"measured {case.name} on {m.device} at {m.precision}")
        for method in cat.methods.values():
            origin = method.data.get("origin")
            if isinstance(origin, dict) and origin.get("source"):
                cite(method.id, str(origin["source"]), "the method's origin")
        return out

    def _fmt_rate(self, value: Fraction, precision: str, digits: int = 4) -> str:
        return format_si(value, f"{self.catalog.precisions[precision].unit}/s", digits=digits)

    def _fmt_intensity(self, value: Fraction, precision: str, digits: int = 4) -> str:
        return format_si(value, f"{self.catalog.precisions[precision].unit}/B", digits=digits)

    def _render(self, template: str, page: _Page, **context: Any) -> str:
        return self.env.get_template(template).render(
            page=page,
            model=self,
            catalog=self.catalog,
            level_name=_level_name,
            ext=external_link,
            **context,
        )

    def _page(self, path: str, title: str, template: str, **context: Any) -> GeneratedPage:
        page = _Page(path, self)
        text = self._render(template, page, **context)
        return GeneratedPage(path, title, text, page.slots, page.assets)

    # ----------------------------------------------------------------- shared parts

    def _device_row(self, page: _Page, device_id: str) -> dict[str, Any]:
        device = self.catalog.devices[device_id]
        fig = self.compiled.devices[device_id]
        p = self.chart_precision
        dram = device.memory.get("dram")
        bound = [r for r in self.declared[device_id] if r.limited_by != COMPUTE]
        return {
            "link": page.device_link(device_id),
            "vendor": device.vendor,
            "kind": device.kind or "–",
            "peak": self._fmt_rate(fig.peaks[p], p) if p in fig.peaks else "no peak",
            "memory": dram.label if dram else "–",
            "bandwidth": format_si(fig.bandwidths["dram"], "B/s")
            if "dram" in fig.bandwidths
            else "–",
            "capacity": format_si(dram.capacity.value, "B")
            if dram and dram.capacity is not None
            else "–",
            "ridge": self._fmt_intensity(fig.ridges[p]["dram"], p)
            if p in fig.peaks and "dram" in fig.bandwidths
            else "–",
            "memory_bound": f"{len(bound)} of {len(self.declared[device_id])}",
            "precisions": ", ".join(self.catalog.precisions[q].label for q in fig.peaks),
        }

    def _paged_index(
        self,
        ids: list[str],
        first: str,
        title: str,
        template: str,
        rows_of: Callable[[_Page, Sequence[str]], list[dict[str, Any]]],
        **context: Any,
    ) -> list[GeneratedPage]:
        """An index split into numbered pages (`first`, then `-2`, ...), each with a pager."""
        chunks = _pages(ids, _index_size())
        out = []
        for n, chunk in enumerate(chunks, start=1):
            path = _numbered(first, n)
            page = _Page(path, self)
            text = self._render(
                template,
                page,
                rows=rows_of(page, chunk),
                pager=self._pager(page, first, n, len(chunks)),
                total=len(ids),
                **context,
            )
            out.append(GeneratedPage(path, title, text, page.slots, page.assets))
        return out

    def _pager(self, page: _Page, first: str, n: int, count: int) -> Markup:
        if count <= 1:
            return Markup("")
        links = []
        for i in range(1, count + 1):
            target = _numbered(first, i)
            links.append(f"**{i}**" if i == n else f"[{i}]({page.href(target)})")
        return Markup("Pages: " + " · ".join(links))

    def _sources_context(
        self, page: _Page, owner: str, sources: dict[str, Source], anchor: str
    ) -> list[dict[str, Any]]:
        out = []
        for sid, s in sources.items():
            out.append(
                {
                    "id": sid,
                    "anchor": anchor.rpartition("#")[2] + sid,
                    "title": external_link(s.title, s.url),
                    "url": s.url,
                    "publisher": s.publisher,
                    "kind": s.kind,
                    "read": s.read,
                    "published": s.published,
                    "note": s.note,
                    "cited": self.citations.get((owner, sid), []),
                }
            )
        return out
