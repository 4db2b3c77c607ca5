"""What every page module shares: limits, the page value, the template environment and
page numbering. (`Page`, the helpers bound to one page, lives beside `Site` in
`rooflinec.site.pages.model`.)"""

from __future__ import annotations

import datetime
import functools
import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from jinja2 import Environment, FileSystemBytecodeCache, PackageLoader, StrictUndefined

from rooflinec.catalog import LEVEL_SHORT_NAMES, Model
from rooflinec.engine.step_crossover import decode_phases
from rooflinec.engine.terms import COMPUTE
from rooflinec.formatting import format_number
from rooflinec.outputs.model_rows import fit_text
from rooflinec.site import charts
from rooflinec.site.escape import Slots, attr, md

if TYPE_CHECKING:
    from rooflinec.engine.models import ModelResult

T = TypeVar("T")

PER_INDEX_PAGE = 100  # rows per devices or kernels index page
SOURCES_PAGE_BUDGET = 24_000  # Markdown characters of source entries per page
MAX_CITED = 16  # figures listed for one spec under one source; the rest on the audit trail
CHANGELOG_PAGE_BUDGET = 27_000  # estimated bytes of changelog rows per page (their HTML is ~1.2x)
MAX_ROWS = charts.MAX_MARKERS  # kernel cases on a device page (table, chart markers)
MAX_SWEEPS = 2  # rows of a device page's sweep table
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
AUDIT_PAGE_BUDGET = 19_000  # Markdown characters of figure sections per audit page
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


def focus_phase(model: Model) -> str:
    """The phase a model page charts step by step: its first decode phase, else its
    first phase."""
    return next(iter(decode_phases(model)), next(iter(model.phases)))


def limit_label(limit: str) -> str:
    """A limit as the site names it: `compute`, or the level's short name."""
    return COMPUTE if limit == COMPUTE else level_name(limit)


def tokens_text(r: ModelResult) -> str:
    """Tokens per second as the site shows it: four significant figures, no prefix; a
    pass whose memory does not fit shows that instead, never a rate."""
    if r.fits is False:
        return fit_text(r)
    return format_number(r.tokens_per_second, 4)


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


def frontier_path(model_id: str, request: str) -> str:
    """The frontier page of a model's request shape, in the model's own folder (one page
    per shape: a shape's points table alone can take half a page's size)."""
    return f"models/{model_id}/frontier-{request}.md"


#: The newest versions a device or method page lists; every version is on the changelog
#: page. A spec grows a version with each change, and its page would outgrow the limit.
VERSIONS_SHOWN = 4


def newest_versions(versions: Sequence[T]) -> tuple[list[T], int]:
    """The versions a page lists, newest first (`versions` as the spec gives them, each
    with a `version` number), and how many earlier ones the changelog alone holds."""
    ordered = sorted(versions, key=lambda v: -v.version)  # type: ignore[attr-defined]
    return ordered[:VERSIONS_SHOWN], max(0, len(ordered) - VERSIONS_SHOWN)
