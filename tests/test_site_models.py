"""Model pages: the models index, a page per model with its passes, step times, roofline
and decode crossovers, the tokens-per-second comparison, and models on device pages."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from fractions import Fraction
from html import unescape
from pathlib import Path

import pytest

from rooflinec.catalog import Catalog, Model
from rooflinec.engine.cells import Result
from rooflinec.engine.compiler import Compiled
from rooflinec.engine.evaluate import width_values
from rooflinec.engine.solve import DOMAIN
from rooflinec.engine.step_crossover import step_crossover
from rooflinec.engine.terms import COMPUTE
from rooflinec.formatting import format_si
from rooflinec.pipeline import compiled_or_diagnostics
from rooflinec.site.build import build_site
from rooflinec.site.pages.model import Site
from rooflinec.site.pages.models import shown_devices, tokens_text
from tests.specfactory import write_specs

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / "specs"
PAGE_LIMIT = 50 * 1024
H100 = "nvidia-h100-sxm"


@pytest.fixture(scope="module")
def compiled() -> Compiled:
    found, _ = compiled_or_diagnostics(BUNDLED)
    assert found is not None
    return found


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("models-site") / "site"
    build_site(BUNDLED, out, options={"svg": False})
    return out


def _text(html: str) -> str:
    """The page's visible text, tags dropped and entities decoded."""
    return unescape(re.sub(r"<[^>]+>", "", html))


def test_a_page_per_model_and_the_index_links_each(site: Path, compiled: Compiled) -> None:
    """Every bundled model has its page, chart files and downloads; the index links it. A
    model of more than `STEPS_ON_PAGE` steps on one chip has its per-step sections and
    their charts on a page of its own, which its page links."""
    index = (site / "models" / "index.html").read_text("utf-8")
    assert compiled.catalog.models
    apart = 0
    for model in compiled.catalog.models:
        page = (site / "models" / f"{model}.html").read_text("utf-8")
        assert (site / "models" / f"{model}.csv").is_file()
        steps = site / "models" / model / "steps.html"
        if steps.is_file():
            apart += 1
            assert f'href="{model}/steps.html"' in page
            assert 'id="decode-batch-crossovers"' not in page
            assert 'id="decode-batch-crossovers"' in steps.read_text("utf-8")
            assert (site / "models" / model / "steps.roofline.vl.json").is_file()
        else:
            assert (site / "models" / f"{model}.roofline.vl.json").is_file()
        assert f'href="{model}.html"' in index
    assert apart >= 1
    assert 'href="tokens.html"' in index
    assert (site / "models" / "tokens.html").is_file()


def test_model_pages_are_in_the_nav(site: Path) -> None:
    """The Models section is in the navigation of every page, beside Devices and Kernels."""
    home = (site / "index.html").read_text("utf-8")
    assert 'href="models/index.html"' in home


def test_every_model_page_is_small(site: Path) -> None:
    """Model, comparison and device pages stay below 50 KB with every bundled model."""
    pages = [
        *sorted((site / "models").glob("*.html")),
        *sorted((site / "models").glob("*/*.html")),  # deployments and frontier pages
        *sorted((site / "devices").glob("*.html")),
        site / "comparison.html",
    ]
    sizes = {str(p.relative_to(site)): p.stat().st_size for p in pages}
    assert {name: size for name, size in sizes.items() if size >= PAGE_LIMIT} == {}


def test_test_13b_page_shows_the_engine_figures(site: Path, compiled: Compiled) -> None:
    """The test-13b page shows each pass on the H100 as the site formats the engine's exact
    row: decode at batch 1 is 7.793 ms and 128.3 tokens/s, all of it DRAM bound; prefill
    of 512 tokens 13.54 ms and 37820 tokens/s."""
    text = _text((site / "models" / "test-13b.html").read_text("utf-8"))
    decode = compiled.model_result("test-13b", "decode", H100, "bf16")
    prefill = compiled.model_result("test-13b", "prefill", H100, "bf16")
    assert decode is not None and prefill is not None
    for r in (decode, prefill):
        assert f"{tokens_text(r)} tokens/s" in text
        assert format_si(r.time, "s") in text
    assert (tokens_text(decode), format_si(decode.time, "s")) == ("128.3", "7.793 ms")
    assert (tokens_text(prefill), format_si(prefill.time, "s")) == ("37820", "13.54 ms")
    assert "DRAM 100%" in text
    # the step table of the decode chart: each step's time and the pass's
    for s in decode.steps:
        assert format_si(s.time, "s") in text


def test_routed_pages_bind_ranks(site: Path, compiled: Compiled) -> None:
    """A model whose dispatch and combine read `ranks` says what its routing binds it
    to; a routed model whose steps do not read it, and a dense one, say nothing of it."""
    sentence = "and ranks, the chips a token is sent to, min(k, ep)"
    for model in compiled.catalog.models.values():
        text = _text((site / "models" / f"{model.id}.html").read_text("utf-8"))
        reads = any(step.written for step in model.steps)
        assert reads == (sentence in text), model.id
    assert any(any(s.written for s in m.steps) for m in compiled.catalog.models.values())


def test_stacked_bar_sums_to_the_pass_time(site: Path, compiled: Compiled) -> None:
    """The step-time chart's segments of each device add up to that device's pass time."""
    spec = json.loads((site / "models" / "test-13b.steps-decode.vl.json").read_text("utf-8"))
    sums: dict[str, float] = defaultdict(float)
    for row in spec["datasets"]["steps"]:
        sums[row["device"]] += row["time"]
    names = {d.name: d.id for d in compiled.catalog.devices.values()}
    assert names["NVIDIA H100 SXM"] in {names[n] for n in sums}
    for name, total in sums.items():
        r = compiled.model_result("test-13b", "decode", names[name], "bf16")
        assert r is not None
        assert total == pytest.approx(float(r.time), rel=1e-9)
    assert len({row["step"] for row in spec["datasets"]["steps"]}) == 6


def _limited_by_at(
    catalog: Catalog, model: Model, index: int, phase: str, b: int, c: Compiled, device: str
) -> str:
    """What limits one run of a step at batch `b`, evaluated directly: the shape formulas
    at the phase's variables with `b` replaced, the kernel's formulas there, the engine's
    rule (no composed formula, no solver)."""
    step = model.steps[index]
    kernel = catalog.kernels[step.kernel]
    variables = {**model.variables(phase), "b": b}
    precision = step.precision or model.precision
    values: dict[str, int | Fraction] = {
        sym: f.evaluate(variables) for sym, f in step.shape.items()
    }
    width = catalog.precisions[precision].bytes
    values.update(width_values(kernel.widths, width, step.widths, catalog.precisions))
    flops = kernel.flops.evaluate(values)
    traffic = {lv: f.evaluate(values) for lv, f in kernel.bytes.items()}
    fig = c.devices[device]
    ceilings = {lv: bw for lv, bw in fig.bandwidths.items() if lv in traffic}
    result = Result(
        "", "", device, precision, True, flops, traffic, fig.peaks[precision], ceilings, (), None
    )
    return result.limited_by


@pytest.mark.parametrize(
    ("model_id", "step_id"),
    [
        ("test-13b", "qkv"),
        ("test-13b", "logits"),
        ("llama-3-8b", "k-proj"),
        ("llama-3-8b", "attention"),
    ],
)
def test_crossover_matches_brute_force(compiled: Compiled, model_id: str, step_id: str) -> None:
    """The decode crossover of a step, against the step evaluated directly: memory bound
    at b - 1, compute bound at b and at larger batches; "never": memory bound at 10^12."""
    catalog = compiled.catalog
    if model_id not in catalog.models:
        pytest.skip(f"no {model_id} in the bundled catalog")
    model = catalog.models[model_id]
    index = next(i for i, s in enumerate(model.steps) if s.id == step_id)
    phase = next(p for p in model.phases if p.startswith("decode"))
    x = step_crossover(catalog, model, index, phase, compiled.devices[H100])
    assert x.regions is not None
    if x.crossover is None:
        assert _limited_by_at(catalog, model, index, phase, DOMAIN[1], compiled, H100) != COMPUTE
        return
    b = x.crossover
    assert b > 1
    assert _limited_by_at(catalog, model, index, phase, b - 1, compiled, H100) != COMPUTE
    for at in (b, b + 1, 2 * b, 10**6, DOMAIN[1]):
        assert _limited_by_at(catalog, model, index, phase, at, compiled, H100) == COMPUTE


def test_crossover_table_on_the_page(site: Path, compiled: Compiled) -> None:
    """The page's crossover table holds the solver's answers for the shown devices: the
    H100 turns test-13b's QKV projection compute bound from batch 320."""
    model = compiled.catalog.models["test-13b"]
    x = step_crossover(compiled.catalog, model, 0, "decode", compiled.devices[H100])
    assert x.crossover == 320
    html = (site / "models" / "test-13b.html").read_text("utf-8")
    section = html[html.index('id="decode-batch-crossovers"') :]
    row = re.search(r"<tr>\s*<td>Q, K and V projections</td>(.*?)</tr>", section, re.S)
    assert row is not None
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", row.group(1))
    fake = Site.of(compiled, svg=False)
    devices = shown_devices(fake, model)
    assert H100 in devices and len(cells) == len(devices)
    assert cells[devices.index(H100)] == "320"
    assert "Never compute bound on these devices: Attention" in _text(section)


def test_tokens_comparison_lists_every_pass(site: Path, compiled: Compiled) -> None:
    """The comparison pages together list every model × phase × device pass at the model's
    precision, in a filterable table, the chart on the first page."""
    pages = sorted((site / "models").glob("tokens*.html"))
    rows = 0
    for page in pages:
        html = page.read_text("utf-8")
        assert 'class="rooflinec-table rooflinec-tokens"' in html
        body = html[html.index("<tbody>") : html.index("</tbody>")]
        rows += body.count("<tr>")
    declared = [r for r in compiled.models if r.declared]
    assert rows == len(declared)
    first = (site / "models" / "tokens.html").read_text("utf-8")
    assert 'data-src="tokens.tokens.vl.json"' in first


def test_device_page_lists_models(site: Path, compiled: Compiled) -> None:
    """The H100's page has a short table of models (the first three of the catalog) linking
    to their pages and to the comparison for the rest."""
    html = (site / "devices" / f"{H100}.html").read_text("utf-8")
    assert 'id="models-on-this-device"' in html
    models = list(compiled.catalog.models)
    for model in models[:3]:
        assert f'href="../models/{model}.html"' in html
    if len(models) > 3:
        assert 'href="../models/tokens.html"' in html


# --------------------------------------------------------------------------- synthetic

DEVICE = """\
id: gpu-a
name: GPU A
vendor: A vendor
kind: gpu
compute:
  bf16: {peak: 1000 TFLOP/s, source: s}
memory:
  dram: {label: HBM3, bandwidth: 4 TB/s, source: s}
"""

KERNEL = """\
id: mm
name: Matrix multiply
description: C = A B.
symbols: {M: rows, N: columns, K: depth}
flops: 2*M*N*K
bytes: {dram: w*(M*K + K*N + M*N)}
cases:
  - {id: mm-square, name: Square, precision: bf16, shape: {M: 1024, N: 1024, K: 1024}}
"""

PAYLOAD = "<script>alert(1)</script> [x](javascript:alert(1)) {{ 7*7 }} | pipe"

MODEL = f"""\
id: tiny
name: "{PAYLOAD}"
description: "{PAYLOAD}"
precision: bf16
parameters: {{h: 1024}}
phases:
  prefill: {{b: 4, s: 128}}
  decode: {{b: 1, s: 1}}
steps:
  - {{id: proj, name: "{PAYLOAD}", kernel: mm, shape: {{M: b*s, N: h, K: h}}, count: 2}}
sources:
  card:
    title: "{PAYLOAD}"
    publisher: A lab
    url: https://example.com/card
    read: 2026-10-25
assumptions: ["{PAYLOAD}"]
versions:
  - {{version: 1, date: 2026-10-25, change: First version.}}
"""


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tiny-model")
    specs = write_specs(root, {"gpu-a": DEVICE}, {"mm": KERNEL})
    (specs / "models").mkdir()
    (specs / "models" / "tiny.yaml").write_text(MODEL, "utf-8")
    out = root / "site"
    build_site(specs, out, options={"svg": False})
    return out


def test_hand_written_model_builds_with_hand_computed_figures(tiny: Path) -> None:
    """A one-step model: decode (M = 1, 1024 x 1024, BF16, twice) moves 2 x 2,101,248 B at
    4 TB/s, 1.050624 µs, so 951,814 tokens/s; its step turns compute bound at the least b
    with b·1024/(1024 + 2b) ≥ 250 (the ridge), b = 489 (488 gives 249.86)."""
    html = (tiny / "models" / "tiny.html").read_text("utf-8")
    text = _text(html)
    assert "1.051 µs" in text
    assert "951800 tokens/s" in text
    section = html[html.index('id="decode-batch-crossovers"') :]
    assert re.search(r"<td[^>]*>489</td>", section)
    assert 'href="tiny.html"' in (tiny / "models" / "index.html").read_text("utf-8")


def test_model_text_comes_out_inert(tiny: Path) -> None:
    """Markup planted in a model's name, description, step, source and assumption is shown
    as text on the model page, the index and the comparison, never interpreted."""
    for page in ("models/tiny.html", "models/index.html", "models/tokens.html"):
        html = (tiny / page).read_text("utf-8")
        assert "<script>alert" not in html, page
        assert not re.search(r"href=[\"']?\s*javascript:", html, re.I), page
    text = _text((tiny / "models" / "tiny.html").read_text("utf-8"))
    assert PAYLOAD in text
    assert "{{ 7*7 }}" in text


# --------------------------------------------------------------------------- rebuilds


def test_dirty_rebuild_after_a_model_edit(tmp_path: Path) -> None:
    """Editing one model's phase re-renders its page, its downloads and the comparison,
    leaves the other models' pages untouched, and serves what a clean build makes."""
    import shutil

    from tests.test_site_serve import _build, _state

    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    served = tmp_path / "served"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    options = {"svg": False}
    _build(tmp_path / "a", specs, served, dirty=True, options=options)
    before = _state(served)
    path = specs / "models" / "llama-3-70b.yaml"
    text = path.read_text("utf-8")
    edited = text.replace(
        "decode-b64-l4096: {b: 64, s: 1, L: 4096}", "decode-b64-l4096: {b: 64, s: 1, L: 4097}"
    )
    assert edited != text
    path.write_text(edited, "utf-8")
    _build(tmp_path / "a", specs, served, dirty=True, options=options, start="")  # a rebuild
    after = _state(served)
    rewritten = {name for name in after if after[name][0] != before.get(name, (None,))[0]}
    assert {"models/llama-3-70b.html", "models/llama-3-70b.csv"} <= rewritten
    assert any(n.startswith("models/tokens") for n in rewritten)
    others = [
        n
        for n in after
        if n.startswith("models/") and n.endswith(".html") and "tokens" not in n and "70b" not in n
    ]
    assert others and not rewritten & set(others)
    assert "L = 4,097" in _text(after["models/llama-3-70b.html"][1].decode("utf-8"))
    clean = tmp_path / "clean"
    _build(tmp_path / "b", specs, clean, dirty=False, options=options, start="build")
    differ = [
        name
        for name, (_, data) in _state(clean).items()
        if after.get(name, (0, b""))[1].replace(b"/served/", b"/clean/") != data
    ]
    assert differ == []
