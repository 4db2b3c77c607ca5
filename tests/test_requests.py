"""Requests (DESIGN v3, "Requests and `plan`"): the engine's passes at any run variables,
the decode passes summed in closed form against one by one, the request's figures, and
the cost and energy formulas (llm-analysis' cost per 1k tokens as a reference)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rooflinec.assemble import catalog_or_raise
from rooflinec.catalog import DEFAULT_REQUESTS, ONE_CHIP, Deployment, Speculation
from rooflinec.engine.compiler import Compiled, compile_catalog
from rooflinec.engine.models import DeploymentError, RunPoint
from rooflinec.engine.requests import (
    RequestBatch,
    RequestShape,
    decode_sum,
    evaluate_request,
    joules_per_token,
    pass_time,
    series,
    tokens_per_second_per_kw,
    usd_per_million_tokens,
)
from tests.specfactory import BUNDLED, copy_bundled, windowed_llama

DEVICES = ("nvidia-h100-sxm", "google-tpu-v5e", "amd-mi300x")
DEPLOYMENTS = (ONE_CHIP, Deployment(tp=2), Deployment(tp=8), Deployment(tp=2, pp=2))
SHAPES = (
    RequestShape(1024, 1),
    RequestShape(1024, 2),
    RequestShape(7, 2),
    RequestShape(100, 60),
    RequestShape(2000, 33),
)


@pytest.fixture(scope="module")
def bundled() -> Compiled:
    return compile_catalog(catalog_or_raise(BUNDLED))


def _runs(compiled: Compiled) -> list[tuple[str, Deployment, str]]:
    """(model, deployment, device) of every bundled model the deployments can run."""
    engine = compiled.model_engine
    out = []
    for model in compiled.catalog.models.values():
        for deployment in DEPLOYMENTS:
            if engine.deployment_problem(model, deployment) is not None:
                continue
            for device in DEVICES:
                if model.precision not in compiled.devices[device].peaks:
                    continue
                if engine.fabric_problem(model, device, deployment) is not None:
                    continue
                out.append((model.id, deployment, device))
    return out


# --- passes at run variables ----------------------------------------------------------------


def test_a_run_point_is_the_named_phase(bundled: Compiled) -> None:
    """A pass at a phase's own b, s and L is that phase's row: the same time, overlapped
    time, operations, bytes and tokens, for every phase of every bundled model."""
    engine = bundled.model_engine
    for model_id, deployment, device in _runs(bundled):
        model = bundled.catalog.models[model_id]
        for phase, v in model.phases.items():
            named = engine.row(model_id, phase, device, model.precision, deployment)
            point = RunPoint(v["b"], v["s"], v["L"])
            at = engine.evaluate(
                model,
                point,
                bundled.devices[device],
                model.precision,
                engine.latencies.get(device),
                deployment=deployment,
            )
            expected = (named.time, named.time_overlapped, named.flops, named.bytes, named.tokens)
            # A verify phase yields b x its tokens per verify pass; a run point, b x s
            tokens = at.tokens if phase not in model.speculation else named.tokens
            assert expected == (at.time, at.time_overlapped, at.flops, at.bytes, tokens)
            assert str(point) == at.phase


def test_series_is_the_sum() -> None:
    """The forward-difference series sums a polynomial over an integer range exactly."""
    poly = (Fraction(3, 7), Fraction(-2), Fraction(5, 3), Fraction(1, 11))
    for first, last in ((1, 1), (5, 40), (-3, 12), (10, 9)):
        expected = sum(
            (sum(c * x**i for i, c in enumerate(poly)) for x in range(first, last + 1)),
            Fraction(0),
        )
        assert expected == series(poly, first, last)


# --- the decode passes: closed form against one by one --------------------------------------


def test_closed_form_is_the_sum_of_every_pass(bundled: Compiled) -> None:
    """For every bundled model at several deployments, devices, batches and shapes
    (output 1 and 2 among them), the closed form's sum is the sum of the decode passes
    evaluated one by one, exactly; the closed form holds for every bundled model, and
    some of these sums have more than one piece (a ceiling changes inside the range)."""
    engine = bundled.model_engine
    pieces = 0
    for model_id, deployment, device in _runs(bundled):
        model = bundled.catalog.models[model_id]
        figures = bundled.devices[device]
        for batch in (1, 64):
            for shape in SHAPES:
                at = RequestBatch(model, model.precision, deployment, batch, shape)
                closed = decode_sum(engine, figures, at)
                each = decode_sum(engine, figures, at, closed=False)
                assert each.total == closed.total, (model_id, deployment, device, batch, shape)
                assert closed.closed
                assert sum(p.last - p.first + 1 for p in closed.pieces) == shape.output - 1
                pieces = max(pieces, len(closed.pieces))
    assert pieces > 1


@given(
    st.integers(1, 3000),
    st.integers(1, 60),
    st.sampled_from((1, 3, 17, 256)),
    st.sampled_from(DEVICES),
    st.sampled_from((ONE_CHIP, Deployment(tp=4))),
)
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_closed_form_on_random_shapes(
    bundled: Compiled,
    input: int,
    output: int,
    batch: int,
    device: str,
    deployment: Deployment,
) -> None:
    """Llama 3 8B: the closed form equals the one-by-one sum on random shapes."""
    engine = bundled.model_engine
    model = bundled.catalog.models["llama-3-8b"]
    figures = bundled.devices[device]
    shape = RequestShape(input, output)
    args = (engine, figures, RequestBatch(model, model.precision, deployment, batch, shape))
    assert decode_sum(*args, closed=False).total == decode_sum(*args).total


def test_a_window_falls_back_to_one_by_one(tmp_path: Path) -> None:
    """Attention over a window `min(L, 8192)` (every phase's L within it) is not a
    polynomial in L: the passes are evaluated in turn (not closed), and their sum still
    equals the passes'."""
    specs = copy_bundled(tmp_path)
    path = specs / "models" / "llama-3-8b.yaml"
    text = path.read_text("utf-8")
    windowed = text.replace("shape: {b: b, s: s, L: L,", 'shape: {b: b, s: s, L: "min(L, 8192)",')
    assert windowed != text
    path.write_text(windowed, "utf-8")
    compiled = compile_catalog(catalog_or_raise(specs))
    engine = compiled.model_engine
    model = compiled.catalog.models["llama-3-8b"]
    figures = compiled.devices["nvidia-h100-sxm"]
    shape = RequestShape(8000, 400)
    found = decode_sum(engine, figures, RequestBatch(model, "bf16", ONE_CHIP, 4, shape))
    assert not found.closed
    expected = sum(
        (
            pass_time(
                engine.evaluate(
                    model,
                    RunPoint(4, 1, keys),
                    figures,
                    "bf16",
                    engine.latencies.get(figures.id),
                )
            )
            for keys in range(8001, 8400)
        ),
        Fraction(0),
    )
    assert expected == found.total
    # Past the window every pass is the same
    assert found.pieces[-1].total == found.pieces[-2].total
    # More passes than are evaluated one by one: refused, not a hang
    with pytest.raises(DeploymentError, match="more than the 65,536 evaluated one by one"):
        decode_sum(
            engine, figures, RequestBatch(model, "bf16", ONE_CHIP, 4, RequestShape(8000, 70_000))
        )


@pytest.mark.parametrize(
    ("input", "output", "speculation"),
    [(400, 300, None), (100, 50, None), (600, 40, None), (500, 30, Speculation(3, Fraction(1, 2)))],
)
def test_a_windowed_kernel_is_summed_in_closed_form(
    tmp_path: Path, input: int, output: int, speculation: Speculation | None
) -> None:
    """Attention over a sliding window (kernel attention-kv-window, `min` and `max` of L
    and W in its formulas) is a polynomial in L on each side of the window: the decode
    passes are summed in closed form, piece by piece, and the sum is the passes' own,
    exactly, whether the range crosses the window (W = 512), stays below or above it."""
    compiled = compile_catalog(catalog_or_raise(windowed_llama(tmp_path)))
    engine = compiled.model_engine
    model = compiled.catalog.models["llama-3-8b"]
    for device in ("nvidia-h100-sxm", "google-tpu-v5e"):
        figures = compiled.devices[device]
        shape = RequestShape(input, output, speculation)
        args = (engine, figures, RequestBatch(model, "bf16", ONE_CHIP, 4, shape))
        closed = decode_sum(*args)
        assert closed.closed
        assert decode_sum(*args, closed=False).total == closed.total
        if input < 512 < input + output:
            assert len(closed.pieces) > 1


# --- the request ------------------------------------------------------------------------------


def test_request_figures_follow_the_contract(bundled: Compiled) -> None:
    """ttft is the prefill pass at b, s = L = input; itl the mean of the decode passes;
    latency, the rates, cost and energy as DESIGN v3 writes them."""
    engine = bundled.model_engine
    deployment = Deployment(tp=8, chips=16)
    shape = RequestShape(1024, 5)
    r = evaluate_request(
        engine, "llama-3-70b", "nvidia-h100-sxm", "bf16", deployment, 8, shape, Fraction(5, 2)
    )
    model = bundled.catalog.models["llama-3-70b"]
    figures = bundled.devices["nvidia-h100-sxm"]
    latency = engine.latencies.get(figures.id)

    def at(s: int, keys: int) -> Fraction:
        point = RunPoint(8, s, keys)
        row = engine.evaluate(model, point, figures, "bf16", latency, deployment=deployment)
        return pass_time(row)

    assert at(1024, 1024) == r.ttft
    decode = [at(1, 1024 + j) for j in range(1, 5)]
    assert sum(decode, Fraction(0)) / 4 == r.itl
    assert r.ttft + sum(decode, Fraction(0)) == r.latency
    assert 1 / r.itl == r.tokens_per_second_per_user
    assert Fraction(8 * 5 * 2) / r.latency == r.tokens_per_second  # dp = 2
    assert r.tokens_per_second / 16 == r.tokens_per_second_per_chip
    assert Fraction(5, 2) * 16 / 3600 / r.tokens_per_second * 10**6 == r.usd_per_million_tokens
    assert r.price_source == "reader"
    power = bundled.catalog.devices["nvidia-h100-sxm"].power
    assert power is not None
    assert power.per_chip * 16 * r.latency / (8 * 5 * 2) == r.joules_per_token
    assert r.tokens_per_second / (power.per_chip * 16 / 1000) == r.tokens_per_second_per_kw
    assert (r.fits, r.needs_chips) == (True, None)
    assert (r.model, r.device, r.batch, r.input, r.output, r.chips) == (
        "llama-3-70b",
        "nvidia-h100-sxm",
        8,
        1024,
        5,
        16,
    )


def test_one_output_token_has_no_itl(bundled: Compiled) -> None:
    """output = 1: the prefill alone; no itl, no rate per user; latency = ttft; no price
    and no quoted one gives no cost."""
    r = evaluate_request(
        bundled.model_engine,
        "llama-3-8b",
        "nvidia-h100-sxm",
        "bf16",
        ONE_CHIP,
        1,
        RequestShape(512, 1),
    )
    assert (r.itl, r.tokens_per_second_per_user) == (None, None)
    assert r.ttft == r.latency
    assert 1 / r.latency == r.tokens_per_second
    assert (r.usd_per_million_tokens, r.price_source) == (None, None)


def test_a_request_that_does_not_fit(bundled: Compiled) -> None:
    """Llama 3 70B's 141 GB of weights on one 80 GB H100: does not fit, needs 2 chips
    (4 with 32 requests of 8k keys, as the decode-b32-l8192 phase's ledger)."""
    engine = bundled.model_engine
    small = evaluate_request(
        engine, "llama-3-70b", "nvidia-h100-sxm", "bf16", ONE_CHIP, 1, RequestShape(1024, 1024)
    )
    assert (small.fits, small.needs_chips) == (False, 2)
    big = evaluate_request(
        engine, "llama-3-70b", "nvidia-h100-sxm", "bf16", ONE_CHIP, 32, RequestShape(7168, 1025)
    )
    row = engine.row("llama-3-70b", "decode-b32-l8192", "nvidia-h100-sxm", "bf16")
    assert (False, row.needs_chips) == (big.fits, big.needs_chips)


def test_the_fit_counts_the_last_pass_keys(bundled: Compiled) -> None:
    """The ledger at L = input + output - 1: a batch that fits the prompt's keys but not
    the last pass's does not fit."""
    engine = bundled.model_engine
    fits = evaluate_request(
        engine, "llama-3-8b", "nvidia-l4", "bf16", ONE_CHIP, 1, RequestShape(8192, 1)
    )
    assert fits.fits is True
    longer = [
        evaluate_request(
            engine, "llama-3-8b", "nvidia-l4", "bf16", ONE_CHIP, b, RequestShape(1024, 16 * 1024)
        ).fits
        for b in (1, 4)
    ]
    assert longer == [True, False]


@pytest.mark.parametrize(
    ("batch", "shape", "error"),
    [
        (0, None, ValueError),
        (-1, None, ValueError),
        (1, Deployment(tp=3), DeploymentError),  # 32 query heads over 3 chips
    ],
)
def test_bad_requests_raise(
    bundled: Compiled, batch: int, shape: Deployment | None, error: type[Exception]
) -> None:
    """A batch below 1 and a deployment the model cannot run raise, as documented."""
    with pytest.raises(error):
        evaluate_request(
            bundled.model_engine,
            "llama-3-8b",
            "nvidia-h100-sxm",
            "bf16",
            shape or ONE_CHIP,
            batch,
            RequestShape(10, 10),
        )


@pytest.mark.parametrize(("input", "output"), [(0, 1), (1, 0), (-5, 3), (1, 10**7 + 1)])
def test_a_shape_has_from_one_to_ten_million_tokens(input: int, output: int) -> None:
    """A request shape's tokens are whole numbers from 1 to 10^7."""
    with pytest.raises(ValueError, match="a request has from 1 to 10,000,000 tokens"):
        RequestShape(input, output)


# --- named request shapes -------------------------------------------------------------------


def test_bundled_models_name_the_two_shapes(bundled: Compiled) -> None:
    """Every bundled model names chat-1k (1,024/1,024) and long-8k (8,192/1,024)."""
    expected = {"chat-1k": RequestShape(1024, 1024), "long-8k": RequestShape(8192, 1024)}
    for model in bundled.catalog.models.values():
        assert expected == model.requests, model.id


def test_a_model_without_requests_gets_the_defaults(tmp_path: Path) -> None:
    """A model spec that names no shapes gets the two defaults; one that names its own
    keeps only those, in its order."""
    specs = copy_bundled(tmp_path)
    for name, body in (
        ("llama-3-8b", ""),
        (
            "llama-2-7b",
            "requests:\n  rag: {input: 4000, output: 200}\n  one: {input: 1, output: 1}\n\n",
        ),
    ):
        path = specs / "models" / f"{name}.yaml"
        text = path.read_text("utf-8")
        start = text.index("requests:\n")
        end = text.index("\n\n", start) + 2
        path.write_text(text[:start] + body + text[end:], "utf-8")
    models = catalog_or_raise(specs).models
    assert DEFAULT_REQUESTS == models["llama-3-8b"].requests
    assert [("rag", RequestShape(4000, 200)), ("one", RequestShape(1, 1))] == list(
        models["llama-2-7b"].requests.items()
    )


# --- cost and energy --------------------------------------------------------------------------


def test_llm_analysis_cost_per_1k_tokens() -> None:
    """llm-analysis (examples/llama2/README.md at d841e40): Llama-2-70B on 2 × A100-80GB at
    $2.21 per GPU-hour, 25.6 tokens/s of decode: 1000 × 2.21 × 2 / 3600 / 25.6 = $0.0480
    per 1k tokens; its end-to-end 25.442 tokens/s would give $0.0483."""
    per_million = usd_per_million_tokens(Fraction("2.21"), 2, Fraction("25.6"))
    assert Fraction(1000) * Fraction("2.21") * 2 / 3600 / Fraction("25.6") == per_million / 1000
    assert "0.0480" == f"{float(per_million / 1000):.4f}"
    end_to_end = usd_per_million_tokens(Fraction("2.21"), 2, Fraction("25.442"))
    assert "0.0483" == f"{float(end_to_end / 1000):.4f}"


def test_energy_formulas() -> None:
    """Joules per token: power × chips × seconds over tokens; tokens/s per kW of board
    power: 8 chips at 700 W making 5,600 tokens/s make 1,000 tokens/s per kW."""
    assert Fraction(700 * 8 * 2, 1000) == joules_per_token(Fraction(700), 8, Fraction(2), 1000)
    assert Fraction(1000) == tokens_per_second_per_kw(Fraction(5600), Fraction(700), 8)


_COEFFS = st.lists(
    st.fractions(min_value=-1000, max_value=1000, max_denominator=50), max_size=4
).map(lambda cs: tuple(cs))


@given(_COEFFS, _COEFFS, st.sampled_from([1, -1, 0, 3, Fraction(-7, 3), Fraction(5, 11)]))
def test_polynomial_sum_is_the_coefficientwise_sum(
    p: tuple[Fraction, ...], q: tuple[Fraction, ...], scale: Fraction | int
) -> None:
    """The decode sum's p + scale·q (its shortcuts for a sum, a difference and a scaled
    ceiling) equals the coefficient-wise definition, trailing zeros trimmed."""
    from rooflinec.engine.requests import _add
    from rooflinec.engine.solve_poly import trim

    n = max(len(p), len(q))
    padded_p = [*p, *[Fraction(0)] * (n - len(p))]
    padded_q = [*q, *[Fraction(0)] * (n - len(q))]
    expected = trim([a + scale * b for a, b in zip(padded_p, padded_q, strict=True)])
    assert expected == _add(trim(p), trim(q), scale)
