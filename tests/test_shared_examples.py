"""The shared example specs (../shared/examples/specs) are part of the contract.

They must load, validate and compile with every version of rooflinec.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from rooflinec.assemble import build_catalog, discover
from rooflinec.cli.main import main
from rooflinec.loader import load_file
from rooflinec.schema import validate

OUTSIDE = Path(__file__).parents[2] / "shared" / "examples" / "specs"
# tests/cases/base is a copy kept in the repo, so the contract is tested on every machine;
# where the shared folder is present it is tested itself, and the copy must match it.
COPY = Path(__file__).parent / "cases" / "base"
SHARED = OUTSIDE if OUTSIDE.is_dir() else COPY


@pytest.mark.skipif(not OUTSIDE.is_dir(), reason="the shared folder is not beside this checkout")
def test_copy_matches_shared_examples() -> None:
    """The repo's copy of the shared examples is identical to the shared folder."""
    shared = {p.relative_to(OUTSIDE): p.read_bytes() for p in OUTSIDE.rglob("*.yaml")}
    copy = {p.relative_to(COPY): p.read_bytes() for p in COPY.rglob("*.yaml")}
    assert shared == copy


def _files() -> list[tuple[Path, str]]:
    if not SHARED.is_dir():
        return []
    files = discover(SHARED)
    out = [(files.precisions, "precisions")] if files.precisions else []
    out += [(p, "device") for p in files.devices]
    out += [(p, "kernel") for p in files.kernels]
    out += [(p, "method") for p in files.methods]
    return out


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`rooflinec ARGS` in process: (exit code, stdout, stderr)."""
    buffer = io.StringIO()
    code = main(list(args), out=buffer)
    captured = capsys.readouterr()
    return code, buffer.getvalue() + captured.out, captured.err


@pytest.mark.parametrize(("path", "kind"), _files(), ids=lambda v: getattr(v, "name", v))
def test_each_shared_file_loads_and_validates(path: Path, kind: str) -> None:
    """Every shared spec file loads and passes its JSON Schema."""
    assert validate(load_file(path), kind) == []


def test_shared_examples_build_without_errors() -> None:
    """The shared folder builds into a catalog with no error."""
    catalog, diagnostics = build_catalog(SHARED)
    assert [str(d) for d in diagnostics if d.severity == "error"] == []
    assert catalog is not None
    assert "nvidia-h100-sxm" in catalog.devices
    assert "gemm-large" in catalog.cases


def test_shared_examples_pass_check(capsys: pytest.CaptureFixture[str]) -> None:
    """`rooflinec check` on the shared folder exits 0."""
    code, out, err = run(capsys, "check", "--specs", str(SHARED))
    assert code == 0, out + err
    assert ": error: " not in out


def _compiled(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code, out, err = run(capsys, "compile", "--specs", str(SHARED), "--format", "json")
    assert code == 0, err
    document: dict[str, Any] = json.loads(out)
    return document


def test_compile_gives_the_gemm_large_bf16_intensity(capsys: pytest.CaptureFixture[str]) -> None:
    """compile --format json: gemm-large at bf16 on the H100 has intensity 8192/3 FLOP/B."""
    document = _compiled(capsys)
    rows = [
        r for r in document["results"] if r["case"] == "gemm-large" and r["precision"] == "bf16"
    ]
    assert len(rows) == 1
    (row,) = rows
    assert row["device"] == "nvidia-h100-sxm"
    assert row["declared"] is True
    assert row["intensity"]["dram"] == pytest.approx(8192 / 3, rel=1e-12)
    assert row["limited_by"] == "compute"
    assert row["attainable"] == pytest.approx(989.5e12, rel=1e-12)


def test_compile_follows_the_results_contract(capsys: pytest.CaptureFixture[str]) -> None:
    """The JSON document has the contract's top-level keys and one row per peak."""
    document = _compiled(capsys)
    assert set(document) >= {"rooflinec", "precisions", "devices", "results"}
    device = document["devices"]["nvidia-h100-sxm"]
    assert set(device["peaks"]) == {"fp64", "fp32", "tf32", "bf16", "fp8", "int8"}
    cases = {"gemm-large", "gemm-fp32-skinny"}
    assert {(r["case"], r["precision"]) for r in document["results"]} == {
        (c, p) for c in cases for p in device["peaks"]
    }
