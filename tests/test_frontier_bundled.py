"""The frontier of bundled models on bundled devices, against brute force over the whole
searched grid (exact Fractions, O(n²) dominance, nothing pruned), and the scaling book's
LLaMA 2-13B on 8 × TPU v5e as a reference."""

from __future__ import annotations

import re
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from rooflinec.catalog import Deployment
from rooflinec.engine.compiler import Compiled
from rooflinec.engine.frontier import (
    Point,
    Targets,
    best,
    device_frontier,
    grid,
    largest_batch,
)
from rooflinec.engine.requests import RequestShape, evaluate_request
from rooflinec.pipeline import compiled_or_raise
from tests.specfactory import BUNDLED

SHAPE = RequestShape(1024, 256)
CASES = [
    ("llama-3-70b", "nvidia-h100-sxm"),
    ("llama-3-70b", "amd-mi300x"),
    ("mixtral-8x7b", "nvidia-h100-sxm"),
    ("mixtral-8x7b", "amd-mi300x"),
    ("llama-3-8b", "google-tpu-v5e"),  # up to 64 chips: many deployments to prune
]
QUERIES = [
    (Targets(), "tokens-per-chip"),
    (Targets(min_user_rate=Fraction(20)), "tokens-per-chip"),
    (Targets(min_user_rate=Fraction(50), max_ttft=Fraction(1, 2)), "tokens-per-chip"),
    (Targets(max_latency=Fraction(10), max_chips=4), "energy"),
    (Targets(min_user_rate=Fraction(10**6)), "tokens-per-chip"),  # nothing meets it
    (Targets(min_user_rate=Fraction(30)), "cost"),
]


@pytest.fixture(scope="module")
def bundled() -> Compiled:
    return compiled_or_raise(BUNDLED)


def _key(p: Point) -> tuple[Deployment, int]:
    return p.deployment, p.result.batch


def brute_frontier(points: list[Point]) -> set[tuple[Deployment, int]]:
    """The Pareto set by definition on the exact figures: a point is kept unless another
    is at least as good on both axes and better on one, or exactly equal and first in
    the tie order (fewer chips, then tp, pp, ep, batch)."""
    kept = set()
    for p in points:
        pu, pc = p.result.tokens_per_second_per_user, p.result.tokens_per_second_per_chip
        assert pu is not None
        beaten = False
        for q in points:
            if q is p:
                continue
            qu, qc = q.result.tokens_per_second_per_user, q.result.tokens_per_second_per_chip
            assert qu is not None
            if qu >= pu and qc >= pc and (qu > pu or qc > pc or q.tie < p.tie):
                beaten = True
                break
        if not beaten:
            kept.add(_key(p))
    return kept


@pytest.mark.parametrize(("model", "device"), CASES)
def test_frontier_is_the_brute_force_set(bundled: Compiled, model: str, device: str) -> None:
    """Over the whole grid (every dp, nothing pruned) the brute-force Pareto set is the
    pruned search's frontier, point for point, with the same exact figures; every point
    of the grid fits, and one batch above each deployment's largest does not."""
    engine = bundled.model_engine
    precision = bundled.catalog.models[model].precision
    whole = device_frontier(engine, model, device, precision, SHAPE, prune=False)
    pruned = device_frontier(engine, model, device, precision, SHAPE)
    assert whole.points, "the grid has points"
    assert all(p.result.fits is True for p in whole.points)
    assert brute_frontier(list(whole.points)) == {_key(p) for p in whole.frontier}
    assert [_key(p) for p in whole.frontier] == [_key(p) for p in pruned.frontier]
    assert [p.result for p in whole.frontier] == [p.result for p in pruned.frontier]
    for g in whole.deployments:
        above = evaluate_request(
            engine, model, device, precision, g.deployment, g.max_batch + 1, SHAPE
        )
        assert above.fits is False, (g.deployment, g.max_batch)


@pytest.mark.parametrize(("model", "device"), CASES)
def test_queries_are_the_same_without_pruning(bundled: Compiled, model: str, device: str) -> None:
    """Each query's best point, `meets` and binding target over the pruned grid are those
    over the whole grid; and the best point is the brute-force best of every point
    meeting the targets."""
    engine = bundled.model_engine
    precision = bundled.catalog.models[model].precision
    prices = {device: Fraction(5, 2)}
    whole = device_frontier(engine, model, device, precision, SHAPE, prices[device], prune=False)
    pruned = device_frontier(engine, model, device, precision, SHAPE, prices[device])
    for targets, objective in QUERIES:
        a = best(whole, targets, objective)  # type: ignore[arg-type]
        b = best(pruned, targets, objective)  # type: ignore[arg-type]
        assert (a.meets, a.binding, a.note) == (b.meets, b.binding, b.note)
        assert (a.point and _key(a.point)) == (b.point and _key(b.point))
        meeting = [p for p in whole.points if _meets_exactly(p, targets)]
        if objective == "tokens-per-chip" and meeting:
            top = max(p.result.tokens_per_second_per_chip for p in meeting)
            assert a.point is not None and top == a.point.result.tokens_per_second_per_chip


def _meets_exactly(p: Point, t: Targets) -> bool:
    r = p.result
    assert r.tokens_per_second_per_user is not None
    return (
        (t.min_user_rate is None or r.tokens_per_second_per_user >= t.min_user_rate)
        and (t.max_ttft is None or r.ttft <= t.max_ttft)
        and (t.max_latency is None or r.latency <= t.max_latency)
        and (t.max_chips is None or r.deployment.total <= t.max_chips)
    )


def test_skipped_deployments_are_named(bundled: Compiled) -> None:
    """A deployment the model cannot take on the device is listed with its reason, not
    dropped silently: Llama 3 70B on one 80 GB H100 does not fit at batch 1."""
    engine = bundled.model_engine
    model = bundled.catalog.models["llama-3-70b"]
    _, skipped, problem = grid(engine, model, "nvidia-h100-sxm", "bf16", SHAPE)
    assert problem is None
    assert "batch 1 does not fit" == next(s.reason for s in skipped if s.deployment.total == 1)


# ---------------------------------------------------------------------- the scaling book

LLAMA_2_13B = {
    "layers": 40,  # 40 decoder layers
    "h": 5120,
    "hq": 40,
    "hkv": 40,  # multi-head attention: as many KV heads
    "f": 13824,
    "V": 32000,
}


@pytest.fixture(scope="module")
def with_13b(tmp_path_factory: pytest.TempPathFactory) -> Compiled:
    """The bundled catalog and a LLaMA 2-13B in the bundled Llama 2 7B's spec form."""
    specs = tmp_path_factory.mktemp("llama13b") / "specs"
    shutil.copytree(BUNDLED, specs)
    text = (BUNDLED / "models" / "llama-2-7b.yaml").read_text("utf-8")
    text = text.replace("id: llama-2-7b", "id: llama-2-13b").replace(
        "name: Llama 2 7B (multi-head attention, 32 layers)",
        "name: Llama 2 13B (multi-head attention, 40 layers)",
    )
    for name, value in LLAMA_2_13B.items():
        text = re.sub(rf"(?m)^  {name}: +\d+", f"  {name}: {value}", text)
    (specs / "models" / "llama-2-13b.yaml").write_text(text, "utf-8")
    return compiled_or_raise(specs)


SEQUENCE = RequestShape(1024, 8192 - 1024 + 1)  # its last decode pass holds 8,192 keys


def test_scaling_book_llama_2_13b_sizes(with_13b: Compiled) -> None:
    """The book's inputs hold for the spec: 26 GB of weights and 6.7 GB of KV cache per
    8,192-token sequence (6,710,886,400 B) at BF16."""
    model = with_13b.catalog.models["llama-2-13b"]
    assert model.memory is not None
    scope = {**model.parameters, "tp": 1, "pp": 1, "ep": 1, "dp": 1, "w": 2}
    assert model.memory.kv_per_token is not None
    assert 6_710_886_400 == model.memory.kv_per_token.evaluate(scope) * 8192
    weights = model.memory.weights.evaluate(scope)
    assert 26 * 10**9 <= weights < Fraction(2605, 100) * 10**9


def test_scaling_book_llama_2_13b_largest_batch_on_8_v5e(with_13b: Compiled) -> None:
    """On 8 × TPU v5e (16 GB each) the largest batch at 8,192 keys is 13 with the default
    10 % reserve ((115.2 − 26) / 6.71 = 13.3) and 15 with none; batch 13 fits, 14 and
    16 do not, and no 8-chip point of the frontier has a batch above 13."""
    engine = with_13b.model_engine
    model = with_13b.catalog.models["llama-2-13b"]
    eight = Deployment(8, 1, 1, 8)  # as the grid writes it: the chips given
    device = "google-tpu-v5e"
    assert 13 == largest_batch(engine, model, device, "bf16", eight, SEQUENCE)
    assert model.memory is not None
    from dataclasses import replace

    bare = replace(model, memory=replace(model.memory, reserve=Fraction(0)))
    assert 15 == largest_batch(engine, bare, device, "bf16", eight, SEQUENCE)
    for batch, fits in ((1, True), (8, True), (13, True), (14, False), (16, False)):
        r = evaluate_request(engine, "llama-2-13b", device, "bf16", eight, batch, SEQUENCE)
        assert fits is r.fits, batch
    found = device_frontier(engine, "llama-2-13b", device, "bf16", SEQUENCE)
    on_eight = [g for g in found.deployments if g.deployment == eight]
    assert [(1, 2, 4, 8, 13)] == [g.batches for g in on_eight]
    assert all(p.result.fits for p in found.frontier)
    assert all(p.result.batch <= 13 for p in found.frontier if p.deployment == eight)
    assert all(p.result.batch <= 13 for p in found.points if p.deployment == eight)


def test_scaling_book_weights_dominate_at_batch_1(with_13b: Compiled, tmp_path: Path) -> None:
    """At batch 1 on 8 chips a decode pass reads at least the book's 26 GB of weights
    over 8 × 0.82 TB/s (4.98 ms including the cache in the book; the catalog's v5e
    bandwidth is 819 GB/s): the roofline's itl is no less than the weights' read."""
    engine = with_13b.model_engine
    r = evaluate_request(
        engine, "llama-2-13b", "google-tpu-v5e", "bf16", Deployment(tp=8), 1, SEQUENCE
    )
    assert r.itl is not None
    assert r.itl >= Fraction(26 * 10**9, 8 * 819 * 10**9)


def test_a_pass_the_engine_refuses_is_named_not_fatal(bundled: Compiled) -> None:
    """A point whose passes the engine refuses (`DeploymentError`) is left out and listed
    among the skipped with its batch and reason; the other points still make a frontier."""
    from rooflinec.engine.models import DeploymentError

    def refusing(*args: object) -> object:
        batch = args[5]
        if batch == 2:
            raise DeploymentError("refused for the test")
        return evaluate_request(*args)  # type: ignore[arg-type]

    engine = bundled.model_engine
    found = device_frontier(
        engine,
        "llama-3-8b",
        "amd-mi300x",
        "bf16",
        SHAPE,
        evaluate=refusing,  # type: ignore[arg-type]
    )
    assert found.frontier
    assert all(p.result.batch != 2 for p in found.points)
    reasons = [s.reason for s in found.skipped]
    assert "batch 2: refused for the test" in reasons
