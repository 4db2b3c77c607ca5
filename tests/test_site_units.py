"""The site's parts on their own: escaping, sanitising, MathML, chart specs, the plugin."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import markdown
import pytest
from markupsafe import Markup

from rooflinec.pipeline import checked
from rooflinec.site import charts
from rooflinec.site.escape import Slots, compact_html, external_link, md, sanitize
from rooflinec.site.mathml import latex_to_mathml
from rooflinec.site.pages.audit import audit_layout
from rooflinec.site.pages.common import chunks_by_size, chunks_of, environment
from rooflinec.site.pages.devices import device_page
from rooflinec.site.pages.home import home_section
from rooflinec.site.pages.listing import pages as site_pages
from rooflinec.site.pages.model import Site, split_pages

REPO = Path(__file__).resolve().parents[1]
EXTENSIONS = ["tables", "attr_list", "md_in_html", "admonition", "toc"]


def _html(text: str) -> str:
    return markdown.markdown(text, extensions=EXTENSIONS)


@pytest.fixture(scope="module")
def compiled() -> Any:
    result, diagnostics, _ = checked(REPO / "specs")
    assert result is not None, diagnostics
    return result


@pytest.mark.parametrize(
    "text",
    [
        "[x](javascript:alert(1))",
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "*bold* _em_ `code` **strong**",
        "# heading",
        "1. list",
        "- bullet",
        "> quote",
        "text {: onclick=alert(1) }",
        "<https://example.com>",
        "a | b | c",
        "&amp; &lt;",
        "![img](https://example.com/x.png)",
    ],
)
def test_md_text_renders_as_itself(text: str) -> None:
    """Escaped text goes through Markdown and comes out as the same characters, inert."""
    html = _html(f"{md(text)}")
    assert "<a" not in html and "<img" not in html and "<script" not in html
    assert "<em>" not in html and "<strong>" not in html and "<code>" not in html
    assert "<h1" not in html and "<ol>" not in html and "<ul>" not in html
    assert "onclick" not in html.split(">", 1)[0]
    from html import unescape

    assert unescape(html.removeprefix("<p>").removesuffix("</p>")) == text


def test_md_keeps_a_table_cell_whole() -> None:
    """A `|` in a cell is part of the cell, not a new column."""
    html = _html(f"| a | b |\n| --- | --- |\n| {md('x | y')} | z |\n")
    assert html.count("<td>") == 2
    assert "x | y" in html.replace("&#124;", "|")


def test_md_collapses_whitespace_and_passes_markup() -> None:
    assert md("a\n\n  b") == "a b"
    assert md(Markup("<b>x</b>")) == Markup("<b>x</b>")


def test_templates_escape_every_value_by_default() -> None:
    """`{{ x }}` escapes for Markdown and HTML; spec text is never a template."""
    env = environment()
    out = env.from_string("{{ x }}").render(x="{{ 7*7 }} <b>[a](b)</b>")
    assert "49" not in out and "<b>" not in out and "[a](b)" not in out


def test_only_https_sources_become_links() -> None:
    assert "<a href=" in external_link("t", "https://example.com/a")
    assert "<a" not in external_link("t", "javascript:alert(1)")
    assert "<a" not in external_link("t", "http://example.com")
    assert "<a" not in external_link("t", 'https://e.com/"onmouseover=x')


def test_sanitize_keeps_structure_and_drops_active_content() -> None:
    html = (
        '<h2 id="x" class="y">T<a class="headerlink" href="#x">¶</a></h2>'
        '<table><tr><td style="text-align: right; color: red">1</td></tr></table>'
        '<div data-slot="0"></div><script>alert(1)</script><a href="javascript:x">a</a>'
        '<img src="a.svg" onerror="x()"><math><mi>M</mi></math>'
    )
    clean = sanitize(html)
    assert 'id="x"' in clean and 'class="headerlink"' in clean
    assert "text-align" in clean and "color" not in clean
    assert 'data-slot="0"' in clean and "<math>" in clean
    assert "<script" not in clean and "javascript:" not in clean and "onerror" not in clean


def test_slots_swap_trusted_fragments_in_after_sanitising() -> None:
    slots = Slots()
    marker = slots.add('<script type="application/json">{}</script>')
    html = sanitize(f"<p>before</p>{marker}<p>after</p>")
    assert slots.fill(html) == (
        '<p>before</p><script type="application/json">{}</script><p>after</p>'
    )


def test_compact_html_keeps_preformatted_text() -> None:
    html = "<div>\n    <p>a</p>\n\n  </div><pre>  x\n    y</pre><script> a\n  b </script>"
    expected = "<div>\n<p>a</p>\n</div><pre>  x\n    y</pre><script> a\n  b </script>"
    assert compact_html(html) == expected


@pytest.mark.parametrize(
    ("latex", "expected"),
    [
        ("2 M N K", "<mn>2</mn>"),
        (r"w \left(M K + K N\right)", "<mo>(</mo>"),
        (r"\frac{a}{b}", "<mfrac>"),
        (r"4 s^{2} d", "<msup>"),
        (r"\mathit{Nb}", "<mi>Nb</mi>"),
        (r"\min\left(a, b\right)", '<mi mathvariant="normal">min</mi>'),
        (r"\left\lceil \frac{M}{128} \right\rceil", "⌈"),
        (r"x_{\mathrm{model}}", "<msub>"),
    ],
)
def test_mathml_for_the_formula_subset(latex: str, expected: str) -> None:
    out = latex_to_mathml(latex)
    assert out is not None and out.startswith("<math>") and expected in out


@pytest.mark.parametrize("latex", [r"\sqrt{x}", r"\href{javascript:x}{y}", "<script>", "{"])
def test_mathml_refuses_anything_else(latex: str) -> None:
    assert latex_to_mathml(latex) is None


def test_every_formula_of_the_catalog_has_mathml(compiled: Any) -> None:
    catalog = compiled.catalog
    formulas = [k.flops for k in catalog.kernels.values()]
    formulas += [f for k in catalog.kernels.values() for f in k.bytes.values()]
    formulas += [f.formula for m in catalog.methods.values() for f in m.formulas]
    assert all(latex_to_mathml(f.latex()) for f in formulas)


def test_chart_specs_are_valid_vega_lite(compiled: Any) -> None:
    """Built without altair's construction-time checks, so checked here against the schema."""
    import altair as alt

    device = "nvidia-h100-sxm"
    results = [r for r in compiled.results if r.device == device and r.declared]
    specs = [
        charts.device_roofline(compiled, device, results, "bf16").spec,
        charts.comparison_chart(compiled, list(compiled.catalog.devices), "bf16").spec,
        charts.kernel_chart(
            compiled, "gemm", [r for r in compiled.results if r.kernel == "gemm" and r.declared]
        ).spec,
    ]
    for spec in specs:
        alt.Chart.from_dict(spec, validate=True) if "mark" in spec else alt.LayerChart.from_dict(
            spec, validate=True
        )
        assert spec["datasets"]


def test_roofline_has_the_ridge_as_a_data_point(compiled: Any) -> None:
    """The kink is a point of the line, computed from the sliders, not sampled."""
    results = [r for r in compiled.results if r.device == "nvidia-h100-sxm" and r.declared]
    spec = charts.device_roofline(compiled, "nvidia-h100-sxm", results, "bf16").spec
    rows = spec["datasets"]["roofs"]
    assert {"start", "ridge", "end"} <= {row["kind"] for row in rows}
    assert any(abs(row["peak"] - 989.5e12) < 1e6 for row in rows if row["kind"] == "ridge")
    assert {p["name"] for p in spec["params"]} == {
        "bandwidth_x",
        "peak_x",
        "compute_share",
        "memory_share",
    }


def test_site_model_pages_without_mkdocs(compiled: Any) -> None:
    site = Site.of(compiled, svg=False)
    pages = {page.path: page for page in site_pages(site)}
    assert "devices/nvidia-h100-sxm.md" in pages
    assert "comparison.md" in pages and "glossary.md" in pages and "changelog.md" in pages
    home = home_section(site)
    assert "index.comparison.svg" in home.assets


def test_plugin_watches_the_specs_folder(tmp_path: Path) -> None:
    from rooflinec.site.plugin import RooflinecPlugin

    class Server:
        def __init__(self) -> None:
            self.watched: list[str] = []

        def watch(self, path: str) -> None:
            self.watched.append(path)

    plugin = RooflinecPlugin()
    plugin.specs_dir = tmp_path
    server = Server()
    plugin.on_serve(server, config=None, builder=None)  # type: ignore[arg-type]
    assert server.watched == [str(tmp_path)]


def test_the_cli_stays_cheap_to_import() -> None:
    """Registering `build` and `serve` imports neither mkdocs nor altair."""
    code = (
        "import sys; import rooflinec.cli.main as m; m.build_parser(); "
        "print(sorted(k for k in ('mkdocs', 'altair', 'vl_convert') if k in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_build_and_serve_are_commands(capsys: pytest.CaptureFixture[str]) -> None:
    from rooflinec.cli.main import main

    assert main(["build", "--help"]) == 0
    assert "--out" in capsys.readouterr().out
    assert main(["serve", "--help"]) == 0
    assert "--dev-addr" in capsys.readouterr().out


# --------------------------------------------------------------------------- the Site value


def test_site_options_fall_back_to_the_catalogs_own(compiled: Any) -> None:
    """An unknown device or precision option gives the featured device and the first
    precision of the catalog."""
    site = Site.of(compiled, default_device="no-such-device", chart_precision="fp3", svg=False)
    assert "nvidia-h100-sxm" == site.default_device
    assert next(iter(compiled.catalog.precisions)) == site.chart_precision
    chosen = Site.of(compiled, default_device="amd-mi300x", chart_precision="fp8", svg=False)
    assert ("amd-mi300x", "fp8") == (chosen.default_device, chosen.chart_precision)


def test_a_page_is_a_function_of_the_site(compiled: Any) -> None:
    """A device page made on its own equals the one in the whole list: no page depends
    on another having been made first."""
    site = Site.of(compiled, svg=False)
    listed = {page.path: page for page in site_pages(site)}["devices/amd-mi300x.md"]
    alone = device_page(Site.of(compiled, svg=False), compiled.catalog.devices["amd-mi300x"])
    assert listed.markdown == alone.markdown
    assert listed.title == alone.title == "AMD Instinct MI300X"


def test_the_site_reads_each_devices_trails_once(compiled: Any) -> None:
    """The audit layout and the catalog downloads read the trails the Site holds."""
    from rooflinec.provenance import device_trails

    site = Site.of(compiled, svg=False)
    for device, trails in site.trails.items():
        assert device_trails(compiled.catalog, device, today=site.catalog_date) is trails
    assert audit_layout(site) is audit_layout(site)


def test_split_pages_numbers_the_pages_and_links_each(compiled: Any) -> None:
    """Three chunks: `x.md`, `x-2.md`, `x-3.md`, each with a pager to the others."""
    site = Site.of(compiled, svg=False)
    made = split_pages(
        site,
        "x.md",
        ["a", "b", "c"],
        lambda n: f"X {n}",
        lambda page, n, chunk, pager: f"{chunk} {pager}",
    )
    assert ["x.md", "x-2.md", "x-3.md"] == [page.path for page in made]
    assert ["X 1", "X 2", "X 3"] == [page.title for page in made]
    assert "b Pages: [1](x.md) · **2** · [3](x-3.md)" == made[1].markdown


def test_chunks_by_size_keeps_runs_within_the_budget() -> None:
    """Runs of consecutive items up to the budget; an item larger than it stands alone."""
    assert [[3, 4], [9], [1, 2, 5]] == [
        list(c) for c in chunks_by_size([3, 4, 9, 1, 2, 5], lambda n: n, 8)
    ]
    assert [[]] == [list(c) for c in chunks_by_size([], lambda n: n, 8)]
    assert [[1, 2], [3]] == [list(c) for c in chunks_of([1, 2, 3], 2)]


def test_a_table_row_escapes_each_cell_as_a_template_does() -> None:
    """`md_row` writes what `| {{ a }} | **{{ b }}** |` writes: spec text inert (a `|`
    does not split the cell, `*` is no emphasis), `Markup` kept, the strong cell in `**`."""
    from markupsafe import Markup

    from rooflinec.site.escape import md, md_row

    row = md_row(["a|b *c*", Markup("[x](y.md)"), 12.5], strong=2)
    assert f"| {md('a|b *c*')} | [x](y.md) | **12.5** |" == row
    assert "| a&#124;b &#42;c&#42; | [x](y.md) | **12.5** |" == row
    assert "| &#45; x |" == md_row(["- x"])
