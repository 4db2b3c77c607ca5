"""Measured serving results beside their bounds: the check, the bounds' values, the
bundled public data, the calibrated estimate and `rooflinec validate`."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import shutil
import statistics
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest

from rooflinec.assemble import catalog_or_raise
from rooflinec.catalog import RequestShape
from rooflinec.cli.main import main
from rooflinec.engine.calibration import absolute_error, calibrate
from rooflinec.engine.compiler import Compiled, compile_catalog
from rooflinec.engine.memory import device_capacity
from rooflinec.engine.models import RunPoint
from rooflinec.engine.requests import _pass, evaluate_request
from rooflinec.engine.serving import RATES, TIMES, ServingPoint, _plan_work, serving_points
from rooflinec.outputs.accuracy import POINT_FIELDS
from tests.specfactory import BUNDLED


@pytest.fixture(scope="module")
def bundled() -> Compiled:
    return compile_catalog(catalog_or_raise(BUNDLED))


@pytest.fixture(scope="module")
def points(bundled: Compiled) -> tuple[ServingPoint, ...]:
    return serving_points(bundled.model_engine)


def _note(p: ServingPoint) -> str:
    return p.result.note or ""


def _find(points: tuple[ServingPoint, ...], row: str, metric: str) -> ServingPoint:
    """The point of reference row `row` (S1-05, …: each entry's note starts with it)."""
    found = [p for p in points if _note(p).startswith(row + ":") and p.metric == metric]
    assert len(found) == 1, (row, metric)
    return found[0]


# ---------------------------------------------------------------------- the bundled data


def test_bundled_results_cover_five_devices(bundled: Compiled) -> None:
    """At least 80 public serving results on at least 5 devices are bundled."""
    results = [r for m in bundled.catalog.models.values() for r in m.serving]
    assert len(results) >= 80
    assert len({r.device for r in results}) >= 5


def test_every_bundled_point_holds_or_names_its_technique(
    points: tuple[ServingPoint, ...],
) -> None:
    """No bundled figure beats its bound without a technique, and each has a bound."""
    beaten = [p for p in points if p.beats and p.result.technique is None]
    assert [] == beaten
    assert [] == [p for p in points if p.problem is not None]
    assert all(p.bound is not None for p in points if p.metric != "energy")


def test_medusa_point_beats_the_plain_bound_and_holds_the_speculative_one(
    bundled: Compiled, points: tuple[ServingPoint, ...]
) -> None:
    """Llama 3.1 405B at 108 tokens/s per user on an HGX H200 (Medusa) is faster than one
    token a pass allows (about 95 tokens/s at FP8 weights), and within k + 1 = 5 a pass."""
    p = _find(points, "S10-01", "user_rate")
    assert p.result.technique is not None and "Medusa" in p.result.technique
    assert {"speculation", "input", "output", "precision"} <= set(p.result.assumed)
    assert p.ratio is not None and p.ratio >= 1
    engine = bundled.model_engine
    r = p.result
    plain = evaluate_request(
        engine, p.model, r.device, r.precision, r.deployment, 1, RequestShape(r.input, r.output)
    )
    assert plain.tokens_per_second_per_user is not None
    assert 90 < plain.tokens_per_second_per_user < Fraction(108)
    assert p.bound is not None and p.bound > 4 * plain.tokens_per_second_per_user


# ---------------------------------------------------------------------- the bounds' values


def test_itl_bound_is_the_batch_one_request_mean(
    bundled: Compiled, points: tuple[ServingPoint, ...]
) -> None:
    """`itl` is bounded by the exact mean of a batch-1 request's decode passes, and its
    per-user rate by the inverse; both at time_overlapped (2 x H100, tp 2: all-reduces)."""
    p = _find(points, "S1-01", "itl")
    r = p.result
    found = evaluate_request(
        bundled.model_engine,
        p.model,
        r.device,
        r.precision,
        r.deployment,
        1,
        RequestShape(r.input, r.output),
    )
    assert found.itl == p.bound
    assert p.batch == 1
    assert p.regime == "dram"
    assert p.ratio == p.measured / found.itl


def test_resident_batch_is_the_kv_cache_beside_the_weights(
    bundled: Compiled, points: tuple[ServingPoint, ...]
) -> None:
    """At concurrency 250, 5,000 tokens in, the output-rate bound is at the most sequences
    whose cache at 5,001 keys fits beside the weights on one 80 GB chip of two (tp 2,
    FP8: 8 KV heads over 2 chips, 80 layers, 128 values a head, 1 B each)."""
    p = _find(points, "S1-08", "output_rate")
    model = bundled.catalog.models[p.model]
    assert model.memory is not None
    scope = {**model.parameters, "b": 1, "s": 1, "L": 5001, "tp": 2, "pp": 1, "ep": 1, "w": 1}
    weights = model.memory.weights.evaluate(scope)
    per_token = 2 * 80 * (8 // 2) * 128 * 1
    capacity = device_capacity(bundled.catalog.devices["nvidia-h100-sxm"])
    assert capacity is not None
    expected = min(250, int((capacity - weights) // (5001 * per_token)))
    assert 100 < expected < 250
    assert expected == p.batch


def test_output_rate_bound_sums_every_pass(
    bundled: Compiled, points: tuple[ServingPoint, ...]
) -> None:
    """The static-batch bound of Llama 2 7B on an H100 (80 x 2,048 in, 128 out) is b x
    output over max(Σ operations / peak, Σ decode bytes / bandwidth), each pass summed one
    by one here (the engine sums the decode passes in closed form)."""
    p = _find(points, "S2-07", "output_rate")
    r = p.result
    engine = bundled.model_engine
    model = bundled.catalog.models[p.model]
    figures = engine.devices[r.device]
    flops: dict[str, Fraction] = {}
    prefill = _pass(engine, model, RunPoint(80, 2048, 2048), figures, "fp8", r.deployment)
    assert prefill.plan is not None
    _plan_work(prefill.plan, flops)
    dram = Fraction(0)
    for keys in range(2049, 2048 + 128):
        one = _pass(engine, model, RunPoint(80, 1, keys), figures, "fp8", r.deployment)
        assert one.plan is not None
        dram += _plan_work(one.plan, flops)
    seconds = max(
        sum((f / figures.peaks[k] for k, f in flops.items()), Fraction(0)),
        dram / figures.bandwidths["dram"],
    )
    assert 80 * 128 / seconds == p.bound
    assert p.batch == 80


def test_ttft_bound_is_the_batch_one_prefill(
    bundled: Compiled, points: tuple[ServingPoint, ...]
) -> None:
    """A first-token row (one output token) is bounded by the batch-1 prefill alone."""
    p = _find(points, "S2-41", "ttft")
    r = p.result
    assert r.output == 1
    found = evaluate_request(
        bundled.model_engine, p.model, r.device, r.precision, r.deployment, 1, RequestShape(2048, 1)
    )
    assert found.ttft == p.bound


# ---------------------------------------------------------------------- the estimate


def _median_error(points: list[ServingPoint], values: list[float]) -> float:
    return statistics.median(
        absolute_error(v, float(p.measured)) for p, v in zip(points, values, strict=True)
    )


def test_estimate_fitted_on_half_beats_the_bound_on_the_rest(
    points: tuple[ServingPoint, ...],
) -> None:
    """Fitted on every other bundled figure, the estimate's median absolute percentage
    error on the others is below the bound's own there."""
    checked = [
        p
        for p in points
        if p.bound is not None and p.metric in TIMES | RATES and p.result.technique is None
    ]
    fit, rest = checked[::2], checked[1::2]
    fitted = calibrate(fit)
    estimates = [fitted.estimate(p) for p in rest]
    assert all(e is not None for e in estimates)
    estimate_error = _median_error(rest, [e.value for e in estimates if e is not None])
    bound_error = _median_error(rest, [float(p.bound) for p in rest if p.bound is not None])
    assert estimate_error < bound_error
    assert estimate_error < 0.5


def test_estimate_factor_is_the_geometric_mean_of_its_group(
    points: tuple[ServingPoint, ...],
) -> None:
    """One group's factor is the geometric mean of its ratios; the estimate of a rate is
    the bound over it."""
    group = [
        p
        for p in points
        if (p.device, p.metric, p.regime) == ("intel-gaudi2", "output_rate", "dram")
    ]
    assert len(group) >= 3
    fitted = calibrate(points)
    expected = math.exp(statistics.fmean(math.log(float(p.ratio)) for p in group if p.ratio))
    e = fitted.estimate(group[0])
    assert e is not None and group[0].bound is not None
    assert e.factor == pytest.approx(expected, rel=1e-12)
    assert e.value == pytest.approx(float(group[0].bound) / expected, rel=1e-12)
    assert e.scope == "device, metric and regime"


# ---------------------------------------------------------------------- check


def _copy(tmp_path: Path) -> Path:
    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    return specs


def test_check_rejects_a_result_faster_than_its_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An inter-token latency of 1 ms for Llama 3 70B on two H100s (its bound is about
    11.5 ms) is an error at its entry, naming the bound and the ratio."""
    specs = _copy(tmp_path)
    path = specs / "models" / "llama-3-70b.yaml"
    text = path.read_text("utf-8")
    assert text.count("itl: 18.58 ms") == 1
    path.write_text(text.replace("itl: 18.58 ms", "itl: 1 ms"), "utf-8")
    code = main(["check", "--specs", str(specs)])
    err = capsys.readouterr().out
    assert code == 1
    line = next(ln for ln in err.splitlines() if "better than its bound" in ln)
    number = 1 + text[: text.index("itl: 18.58 ms")].count("\n")
    assert re.match(rf".*llama-3-70b\.yaml:{number}:5: error: measured itl of model", line)
    assert "is 1 ms, better than its bound 11.46 ms (ratio 0.0873)" in line


def test_check_takes_a_faster_result_that_names_its_technique(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same figure with a technique named is shown, not refused."""
    specs = _copy(tmp_path)
    path = specs / "models" / "llama-3-70b.yaml"
    text = path.read_text("utf-8")
    path.write_text(
        text.replace("itl: 18.58 ms", 'itl: 1 ms, technique: "prefix caching"'), "utf-8"
    )
    assert main(["check", "--specs", str(specs)]) == 0
    capsys.readouterr()


# ---------------------------------------------------------------------- validate


def test_validate_json_has_every_point_and_summary(capsys: pytest.CaptureFixture[str]) -> None:
    """`validate --format json`: points with the fields the README names, summaries per
    device, metric and regime, and the leave-one-out errors."""
    assert main(["validate", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(POINT_FIELDS) == list(data["points"][0])
    assert len(data["points"]) >= 150
    assert {"device", "metric", "regime", "points", "median_ratio", "worst_ratio"} == set(
        data["summary"][0]
    )
    assert sum(g["points"] for g in data["summary"]) == sum(
        1 for p in data["points"] if p["ratio"] is not None
    )
    errors = data["estimate_error"]
    assert errors["all"]["median_ape"] < data["bound_error"]["all"]["median_ape"]
    assert len(errors["by_device"]) >= 5


def test_validate_csv_and_text(capsys: pytest.CaptureFixture[str]) -> None:
    """CSV: a header of the point fields, a row per figure; text ends with the errors."""
    assert main(["validate", "--format", "csv", "--model", "llama-2-7b"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert list(POINT_FIELDS) == rows[0]
    assert len(rows) == 1 + 29
    assert main(["validate", "--device", "intel-gaudi2"]) == 0
    out = capsys.readouterr().out
    assert "estimate's error, leave-one-out: median" in out
    assert "nvidia-h100-sxm" not in out


def test_validate_refuses_an_unknown_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--model", "no-such-model"]) == 2
    assert "unknown model 'no-such-model'" in capsys.readouterr().err


def test_plain_bound_of_a_result_is_what_replace_gives(bundled: Compiled) -> None:
    """A result's bound depends on its deployment: the S1 sweep at tp 2 is slower per
    token than the same requests at tp 4 would be (a sanity property of the bound)."""
    model = bundled.catalog.models["llama-3-70b"]
    r = next(x for x in model.serving if (x.note or "").startswith("S1-01:"))
    engine = bundled.model_engine
    two = evaluate_request(
        engine, model.id, r.device, "fp8", r.deployment, 1, RequestShape(r.input, r.output)
    )
    four = evaluate_request(
        engine,
        model.id,
        r.device,
        "fp8",
        replace(r.deployment, tp=4),
        1,
        RequestShape(r.input, r.output),
    )
    assert two.itl is not None and four.itl is not None and four.itl < two.itl


def test_readme_says_how_far_the_bound_and_the_estimate_sit(
    bundled: Compiled, points: tuple[ServingPoint, ...]
) -> None:
    """The README's first paragraph prints the Accuracy page's numbers: the results, the
    figures, the median ratio in all and per metric, and both median errors."""
    from rooflinec.outputs.accuracy import accuracy
    from tests.specfactory import REPO

    intro = (REPO / "README.md").read_text("utf-8").split("\n## ")[0]
    intro = " ".join(intro.split())
    found = accuracy(points)
    plain = [p for p in points if p.ratio is not None and p.result.technique is None]

    def median(metric: str | None) -> str:
        ratios = [float(p.ratio) for p in plain if metric in (None, p.metric) and p.ratio]
        return f"{statistics.median(ratios):.3g}x"

    results = sum(len(m.serving) for m in bundled.catalog.models.values())
    devices = len({p.device for p in points})
    assert found.bound_all is not None and found.estimate_all is not None
    assert f"beside {results} public measured serving results" in intro
    words = ["", "one", "two", "three", "four", "five", "six"]
    assert f"({len(plain)} figures on {words[devices]} devices)" in intro
    assert f"a median {median(None)} from its bound" in intro
    assert f"output rates {median('output_rate')}, inter-token latencies {median('itl')}" in intro
    assert f"times to first token {median('ttft')}" in intro
    assert f"a median {found.estimate_all.median_ape * 100:.3g} % from measurement" in intro
    assert f"where the bound is {found.bound_all.median_ape * 100:.3g} %" in intro


def test_output_rate_place_on_the_frontier(bundled: Compiled) -> None:
    """An output rate's place on the frontier is the request's tokens/s per user at the
    bound's batch (as `compile --batch` derives it) beside the bound per chip."""
    shown = serving_points(bundled.model_engine)
    p = _find(shown, "S1-03", "output_rate")
    r = p.result
    assert p.batch == 25
    found = evaluate_request(
        bundled.model_engine,
        p.model,
        r.device,
        r.precision,
        r.deployment,
        25,
        RequestShape(r.input, r.output),
    )
    assert found.tokens_per_second_per_user == p.user_rate_at_batch
    assert p.bound is not None and p.chip_rate == p.bound / 2
    # `check` reads neither the frontier place nor the decode regimes
    plain = _find(serving_points(bundled.model_engine, regimes=False), "S1-03", "output_rate")
    assert plain.user_rate_at_batch is None and plain.regime is None
    assert plain.bound == p.bound
