"""Model passes over several chips: per-chip shapes, collective steps and their fabric
bound, the deployment options of `compile` and `explain`, and the reference figures."""

from __future__ import annotations

import io
import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rooflinec.assemble import catalog_or_raise
from rooflinec.catalog import ONE_CHIP, Deployment
from rooflinec.cli.main import main
from rooflinec.engine.cells import DeviceFigures
from rooflinec.engine.compiler import Compiled, compile_catalog
from rooflinec.engine.models import (
    CollectiveStep,
    Link,
    collective_bound,
    red_factor,
)
from tests.specfactory import BUNDLED

G, T = 10**9, 10**12
US = Fraction(1, 10**6)

# llm-analysis' a100-sxm-40gb figures (as tests/test_models.py), and its tp2 example's
# assumption: 8 µs per all-reduce, over NVLink 3 (300 GB/s per direction).
A100_40GB = DeviceFigures(
    "a100-40gb",
    "llm-analysis a100-sxm-40gb",
    {"bf16": Fraction(312 * T)},
    {"dram": Fraction(1555 * G)},
)
NVLINK3_8US = {"scale_up": Link("scale_up", Fraction(300 * G), 8, "switched", False, 8 * US)}


@pytest.fixture(scope="module")
def bundled() -> Compiled:
    return compile_catalog(catalog_or_raise(BUNDLED))


def _run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main([*argv, "--specs", str(BUNDLED)], out=out)
    return code, out.getvalue()


# --- red and the fabric bound --------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "n", "in_network", "red"),
    [
        ("all-reduce", 8, False, Fraction(7, 4)),  # 2(n-1)/n: NCCL's ring bound
        ("all-reduce", 8, True, Fraction(1)),  # in-switch reduction: each value up and back once
        ("all-reduce", 2, True, Fraction(1)),  # 2(n-1)/n = 1 already
        ("all-gather", 8, False, Fraction(7, 8)),
        ("all-gather", 8, True, Fraction(7, 8)),  # multicast does not lower what a chip receives
        ("reduce-scatter", 4, True, Fraction(3, 4)),
        ("all-to-all", 8, False, Fraction(7, 8)),
        ("send", 2, False, Fraction(1)),
    ],
)
def test_red_is_the_least_traffic_per_value(
    kind: str, n: int, in_network: bool, red: Fraction
) -> None:
    """The factor bound per level for each collective, as the kernels' assumptions state."""
    assert red == red_factor(kind, n, in_network)


def test_13b_tp2_communication_is_llm_analysis_640_us(bundled: Compiled) -> None:
    """llm-analysis (d841e40, examples/fastertransformer/outputs_infer, tp2 summary):
    test-13b decoding on 2 A100-40GB at tp = 2 with an assumed 8 µs per all-reduce prints
    decode_latency_fwd_tp_comm: 0.00064 = 40 layers × 2 all-reduces × 8 µs. The sum of the
    collective steps is that, exactly (no logits all-gather: llm-analysis counts none)."""
    model = bundled.catalog.models["test-13b"]
    row = bundled.model_engine.evaluate(
        model, "decode", A100_40GB, "bf16", deployment=Deployment(tp=2), links=NVLINK3_8US
    )
    collectives = [s for s in row.steps if s.kernel in ("all-reduce", "all-gather", "send")]
    assert ["attn-allreduce", "mlp-allreduce"] == [s.step for s in collectives]
    assert Fraction(64, 100_000) == sum(s.time for s in collectives)
    assert all("scale_up" == s.limited_by for s in collectives)  # held by the 8 µs
    assert Fraction(64, 100_000) == row.time_by_limit["scale_up"]
    assert (2, 2, 1, 1) == (row.chips, row.tp, row.pp, row.ep)
    # Overlapped: the memory-bound steps take longer than the 640 µs of all-reduces.
    assert row.time - Fraction(64, 100_000) == row.time_overlapped


def test_the_tp2_reference_example_states_the_fabric_and_passes(bundled: Compiled) -> None:
    """The method note's example over chips runs on its own figures: its fabric and
    deployment give the row the Python test above computes (640 µs of all-reduces, each
    held by its 8 µs), and every expectation passes."""
    from rooflinec.engine.examples import model_row, run_example

    (example,) = [e for e in bundled.catalog.examples if e.id == "test-13b-decode-tp2-llm-analysis"]
    assert Deployment(tp=2) == example.deployment
    outcomes = run_example(bundled, example)
    assert [] == [o for o in outcomes if not o.passed]
    actual = {(o.expectation.output, o.expectation.step, o.expectation.level): o.actual
              for o in outcomes}  # fmt: skip
    assert Fraction(64, 100_000) == actual[("collective_time", None, None)]
    assert Fraction(64, 100_000) == actual[("time_by_limit", None, "scale_up")]
    assert "scale_up" == actual[("limited_by", "attn-allreduce", None)]
    row = model_row(bundled, example)
    model = bundled.catalog.models["test-13b"]
    python = bundled.model_engine.evaluate(
        model, "decode", A100_40GB, "bf16", deployment=Deployment(tp=2), links=NVLINK3_8US
    )
    assert row is not None
    assert (python.time, python.time_by_limit) == (row.time, row.time_by_limit)


def test_an_example_that_cannot_run_says_why(bundled: Compiled) -> None:
    """An example whose deployment leaves a shape not whole, or whose fabric lacks the
    level its collectives cross, fails each expectation with that reason."""
    from dataclasses import replace

    from rooflinec.engine.examples import run_example

    (example,) = [e for e in bundled.catalog.examples if e.id == "test-13b-decode-tp2-llm-analysis"]
    problems = {o.problem for o in run_example(bundled, replace(example, deployment=Deployment(3)))}
    assert 1 == len(problems)
    assert "n = heads/tp = 40/3, not a whole number" in str(problems.pop())
    assert example.figures is not None
    bare = replace(example, figures=replace(example.figures, interconnect={}))
    problems = {o.problem for o in run_example(bundled, bare)}
    assert 1 == len(problems)
    assert str(problems.pop()).startswith("the example's figures give no interconnect")


def test_an_example_over_chips_on_a_catalog_device_uses_its_fabric(bundled: Compiled) -> None:
    """Without figures of its own, an example's deployment runs on the catalog device's
    interconnect: its collective time is the row `compile --tp 2` makes."""
    from dataclasses import replace

    from rooflinec.engine.examples import run_example

    (example,) = [e for e in bundled.catalog.examples if e.id == "test-13b-decode-tp2-llm-analysis"]
    on_h100 = replace(example, figures=None, device="nvidia-h100-sxm")
    outcomes = {
        (o.expectation.output, o.expectation.step): o for o in run_example(bundled, on_h100)
    }
    row = bundled.model_engine.row("test-13b", "decode", "nvidia-h100-sxm", "bf16", Deployment(2))
    expected = sum((s.time for s in row.collective_steps()), Fraction(0))
    assert expected == outcomes[("collective_time", None)].actual
    assert expected > 0 and outcomes[("collective_time", None)].problem is None


# NCCL on 8 × H100 SXM (shared/reference/systems.md): the ring sustains about 370 GB/s bus
# bandwidth (algbw = busbw × n / (2(n-1))), NVLS about 480 GB/s bus, about 275 GB/s algorithm.
@pytest.mark.parametrize("message", [2**27, 2**30, 2**34])  # bytes of the whole message
@pytest.mark.parametrize(
    ("algorithm", "algbw"),
    [("ring", Fraction(370 * G) * 8 / 14), ("nvls", Fraction(275 * G))],
)
def test_nccl_h100_all_reduce_is_never_faster_than_the_bound(
    bundled: Compiled, message: int, algorithm: str, algbw: Fraction
) -> None:
    """Compare times, not bus bandwidths: NCCL's measured time for the message is at least
    the catalog's bound for an all-reduce of it on nvidia-h100-sxm."""
    engine = bundled.model_engine
    step = bundled.catalog.models["test-13b"].steps[3]
    kernel = bundled.catalog.kernels["all-reduce"]
    values: dict[str, int | Fraction] = {"n": 8, "m": message // 2, "w": 2}
    c = CollectiveStep(
        step,
        "bf16",
        {"n": 8, "m": message // 2},
        1,
        "all-reduce",
        8,
        Fraction(0),
        0,
        kernel.bytes["scale_up"],
        values,
    )
    peak = bundled.devices["nvidia-h100-sxm"].peaks["bf16"]
    bound = collective_bound(c, peak, engine.links("nvidia-h100-sxm"), None)
    measured = Fraction(message) / algbw
    assert bound.time <= measured, algorithm


# --- rows over chips -------------------------------------------------------------------------


def test_one_chip_rows_have_no_collective_step_and_no_fabric_time(bundled: Compiled) -> None:
    """On one chip the collectives (n = 1, or count pp - 1 = 0) are not evaluated: no step,
    no scale_up or scale_out time, and time_overlapped is the time."""
    row = bundled.model_engine.row("test-13b", "decode", "nvidia-h100-sxm", "bf16")
    assert ["qkv", "attention", "out", "up", "down", "logits"] == [s.step for s in row.steps]
    assert {"compute", "dram", "latency"} == set(row.time_by_limit)
    assert (1, 1, 1, 1, row.time) == (row.chips, row.tp, row.pp, row.ep, row.time_overlapped)


def test_tp_splits_the_work_and_adds_the_fabric(bundled: Compiled) -> None:
    """At tp = 2 every per-chip projection moves half the weights, and the row gains
    scale_up time; its steps keep the spec's order."""
    one = bundled.model_engine.row("test-13b", "prefill", "nvidia-h100-sxm", "bf16")
    two = bundled.model_engine.row(
        "test-13b", "prefill", "nvidia-h100-sxm", "bf16", Deployment(tp=2)
    )
    assert [
        "qkv",
        "attention",
        "out",
        "attn-allreduce",
        "up",
        "down",
        "mlp-allreduce",
        "logits",
    ] == [s.step for s in two.steps]
    assert one.step("up") is not None and two.step("up") is not None
    assert one.step("up").flops == 2 * two.step("up").flops  # type: ignore[union-attr]
    assert "scale_up" in two.time_by_limit and "scale_out" not in two.time_by_limit
    assert two.time_overlapped < two.time


def test_a_send_across_domains_is_keyed_scale_out(bundled: Compiled) -> None:
    """tp = 8 fills an 8-chip NVLink domain, so the pp send spans 16 chips: scale_out."""
    row = bundled.model_engine.row(
        "test-13b", "decode", "nvidia-h100-sxm", "bf16", Deployment(tp=8, pp=2)
    )
    send = row.step("stage-send")
    assert send is not None and {"scale_out"} == set(send.bytes)
    assert {"scale_up", "scale_out"} <= set(row.time_by_limit)


def test_a_mesh_gives_a_small_group_its_share_of_the_links(bundled: Compiled) -> None:
    """On MI300X (an 8-chip mesh) a group of 2 gets 1/7 of the chip's per-direction bandwidth."""
    row = bundled.model_engine.row("test-13b", "prefill", "amd-mi300x", "bf16", Deployment(tp=2))
    link = bundled.model_engine.links("amd-mi300x")["scale_up"]
    bound = row.collective_bounds[0]
    assert link.bandwidth / 7 == bound.bandwidth


def test_row_limited_by_is_the_largest_share(bundled: Compiled) -> None:
    row = bundled.model_engine.row(
        "test-13b", "decode", "nvidia-h100-sxm", "bf16", Deployment(tp=8)
    )
    assert row.limited_by == max(row.time_by_limit, key=lambda k: row.time_by_limit[k])


def test_json_rows_carry_the_deployment_fields() -> None:
    code, text = _run(
        "compile",
        "--model",
        "test-13b",
        "--device",
        "nvidia-h100-sxm",
        "--tp",
        "2",
        "--format",
        "json",
    )
    assert 0 == code
    row = json.loads(text)["models"][0]
    assert (2, 2, 1, 1) == (row["chips"], row["tp"], row["pp"], row["ep"])
    assert row["time_overlapped"] <= row["time"]
    assert "scale_up" in row["time_by_limit"] and "scale_up" in row["bytes"]
    assert row["limited_by"] in row["time_by_limit"]
    steps = {s["step"]: s for s in row["steps"]}
    assert {"scale_up"} == set(steps["attn-allreduce"]["bytes"])


# --- the command line -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tp", "3"], "n = heads/tp = 40/3, not a whole number"),
        (["--tp", "0"], "is not a degree"),
        (["--tp", "4", "--chips", "6"], "chips = 6 is not a multiple of tp × pp = 4"),
        (["--tp", "x"], "is not a degree"),
    ],
)
def test_an_invalid_degree_is_one_line_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = _run("compile", "--model", "test-13b", "--device", "nvidia-h100-sxm", *args)
    err = capsys.readouterr().err
    assert 2 == code
    assert message in err and "Traceback" not in err
    assert 1 == sum(line.startswith("rooflinec: error:") for line in err.splitlines())


def test_a_device_without_the_fabric_is_refused_when_named(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """nvidia-l4 gives no interconnect: a tp = 2 pass on it is refused, naming it."""
    code, _ = _run(
        "explain",
        "--model",
        "test-13b",
        "--phase",
        "decode",
        "--device",
        "nvidia-l4",
        "--tp",
        "2",
    )
    err = capsys.readouterr().err
    assert 2 == code
    assert "device 'nvidia-l4' gives no interconnect (scale_up, scale_out)" in err


def test_whole_catalog_compile_skips_and_names_what_cannot_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """compile --tp 3 keeps the models whose shapes divide and names the others on stderr;
    devices without a fabric are named too, and none of their rows is written."""
    code, text = _run("compile", "--model", "test-13b", "--tp", "2", "--format", "json")
    err = capsys.readouterr().err
    assert 0 == code
    devices = {r["device"] for r in json.loads(text)["models"]}
    assert "nvidia-l4" not in devices and "nvidia-h100-sxm" in devices
    assert "skipped under tp=2, pp=1, ep=1, chips=2: device 'nvidia-l4' gives no" in err
    assert 1 == err.count("'nvidia-l4'")  # one note per device
    code, _ = _run("compile", "--tp", "3", "--format", "json")
    err = capsys.readouterr().err
    assert 0 == code
    assert "skipped model 'test-13b'" in err


def test_explain_lists_the_collective_bindings() -> None:
    code, text = _run(
        "explain",
        "--model",
        "test-13b",
        "--phase",
        "decode",
        "--device",
        "nvidia-h100-sxm",
        "--tp",
        "8",
        "--pp",
        "2",
    )
    assert 0 == code
    assert "deployment: tp = 8, pp = 2, ep = 1, dp = 1; chips = 16" in text
    assert "red = 1: the switch reduces in-network = 1" in text
    assert "re-keyed to scale_out" in text
    assert "time overlapped = " in text


def test_one_chip_is_the_default_deployment(bundled: Compiled) -> None:
    assert bundled.model_engine.row(
        "test-13b", "decode", "nvidia-h100-sxm", "bf16"
    ) is bundled.model_engine.row("test-13b", "decode", "nvidia-h100-sxm", "bf16", ONE_CHIP)


def test_rows_over_chips_follow_the_results_schema() -> None:
    """A compile at tp = 8, pp = 2 validates against results.schema.json, fabric keys too."""
    from rooflinec.schema import validator

    code, text = _run(
        "compile",
        "--model",
        "test-13b",
        "--device",
        "nvidia-h100-sxm",
        "--device",
        "amd-mi300x",
        "--tp",
        "8",
        "--pp",
        "2",
        "--format",
        "json",
    )
    assert 0 == code
    assert [] == list(validator("results").iter_errors(json.loads(text)))


# --- named deployments ------------------------------------------------------------------------


def test_every_bundled_named_deployment_runs(bundled: Compiled) -> None:
    """Each system a bundled model names is a deployment of that model on a device with
    the fabric its collectives cross, within the device's scale-up domain (a deployment on
    one chip crosses none, and its device may have no fabric)."""
    engine = bundled.model_engine
    named = [(m, d) for m in bundled.catalog.models.values() for d in m.deployments.values()]
    assert len(named) >= 6 * 9
    for model, d in named:
        assert engine.deployment_problem(model, d.deployment) is None, (model.id, d.name)
        assert engine.fabric_problem(model, d.device, d.deployment) is None, (model.id, d.name)
        if d.deployment.total == 1:
            continue
        domain = bundled.catalog.devices[d.device].interconnect["scale_up"].chips
        assert domain is not None and d.deployment.total <= domain


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("{device: no-such-device, tp: 8}", "unknown device 'no-such-device'"),
        (
            "{device: nvidia-h100-sxm, tp: 8, chips: 16}",
            "deployment 'bad' joins 16 chips, more than the 8 of device 'nvidia-h100-sxm''s"
            " scale-up domain",
        ),
        ("{device: nvidia-l4, tp: 2}", "device 'nvidia-l4' quotes no scale-up domain"),
        ("{device: nvidia-h100-sxm, tp: 4, chips: 6}", "chips = 6 is not a multiple of tp"),
    ],
)
def test_a_bad_named_deployment_is_an_error_at_its_place(
    tmp_path: Path, entry: str, message: str
) -> None:
    """A named deployment on an unknown device, over more chips than the device's scale-up
    domain, on a device without one, or with degrees that are no split: one error, at the
    entry's line."""
    from tests.specfactory import copy_bundled

    specs = copy_bundled(tmp_path)
    path = specs / "models" / "test-13b.yaml"
    text = path.read_text("utf-8").replace("deployments:\n", f"deployments:\n  bad: {entry}\n", 1)
    path.write_text(text, "utf-8")
    report = io.StringIO()
    code = main(["check", "--specs", str(specs)], out=report)
    lines = [line for line in report.getvalue().splitlines() if message in line]
    assert 1 == code
    assert 1 == len(lines)
    line_no = text.splitlines().index(f"  bad: {entry}") + 1
    assert lines[0].startswith(f"{path}:{line_no}:")


def test_compile_runs_a_named_deployment() -> None:
    code, text = _run(
        "compile",
        "--model",
        "llama-3-70b",
        "--deployment",
        "gb200-nvl72",
        "--format",
        "json",
        "--phase",
        "decode-b32-l8192",
    )
    assert 0 == code
    rows = json.loads(text)["models"]
    assert [("nvidia-gb200", 72, 8)] == [(r["device"], r["chips"], r["tp"]) for r in rows]


def test_explain_memory_prints_the_degrees_of_the_row() -> None:
    """Section 6 names the degrees the ledger's figures use: tp = 8 at --tp 8 (the weights
    are an eighth per chip), and the short form on one chip."""
    argv = ("explain", "--model", "llama-3-70b", "--phase", "decode-b32-l8192")
    code, text = _run(*argv, "--device", "nvidia-h100-sxm", "--tp", "8")
    assert 0 == code
    memory = text.split("6. Memory per chip\n", 1)[1].splitlines()
    assert "   w = 2 B per value (bf16); tp = 8, pp = 1, ep = 1, dp = 1" == memory[0]
    code, text = _run(*argv, "--device", "nvidia-h100-sxm", "--tp", "4", "--pp", "2")
    memory = text.split("6. Memory per chip\n", 1)[1].splitlines()
    assert "   w = 2 B per value (bf16); tp = 4, pp = 2, ep = 1, dp = 1" == memory[0]
    code, text = _run(*argv, "--device", "nvidia-h100-sxm")
    memory = text.split("6. Memory per chip\n", 1)[1].splitlines()
    assert "   w = 2 B per value (bf16); tp = pp = ep = dp = 1" == memory[0]


def test_explain_runs_a_named_deployment() -> None:
    """`explain --deployment NAME` is the derivation at the named deployment's device and
    degrees: the same text as spelling them out with --device, --tp and --chips."""
    argv = ("explain", "--model", "llama-3-70b", "--phase", "decode-b32-l8192")
    code, named = _run(*argv, "--deployment", "gb200-nvl72")
    assert 0 == code
    code, spelled = _run(*argv, "--device", "nvidia-gb200", "--tp", "8", "--chips", "72")
    assert 0 == code
    assert spelled == named
    assert "deployment: tp = 8, pp = 1, ep = 1, dp = 9; chips = 72" in named
    # Its own device named again is no conflict.
    code, again = _run(*argv, "--deployment", "gb200-nvl72", "--device", "nvidia-gb200")
    assert (0, named) == (code, again)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--deployment", "nope"], "model 'llama-3-70b' names no deployment 'nope' (deployments:"),
        (
            ["--deployment", "hgx-h100-8", "--tp", "2"],
            "--deployment NAME gives the split: leave out --tp, --pp, --ep, --chips",
        ),
        (
            ["--deployment", "hgx-h100-8", "--chips", "8"],
            "--deployment NAME gives the split: leave out --tp, --pp, --ep, --chips",
        ),
        (
            ["--deployment", "hgx-h100-8", "--device", "amd-mi300x"],
            "deployment 'hgx-h100-8' runs on device 'nvidia-h100-sxm', not on the devices"
            " --device names",
        ),
        (["--deployment", "hgx-h100-8", "--device", "nope"], "unknown device 'nope'"),
        ([], "explain --model M needs --device D (or --deployment NAME)"),
    ],
)
def test_explain_deployment_conflicts_are_one_line_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """explain refuses what compile refuses for a named deployment (an unknown name,
    degrees beside it, another device), and a model's pass without any device."""
    code, text = _run("explain", "--model", "llama-3-70b", "--phase", "decode-b32-l8192", *args)
    err = capsys.readouterr().err
    assert (2, "") == (code, text)
    assert [f"rooflinec: error: {message}"] == [
        line[: len("rooflinec: error: ") + len(message)] for line in err.splitlines()
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["explain", "gemm-large", "--deployment", "x"], "--deployment NAME explains a model's"),
        (["explain", "gemm-large"], "explain CASE needs --device D"),
    ],
)
def test_explain_of_a_case_takes_a_device_and_no_named_deployment(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = _run(*argv)
    err = capsys.readouterr().err
    assert 2 == code
    assert err.startswith(f"rooflinec: error: {message}") and 1 == len(err.splitlines())


def test_json_text_of_a_row_over_chips_is_its_steps_data(bundled: Compiled) -> None:
    """The JSON writers' shared texts (a plan's steps, a collective's bound) give each row
    exactly `model_data(r)`: the same steps in the same order, every number the same."""
    from rooflinec.outputs.model_rows import model_data, write_model_jsonl

    engine = bundled.model_engine
    rows = [
        engine.row(m, ph, d, "bf16", Deployment(tp=8, pp=2))
        for m in ("test-13b", "mixtral-8x7b")
        for ph in list(bundled.catalog.models[m].phases)[:2]
        for d in ("nvidia-h100-sxm", "amd-mi300x")
    ]
    out = io.StringIO()
    write_model_jsonl(rows, out)
    written = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [json.loads(json.dumps(model_data(r))) for r in rows] == written


def test_csv_rows_carry_the_deployment_columns() -> None:
    """CSV model rows carry chips, tp, pp, ep, the fabric's bytes and time,
    time_overlapped and limited_by; a one-chip row leaves the fabric's cells empty."""
    import csv

    code, text = _run(
        "compile",
        "--model",
        "test-13b",
        "--device",
        "nvidia-h100-sxm",
        "--tp",
        "8",
        "--phase",
        "decode",
        "--format",
        "csv",
        "--csv-header",
        "plain",
    )
    assert 0 == code
    (row,) = list(csv.DictReader(io.StringIO(text)))
    assert ("8", "8", "1", "1") == (row["chips"], row["tp"], row["pp"], row["ep"])
    # Present (0 here: each all-reduce is held by the 2 µs launch floor) and absent.
    assert ("0", "") == (row["time_scale_up"], row["time_scale_out"])
    assert 40 * 2 * 5120 * 2 == int(row["bytes_scale_up"])  # 80 all-reduces of b*s*h at BF16
    assert "8" == row["steps"]  # the six on memory rooflines and the two all-reduces
    assert row["limited_by"] in ("dram", "latency", "scale_up")
    assert float(row["time_overlapped"]) <= float(row["time"])
    code, text = _run(
        "compile",
        "--model",
        "test-13b",
        "--device",
        "nvidia-h100-sxm",
        "--phase",
        "decode",
        "--format",
        "csv",
        "--csv-header",
        "plain",
    )
    (one,) = list(csv.DictReader(io.StringIO(text)))
    assert ("1", "", "") == (one["chips"], one["time_scale_up"], one["bytes_scale_up"])
    assert one["time"] == one["time_overlapped"]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    model=st.sampled_from(["test-13b", "llama-3-8b", "mixtral-8x7b"]),
    tp=st.sampled_from([1, 2, 4, 8]),
    pp=st.sampled_from([1, 2]),
    ep=st.sampled_from([1, 2, 8]),
    device=st.sampled_from(["nvidia-h100-sxm", "amd-mi300x", "nvidia-gb200", "intel-gaudi3"]),
)
def test_a_row_over_chips_adds_up(
    bundled_for_property: Compiled, model: str, tp: int, pp: int, ep: int, device: str
) -> None:
    """Whatever the split: the times by limit sum to the time; time_overlapped lies between
    the larger part (steps on memory rooflines, collectives) and the sum; limited_by holds
    the largest share; a collective of one chip is never a step."""
    engine = bundled_for_property.model_engine
    spec = bundled_for_property.catalog.models[model]
    deployment = Deployment(tp=tp, pp=pp, ep=ep)
    if deployment.problem() or engine.deployment_problem(spec, deployment):
        return
    phase = next(iter(spec.phases))
    row = engine.row(model, phase, device, "bf16", deployment)
    assert row.time == sum(row.time_by_limit.values())
    assert row.plan is not None
    pairs = zip(row.plan.collectives, row.collective_bounds, strict=True)
    talk = sum((b.time * c.count for c, b in pairs), Fraction(0))
    assert max(row.time - talk, talk) == row.time_overlapped <= row.time
    assert row.time_by_limit[row.limited_by] == max(row.time_by_limit.values())
    kernels = bundled_for_property.catalog.kernels
    for s in row.steps:
        if kernels[s.kernel].collective is not None:
            assert s.shape["n"] > 1 and s.count > 0


@pytest.fixture(scope="module")
def bundled_for_property() -> Compiled:
    return compile_catalog(catalog_or_raise(BUNDLED))
