"""What every page module shares: limits, the page value, the template environment,
page splitting, and `Page`, the helpers bound to one page (links, charts, formulas)."""

from __future__ import annotations

import datetime
import functools
import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from jinja2 import Environment, FileSystemBytecodeCache, PackageLoader, StrictUndefined
from markupsafe import Markup

from rooflinec.catalog import LEVEL_SHORT_NAMES
from rooflinec.site import charts
from rooflinec.site.escape import Slots, attr, md, script_json
from rooflinec.site.mathml import latex_to_mathml

if TYPE_CHECKING:
    from rooflinec.site.pages.model import Site

T = TypeVar("T")

PER_INDEX_PAGE = 100  # rows per devices or kernels index page
SOURCES_PAGE_BUDGET = 24_000  # Markdown characters of source entries per page
MAX_CITED = 16  # figures listed for one spec under one source; the rest on the audit trail
PER_CHANGELOG_PAGE = 200
MAX_ROWS = charts.MAX_MARKERS  # kernel cases on a device page (table, chart markers)
MAX_SWEEPS = 8  # rows of a device page's sweep table
MAX_CASES = 16  # cases on a kernel page
MAX_ATTAINABLE = 32  # rows of a kernel page's attainable table and chart
MAX_USES = 12  # specs listed under one source on the sources page
MAX_ALTERNATIVES = 20
"""Other printed values listed in one table (a device's, or one figure's on its audit
trail); the rest are in the spec file and catalog.json, which keeps a page small."""
PER_COMPARISON_PAGE = 32  # devices on one comparison page (matrix and ridge points)
MAX_MATRIX_CASES = 12
MAX_HOME_DEVICES = 60  # rows of the home page's table and devices its chart can show
HOME_MARKER = "<!-- rooflinec:home -->"
ROOFLINE_METHOD = "roofline"  # the method the device pages follow
AUDIT_PAGE_BUDGET = 22_000  # Markdown characters of figure sections per audit page
CHANGES_PAGE_BUDGET = 24_000  # estimated Markdown bytes of change rows per page
MAX_CHANGE_PAGES = 10  # the rest is in changes.json


@dataclass(frozen=True)
class PageLimits:
    """Where pages split: a field of `Site`, so that a build (or a test) with a small
    catalog can get several pages of a kind without touching module constants."""

    per_index_page: int = PER_INDEX_PAGE
    """Rows per devices or kernels index page."""
    audit_page_budget: int = AUDIT_PAGE_BUDGET
    """Markdown characters of figure sections per audit page."""
    changes_page_budget: int = CHANGES_PAGE_BUDGET
    """Estimated Markdown bytes of change rows per changes page."""
    max_change_pages: int = MAX_CHANGE_PAGES
    """Changes pages at most; the rest of the changes are in changes.json."""


@dataclass
class GeneratedPage:
    """One generated Markdown page, its trusted fragments, and the files that go with it."""

    path: str  # docs-relative, e.g. "devices/nvidia-h100-sxm.md"
    title: str
    markdown: str
    slots: Slots
    assets: dict[str, str] = field(default_factory=dict)  # docs-relative path -> text


def bytecode_cache(name: str = "templates") -> FileSystemBytecodeCache | None:
    """Compiled templates kept beside the chart cache, in its folder `name`: a cold
    process skips compiling.

    jinja keys each entry by the template's source, so an edited template recompiles."""
    folder = charts.cache_dir() / name
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return FileSystemBytecodeCache(str(folder))


def environment() -> Environment:
    """The template environment: every `{{ }}` is escaped for Markdown and HTML."""
    env = Environment(
        loader=PackageLoader("rooflinec.site", "templates"),
        bytecode_cache=bytecode_cache(),
        autoescape=True,
        finalize=md,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["md"] = md
    env.filters["attr"] = attr
    return env


@functools.cache
def shared_environment() -> Environment:
    """One template environment for the process: a rebuild in `serve` (or a second build
    in one process) does not compile every template again."""
    return environment()


def level_name(level: str) -> str:
    """`DRAM`, `L2`, ... for a memory level id."""
    return LEVEL_SHORT_NAMES.get(level, level)


def chunks_of(items: Sequence[T], size: int) -> list[Sequence[T]]:
    """`items` in runs of `size` (one empty run when there are none)."""
    return [items[i : i + size] for i in range(0, len(items), size)] or [items]


def chunks_by_size(
    items: Sequence[T], weight: Callable[[T], int], budget: int
) -> list[Sequence[T]]:
    """Consecutive runs of `items` whose weights add up to at most `budget` (at least one)."""
    chunks: list[Sequence[T]] = []
    start, total = 0, 0
    for i, item in enumerate(items):
        w = weight(item)
        if i > start and total + w > budget:
            chunks.append(items[start:i])
            start, total = i, 0
        total += w
    chunks.append(items[start:])
    return chunks


def numbered(path: str, n: int) -> str:
    """`devices/index.md`, then `devices/index-2.md`, ..."""
    if n == 1:
        return path
    stem, ext = posixpath.splitext(path)
    return f"{stem}-{n}{ext}"


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

    def chart(self, chart: charts.Chart) -> Markup:
        stem = posixpath.splitext(posixpath.basename(self.path))[0]
        here = posixpath.dirname(self.path)
        self._charts += 1
        base = f"{stem}.{chart.name}"
        svg = (
            charts.render_svg(chart.spec, self.site.session.svgs)
            if self.site.svg
            else _placeholder_svg(chart)
        )
        self.assets[posixpath.join(here, f"{base}.svg")] = svg
        self.assets[posixpath.join(here, f"{base}.vl.json")] = charts.spec_json(chart.spec)
        width, height = _svg_size(svg)
        if chart.inline:
            spec_id = f"rooflinec-spec-{chart.name}"
            source = f'data-spec="{spec_id}"'
            script = (
                f'<script type="application/json" id="{spec_id}">{script_json(chart.spec)}</script>'
            )
        else:
            source, script = f'data-src="{attr(base)}.vl.json"', ""
        fragment = (
            f'<figure class="rooflinec-chart" id="chart-{chart.name}">'
            f'<div class="rooflinec-chart-view" {source}>'
            f'<img class="rooflinec-chart-static" src="{attr(base)}.svg"'
            f' alt="{attr(chart.description)}"'
            f' width="{width}" height="{height}"></div>'
            f"{script}"
            f"<figcaption>{attr(chart.title)}. "
            '<span class="rooflinec-hint">Hover a point for its values; the sliders below the '
            "chart scale the ceilings (they need JavaScript).</span> "
            f'Download: <a href="{attr(base)}.vl.json" download>Vega-Lite JSON</a> · '
            f'<a href="{attr(base)}.svg" download>SVG</a>.</figcaption></figure>'
        )
        return self.slots.add(fragment)


def _svg_size(svg: str) -> tuple[int, int]:
    width = re.search(r'<svg[^>]*\swidth="([0-9.]+)"', svg)
    height = re.search(r'<svg[^>]*\sheight="([0-9.]+)"', svg)
    return (
        round(float(width.group(1))) if width else charts.WIDTH,
        round(float(height.group(1))) if height else charts.HEIGHT,
    )


def _placeholder_svg(chart: charts.Chart) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{charts.WIDTH}" '
        f'height="{charts.HEIGHT}"><text x="10" y="20">{attr(chart.title)}</text></svg>\n'
    )


def is_date(text: str) -> bool:
    try:
        datetime.date.fromisoformat(text)
    except (TypeError, ValueError):
        return False
    return True


def records(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, list):
        return [v for v in value if isinstance(v, dict)]
    return []
