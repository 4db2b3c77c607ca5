"""`rooflinec solve --model M --phase PH --vary tp|b`: a model's pass over the
tensor-parallel degree (the degree from which it stays interconnect bound, the least at
which it fits) and the batch at which it stops fitting, on the bundled catalog."""

from __future__ import annotations

import io
import json
import re
import shutil
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rooflinec.catalog import INTERCONNECT_ROLES, Deployment
from rooflinec.cli.main import main
from rooflinec.engine import Roof
from rooflinec.engine.compiler import Compiled
from rooflinec.engine.evaluate import width_values
from rooflinec.engine.memory import evaluate_fit
from rooflinec.engine.solve_model import Degree, least_from_on, tp_bound
from rooflinec.engine.step_crossover import step_crossover
from rooflinec.pipeline import compiled_or_raise
from tests.measuredspecs import write_measured
from tests.specfactory import BUNDLED

H100 = "nvidia-h100-sxm"
LLAMA = "llama-3-70b"
DEGREE_KEYS = [
    "tp",
    "chips",
    "pp",
    "ep",
    "fits",
    "needs_chips",
    "time",
    "time_overlapped",
    "tokens_per_second",
    "limited_by",
    "interconnect_time",
    "interconnect_share",
    "collective_time",
    "collective_share",
]
# The figures a degree shares with `compile --tp N`'s row, to the bit.
ROW_KEYS = ["tp", "chips", "pp", "ep", "fits", "needs_chips", "time", "time_overlapped"]


def run(*argv: str, specs: Path = BUNDLED) -> tuple[int, str]:
    out = io.StringIO()
    code = main([*argv, "--specs", str(specs)], out)
    return code, out.getvalue()


def solve_json(*argv: str) -> dict[str, Any]:
    code, text = run("solve", *argv, "--format", "json")
    assert 0 == code, text
    data: dict[str, Any] = json.loads(text)
    return data


def compile_row(model: str, phase: str, device: str, *degrees: str) -> dict[str, Any]:
    """`compile --model M --phase PH --device D [degrees] --format json`'s one row."""
    code, text = run(
        "compile", "--model", model, "--phase", phase, "--device", device, *degrees,
        "--format", "json",
    )  # fmt: skip
    assert 0 == code
    (row,) = json.loads(text)["models"]
    result: dict[str, Any] = row
    return result


@pytest.fixture(scope="module")
def compiled() -> Compiled:
    """The bundled catalog, compiled once for the tests that read the engine itself."""
    return compiled_or_raise(BUNDLED)


@pytest.fixture(scope="module")
def decode_sweep() -> dict[str, Any]:
    return solve_json(
        "--model", LLAMA, "--phase", "decode-b1-l2048", "--device", H100, "--vary", "tp"
    )


@pytest.fixture(scope="module")
def prefill_sweep() -> dict[str, Any]:
    return solve_json(
        "--model", LLAMA, "--phase", "prefill-s2048", "--device", H100, "--vary", "tp"
    )


# --------------------------------------------------------------------------- --vary tp


def test_llama_3_70b_decode_fits_from_two_chips(decode_sweep: dict[str, Any]) -> None:
    """The 70B model's weights (70.6 GB) and a 2,048-key cache at b = 1 fit two 80 GB
    H100s, not one: tp = 1 does not fit (it needs 2 chips) and has no rate; tp = 2 is
    the least degree that fits."""
    first, second = decode_sweep["degrees"][:2]
    assert (1, False, 2, None) == (
        first["tp"],
        first["fits"],
        first["needs_chips"],
        first["tokens_per_second"],
    )
    assert (2, True) == (second["tp"], second["fits"])
    assert 2 == decode_sweep["least_fitting"]
    assert decode_sweep["fit_known"]


def test_the_degrees_are_those_the_heads_divide_up_to_the_cap(
    decode_sweep: dict[str, Any],
) -> None:
    """The H100 has a scale-out network, so every degree up to 1,024 is tried; Llama 3
    70B's 64 query heads (and h = 8192) leave 1, 2, 4, ..., 64, and the rest are skipped
    with the model's reason, in runs."""
    assert 1024 == decode_sweep["up_to"]
    assert [1, 2, 4, 8, 16, 32, 64] == [d["tp"] for d in decode_sweep["degrees"]]
    skipped = [(k["from"], k["to"], k["kind"]) for k in decode_sweep["skipped"]]
    expected = [(3, 3), (5, 7), (9, 15), (17, 31), (33, 63), (65, 1024)]
    assert [(a, b, "model") for a, b in expected] == skipped
    assert "N = h/tp = 8192/3, not a whole number" in decode_sweep["skipped"][0]["reason"]


def test_decode_is_never_interconnect_bound_on_h100(decode_sweep: dict[str, Any]) -> None:
    """At b = 1 the all-reduces are small: the pass is held by DRAM, then by the launch
    floor, at every degree; none is interconnect bound."""
    assert None is decode_sweep["interconnect_bound_from"]
    assert [] == decode_sweep["interconnect_bound_at"]
    assert ["dram"] * 5 + ["latency"] * 2 == [d["limited_by"] for d in decode_sweep["degrees"]]


def test_prefill_turns_interconnect_bound_where_tp_leaves_the_nvlink_domain(
    prefill_sweep: dict[str, Any],
) -> None:
    """Prefill's all-reduces carry 2,048 tokens × 8,192 values: within the 8-chip NVLink
    domain the pass stays compute bound; from tp = 16 they cross the 50 GB/s scale-out
    network, which then holds most of the time at every larger degree."""
    limits = [(d["tp"], d["limited_by"]) for d in prefill_sweep["degrees"]]
    assert [
        (1, "compute"),
        (2, "compute"),
        (4, "compute"),
        (8, "compute"),
        (16, "scale_out"),
        (32, "scale_out"),
        (64, "scale_out"),
    ] == limits
    assert 16 == prefill_sweep["interconnect_bound_from"]
    assert [16, 32, 64] == prefill_sweep["interconnect_bound_at"]
    share = {d["tp"]: d["interconnect_share"] for d in prefill_sweep["degrees"]}
    assert share[16] > 0.5 and share[1] == 0


@pytest.mark.parametrize("phase", ["decode-b1-l2048", "prefill-s2048"])
def test_every_degree_is_compiles_row(
    phase: str, decode_sweep: dict[str, Any], prefill_sweep: dict[str, Any]
) -> None:
    """For every degree evaluated, its figures are those of `compile --tp N`'s JSON row,
    exactly (tokens per second where it fits, and none where it does not), and its
    interconnect time is the row's time held by the scale-up and scale-out levels."""
    sweep = decode_sweep if phase == "decode-b1-l2048" else prefill_sweep
    for degree in sweep["degrees"]:
        row = compile_row(LLAMA, phase, H100, "--tp", str(degree["tp"]))
        assert {k: row[k] for k in ROW_KEYS} == {k: degree[k] for k in ROW_KEYS}
        rate = row["tokens_per_second"] if row["fits"] else None
        assert rate == degree["tokens_per_second"]
        assert row["limited_by"] == degree["limited_by"]
        held = sum(row["time_by_limit"].get(role, 0) for role in INTERCONNECT_ROLES)
        assert held == pytest.approx(degree["interconnect_time"], rel=1e-15)


def test_a_held_pipeline_degree_is_kept_at_every_tp() -> None:
    """`--pp 2` is held: every degree evaluated runs two stages, its chips tp × 2."""
    data = solve_json(
        "--model", LLAMA, "--phase", "decode-b1-l2048", "--device", H100, "--vary", "tp",
        "--pp", "2",
    )  # fmt: skip
    assert {"pp": 2, "ep": 1, "chips": None} == data["held"]
    assert all(d["pp"] == 2 and d["chips"] == 2 * d["tp"] for d in data["degrees"])
    row = compile_row(LLAMA, "decode-b1-l2048", H100, "--tp", "4", "--pp", "2")
    four = next(d for d in data["degrees"] if d["tp"] == 4)
    assert {k: row[k] for k in ROW_KEYS} == {k: four[k] for k in ROW_KEYS}


def test_held_chips_skip_the_degrees_they_do_not_split_into() -> None:
    """`--chips 8` is held: tp = 16 and beyond are no deployment of 8 chips (skipped as
    such), and tp = 1, 2, 4 run 8, 4 and 2 replicas."""
    data = solve_json(
        "--model", LLAMA, "--phase", "decode-b1-l2048", "--device", H100, "--vary", "tp",
        "--chips", "8",
    )  # fmt: skip
    assert [1, 2, 4, 8] == [d["tp"] for d in data["degrees"]]
    assert all(d["chips"] == 8 for d in data["degrees"])
    kinds = {k["kind"] for k in data["skipped"] if k["from"] > 8}
    assert {"deployment"} == kinds
    assert "chips = 8 is not a multiple of tp × pp = 9" in next(
        k["reason"] for k in data["skipped"] if k["from"] == 9
    )


def test_a_held_degree_no_tp_can_take_skips_every_one() -> None:
    """Mixtral's 8 experts over `--ep 3` are no whole number at any tp: every degree is
    skipped, no answer is claimed, and the text says so instead of an empty table."""
    argv = ("--model", "mixtral-8x7b", "--phase", "decode-b1-l2048", "--device", H100)
    data = solve_json(*argv, "--vary", "tp", "--ep", "3")
    assert ([], None, None) == (
        data["degrees"],
        data["interconnect_bound_from"],
        data["least_fitting"],
    )
    assert [(1, 1024, "model")] == [(k["from"], k["to"], k["kind"]) for k in data["skipped"]]
    code, text = run("solve", *argv, "--vary", "tp", "--ep", "3")
    assert 0 == code
    assert "No degree from 1 to 1,024 is evaluated: every one is skipped" in text
    assert "time overlapped" not in text


def test_a_device_with_a_domain_and_no_network_is_tried_up_to_its_domain() -> None:
    """MI325X gives an 8-chip scale-up domain and no scale-out network: tp is tried up
    to 8."""
    data = solve_json(
        "--model", LLAMA, "--phase", "decode-b32-l8192", "--device", "amd-mi325x", "--vary", "tp"
    )
    assert 8 == data["up_to"]
    assert [1, 2, 4, 8] == [d["tp"] for d in data["degrees"]]


def test_a_degree_the_device_cannot_host_is_skipped_as_such() -> None:
    """With two pipeline stages on MI325X (an 8-chip domain, no scale-out network) the
    stage send of tp = 8 spans 16 chips: the device has no level for it, so tp = 8 is
    skipped, named as the device's, and the answers are over 1, 2 and 4."""
    data = solve_json(
        "--model", LLAMA, "--phase", "decode-b32-l8192", "--device", "amd-mi325x",
        "--vary", "tp", "--pp", "2",
    )  # fmt: skip
    assert [1, 2, 4] == [d["tp"] for d in data["degrees"]]
    (device,) = [k for k in data["skipped"] if k["kind"] == "device"]
    assert (8, 8) == (device["from"], device["to"])
    assert "gives no scale-out network" in device["reason"]
    assert "over 16 chips" in device["reason"]


def test_the_bound_follows_the_levels(compiled: Compiled) -> None:
    """No level: one chip; a domain alone: the domain; a scale-out network, or a
    fabric without a domain: 1,024."""
    links = compiled.model_engine.links
    assert 1 == tp_bound(links("nvidia-l4"))[0]
    assert 8 == tp_bound(links("amd-mi325x"))[0]
    assert 1024 == tp_bound(links(H100))[0]
    assert 1024 == tp_bound(links("nvidia-gh200"))[0]  # a scale-out network alone


def test_the_json_shape_is_stable(decode_sweep: dict[str, Any]) -> None:
    """The keys of `--vary tp`'s JSON and of each degree, in order."""
    assert [
        "model",
        "phase",
        "device",
        "precision",
        "vary",
        "held",
        "up_to",
        "bound",
        "degrees",
        "skipped",
        "interconnect_bound_from",
        "interconnect_bound_at",
        "fit_known",
        "least_fitting",
    ] == list(decode_sweep)
    assert all(DEGREE_KEYS == list(d) for d in decode_sweep["degrees"])
    assert all(["from", "to", "kind", "reason"] == list(k) for k in decode_sweep["skipped"])
    assert (LLAMA, "decode-b1-l2048", H100, "bf16", "tp") == (
        decode_sweep["model"],
        decode_sweep["phase"],
        decode_sweep["device"],
        decode_sweep["precision"],
        decode_sweep["vary"],
    )


def test_the_text_says_what_it_found_and_over_which_degrees() -> None:
    """The table prints "does not fit (needs 2 chips)" in place of tokens/s at tp = 1;
    the answers say they are over the degrees evaluated."""
    code, text = run(
        "solve", "--model", LLAMA, "--phase", "prefill-s2048", "--device", H100, "--vary", "tp"
    )
    assert 0 == code
    assert re.search(r"(?m)^1 +1 +no .*does not fit \(needs 2 chips\) +compute", text)
    assert "Skipped, not a deployment of the model: tp = 3, 5..7, 9..15" in text
    assert (
        "Interconnect bound: from tp = 16 on (over the 7 degrees evaluated, up to tp = 64)" in text
    )
    assert "Fits: from tp = 2 (the least degree evaluated at which it fits)" in text


def _degree(tp: int, bound: bool) -> Degree:
    one, zero = Fraction(1), Fraction(0)
    limit = "scale_up" if bound else "dram"
    return Degree(tp, tp, 1, 1, True, None, one, one, one, limit, zero, zero)


@given(st.lists(st.booleans(), max_size=12))
def test_from_on_is_the_least_degree_after_which_it_always_holds(flags: list[bool]) -> None:
    """`least_from_on` is the least degree d such that every degree from d on holds, by
    its definition checked over every degree; None when the last does not hold."""
    degrees = [_degree(2**i, flag) for i, flag in enumerate(flags)]
    expected = next(
        (d.tp for i, d in enumerate(degrees) if all(e.interconnect_bound for e in degrees[i:])),
        None,
    )
    assert expected == least_from_on(degrees, lambda d: d.interconnect_bound)


def test_bound_in_the_middle_only_is_no_answer() -> None:
    """Interconnect bound at 4 but not at 8: not bound "from" any degree."""
    degrees = [_degree(1, False), _degree(4, True), _degree(8, False)]
    assert None is least_from_on(degrees, lambda d: d.interconnect_bound)


# ---------------------------------------------------------------------------- --vary b


def _step_limit(compiled: Compiled, step_id: str, b: int, deployment: Deployment) -> str:
    """What limits one run of a Llama 3 70B decode step on the H100 at batch `b`,
    evaluated directly: its shape formulas at the deployment, its kernel's counts there,
    the roof's rule (no composed formula, no solver)."""
    catalog = compiled.catalog
    model = catalog.models[LLAMA]
    step = next(s for s in model.steps if s.id == step_id)
    kernel = catalog.kernels[step.kernel]
    variables = {**model.variables("decode-b1-l2048", deployment), "b": b}
    values: dict[str, int | Fraction] = {k: f.evaluate(variables) for k, f in step.shape.items()}
    width = catalog.precisions[model.precision].bytes
    values.update(width_values(kernel.widths, width, step.widths, catalog.precisions))
    figures = compiled.devices[H100]
    traffic = {lv: f.evaluate(values) for lv, f in kernel.bytes.items()}
    ceilings = {lv: bw for lv, bw in figures.bandwidths.items() if lv in traffic}
    roof = Roof.of(figures.peaks[model.precision], ceilings, None)
    return roof.bound(kernel.flops.evaluate(values), traffic).limit


def test_a_steps_crossover_at_tp_8_holds_on_both_sides(compiled: Compiled) -> None:
    """At tp = 8 the Q projection is memory bound at b = 437 and compute bound from 438
    (checked at larger batches too), evaluated without the solver."""
    at = Deployment(tp=8)
    assert "compute" != _step_limit(compiled, "q-proj", 437, at)
    for b in (438, 439, 876, 10**6):
        assert "compute" == _step_limit(compiled, "q-proj", b, at)


@pytest.mark.parametrize(("tp", "largest"), [("2", 4), ("8", 647)])
def test_the_largest_batch_is_the_ledgers(tp: str, largest: int) -> None:
    """The largest batch that fits is the `max_batch` of `compile --tp N`'s row for the
    same deployment, and the pass stops fitting one batch later."""
    data = solve_json(
        "--model", LLAMA, "--phase", "decode-b1-l2048", "--device", H100, "--vary", "b",
        "--tp", tp,
    )  # fmt: skip
    row = compile_row(LLAMA, "decode-b1-l2048", H100, "--tp", tp)
    assert largest == row["max_batch"] == data["max_batch"]
    assert largest + 1 == data["stops_fitting_at"]
    assert {"chips": int(tp), "tp": int(tp), "pp": 1, "ep": 1} == data["deployment"]
    assert {"b": 1, "s": 1, "L": 2048} == data["variables"]


def test_the_largest_batch_fits_and_the_next_does_not(compiled: Compiled) -> None:
    """At tp = 8 the ledger at b = 647 (the phase's L = 2,048) fits one H100's 80 GB and
    at b = 648 it does not: the answer is exact."""
    catalog = compiled.catalog
    model = catalog.models[LLAMA]
    capacity = catalog.devices[H100].memory["dram"].capacity
    assert capacity is not None

    def fits(b: int) -> bool | None:
        run_at = {**model.phases["decode-b1-l2048"], "b": b}
        fit = evaluate_fit(
            catalog, model, "decode-b1-l2048", "bf16", capacity.per_chip, Deployment(tp=8),
            run=run_at, needs=False,
        )  # fmt: skip
        assert fit is not None
        return fit.fits

    assert (True, False) == (fits(647), fits(648))


def test_one_chip_does_not_fit_even_one_sequence() -> None:
    """On one H100 the weights alone overflow: no batch fits, it stops at b = 1."""
    data = solve_json(
        "--model", LLAMA, "--phase", "decode-b1-l2048", "--device", H100, "--vary", "b"
    )
    assert (False, None, 1, 2) == (
        data["fits"],
        data["max_batch"],
        data["stops_fitting_at"],
        data["needs_chips"],
    )
    _, text = run(
        "solve", "--model", LLAMA, "--phase", "decode-b1-l2048", "--device", H100, "--vary", "b"
    )
    assert "Largest batch that fits: none: b = 1 does not fit" in text
    assert "At the phase's b = 1: does not fit (needs 2 chips)" in text


def test_the_batch_json_shape_is_stable() -> None:
    data = solve_json(
        "--model", LLAMA, "--phase", "decode-b1-l2048", "--device", H100, "--vary", "b",
        "--tp", "2",
    )  # fmt: skip
    assert [
        "model",
        "phase",
        "device",
        "precision",
        "vary",
        "deployment",
        "variables",
        "fits",
        "max_batch",
        "stops_fitting_at",
        "needs_chips",
        "unknown",
        "steps",
    ] == list(data)
    assert all(["step", "compute_bound_from", "error"] == list(x) for x in data["steps"])


@pytest.mark.parametrize("tp", ["1", "8"])
def test_each_steps_batch_crossover_is_the_step_solvers(compiled: Compiled, tp: str) -> None:
    """`--vary b` lists, for every step but the collectives, the batch from which it stays
    compute bound at the deployment: the step crossover the model pages give (at one
    chip, the same call), held at tp. At tp = 8 the Q projection (N = 8192/8) turns
    compute bound at b = 438, the MLP's at 336; the K projection (N = 1024/8) never."""
    data = solve_json(
        "--model", LLAMA, "--phase", "decode-b1-l2048", "--device", H100, "--vary", "b",
        "--tp", tp,
    )  # fmt: skip
    model = compiled.catalog.models[LLAMA]
    figures = compiled.devices[H100]
    expected = {}
    for i, step in enumerate(model.steps):
        if compiled.catalog.kernels[step.kernel].collective is not None:
            continue
        at = Deployment(tp=int(tp))
        if tp == "1":  # the pages' own call, one chip
            found = step_crossover(compiled.catalog, model, i, "decode-b1-l2048", figures)
        else:
            found = step_crossover(
                compiled.catalog, model, i, "decode-b1-l2048", figures, deployment=at
            )
        expected[step.id] = found.crossover
    got = {x["step"]: x["compute_bound_from"] for x in data["steps"]}
    assert expected == got
    if tp == "8":
        assert (438, 336, 336, None) == (
            got["q-proj"],
            got["gate-proj"],
            got["down-proj"],
            got["k-proj"],
        )


@pytest.fixture(scope="module")
def no_capacity(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Devices without a DRAM capacity or an interconnect (gpu-a, gpu-b) and test-13b."""
    specs = write_measured(tmp_path_factory.mktemp("nocap"))
    shutil.copy(BUNDLED / "precisions.yaml", specs)
    for kernel in ("linear", "attention-mha", "all-reduce", "send"):
        shutil.copy(BUNDLED / "kernels" / f"{kernel}.yaml", specs / "kernels")
    (specs / "models").mkdir()
    model = (BUNDLED / "models" / "test-13b.yaml").read_text("utf-8")
    model = re.sub(r"(?ms)^deployments:\n.*?\n\n", "", model)
    (specs / "models" / "test-13b.yaml").write_text(model, "utf-8")
    return specs


def test_a_device_without_capacity_gives_an_unknown_batch(no_capacity: Path) -> None:
    """No capacity: no claim either way, in one line, and null in JSON."""
    argv = ("solve", "--model", "test-13b", "--phase", "decode", "--device", "gpu-a", "--vary", "b")
    code, text = run(*argv, specs=no_capacity)
    assert 0 == code
    assert "Largest batch that fits: unknown: the device states no capacity" in text
    code, text = run(*argv, "--format", "json", specs=no_capacity)
    assert 0 == code
    data = json.loads(text)
    assert (None, None, None, "the device states no capacity") == (
        data["fits"],
        data["max_batch"],
        data["stops_fitting_at"],
        data["unknown"],
    )


def test_a_device_without_interconnect_is_tried_at_one_chip(no_capacity: Path) -> None:
    """gpu-a gives no interconnect: only tp = 1; the fit is unknown."""
    argv = (
        "solve",
        "--model",
        "test-13b",
        "--phase",
        "decode",
        "--device",
        "gpu-a",
        "--vary",
        "tp",
    )
    code, text = run(*argv, "--format", "json", specs=no_capacity)
    assert 0 == code
    data = json.loads(text)
    assert (1, [1], False, None) == (
        data["up_to"],
        [d["tp"] for d in data["degrees"]],
        data["fit_known"],
        data["least_fitting"],
    )
    code, text = run(*argv, specs=no_capacity)
    assert 0 == code
    assert "Fits: unknown" in text
    assert "Interconnect bound: not at any degree up to 1 (over the 1 degree evaluated" in text


def test_a_phase_without_a_batch_is_one_line(
    no_capacity: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A phase that binds no `b` (here a parameter, in a model without a ledger) has no
    batch to vary: exit 2, one line."""
    specs = tmp_path / "specs"
    shutil.copytree(no_capacity, specs)
    path = specs / "models" / "test-13b.yaml"
    text = path.read_text("utf-8")
    text = text.replace("{b: 1, s:", "{s:").replace("parameters: {", "parameters: {b: 1, ")
    text = re.sub(r"(?ms)^memory:\n.*?\n\n", "", text)
    path.write_text(text, "utf-8")
    code, _ = run(
        "solve", "--model", "test-13b", "--phase", "decode", "--device", "gpu-a", "--vary", "b",
        specs=specs,
    )  # fmt: skip
    err = capsys.readouterr().err
    assert 2 == code, err
    assert ["rooflinec: error: phase 'decode' of model 'test-13b' binds no batch b to vary"] == (
        err.splitlines()
    )


# ------------------------------------------------------------------------------ errors

MODEL = ("--model", LLAMA, "--phase", "decode-b1-l2048", "--device", H100)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("gemm-large", *MODEL, "--vary", "tp"), "solve takes a CASE or --model M --phase PH"),
        (("--model", LLAMA, "--device", H100, "--vary", "tp"), "needs --phase PH"),
        (("--phase", "decode-b1-l2048", "--device", H100, "--vary", "tp"), "needs --phase PH"),
        (("--device", H100, "--vary", "tp"), "solve needs a CASE, or --model M --phase PH"),
        (("--model", "llama-9", "--phase", "x", "--device", H100, "--vary", "b"), "unknown model"),
        (
            ("--model", LLAMA, "--phase", "decode", "--device", H100, "--vary", "b"),
            "unknown phase of model 'llama-3-70b' 'decode'",
        ),
        (
            ("--model", LLAMA, "--phase", "decode-b1-l2048", "--device", "gpu-x", "--vary", "b"),
            "unknown device 'gpu-x'",
        ),
        ((*MODEL, "--vary", "L"), "solve --model varies tp (the tensor-parallel degree) or b"),
        ((*MODEL, "--vary", "tp", "--tp", "2"), "--vary tp varies the degree --tp gives"),
        ((*MODEL, "--vary", "b", "--tp", "3"), "is not a deployment of model 'llama-3-70b'"),
        ((*MODEL, "--vary", "b", "--tp", "0"), "--tp '0' is not a degree"),
        ((*MODEL, "--vary", "tp", "--pp", "x"), "--pp 'x' is not a degree"),
        ((*MODEL, "--vary", "tp", "--chips", "8", "--pp", "3"), "not a deployment: chips = 8"),
        (
            (
                *("--model", LLAMA, "--phase", "decode-b32-l8192", "--device", "amd-mi325x"),
                *("--vary", "b", "--tp", "16"),
            ),
            "gives no scale-out network",
        ),
        ((*MODEL, "--vary", "b", "--shape", "M=1"), "--shape picks a shape of a grid case"),
        ((*MODEL, "--vary", "b", "--precision", "fp4"), "has no peak for precision fp4"),
        (("gemm-large", "--device", H100, "--vary", "M", "--tp", "2"), "--tp is a degree"),
    ],
)
def test_usage_errors_are_one_line_exit_2(
    argv: tuple[str, ...], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both CASE and --model, a missing --phase, an unknown model, phase or device, a
    symbol other than tp or b, --tp with --vary tp, a degree the model or the device
    cannot take, a degree that is no number: exit 2, one line, nothing on stdout."""
    code, out = run("solve", *argv)
    err = capsys.readouterr().err
    assert (2, "") == (code, out)
    assert 1 == len(err.splitlines()), err
    assert message in err
