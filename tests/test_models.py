"""Models composed of kernels: exact sums worked out by hand, llm-analysis' test-13b, the
results contract and the command line."""

from __future__ import annotations

import io
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from rooflinec.assemble import catalog_or_raise
from rooflinec.cli.main import main
from rooflinec.engine.cells import DeviceFigures
from rooflinec.engine.compiler import Compiled, compile_catalog
from rooflinec.schema import validator
from tests.specfactory import BUNDLED, TOY_DEVICE, write_specs

T, G = 10**12, 10**9

DEVICE = TOY_DEVICE

LINEAR = """\
id: lin
name: Linear
description: M tokens through a K x N weight matrix.
symbols: {M: tokens, N: out, K: in}
widths: {wb: bytes per weight}
flops: 2*M*N*K
bytes:
  dram: w*(M*K + M*N) + wb*K*N
cases:
  - {id: lin-1, name: one, precision: bf16, shape: {M: 1, N: 8, K: 8}}
"""

ATTENTION = """\
id: att
name: Attention
description: s queries against L keys, n heads of d.
symbols: {b: batch, s: queries, L: keys, n: heads, d: head size}
flops: 4*b*s*L*n*d
bytes:
  dram: w*b*(2*s + 2*L)*n*d
cases:
  - {id: att-1, name: one, precision: bf16, shape: {b: 1, s: 1, L: 8, n: 1, d: 8}}
"""

TINY = """\
id: tiny
name: Tiny two-layer model
description: Two layers of h = 64, four heads, for a hand calculation.
precision: bf16
parameters: {layers: 2, h: 64, heads: 4, V: 1000}
phases:
  prefill: {b: 2, s: 128, L: 128}
  decode: {b: 2, s: 1, L: 128}
steps:
  - {id: qkv, kernel: lin, shape: {M: b*s, N: 3*h, K: h}, count: layers}
  - {id: attention, kernel: att, shape: {b: b, s: s, L: L, n: heads, d: h/heads}, count: layers}
  - {id: logits, kernel: lin, shape: {M: b*s, N: V, K: h}, widths: {wb: fp8}}
measured:
  - {device: toy, phase: decode, precision: bf16, time: 1 ms, source: run}
sources:
  run: {title: A run, publisher: Test, url: "https://example.com/run", read: 2026-10-25}
versions:
  - {version: 1, date: 2026-10-25, change: First version.}
"""


def _tiny(tmp_path: Path) -> Compiled:
    specs = write_specs(tmp_path, {"toy": DEVICE}, {"lin": LINEAR, "att": ATTENTION})
    (specs / "models").mkdir()
    (specs / "models" / "tiny.yaml").write_text(TINY, "utf-8")
    return compile_catalog(catalog_or_raise(specs))


def _by_hand(b: int, s: int, L: int) -> tuple[Fraction, Fraction, Fraction, dict[str, Fraction]]:
    """flops, DRAM bytes, time and time by limit of the tiny model on the toy device at
    BF16 (w = 2, the logits' weights at fp8's 1 B), each step on its own roofline."""
    peak, bw = Fraction(100 * T), Fraction(1 * T)
    h, heads, V, layers = 64, 4, 1000, 2
    M = b * s
    steps = [
        # (flops of one run, bytes of one run, count)
        (2 * M * 3 * h * h, 2 * (M * h + M * 3 * h) + 2 * h * 3 * h, layers),
        (
            4 * b * s * L * heads * (h // heads),
            2 * b * (2 * s + 2 * L) * heads * (h // heads),
            layers,
        ),
        (2 * M * V * h, 2 * (M * h + M * V) + 1 * h * V, 1),
    ]
    flops = sum(Fraction(f * n) for f, _, n in steps)
    traffic = sum(Fraction(t * n) for _, t, n in steps)
    by_limit = {"compute": Fraction(0), "dram": Fraction(0)}
    for f, t, n in steps:
        compute, memory = Fraction(f) / peak, Fraction(t) / bw
        if compute >= memory:
            by_limit["compute"] += n * compute
        else:
            by_limit["dram"] += n * memory
    return flops, traffic, sum(by_limit.values(), Fraction(0)), by_limit


@pytest.mark.parametrize(
    ("phase", "b", "s", "L"), [("prefill", 2, 128, 128), ("decode", 2, 1, 128)]
)
def test_tiny_model_sums_equal_the_hand_calculation(
    tmp_path: Path, phase: str, b: int, s: int, L: int
) -> None:
    """Operations, bytes, time, time by limit and tokens per second, exactly as worked out
    by hand from the method: each step at its shape, times its count, summed."""
    row = _tiny(tmp_path).model_result("tiny", phase, "toy", "bf16")
    assert row is not None
    flops, traffic, time, by_limit = _by_hand(b, s, L)
    assert flops == row.flops
    assert traffic == row.bytes["dram"]
    assert time == row.time
    assert by_limit == row.time_by_limit
    assert flops / time == row.attainable
    assert Fraction(b * s) / time == row.tokens_per_second
    assert ["qkv", "attention", "logits"] == [st.step for st in row.steps]


def test_tiny_model_prefill_figures(tmp_path: Path) -> None:
    """The prefill pass by hand: qkv 2·(2·256·192·64) = 12,582,912 FLOP, attention
    2·(4·2·128·128·64) = 16,777,216, logits 2·256·1000·64 = 32,768,000; 62,128,128 FLOP."""
    row = _tiny(tmp_path).model_result("tiny", "prefill", "toy", "bf16")
    assert row is not None
    assert 62_128_128 == row.flops
    assert [12_582_912, 16_777_216, 32_768_000] == [st.flops for st in row.steps]
    assert "fp8" == row.steps[2].widths["wb"]
    # logits: 2·(256·64 + 256·1000) + 64·1000 = 608,768 B for 32,768,000 FLOP: 53.8 FLOP/B,
    # under the toy's ridge of 100: memory bound, 608,768 B / 1 TB/s.
    assert ("dram", Fraction(608_768, T)) == (row.steps[2].limited_by, row.steps[2].time)


def test_measured_time_gives_the_efficiency(tmp_path: Path) -> None:
    """efficiency = roofline time / measured time; other rows have none."""
    compiled = _tiny(tmp_path)
    row = compiled.model_result("tiny", "decode", "toy", "bf16")
    assert row is not None
    assert Fraction(1, 1000) == row.measured_time
    assert row.time / Fraction(1, 1000) == row.efficiency
    other = compiled.model_result("tiny", "decode", "toy", "fp8")
    assert other is not None
    assert (None, None, False) == (other.measured_time, other.efficiency, other.declared)


def test_rows_cover_every_phase_and_device_at_the_models_precision(tmp_path: Path) -> None:
    """One row per model × phase × device at the model's own precision; naming other
    precisions asks for rows at those (the toy has bf16 and fp8 peaks)."""
    compiled = _tiny(tmp_path)
    assert [("prefill", "bf16", True), ("decode", "bf16", True)] == [
        (r.phase, r.precision, r.declared) for r in compiled.models
    ]
    asked = compiled.model_engine.rows(precisions=["bf16", "fp8"])
    assert [
        ("prefill", "bf16"),
        ("prefill", "fp8"),
        ("decode", "bf16"),
        ("decode", "fp8"),
    ] == [(r.phase, r.precision) for r in asked]


# --- llm-analysis' test-13b ---------------------------------------------------------------

A100_40GB = DeviceFigures(
    "a100-40gb",
    "llm-analysis a100-sxm-40gb",
    {"bf16": Fraction(312 * T)},
    {"dram": Fraction(1555 * G)},
)


@pytest.fixture(scope="module")
def bundled() -> Compiled:
    return compile_catalog(catalog_or_raise(BUNDLED))


def _test_13b(bundled: Compiled, phase: str):  # type: ignore[no-untyped-def]
    model = bundled.catalog.models["test-13b"]
    return bundled.model_engine.evaluate(model, phase, A100_40GB, "bf16")


def test_13b_prefill_flops_equal_llm_analysis(bundled: Compiled) -> None:
    """llm-analysis prints prefill_num_flops_fwd_total 13363220316160: its formula
    N_L·(24·b·s·h² + 4·b·s²·h) + 2·b·s·h·V with 40 layers, h 5120, V 50272, b 1, s 512."""
    b, s, h, layers, V = 1, 512, 5120, 40, 50272
    assert 13_363_220_316_160 == layers * (24 * b * s * h**2 + 4 * b * s**2 * h) + 2 * b * s * h * V
    assert 13_363_220_316_160 == _test_13b(bundled, "prefill").flops


def test_13b_decode_flops_are_llm_analysis_plus_the_cache_length(bundled: Compiled) -> None:
    """llm-analysis counts decode attention at one key (25,681,428,480 FLOP); attending to
    the 512 cached keys adds 40 · 4 · 511 · 5120."""
    assert 25_681_428_480 + 40 * 4 * 511 * 5120 == _test_13b(bundled, "decode").flops


def test_13b_times_against_llm_analysis(bundled: Compiled) -> None:
    """Prefill 42.83 ms against llm-analysis' 43.70 ms (-2.0 %: its layer norms, 0.539 ms,
    and input-embedding read, 0.331 ms, are not steps); decode 16.79 ms against 17.07 ms
    (-1.6 %: it reads and writes a 522-token cache, 0.550 ms, where the attention step
    reads the 512 cached keys once, 0.270 ms)."""
    prefill, decode = _test_13b(bundled, "prefill"), _test_13b(bundled, "decode")
    # Every prefill step is compute bound: the time is the operations at the peak.
    assert Fraction(13_363_220_316_160, 312 * T) == prefill.time
    assert abs(prefill.time / Fraction(4370, 100_000) - 1) < Fraction(25, 1000)
    assert abs(decode.time / Fraction(1707, 100_000) - 1) < Fraction(2, 100)
    # The blocks llm-analysis prints agree: attention (qkv, scores, out) 14.454 ms, MLP
    # 27.532 ms, logits 0.845 ms in prefill; projections 5.396 ms and MLP 10.792 ms in decode.
    ms = {st.step: float(st.time) * 1000 for st in prefill.steps}
    assert 14.454 == round(ms["qkv"] + ms["attention"] + ms["out"], 3)
    assert 27.532 == round(ms["up"] + ms["down"], 3)
    assert 0.845 == round(ms["logits"], 3)
    ms = {st.step: float(st.time) * 1000 for st in decode.steps}
    assert 5.396 == round(ms["qkv"] + ms["out"], 3)
    assert 10.792 == round(ms["up"] + ms["down"], 3)
    assert 0.270 == round(ms["attention"], 3)


# --- the results contract and the command line ----------------------------------------------


def _run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


def test_compile_json_models_follow_the_results_schema() -> None:
    """`compile --model test-13b --format json` validates against results.schema.json."""
    code, text = _run("compile", "--specs", str(BUNDLED), "--model", "test-13b", "--format", "json")
    assert 0 == code
    document: dict[str, Any] = json.loads(text)
    assert [] == list(validator("results").iter_errors(document))
    assert [] == document["results"]
    assert {"prefill", "decode"} == {r["phase"] for r in document["models"]}


def test_model_row_text_does_not_depend_on_the_selection() -> None:
    """Same cell, same bytes: a model row's JSON is the same alone or among all rows."""
    alone = _run(
        "compile", "--specs", str(BUNDLED), "--format", "jsonl", "--model", "test-13b",
        "--phase", "decode", "--device", "nvidia-h100-sxm", "--precision", "bf16",
    )[1]  # fmt: skip
    everything = _run(
        "compile", "--specs", str(BUNDLED), "--format", "jsonl", "--model", "test-13b"
    )[1]
    assert 1 == len(alone.splitlines())
    assert alone.splitlines()[0] in everything.splitlines()


def test_model_csv_has_one_row_per_model_row() -> None:
    """With only models selected, the CSV holds the model rows under their own header."""
    code, text = _run(
        "compile", "--specs", str(BUNDLED), "--format", "csv", "--model", "test-13b",
        "--device", "nvidia-h100-sxm", "--precision", "bf16",
    )  # fmt: skip
    lines = text.splitlines()
    assert 0 == code
    assert lines[0].startswith(
        "model,phase,device,precision,declared,chips,tp,pp,ep,tokens,flops [OP]"
    )
    assert 3 == len(lines)
    assert lines[1].startswith(
        "test-13b,prefill,nvidia-h100-sxm,bf16,true,1,1,1,1,512,13363220316160,"
    )


def test_explain_model_derives_steps_sums_and_tokens() -> None:
    """Each step's shape, count and bound, then the sums, then tokens per second."""
    code, text = _run(
        "explain", "--specs", str(BUNDLED), "--model", "test-13b", "--phase", "prefill",
        "--device", "nvidia-h100-sxm",
    )  # fmt: skip
    assert 0 == code
    assert "shape: M = b*s = 512, N = 3*h/tp = 15,360, K = h = 5,120" in text
    assert "count = layers = 40" in text
    assert "FLOP = 13,363,220,316,160" in text
    assert "5. Tokens per second" in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ("compile", "--model", "test-13c"),
            "unknown model 'test-13c' (known: deepseek-v3, gemma-3-27b, gpt-oss-120b,",
        ),
        (("compile", "--model", "test-13b", "--phase", "decod"), "unknown phase 'decod'"),
        (("compile", "--phase", "decode"), "--phase selects the phases of the models"),
        (("explain", "--model", "test-13b", "--device", "nvidia-h100-sxm"), "needs --phase"),
    ],
)
def test_model_usage_errors(
    argv: tuple[str, ...], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """An unknown model or phase is a usage error (exit 2) naming the known ones."""
    code, _ = _run(*argv[:1], "--specs", str(BUNDLED), *argv[1:])
    assert 2 == code
    assert message in capsys.readouterr().err


def test_bundled_models_folder_is_optional(tmp_path: Path) -> None:
    """A catalog without models/ compiles as before: no model rows, `models` empty."""
    specs = write_specs(tmp_path, {"toy": DEVICE}, {"lin": LINEAR})
    code, text = _run("compile", "--specs", str(specs), "--format", "json")
    assert (0, []) == (code, json.loads(text)["models"])
