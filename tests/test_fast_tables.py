"""The tables of generated pages, rendered by rooflinec: the same bytes as Python-Markdown.

Each case renders a page through mkdocs' own `Page.render` (Python-Markdown with the
site's extensions and mkdocs' link rewriting) twice: once as written, once with the tables
taken out by `take_tables` and put back into the HTML by `put_tables`. The two HTML texts
must be equal; the cases that rooflinec renders must really be taken, and the ones it
leaves to Python-Markdown must really stay Markdown.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from rooflinec.site import fast_tables
from rooflinec.site.fast_tables import extensions_supported, put_tables, take_tables
from rooflinec.site.mkdocs_compat import block_level_tags, page_link_rewriter


def _extensions(*more: object) -> list[object]:
    # A new list each time: mkdocs' validation empties the option dicts it reads.
    return ["admonition", "attr_list", "md_in_html", "tables", {"toc": {"permalink": True}}, *more]


PAGES = ("devices/index.md", "devices/a.md", "devices/b.md", "kernels/k.md", "index.md")


def _config(
    tmp_path: Path, *, directory_urls: bool = True, extensions: list[object] | None = None
) -> MkDocsConfig:
    config = MkDocsConfig()
    config.load_dict(
        {
            "site_name": "t",
            "docs_dir": str(tmp_path / "docs"),
            "site_dir": str(tmp_path / "site"),
            "use_directory_urls": directory_urls,
            "markdown_extensions": _extensions() if extensions is None else extensions,
        }
    )
    (tmp_path / "docs").mkdir(exist_ok=True)
    errors, _warnings = config.validate()
    assert not errors, errors
    return config


def _files(config: MkDocsConfig) -> Files:
    return Files(
        [
            File(
                path,
                src_dir=None,
                dest_dir=config.site_dir,
                use_directory_urls=config.use_directory_urls,
            )
            for path in PAGES
        ]
    )


def _render(markdown: str, file: File, files: Files, config: MkDocsConfig) -> Page:
    page = Page(None, file, config)
    page.markdown = markdown
    page.render(config, files)
    return page


def both(
    markdown: str,
    config: MkDocsConfig,
    src: str = "devices/a.md",
    rows: fast_tables.RowMemo | None = None,
) -> tuple[str, str, int]:
    """(Python-Markdown's HTML, the HTML with rooflinec's tables, how many it took);
    `rows`: the rendered rows kept between calls, as a `serve` session keeps them."""
    files = _files(config)
    file = files.get_file_from_path(src)
    assert file is not None
    reference = _render(markdown, file, files, config).content or ""
    rewriter = page_link_rewriter(file, files, config)
    assert rewriter is not None
    taken, tables = take_tables(
        markdown, fast_tables.cached_links(rewriter), block_level_tags(), rows
    )
    fast = put_tables(_render(taken, file, files, config).content or "", tables)
    return reference, fast, len(tables.html)


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> MkDocsConfig:
    return _config(tmp_path_factory.mktemp("fast"))


TABLE = "| a | b |\n| --- | ---: |\n"

TAKEN = {
    "alignments": "| l | c | r | n |\n| :-- | :-: | --: | --- |\n| 1 | 2 | 3 | 4 |\n",
    "no separator dashes": "| a | b |\n|:|-|\n| 1 | 2 |\n",
    "header only": TABLE,
    "empty cells": TABLE + "|  |  |\n| x | |\n",
    "short and long rows": TABLE + "| one |\n| 1 | 2 | 3 |\n",
    "no right border": "| a | b\n| --- | ---\n| 1 | 2\n",
    "single column": "| a |\n| --- |\n| 1 |\n",
    "entities": TABLE + "| &#40;x&#41; &amp; &#124; | &eacute; &#x41; &foo; |\n",
    "greater than": TABLE + "| 3 > 2 | a>b |\n",
    "inline tags": TABLE
    + '| <code>x</code> | <span id="vendor-x"></span>X<br>Y |\n'
    + '| <sup>2</sup><mo>x</mo> | <a href="https://e.org/?a=1&amp;b=2">e</a> |\n',
    "links": TABLE
    + "| [B](b.md) | [K](../kernels/k.md#case-k) |\n"
    + "| [self](#anchor) | [index](index.md) |\n"
    + "| [ext](https://example.org/x) | [mail](mailto:a) |\n",
    "link text with markup": TABLE
    + "| [**B** &#40;b&#41;](b.md) | [<code>k</code>](../kernels/k.md) |\n",
    "strong": TABLE + "| **92.3 TFLOP/s** | a**b**c and **d** **e** |\n",
    "strong around tags and links": TABLE
    + "| **[B](b.md)** | **<span>x</span> y** |\n| **a<br>b** | x |\n",
    "unicode": TABLE + "| “quoted” – × µs ✓ | 、「」 |\n",
    "text around the table": "# T\n\nSome text.\n\n" + TABLE + "| 1 | 2 |\n\nAfter.\n",
    "two tables": TABLE + "| 1 | 2 |\n\n" + TABLE + "| 3 | 4 |\n",
    "in md_in_html div": '<div class="x" markdown="1">\n\n' + TABLE + "| 1 | 2 |\n\n</div>\n",
    "in md_in_html details": '<details class="y" markdown="1">\n<summary>S</summary>\n\n'
    + TABLE
    + "| 1 | 2 |\n\n</details>\n",
    "after an admonition": "!!! note\n\n    para\n\n" + TABLE + "| 1 | 2 |\n",
    "after a list": "- a\n- b\n\n" + TABLE + "| 1 | 2 |\n",
    "parentheses and punctuation": TABLE + "| (a) #b: c; d/e, f=g+h? 5% | ! x |\n",
}

KEPT = {
    "code span": TABLE + "| `x` | y |\n",
    "escaped pipe": TABLE + "| a \\| b | y |\n",
    "emphasis": TABLE + "| *x* | y |\n",
    "underscore": TABLE + "| _x_ | y |\n",
    "lone star": TABLE + "| a * b | y |\n",
    "strong with a space inside": TABLE + "| ** x** | y |\n",
    "triple star": TABLE + "| ***x*** | y |\n",
    "image": TABLE + "| ![a](b.png) | y |\n",
    "reference link": TABLE + "| [a][b] | y |\n\n[b]: b.md\n",
    "unbalanced bracket": TABLE + "| [a | y |\n",
    "autolink": TABLE + "| <https://example.org> | y |\n",
    "automail": TABLE + "| <a@b.org> | y |\n",
    "comment": TABLE + "| <!-- c --> | y |\n",
    "less than": TABLE + "| a < b | y |\n",
    "attribute list": TABLE + "| a {: .x } | y |\n",
    "block-level tag": TABLE + "| <div>x</div> | y |\n",
    "math, block-level to Python-Markdown": TABLE + "| <math><mi>N</mi></math> | y |\n",
    "link with a title": TABLE + '| [a](b.md "t") | y |\n',
    "link with an ampersand": TABLE + "| [a](b.md?x=1&y=2) | y |\n",
    "no blank line before": "Text\n" + TABLE + "| 1 | 2 |\n",
    "a row not starting with a pipe": TABLE + "| 1 | 2 |\n3 | 4\n",
    "indented": "- item\n\n    " + TABLE.replace("\n", "\n    ") + "| 1 | 2 |\n",
    "not a table": "| a | b |\n| x | y |\n",
    "bare ampersand": TABLE + "| AT&T | y |\n",
    "incomplete character reference": TABLE + "| &#12 x | y |\n",
    "tab": TABLE + "| a\tb | y |\n",
}


@pytest.mark.parametrize("name", sorted(TAKEN))
def test_rendered_tables_equal_python_markdown(config: MkDocsConfig, name: str) -> None:
    """Each supported table is taken out and put back as the very bytes Python-Markdown
    with mkdocs' link rewriting writes."""
    reference, fast, taken = both(TAKEN[name], config)
    assert taken >= 1
    assert fast == reference


@pytest.mark.parametrize("name", sorted(KEPT))
def test_unsupported_tables_stay_markdown(config: MkDocsConfig, name: str) -> None:
    """A table with anything outside the supported part of Markdown is left to
    Python-Markdown, and the page comes out the same."""
    reference, fast, taken = both(KEPT[name], config)
    assert taken == 0
    assert fast == reference


def test_one_table_falls_back_while_the_next_is_rendered(config: MkDocsConfig) -> None:
    """Falling back is per table."""
    reference, fast, taken = both(KEPT["code span"] + "\n" + TAKEN["links"], config)
    assert taken == 1
    assert fast == reference


def test_links_are_rewritten_as_mkdocs_does(tmp_path: Path) -> None:
    """`.md` targets become the built pages' URLs, with and without directory URLs; the
    anchor stays."""
    markdown = TABLE + "| [B](b.md) | [K](../kernels/k.md#case-k) |\n"
    for directory_urls, b_url, k_url in (
        (True, "../b/", "../../kernels/k/#case-k"),
        (False, "b.html", "../kernels/k.html#case-k"),
    ):
        reference, fast, taken = both(markdown, _config(tmp_path, directory_urls=directory_urls))
        assert taken == 1
        assert fast == reference
        assert f'<a href="{b_url}">B</a>' in fast
        assert f'<a href="{k_url}">K</a>' in fast


def test_the_table_html_is_what_python_markdown_writes(config: MkDocsConfig) -> None:
    """The exact markup: cells on their own lines, alignment as a style."""
    _, fast, _ = both("| a | b |\n| --- | ---: |\n| **1** | 2 |\n", config)
    assert fast == (
        "<table>\n<thead>\n<tr>\n<th>a</th>\n"
        '<th style="text-align: right;">b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n'
        '<td><strong>1</strong></td>\n<td style="text-align: right;">2</td>\n</tr>\n'
        "</tbody>\n</table>"
    )


def test_a_missing_target_warns_as_mkdocs_does(
    config: MkDocsConfig, caplog: pytest.LogCaptureFixture
) -> None:
    """A link to a page that does not exist is left as written and mkdocs warns, once per
    use, as it does for Python-Markdown's links."""
    markdown = TABLE + "| [x](missing.md) | [x](missing.md) |\n"
    with caplog.at_level(logging.WARNING, logger="mkdocs"):
        reference, _, _ = both(markdown, config)
        warned = [r for r in caplog.records if "missing.md" in r.getMessage()]
    # Python-Markdown's render warns twice, the fast path twice (its render has no links).
    assert len(warned) == 4
    assert '<a href="missing.md">x</a>' in reference


def test_a_placeholder_inside_raw_html_gets_its_markdown_back(config: MkDocsConfig) -> None:
    """Inside an HTML block without `markdown="1"` Python-Markdown keeps the table as text;
    so does the fast path."""
    markdown = "<div>\n\n" + TABLE + "| 1 | 2 |\n\n</div>\n"
    reference, fast, taken = both(markdown, config)
    assert taken == 1
    assert fast == reference
    assert "| 1 | 2 |" in fast


def test_pages_with_a_code_fence_keep_their_tables(config: MkDocsConfig) -> None:
    """A fence may hold a table as code: such a page is left to Python-Markdown."""
    markdown = "```\n\n" + TABLE + "| 1 | 2 |\n\n```\n\n" + TABLE + "| 3 | 4 |\n"
    reference, fast, taken = both(markdown, config)
    assert taken == 0
    assert fast == reference


def test_unknown_extensions_keep_every_table(tmp_path: Path) -> None:
    """`smarty` changes quotes and dashes in cells: with it configured nothing is taken."""
    assert extensions_supported(_config(tmp_path))
    assert not extensions_supported(_config(tmp_path, extensions=_extensions("smarty")))
    assert not extensions_supported(
        _config(
            tmp_path,
            extensions=["admonition", "md_in_html", {"tables": {"use_align_attribute": True}}],
        )
    )


def test_ids_in_tables_still_count_as_anchors(config: MkDocsConfig) -> None:
    """A `<span id>` in a cell is an anchor mkdocs' validation knows, and a link to an
    anchor from a cell is one it checks."""
    files = _files(config)
    file = files.get_file_from_path("devices/a.md")
    assert file is not None
    plugin_tables = fast_tables.FastTables()
    page = Page(None, file, config)
    markdown = TABLE + '| <span id="vendor-x"></span>X | [K](../kernels/k.md#case-k) |\n'
    page.markdown = plugin_tables.take(markdown, page, config, files)
    assert "vendor-x" not in page.markdown
    page.render(config, files)
    plugin_tables.put(page.content or "", page)
    assert page.present_anchor_ids is not None and "vendor-x" in page.present_anchor_ids
    assert page.links_to_anchors is not None
    kernel = files.get_file_from_path("kernels/k.md")
    assert page.links_to_anchors[kernel] == {"case-k": "../kernels/k.md#case-k"}  # type: ignore[index]


_WORDS = st.sampled_from(
    [
        "a",
        "x y",
        "92.3",
        "TFLOP/s",
        " ",
        "&#40;",
        "&#124;",
        "&amp;",
        "&",
        ">",
        "<",
        "*",
        "**",
        "_",
        "[",
        "]",
        "(",
        ")",
        "!",
        "#",
        ":",
        "“",
        "µ",
        "<br>",
        "<code>",
        "</code>",
        '<span id="s"></span>',
        "[B](b.md)",
        "[K](../kernels/k.md#case-k)",
        "[self](#a)",
        "[**b**](b.md)",
        "`",
        "\\",
        "{",
        "&#12",
        "&x",
        "<b>",
    ]
)
# `<![` crashes mkdocs' own HTML scan of the page, with or without the fast path.
_CELLS = st.lists(_WORDS, max_size=6).map("".join).filter(lambda c: "|" not in c and "<!" not in c)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    header=st.lists(_CELLS, min_size=1, max_size=3),
    body=st.lists(st.lists(_CELLS, min_size=1, max_size=3), max_size=3),
    align=st.lists(st.sampled_from(["---", ":--", "--:", ":-:"]), min_size=3, max_size=3),
    around=st.sampled_from(
        [
            ("# T\n\n", "\nEnd.\n"),
            ('<div markdown="1">\n\n', "\n</div>\n\nAfter *x*.\n"),
            ("Intro *x*\n\n", "\n<div>\nraw *x*\n</div>\n\nPara *y* <b>z</b>\n"),
        ]
    ),
)
def test_any_table_of_simple_cells_equals_python_markdown(
    config: MkDocsConfig,
    header: list[str],
    body: list[list[str]],
    align: list[str],
    around: tuple[str, str],
) -> None:
    """Whatever the cells hold, taken or not, and whatever is around the table (unclosed
    tags in cells and HTML blocks after it included), the page's HTML is Python-Markdown's."""
    width = len(header)
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align[:width]) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    reference, fast, _ = both(around[0] + "\n".join(lines) + "\n" + around[1], config)
    assert fast == reference


_SAFE_WORDS = st.sampled_from(
    [
        *("a", "x y", " ", "&#40;", "&amp;", "&", ">", "**", "(", ")", "#", "µ"),
        *("<br>", "<code>", "</code>", '<span id="s"></span>'),
        *("[B](b.md)", "[K](../kernels/k.md#case-k)", "[**b**](b.md)"),
    ]
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=st.lists(st.lists(_SAFE_WORDS, max_size=5).map("".join), min_size=2, max_size=8))
def test_tables_of_supported_cells_equal_python_markdown(
    config: MkDocsConfig, rows: list[str]
) -> None:
    """Cells made only of what the fast path supports (a `**` may still be unpaired, and
    falls back): taken or not, Python-Markdown's HTML."""
    lines = ["| h | " + rows[0] + " |", "| --- | --: |"]
    lines += [f"| {i} | {row} |" for i, row in enumerate(rows[1:])]
    reference, fast, _ = both("\n".join(lines) + "\n", config)
    assert fast == reference


def test_a_table_that_falls_back_resolves_its_links_only_once(
    config: MkDocsConfig, caplog: pytest.LogCaptureFixture
) -> None:
    """The links of a table left to Python-Markdown are not also resolved by the fast
    path: mkdocs warns about a missing target once per use, as without it."""
    files = _files(config)
    file = files.get_file_from_path("devices/a.md")
    assert file is not None
    rewriter = page_link_rewriter(file, files, config)
    with caplog.at_level(logging.WARNING, logger="mkdocs"):
        _, tables = take_tables(
            KEPT["code span"].replace("y", "[x](missing.md)"),
            fast_tables.cached_links(rewriter),
            block_level_tags(),
        )
    assert not tables.html
    assert not [r for r in caplog.records if "missing.md" in r.getMessage()]


def test_rows_kept_between_builds_render_as_python_markdown(config: MkDocsConfig) -> None:
    """With rendered rows kept (`serve`), every table renders as Python-Markdown's the first
    time and again from the kept rows, on a page in another folder (its links resolved for
    that page) and with a row of links after others (their slots renumbered)."""
    from rooflinec.site.session import Bounded

    rows: Bounded[tuple[str, str, tuple[str, ...]], fast_tables.RenderedRow] = Bounded(4096)
    for src in ("devices/a.md", "index.md", "devices/a.md"):
        for name in sorted(TAKEN):
            reference, fast, _ = both(TAKEN[name], config, src, rows)
            assert (name, src, fast) == (name, src, reference)
    links = TAKEN["links"]
    shuffled = TABLE + "".join(reversed(links[len(TABLE) :].splitlines(keepends=True)))
    reference, fast, taken = both(shuffled + "\n" + links, config, "index.md", rows)
    assert (2, reference) == (taken, fast)
    assert 0 < len(rows)
