"""Routed experts (`experts:`): the engine binds `X` of every moe-linear step, spread or
uniform; uniform routing's expectation is exact and may be a fraction."""

from __future__ import annotations

import io
import json
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from rooflinec.assemble import catalog_or_raise
from rooflinec.catalog import Deployment
from rooflinec.cli.main import main
from rooflinec.engine.compiler import compile_catalog
from rooflinec.engine.experts import rerouted
from rooflinec.formulas import EvaluationError, FormulaError, parse_formula
from rooflinec.formulas.evaluate import unpicked
from rooflinec.formulas.limits import MAX_UNPICKED_TOKENS
from rooflinec.resources import bundled_specs_dir


@pytest.fixture(scope="module")
def compiled():  # type: ignore[no-untyped-def]
    return compile_catalog(catalog_or_raise(bundled_specs_dir()))


@pytest.mark.parametrize(
    ("tokens", "share"),
    [(1, Fraction(1, 32)), (16, 1 - Fraction(31, 32) ** 16), (128, 1 - Fraction(31, 32) ** 128)],
)
def test_expected_experts_of_256_with_8_active(tokens: int, share: Fraction) -> None:
    """E = 256, k = 8: 1/32 of the experts at one token, 0.398 at 16, 0.983 at 128."""
    formula = parse_formula("E*(1 - unpicked(E, k, n))", ["E", "k", "n"], reserved=(), engine=True)
    value = formula.evaluate({"E": 256, "k": 8, "n": tokens})
    assert 256 * share == value
    assert {1: "0.031", 16: "0.398", 128: "0.983"}[tokens] == f"{float(value / 256):.3f}"


def test_spec_text_cannot_call_the_engines_function() -> None:
    """`unpicked` is the engine's: a spec's formula calling it is refused by name."""
    with pytest.raises(FormulaError) as info:
        parse_formula("unpicked(E, k, n)", ["E", "k", "n"])
    assert "function 'unpicked' is not allowed" in info.value.message


def test_uniform_routing_over_too_many_tokens_is_an_error() -> None:
    """The exact power of 65,537 tokens is refused, not computed for seconds."""
    assert Fraction(0) == unpicked(8, 8, MAX_UNPICKED_TOKENS)
    with pytest.raises(EvaluationError, match="up to 65,536 tokens"):
        unpicked(8, 2, MAX_UNPICKED_TOKENS + 1)


def test_bundled_mixtral_binds_x_as_it_wrote_it(compiled) -> None:  # type: ignore[no-untyped-def]
    """Spread routing binds min(E/ep, b*s*k), the formula the spec used to write."""
    model = compiled.catalog.models["mixtral-8x7b"]
    assert model.experts is not None and "spread" == model.experts.routing
    ups = [s for s in model.steps if s.kernel == "moe-linear"]
    assert 3 == len(ups)
    assert {"min(E/ep, b*s*k)"} == {s.shape["X"].text for s in ups}
    assert {2, 8} == {s.shapes[p]["X"] for s in ups for p in ("decode-b1-l2048", "prefill-s2048")}


def test_uniform_routing_reads_the_expected_experts(compiled) -> None:  # type: ignore[no-untyped-def]
    """Mixtral at 32 decode tokens, uniform: X = 8 (1 - (3/4)^32) per layer, exactly, and
    at one token the same 2 experts as spread; on 8 chips (ep = 8) one expert per chip
    with chance 1 - (3/4)^32 that it is read."""
    engine = compiled.model_engine
    spread = compiled.catalog.models["mixtral-8x7b"]
    uniform = rerouted(spread, "uniform")
    assert "mixtral-8x7b~uniform" == uniform.id
    h100 = compiled.devices["nvidia-h100-sxm"]
    x = 8 * (1 - Fraction(3, 4) ** 32)
    row = engine.evaluate(uniform, "decode-b32-l4096", h100, "bf16")
    up = row.step("expert-up")
    assert up is not None
    assert 32 * (2 * 64 * (4096 + 14336) + 2 * x * 4096 * 14336) == up.bytes["dram"]
    one = engine.evaluate(uniform, "decode-b1-l2048", h100, "bf16")
    same = engine.evaluate(spread, "decode-b1-l2048", h100, "bf16")
    assert (same.time, same.bytes) == (one.time, one.bytes)
    split = engine.evaluate(
        uniform, "decode-b32-l4096", h100, "bf16", deployment=Deployment(8, 1, 8)
    )
    per_chip = split.step("expert-up")
    assert per_chip is not None
    m = 8  # ceil(32 * 2 / 8) pairs per chip
    expected = 32 * (2 * m * (4096 + 14336) + 2 * (1 - Fraction(3, 4) ** 32) * 4096 * 14336)
    assert expected == per_chip.bytes["dram"]


def test_uniform_is_never_slower_than_spread(tmp_path: Path) -> None:
    """Uniform routing reads at most the experts spread does: Mixtral's request row on the
    H100 (ttft, itl) is at most spread's, and its pass of 32 decode tokens is faster (it
    reads 7.9992 experts' weights a layer, not 8)."""
    specs = tmp_path / "specs"
    shutil.copytree(bundled_specs_dir(), specs)
    spec = specs / "models" / "mixtral-8x7b.yaml"
    own = spec.read_text("utf-8")
    requests, passes = {}, {}
    for routing in ("spread", "uniform"):
        routed = f"experts: {{count: E, active: k, routing: {routing}}}"
        spec.write_text(own.replace("experts: {count: E, active: k}", routed), "utf-8")
        common = ["--specs", str(specs), "--model", "mixtral-8x7b", "--device", "nvidia-h100-sxm"]
        out = io.StringIO()
        args = ["compile", *common, "--input", "512", "--output", "8", "--format", "json"]
        assert 0 == main(args, out=out)
        requests[routing] = json.loads(out.getvalue())["requests"][0]
        out = io.StringIO()
        args = ["compile", *common, "--phase", "decode-b32-l4096", "--format", "json"]
        assert 0 == main(args, out=out)
        passes[routing] = json.loads(out.getvalue())["models"][0]
    for key in ("ttft", "itl"):
        assert requests["uniform"][key] <= requests["spread"][key]
    assert passes["uniform"]["time"] < passes["spread"]["time"]
    assert passes["uniform"]["bytes"]["dram"] < passes["spread"]["bytes"]["dram"]
