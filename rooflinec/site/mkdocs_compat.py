"""The one seam to the internals of mkdocs, Python-Markdown and mkdocs-material.

rooflinec's fast paths reproduce, byte for byte, what these packages would write
(`fast_tables`: Python-Markdown's tables with mkdocs' link rewriting; `fast_search`:
material's search sections), and a few speed-ups reach past their public API (the
watchdog poll interval, the theme's template cache). Every such touch is here, and only
runs with the versions it was tested with (`TESTED`, the ranges of the `site` extra;
`constraints.txt` pins the versions CI installs). With any other version installed, or
with the plugin option `fast_paths: false`, the plain mkdocs path builds the site (the
same pages, more slowly) and `rooflinec build --verbose` says so in one line.

What stays on outside the ranges uses only public attributes: the page date
(`Page.update_date`) and the completion of the search index of a dirty rebuild, which
checks every attribute it reads.
"""

from __future__ import annotations

import functools
import os
import re
import sysconfig
from collections.abc import Callable, Collection, Iterable
from importlib import metadata
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jinja2 import Environment
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.livereload import LiveReloadServer
    from mkdocs.structure.files import File, Files

__all__ = [
    "TESTED",
    "anchor_ids",
    "block_level_tags",
    "cache_theme_listing",
    "fast_paths",
    "mark_modified",
    "material_search_index",
    "page_link_rewriter",
    "search_entries",
    "stamp_update_date",
    "stop_material_merge",
    "theme_template_cache",
    "untested",
    "watch_quickly",
]

TESTED: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {
    # distribution: (lowest tested, first untested), as in pyproject.toml's `site` extra
    "mkdocs": ((1, 6), (1, 7)),
    "Markdown": ((3, 6), (4, 0)),
    "mkdocs-material": ((9, 5), (10, 0)),
}


def _release(version: str) -> tuple[int, ...]:
    """The leading numbers of a version string (`9.8.2.post1` -> (9, 8, 2))."""
    numbers = []
    for part in version.split("."):
        match = re.match(r"\d+", part)
        if match is None:
            break
        numbers.append(int(match.group(0)))
        if match.group(0) != part:
            break
    return tuple(numbers)


@functools.lru_cache(maxsize=1)
def untested() -> tuple[str, ...]:
    """The installed packages outside their tested range, as `NAME VERSION (tested:
    >=LOW,<HIGH)`; () when all are in range. A package that is not installed (material,
    for a site with another theme) is not in the way."""
    out = []
    for name, (low, high) in TESTED.items():
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        if not low <= _release(version)[:2] < high:
            tested = f">={'.'.join(map(str, low))},<{'.'.join(map(str, high))}"
            out.append(f"{name} {version} (tested: {tested})")
    return tuple(out)


def fast_paths(enabled: bool) -> bool:
    """Whether the fast paths run: `enabled` (the plugin option) and every package in
    its tested range."""
    return enabled and not untested()


def fast_paths_line(enabled: bool) -> str:
    """The one line `build --verbose` shows when the fast paths are off, saying why."""
    if not enabled:
        return "rooflinec: fast paths off (fast_paths: false): the plain mkdocs path builds"
    return (
        f"rooflinec: fast paths off: {', '.join(untested())} outside the tested range; "
        "the plain mkdocs path builds the same pages"
    )


# --------------------------------------------------------------------------- mkdocs


def page_link_rewriter(file: File, files: Files, config: MkDocsConfig) -> Any | None:
    """mkdocs' own link rewriting for `file` (what it applies to every `<a href>` of the
    page: `mkdocs.structure.pages._RelativePathTreeprocessor`), or None when this mkdocs
    does not have it (or the raw-HTML id scan that `anchor_ids` reuses)."""
    try:
        from mkdocs.structure.pages import _HTMLHandler, _RelativePathTreeprocessor

        if not hasattr(_HTMLHandler(), "present_anchor_ids"):
            return None

        rewriter = _RelativePathTreeprocessor(file, files, config)
        if not callable(getattr(rewriter, "path_to_url", None)):
            return None
        return rewriter
    except (ImportError, TypeError, AttributeError):
        return None


def anchor_ids(tags: Iterable[str]) -> set[str]:
    """The ids the tags declare, as mkdocs collects them from a page's raw HTML
    (`mkdocs.structure.pages._HTMLHandler`)."""
    from mkdocs.structure.pages import _HTMLHandler

    parser = _HTMLHandler()
    parser.feed("".join(tags))
    parser.close()
    found: set[str] = parser.present_anchor_ids
    return found


def watch_quickly(server: LiveReloadServer, path: str, seconds: float) -> None:
    """`server.watch(path)`, its watchdog observer polling every `seconds` rather than
    mkdocs' 0.5 s (the observer's private `_timeout`, read when the watch starts)."""
    observer = getattr(server, "observer", None)
    interval = getattr(observer, "_timeout", None)
    if isinstance(interval, (int, float)) and interval > seconds:
        observer._timeout = seconds  # type: ignore[union-attr]
        try:
            server.watch(path)
        finally:
            observer._timeout = interval  # type: ignore[union-attr]
    else:
        server.watch(path)


def _always() -> bool:
    return True


def mark_modified(file: File) -> None:
    """Make a dirty build render `file` again: mkdocs asks each file's `is_modified()`
    (by default, whether its source is newer than its output)."""
    file.is_modified = _always  # type: ignore[method-assign]


def theme_template_cache(env: Environment) -> None:
    """Keep the theme's compiled templates on disk, as rooflinec's own are: mkdocs makes
    a new theme environment for every build, and `serve` builds again on every edit."""
    if env.bytecode_cache is None:
        from rooflinec.site.pages.common import bytecode_cache

        env.bytecode_cache = bytecode_cache("theme-templates")


def cache_theme_listing(config: MkDocsConfig, kept: dict[tuple[str, ...], list[str]]) -> None:
    """Keep the list of the theme's static files between the builds of one session.

    Every build, mkdocs walks the theme's folders (material's thousands of icons) and
    matches each name against its exclusion patterns (`Files.add_files_from_theme`). A
    theme installed as a package does not change while a session runs, so its filtered
    list is kept in `kept`, keyed by everything that filter reads. A theme folder outside
    the installed packages (a project's `custom_dir`) is listed afresh every build."""
    from mkdocs import utils

    theme = config.theme
    installed = {os.path.realpath(sysconfig.get_paths()[k]) for k in ("purelib", "platlib")}

    def in_installed(folder: str) -> bool:
        real = os.path.realpath(folder)
        return any(os.path.commonpath([real, root]) == root for root in installed)

    if not theme.dirs or not all(in_installed(d) for d in theme.dirs):
        return
    key = (
        *theme.dirs,
        "\0",
        *theme.static_templates,
        "\0",
        *utils.markdown_extensions,
    )
    make_env = theme.get_env

    def get_env() -> Environment:
        env = make_env()
        list_templates = env.list_templates

        def listing(
            extensions: Collection[str] | None = None,
            filter_func: Callable[[str], bool] | None = None,
        ) -> list[str]:
            # Only mkdocs' own filter (a function of `key`) is answered from `kept`.
            qualname = getattr(filter_func, "__qualname__", "")
            if extensions is not None or not qualname.startswith("Files.add_files_from_theme"):
                return list_templates(extensions, filter_func)
            found = kept.get(key)
            if found is None:
                found = kept[key] = list_templates(None, filter_func)
            return list(found)

        env.list_templates = listing  # type: ignore[method-assign]
        return env

    theme.get_env = get_env  # type: ignore[method-assign]


def stamp_update_date(files: Files, date: str) -> None:
    """Give every page `date` as its update date (mkdocs stamps the build date into the
    sitemap and the gzip header): `Page.update_date`, a public attribute."""
    for file in files.documentation_pages():
        if file.page is not None:
            file.page.update_date = date


# --------------------------------------------------------------------------- Python-Markdown


def block_level_tags() -> frozenset[str]:
    """Python-Markdown's block-level element names (`markdown.util`)."""
    from markdown import util  # type: ignore[import-untyped]

    return frozenset(util.BLOCK_LEVEL_ELEMENTS)


# --------------------------------------------------------------------------- search


def search_entries(config: MkDocsConfig) -> tuple[Any, str] | None:
    """The search plugin's index and the name of its list of entries (material's
    `entries` or mkdocs' own `_entries`), or None."""
    for name in ("material/search", "search"):
        plugin = config.plugins.get(name)
        index = getattr(plugin, "search_index", None)
        for attribute in ("entries", "_entries"):
            if isinstance(getattr(index, attribute, None), list):
                return index, attribute
    return None


def stop_material_merge(config: MkDocsConfig) -> None:
    """Stop material's search from merging the index of its previous dirty build into
    this one (`search_index_prev`: it keeps its instance, and that index, for the
    process): rooflinec's index is whole."""
    plugin = config.plugins.get("material/search")
    if plugin is not None and hasattr(plugin, "search_index_prev"):
        plugin.search_index_prev = None


def material_search_index(
    config: MkDocsConfig, hooks: tuple[Callable[..., Any], Callable[..., Any]]
) -> Any:
    """The enabled material search plugin's `SearchIndex` when its `on_page_context`
    (material's own, indexing with material's own `add_entry_from_context`) runs right
    between `hooks` in mkdocs' list of handlers; else None (another search plugin, or
    one changed by a subclass, or other handlers in between)."""
    try:
        from material.plugins.search.plugin import (  # type: ignore[import-untyped]
            SearchIndex,
            SearchPlugin,
        )
    except ImportError:
        return None
    events = list(config.plugins.events.get("page_context", []))
    before, after = hooks
    for i, method in enumerate(events[:-2]):
        if method != before or events[i + 2] != after:
            continue
        search = getattr(events[i + 1], "__self__", None)
        if (
            isinstance(search, SearchPlugin)
            and getattr(events[i + 1], "__func__", None) is SearchPlugin.on_page_context
            and search.config.enabled
        ):
            index = getattr(search, "search_index", None)
            if (
                isinstance(index, SearchIndex)
                and type(index).add_entry_from_context is SearchIndex.add_entry_from_context
                and callable(getattr(index, "create_entry_for_section", None))
            ):
                return index
    return None
