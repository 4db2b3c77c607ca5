"""The search index entries of generated pages, computed without `html.parser`.

mkdocs-material's search plugin cuts every page's HTML into sections (one per heading
with an `id`) with a `html.parser.HTMLParser` subclass, `Parser`
(`material/plugins/search/plugin.py`). On rooflinec's large generated pages that costs
~15 ms a page, a third of a `rooflinec serve` rebuild: half in the tokenizer, half in the
parser's per-tag bookkeeping.

`search_sections` gives the same sections for the HTML rooflinec writes (nh3's
serialisation plus the trusted chart and MathML fragments): one regular expression (a
tag and the text after it per match) tokenizes it the way `html.parser` does with
`convert_charrefs=True` (tag and attribute names lowercased, text and attribute values
unescaped, `script`/`style` content raw), and the `Parser`'s handlers are replayed step
for step on cheaper state (tag names and counts instead of `Element` objects, a set of
skipped tag names). Whatever lies outside
that grammar (comments, `<!`, `<?`, unquoted or spaced attribute values, a stray `<`,
elements whose content newer Pythons parse as raw text, a `Parser` step that would
raise) raises `Fallback`, and material's own parser indexes the page.

`FastSearch` wires it to the build: before material's `on_page_context` a generated
page is marked `search: {exclude: true}` so material skips it, and right after, the page
meta is restored and the sections go through material's own `create_entry_for_section`,
so the index holds the same entries in the same order. It only acts when the `search`
plugin is material's, enabled, and its `on_page_context` runs between rooflinec's two
hooks with nothing else in between (`rooflinec.site.mkdocs_compat.material_search_index`,
like every reading of material's internals).
"""

from __future__ import annotations

import logging
import re
from html import escape, unescape
from typing import TYPE_CHECKING, Any, Protocol

from rooflinec.site.mkdocs_compat import material_search_index

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
    {
        *("area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta"),
        *("param", "source", "track", "wbr"),
    }
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

# One token of the HTML from a `<`: a start tag (name, attribute names with double- or
# single-quoted values or none, whitespace between them, optional `/` before `>`:
# groups 1-3), an end tag (group 4), or neither (any other `<`, outside the grammar);
# then the text up to the next `<` (group 5). Each form is one html.parser reads the
# same way: its tag name runs to whitespace, `/` or `>`, its attribute name to
# whitespace, `/`, `=` or `>`, and `[ \t\n\r\f]` is within its `\s`.
_TOKEN = re.compile(
    r"<(?:([a-zA-Z][a-zA-Z0-9-]*)"
    r"((?:[ \t\n\r\f]+[a-zA-Z_:][-a-zA-Z0-9_:.]*(?:=\"[^\"]*\"|='[^']*')?)*)"
    r"[ \t\n\r\f]*(/?)>"
    r"|/([a-zA-Z][a-zA-Z0-9-]*)[ \t\n\r\f]*>"
    r"|)([^<]*)"
)
_ATTRIBUTE = re.compile(r"([a-zA-Z_:][-a-zA-Z0-9_:.]*)(?:=\"([^\"]*)\"|='([^']*)')?")
# Start tags whose attributes matter to the parser (a cheap test before reading them).
_RELEVANT = re.compile(r"(?i)\b(?:id|class|data-search-exclude)\b")
_NONE: dict[str, str | None] = {}


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


class RowMemo(Protocol):
    """Where a table row's text parts are kept between builds (a `Bounded` of the serve
    session), by the row's HTML."""

    def get(self, key: str) -> tuple[str, ...] | None: ...

    def put(self, key: str, value: tuple[str, ...]) -> tuple[str, ...]: ...


def _row_parts(row: str, rows: RowMemo) -> tuple[str, ...] | None:
    """The text parts a table row (`<tr ...>` to its `</tr>`) adds to the section it
    stands in, when that does not depend on what is around it: the row holds no heading
    and none of the tags whose end material's parser looks up in the whole section
    (`_KEPT`), and its tags are balanced. None otherwise."""
    found = rows.get(row)
    if found is not None:
        return found
    if "<h" in row or "<H" in row:
        # A heading without an id opens no section but takes the text while open when
        # it is of the current section's kind: that depends on the section.
        return None
    sections, balanced = _parse(row, None)
    if not balanced or len(sections) != 1:
        return None
    (section,) = sections
    if section.tag != "hx" or section.title or any(p.startswith("<") for p in section.text):
        return None  # a heading, or a `_KEPT` marker (escaped text never starts with `<`)
    return rows.put(row, tuple(section.text))


def search_sections(content: str, rows: RowMemo | None = None) -> list[SearchSection]:
    """The sections material's search `Parser` finds in `content`, in order (excluded
    ones included, as `Parser.data`), or `Fallback`. `rows` keeps the text of table rows
    between builds (`serve`): a row found there is not parsed again."""
    return _parse(content, rows)[0]


def _parse(content: str, rows: RowMemo | None) -> tuple[list[SearchSection], bool]:
    """`search_sections`, and whether every element opened was closed (no skipped
    element left open, no `pre`, no heading link)."""
    # The parser's state, by tag name (its `skip` set and `in context` tests compare
    # elements by tag name): the open elements, how many of each are open, how many open
    # ones are skipped (`skip & context`), how many `pre` are open, the depths of open
    # `<a class="headerlink">`, the sections and the current one.
    context: list[str] = []
    open_count: dict[str, int] = {}
    skip = set(_ALWAYS_SKIPPED)
    skipped = 0  # == sum(open_count[name] for name in skip)
    pre = 0
    headerlinks: list[int] = []
    data: list[SearchSection] = []
    section: SearchSection | None = None
    raw_text: str | None = None  # inside script or style: only text, then its end tag

    # Each match is a tag and the text after it, up to the next `<`; a text is handled
    # at the top of the next round (the text before the first `<` first, the last one in
    # a round of its own), so events come in document order.
    first = content.find("<")
    text = content if first < 0 else content[:first]
    matches = _TOKEN.finditer(content, first) if first >= 0 else iter(())
    while True:
        match = next(matches, None)
        if text and raw_text is None and not skipped:  # handle_data(unescape(text))
            if "&" in text:
                text = unescape(text)
            blank = text.isspace()
            if not pre:
                text = " " if blank else text.replace("\n", " ")
            if section is None:
                section = SearchSection("hx", 0)
                data.append(section)
            if not blank and ("&" in text or "<" in text or ">" in text):
                text = escape(text, quote=False)
            if open_count.get(section.tag):
                if not headerlinks:
                    section.title.append(text)
            elif blank:
                parts = section.text
                if pre or not parts or not parts[-1].isspace():
                    parts.append(text)
            else:
                section.text.append(text)
        if match is None:
            break
        name, source, slash, tag, text = match.groups()
        if (
            rows is not None
            and name == "tr"
            and section is not None
            and not skipped
            and not pre
            and not headerlinks
            and raw_text is None
            and not open_count.get(section.tag)
            and section.depth <= len(context) + 1
        ):
            # A row in plain text of a section: its parts from `rows` (the row's end tags
            # are all deeper than the section's heading, so the section stays current).
            close = content.find("</tr>", match.start())
            row = content[match.start() : close + 5] if close >= 0 else ""
            kept = _row_parts(row, rows) if row and "<tr" not in row[3:] else None
            if kept is not None:
                own = section.text
                if kept and own and own[-1].isspace() and kept[0].isspace():
                    kept = kept[1:]  # consecutive blanks are kept once
                own.extend(kept)
                after = content.find("<", close + 5)
                text = content[close + 5 : after] if after >= 0 else content[close + 5 :]
                matches = _TOKEN.finditer(content, after) if after >= 0 else iter(())
                continue
        if raw_text is not None:
            # script or style content (skipped: they never leave `skip`), then its end tag
            if tag is None or tag.lower() != raw_text:
                raise Fallback(f"<{raw_text}> content with '<'")
            raw_text = None

        if name is not None:  # handle_starttag, then handle_endtag after `/>`
            tag = name
            if not tag.islower():
                tag = tag.lower()
            if tag in _VOID:
                continue  # neither pushed nor popped: `</br>` never matches
            if tag in _REFUSED_TAGS:
                raise Fallback(f"<{tag}>")
            attrs = _attributes(source) if source and _RELEVANT.search(source) else _NONE
            context.append(tag)
            open_count[tag] = open_count.get(tag, 0) + 1
            if tag in skip:
                skipped += 1
            if tag == "pre":
                pre += 1
            if attrs:
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
            if attrs and ("data-search-exclude" in attrs or attrs.get("class") == "linenodiv"):
                if tag not in skip:
                    skip.add(tag)
                    skipped += open_count[tag]
            elif tag in _KEPT and not skipped:
                parts = section.title if open_count.get(section.tag) else section.text
                parts.append(f"<{tag}>")
            if not slash:
                if tag in _RAW_TEXT:
                    raw_text = tag
                continue
        elif tag is not None:
            if not tag.islower():
                tag = tag.lower()
            if not context or context[-1] != tag:
                continue
        else:
            raise Fallback(f"markup at {match.start()}: {content[match.start() :][:20]!r}")

        # handle_endtag(tag) for the innermost open element
        assert section is not None  # an open element made one
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
        if tag == "pre":
            pre -= 1
        if tag in skip:
            skipped -= 1
            if tag not in _ALWAYS_SKIPPED:
                skip.remove(tag)
                skipped -= open_count[tag]
            continue
        if tag in _KEPT and not skipped:
            parts = section.title if open_count.get(section.tag) else section.text
            opening = f"<{tag}>"
            try:
                index = parts.index(opening)  # the first one, as material's parser looks
            except ValueError:
                raise Fallback(f"</{tag}> without <{tag}> in its section") from None
            for i in range(index + 1, len(parts)):
                if not parts[i].isspace():
                    parts.append(f"</{tag}>")
                    break
            else:
                del parts[index:]  # an element with nothing (or only whitespace) in it

    if raw_text is not None:
        raise Fallback(f"<{raw_text}> without its end tag")
    return data, not context and not skipped and not pre and not headerlinks


class FastSearch:
    """Indexes rooflinec's pages for material's search plugin with `search_sections`.

    `before(page, config)` runs right before material's `on_page_context`: when the fast
    path applies it works out the page's sections and marks the page excluded, so
    material skips it (material still strips the `data-search-*` attributes from its
    content). `after(page)` runs right after: it restores the page's meta as it was and
    gives each section that is not excluded to material's `create_entry_for_section`, as
    material's `add_entry_from_context` would have. `hooks` are the plugin's two bound
    hook methods: the fast path is used only when material's hook sits between them in
    mkdocs' list of `page_context` handlers, so nothing else sees the marked meta or
    changes the content in between.
    """

    def __init__(
        self,
        hooks: tuple[Callable[..., Any], Callable[..., Any]],
        rows: RowMemo | None = None,
    ) -> None:
        self.hooks = hooks
        self.rows = rows  # table rows' parts kept between builds (`serve`)
        self.index: Any = None  # material's SearchIndex when the fast path applies
        self.resolved = False
        self.pending: tuple[Page, list[SearchSection], bool, Any] | None = None

    def before(self, page: Page, config: MkDocsConfig) -> None:
        self.pending = None
        if not self.resolved:
            self.index = material_search_index(config, self.hooks)
            self.resolved = True
        if self.index is None or page.content is None:
            return
        had_meta = "search" in page.meta
        meta = page.meta.get("search")
        if meta is not None and not isinstance(meta, dict):
            return  # material's own reading of it, whatever that does
        if meta and meta.get("exclude"):
            return  # material skips it anyway
        try:
            sections = search_sections(page.content, self.rows)
        except Fallback as reason:
            log.debug(f"rooflinec: {page.url} indexed by material's parser: {reason}")
            return
        page.meta["search"] = {"exclude": True}
        self.pending = (page, sections, had_meta, meta)

    def after(self, page: Page) -> None:
        pending, self.pending = self.pending, None
        if pending is None or pending[0] is not page:
            return
        _, sections, had_meta, meta = pending
        if had_meta:
            page.meta["search"] = meta
        else:
            del page.meta["search"]
        for section in sections:
            if not section.is_excluded():
                self.index.create_entry_for_section(section, page.toc, page.url, page)
