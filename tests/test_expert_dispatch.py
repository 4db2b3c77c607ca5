"""Expert parallelism's dispatch and combine send a token once to each chip its experts
lie on: `ranks`, bound by the model's `experts:` under its routing, min(k, ep) spread and
ep (1 - C(E - E/ep, k)/C(E, k)) uniform."""

from __future__ import annotations

import io
import itertools
import json
import shutil
from fractions import Fraction
from math import comb
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rooflinec.assemble import catalog_or_raise
from rooflinec.catalog import Deployment
from rooflinec.cli.main import main
from rooflinec.engine.compiler import compile_catalog
from rooflinec.engine.experts import rerouted
from rooflinec.formulas import EvaluationError, FormulaError, parse_formula
from rooflinec.formulas.evaluate import unreached
from rooflinec.formulas.latex import _tex
from rooflinec.formulas.limits import MAX_UNREACHED_ACTIVE
from rooflinec.formulas.substitute import substituted
from rooflinec.formulas.vectorised import evaluate_float
from rooflinec.resources import bundled_specs_dir

RANKS = "ep*(1 - unreached(E, k, E/ep))"
ROUTED = ("deepseek-v3", "qwen3-235b-a22b", "gpt-oss-120b", "mixtral-8x7b")


@pytest.fixture(scope="module")
def compiled():  # type: ignore[no-untyped-def]
    return compile_catalog(catalog_or_raise(bundled_specs_dir()))


def _chips_reached(experts: int, active: int, ep: int) -> Fraction:
    """The mean number of chips a token's experts lie on, over every set of `active`
    distinct experts of `experts`, chip c holding experts c*E/ep .. (c+1)*E/ep - 1."""
    group = experts // ep
    sets = list(itertools.combinations(range(experts), active))
    reached = sum(len({e // group for e in chosen}) for chosen in sets)
    return Fraction(reached, len(sets))


@settings(max_examples=120, deadline=None)
@given(
    st.integers(1, 9).flatmap(
        lambda e: st.tuples(
            st.just(e),
            st.integers(0, e),
            st.sampled_from([d for d in range(1, e + 1) if e % d == 0]),
        )
    )
)
def test_uniform_ranks_is_the_mean_over_every_choice(case: tuple[int, int, int]) -> None:
    """ep (1 - unreached(E, k, E/ep)) equals the mean, over every k-set of experts, of the
    chips it touches, counted by enumeration (E up to 9)."""
    experts, active, ep = case
    formula = parse_formula(RANKS, ["E", "k", "ep"], reserved=(), engine=True)
    value = formula.evaluate({"E": experts, "k": active, "ep": ep})
    assert _chips_reached(experts, active, ep) == value


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 300), st.data())
def test_unreached_is_the_ratio_of_binomials(experts: int, data: st.DataObject) -> None:
    """unreached(E, k, g) = C(E - g, k) / C(E, k) exactly, and the float path agrees."""
    active = data.draw(st.integers(0, min(experts, 64)))
    group = data.draw(st.integers(0, experts))
    exact = unreached(experts, active, group)
    assert Fraction(comb(experts - group, active), comb(experts, active)) == exact
    formula = parse_formula("unreached(E, k, g)", ["E", "k", "g"], reserved=(), engine=True)
    floats = evaluate_float(formula, {"E": float(experts), "k": float(active), "g": float(group)})
    assert float(exact) == pytest.approx(float(np.asarray(floats)), rel=1e-12, abs=1e-300)


def test_deepseek_v3_reaches_5_295_chips_at_ep_8() -> None:
    """256 experts, 8 a token, ep = 8: 8 (1 - C(224, 8)/C(256, 8)) = 5.294652 chips."""
    formula = parse_formula(RANKS, ["E", "k", "ep"], reserved=(), engine=True)
    value = formula.evaluate({"E": 256, "k": 8, "ep": 8})
    assert 8 * (1 - Fraction(comb(224, 8), comb(256, 8))) == value
    assert "5.294652" == f"{float(value):.6f}"
    assert 1 == formula.evaluate({"E": 256, "k": 8, "ep": 1})  # one chip: the token's own


def test_unreached_refuses_what_it_cannot_count() -> None:
    """Whole numbers within E, and at most `MAX_UNREACHED_ACTIVE` experts a token; spec
    text cannot call it."""
    with pytest.raises(EvaluationError, match="whole numbers"):
        unreached(256, 8, Fraction(256, 3))
    with pytest.raises(EvaluationError, match="needs E >= k >= 0, E >= g >= 0"):
        unreached(8, 2, 9)
    with pytest.raises(EvaluationError, match="up to 4,096"):
        unreached(10**6, MAX_UNREACHED_ACTIVE + 1, 2)
    assert 0 == unreached(8, 7, 2)  # six experts elsewhere cannot hold seven
    with pytest.raises(FormulaError, match="function 'unreached' is not allowed"):
        parse_formula("unreached(E, k, g)", ["E", "k", "g"])


def test_substituted_keeps_the_text_as_written() -> None:
    """Only the name is replaced, in parentheses: not a prefix of another name."""
    assert "b*s*(min(k, ep))*h + ranks2" == substituted(
        "b*s*ranks*h + ranks2", {"ranks": "min(k, ep)"}
    )


def test_the_page_writes_the_binomials() -> None:
    formula = parse_formula("unreached(E, k, g)", ["E", "k", "g"], reserved=(), engine=True)
    assert r"\frac{\binom{E - g}{k}}{\binom{E}{k}}" == _tex(formula._tree)


@pytest.mark.parametrize("model_id", ROUTED)
@pytest.mark.parametrize("routing", ["spread", "uniform"])
def test_dispatch_bytes_follow_the_law(compiled, model_id: str, routing: str) -> None:  # type: ignore[no-untyped-def]
    """Every bundled routed model's dispatch and combine, at every ep dividing its experts
    up to 8 (tp = ep): (ep - 1)/ep x b x s x ranks x h values per chip and layer, at the
    model's precision, ranks written out here independently of the engine."""
    engine = compiled.model_engine
    model = rerouted(compiled.catalog.models[model_id], routing)
    assert model.experts is not None
    experts, active = model.experts.count, model.experts.active
    h = model.parameters["h"]
    device = compiled.devices["nvidia-h200-sxm"]
    width = compiled.catalog.precisions[model.precision].bytes
    phase = next(p for p, v in model.phases.items() if v["b"] > 1 and v["s"] == 1)
    b, s = model.phases[phase]["b"], model.phases[phase]["s"]
    for ep in (2, 4, 8):
        if experts % ep:
            continue
        if routing == "spread":
            ranks: Fraction = Fraction(min(active, ep))
        else:
            ranks = ep * (
                1 - Fraction(comb(experts - experts // ep, active), comb(experts, active))
            )
        deployment = Deployment(tp=ep, ep=ep)
        row = engine.evaluate(
            model,
            phase,
            device,
            model.precision,
            deployment=deployment,
            links=engine.links(device.id),
        )
        for sid in ("dispatch", "combine"):
            step = next(x for x in model.steps if x.id == sid)
            count = step.count.evaluate(model.variables(phase, deployment))
            found = row.step(sid)
            assert found is not None
            expected = count * Fraction(ep - 1, ep) * width * b * s * ranks * h
            assert {"scale_up": expected} == found.bytes, (model_id, routing, ep, sid)


def test_spread_sends_a_token_once_per_chip_not_per_expert(compiled) -> None:  # type: ignore[no-untyped-def]
    """DeepSeek-V3 at ep = 4: 4 copies of a token, not its 8 experts' 8, so half the
    bytes of one copy per token-expert pair: 39,911,424 B over 58 layers at FP8."""
    engine = compiled.model_engine
    model = compiled.catalog.models["deepseek-v3"]
    row = engine.evaluate(
        model,
        "decode-b32-l4096",
        compiled.devices["nvidia-h200-sxm"],
        "fp8",
        deployment=Deployment(tp=8, ep=4),
        links=engine.links("nvidia-h200-sxm"),
    )
    step = row.step("dispatch")
    assert step is not None
    assert 39_911_424 == step.bytes["scale_up"]
    pairs = 58 * Fraction(3, 4) * 32 * 8 * 7168
    assert pairs / 2 == step.bytes["scale_up"]


def test_explain_shows_the_binding(tmp_path: Path) -> None:
    """`explain` writes the shape with the experts' binding of ranks in its place."""
    out = io.StringIO()
    args = ["explain", "--model", "deepseek-v3", "--phase", "decode-b32-l4096"]
    args += ["--device", "nvidia-h200-sxm", "--precision", "fp8", "--tp", "8", "--ep", "4"]
    assert 0 == main(args, out=out)
    text = out.getvalue()
    assert "m = b*s*(min(k, ep))*h = 917,504" in text


def test_uniform_routing_in_a_spec_moves_fewer_bytes(tmp_path: Path) -> None:
    """A spec that routes uniformly compiles its dispatch as a fraction of a token's
    copies: DeepSeek-V3 on an HGX H200 (tp = ep = 8) sends 61,634,154.43 B, where
    spread routing sends 93,126,656 B."""
    specs = tmp_path / "specs"
    shutil.copytree(bundled_specs_dir(), specs)
    spec = specs / "models" / "deepseek-v3.yaml"
    text = spec.read_text("utf-8")
    start = text.index("experts: {")
    end = text.index("}", start) + 1
    spec.write_text(
        text[:start] + text[start : end - 1] + ", routing: uniform}" + text[end:], "utf-8"
    )
    found = {}
    for folder in (specs, bundled_specs_dir()):
        out = io.StringIO()
        args = ["compile", "--specs", str(folder), "--model", "deepseek-v3", "--format", "json"]
        args += ["--device", "nvidia-h200-sxm", "--precision", "fp8", "--tp", "8", "--ep", "8"]
        args += ["--phase", "decode-b32-l4096"]
        assert 0 == main(args, out=out), out.getvalue()
        (row,) = json.loads(out.getvalue())["models"]
        found[folder] = next(s for s in row["steps"] if s["step"] == "dispatch")
    assert {"scale_up": pytest.approx(61_634_154.43, abs=0.01)} == found[specs]["bytes"]
    assert {"scale_up": 93_126_656} == found[bundled_specs_dir()]["bytes"]
