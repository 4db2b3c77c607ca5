"""The search sections of rooflinec's pages, found without html.parser: material's entries.

mkdocs-material's search plugin cuts a page's HTML into sections with its `Parser`
(`html.parser`); `rooflinec.site.fast_search.search_sections` must find the very same
sections (ids, title and text parts, exclusions) for the HTML rooflinec writes, and refuse
(`Fallback`) whatever it does not reproduce, so material's parser indexes that page. The
built site's `search/search_index.json` is also in the site golden (tests/test_goldens.py).
"""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from material.plugins.search.plugin import Parser, SearchIndex, SearchPlugin
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import BasePlugin

from rooflinec.cli.main import main
from rooflinec.site.fast_search import Fallback, FastSearch, RowMemo, search_sections
from rooflinec.site.mkdocs_compat import material_search_index
from rooflinec.site.plugin import RooflinecPlugin
from rooflinec.site.session import Bounded
from tests.specfactory import BUNDLED


def _material(content: str) -> list[tuple[Any, ...]]:
    parser = Parser()
    parser.feed(content)
    parser.close()
    return [(s.el.tag, s.id, s.title, s.text, s.is_excluded(), s.depth) for s in parser.data]


def _fast(content: str, rows: RowMemo | None = None) -> list[tuple[Any, ...]]:
    return [
        (s.tag, s.id, s.title, s.text, s.is_excluded(), s.depth)
        for s in search_sections(content, rows)
    ]


def _rows() -> Bounded[str, tuple[str, ...]]:
    """Table rows' text parts kept between builds, as a `serve` session keeps them."""
    return Bounded(100_000)


def _page(content: str, **meta: Any) -> Any:
    """What the search index reads of a page."""
    return SimpleNamespace(content=content, meta=dict(meta), toc=[], url="p.html", title="Page")


def _material_entries(page: Any) -> list[dict[str, Any]]:
    index = SearchIndex()
    index.add_entry_from_context(page)
    return index.entries


def _fast_entries(page: Any) -> list[dict[str, Any]]:
    index = SearchIndex()
    for section in search_sections(page.content):
        if not section.is_excluded():
            index.create_entry_for_section(section, page.toc, page.url, page)
    return index.entries


Seen = tuple[Any, str, dict[str, Any], bool]


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> list[Seen]:
    """Every page rooflinec generates for the bundled catalog's site, as the search plugin
    saw it: (page, its HTML, its meta, whether rooflinec indexed it: its `before` left
    the page's sections pending)."""
    seen: list[Seen] = []
    before = FastSearch.before

    def recording(self: FastSearch, page: Any, config: MkDocsConfig) -> None:
        content, meta = page.content, dict(page.meta)
        before(self, page, config)
        seen.append((page, content, meta, self.pending is not None))

    out = tmp_path_factory.mktemp("site") / "site"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(FastSearch, "before", recording)
        code = main(["build", "--specs", str(BUNDLED), "--out", str(out)], out=io.StringIO())
    assert code == 0
    return seen


def test_generated_pages_take_the_fast_path(indexed: list[Seen]) -> None:
    """Every generated page of the bundled site (device pages and their audit trails,
    kernels, models, comparison, sources ...) and the home page is indexed by rooflinec:
    none is refused (176 pages of 179 when this was written; the other three are
    hand-written and left to material)."""
    fast = [page.file.src_uri for page, _content, _meta, taken in indexed if taken]
    assert len(indexed) > 150
    assert len(fast) == len(indexed)
    assert "index.md" in fast and "devices/nvidia-h100-sxm.md" in fast


def test_generated_pages_give_materials_sections(indexed: list[Seen]) -> None:
    """For every page indexed, the sections equal those of material's parser, and the
    index entries made from them equal material's own (titles, texts, locations)."""
    rows = _rows()
    for page, content, meta, _taken in indexed:
        expected_sections = _material(content)
        assert _fast(content) == expected_sections, page.file.src_uri
        # With table rows kept, as in `serve`: the first time, and from the kept rows.
        assert _fast(content, rows) == expected_sections, page.file.src_uri
        assert _fast(content, rows) == expected_sections, page.file.src_uri
        stub = SimpleNamespace(
            content=content, meta=meta, toc=page.toc, url=page.url, title=page.title
        )
        expected = _material_entries(stub)
        assert _fast_entries(stub) == expected, page.file.src_uri
        assert expected and expected[0]["location"] == page.url


def test_entries_of_a_small_page() -> None:
    """A heading-less preface, a page title from the meta, headings with ids (the
    permalink's ¶ left out of the title), kept tags, entities and whitespace, as material
    indexes them: even the blank `<li> </li>` stays, as material drops an empty element
    only when nothing but blanks follows the section's first opening tag of its name."""
    content = (
        "<p>Intro &amp; more</p>\n"
        '<h2 id="peak">Peak <code>bf16</code><a class="headerlink" href="#peak">&para;</a></h2>\n'
        "<p>1 &lt; 2\n<strong>bold</strong></p>\n<ul>\n<li>a</li>\n<li> </li>\n</ul>\n"
        '<table><tr><td>x</td><td style="text-align:right">9 &gt; 8</td></tr></table>'
    )
    page = _page(content, title="Device")
    assert _fast_entries(page) == [
        {"location": "p.html", "title": "Device", "text": "<p>Intro &amp; more</p>"},
        {
            "location": "p.html#peak",
            "title": "Peak <code>bf16</code>",
            "text": "<p>1 &lt; 2 bold</p> <ul> <li>a</li> <li> </li> </ul> x9 &gt; 8",
        },
    ]
    assert _fast_entries(page) == _material_entries(_page(content, title="Device"))


@pytest.mark.parametrize(
    "content",
    [
        "<p>a<!-- comment -->b</p>",
        "<!DOCTYPE html><p>a</p>",
        "<?xml version='1.0'?><p>a</p>",
        "<p><![CDATA[x]]></p>",
        "<p>1 < 2</p>",
        "<p>a <3</p>",
        "<a href=x>a</a>",
        '<a href = "x">a</a>',
        '<a href="x"title="y">a</a>',
        "<p>a</p foo>",
        "<p>a</ p>",
        "<script>if (a < b) {}</script>",
        '<script>a = "<p>x</p>";</script><p>t</p>',
        "<script>var a = 1;",
        "<textarea><p>a</p></textarea>",
        "<title>a</title>",
        # material's parser raises ValueError here: the inner </div> ends the exclusion,
        # and </p> looks for a "<p>" that was never written
        "<div data-search-exclude><p>a<div>b</div>c</p></div>",
    ],
)
def test_outside_the_grammar_falls_back(content: str) -> None:
    """Comments, declarations, processing instructions, CDATA, a stray `<`, unquoted or
    spaced attribute values, odd end tags, raw-text elements with `<` or without an end,
    and a step material's parser would fail on: refused, for material to index."""
    with pytest.raises(Fallback):
        search_sections(content)


@pytest.mark.parametrize(
    "content",
    [
        "<p>a",
        "</p>text</div>",
        "<P>Upper <CODE>case</CODE></P>",
        "<br/><hr /><img src='x.svg' alt=\"a &amp; b\"><span/>",
        "<svg><path d='M0 0'/><circle r=\"1\" /></svg>",
        "<div data-search-exclude><p>hidden</p></div><div><p>shown</p></div>",
        "<div data-search-exclude><div>in</div><p>after the inner div</p></div>",
        '<div class="linenodiv"><pre>1\n2</pre></div><pre>code\n  here</pre>',
        '<h2 id="a" data-search-exclude>hidden</h2><p>t</p><h2 id="b">b</h2><p>u</p>',
        '<h3 id="first">not h1</h3><p>x</p>',
        '<h1>no id</h1><h1 id="one">One</h1><h2 id="two">Two</h2>',
        '<div><h2 id="in">In</h2><p>x</p></div><p>after</p>',
        '<script type="application/json">{"a": "&amp;"}</script><style>p{}</style><p>t</p>',
        "<object><p>o</p></object><p>t</p>",
        "<p>  </p><p>\n</p><p><code> </code></p>",
        '<h2 id="x&amp;y" class="a">T &lt;b&gt;</h2>',
        "<ul><li><p>a</p></li><li></li></ul><p>x</p><p></p>",
        "<pre><code>a\n\n  b</code></pre>  \n\n",
        "<pre><code>a\n<span>\n</span>  \n<span> </span></code></pre>",
        '<a class="headerlink" href="#">¶ <h2 id="h">in link</h2></a>',
        "<p>trailing &amp text &",
        "",
        "only text &amp; no tags\n",
        "lead\n<p>x</p>tail",
        '<script>{"a": 1}</script>after<style>p{}</style>',
    ],
)
def test_edge_cases_match_material(content: str) -> None:
    """Odd but well-formed HTML within the grammar: the same sections as material's."""
    assert _fast(content) == _material(content)


# The pieces real pages are made of, and a few odd ones.
_TEXTS = st.sampled_from(
    [
        "a",
        "Peak",
        " ",
        "\n",
        "  \n ",
        "x y",
        "1 &lt; 2",
        "&gt;",
        "&amp;",
        "&para;",
        "&quot;q&quot;",
        "&#x27;",
        "&#8212;",
        "·",
        "¶",
        "9\n8",
        "&amp",
        "&unknown;",
    ]
)
_TAGS = st.sampled_from(
    [
        "p", "code", "pre", "li", "ul", "ol", "sub", "sup", "div", "span", "a", "strong",
        "em", "table", "thead", "tbody", "tr", "td", "th", "details", "summary", "figure",
        "figcaption", "math", "mrow", "mi", "mo", "h1", "h2", "h3", "h4", "object", "small",
        "P", "Code", "H2",
    ]
)  # fmt: skip
_ATTRS = st.sampled_from(
    [
        "",
        ' id="s1"',
        ' id="s2"',
        " id='q&amp;r'",
        ' class="headerlink"',
        ' class="linenodiv"',
        " data-search-exclude",
        ' data-search-exclude=""',
        ' style="text-align:right"',
        ' href="#x" title="Permanent link"',
        ' ID="up"',
        ' class="a" class="headerlink"',
    ]
)
_VOIDS = st.sampled_from(["<br>", "<br/>", '<img src="c.svg" alt="a &gt; b">', "<hr />"])


@st.composite
def _html(draw: st.DrawFn) -> str:
    parts: list[str] = []
    open_tags: list[str] = []
    for _ in range(draw(st.integers(0, 40))):
        choice = draw(st.integers(0, 9))
        if choice <= 2:
            parts.append(draw(_TEXTS))
        elif choice <= 5:
            tag = draw(_TAGS)
            parts.append(f"<{tag}{draw(_ATTRS)}>")
            open_tags.append(tag)
        elif choice <= 7 and open_tags:
            parts.append(f"</{open_tags.pop()}>")
        elif choice == 8:
            parts.append(draw(_VOIDS))
        else:  # a stray or self-closed element, or a script
            parts.append(
                draw(
                    st.sampled_from(
                        ["</p>", "</li>", "<span/>", "</h2>", '<script>{"a": 1}</script>']
                    )
                )
            )
    if draw(st.booleans()):
        parts.extend(f"</{tag}>" for tag in reversed(open_tags))
    return "".join(parts)


@settings(max_examples=400, deadline=None)
@given(_html())
def test_random_html_matches_material(content: str) -> None:
    """Random HTML of the tags, attributes, entities and whitespace real pages hold:
    the same sections as material's parser, or a refusal where its parser fails."""
    try:
        expected = _material(content)
    except ValueError:  # material's parser fails on it: rooflinec must not index it
        with pytest.raises(Fallback):
            search_sections(content)
        return
    assert _fast(content) == expected, content
    rows = _rows()
    assert (_fast(content, rows), _fast(content, rows)) == (expected, expected), content


@pytest.mark.parametrize(
    ("before", "row"),
    [
        ("<table><tbody>", "<tr><td>a</td><td> </td></tr>"),
        ("<p>x </p> <table>", "<tr> <td>a</td></tr>"),
        ("<h2>no id <table>", "<tr><td>in a heading</td></tr>"),
        ('<h2 id="h">H</h2><table>', "<tr><td><h2>t</h2></td></tr>"),
        ("<table>", "<tr><td><code>c</code></td></tr>"),
        ("<table>", "<tr><td><span>open</td></tr>"),
        ("<div data-search-exclude><table>", "<tr><td>skipped</td></tr>"),
        ("<pre><table>", "<tr><td>a\n b</td></tr>"),
    ],
)
def test_a_kept_row_is_used_where_it_reads_the_same(before: str, row: str) -> None:
    """A row's parts kept from one place are used in another only where they are the
    same: after blanks or text, not inside a heading, a skipped element or `pre`, never
    for a row with a heading, a kept tag or an unclosed element."""
    rows = _rows()
    for content in (f"<table>{row}</table>", f"{before}{row}</table>after"):
        expected = _material(content)
        assert (_fast(content, rows), _fast(content, rows)) == (expected, expected), content


def test_meta_restored_and_entries_added() -> None:
    """Around material's hook the page is marked excluded, then its meta is restored as
    it was (the same object) and its entries added, with the page's search boost."""
    boost = {"boost": 2}
    page = _page('<h1 id="t">T</h1><p>x</p><h2 id="s">S</h2><p>y</p>', search=boost)
    fast = FastSearch((lambda: None, lambda: None))
    fast.index, fast.resolved = SearchIndex(), True
    fast.before(page, MkDocsConfig())
    assert page.meta["search"] == {"exclude": True}
    assert _material_entries(page) == []  # what material's own hook does now
    fast.after(page)
    assert page.meta == {"search": boost} and page.meta["search"] is boost
    assert fast.index.entries == [
        {"location": "p.html", "title": "T", "text": "<p>x</p>", "boost": 2},
        {"location": "p.html#s", "title": "S", "text": "<p>y</p>", "boost": 2},
    ]
    assert fast.index.entries == _material_entries(_page(page.content, search=boost))

    plain = _page("<p>z</p>")
    fast.before(plain, MkDocsConfig())
    fast.after(plain)
    assert plain.meta == {}


@pytest.mark.parametrize(
    "content, meta",
    [("<p>a<!-- c --></p>", {}), ("<p>a</p>", {"search": {"exclude": True}})],
)
def test_refused_or_excluded_page_left_to_material(content: str, meta: dict[str, Any]) -> None:
    """A page outside the grammar, or one its meta excludes, is left as it is."""
    page = _page(content, **meta)
    fast = FastSearch((lambda: None, lambda: None))
    fast.index, fast.resolved = SearchIndex(), True
    fast.before(page, MkDocsConfig())
    assert page.meta == meta and fast.pending is None
    fast.after(page)
    assert fast.index.entries == [] and page.meta == meta


class _Between(BasePlugin):  # type: ignore[type-arg]
    """Another plugin with a `page_context` handler at material's priority."""

    def on_page_context(self, context: Any, /, **kwargs: Any) -> None:
        return None


def _config(tmp_path: Path, search: object = "search") -> MkDocsConfig:
    (tmp_path / "docs").mkdir(exist_ok=True)
    config = MkDocsConfig()
    config.load_dict(
        {
            "site_name": "t",
            "docs_dir": str(tmp_path / "docs"),
            "site_dir": str(tmp_path / "site"),
            "theme": {"name": "material"},
            "plugins": [search, "rooflinec"],
        }
    )
    errors, _warnings = config.validate()
    assert not errors, errors
    for plugin in config.plugins.values():
        if isinstance(plugin, SearchPlugin):
            plugin.on_config(config)
    return config


def _hooks(config: MkDocsConfig) -> tuple[Any, Any]:
    plugin = next(p for p in config.plugins.values() if isinstance(p, RooflinecPlugin))
    return plugin._search_sections, plugin._search_entries


def test_only_materials_search_right_between_the_hooks(tmp_path: Path) -> None:
    """material's enabled search plugin right between rooflinec's two hooks: its index;
    search disabled, or another handler in between: None (material indexes every page)."""
    config = _config(tmp_path)
    index = material_search_index(config, _hooks(config))
    assert isinstance(index, SearchIndex)

    disabled = _config(tmp_path, {"search": {"enabled": False}})
    assert material_search_index(disabled, _hooks(disabled)) is None

    crowded = _config(tmp_path)
    crowded.plugins["between"] = _Between()
    assert material_search_index(crowded, _hooks(crowded)) is None
