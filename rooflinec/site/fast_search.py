"""The search index entries of generated pages, computed without `html.parser`.

mkdocs-material's search plugin cuts every page's HTML into sections (one per heading
with an `id`) with a `html.parser.HTMLParser` subclass, `Parser`
(`material/plugins/search/plugin.py`). On rooflinec's large generated pages that costs
~15 ms a page, a third of a `rooflinec serve` rebuild: half in the tokenizer, half in the
parser's per-tag bookkeeping.

`search_sections` gives the same sections for the HTML rooflinec writes (nh3's
serialisation plus the trusted chart and MathML fragments): one regular expression
tokenizes it the way `html.parser` does (with `convert_charrefs=True`: tag and attribute
names lowercased, text and attribute values unescaped, `script`/`style` content raw),
and the `Parser`'s handlers are replayed step for step on cheaper state (tag names and
counts instead of `Element` objects, a set of skipped tag names). Whatever lies outside
that grammar (comments, `<!`, `<?`, unquoted or spaced attribute values, a stray `<`,
elements whose content newer Pythons parse as raw text, a `Parser` step that would
raise) raises `Fallback`, and material's own parser indexes the page.

`FastSearch` wires it to the build: before material's `on_page_context` a generated
page is marked `search: {exclude: true}` so material skips it, and right after, the page
meta is restored and the sections go through material's own `create_entry_for_section`,
so the index holds the same entries in the same order. It only acts when the `search`
plugin is material's, enabled, and its `on_page_context` runs between rooflinec's two
hooks with nothing else in between.
"""

from __future__ import annotations

import logging
import re
from html import escape, unescape
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.pages import Page

__all__ = ["Fallback", "FastSearch", "SearchSection", "search_sections"]

log = logging.getLogger("mkdocs.plugins.rooflinec")


class Fallback(Exception):
    """The HTML is outside what `search_sections` reproduces: use material's parser."""


class SearchSection:
    """One section of a page as material's `Section`: the heading's tag, its `id` (None
    for the first section), the title and text parts, and whether the heading carries
    `data-search-exclude`. `create_entry_for_section` reads `id`, `title` and `text`."""

    __slots__ = ("depth", "excluded", "id", "tag", "text", "title")

    def __init__(self, tag: str, depth: float, excluded: bool = False) -> None:
        self.tag = tag
        self.depth = depth
        self.excluded = excluded
        self.id: str | None = None
        self.title: list[str] = []
        self.text: list[str] = []

    def is_excluded(self) -> bool:
        return self.excluded

    def __repr__(self) -> str:
        return f"SearchSection({self.tag!r}, id={self.id!r}, title={self.title!r})"


# material's sets (`void`, `Parser.skip`, `Parser.keep`), by tag name.
_VOID = frozenset(
    "area base br col embed hr img input link meta param source track wbr".split()
)
_ALWAYS_SKIPPED = ("object", "script", "style")
_KEPT = frozenset(("p", "code", "pre", "li", "ol", "ul", "sub", "sup"))
_HEADINGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))
# html.parser reads these elements' content as raw text (script and style in every
# Python; newer ones add the others): only script and style are reproduced, and only
# when their content has no `<`.
_RAW_TEXT = frozenset(("script", "style"))
_REFUSED_TAGS = frozenset(
    ("textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript", "plaintext")
)

# One token of the HTML: text up to the next `<`, a start tag (names and double- or
# single-quoted values only, whitespace between attributes, optional `/` before `>`), an
# end tag, or any other `<` (outside the grammar). Each form is one html.parser reads the
# same way: its tag name runs to whitespace, `/` or `>`, its attribute name to
# whitespace, `/`, `=` or `>`, and `[ \t\n\r\f]` is within its `\s`.
_TOKEN = re.compile(
    r"([^<]+)"
    r"|<([a-zA-Z][a-zA-Z0-9-]*)"
    r"((?:[ \t\n\r\f]+[a-zA-Z_:][-a-zA-Z0-9_:.]*(?:=\"[^\"]*\"|='[^']*')?)*)"
    r"[ \t\n\r\f]*(/?)>"
    r"|</([a-zA-Z][a-zA-Z0-9-]*)[ \t\n\r\f]*>"
    r"|(<)"
)
_ATTRIBUTE = re.compile(r"([a-zA-Z_:][-a-zA-Z0-9_:.]*)(?:=\"([^\"]*)\"|='([^']*)')?")
# Start tags whose attributes matter to the parser (a cheap test before reading them).
_RELEVANT = re.compile(r"(?i)\b(?:id|class|data-search-exclude)\b")

# Group numbers; `lastindex` (the last group matched) tells the kinds apart: a start
# tag always matches its `(/?)`.
_TEXT, _NAME, _ATTRS, _SLASH, _END = 1, 2, 3, 4, 5


def _attributes(source: str) -> dict[str, str | None]:
    """`dict(attrs)` as material builds it: names lowercased, the last of a repeated name
    kept, a value without `=` None, values unescaped."""
    found: dict[str, str | None] = {}
    for match in _ATTRIBUTE.finditer(source):
        name, double, single = match.groups()
        value = double if double is not None else single
        if value and "&" in value:
            value = unescape(value)
        found[name.lower()] = value
    return found


def search_sections(content: str) -> list[SearchSection]:
    """The sections material's search `Parser` finds in `content`, in order (excluded
    ones included, as `Parser.data`), or `Fallback`."""
    # The parser's state: the open elements' tag names (`context`), how many of each are
    # open, the positions of open `<a class="headerlink">`, the skipped tag names (its
    # `skip` set compares elements by tag name), the sections and the current one.
    context: list[str] = []
    open_count: dict[str, int] = {}
    headerlinks: list[int] = []
    skip = set(_ALWAYS_SKIPPED)
    data: list[SearchSection] = []
    section: SearchSection | None = None
    raw_text: str | None = None  # inside script or style: only text, then its end tag

    def skipping() -> bool:
        for name in skip:
            if open_count.get(name):
                return True
        return False

    for match in _TOKEN.finditer(content):
        kind = match.lastindex
        if raw_text is not None:
            if kind == _TEXT:
                continue  # skipped: script and style never leave `skip`
            if kind != _END or match.group(_END).lower() != raw_text:
                raise Fallback(f"<{raw_text}> content with '<'")
            raw_text = None

        if kind == _TEXT:  # handle_data(unescape(text))
            if skipping():
                continue
            text = match.group(_TEXT)
            if "&" in text:
                text = unescape(text)
            in_pre = bool(open_count.get("pre"))
            if not in_pre:
                text = text.replace("\n", " ") if not text.isspace() else " "
            if section is None:
                section = SearchSection("hx", 0)
                data.append(section)
            if open_count.get(section.tag):
                if not headerlinks:
                    section.title.append(escape(text, quote=False))
            elif text.isspace():
                parts = section.text
                if not parts or not parts[-1].isspace() or in_pre:
                    parts.append(text)
            else:
                section.text.append(escape(text, quote=False))

        elif kind == _SLASH:  # handle_starttag, and handle_endtag after `/>`
            tag = match.group(_NAME).lower()
            if tag in _REFUSED_TAGS:
                raise Fallback(f"<{tag}>")
            source = match.group(_ATTRS)
            attrs = _attributes(source) if source and _RELEVANT.search(source) else {}
            closed = bool(match.group(_SLASH))
            if tag in _VOID:
                continue  # neither pushed nor popped: `</br>` can never match
            context.append(tag)
            open_count[tag] = open_count.get(tag, 0) + 1
            if tag == "a" and attrs.get("class") == "headerlink":
                headerlinks.append(len(context))
            if tag in _HEADINGS and "id" in attrs:
                depth = len(context)
                if tag != "h1" and not data:
                    data.append(SearchSection("hx", depth))
                section = SearchSection(tag, depth, "data-search-exclude" in attrs)
                if data:
                    section.id = attrs["id"]
                data.append(section)
            if section is None:
                section = SearchSection("hx", 0)
                data.append(section)
            if "data-search-exclude" in attrs or attrs.get("class") == "linenodiv":
                skip.add(tag)
            elif tag in _KEPT and not skipping():
                parts = section.title if open_count.get(section.tag) else section.text
                parts.append(f"<{tag}>")
            if closed:
                section = _end_tag(tag, context, open_count, headerlinks, skip, data, section)
            elif tag in _RAW_TEXT:
                raw_text = tag

        elif kind == _END:
            tag = match.group(_END).lower()
            if context and context[-1] == tag:
                assert section is not None  # an open element made one
                section = _end_tag(tag, context, open_count, headerlinks, skip, data, section)

        else:
            raise Fallback(f"markup at {match.start()}: {content[match.start() : match.start() + 20]!r}")

    if raw_text is not None:
        raise Fallback(f"<{raw_text}> without its end tag")
    return data


def _end_tag(
    tag: str,
    context: list[str],
    open_count: dict[str, int],
    headerlinks: list[int],
    skip: set[str],
    data: list[SearchSection],
    section: SearchSection,
) -> SearchSection:
    """`Parser.handle_endtag` for the innermost open element, `tag`; the current section
    after it."""
    depth = len(context)
    if section.depth > depth:
        # Leaving the element a heading sat in: back to the last section at this depth.
        for previous in reversed(data):
            if previous.depth <= depth:
                section.depth = float("inf")
                section = previous
                break
    context.pop()
    open_count[tag] -= 1
    if headerlinks and headerlinks[-1] == depth:
        headerlinks.pop()
    if tag in skip:
        if tag not in _ALWAYS_SKIPPED:
            skip.discard(tag)
        return section
    if tag in _KEPT:
        for name in skip:
            if open_count.get(name):
                return section
        parts = section.title if open_count.get(section.tag) else section.text
        opening = f"<{tag}>"
        try:
            index = parts.index(opening)  # the first one, as material's parser looks
        except ValueError:
            raise Fallback(f"</{tag}> without <{tag}> in its section") from None
        for i in range(index + 1, len(parts)):
            if not parts[i].isspace():
                parts.append(f"</{tag}>")
                return section
        del parts[index:]  # an element with nothing (or only whitespace) in it
    return section
