"""The tables of generated pages rendered here, not by Python-Markdown's `tables` extension.

A site build holds thousands of table rows, and Python-Markdown spends most of its time on
them (its inline patterns run one after the other over every cell). The generated pages
use a small part of Markdown in their cells: plain text, character references, inline
HTML tags, `**strong**` and `[text](page.md#anchor)` links. `take_tables` finds each table
block whose cells stay within that part, renders it to the bytes Python-Markdown (with
mkdocs' link rewriting) would write, and leaves a one-word paragraph in its place;
`put_tables` swaps the tables in for those paragraphs in the page's HTML, before the
sanitiser runs, so nh3 sees the same HTML as before. A table with anything else in it
(code spans, backslashes, emphasis, images, reference links, unusual tags ...) stays
Markdown: the fast path only ever covers what it reproduces exactly.

The whole page stays Markdown when the configured Markdown extensions are not all ones
whose effect on tables is reproduced here (a user's `smarty` or `pymdownx` extensions
change inline text), or when mkdocs' link rewriting cannot be reached. What this module
reads of mkdocs' and Python-Markdown's internals comes through
`rooflinec.site.mkdocs_compat`, and the plugin uses it only where that allows.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from rooflinec.site.mkdocs_compat import anchor_ids, block_level_tags, page_link_rewriter

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import Files
    from mkdocs.structure.pages import Page

__all__ = [
    "FastTables",
    "PageTables",
    "extensions_supported",
    "put_tables",
    "take_tables",
]

# Extensions that do nothing to a table's cells beyond what is reproduced here (attr_list
# only acts on a trailing `{...}`, which falls back; the others are block-level; mkdocs
# always adds fenced_code, and a page with a fence keeps all its tables as Markdown).
_KNOWN = ("admonition", "attr_list", "fenced_code", "md_in_html", "tables", "toc")
KNOWN_EXTENSIONS = frozenset(_KNOWN) | {f"markdown.extensions.{name}" for name in _KNOWN}

# Python-Markdown's own pattern (markdown.serializers, 3.x).
_AMP = re.compile(r"&(?!(?:\#[0-9]+|\#x[0-9a-f]+|[0-9a-z]+);)", re.I)
_TAG_NAME = re.compile(r"</?([a-zA-Z][a-zA-Z0-9]*)")
_AUTOLINK = re.compile(r"<(?:[Ff]|[Hh][Tt])[Tt][Pp][Ss]?://")
# What makes a table stay Markdown: code spans, escapes, attribute lists, images, control
# characters Python-Markdown strips or uses as markers, and an `&` that does not start a
# complete character reference (Python-Markdown's raw-HTML pass over the whole page
# completes `&#12` to `&#12;`, and a stray `&#;` can upset its parse of what follows).
_REFUSED = re.compile(
    r"[`\\{}\t\r\x00-\x08\x0b-\x1f\x7f]|!\[|&(?!(?:\#[0-9]+|\#x[0-9a-fA-F]+|[a-zA-Z0-9]+);)"
)
# Pages with a code fence (its lines are code, not tables) or an HTML block whose content
# is inline Markdown keep every table as Markdown.
_PAGE_REFUSED = ("```", "~~~", 'markdown="span"', "markdown='span'")
_SEPARATOR_CHARS = frozenset("|:- ")
_END_BORDER = re.compile(r"(?<!\\)(?:\\\\)*\|$")


class Fallback(Exception):
    """The table holds something the fast path does not reproduce: it stays Markdown."""


def extensions_supported(config: MkDocsConfig) -> bool:
    """True when every configured Markdown extension is one whose effect on tables is
    reproduced here, with the tables extension's default options, in the Python-Markdown
    major version whose patterns are reproduced."""
    import markdown  # type: ignore[import-untyped]

    if getattr(markdown, "__version_info__", (0,))[0] != 3:
        return False
    names = config.markdown_extensions
    if not all(isinstance(name, str) and name in KNOWN_EXTENSIONS for name in names):
        return False
    configs = config.mdx_configs or {}
    return not configs.get("tables") and not configs.get("markdown.extensions.tables")


def _escape_text(text: str) -> str:
    # Python-Markdown's serializer (`_escape_cdata`): references kept, other `&` escaped.
    if "&" in text:
        text = _AMP.sub("&amp;", text)
    return text.replace("<", "&lt;").replace(">", "&gt;")


def _escape_href(text: str) -> str:
    # Python-Markdown's serializer for attributes in HTML (`_escape_attrib_html`).
    if "&" in text:
        text = _AMP.sub("&amp;", text)
    return text.replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


# An inline tag (Python-Markdown's HTML_RE without comments), or a link whose text holds
# no brackets and whose target no space, quote, bracket, parenthesis or `&`:
# Python-Markdown takes such a target as written.
_ATOM = re.compile(
    r"(?P<tag><\/?[a-zA-Z][^<>@ ]*(?: [^<>]*)?>)"
    r"|\[(?P<text>[^\[\]]+)\]\((?P<url>[^\s()<>\"'\[\]`\\&]+)\)"
)


_PLAIN = re.compile(r"[^<>&\[\]*_]*")
# Where a link's target goes until the table is known to render (NUL never reaches here:
# a table holding one stays Markdown).
_URL_SLOT = re.compile("\x00(\\d+)\x00")


# A rendered row: its HTML (link targets as slots numbered from 0), its inline tags and
# its link targets.
RenderedRow = tuple[str, tuple[str, ...], tuple[str, ...]]


class RowMemo(Protocol):
    """Where rendered rows are kept between builds (a `Bounded` of the serve session)."""

    def get(self, key: tuple[str, str, tuple[str, ...]]) -> RenderedRow | None: ...

    def put(self, key: tuple[str, str, tuple[str, ...]], value: RenderedRow) -> RenderedRow: ...


@dataclass
class _Renderer:
    link: Callable[[str], str]
    block_level: frozenset[str]
    tags: list[str] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    rows: RowMemo | None = None  # rendered rows by (row, cell tag, styles)

    def row(self, row: str, tag: str, styles: list[str]) -> str:
        """One table row's HTML, its tags and link targets recorded; from `rows` when the
        same row was rendered before (a row renders the same on every page: its link
        targets are put in per page, by `resolve`)."""
        if self.rows is None:
            return _row(_split_row(row), tag, styles, self)
        key = (row, tag, tuple(styles))
        hit = self.rows.get(key)
        if hit is None:
            tags, urls = self.tags, self.urls
            self.tags, self.urls = [], []
            try:
                html = _row(_split_row(row), tag, styles, self)
                hit = self.rows.put(key, (html, tuple(self.tags), tuple(self.urls)))
            finally:
                self.tags, self.urls = tags, urls
        html, row_tags, row_urls = hit
        self.tags.extend(row_tags)
        if row_urls:
            offset = len(self.urls)
            self.urls.extend(row_urls)
            if offset:
                html = _URL_SLOT.sub(lambda m: f"\x00{int(m.group(1)) + offset}\x00", html)
        return html

    def inline(self, text: str, *, in_link: bool = False) -> str:
        """`text` (one cell, or a link's text) as HTML, or `Fallback`.

        Python-Markdown stashes links and tags before it looks for `**`, so the text is
        cut at them first; then each `**` pair around something becomes `<strong>`."""
        if _PLAIN.fullmatch(text):  # most cells: nothing to cut, nothing to escape
            return text
        pieces: list[tuple[bool, str]] = []  # (is a `**`, HTML)
        pos = 0
        for match in _ATOM.finditer(text):
            self._text(text[pos : match.start()], pieces)
            pieces.append((False, self._atom(match, in_link)))
            pos = match.end()
        self._text(text[pos:], pieces)
        marks = [i for i, (is_mark, _) in enumerate(pieces) if is_mark]
        if not marks:
            return "".join(html for _, html in pieces)
        if len(marks) % 2:
            raise Fallback
        out: list[str] = []
        for i, (is_mark, html) in enumerate(pieces):
            if is_mark:
                opening = marks.index(i) % 2 == 0
                if opening:
                    after = pieces[i + 1][1] if i + 1 < len(pieces) else ""
                    if not after or pieces[i + 1][0] or after != after.lstrip():
                        raise Fallback
                else:
                    before = pieces[i - 1][1]
                    if before != before.rstrip():
                        raise Fallback
                out.append("<strong>" if opening else "</strong>")
            else:
                out.append(html)
        return "".join(out)

    def _text(self, text: str, pieces: list[tuple[bool, str]]) -> None:
        # Only `**` pairs count; a lone `*`, `***` or a bracket outside a link fall back.
        if "[" in text or "]" in text or "<" in text or "_" in text:
            raise Fallback
        if "*" not in text:
            if text:
                pieces.append((False, _escape_text(text)))
            return
        parts = text.split("**")
        if any("*" in part for part in parts):
            raise Fallback
        for j, part in enumerate(parts):
            if j:
                pieces.append((True, ""))
            if part:
                pieces.append((False, _escape_text(part)))

    def _atom(self, match: re.Match[str], in_link: bool) -> str:
        tag = match.group("tag")
        if tag is not None:
            name = _TAG_NAME.match(tag)
            if (
                name is None
                or name.group(1).lower() in self.block_level
                or "@" in tag
                or "[" in tag
                or "]" in tag
                or "markdown" in tag.lower()
                or _AUTOLINK.match(tag)
            ):
                raise Fallback
            self.tags.append(tag)
            return tag
        if in_link:
            raise Fallback
        label, url = match.group("text"), match.group("url")
        if label != label.strip():
            raise Fallback
        inner = self.inline(label, in_link=True)
        # The target is resolved once the whole table is known to render (`resolve`):
        # mkdocs warns about a target it cannot find, and a table that falls back gets
        # its links resolved (and warned about) by Python-Markdown's rendering instead.
        self.urls.append(url)
        return f'<a href="\x00{len(self.urls) - 1}\x00">{inner}</a>'

    def resolve(self, table_html: str) -> str:
        """`table_html` with the targets of its links put in, as mkdocs rewrites them."""
        if not self.urls:
            return table_html
        hrefs = [_escape_href(self.link(url)) for url in self.urls]
        self.urls.clear()
        return _URL_SLOT.sub(lambda match: hrefs[int(match.group(1))], table_html)


def _split_row(row: str) -> list[str]:
    # Python-Markdown's `_split_row` for a bordered row without backticks or backslashes.
    if row.startswith("|"):
        row = row[1:]
    row = _END_BORDER.sub("", row)
    return row.split("|")


def _alignments(separator: list[str]) -> list[str | None]:
    align: list[str | None] = []
    for cell in separator:
        cell = cell.strip(" ")
        if cell.startswith(":") and cell.endswith(":"):
            align.append("center")
        elif cell.startswith(":"):
            align.append("left")
        elif cell.endswith(":"):
            align.append("right")
        else:
            align.append(None)
    return align


def render_table(lines: list[str], renderer: _Renderer) -> str | None:
    """The HTML Python-Markdown writes for the table block `lines` (each starting with
    `|`), None when the block is not a table, `Fallback` when it holds unsupported text."""
    rows = [line.strip(" ") for line in lines]
    if len(rows) < 2:
        return None
    header = _split_row(rows[0])
    separator = _split_row(rows[1])
    if len(separator) != len(header) or not set("".join(separator)) <= _SEPARATOR_CHARS:
        return None
    align = _alignments(separator)
    styles = [f' style="text-align: {a};"' if a else "" for a in align]
    out = ["<table>\n<thead>\n"]
    out.append(_row(header, "th", styles, renderer))
    out.append("</thead>\n<tbody>\n")
    if len(rows) == 2:
        out.append("<tr>\n" + "".join("<td></td>\n" for _ in align) + "</tr>\n")
    for row in rows[2:]:
        out.append(renderer.row(row, "td", styles))
    out.append("</tbody>\n</table>")
    return "".join(out)


def _row(cells: list[str], tag: str, styles: list[str], renderer: _Renderer) -> str:
    out = ["<tr>\n"]
    for i, style in enumerate(styles):
        text = cells[i].strip(" ") if i < len(cells) else ""
        out.append(f"<{tag}{style}>{renderer.inline(text) if text else ''}</{tag}>\n")
    out.append("</tr>\n")
    return "".join(out)


@dataclass
class PageTables:
    """The tables taken out of one page's Markdown: their HTML, their Markdown source (for
    a placeholder that lands in raw HTML), and the inline tags they hold."""

    token: str
    html: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)


def _is_blank(line: str) -> bool:
    return not line.strip(" ")


def take_tables(
    markdown: str,
    link: Callable[[str], str],
    block_level: Iterable[str],
    rows: RowMemo | None = None,
) -> tuple[str, PageTables]:
    """`markdown` with each table it renders replaced by a placeholder paragraph, and the
    tables. A table counts when its block starts and ends at blank lines (or the page's
    ends), every line of it starts with `|` in the first column and its cells stay within
    the supported part of Markdown."""
    # A random word per page: spec text on the page cannot spell it.
    tables = PageTables(token=f"rooflinectable{secrets.token_hex(8)}n")
    if "|" not in markdown or any(mark in markdown for mark in _PAGE_REFUSED):
        return markdown, tables
    lines = markdown.split("\n")
    out: list[str] = []
    renderer = _Renderer(link=link, block_level=frozenset(block_level), rows=rows)
    i, count = 0, len(lines)
    while i < count:
        line = lines[i]
        if not line.startswith("|") or (i > 0 and not _is_blank(lines[i - 1])):
            out.append(line)
            i += 1
            continue
        end = i
        while end < count and not _is_blank(lines[end]):
            end += 1
        block = lines[i:end]
        html = None
        if all(row.startswith("|") for row in block) and not any(
            _REFUSED.search(row) for row in block
        ):
            tags_before = len(renderer.tags)
            try:
                html = render_table(block, renderer)
            except Fallback:
                html = None
            if html is None:
                del renderer.tags[tags_before:]
                renderer.urls.clear()
            else:
                html = renderer.resolve(html)
        if html is None:
            out.extend(block)
        else:
            out.append(f"{tables.token}{len(tables.html)}")
            tables.html.append(html)
            tables.sources.append("\n".join(block))
        i = end
    tables.tags = renderer.tags
    if not tables.html:
        return markdown, tables
    return "\n".join(out), tables


def put_tables(page_html: str, tables: PageTables) -> str:
    """`page_html` with each placeholder paragraph replaced by its table. A placeholder that
    Markdown did not make a paragraph (it stood inside raw HTML) gets its Markdown source
    back, as raw HTML keeps it."""
    if not tables.html:
        return page_html
    token = re.escape(tables.token)

    def table(match: re.Match[str]) -> str:
        return tables.html[int(match.group(1))]

    def source(match: re.Match[str]) -> str:
        return tables.sources[int(match.group(1))]

    page_html = re.sub(rf"<p>{token}(\d+)</p>", table, page_html)
    return re.sub(rf"{token}(\d+)", source, page_html)


def cached_links(rewriter: Any) -> Callable[[str], str]:
    """`rewriter.path_to_url`, remembered per URL; a URL left as written (external, or not
    found, which mkdocs warns about) is asked again each time, so each use warns."""
    cache: dict[str, str] = {}

    def link(url: str) -> str:
        found = cache.get(url)
        if found is not None:
            return found
        new: str = rewriter.path_to_url(url)
        if new != url:
            cache[url] = new
        return new

    return link


def register_anchors(page: Page, tables: PageTables, rewriter: Any) -> None:
    """Tell mkdocs' anchor validation what the rendered tables hold: the ids they declare
    and the links to anchors they make (as its own rendering would have)."""
    if page.present_anchor_ids is not None and tables.tags:
        page.present_anchor_ids |= anchor_ids(tables.tags)
    links = getattr(rewriter, "links_to_anchors", None)
    if page.links_to_anchors is not None and links:
        for target, anchors in links.items():
            mine = page.links_to_anchors.setdefault(target, {})
            for anchor, url in anchors.items():
                mine.setdefault(anchor, url)


class FastTables:
    """The plugin's use of this module: take a page's tables out of its Markdown (in
    `on_page_markdown`), put them into its HTML (in `on_page_content`)."""

    def __init__(self) -> None:
        self._pages: dict[str, tuple[PageTables, Any]] = {}
        self._block_level: frozenset[str] | None = None

    def take(
        self,
        markdown: str,
        page: Page,
        config: MkDocsConfig,
        files: Files,
        rows: RowMemo | None = None,
    ) -> str:
        """`markdown` (part of `page`) with its renderable tables replaced by placeholders;
        unchanged when the configured extensions or this mkdocs are not the known ones.
        `rows` keeps rendered rows for later builds (`serve`)."""
        if not extensions_supported(config):
            return markdown
        rewriter = page_link_rewriter(page.file, files, config)
        if rewriter is None:
            return markdown
        if self._block_level is None:
            self._block_level = block_level_tags()
        taken, tables = take_tables(markdown, cached_links(rewriter), self._block_level, rows)
        if tables.html:
            self._pages[page.file.src_uri] = (tables, rewriter)
        return taken

    def put(self, page_html: str, page: Page) -> str:
        """`page_html` with the tables taken from `page` put back, and their anchors and
        links to anchors told to mkdocs' validation."""
        entry = self._pages.pop(page.file.src_uri, None)
        if entry is None:
            return page_html
        tables, rewriter = entry
        register_anchors(page, tables, rewriter)
        return put_tables(page_html, tables)
