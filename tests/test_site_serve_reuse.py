"""Pages kept between `serve` rebuilds (`rooflinec.site.pages.reuse`, in the plugin's
`Session`): after an edit to one
device only that device's pages, model rows and results rows are made again, every page
that shows its figures changes, and what is served equals a clean build of the edited
specs byte for byte; an edit to a kernel, or to a device's file that moves its lines,
makes the pages that read it again."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from rooflinec import pipeline
from rooflinec.outputs import results
from rooflinec.site.build import _write_config, site_config
from rooflinec.site.pages import reuse
from rooflinec.site.plugin import RooflinecPlugin, plugin_of

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / "specs"
DEVICE = "amd-mi100"
OPTIONS = {"show_errors": True}  # as `rooflinec serve` builds
KINDS = {
    "page",
    "audit",
    "model rows",
    "results.json rows",
    "crossover cells",
    "tokens texts",
    "index rows",
    "tokens rows",
    "attainable rows",
    "model csv lines",
    "catalog figures",
    "results",
    "results.csv lines",
}
BY_MODEL = {
    "model page",
    "deployments page",
    "frontier page",
    "frontier work",  # what no device's spec changes: ledger terms, float-path work
}  # kept per model, from the devices they read

pytest.importorskip("mkdocs")


# The frontier pages are an option (on by default): the test of their reuse names it.
FRONTIER: dict[str, object] = {**OPTIONS, "frontier": True}


def _build(
    tmp: Path,
    specs: Path,
    out: Path,
    *,
    dirty: bool,
    start: str = "",
    options: dict[str, object] | None = None,
    wait: bool = True,
) -> RooflinecPlugin:
    """A build as `mkdocs serve` makes it: the configuration loaded afresh (the plugin
    instance is kept), `start` (`serve`, `build`) starting a new session first."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    from rooflinec.resources import site_dir

    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    tmp.mkdir(exist_ok=True)
    config_file = _write_config(tmp, site_config(site_dir(), out, specs, options or OPTIONS))
    config = load_config(str(config_file))
    if start:
        config.plugins.on_startup(command=start, dirty=dirty)  # type: ignore[arg-type]
    build(config, dirty=dirty)
    plugin = plugin_of(config)
    if wait and plugin.session.renders is not None:
        plugin.session.renders.wait()  # the charts `serve` renders after the build
    return plugin


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _clean_build(
    tmp: Path, specs: Path, options: dict[str, object] | None = None
) -> dict[str, bytes]:
    """A clean build of `specs` from scratch (a new session): nothing compiled, loaded or
    kept before."""
    out = tmp / "clean"
    shutil.rmtree(out, ignore_errors=True)
    # a new session
    _build(tmp / "clean-config", specs, out, dirty=False, start="build", options=options)
    return _files(out)


def _differ(served: Path, clean: dict[str, bytes]) -> list[str]:
    got = _files(served)
    name = served.name.encode()
    return sorted(
        path
        for path, data in clean.items()
        if got.get(path, b"").replace(b"/" + name + b"/", b"/clean/") != data
    )


def _edit_bandwidth(specs: Path, device: str = DEVICE) -> str:
    """Raise the device's first listed DRAM bandwidth by 0.01 TB/s: the new printed text."""
    path = specs / "devices" / f"{device}.yaml"
    text = path.read_text("utf-8")
    match = re.search(r"(bandwidth:\s*)([0-9.]+) TB/s", text)
    assert match is not None
    new = f"{float(match.group(2)) + 0.01:g} TB/s"
    path.write_text(text.replace(match.group(0), match.group(1) + new, 1), "utf-8")
    return new


def test_a_device_edit_remakes_that_device_alone_and_serves_a_clean_build(
    tmp_path: Path,
) -> None:
    """amd-mi100's DRAM bandwidth 1.2288 TB/s -> 1.2388 TB/s in a session: its page,
    audit pages, model rows and results rows are made again, the other 56 devices' are
    reused, and so is every model page (none shows amd-mi100); the device page prints
    1.2388 TB/s, every page listing its results (kernel
    tables, tokens pages, comparison) changes, and the site equals a clean build."""
    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    served = tmp_path / "served"
    _build(tmp_path / "a", specs, served, dirty=True, start="serve")
    before = _files(served)
    figure = _edit_bandwidth(specs)
    assert figure == "1.2388 TB/s"
    plugin = _build(tmp_path / "a", specs, served, dirty=True)
    reused, made = plugin.session.pages.last_round()
    after = _files(served)

    # Model pages and their deployments pages are kept by model: amd-mi100 is on none of
    # them (not shown, measured, the roofline's device nor a named deployment's), so each
    # is reused whole.
    models = {p.stem for p in (specs / "models").glob("*.yaml")}
    assert {d for k, d in reused if k == "model page"} == models
    named = {p.stem for p in (specs / "models").glob("*.yaml") if "\ndeployments:" in p.read_text()}
    assert {d for k, d in reused if k == "deployments page"} == named
    assert not {k for k, _ in made} & BY_MODEL
    made = {(k, d) for k, d in made if k not in BY_MODEL}
    reused = {(k, d) for k, d in reused if k not in BY_MODEL}
    assert {d for _, d in made} == {DEVICE}
    assert {k for k, _ in made} == KINDS
    others = set(_devices(specs)) - {DEVICE}
    assert {d for _, d in reused} == others
    # Every other device's pages; its model and results rows where it has any.
    assert {(k, d) for k, d in reused if k in ("page", "audit")} == {
        (k, d) for k in ("page", "audit") for d in others
    }

    assert figure in after[f"devices/{DEVICE}.html"].decode("utf-8")
    changed = {p for p in after if after[p] != before.get(p)}
    assert {"comparison.html", "results.json", "results.csv", "catalog.json"} <= changed
    assert any(p.startswith("kernels/") and p.endswith(".html") for p in changed)
    assert any(p.startswith("models/tokens") and p.endswith(".html") for p in changed)
    assert not any(p.startswith("devices/nvidia-h100-sxm") for p in changed)

    clean = _clean_build(tmp_path, specs)
    assert _differ(served, clean) == []
    compiled = pipeline.compiled_or_raise(specs)
    text = results.results_text(compiled, compiled.rows(), "json")
    assert after["results.json"].decode("utf-8") == text


def _devices(specs: Path) -> list[str]:
    return sorted(p.stem for p in (specs / "devices").glob("*.yaml"))


def test_an_edit_to_a_shown_device_remakes_the_model_pages(tmp_path: Path) -> None:
    """amd-mi355x, the fastest of its vendor, is on every model page: an edit to its
    bandwidth makes each model page again, and the site still equals a clean build."""
    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    served = tmp_path / "served"
    _build(tmp_path / "a", specs, served, dirty=True, start="serve")
    page = served / "models" / "llama-3-70b.html"
    before = page.read_bytes()
    _edit_bandwidth(specs, "amd-mi355x")
    plugin = _build(tmp_path / "a", specs, served, dirty=True)
    reused, made = plugin.session.pages.last_round()
    models = {p.stem for p in (specs / "models").glob("*.yaml")}
    assert {d for k, d in made if k == "model page"} == models
    assert not any(k == "model page" for k, _ in reused)
    assert page.read_bytes() != before  # its passes on the device are faster
    assert _differ(served, _clean_build(tmp_path, specs)) == []


def test_an_edit_to_a_shown_device_works_out_its_frontiers_alone(tmp_path: Path) -> None:
    """With the frontier pages on: amd-mi355x's frontiers alone are worked out again, the
    other shown devices' are reused, and every model's frontier pages are made again."""
    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    # The method's examples name all but the first.
    kept = {"llama-3-8b", "test-13b", "mixtral-8x7b", "gpt-oss-120b", "deepseek-v3", "gemma-3-27b"}
    for path in (specs / "models").glob("*.yaml"):
        if path.stem not in kept:  # a few models' frontiers make the point, and quickly
            path.unlink()
    served = tmp_path / "served"
    _build(tmp_path / "a", specs, served, dirty=True, start="serve", options=FRONTIER)
    _edit_bandwidth(specs, "amd-mi355x")
    plugin = _build(tmp_path / "a", specs, served, dirty=True, options=FRONTIER)
    reused, made = plugin.session.pages.last_round()
    shown = {d for k, d in reused | made if k == "frontier"}
    assert "amd-mi355x" in shown
    assert {d for k, d in made if k == "frontier"} == {"amd-mi355x"}
    assert {d for k, d in reused if k == "frontier"} == shown - {"amd-mi355x"}
    assert {d.partition("/")[0] for k, d in made if k == "frontier page"} == kept
    assert not any(k == "frontier page" for k, _ in reused)
    assert _differ(served, _clean_build(tmp_path, specs, FRONTIER)) == []


def test_a_kernel_edit_remakes_every_device_page(
    tmp_path: Path,
) -> None:
    """Every device page reads the kernels (names, cases, the batch table's GEMM):
    renaming one reuses no device's pages; a comment line added atop a device spec moves the lines
    its audit trail cites, so that device's pages are made again. Both serve what a
    clean build makes."""
    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    served = tmp_path / "served"
    gemm = specs / "kernels" / "gemm.yaml"
    _build(tmp_path / "a", specs, served, dirty=True, start="serve")
    text = gemm.read_text("utf-8")
    name = re.search(r"^name: (.+)$", text, re.MULTILINE)
    assert name is not None
    gemm.write_text(text.replace(name.group(0), f"name: {name.group(1)} (renamed)", 1))
    plugin = _build(tmp_path / "a", specs, served, dirty=True)
    reused, made = plugin.session.pages.last_round()
    assert reused == set()
    assert {d for k, d in made if k not in BY_MODEL} == set(_devices(specs))

    device = specs / "devices" / f"{DEVICE}.yaml"
    device.write_text("# a comment moves every line\n" + device.read_text("utf-8"))
    plugin = _build(tmp_path / "a", specs, served, dirty=True)
    reused, made = plugin.session.pages.last_round()
    assert {d for k, d in made if k not in BY_MODEL} == {DEVICE}
    assert {k for k, _ in made} == KINDS
    assert "(renamed)" in (served / "kernels" / "gemm.html").read_text("utf-8")
    clean = _clean_build(tmp_path, specs)
    assert _differ(served, clean) == []


def test_reuse_is_off_outside_a_serve_session() -> None:
    """A build's session (`mkdocs build`, or a `Site` made outside a build) keeps no
    pages: two sites of one catalog in one such session make every page afresh; a
    `serve` session's second site reuses the first one's."""
    from rooflinec.site.pages.model import Site
    from rooflinec.site.session import Session

    compiled = pipeline.compiled_or_raise(BUNDLED)
    calls: list[int] = []

    def make() -> str:
        calls.append(1)
        return "made"

    for session in (None, Session(), Session()):
        site = Site.of(compiled, svg=False, session=session)
        assert reuse.for_device(site, "page", DEVICE, make) == "made"
        assert not reuse.reusing(site)
    assert calls == [1, 1, 1]
    serving = Session(keep_pages=True)
    for _ in range(2):
        site = Site.of(compiled, svg=False, session=serving)
        assert reuse.for_device(site, "page", DEVICE, make) == "made"
        assert reuse.reusing(site)
    assert calls == [1, 1, 1, 1]
    assert serving.pages.last_round() == ({("page", DEVICE)}, set())


def test_serve_renders_the_changed_charts_after_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no rendering kept (an empty cache), a `serve` build writes each chart's SVG as
    a placeholder and renders it in the background; an edit defers only the charts it
    changes, and a build that starts before the last one's renders are done drops them
    and ends, once its own are done, equal to a clean build."""
    from tests.specfactory import without_named_deployments

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    for path in (specs / "devices").glob("*.yaml"):
        if path.stem not in (DEVICE, "nvidia-h100-sxm"):
            path.unlink()
    without_named_deployments(specs)
    served = tmp_path / "served"
    svg = f"devices/{DEVICE}.roofline.svg"
    plugin = _build(tmp_path / "a", specs, served, dirty=True, start="serve", wait=False)
    renders = plugin.session.renders
    assert renders is not None
    placeholder = (served / svg).read_bytes()
    renders.wait()
    rendered = (served / svg).read_bytes()
    assert b'class="marks"' not in placeholder  # Vega draws its marks in that group
    assert b'class="marks"' in rendered
    assert svg in renders.deferred
    other = served / "devices/nvidia-h100-sxm.roofline.svg"
    other_rendered = other.read_bytes()

    # An edit: the device's chart waits for the background again; the other device's
    # chart (unchanged) is written as rendered.
    _edit_bandwidth(specs)
    _build(tmp_path / "a", specs, served, dirty=True, wait=False)
    assert svg in renders.deferred
    assert any(p.startswith("kernels/") for p in renders.deferred)  # its points moved
    assert "devices/nvidia-h100-sxm.roofline.svg" not in renders.deferred
    assert other.read_bytes() == other_rendered
    # Another edit before those renders are done: they are dropped, this build's made.
    figure = _edit_bandwidth(specs)
    _build(tmp_path / "a", specs, served, dirty=True)
    assert figure in (served / f"devices/{DEVICE}.html").read_text("utf-8")
    assert _differ(served, _clean_build(tmp_path, specs)) == []
