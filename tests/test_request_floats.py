"""The float path of requests (`rooflinec.engine.request_floats`): every figure within a
few units in the last place of the exact engine's on bundled models and devices, the
closed-form decode sum against summing pass by pass, and the deployments it clears
against the exact check."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rooflinec.catalog import Deployment, Model, Speculation
from rooflinec.engine.compiler import Compiled
from rooflinec.engine.experts import rerouted
from rooflinec.engine.frontier import MAX_CHIPS, deployments, grid
from rooflinec.engine.models import DeploymentError
from rooflinec.engine.request_floats import (
    REL,
    RequestTimes,
    RequestWork,
    _decode_sum,
    clear_deployments,
    exact_passes,
    overlapped_sum,
    request_times,
    request_times_on,
)
from rooflinec.engine.requests import RequestBatch, RequestShape, request_passes
from rooflinec.formulas import parse_formula
from rooflinec.formulas.limits import MAX_UNPICKED_TOKENS
from rooflinec.formulas.vectorised import evaluate_float
from rooflinec.pipeline import compiled_or_raise
from tests.specfactory import BUNDLED, windowed_llama

SHAPE = RequestShape(1024, 256)
#: The same request decoded by speculation: verify passes of 4 tokens, 2.533 tokens each.
SPECULATED = RequestShape(1024, 256, Speculation(3, Fraction(7, 10)))
SHAPES = pytest.mark.parametrize("shape", [SHAPE, SPECULATED], ids=["plain", "speculated"])
# A fabric of each kind: a mesh with a link latency, in-network reduction with a launch
# floor, a torus of 64 chips, a mesh of two, no fabric at all.
DEVICES = (
    "amd-mi300x",
    "nvidia-h100-sxm",
    "google-tpu-v5e",
    "amd-mi250x",
    "nvidia-l40s",
    "nvidia-b200",
)
#: Points checked per model and device (spread over its grid): the exact engine takes
#: milliseconds a point.
SAMPLE = 24


@pytest.fixture(scope="module")
def bundled() -> Compiled:
    return compiled_or_raise(BUNDLED)


def _sampled(
    bundled: Compiled,
    shape: RequestShape = SHAPE,
    models: Iterable[Model] | None = None,
    devices: Sequence[str] = DEVICES,
) -> Iterator[tuple[Model, str, list[tuple[Deployment, int]], RequestWork, RequestTimes]]:
    """Every bundled model (or each of `models`) on a device of each fabric kind: `SAMPLE`
    points spread over its grid, their work and their times on the float path."""
    engine = bundled.model_engine
    for model in bundled.catalog.models.values() if models is None else models:
        for device in devices:
            found, _, problem = grid(engine, model, device, model.precision, shape)
            if problem is not None:
                continue
            pairs = [(g.deployment, b) for g in found for b in g.batches]
            pairs = pairs[:: max(1, len(pairs) // SAMPLE)]
            work = RequestWork(engine, model, model.precision, shape, pairs)
            times = request_times(
                work, engine.devices[device], engine.latencies.get(device), engine.links(device)
            )
            yield model, device, pairs, work, times


def _near_exact(
    bundled: Compiled,
    model: Model,
    device: str,
    times: RequestTimes,
    i: int,
    point: tuple[Deployment, int],
    shape: RequestShape,
    tolerance: Fraction,
) -> None:
    """Point i's ttft and decode time on the float path are within `tolerance`
    (relatively) of the exact engine's."""
    engine = bundled.model_engine
    d, b = point
    ttft, decoding = request_passes(
        engine, engine.devices[device], RequestBatch(model, model.precision, d, b, shape)
    )
    for got, exact in ((times.ttft[i], ttft), (times.decode[i], decoding)):
        assert abs(Fraction(float(got)) - exact) <= exact * tolerance


@SHAPES
def test_every_figure_is_the_exact_one_to_a_few_ulps(
    bundled: Compiled, shape: RequestShape
) -> None:
    """On every bundled model and a device of each fabric kind, the float path's ttft and
    decode time of points spread over the grid are within 2^-50 (relatively) of the exact
    engine's, and it declines none of them; decoded one token a pass or by speculation."""
    checked = 0
    for model, device, pairs, _, times in _sampled(bundled, shape):
        assert not times.declined.any()
        for i, point in enumerate(pairs):
            _near_exact(bundled, model, device, times, i, point, shape, Fraction(1, 2**50))
            checked += 1
    assert checked > 300


lines_strategy = st.lists(
    st.lists(
        st.tuples(st.integers(0, 50), st.integers(-6, 6)),
        min_size=1,
        max_size=4,
    ),
    min_size=1,
    max_size=3,
)


@settings(max_examples=300, deadline=None)
@given(lines_strategy, st.integers(1, 40), st.one_of(st.none(), st.integers(0, 300)))
def test_decode_sum_is_the_sum_pass_by_pass(
    steps: list[list[tuple[int, int]]], passes: int, talk: int | None
) -> None:
    """Σ over the passes of max(the steps' upper envelopes summed, the collectives' time)
    in closed form equals the sum pass by pass (small integers: both are exact)."""
    lines = [[(np.array([float(a + 400)]), np.array([float(s)])) for a, s in own] for own in steps]
    expected = 0
    for x in range(passes):
        memory = sum(max(a + 400 + s * x for a, s in own) for own in steps)
        expected += memory if talk is None else max(memory, talk)
    got, least = _decode_sum(
        lines,
        np.array([float(talk or 0)]),
        np.array([talk is not None]),
        passes,
    )
    assert float(expected) == pytest.approx(got[0], rel=1e-12)
    memories = [sum(max(a + 400 + s * x for a, s in own) for own in steps) for x in range(passes)]
    assert float(min(memories)) == least[0]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2*b*L*h", 1),
        ("b*s*h", 0),
        ("L*L + 3", 2),
        ("(L + 1)**2", 2),
        ("h/L", None),
        ("min(L, 4096)", None),
        ("ceil(h/128)*L", 1),
        ("max(hkv, 1)*L/2", 1),
    ],
)
def test_formula_degree_reads_the_tree(text: str, expected: int | None) -> None:
    """The degree in L whatever the other symbols: None where L sits in a divisor or a
    function."""
    formula = parse_formula(text, ("b", "L", "h", "s", "hkv"))
    assert expected == formula.degree({"L": 1})


def test_evaluate_float_matches_the_exact_value() -> None:
    """A formula over columns in float64 gives the exact value where it is a small whole
    number, ceilings and minima included."""
    formula = parse_formula("ceil(b*s/128)*min(h, 64) + b/2", ("b", "s", "h"))
    b = np.array([1.0, 2.0, 300.0])
    got = evaluate_float(formula, {"b": b, "s": 1000.0, "h": 80.0})
    expected = [formula.evaluate({"b": int(v), "s": 1000, "h": 80}) for v in b]
    assert [float(e) for e in expected] == list(np.asarray(got))


def test_cleared_deployments_have_no_problem(bundled: Compiled) -> None:
    """Every deployment of the widest grid the float check clears has no problem in the
    exact check, and its collectives' groups are the exact engine's; the float check
    clears most of them."""
    engine = bundled.model_engine
    for model in bundled.catalog.models.values():
        searched = list(deployments(model, MAX_CHIPS, prune=False))
        clear = clear_deployments(engine, model, searched)
        assert len(clear) >= len(searched) // 2
        for d, groups in clear.items():
            assert engine.deployment_problem(model, d) is None
            assert list(groups) == engine._groups(model, d)


def test_rel_is_far_above_the_float_error() -> None:
    """The tolerance within which figures are compared exactly is a million times the
    float path's error bound in the test above."""
    assert Fraction(REL) >= 2**20 * Fraction(1, 2**50)


def test_devices_together_give_each_device_s_own_figures(bundled: Compiled) -> None:
    """`request_times_on` works out every device's points in one array (the devices
    grouped by the levels they quote): each device's figures at its own points are the
    very floats `request_times` gives on that device alone, with its floors, and the
    points it was not asked for are declined."""
    engine = bundled.model_engine
    catalog = bundled.catalog
    devices = [d for d in catalog.devices if engine.devices.get(d) is not None]
    for model in catalog.models.values():
        pairs = [(d, b) for d in deployments(model, 8, prune=True) for b in (1, 7, 64)]
        work = RequestWork(engine, model, model.precision, SHAPE, pairs)
        usable = [
            d
            for d in devices
            if model.precision in catalog.devices[d].peaks
            and not grid(engine, model, d, model.precision, SHAPE)[2]
        ]
        roofs = [(engine.devices[d], engine.latencies.get(d), engine.links(d)) for d in usable]
        # Each device asks for every other point, from its own offset
        own = [np.arange(k % 2, work.size, 2, dtype=np.int64) for k in range(len(usable))]
        together = request_times_on(work, roofs, own)
        for k, roof in enumerate(roofs):
            alone = request_times(work, *roof)
            got, index = together[k], own[k]
            assert np.array_equal(got.ttft[index], alone.ttft[index], equal_nan=True)
            assert np.array_equal(got.decode[index], alone.decode[index], equal_nan=True)
            for name in ("declined", "prefill_talk", "decode_talk"):
                assert np.array_equal(getattr(got, name)[index], getattr(alone, name)[index])
            for mine, theirs in zip(got.floors, alone.floors, strict=True):
                assert [c for c, _ in mine] == [c for c, _ in theirs]
                for (_, held), (_, expected) in zip(mine, theirs, strict=True):
                    assert np.array_equal(held[index], expected[index])
            others = np.setdiff1d(np.arange(work.size), index)
            assert got.declined[others].all()


@SHAPES
def test_exact_passes_from_counts_are_the_engine_s(bundled: Compiled, shape: RequestShape) -> None:
    """Where the float path shows what holds every step (`exact_passes` is not None), the
    ttft and decode time it makes from the steps' exact counts are exactly the exact
    engine's (`request_passes`), on every bundled model and a device of each fabric
    kind, decoded one token a pass or by speculation; and it tells most points."""
    engine = bundled.model_engine
    told = asked = 0
    for model, device, pairs, work, times in _sampled(bundled, shape):
        figures, latency = engine.devices[device], engine.latencies.get(device)
        for i, (d, b) in enumerate(pairs):
            asked += 1
            got = exact_passes(work, times, i, figures, latency, engine.links(device))
            if got is None:
                continue
            told += 1
            expected = request_passes(
                engine, figures, RequestBatch(model, model.precision, d, b, shape)
            )
            assert (model.id, device, d, b, got) == (model.id, device, d, b, expected)
    assert told >= asked // 2


@given(
    first=st.fractions(min_value=0, max_value=100, max_denominator=1000),
    last=st.fractions(min_value=0, max_value=100, max_denominator=1000),
    talk=st.fractions(min_value=0, max_value=100, max_denominator=1000),
    passes=st.integers(1, 60),
)
def test_overlapped_sum_is_the_pass_by_pass_sum(
    first: Fraction, last: Fraction, talk: Fraction, passes: int
) -> None:
    """The closed form of Σ max(line, talk) over the passes equals summing pass by pass,
    exactly, whether the line rises, falls or stays, and wherever it crosses `talk`."""
    end = last if passes > 1 else first  # one pass: the line is its first point
    slope = (end - first) / (passes - 1) if passes > 1 else Fraction(0)
    expected = sum((max(first + slope * x, talk) for x in range(passes)), Fraction(0))
    assert expected == overlapped_sum(first, end, talk, passes)


@pytest.fixture(scope="module")
def windowed(tmp_path_factory: pytest.TempPathFactory) -> Compiled:
    """The bundled catalog with Llama 3 8B's attention over a sliding window of 512 keys
    (kernel attention-kv-window, whose formulas take `min` and `max` of L and W)."""
    return compiled_or_raise(windowed_llama(tmp_path_factory.mktemp("windowed")))


@pytest.mark.parametrize(
    "shape",
    [
        RequestShape(400, 300),  # the decode crosses the window
        RequestShape(100, 64),  # below it
        RequestShape(900, 64),  # past it
        RequestShape(480, 100, Speculation(3, Fraction(4, 5))),
    ],
    ids=["crossing", "below", "past", "speculated"],
)
def test_a_sliding_window_is_cut_into_lines(windowed: Compiled, shape: RequestShape) -> None:
    """A windowed model's decode is lines in L on each side of the window: the float
    path cuts it there (the same cuts for every point), its figures are the exact
    engine's to a few ulps, and where it shows what holds every step its exact sums are
    the engine's exactly."""
    engine = windowed.model_engine
    model = windowed.catalog.models["llama-3-8b"]
    told = 0
    for device in ("nvidia-h100-sxm", "amd-mi300x", "google-tpu-v5e"):
        found, _, problem = grid(engine, model, device, model.precision, shape)
        assert problem is None
        pairs = [(g.deployment, b) for g in found for b in g.batches]
        pairs = pairs[:: max(1, len(pairs) // SAMPLE)]
        work = RequestWork(engine, model, model.precision, shape, pairs)
        assert work.linear
        crossing = shape.input < 512 < shape.input + shape.output
        assert (len(work.decodes) > 1) == crossing
        figures, latency = engine.devices[device], engine.latencies.get(device)
        times = request_times(work, figures, latency, engine.links(device))
        assert not times.declined.any()
        for i, (d, b) in enumerate(pairs):
            expected = request_passes(
                engine, figures, RequestBatch(model, model.precision, d, b, shape)
            )
            for got, exact in zip((times.ttft[i], times.decode[i]), expected, strict=True):
                assert abs(Fraction(float(got)) - exact) <= exact * Fraction(1, 2**50)
            passes = exact_passes(work, times, i, figures, latency, engine.links(device))
            if passes is not None:
                told += 1
                assert expected == passes
    assert told > 0


def test_uniform_routing_stays_on_the_float_path(bundled: Compiled) -> None:
    """Under uniform routing the experts read (`X`) and the chips a token reaches
    (`ranks`) are fractions: the float path takes them (within 2^-40 of the exact
    engine's ttft and decode time on every routed model), and declines just the points
    the exact engine refuses (over 65,536 tokens a pass: no exact power)."""
    engine = bundled.model_engine
    checked = declined = 0
    uniform = [rerouted(m, "uniform") for m in bundled.catalog.models.values() if m.experts]
    devices = ("nvidia-h100-sxm", "amd-mi300x")
    for model, device, pairs, _, times in _sampled(bundled, SHAPE, uniform, devices):
        for i, (d, b) in enumerate(pairs):
            if b * SHAPE.input > MAX_UNPICKED_TOKENS:
                assert times.declined[i]
                with pytest.raises(DeploymentError, match="computed exactly up to"):
                    request_passes(
                        engine,
                        engine.devices[device],
                        RequestBatch(model, model.precision, d, b, SHAPE),
                    )
                declined += 1
                continue
            assert not times.declined[i]
            _near_exact(bundled, model, device, times, i, (d, b), SHAPE, Fraction(1, 2**40))
            checked += 1
    assert checked > 100
    assert declined > 0
