"""`rooflinec compile` and `rooflinec explain` from the command line."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rooflinec.cli.main import main
from tests.specfactory import BUNDLED, REPO

GOLDEN = Path(__file__).parent / "golden" / "bundled-results.json"


def run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(args), out=out)
    return code, out.getvalue()


def test_json_matches_golden() -> None:
    """The compiled bundled catalog equals the reviewed golden file.

    Set ROOFLINEC_UPDATE_GOLDEN=1 to write it anew after a reviewed change.
    """
    code, text = run("compile", "--specs", str(BUNDLED), "--format", "json")
    assert 0 == code
    actual = json.loads(text)
    # Model rows: the reference model's only (tests/golden/cli keeps a digest of them all).
    actual["models"] = [r for r in actual["models"] if r["model"] == "test-13b"]
    if os.environ.get("ROOFLINEC_UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(actual, indent=2, ensure_ascii=False) + "\n", "utf-8")
    expected = json.loads(GOLDEN.read_text("utf-8"))
    actual["rooflinec"] = expected["rooflinec"]
    assert expected == actual


def test_json_contract_shape() -> None:
    """Every result row carries exactly the contract's fields; one row per case × device × peak."""
    _, text = run("compile", "--specs", str(BUNDLED), "--format", "json")
    doc = json.loads(text)
    assert {"rooflinec", "precisions", "devices", "results", "models"} == set(doc)
    assert {"label": "INT8", "bytes": 1, "unit": "OP"} == doc["precisions"]["int8"]
    h100 = doc["devices"]["nvidia-h100-sxm"]
    assert {"name", "peaks", "bandwidths", "ridges"} == set(h100)
    assert 989.5e12 == h100["peaks"]["bf16"]
    assert 295.373 == round(h100["ridges"]["bf16"]["dram"], 3)
    fields = {
        "case",
        "kernel",
        "shape",
        "device",
        "precision",
        "declared",
        "flops",
        "bytes",
        "intensity",
        "attainable",
        "limited_by",
        "share_of_peak",
        "time",
        "bandwidth_sweep",
        "peak_sweep",
        "measured",
        "efficiency",
    }
    cases = sum(
        1 for _ in doc["results"] if _["device"] == "nvidia-h100-sxm" and _["precision"] == "bf16"
    )
    peaks = sum(len(d["peaks"]) for d in doc["devices"].values())
    assert cases * peaks == len(doc["results"])
    for row in doc["results"]:
        assert fields == set(row)
        assert {"0.5", "1", "2", "4"} == set(row["bandwidth_sweep"]) == set(row["peak_sweep"])


def test_filters_and_declared_only() -> None:
    """--device, --case, --precision and --declared-only narrow the rows."""
    _, text = run(
        "compile",
        "--specs",
        str(BUNDLED),
        "--format",
        "json",
        "--device",
        "nvidia-h100-sxm",
        "--case",
        "gemm-large",
        "--case",
        "conv3x3",
    )
    rows = json.loads(text)["results"]
    assert 12 == len(rows)
    _, text = run(
        "compile",
        "--specs",
        str(BUNDLED),
        "--format",
        "json",
        "--device",
        "nvidia-h100-sxm",
        "--declared-only",
    )
    rows = json.loads(text)["results"]
    assert all(r["declared"] for r in rows)
    assert {"bf16"} == {r["precision"] for r in rows}


def test_csv_has_units_in_headers() -> None:
    """CSV: one row per result, units in brackets in the header, exact values as numbers."""
    _, text = run(
        "compile",
        "--specs",
        str(BUNDLED),
        "--format",
        "csv",
        "--device",
        "nvidia-h100-sxm",
        "--case",
        "gemm-large",
        "--precision",
        "bf16",
    )
    (row,) = list(csv.DictReader(io.StringIO(text)))
    assert "1099511627776" == row["flops [OP]"]
    assert 989.5e12 == float(row["attainable [OP/s]"])
    assert "compute" == row["limited_by"]
    assert "" == row["bytes_l2 [B]"]


def test_table_is_readable() -> None:
    """The table prints SI prefixes with sensible significant figures."""
    _, text = run(
        "compile",
        "--specs",
        str(BUNDLED),
        "--device",
        "nvidia-h100-sxm",
        "--precision",
        "bf16",
    )
    assert "989.5 TFLOP/s" in text
    assert "0.9995 FLOP/B" in text
    assert "2731 FLOP/B" in text


@pytest.mark.parametrize(
    "args",
    [
        ["compile", "--device", "no-such-device"],
        ["compile", "--case", "nope"],
        ["compile", "--precision", "fp128"],
        ["compile", "--format", "xml"],
        ["explain", "gemm-large"],
        ["explain", "nope", "--device", "nvidia-h100-sxm"],
        ["explain", "gemm-large", "--device", "google-tpu-v5p", "--precision", "fp64"],
        ["frobnicate"],
    ],
)
def test_usage_errors_exit_2(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Unknown ids, formats and commands are usage errors: exit 2, one line, no traceback."""
    code = main([*args, "--specs", str(BUNDLED)] if args[0] != "frobnicate" else args)
    err = capsys.readouterr().err
    assert 2 == code
    assert "Traceback" not in err
    assert "error" in err


def test_explain_reads_as_a_derivation() -> None:
    """explain of the 8192³ GEMM on H100 walks from formulas to the time."""
    code, text = run(
        "explain", "gemm-large", "--device", "nvidia-h100-sxm", "--specs", str(BUNDLED)
    )
    assert 0 == code
    for line in [
        "M = 8,192",
        "FLOP = 2*M*N*K",
        "= 1,099,511,627,776 FLOP",
        "= 402,653,184 B",
        "intensity = FLOP / bytes = 2730.67 FLOP/B",
        "1979 TFLOP/s ÷ 2 (printed with 2:4 sparsity)",
        "dram ridge point = peak / bandwidth = 295.373 FLOP/B",
        "lowest: compute → attainable = 989.5 TFLOP/s",
        "time = FLOP / attainable = 1.11118 ms",
    ]:
        assert line in text, line


def test_explain_symbolic() -> None:
    """--symbolic folds the device constants into max(c1*(M*N*K), c2*(...)) with LaTeX."""
    _, text = run(
        "explain",
        "gemm-large",
        "--device",
        "nvidia-h100-sxm",
        "--symbolic",
        "--specs",
        str(BUNDLED),
    )
    assert "time = max(2.02122e-15*(K*M*N), 5.97015e-13*(K*M + K*N + M*N))  [s]" in text
    assert r"\max\left(" in text


def test_explain_names_levels_without_ceiling() -> None:
    """On Gaudi 3 (SRAM level, kernels without L2 traffic) explain says the level is no ceiling."""
    _, text = run("explain", "conv3x3", "--device", "intel-gaudi3", "--specs", str(BUNDLED))
    assert "l2: no ceiling for this pair: the kernel gives no l2 traffic" in text


def test_console_script_runs_outside_repo(tmp_path: Path) -> None:
    """The installed command works from any folder on the bundled catalog."""
    exe = Path(sys.executable).with_name("rooflinec")
    if not exe.exists():
        pytest.skip("rooflinec console script not installed in this environment")
    proc = subprocess.run(
        [
            str(exe),
            "compile",
            "--case",
            "gemm-large",
            "--device",
            "nvidia-h100-sxm",
            "--precision",
            "bf16",
            "--format",
            "json",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert 0 == proc.returncode, proc.stderr
    assert "compute" == json.loads(proc.stdout)["results"][0]["limited_by"]
    assert REPO.exists()
