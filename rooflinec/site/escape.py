"""Making spec text inert: escaping for Markdown + HTML, JSON in script tags, a sanitiser.

Spec text arrives from pull requests and goes through three layers before it reaches a
reader, each of which would be enough on its own for the cases it covers:

1. `md` turns every character that means something to Markdown or HTML into a numeric
   character reference. Python-Markdown passes references through untouched and the
   browser shows them as the characters they stand for, so `[x](javascript:...)` stays
   text, `|` does not split a table cell, and `<script>` is never a tag. The template
   environment applies it to every `{{ ... }}` by default (`finalize`), so a template that
   forgets a filter is still safe; only `Markup` built here passes unescaped.
2. Spec text is only ever a template *variable*: it is never compiled as a template, so
   `{{ 7*7 }}` is shown, not evaluated.
3. `sanitize` runs nh3 (ammonia) over the HTML of every generated page with an allow list
   of tags, attributes, URL schemes and CSS properties. Trusted fragments that the
   sanitiser would remove (chart scripts) are swapped in only afterwards, through `Slots`.
"""

from __future__ import annotations

import functools
import html
import json
import re
from collections.abc import Iterable
from typing import Any

import nh3
from markupsafe import Markup

__all__ = [
    "Slots",
    "attr",
    "compact_html",
    "external_link",
    "md",
    "md_row",
    "sanitize",
    "script_json",
]

# Markdown punctuation (CommonMark's list plus the extensions' `|`, `~`, `=`, `^`, `:`),
# HTML's specials, and whitespace handled separately. `.` and `-` only matter at the start
# of a line (ordered/unordered lists, setext headings), which `_LEADING` handles.
_ESCAPED = "&<>\"'`*_{}[]()#+!|\\~=^:$%@"
_TABLE = {ord(c): f"&#{ord(c)};" for c in _ESCAPED}
_TABLE[ord("&")] = "&amp;"
_TABLE[ord("<")] = "&lt;"
_TABLE[ord(">")] = "&gt;"
_TABLE[ord('"')] = "&quot;"
_WHITESPACE = re.compile(r"\s+")
# A leading run of digits then `.` or `)` is an ordered list item; `-` a bullet or rule.
_LEADING = re.compile(r"^(\d+)([.)])(?=\s|$)|^([-+=])")


def md(value: Any) -> Markup:
    """`value` as inline text that is inert in Markdown and in HTML (text and attributes).

    Whitespace runs (newlines included) collapse to one space, so the text can stand in a
    table cell, a list item or an attribute. Already-trusted `Markup` is returned as is.
    """
    if isinstance(value, Markup):
        return value
    return _md_text(str(value))  # names and labels repeat across a site's pages


def md_row(cells: Iterable[Any], strong: int | None = None) -> Markup:
    """A Markdown table row of `cells`, each escaped by `md` (`Markup` kept as is), the
    cell at index `strong` in `**`: what a template's `| {{ a }} | **{{ b }}** |` writes."""
    texts = [md(c) for c in cells]
    if strong is not None:
        texts[strong] = Markup("**") + texts[strong] + Markup("**")
    return Markup("| ") + Markup(" | ").join(texts) + Markup(" |")


@functools.lru_cache(maxsize=1 << 16)
def _md_text(value: str) -> Markup:
    text = _WHITESPACE.sub(" ", value).strip()
    text = text.translate(_TABLE)
    text = _LEADING.sub(_leading, text)
    return Markup(text)


def _leading(match: re.Match[str]) -> str:
    if match.group(1) is not None:
        return f"{match.group(1)}&#{ord(match.group(2))};"
    return f"&#{ord(match.group(3))};"


def attr(value: Any) -> Markup:
    """Text for an HTML attribute value inside double quotes (trusted HTML we write)."""
    return Markup(html.escape(_WHITESPACE.sub(" ", str(value)).strip(), quote=True))


def external_link(text: Any, url: str) -> Markup:
    """A link to a source: only `https://` addresses become links; anything else is text."""
    if not url.startswith("https://") or any(c in url for c in " \t\r\n<>\"'`"):
        return md(text)
    return Markup(
        f'<a href="{attr(url)}" rel="noopener noreferrer" class="rooflinec-external">{md(text)}</a>'
    )


# --------------------------------------------------------------------------- sanitiser

_MATHML = {
    "math",
    "mrow",
    "mi",
    "mn",
    "mo",
    "mfrac",
    "msup",
    "msub",
    "msubsup",
    "mtext",
    "mspace",
}
_TAGS = (
    set(nh3.ALLOWED_TAGS)
    | {
        "details",
        "summary",
        "figure",
        "figcaption",
        "caption",
        "div",
        "span",
        "section",
        "table",
        "thead",
        "tbody",
        "tfoot",
        "tr",
        "th",
        "td",
        "colgroup",
        "col",
        "img",
        "abbr",
        "dl",
        "dt",
        "dd",
        "sup",
        "sub",
        "kbd",
        "small",
        "mark",
        "nav",
    }
    | _MATHML
)
_COMMON = {"id", "class", "title", "lang", "dir"}
_ATTRIBUTES: dict[str, set[str]] = {
    "*": _COMMON,
    "a": {"href", "rel", "download", "hreflang"},
    "img": {"src", "alt", "width", "height", "loading", "decoding"},
    "th": {"align", "style", "scope", "colspan", "rowspan"},
    "td": {"align", "style", "colspan", "rowspan"},
    "details": {"open"},
    "ol": {"start"},
    "math": {"display", "xmlns"},
    "mo": {"stretchy", "fence", "separator", "form", "lspace", "rspace"},
    "mfrac": {"linethickness"},
    "mi": {"mathvariant"},
    "div": {"data-slot"},
    "span": {"data-slot"},
}


def script_json(data: Any) -> str:
    """`data` as JSON safe inside a `<script type="application/json">` element: `<`, `>`
    and `&` are written as escapes, so no text in it can close the element or open a
    comment, whatever a spec's names hold."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def sanitize(fragment: str) -> str:
    """Remove every tag, attribute, URL scheme and style not on the allow list.

    Links may be relative (within the site), `https:` or `mailto:`; `style` keeps only
    `text-align` (what Markdown tables write). Comments are dropped.
    """
    return nh3.clean(
        fragment,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes={"https", "mailto"},
        link_rel=None,
        strip_comments=True,
        filter_style_properties={"text-align"},
    )


class Slots:
    """Trusted HTML fragments kept out of the Markdown and the sanitiser, swapped in after.

    `add` returns an empty placeholder element (which Markdown and nh3 leave alone);
    `fill` replaces each placeholder with its fragment. Spec text cannot forge a
    placeholder: it is escaped, so it cannot open a tag.
    """

    _PLACEHOLDER = re.compile(r'<(div|span) data-slot="(\d+)"></\1>')

    def __init__(self) -> None:
        self._fragments: list[str] = []

    def add(self, fragment: str, *, block: bool = True) -> Markup:
        self._fragments.append(fragment)
        tag = "div" if block else "span"
        return Markup(f'<{tag} data-slot="{len(self._fragments) - 1}"></{tag}>')

    def fill(self, page_html: str) -> str:
        def replace(match: re.Match[str]) -> str:
            index = int(match.group(2))
            return self._fragments[index] if index < len(self._fragments) else ""

        return self._PLACEHOLDER.sub(replace, page_html)

    def __len__(self) -> int:
        return len(self._fragments)


_PRESERVE = re.compile(r"(<(pre|script|textarea|style)\b.*?</\2>)", re.S | re.I)
_BETWEEN_TAGS = re.compile(r">\s+<")
_LINE_BREAKS = re.compile(r"[ \t]*\n\s*")


def compact_html(page_html: str) -> str:
    """Collapse whitespace between tags (themes indent generously), except where it is
    content: inside `pre`, `script`, `textarea` and `style`. Whitespace between tags
    renders as one space at most, so a newline keeps the layout."""
    parts = _PRESERVE.split(page_html)
    out = []
    # re.split with two groups yields: text, whole match, tag name, text, ...
    for i in range(0, len(parts), 3):
        out.append(_LINE_BREAKS.sub("\n", _BETWEEN_TAGS.sub(">\n<", parts[i])))
        if i + 1 < len(parts):
            out.append(parts[i + 1])
    return "".join(out)
