"""`Site`: everything the pages of one build read, computed once, frozen; and `Page`,
the helpers bound to one page of it (links, charts, formulas).

Every page function takes a `Site` and returns its pages; nothing a page computes is
kept for another page except what is here (the declared results, the citations, the
catalog's date, the provenance trails) and the audit layout, which the sources page
links into.
"""

from __future__ import annotations

import datetime
import functools
import posixpath
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from jinja2 import Environment
from markupsafe import Markup

from rooflinec.catalog import Case, Catalog, Figure
from rooflinec.engine.compiler import Compiled
from rooflinec.formatting import format_si
from rooflinec.provenance import FigureTrail, device_trails
from rooflinec.site import charts
from rooflinec.site.escape import Slots, attr, external_link, md
from rooflinec.site.mathml import latex_to_mathml
from rooflinec.site.pages.common import (
    ROOFLINE_METHOD,
    GeneratedPage,
    PageLimits,
    chunks_by_size,
    is_date,
    level_name,
    numbered,
    shared_environment,
)
from rooflinec.site.session import Session
from rooflinec.site.svg_renders import PendingSvg

if TYPE_CHECKING:
    from rooflinec.site.versions import Changes

T = TypeVar("T")

FEATURED_DEVICE = "nvidia-h100-sxm"
ROOFLINE_HINT = (
    "Hover a point for its values; the sliders below the chart scale the ceilings (they need "
    "JavaScript)."
)


@dataclass(frozen=True)
class Site:
    """One compiled catalog, the build's options, and the data several pages share."""

    compiled: Compiled
    default_device: str | None
    """The device the site features (the option if present, else `FEATURED_DEVICE`,
    else the first)."""
    chart_precision: str
    """The precision of the cross-device chart and the comparison matrix."""
    svg: bool
    """Render each chart to a static SVG; off only for tests (a placeholder instead)."""
    changes: Changes | None
    """What the changes page compares; None for a build that is not a published version."""
    env: Environment
    catalog_date: datetime.date
    """The newest version date of any spec: the site's "today" (ages of sources, page
    dates), so that two builds of one catalog are identical whenever they run."""
    citations: Mapping[tuple[str, str], list[str]]
    """(spec id, source id) -> the figures that cite it, as short phrases."""
    trails: Mapping[str, tuple[FigureTrail, ...]]
    """Per device: the provenance trail of each figure, ages counted to `catalog_date`."""
    limits: PageLimits
    """How many rows or bytes a page holds before the next page of its kind starts."""
    session: Session
    """What this build keeps for the next (the mkdocs run's; a new one for a `Site` made
    outside a build, which keeps nothing for anyone)."""
    prices: Mapping[str, Fraction] = field(default_factory=dict)
    """The reader's prices (the plugin option `prices`), USD per chip-hour by device:
    shown labelled as the reader's, and what the plans' cost uses where given."""
    frontier: bool = False
    """Whether the build makes the frontier pages (the plugin option `frontier`)."""

    @classmethod
    def of(
        cls,
        compiled: Compiled,
        *,
        default_device: str | None = None,
        chart_precision: str = "bf16",
        svg: bool = True,
        changes: Changes | None = None,
        env: Environment | None = None,
        limits: PageLimits | None = None,
        session: Session | None = None,
        prices: Mapping[str, Fraction] | None = None,
        frontier: bool = False,
    ) -> Site:
        """The site of `compiled`; unknown device or precision options fall back to the
        catalog's own."""
        catalog = compiled.catalog
        devices = list(catalog.devices)
        featured = (
            default_device
            if default_device in catalog.devices
            else (FEATURED_DEVICE if FEATURED_DEVICE in catalog.devices else None)
        ) or (devices[0] if devices else None)
        if chart_precision not in catalog.precisions:
            chart_precision = next(iter(catalog.precisions))
        today = _catalog_date(catalog)
        return cls(
            compiled=compiled,
            default_device=featured,
            chart_precision=chart_precision,
            svg=svg,
            changes=changes,
            env=env if env is not None else shared_environment(),
            catalog_date=today,
            citations=_citations(catalog),
            trails={d: device_trails(catalog, d, today=today) for d in catalog.devices},
            limits=limits if limits is not None else PageLimits(),
            session=session if session is not None else Session(),
            prices=dict(prices or {}),
            frontier=frontier,
        )

    @property
    def catalog(self) -> Catalog:
        return self.compiled.catalog

    @cached_property
    def cases(self) -> Mapping[str, Case]:
        """Every case by id (`Catalog.cases` makes the mapping afresh on every read)."""
        return self.catalog.cases

    @cached_property
    def memos(self) -> dict[tuple[str, str], dict[Any, Any]]:
        """This build's `reuse.device_memo` dicts when nothing is kept between builds."""
        return {}

    @cached_property
    def derived(self) -> dict[str, Any]:
        """Values the page modules work out from this site once per build, by name (the
        model rows, `reuse.model_rows`; the audit layout, `audit.audit_layout`)."""
        return {}

    # ----------------------------------------------------------------- rendering

    def rate(self, value: Fraction, precision: str, digits: int = 4) -> str:
        """`989.5 TFLOP/s`, in the precision's unit."""
        return format_si(value, f"{self.catalog.precisions[precision].unit}/s", digits=digits)

    def intensity(self, value: Fraction, precision: str, digits: int = 4) -> str:
        """`295.4 FLOP/B`, in the precision's unit."""
        return format_si(value, f"{self.catalog.precisions[precision].unit}/B", digits=digits)

    def render(self, template: str, page: Page, **context: Any) -> str:
        """`template` rendered for `page` with `context`, plus what every template reads."""
        return self.env.get_template(template).render(
            page=page,
            catalog=self.catalog,
            level_name=level_name,
            ext=external_link,
            **context,
        )

    def page(self, path: str, title: str, template: str, **context: Any) -> GeneratedPage:
        """One page at `path` rendered from `template`."""
        page = Page(path, self)
        text = self.render(template, page, **context)
        return GeneratedPage(path, title, text, page.slots, page.assets)


def pager(page: Page, first: str, n: int, count: int) -> Markup:
    """`Pages: [1](…) · **2** · [3](…)` on page `n` of `count`; nothing for one page."""
    if count <= 1:
        return Markup("")
    links = []
    for i in range(1, count + 1):
        target = numbered(first, i)
        links.append(f"**{i}**" if i == n else f"[{i}]({page.href(target)})")
    return Markup("Pages: " + " · ".join(links))


def split_pages(
    site: Site,
    first: str,
    chunks: Sequence[T],
    title: Callable[[int], str],
    text: Callable[[Page, int, T, Markup], str],
) -> list[GeneratedPage]:
    """One page per chunk: `first`, then `first-2`, ...; `text(page, n, chunk, pager)`
    renders page `n`, with the pager linking every page of the run."""
    out = []
    for n, chunk in enumerate(chunks, start=1):
        path = numbered(first, n)
        page = Page(path, site)
        body = text(page, n, chunk, pager(page, first, n, len(chunks)))
        out.append(GeneratedPage(path, title(n), body, page.slots, page.assets))
    return out


def pages_by_size(
    site: Site,
    first: str,
    title: str,
    items: Sequence[T],
    weight: Callable[[T], int],
    budget: int,
    chunk_name: str,
    **context: Any,
) -> list[GeneratedPage]:
    """`split_pages` of `items` cut by `weight` at `budget` a page, each page titled `title`
    and rendered from `first`'s template (`conflicts.md.j2` for `conflicts.md`) with its
    chunk as `chunk_name`, its pager and `context`."""
    return split_pages(
        site,
        first,
        chunks_by_size(items, weight, budget),
        lambda n: title,
        lambda page, n, chunk, pager: site.render(
            f"{first}.j2", page, **{chunk_name: chunk}, pager=pager, **context
        ),
    )


@functools.lru_cache(maxsize=1 << 16)
def _relative(path: str, folder: str) -> str:
    """`path` relative to `folder` (both docs-relative): a site asks for the same few
    thousand links over and over, and `relpath` is slow."""
    return posixpath.relpath(path, folder)


class Page:
    """Helpers bound to one page: relative links, slots, charts, formulas."""

    def __init__(self, path: str, site: Site) -> None:
        self.path = path
        self.site = site
        self.slots = Slots()
        self.assets: dict[str, str] = {}
        self._charts = 0

    def href(self, target: str) -> str:
        """A relative link from this page to a docs-relative target (`kernels/gemm.md#x`)."""
        path, _, anchor = target.partition("#")
        if path == self.path and anchor:
            return f"#{anchor}"
        rel = _relative(path, posixpath.dirname(self.path) or ".") if path else ""
        return rel + (f"#{anchor}" if anchor else "")

    def link(self, text: Any, target: str) -> Markup:
        return Markup(f"[{md(text)}]({self.href(target)})")

    def device_link(self, device_id: str) -> Markup:
        return self.link(self.site.catalog.devices[device_id].name, f"devices/{device_id}.md")

    def kernel_link(self, kernel_id: str, text: Any = None) -> Markup:
        kernel = self.site.catalog.kernels[kernel_id]
        return self.link(text if text is not None else kernel.name, f"kernels/{kernel_id}.md")

    def case_link(self, case_id: str, text: Any = None) -> Markup:
        case = self.site.cases[case_id]
        return self.link(
            text if text is not None else case.name, f"kernels/{case.kernel}.md#case-{case_id}"
        )

    def method_link(self, text: Any, method_id: str = ROOFLINE_METHOD) -> Markup:
        """A link to the method page of `method_id`; the text alone when the catalog has
        no such method (a catalog without `methods/` has no method pages)."""
        if method_id in self.site.catalog.methods:
            return self.link(text, f"method/{method_id}.md")
        return Markup(md(text))

    def math(self, formula: Any) -> Markup:
        mathml = latex_to_mathml(formula.latex())
        if mathml is None:
            return Markup(f"<code>{md(formula.text)}</code>")
        return self.slots.add(mathml, block=False)

    def _svg(self, chart: charts.Chart, text: str) -> str:
        """The chart's static rendering; under `serve`, one not kept yet is a placeholder
        until the background renders it (`rooflinec.site.svg_renders`)."""
        if not self.site.svg:
            return _placeholder_svg(chart)
        session = self.site.session
        renders = session.renders
        if renders is None:
            return charts.render_svg(chart.spec, session.svgs, text=text)
        # One rendered in the background since is put in by `SvgRenders.resolve`.
        key = charts.svg_key(text)
        kept = charts.cached_svg(key, session.svgs)
        return kept or PendingSvg.of(_placeholder_svg(chart), key, chart.spec)

    def chart(self, chart: charts.Chart) -> Markup:
        stem = posixpath.splitext(posixpath.basename(self.path))[0]
        here = posixpath.dirname(self.path)
        self._charts += 1
        base = f"{stem}.{chart.name}"
        text = charts.spec_json(chart.spec)
        self.assets[posixpath.join(here, f"{base}.svg")] = self._svg(chart, text)
        self.assets[posixpath.join(here, f"{base}.vl.json")] = text
        fragment = (
            f'<figure class="rooflinec-chart" id="chart-{chart.name}">'
            f'<div class="rooflinec-chart-view" data-src="{attr(base)}.vl.json">'
            f'<img class="rooflinec-chart-static" src="{attr(base)}.svg"'
            f' alt="{attr(chart.description)}"></div>'
            f"<figcaption>{attr(chart.title)}. "
            f'<span class="rooflinec-hint">{attr(chart.hint or ROOFLINE_HINT)}</span> '
            f'Download: <a href="{attr(base)}.vl.json" download>Vega-Lite JSON</a> · '
            f'<a href="{attr(base)}.svg" download>SVG</a>.</figcaption></figure>'
        )
        return self.slots.add(fragment)


def _placeholder_svg(chart: charts.Chart) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{charts.WIDTH}" '
        f'height="{charts.HEIGHT}"><text x="10" y="20">{attr(chart.title)}</text></svg>\n'
    )


def _catalog_date(catalog: Catalog) -> datetime.date:
    versions = [v for d in catalog.devices.values() for v in d.versions]
    versions += [v for k in catalog.kernels.values() for v in k.versions]
    versions += [v for m in catalog.methods.values() for v in m.versions]
    versions += [v for m in catalog.models.values() for v in m.versions]
    dates = [datetime.date.fromisoformat(v.date) for v in versions if is_date(v.date)]
    return max(dates) if dates else datetime.date.today()


_ALTERNATIVES_NAMED = 3


def _alternatives(texts: list[str]) -> str:
    """A figure's alternatives from one source, as a citation names them: a few by value,
    the rest counted (every one is on the figure's audit), so that a figure with dozens of
    alternatives does not lengthen its device's page by a line each."""
    if len(texts) == 1:
        return f"alternative {texts[0]}"
    named = ", ".join(texts[:_ALTERNATIVES_NAMED])
    more = len(texts) - _ALTERNATIVES_NAMED
    return f"{len(texts)} alternatives: {named}" + (f" and {more} more" if more > 0 else "")


def _citations(catalog: Catalog) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = {}

    def cite(owner: str, source: str | None, what: str) -> None:
        if source:
            out.setdefault((owner, source), []).append(what)

    def cite_figure(owner: str, figure: Figure, name: str) -> None:
        cite(owner, figure.source, name)
        by_source: dict[str, list[str]] = {}
        for a in figure.alternatives:
            if a.source:
                by_source.setdefault(a.source, []).append(a.text)
        for source, texts in by_source.items():
            cite(owner, source, f"{name} ({_alternatives(texts)})")

    for d in catalog.devices.values():
        for p, peak in d.peaks.items():
            label = catalog.precisions[p].label if p in catalog.precisions else p
            cite_figure(d.id, peak.figure, f"{label} peak")
        for lv, mem in d.memory.items():
            cite_figure(d.id, mem.bandwidth, f"{level_name(lv)} bandwidth")
            if mem.capacity is not None:
                cite(d.id, mem.capacity.source, f"{level_name(lv)} capacity")
    for k in catalog.kernels.values():
        for case in k.cases:
            for m in case.measured:
                cite(k.id, m.source, f"measured {case.name} on {m.device} at {m.precision}")
    for model in catalog.models.values():
        for sid in model.sources:
            cite(model.id, sid, "the parameters")
        for mm in model.measured:
            cite(model.id, mm.source, f"measured {mm.phase} on {mm.device} at {mm.precision}")
    for method in catalog.methods.values():
        origin = method.data.get("origin")
        if isinstance(origin, dict) and origin.get("source"):
            cite(method.id, str(origin["source"]), "the method's origin")
    return out
