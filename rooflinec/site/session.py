"""`Session`: everything the site keeps from one build for the next, in one place.

Lifetime: one mkdocs run. The plugin defines `on_startup`, so mkdocs (1.4 and later)
keeps its one instance across the rebuilds of `serve`; `on_startup` (once per `mkdocs
build`, `mkdocs serve`, `rooflinec build` or `rooflinec serve`) gives it a new `Session`,
and every rebuild of that run reads and updates the same one. Nothing the pages, charts
or dirty rebuilds keep lives at module level: each cache is a field here, handed to the
code that uses it (`Site.session`, `Rebuild`), and each is bounded (`Bounded`, or one
entry per device, or one site folder).

Every cache is keyed by the exact inputs of what it holds, so what a build writes never
depends on what the session holds: a rebuild of `serve` equals a clean build byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rooflinec.pipeline import Compilations
from rooflinec.site.bounded import Bounded

if TYPE_CHECKING:
    from rooflinec.site.svg_renders import SvgRenders

__all__ = ["SECTIONS_KEPT", "SVGS_KEPT", "TABLE_ROWS_KEPT", "Bounded", "KeptPages", "Session"]

SVGS_KEPT = 1024  # chart renderings (a few kB each) kept in memory
SECTIONS_KEPT = 8192  # audit sections (one per device figure; the bundled site has ~2000)
TABLE_ROWS_KEPT = 65536  # rendered table rows (the bundled site has ~25,000)


class KeptPages:
    """Device pages and per-device values kept between the builds of one `serve` session
    (a field of `Session`; `rooflinec.site.pages.reuse` fills it): at most one entry per
    kind and device."""

    def __init__(self) -> None:
        # The shared inputs of the kept pages, and the build they were last checked for.
        self.world: tuple[Any, ...] | None = None
        self.checked: object | None = None
        # (kind, device id) -> (the device's own inputs, the value made from them), of the
        # builds since the shared inputs last changed; entries a build does not ask for
        # are dropped.
        self.kept: dict[tuple[str, str], tuple[tuple[Any, ...], Any]] = {}
        self.used: dict[tuple[str, str], tuple[tuple[Any, ...], Any]] = {}
        self.reused: set[tuple[str, str]] = set()  # this round's entries from an earlier one

    def last_round(self) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
        """(the (kind, device) entries the last build reused, those it made afresh)."""
        return set(self.reused), set(self.used) - self.reused

    def start(self, build: object, inputs: Callable[[], tuple[Any, ...]]) -> None:
        """Check a build's shared inputs (`inputs()`, what every kept page reads) against
        the kept pages' (dropping them all when they differ) and start a round, in which
        only the entries asked for are kept. Once per build (`build` is its site)."""
        if self.checked is build:
            return
        world = inputs()
        if self.world == world:
            # A new round: what the last one used is what may be reused now.
            self.kept = dict(self.used) if self.used else dict(self.kept)
        else:
            self.kept = {}
            self.world = world
        self.used = {}
        self.reused = set()
        self.checked = build


@dataclass
class Session:
    """The caches of one mkdocs run (see the module docstring), and whether whole
    device pages are kept between its builds (`serve` only)."""

    keep_pages: bool = False
    """Keep device pages between builds (`rooflinec.site.pages.reuse`): on for `serve`."""
    compilations: Compilations = field(default_factory=Compilations)
    """The last good compile of the specs folder and its parsed files (one folder)."""
    pages: KeptPages = field(default_factory=lambda: KeptPages())
    """Device pages and per-device values of the previous builds (one entry per kind and
    device: bounded by the catalog)."""
    svgs: Bounded[str, str] = field(default_factory=lambda: Bounded(SVGS_KEPT))
    """Chart renderings by the hash of their spec (`charts.render_svg`)."""
    sections: Bounded[tuple[Any, ...], str] = field(default_factory=lambda: Bounded(SECTIONS_KEPT))
    """Rendered audit sections by their exact inputs (`pages.audit`)."""
    table_rows: Bounded[
        tuple[str, str, tuple[str, ...]], tuple[str, tuple[str, ...], tuple[str, ...]]
    ] = field(default_factory=lambda: Bounded(TABLE_ROWS_KEPT))
    """Table rows of generated pages rendered to HTML, by their Markdown
    (`fast_tables.RowMemo`): used in a `serve` session only."""
    search_rows: Bounded[str, tuple[str, ...]] = field(
        default_factory=lambda: Bounded(TABLE_ROWS_KEPT)
    )
    """Table rows' text parts for the search index, by their HTML
    (`fast_search.RowMemo`): used in a `serve` session only."""
    built: tuple[str, str, dict[str, str]] | None = None
    """(site folder, site key, {output path: fingerprint}) of the last successful build:
    one site folder at a time (`rooflinec.site.incremental`)."""
    search: tuple[str, dict[str, list[Any]]] | None = None
    """(site folder, {page url: its search index entries}) of the last successful build."""

    theme_files: dict[tuple[str, ...], list[str]] = field(default_factory=dict)
    """The theme's static files by what mkdocs' filter of them reads (one entry per theme:
    `mkdocs_compat.cache_theme_listing`)."""

    renders: SvgRenders | None = None
    """The chart renderings a `serve` rebuild leaves to the background (None: a build
    renders every chart before it writes the page; `rooflinec.site.svg_renders`)."""

    told_plain_path: bool = False
    """Whether the one line saying the fast paths are off was logged in this session."""

    def forget_build(self) -> None:
        """Drop the record of the last build: after a failed one files may be half
        written, so the next build starts afresh."""
        self.built = None
        self.search = None
