"""The static site built whole: pages, figures, sizes, reproducibility, atomic output, safety."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import yaml

from rooflinec.assemble import catalog_or_raise
from rooflinec.cli.main import main
from rooflinec.errors import SpecError
from rooflinec.site.build import SITE_URL, build_site, site_config

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / "specs"
PAGE_LIMIT = 50 * 1024
PAYLOAD = (
    "<script>alert(1)</script> <img src=x onerror=alert(1)> [x](javascript:alert(1)) "
    "{{ 7*7 }} {% raw %} | pipe"
)


def _snapshot(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _html_pages(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.html"))


@pytest.fixture(scope="module")
def catalog() -> Any:
    return catalog_or_raise(BUNDLED)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled catalog's site, built once for the module."""
    out = tmp_path_factory.mktemp("site") / "site"
    build_site(BUNDLED, out)
    return out


def test_a_page_for_every_device_and_kernel(site: Path, catalog: Any) -> None:
    """Every device and kernel has its page; the section and top-level pages exist."""
    for device in catalog.devices:
        assert (site / "devices" / f"{device}.html").is_file()
        assert (site / "devices" / f"{device}.roofline.svg").is_file()
        assert (site / "devices" / f"{device}.roofline.vl.json").is_file()
    for kernel in catalog.kernels:
        assert (site / "kernels" / f"{kernel}.html").is_file()
    for method in catalog.methods:
        assert (site / "method" / f"{method}.html").is_file()
    for name in (
        "index",
        "devices/index",
        "kernels/index",
        "comparison",
        "sources",
        "glossary",
        "changelog",
        "spec-language",
    ):
        assert (site / f"{name}.html").is_file(), name
    assert (site / "assets" / "rooflinec" / "vega-bundle.js").stat().st_size > 500_000
    assert json.loads((site / "results.json").read_text("utf-8"))["results"]


def test_h100_page_shows_its_figures(site: Path) -> None:
    """The worked example's figures appear as the method prints them."""
    text = (site / "devices" / "nvidia-h100-sxm.html").read_text("utf-8")
    assert "989.5 TFLOP/s" in text
    assert "3.35 TB/s" in text
    assert "295.4 FLOP/B" in text
    assert "1979 TFLOP/s" in text  # as printed, with sparsity


def test_method_page_runs_the_reference_example(site: Path) -> None:
    """Expected beside computed, every row passing for the bundled catalog."""
    text = (site / "method" / "roofline-examples.html").read_text("utf-8")
    assert "295.373 FLOP/B" in text  # expected, as written
    assert "✓ pass" in text
    assert "✗ fail" not in text


def test_every_page_is_small(site: Path) -> None:
    """No page reaches 50 KB (the Vega runtime and chart files are shared assets), but
    the calculator, whose data is inline (a page opened from disk cannot fetch): it and
    its script stay within 300 KB."""
    sizes = {str(p.relative_to(site)): p.stat().st_size for p in _html_pages(site)}
    assert sizes
    scripts = ("calculator-exact.js", "calculator.js")
    calculator = sizes.pop("calculator.html") + sum((site / n).stat().st_size for n in scripts)
    too_big = {name: size for name, size in sizes.items() if size >= PAGE_LIMIT}
    assert too_big == {}
    assert calculator <= 300_000


def test_charts_are_embedded_safely_with_a_static_fallback(site: Path) -> None:
    """A device's roofline: its spec beside the page (it grows with the kernel cases),
    which parses and keeps its what-if sliders, an SVG fallback, a download link."""
    text = (site / "devices" / "nvidia-h100-sxm.html").read_text("utf-8")
    assert re.findall(r'<script type="application/json"', text) == []
    sources = re.findall(r'<div class="rooflinec-chart-view" data-src="([^"]+)">', text)
    assert sources == ["nvidia-h100-sxm.roofline.vl.json"]
    spec = json.loads((site / "devices" / sources[0]).read_text("utf-8"))
    assert {p["name"] for p in spec["params"]} >= {"bandwidth_x", "peak_x"}
    assert "nvidia-h100-sxm.roofline.svg" in text
    assert 'href="nvidia-h100-sxm.roofline.vl.json"' in text
    svg = (site / "devices" / "nvidia-h100-sxm.roofline.svg").read_text("utf-8")
    assert svg.startswith("<svg") and "<script" not in svg


def test_charts_that_grow_with_the_catalog_are_fetched_not_inlined(site: Path) -> None:
    """A kernel's attainable chart (a point per device) is not copied into the page: the
    live view names its downloadable spec, which exists and parses; the SVG stays."""
    text = (site / "kernels" / "gemm.html").read_text("utf-8")
    assert re.findall(r'<script type="application/json"', text) == []
    sources = re.findall(r'<div class="rooflinec-chart-view" data-src="([^"]+)">', text)
    assert sources == ["gemm.attainable.vl.json"]
    spec = json.loads((site / "kernels" / sources[0]).read_text("utf-8"))
    assert len(spec["datasets"]["results"]) >= 30
    assert "gemm.attainable.svg" in text


_EXTERNAL = re.compile(
    r"<(script|link|img|iframe|source|video|audio|embed|object)\b[^>]*?\s(src|href|data)="
    r"[\"']?(https?:)?//",
    re.I,
)


def test_no_request_leaves_the_site(site: Path) -> None:
    """No script, style, font, image or frame is loaded from another host (the canonical
    URL, from `site_url`, names the page and loads nothing)."""
    for page in _html_pages(site):
        text = re.sub(r'<link rel="canonical" href="[^"]*">', "", page.read_text("utf-8"))
        assert not _EXTERNAL.search(text), page
        assert "fonts.googleapis" not in text and "fonts.gstatic" not in text, page
    for css in site.rglob("*.css"):
        assert not re.search(r"url\(\s*[\"']?(https?:)?//", css.read_text("utf-8")), css
    for svg in site.rglob("*.svg"):
        text = svg.read_text("utf-8")
        assert not re.search(r"(href|src)=[\"'](https?:)?//", text), svg


def test_two_builds_are_identical(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI, run from another folder, writes byte for byte the same site."""
    monkeypatch.chdir(tmp_path)
    assert main(["build", "--specs", str(BUNDLED), "--out", "again"]) == 0
    assert _snapshot(tmp_path / "again") == _snapshot(site)


def test_a_failing_build_leaves_the_old_site(
    site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A spec error stops the build with one-line diagnostics; the previous site stays."""
    out = tmp_path / "site"
    shutil.copytree(site, out)
    before = _snapshot(out)
    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    device = specs / "devices" / "nvidia-h100-sxm.yaml"
    device.write_text(
        device.read_text("utf-8").replace("bandwidth: 3.35 TB/s", "bandwidth: 3.35 TFLOP/s"),
        "utf-8",
    )
    with pytest.raises(SpecError) as caught:
        build_site(specs, out)
    assert any("nvidia-h100-sxm.yaml" in str(d) for d in caught.value.diagnostics)
    assert main(["build", "--specs", str(specs), "--out", str(out)]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines and all(re.match(r"^\S+:\d+:\d+: error: ", line) for line in lines), lines
    assert _snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site", "specs"]  # no leftovers


def test_build_refuses_to_replace_a_folder_that_is_not_a_site(tmp_path: Path) -> None:
    """`--out` pointing at a folder with other content is a usage error, not a deletion."""
    (tmp_path / "precious").mkdir()
    (tmp_path / "precious" / "notes.txt").write_text("keep me", "utf-8")
    assert main(["build", "--specs", str(BUNDLED), "--out", str(tmp_path / "precious")]) == 2
    assert (tmp_path / "precious" / "notes.txt").read_text("utf-8") == "keep me"


def test_root_mkdocs_yml_matches_the_build_configuration(tmp_path: Path) -> None:
    """`mkdocs build` at the root and `rooflinec build` make the same site."""
    root = yaml.safe_load((REPO / "mkdocs.yml").read_text("utf-8"))
    built = site_config(tmp_path, tmp_path, tmp_path, site_url=SITE_URL)
    keys = ("theme", "markdown_extensions", "nav", "use_directory_urls", "site_name", "site_url")
    for key in keys:
        assert root[key] == built[key], key
    assert root["theme"]["font"] is False
    assert root["plugins"][0] == "search" and "rooflinec" in root["plugins"][1]


# --------------------------------------------------------------------------- safety


class _Elements(HTMLParser):
    """Every start tag with its attributes, and the text of every script."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.scripts: list[str] = []
        self._in_script = False
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)
        else:
            self.text.append(data)


def plant(specs: Path) -> None:
    """The payload in every kind of spec text a page shows."""
    from ruamel.yaml import YAML

    yml = YAML(typ="rt")
    yml.width = 4096
    device_file = specs / "devices" / "nvidia-h100-sxm.yaml"
    device = yml.load(device_file.read_text("utf-8"))
    device["name"] = PAYLOAD
    device["vendor"] = PAYLOAD
    first = next(iter(device["sources"]))
    device["sources"][first]["title"] = PAYLOAD
    device["sources"][first]["note"] = PAYLOAD
    device["compute"]["bf16"]["quote"] = PAYLOAD
    device["compute"]["bf16"]["note"] = PAYLOAD
    device["assumptions"][0] = PAYLOAD
    with device_file.open("w", encoding="utf-8") as f:
        yml.dump(device, f)
    kernel_file = specs / "kernels" / "gemm.yaml"
    kernel = yml.load(kernel_file.read_text("utf-8"))
    kernel["description"] = PAYLOAD
    kernel["cases"][0]["name"] = PAYLOAD
    kernel["cases"][0]["description"] = PAYLOAD
    kernel["symbols"]["M"] = PAYLOAD
    kernel["assumptions"][0] = PAYLOAD
    kernel["versions"][0]["change"] = PAYLOAD
    with kernel_file.open("w", encoding="utf-8") as f:
        yml.dump(kernel, f)
    model_file = specs / "models" / "test-13b.yaml"
    model = yml.load(model_file.read_text("utf-8"))
    model["name"] = PAYLOAD
    model["description"] = PAYLOAD
    model["steps"][0]["name"] = PAYLOAD
    model["assumptions"][0] = PAYLOAD
    with model_file.open("w", encoding="utf-8") as f:
        yml.dump(model, f)
    method_file = specs / "methods" / "roofline.yaml"
    method = yml.load(method_file.read_text("utf-8"))
    method["glossary"][0]["term"] = PAYLOAD
    method["glossary"][0]["definition"] = PAYLOAD
    method["limits"][0] = PAYLOAD
    with method_file.open("w", encoding="utf-8") as f:
        yml.dump(method, f)


@pytest.fixture(scope="module")
def planted_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("planted")
    specs = root / "specs"
    shutil.copytree(BUNDLED, specs)
    plant(specs)
    out = root / "site"
    build_site(specs, out)
    return out


def test_spec_text_comes_out_inert(planted_site: Path) -> None:
    """Script, markup, Markdown links, template syntax and pipes in specs (a device, a kernel,
    a model, a method) stay text."""
    for page in _html_pages(planted_site):
        text = page.read_text("utf-8")
        assert "<script>alert" not in text, page
        assert not re.search(r"href=[\"']?\s*javascript:", text, re.I), page
        parser = _Elements()
        parser.feed(text)
        for tag, attrs in parser.tags:
            for name, value in attrs:
                assert not name.startswith("on"), (page, tag, name)
                assert not (value or "").strip().lower().startswith("javascript:"), (page, tag)
        for script in parser.scripts:
            assert "alert(1)" not in script or script.lstrip().startswith("{"), page
        for name in ("src",):
            assert all(dict(a).get(name) != "x" for _, a in parser.tags), page
    device = (planted_site / "devices" / "nvidia-h100-sxm.html").read_text("utf-8")
    parser = _Elements()
    parser.feed(device)
    shown = "".join(parser.text)
    assert PAYLOAD in shown  # the heading: the name exactly as written, not interpreted
    assert "{{ 7*7 }}" in shown
    kernel = (planted_site / "kernels" / "gemm.html").read_text("utf-8")
    parser = _Elements()
    parser.feed(kernel)
    assert PAYLOAD in "".join(parser.text)
    for page in ("models/test-13b.html", "models/index.html"):
        parser = _Elements()
        parser.feed((planted_site / page).read_text("utf-8"))
        assert PAYLOAD in "".join(parser.text), page


def test_chart_specs_stay_data(planted_site: Path) -> None:
    """A chart whose title holds `</script>`: no script block in the page, the fetched
    spec parses and keeps the text as data, the static SVG holds no script."""
    text = (planted_site / "devices" / "nvidia-h100-sxm.html").read_text("utf-8")
    assert re.findall(r'<script type="application/json"', text) == []
    raw = (planted_site / "devices" / "nvidia-h100-sxm.roofline.vl.json").read_text("utf-8")
    assert PAYLOAD in json.dumps(json.loads(raw), ensure_ascii=False)
    svg = (planted_site / "devices" / "nvidia-h100-sxm.roofline.svg").read_text("utf-8")
    assert "<script" not in svg


# --------------------------------------------------------------------------- big catalog


def test_pages_stay_small_with_a_big_catalog(tmp_path: Path) -> None:
    """Many devices and cases: index pages split, device and kernel pages cap their rows."""
    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    h100 = (specs / "devices" / "nvidia-h100-sxm.yaml").read_text("utf-8")
    for n in range(30):
        text = h100.replace("id: nvidia-h100-sxm", f"id: clone-{n:02d}")
        text = text.replace("name: NVIDIA H100 SXM", f"name: Clone {n:02d} of the H100 SXM")
        (specs / "devices" / f"clone-{n:02d}.yaml").write_text(text, "utf-8")
    cases = "\n".join(
        f"  - {{id: big-{n:03d}, name: Big GEMM {n:03d} with a long descriptive name, "
        f"precision: bf16, shape: {{M: {256 + n}, N: 4096, K: 4096}}}}"
        for n in range(150)
    )
    (specs / "kernels" / "big.yaml").write_text(
        "id: big\nname: Big\ndescription: Many cases.\nsymbols: {M: rows, N: columns, K: depth}\n"
        "flops: 2*M*N*K\nbytes:\n  dram: w*(M*K + K*N + M*N)\ncases:\n" + cases + "\n"
        "versions:\n  - {version: 1, date: 2026-10-25, change: First version.}\n",
        "utf-8",
    )
    out = tmp_path / "site"
    build_site(specs, out, options={"svg": False, "per_index_page": 20})
    assert (out / "devices" / "index-2.html").is_file()
    assert (out / "changelog-2.html").is_file()  # cut by the rows' text, not their count
    sizes = {str(p.relative_to(out)): p.stat().st_size for p in _html_pages(out)}
    assert sizes.pop("calculator.html") <= 300_000  # its data inline, cases capped per kernel
    assert {name: size for name, size in sizes.items() if size >= PAGE_LIMIT} == {}
    device = (out / "devices" / "clone-00.html").read_text("utf-8")
    assert "more cases are not shown" in device


def test_device_kernel_and_model_pages_open_the_calculator_pre_filled(
    site: Path, catalog: Any
) -> None:
    """Each device page links to the calculator with its figures, each kernel page with
    its cases, each model page (with a named deployment) with the model."""
    for device in catalog.devices:
        text = (site / "devices" / f"{device}.html").read_text("utf-8")
        assert f'href="../calculator.html?device={device}"' in text, device
    for kernel in catalog.kernels.values():
        if any(c.grid is None for c in kernel.cases):
            text = (site / "kernels" / f"{kernel.id}.html").read_text("utf-8")
            assert f'href="../calculator.html?kernel={kernel.id}"' in text, kernel.id
    for model in catalog.models.values():
        if model.deployments:
            text = (site / "models" / f"{model.id}.html").read_text("utf-8")
            assert f'href="../calculator.html?model={model.id}"' in text, model.id
