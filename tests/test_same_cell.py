"""Same cell, same bytes: a result's JSON and CSV text does not depend on what else was
selected or on how many rows were asked for."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.synth import write_catalog
from rooflinec.cli.main import main
from tests.specfactory import BUNDLED


def compile_text(specs: Path, *args: str) -> str:
    out = io.StringIO()
    assert 0 == main(["compile", "--specs", str(specs), *args], out=out)
    return out.getvalue()


def json_rows(text: str) -> dict[tuple[str, str, str], str]:
    """Each result of a JSON document as its own text, by (case, device, precision)."""
    records = json.loads(text)["results"]
    return {
        (r["case"], r["device"], r["precision"]): json.dumps(r, indent=2, ensure_ascii=False)
        for r in records
    }


def csv_rows(text: str) -> dict[tuple[str, str, str], str]:
    """Each CSV line by (case, device, precision) (ids hold no comma or quote)."""
    lines = text.splitlines()[1:]
    out = {}
    for line in lines:
        case, _kernel, _shape, device, precision = line.split(",")[:5]
        out[(case, device, precision)] = line
    return out


def assert_subset_rows_equal(specs: Path, full_json: str, full_csv: str, args: list[str]) -> int:
    """Compiling with `args` gives, row for row, the bytes of the full compile."""
    whole_json, whole_csv = json_rows(full_json), csv_rows(full_csv)
    part_json = json_rows(compile_text(specs, "--format", "json", *args))
    part_csv = csv_rows(compile_text(specs, "--format", "csv", *args))
    assert part_json, args
    assert sorted(part_json) == sorted(part_csv)
    assert {k: whole_json[k] for k in part_json} == part_json
    assert {k: whole_csv[k] for k in part_csv} == part_csv
    return len(part_json)


def subsets(document: dict[str, Any]) -> list[list[str]]:
    """A device, a case, a precision, a combination and the declared rows.

    The combination takes the last device that has FP8 results (not every device has FP8)
    and the first case it has them for, so it selects at least one row.
    """
    results = document["results"]
    first, last = results[0], results[-1]
    fp8 = [r for r in results if r["precision"] == "fp8"]
    assert fp8, "the catalog has no FP8 results to combine"
    device = fp8[-1]["device"]
    case = next(r["case"] for r in fp8 if r["device"] == device)
    return [
        ["--device", first["device"]],
        ["--device", last["device"]],
        ["--case", last["case"]],
        ["--precision", first["precision"]],
        ["--precision", "fp8", "--device", device, "--case", case],
        ["--declared-only"],
    ]


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """4 devices × 1,000 cases × 6 precisions: 24,000 rows."""
    yield write_catalog(tmp_path_factory.mktemp("synth"), devices=4, cases=1000)


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """2 devices × 60 cases: 720 rows."""
    yield write_catalog(tmp_path_factory.mktemp("small"), devices=2, cases=60)


def test_bundled_subsets_give_the_same_rows() -> None:
    """Bundled catalog: each subset's rows are byte for byte those of the full compile."""
    full_json = compile_text(BUNDLED, "--format", "json")
    full_csv = compile_text(BUNDLED, "--format", "csv")
    for args in subsets(json.loads(full_json)):
        assert_subset_rows_equal(BUNDLED, full_json, full_csv, args)


@pytest.mark.parametrize("catalog", ["small", "synthetic"])
def test_synthetic_subsets_give_the_same_rows(catalog: str, request: pytest.FixtureRequest) -> None:
    """Synthetic catalogs below and above 20,000 rows: subsets give the full compile's rows."""
    specs: Path = request.getfixturevalue(catalog)
    full_json = compile_text(specs, "--format", "json")
    full_csv = compile_text(specs, "--format", "csv")
    document = json.loads(full_json)
    expected_rows = {"small": 720, "synthetic": 24000}[catalog]
    assert expected_rows == len(document["results"])
    for args in subsets(document):
        assert_subset_rows_equal(specs, full_json, full_csv, args)
