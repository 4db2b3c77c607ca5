"""Method pages a catalog does not have: out of the navigation, and unlinked in the
hand-written pages.

Every generated page but the method pages exists for any catalog (an empty index still
is an index); a method page exists only for a method spec (`methods/<id>.yaml`). The
site's navigation and hand-written pages name `method/roofline.md`, so a catalog without
that method would otherwise build a site with a broken nav entry and broken links: the
entry is dropped and each such link keeps its text without the link.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection
from typing import Any

METHOD_FOLDER = "method"
# An inline Markdown link whose text has no brackets and whose target has no spaces or
# parentheses: the form the hand-written pages use.
_INLINE_LINK = re.compile(r"\[([^\[\]]*)\]\(([^()\s]+)\)")


def absent_method(target: str, methods: Collection[str]) -> bool:
    """True if docs-relative `target` (without its `#anchor`) is a method page that
    `methods` (the catalog's method ids) lacks."""
    folder, _, name = target.partition("/")
    if folder != METHOD_FOLDER or "/" in name or not name.endswith(".md"):
        return False
    return name.removesuffix(".md") not in methods


def nav_without_absent_methods(nav: Any, methods: Collection[str]) -> Any:
    """mkdocs' `nav` (a list of entries: a path, `{title: path}` or `{title: [...]}`)
    without the entries of absent method pages, nor sections left empty by that."""
    if not isinstance(nav, list):
        return nav
    out: list[Any] = []
    for entry in nav:
        if isinstance(entry, str):
            if not absent_method(entry, methods):
                out.append(entry)
            continue
        if isinstance(entry, dict) and len(entry) == 1:
            ((title, value),) = entry.items()
            if isinstance(value, str):
                if not absent_method(value, methods):
                    out.append(entry)
                continue
            if isinstance(value, list):
                kept = nav_without_absent_methods(value, methods)
                if kept:
                    out.append({title: kept})
                continue
        out.append(entry)
    return out


def unlink_absent_methods(markdown: str, src_uri: str, methods: Collection[str]) -> str:
    """`markdown` (of the page `src_uri`) with each inline link to an absent method page
    replaced by its text."""
    here = posixpath.dirname(src_uri)

    def replace(match: re.Match[str]) -> str:
        text, url = match.group(1), match.group(2)
        if "://" in url or url.startswith(("/", "#", "mailto:")):
            return match.group(0)
        path = url.partition("#")[0]
        target = posixpath.normpath(posixpath.join(here, path))
        return text if absent_method(target, methods) else match.group(0)

    return _INLINE_LINK.sub(replace, markdown)
