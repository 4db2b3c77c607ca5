"""Results for data tools: JSON Lines records, CSV with plain headers, and the results
schema that `compile --format json` follows."""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
from typing import Any

import pytest

from rooflinec.engine.compiler import Compiled
from rooflinec.outputs.results import CSV_COLUMNS, CSV_PLAIN_COLUMNS, plain_header, results_text
from rooflinec.pipeline import compiled_or_raise
from rooflinec.schema import validator
from tests.specfactory import BUNDLED
from tests.test_cli_compile import run


@pytest.fixture(scope="module")
def bundled() -> Compiled:
    return compiled_or_raise(BUNDLED)


@pytest.fixture(scope="module")
def document(bundled: Compiled) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(results_text(bundled, bundled.rows(), "json"))
    return data


def _as_written(text: str) -> Any:
    """JSON with every number kept as its text, so two outputs compare byte for byte."""
    return json.loads(text, parse_float=str, parse_int=str)


# --- the results schema -------------------------------------------------------------------


def test_compile_json_follows_the_results_schema(document: dict[str, Any]) -> None:
    """The bundled catalog's `compile --format json` validates against results.schema.json."""
    errors = [
        f"{list(e.absolute_path)}: {e.message}" for e in validator("results").iter_errors(document)
    ]
    assert [] == errors
    assert 1000 < len(document["results"])


def test_results_schema_refuses_a_broken_row(document: dict[str, Any]) -> None:
    """An unknown bound, a missing field and an extra field each fail the schema."""
    row = dict(document["results"][0])
    del row["time"]
    row["limited_by"] = "hbm"
    row["colour"] = "red"
    broken = {**document, "results": [row]}
    found = sorted(e.validator for e in validator("results").iter_errors(broken))
    assert ["additionalProperties", "enum", "required"] == found


def test_results_schema_reads_the_sweep_keys(document: dict[str, Any]) -> None:
    """A sweep without its '4' key fails: the keys are part of the contract."""
    row = json.loads(json.dumps(document["results"][0]))
    del row["peak_sweep"]["4"]
    errors = list(validator("results").iter_errors({**document, "results": [row]}))
    assert [["results", 0, "peak_sweep"]] == [list(e.absolute_path) for e in errors]


# --- JSON Lines ---------------------------------------------------------------------------


def test_jsonl_is_one_record_per_result_with_the_documents_values(
    bundled: Compiled, document: dict[str, Any]
) -> None:
    """Each line is one row of the JSON document's `results`, every number as written."""
    cells = bundled.rows()
    lines = results_text(bundled, cells, "jsonl").splitlines()
    json_text = results_text(bundled, cells, "json")
    assert len(document["results"]) == len(lines)
    assert _as_written(json_text)["results"] == [_as_written(line) for line in lines]


def test_jsonl_of_a_subset_has_the_full_compiles_lines(bundled: Compiled) -> None:
    """A cell's line is the same bytes whatever else was selected."""
    full = results_text(bundled, bundled.rows(), "jsonl").splitlines()
    subset = results_text(bundled, bundled.rows(devices=["nvidia-h100-sxm"]), "jsonl")
    mine = [line for line in full if '"device": "nvidia-h100-sxm"' in line]
    assert mine == subset.splitlines()
    assert mine


def test_jsonl_of_nothing_is_empty(bundled: Compiled) -> None:
    """No cells, no lines (not an empty document)."""
    assert "" == results_text(bundled, [], "jsonl")


def test_compile_jsonl_from_the_command_line() -> None:
    """`rooflinec compile --format jsonl` prints one JSON object per line."""
    code, text = run(
        "compile", "--specs", str(BUNDLED), "--format", "jsonl", "--case", "gemm-large"
    )
    assert 0 == code
    records = [json.loads(line) for line in text.splitlines()]
    assert {"gemm-large"} == {r["case"] for r in records}
    assert text.endswith("}\n")


def test_jsonl_loads_into_pandas(bundled: Compiled, document: dict[str, Any]) -> None:
    """pandas reads the records directly: one row per result, nested levels as dicts."""
    pandas = pytest.importorskip("pandas")
    text = results_text(bundled, bundled.rows(), "jsonl")
    frame = pandas.read_json(io.StringIO(text), lines=True)
    first = document["results"][0]
    assert len(document["results"]) == len(frame)
    assert list(first) == list(frame.columns)
    assert first["case"] == frame.loc[0, "case"]
    assert first["attainable"] == frame.loc[0, "attainable"]
    assert first["bytes"] == frame.loc[0, "bytes"]
    compute = (frame["limited_by"] == "compute").sum()
    assert sum(r["limited_by"] == "compute" for r in document["results"]) == compute


def _jsonl_kinds(*args: str) -> list[set[str]]:
    """The distinct key sets of the lines of `compile --format jsonl ARGS` on the bundle."""
    code, text = run("compile", "--specs", str(BUNDLED), "--format", "jsonl", *args)
    assert 0 == code
    return [set(keys) for keys in {tuple(sorted(json.loads(line))) for line in text.splitlines()}]


def test_compile_jsonl_never_mixes_row_kinds() -> None:
    """Without --model the stream holds kernel cells only (none has `model`); with --model,
    model rows only (none has `case`), even beside --case."""
    cells = _jsonl_kinds("--device", "nvidia-h100-sxm")
    assert cells and all("case" in keys and "model" not in keys for keys in cells)
    for args in (("--model", "test-13b"), ("--model", "test-13b", "--case", "gemm-large")):
        models = _jsonl_kinds(*args)
        assert 1 == len(models)
        assert "model" in models[0] and "steps" in models[0] and "case" not in models[0]


@pytest.mark.parametrize(
    "args", [("--device", "amd-mi300x"), ("--model", "test-13b", "--model", "llama-3-8b")]
)
def test_each_jsonl_stream_reads_as_one_rectangular_table(args: tuple[str, ...]) -> None:
    """pandas reads either stream as one table whose columns are exactly the fields of its
    row kind, in the contract's order, and whose rows are the JSON document's rows."""
    pandas = pytest.importorskip("pandas")
    model = "--model" in args
    code, text = run("compile", "--specs", str(BUNDLED), "--format", "json", *args)
    assert 0 == code
    rows = json.loads(text)["models" if model else "results"]
    code, text = run("compile", "--specs", str(BUNDLED), "--format", "jsonl", *args)
    assert 0 == code
    frame = pandas.read_json(io.StringIO(text), lines=True, dtype=False, precise_float=True)
    keys = list(dict.fromkeys(k for row in rows for k in row))
    assert keys == list(frame.columns)
    assert len(rows) == len(frame)
    if model:
        assert [] == [k for k in keys if frame[k].isna().all() and k not in _NULLABLE]
        assert [r["steps"] for r in rows] == frame["steps"].tolist()
        assert [r["time"] for r in rows] == frame["time"].tolist()
    else:
        assert [r["case"] for r in rows] == frame["case"].tolist()
        assert [r["time"] for r in rows] == frame["time"].tolist()


_NULLABLE = {"measured_time", "efficiency", "max_context_note", "needs_chips"}


def test_jsonl_refuses_both_kinds(bundled: Compiled) -> None:
    """The writer itself refuses to mix kernel cells and model rows in one stream."""
    models = bundled.model_engine.rows(models=["test-13b"])
    with pytest.raises(ValueError, match="not both"):
        results_text(bundled, bundled.rows(), "jsonl", models=models)


def test_an_unknown_text_format_is_refused(bundled: Compiled) -> None:
    """A format `write_results` does not write to a text stream (Parquet is a file's) is a
    ValueError naming the ones it does, not a CSV written by default."""
    with pytest.raises(ValueError, match=r"no text format 'parquet' \(known: .*csv"):
        results_text(bundled, bundled.rows(), "parquet")


# --- CSV headers --------------------------------------------------------------------------


def test_plain_header_names() -> None:
    """Units dropped, the sweep factor's point made an underscore, ids named as ids
    (`case` is an SQL keyword)."""
    assert "time" == plain_header("time [s]")
    assert "bytes_dram" == plain_header("bytes_dram [B]")
    assert "bandwidth_x0_5" == plain_header("bandwidth_x0.5 [OP/s]")
    assert ["case_id", "kernel_id", "shape", "device_id", "precision_id"] == CSV_PLAIN_COLUMNS[:5]


def test_plain_headers_are_unique_sql_identifiers() -> None:
    """Every plain header is a bare SQL identifier, and no two are the same."""
    assert len(CSV_COLUMNS) == len(set(CSV_PLAIN_COLUMNS))
    bad = [h for h in CSV_PLAIN_COLUMNS if not re.fullmatch(r"[a-z_][a-z0-9_]*", h)]
    assert [] == bad


def test_plain_csv_differs_only_in_its_header(bundled: Compiled) -> None:
    """Same rows, same bytes; the header row alone loses the units."""
    cells = bundled.rows(cases=["gemm-large"])
    units = results_text(bundled, cells, "csv").splitlines()
    plain = results_text(bundled, cells, "csv", csv_header="plain").splitlines()
    assert ",".join(CSV_PLAIN_COLUMNS) == plain[0]
    assert units[1:] == plain[1:]


def test_plain_csv_queries_in_sql_without_quoting(bundled: Compiled) -> None:
    """Loaded into SQLite, the columns are queried by their bare names."""
    cells = bundled.rows()
    rows = list(csv.reader(io.StringIO(results_text(bundled, cells, "csv", csv_header="plain"))))
    header, body = rows[0], rows[1:]
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE TABLE results ({', '.join(header)})")
    db.executemany(f"INSERT INTO results VALUES ({', '.join('?' * len(header))})", body)
    (count,) = db.execute(
        "SELECT count(*) FROM results"
        " WHERE limited_by = 'compute' AND case_id = 'gemm-large' AND bandwidth_x0_5 > 0"
    ).fetchone()
    at = {name: i for i, name in enumerate(header)}
    expected = sum(
        1 for r in body if (r[at["limited_by"]], r[at["case_id"]]) == ("compute", "gemm-large")
    )
    assert expected == count
    assert count > 0
    db.close()


def test_compile_csv_header_option() -> None:
    """`--csv-header plain` on the command line; the default keeps the units."""
    args = ("compile", "--specs", str(BUNDLED), "--format", "csv", "--case", "gemm-large")
    code, plain = run(*args, "--csv-header", "plain")
    assert 0 == code
    assert ",".join(CSV_PLAIN_COLUMNS) == plain.splitlines()[0]
    code, default = run(*args)
    assert ",".join(CSV_COLUMNS) == default.splitlines()[0]
