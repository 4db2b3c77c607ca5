"""Request rows on the command line: `compile --model M --input I --output O` (or
`--request ID`) in every format from one field table, the results schema, the table's
fit text, and `explain`'s derivation of one row."""

from __future__ import annotations

import csv
import io
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from rooflinec.assemble import catalog_or_raise
from rooflinec.catalog import Deployment
from rooflinec.cli.main import main
from rooflinec.engine.compiler import compile_catalog
from rooflinec.engine.requests import RequestBatch, RequestShape, evaluate_request
from rooflinec.outputs.cells import num
from rooflinec.outputs.request_rows import (
    REQUEST_CSV_COLUMNS,
    REQUEST_FIELDS,
)
from rooflinec.schema import validator
from tests.specfactory import BUNDLED, copy_bundled

H100 = "nvidia-h100-sxm"
BASE = ("--specs", str(BUNDLED), "--model", "llama-3-70b", "--device", H100)


def _run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


def _compile(*argv: str) -> str:
    code, text = _run("compile", *BASE, *argv)
    assert 0 == code, text
    return text


def test_json_follows_the_results_schema() -> None:
    """`compile --format json` with a request: the results contract, request rows under
    `requests`, each row's keys the field table's, in order; no results or model rows."""
    text = _compile("--tp", "8", "--input", "2048", "--output", "512", "--format", "json")
    document: dict[str, Any] = json.loads(text)
    assert [] == list(validator("results").iter_errors(document))
    assert ([], []) == (document["results"], document["models"])
    [row] = document["requests"]
    assert [f.key for f in REQUEST_FIELDS if f.json] == list(row)
    assert (8, 1, 2048, 512, True) == (
        row["chips"],
        row["batch"],
        row["input"],
        row["output"],
        row["fits"],
    )


def test_every_format_writes_the_same_exact_values(tmp_path: Path) -> None:
    """JSON Lines, CSV and Parquet hold the same values as the engine's row, field by
    field: JSON and CSV an integer as one and anything else as the nearest float."""
    argv = ("--tp", "2", "--chips", "4", "--request", "long-8k", "--batch", "3")
    engine = compile_catalog(catalog_or_raise(BUNDLED)).model_engine
    result = evaluate_request(
        engine, "llama-3-70b", H100, "bf16", Deployment(tp=2, chips=4), 3, RequestShape(8192, 1024)
    )
    expected = {
        "model": "llama-3-70b",
        "request": "long-8k",
        "device": H100,
        "precision": "bf16",
        "declared": True,
        "chips": 4,
        "tp": 2,
        "pp": 1,
        "ep": 1,
        "batch": 3,
        "input": 8192,
        "output": 1024,
        "fits": result.fits,
        "needs_chips": result.needs_chips,
    }
    for key in (
        "ttft",
        "itl",
        "latency",
        "tokens_per_second_per_user",
        "tokens_per_second",
        "tokens_per_second_per_chip",
        "joules_per_token",
        "tokens_per_second_per_kw",
    ):
        value = getattr(result, key)
        assert isinstance(value, Fraction)
        expected[key] = num(value)
    expected.update(usd_per_million_tokens=None, price_source=None)
    expected.update(draft_tokens=None, acceptance=None, tokens_per_pass=1)
    expected = {f.key: expected[f.key] for f in REQUEST_FIELDS}  # the field table's order
    [line] = _compile(*argv, "--format", "jsonl").splitlines()
    assert expected == json.loads(line)
    table = list(csv.reader(io.StringIO(_compile(*argv, "--format", "csv"))))
    assert REQUEST_CSV_COLUMNS == table[0]
    plain = {k: ("" if v is None else json.dumps(v).strip('"')) for k, v in expected.items()}
    assert list(plain.values()) == table[1]
    out = tmp_path / "rows.parquet"
    _compile(*argv, "--format", "parquet", "--out", str(out))
    [stored] = pq.read_table(out).to_pylist()
    floats = {
        k: float(v) if isinstance(v, int) and not isinstance(v, bool) else v
        for k, v in expected.items()
    }
    renamed = {
        h.split(" [")[0]: v for h, v in zip(REQUEST_CSV_COLUMNS, floats.values(), strict=True)
    }
    assert renamed == stored


def test_one_row_per_device_and_precision() -> None:
    """As the model rows: one row per device × precision selected, the model's own
    precision unless `--precision` names others (marked `*` in the table)."""
    rows = _compile(
        "--device", "amd-mi300x", "--input", "128", "--output", "16", "--format", "jsonl"
    ).splitlines()
    assert [(H100, "bf16"), ("amd-mi300x", "bf16")] == sorted(
        ((json.loads(r)["device"], json.loads(r)["precision"]) for r in rows), reverse=True
    )
    text = _compile("--input", "128", "--output", "16", "--precision", "fp8")
    assert "fp8*" in text.splitlines()[2]


def test_the_table_says_when_a_request_does_not_fit() -> None:
    """Llama 3 70B on one 80 GB H100 does not fit: the table says so, with the chips it
    needs, in place of its rates; the row's columns are the field table's."""
    text = _compile("--request", "chat-1k")
    header, _, row, footer = text.splitlines()
    shown = [f.table for f in REQUEST_FIELDS if f.table is not None]
    assert " ".join(str(s) for s in shown).split() == header.split()
    assert "does not fit (needs 2 chips)" in row
    assert row.rstrip().endswith("does not fit (needs 2 chips)")
    assert "1 request row; * = not the model's own precision" == footer


def test_output_one_has_no_itl_in_any_format() -> None:
    """output = 1: itl and the rate per user are null (empty in CSV, '-' in the table)."""
    [line] = _compile(
        "--tp", "2", "--input", "64", "--output", "1", "--format", "jsonl"
    ).splitlines()
    row = json.loads(line)
    assert (None, None) == (row["itl"], row["tokens_per_second_per_user"])
    assert row["ttft"] == row["latency"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--input", "10"), "needs both --input N and --output N"),
        (
            ("--request", "nope"),
            "model 'llama-3-70b' names no request 'nope' (requests: chat-1k, long-8k)",
        ),
        (("--request", "chat-1k", "--output", "3"), "--request ID gives the shape"),
        (("--input", "1", "--output", "1", "--phase", "decode-b1-l2048"), "leave out --phase"),
        (
            ("--input", "1", "--output", "1", "--batch", "1048577"),
            "--batch '1048577' is not a batch",
        ),
        (
            ("--input", "1", "--output", "1", "--partition", "device"),
            "--partition splits kernel cells",
        ),
        (("--input", "1", "--output", "1", "--format", "parquet"), "name it with --out FILE"),
        (("--input", "1", "--output", "1", "--tp", "3"), "is not a deployment of model"),
    ],
)
def test_usage_errors(argv: tuple[str, ...], message: str, tmp_path: Path) -> None:
    """Each misuse is one line `rooflinec: error: ...`, exit 2, nothing on stdout."""
    err = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.stderr", err)
        code, text = _run("compile", *BASE, *argv)
    assert (2, "") == (code, text)
    [line] = err.getvalue().splitlines()
    assert line.startswith("rooflinec: error: ")
    assert message in line


def test_explain_derives_a_request_row() -> None:
    """`explain` of a request: the prefill pass, the decode passes' pieces and sum, itl,
    latency, the rates with their figures substituted, the fit, no quoted price, and the
    energy labelled as a reference figure; its numbers are the row's."""
    argv = ("--tp", "8", "--input", "1024", "--output", "1024", "--batch", "64")
    code, text = _run("explain", *BASE, *argv)
    assert 0 == code
    [line] = _compile(*argv, "--format", "jsonl").splitlines()
    row = json.loads(line)
    for expected in (
        "1. Time to first token: the prefill pass at b = 64, s = L = 1,024",
        "L = input + j = 1,025 .. 2,047",
        "closed form",
        "itl = sum / (output - 1)",
        "latency = ttft + (output - 1) × itl",
        "tokens_per_second = b × output / latency × dp = 64 × 1,024 /",
        "tokens_per_second_per_chip = tokens_per_second / chips",
        "6. Cost: no quoted price",
        "7. Energy (at board power: a reference figure, not a bound)",
        "joules_per_token = power × chips × latency / (b × output × dp) = 700 W × 8 ×",
        f"{row['tokens_per_second_per_user']:.6g} tokens/s",
    ):
        assert expected in text, expected


def test_explain_names_the_price_and_its_date(tmp_path: Path) -> None:
    """A device's quoted price is labelled with its date and source; the reader's, as the
    reader's."""
    from rooflinec.engine.requests import decode_sum
    from rooflinec.prose.request_explain import explain_request

    compiled = compile_catalog(catalog_or_raise(BUNDLED))
    engine = compiled.model_engine
    shape = RequestShape(100, 10)
    model = compiled.catalog.models["llama-3-8b"]
    result = evaluate_request(engine, model.id, H100, "bf16", Deployment(), 1, shape, Fraction(2))
    decode = decode_sum(
        engine, compiled.devices[H100], RequestBatch(model, "bf16", Deployment(), 1, shape)
    )
    text = explain_request(compiled.catalog, result, result.ttft, None, decode, Fraction(2))
    assert "6. Cost (the reader's price)" in text
    assert "= 2 USD/h × 1 / 3600 /" in text


def test_a_quoted_price_is_dated(tmp_path: Path) -> None:
    """A device's quoted `price`: the row's cost is at it (`price_source` quoted), and
    `explain` labels it with its date and source."""
    specs = copy_bundled(tmp_path)
    path = specs / "devices" / f"{H100}.yaml"
    text = path.read_text("utf-8")
    price = "price: {value: 3.6 USD/h, date: 2026-11-15, source: nvidia-h100}\n"
    path.write_text(text.replace("\npower:\n", f"\n{price}power:\n", 1), "utf-8")
    code, out = _run(
        *("compile", "--specs", str(specs), "--model", "llama-3-8b", "--device", H100),
        *("--input", "100", "--output", "10", "--format", "jsonl"),
    )
    assert 0 == code, out
    row = json.loads(out)
    assert "quoted" == row["price_source"]
    # 3.6 USD/h is 1/1000 USD/s: USD per million tokens = 1000 / (tokens per second)
    assert (
        pytest.approx(1000 / row["tokens_per_second"], rel=1e-12) == row["usd_per_million_tokens"]
    )
    code, out = _run(
        *("explain", "--specs", str(specs), "--model", "llama-3-8b", "--device", H100),
        *("--input", "100", "--output", "10"),
    )
    assert 0 == code, out
    assert "6. Cost (quoted, 2026-11-15 (nvidia-h100))" in out
