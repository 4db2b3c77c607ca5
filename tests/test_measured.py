"""Measured runs with counted traffic, the launch-latency floor, and `rooflinec report`."""

from __future__ import annotations

import csv
import io
import json
from fractions import Fraction
from pathlib import Path

import pytest

from rooflinec.cli.main import main
from rooflinec.engine.compiler import compile_catalog
from rooflinec.pipeline import compiled_or_raise
from tests.measuredspecs import KERNEL, write_measured


def run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(args), out=out)
    return code, out.getvalue()


@pytest.fixture
def specs(tmp_path: Path) -> Path:
    return write_measured(tmp_path)


def _row(specs: Path, case: str, device: str) -> dict[str, object]:
    code, text = run("compile", "--specs", str(specs), "--format", "json", "--case", case)
    assert 0 == code
    rows = [r for r in json.loads(text)["results"] if r["device"] == device]
    assert 1 == len(rows)
    row: dict[str, object] = rows[0]
    return row


def test_counted_bytes_give_measured_intensity_bandwidth_and_ratio(specs: Path) -> None:
    """7.2 GB at DRAM in 2 ms against 6 GB modelled: 3.6 TB/s, 2/7.2 FLOP/B, ratio 1.2."""
    row = _row(specs, "axpy-big", "gpu-b")
    assert {"dram": 2e9 / 7.2e9, "l2": 1 / 3} == row["measured_intensity"]
    assert {"dram": 3600000000000, "l2": 3000000000000} == row["measured_bandwidth"]
    assert {"dram": 1.2, "l2": 1} == row["traffic_ratio"]
    assert 1000000000000 == row["measured"]
    assert 0.75 == row["efficiency"]


def test_rows_without_a_measured_run_have_no_measured_traffic(specs: Path) -> None:
    """The fields are left out of JSON rows without a run, and empty in CSV."""
    row = _row(specs, "axpy-big", "gpu-a")
    assert "measured_intensity" not in row and "traffic_ratio" not in row
    code, text = run("compile", "--specs", str(specs), "--format", "csv", "--case", "axpy-big")
    assert 0 == code
    rows = list(csv.DictReader(io.StringIO(text)))
    by_device = {r["device"]: r for r in rows}
    assert "" == by_device["gpu-a"]["traffic_ratio_dram [1]"]
    assert "1.2" == by_device["gpu-b"]["traffic_ratio_dram [1]"]
    assert "3.6e+12" == by_device["gpu-b"]["measured_bandwidth_dram [B/s]"]  # float text
    assert "0.2777777777777778" == by_device["gpu-b"]["measured_intensity_dram [OP/B]"]


def test_tiny_kernel_is_latency_limited_at_exactly_the_floor(specs: Path) -> None:
    """2048 FLOP on a 2 µs floor: limited by latency, 2 µs, 1.024 GFLOP/s."""
    row = _row(specs, "axpy-tiny", "gpu-a")
    assert "latency" == row["limited_by"]
    assert 2e-06 == row["time"]
    assert 1024000000 == row["attainable"]
    result = compiled_or_raise(specs).result("axpy-tiny", "gpu-a", "bf16")
    assert result is not None
    assert Fraction(2, 10**6) == result.time


def test_device_without_a_floor_keeps_the_roofline(specs: Path) -> None:
    """The same tiny kernel on the device without a floor is DRAM bound at 1.536 ns."""
    row = _row(specs, "axpy-tiny", "gpu-b")
    assert "dram" == row["limited_by"]
    assert 6144 / 4e12 == row["time"]


def test_big_kernel_is_above_the_floor(specs: Path) -> None:
    """A kernel far slower than 2 µs keeps its memory bound on the floored device."""
    row = _row(specs, "axpy-big", "gpu-a")
    assert "dram" == row["limited_by"]
    assert 0.0015 == row["time"]


def test_floor_caps_the_sweeps(specs: Path) -> None:
    """No faster memory or peak lifts a latency-held result: every sweep point is the floor."""
    row = _row(specs, "axpy-tiny", "gpu-a")
    floor = 1024000000
    assert {"0.5": floor, "1": floor, "2": floor, "4": floor} == row["bandwidth_sweep"]
    assert {"0.5": floor, "1": floor, "2": floor, "4": floor} == row["peak_sweep"]


def test_launches_scale_a_measurement_to_one_run(tmp_path: Path) -> None:
    """Ten launches summed by the profiler: per run, a tenth of the time and bytes."""
    kernel = KERNEL.replace("time: 2 ms", "time: 20 ms").replace("launches: 1\n", "launches: 10\n")
    kernel = kernel.replace("flops: 2000000000", "flops: 20 GFLOP")
    kernel = kernel.replace("{dram: 7.2 GB, l2: 6000000000}", "{dram: 72 GB, l2: 60 GB}")
    row = _row(write_measured(tmp_path, kernel), "axpy-big", "gpu-b")
    assert {"dram": 1.2, "l2": 1} == row["traffic_ratio"]
    assert 1000000000000 == row["measured"]


def test_bandwidth_above_its_ceiling_is_an_error(tmp_path: Path) -> None:
    """Counted DRAM bytes that imply more than the device's bandwidth name likely causes."""
    kernel = KERNEL.replace("dram: 7.2 GB", "dram: 72 GB")
    code, _ = run("check", "--specs", str(write_measured(tmp_path, kernel)))
    assert 1 == code
    from rooflinec.assemble import catalog_or_raise

    compiled = compile_catalog(catalog_or_raise(tmp_path / "specs"))
    messages = [d.message for d in compiled.diagnostics]
    assert 1 == len(messages)
    assert "measured dram bandwidth of case 'axpy-big' on 'gpu-b' at bf16 is 9x" in messages[0]
    assert "check the counter" in messages[0]


def test_report_prints_the_block(specs: Path) -> None:
    """The kernel line and the five write-up lines, worded from the method."""
    code, text = run("report", "axpy-big", "--device", "gpu-b", "--specs", str(specs))
    assert 0 == code
    lines = text.splitlines()
    expected = [
        "Kernel: AXPY, big (axpy-big) on GPU B at BF16 or FP16, 1 launch a run; measured"
        " with Nsight Compute 2025.1 on 2026-11-20 (source run1); operations counted by the"
        " profiler",
        "Achieved throughput: 1 TFLOP/s, 0.1% of the 1 PFLOP/s sustained peak (75% of the"
        " 1.333 TFLOP/s attainable)",
        "Achieved bandwidth: DRAM 3.6 TB/s, 90% of 4 TB/s; L2 3 TB/s, 15% of 20 TB/s",
        "Arithmetic intensity: DRAM 0.3333 FLOP/B modelled, 0.2778 FLOP/B measured (traffic"
        " ratio 1.2); L2 0.3333 FLOP/B modelled, 0.3333 FLOP/B measured (traffic ratio 1);"
        " modelled: the formula's operations and bytes; measured: the profiler's operations"
        " and bytes",
        "Regime: memory-bound at DRAM (ridge point 250 FLOP/B), at the measured intensity",
        "Bottleneck to attack: move fewer bytes at DRAM: fusion, a lower precision, tiling"
        " for reuse",
    ]
    assert expected == lines


def test_report_names_traffic_well_above_the_model(tmp_path: Path) -> None:
    """A traffic ratio of 1.5 or more: the caches are not holding what the formula assumes."""
    kernel = KERNEL.replace("dram: 7.2 GB", "dram: 7.9 GB").replace("l2: 6000000000", "l2: 12 GB")
    specs = write_measured(tmp_path, kernel)
    code, text = run("report", "axpy-big", "--device", "gpu-b", "--specs", str(specs))
    assert 0 == code
    assert (
        "Bottleneck to attack: move fewer bytes at DRAM: fusion, a lower precision, tiling for"
        " reuse; L2 moved 2x the modelled bytes: the caches are not holding what the formula"
        " assumes" == text.splitlines()[-1]
    )


def test_report_without_a_measured_run_is_a_usage_error(specs: Path) -> None:
    """No measured run on that device: exit 2, nothing printed."""
    code, text = run("report", "axpy-big", "--device", "gpu-a", "--specs", str(specs))
    assert (2, "") == (code, text)


def test_measurement_source_without_command_is_linted(tmp_path: Path) -> None:
    """A measurement source must say its tool and command."""
    kernel = KERNEL.replace("    command: ncu --csv --page raw ./axpy\n", "")
    code, text = run("check", "--specs", str(write_measured(tmp_path, kernel)))
    assert 0 == code
    assert "lint-measurement: measurement source 'run1' does not give its command" in text


def test_device_chart_places_measured_points_at_measured_intensity(specs: Path) -> None:
    """The diamond sits at the counted DRAM intensity, joined to the modelled marker."""
    from rooflinec.site import charts

    compiled = compiled_or_raise(specs)
    results = compiled.select(devices=["gpu-b"], declared_only=True)
    chart = charts.device_roofline(compiled, "gpu-b", results, "bf16")
    datasets = chart.spec["datasets"]
    (point,) = datasets["measured"]
    assert (0.2777778, 1e12) == (point["x"], point["y"])  # charts keep 7 digits
    assert "0.2778 FLOP/B (measured)" == point["intensity_label"]
    assert [
        {"n": "2", "end": 0, "x": 0.3333333, "y": 1.333333e12},
        {"n": "2", "end": 1, "x": 0.2777778, "y": 1e12},
    ] == datasets["moves"]


def test_measured_and_latency_rows_follow_the_results_schema(tmp_path: Path) -> None:
    """Rows with counted traffic and a latency-limited row validate against
    schemas/results.schema.json, which names every field a row may carry."""
    from rooflinec.schema import validator

    out = io.StringIO()
    assert 0 == main(
        ["compile", "--specs", str(write_measured(tmp_path)), "--format", "json"], out=out
    )
    document = json.loads(out.getvalue())
    rows = document["results"]
    assert any("traffic_ratio" in row for row in rows)
    assert any("latency" == row["limited_by"] for row in rows)
    assert [] == [e.message for e in validator("results").iter_errors(document)]


# --------------------------------------------------------------- one rule for measured runs
FAST = KERNEL.replace("time: 2 ms", "time: 0.5 ms")  # 4 TFLOP/s: 3x the 1.333 TFLOP/s roof
# The tiny case measured on the floored device in 0.4 µs: five times under the 2 µs floor.
UNDER_FLOOR = KERNEL.replace(
    "    shape: {n: 1024}\n",
    "    shape: {n: 1024}\n    measured:\n      - {device: gpu-a, precision: bf16, time: 0.4 µs}\n",
)
FAST_MESSAGE = (
    "kernels/axpy.yaml:28:9: error: measured rate of case 'axpy-big' on 'gpu-b' at bf16 is 3x"
    " the roofline ceiling (dram bound)"
)


def _refused(specs: Path, args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run a command that must refuse: exit 1, no figure on stdout (`check` prints its
    report there); the diagnostics it printed."""
    capsys.readouterr()
    code, text = run(*args, "--specs", str(specs))
    err = capsys.readouterr().err
    assert (1, "") == (code, text if args[0] != "check" else "")
    assert "Traceback" not in err
    return err + text


@pytest.mark.parametrize(
    "args",
    [
        ["check"],
        ["report", "axpy-big", "--device", "gpu-b"],
        ["explain", "axpy-big", "--device", "gpu-b"],
        ["compile", "--format", "json"],
        ["compile", "--format", "jsonl"],
        ["compile", "--format", "csv", "--case", "axpy-big"],
        ["compile", "--format", "table", "--device", "gpu-b"],
        ["compile", "--format", "csv", "--case", "axpy-tiny"],  # another case: still refused
    ],
)
def test_a_run_above_its_roofline_is_refused_by_every_command(
    tmp_path: Path, args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """check, report, explain and compile in every format give the same error at the
    entry's file:line:col and exit 1, printing no figure (no efficiency of 3)."""
    specs = write_measured(tmp_path, FAST)
    err = _refused(specs, args, capsys)
    assert FAST_MESSAGE in err


def test_compile_out_writes_nothing_for_a_run_above_its_roofline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`compile --out` (csv and parquet alike) leaves no file behind."""
    specs = write_measured(tmp_path, FAST)
    for fmt in ("csv", "parquet"):
        target = tmp_path / f"out.{fmt}"
        err = _refused(specs, ["compile", "--format", fmt, "--out", str(target)], capsys)
        assert FAST_MESSAGE in err
        assert not target.exists()
    assert ["specs"] == sorted(p.name for p in tmp_path.iterdir())


def test_a_run_under_the_launch_floor_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """0.4 µs on a 2 µs floor is five times the attainable rate: no "500 %" report."""
    specs = write_measured(tmp_path, UNDER_FLOOR)
    for args in (["check"], ["report", "axpy-tiny", "--device", "gpu-a"], ["compile"]):
        err = _refused(specs, args, capsys)
        assert (
            "kernels/axpy.yaml:24:9: error: measured rate of case 'axpy-tiny' on 'gpu-a' at"
            " bf16 is 5x the roofline ceiling (latency bound)" in err
        )


def test_compiled_or_raise_names_the_compile_errors(tmp_path: Path) -> None:
    """The library entry point raises the very diagnostics `check` prints."""
    from rooflinec.errors import SpecError
    from rooflinec.pipeline import checked

    specs = write_measured(tmp_path, FAST)
    with pytest.raises(SpecError) as raised:
        compiled_or_raise(specs)
    _, diagnostics, _ = checked(specs)
    errors = [str(d) for d in diagnostics if d.severity == "error"]
    assert errors == [str(d) for d in raised.value.diagnostics]
    assert 2 == len(errors)  # the rate and the DRAM bandwidth (3.6x)


@pytest.mark.parametrize(
    ("old", "new", "line", "column"),
    [
        ("flops: 2000000000", "flops: 0", 31, 16),
        ("flops: 2000000000", "flops: 0 FLOP", 31, 16),
        ("dram: 7.2 GB", "dram: 0", 32, 23),
        ("l2: 6000000000", "l2: 0 B", 32, 35),
    ],
)
def test_a_zero_count_is_refused_at_its_position(
    tmp_path: Path,
    old: str,
    new: str,
    line: int,
    column: int,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A counted 0 operations or 0 bytes would put the measured point at intensity 0 or
    infinity and turn the advice around: refused where it is written."""
    specs = write_measured(tmp_path, KERNEL.replace(old, new))
    for args in (["check"], ["report", "axpy-big", "--device", "gpu-b"]):
        err = _refused(specs, args, capsys)
        assert f"kernels/axpy.yaml:{line}:{column}: error: " in err
        assert "greater than" in err


def test_measured_intensity_needs_counted_operations(tmp_path: Path) -> None:
    """Counted bytes without counted operations: no measured intensity (the formula's
    operations over the profiler's bytes would mix sources), the regime is the model's,
    and the report line says which quotient is which."""
    specs = write_measured(tmp_path, KERNEL.replace("        flops: 2000000000\n", ""))
    row = _row(specs, "axpy-big", "gpu-b")
    assert "measured_intensity" not in row
    assert {"dram": 1.2, "l2": 1} == row["traffic_ratio"]
    code, text = run("report", "axpy-big", "--device", "gpu-b", "--specs", str(specs))
    assert 0 == code
    lines = text.splitlines()
    assert (
        "Arithmetic intensity: DRAM 0.3333 FLOP/B modelled, none measured (bytes counted,"
        " operations not; traffic ratio 1.2); L2 0.3333 FLOP/B modelled, none measured (bytes"
        " counted, operations not; traffic ratio 1); modelled: the formula's operations and"
        " bytes" == lines[3]
    )
    assert lines[4].endswith("modelled: the profiler counted bytes but no operations")
    code, text = run("explain", "axpy-big", "--device", "gpu-b", "--specs", str(specs))
    assert 0 == code
    assert (
        "   dram: no measured intensity (operations not counted), bandwidth 3.6 TB/s,"
        " traffic ratio 1.2" in text.splitlines()
    )
