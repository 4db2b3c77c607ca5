"""The float columns agree with the exact result views on every cell, and the writers lay
out what `json` and `csv` would."""

from __future__ import annotations

import csv
import io
import json
import math
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.synth import write_catalog
from rooflinec.assemble import catalog_or_raise
from rooflinec.engine.compiler import Compiled, compile_catalog
from rooflinec.engine.terms import LIMITED_BY
from rooflinec.outputs.results import CSV_COLUMNS, FIELDS, results_text
from tests.specfactory import BUNDLED, write_specs

REL = 1e-12  # floats agree with the exact values to this relative error


@pytest.fixture(scope="module")
def bundled() -> Compiled:
    return compile_catalog(catalog_or_raise(BUNDLED))


@pytest.fixture(scope="module")
def synthetic() -> Iterator[Compiled]:
    with tempfile.TemporaryDirectory() as tmp:
        yield compile_catalog(catalog_or_raise(write_catalog(Path(tmp), devices=3, cases=120)))


def close(exact: Any, value: float) -> bool:
    """`value` is the float of `exact` to within REL (NaN stands for None)."""
    if exact is None:
        return math.isnan(value)
    return math.isclose(float(exact), value, rel_tol=REL, abs_tol=0.0)


def assert_agrees(compiled: Compiled) -> None:
    """Every cell's columns against its exact view: limited_by equal, floats within REL."""
    columns = compiled.columns
    assert len(compiled.counts) == len(columns)
    for i in range(len(columns)):
        r = compiled.result_at(i)
        where = (r.case, r.device, r.precision)
        assert r.limited_by == LIMITED_BY[columns.limited_by[i]], where
        scalars = [
            (r.attainable, columns.attainable[i]),
            (r.share_of_peak, columns.share_of_peak[i]),
            (r.time, columns.time[i]),
            (r.measured, columns.measured[i]),
            (r.efficiency, columns.efficiency[i]),
        ]
        scalars += list(zip(r.bandwidth_sweep.values(), columns.bandwidth_sweep[i], strict=True))
        scalars += list(zip(r.peak_sweep.values(), columns.peak_sweep[i], strict=True))
        for n, (exact, value) in enumerate(scalars):
            assert close(exact, float(value)), (where, n, exact, value)


def test_bundled_every_cell_agrees(bundled: Compiled) -> None:
    """Every cell of the bundled catalog: columns and exact views agree."""
    assert_agrees(bundled)


def test_synthetic_every_cell_agrees(synthetic: Compiled) -> None:
    """A synthetic catalog with DRAM and L2 ceilings: columns and exact views agree."""
    assert_agrees(synthetic)


def test_near_ties_are_decided_exactly(bundled: Compiled) -> None:
    """Cells at a ridge are decided by the exact view, and only those are marked exact."""
    columns = bundled.columns
    exact = [i for i in range(len(columns)) if columns.exact[i]]
    for i in exact:
        r = bundled.result_at(i)
        assert float(r.attainable) == columns.attainable[i]


def test_json_layout_is_json_dumps(bundled: Compiled) -> None:
    """The JSON text is what `json.dumps(indent=2)` writes for the document it holds."""
    text = results_text(bundled, bundled.rows(), "json")
    document = json.loads(text)
    assert json.dumps(document, indent=2, ensure_ascii=False) + "\n" == text
    assert len(bundled.counts) == len(document["results"])


def test_csv_rows_match_json_rows(synthetic: Compiled) -> None:
    """CSV and JSON write the same numbers for each cell, from the one field table: every
    CSV cell reads back as the JSON value (float64 text in CSV, the JSON number's own
    layout in JSON), and is empty where JSON has no value."""
    cells = synthetic.rows()
    rows = list(csv.DictReader(io.StringIO(results_text(synthetic, cells, "csv"))))
    records = json.loads(results_text(synthetic, cells, "json"))["results"]
    assert CSV_COLUMNS == list(rows[0])
    fields = [f for f in FIELDS if f.json]
    for row, record in zip(rows, records, strict=True):
        for field in fields:
            value = record.get(field.key)
            pairs = (
                [(value, field.headers[0])]
                if not field.keys
                else [
                    ((value or {}).get(k), h)
                    for k, h in zip(field.keys, field.headers, strict=True)
                ]
            )
            for expected, header in pairs:
                text = row[header]
                if expected is None:
                    assert "" == text, (header, text)
                elif isinstance(expected, bool):
                    assert ("true" if expected else "false") == text
                elif isinstance(expected, str):
                    assert expected == text
                elif isinstance(expected, dict):  # a shape: one cell, `M=1 N=2`
                    assert " ".join(f"{k}={v}" for k, v in expected.items()) == text
                else:
                    assert float(expected) == float(text), (header, expected, text)
    assert "2.057856e+13" in {r["attainable [OP/s]"] for r in rows}  # pyarrow's float text
    assert "true" in {r["declared"] for r in rows}


def test_empty_selection(bundled: Compiled) -> None:
    """No rows: a document with no results and every device's figures."""
    cells = bundled.rows(precisions=["no-such-precision"])
    assert [] == cells
    document = json.loads(results_text(bundled, cells, "json"))
    assert [] == document["results"]
    assert sorted(bundled.devices) == sorted(document["devices"])
    assert ",".join(CSV_COLUMNS) + "\n" == results_text(bundled, cells, "csv")


# --------------------------------------------------------------------------- Hypothesis

# Small round numbers make exact ties between ceilings common: the peak equal to a
# memory line (a kernel exactly at the ridge), two memory lines equal, and lines a
# hair apart (1e-18 relative), closer than float64 can tell.
PEAKS = [
    "0.5",
    "1",
    "1.5",
    "2",
    "3",
    "4",
    "6",
    "8",
    "12",
    "2.000000000000000001",
    "1.999999999999999999",
    "3.0000000000001",
]
BANDWIDTHS = ["0.25", "0.5", "1", "1.5", "2", "3", "4", "6", "8", "0.999999999999999999"]
FLOPS = ["a*n", "2*n*m", "n*m*ceil(n/3)", "4*n**2*m"]
TRAFFIC = ["w*n", "w*(n + m)", "2*w*n*m", "w*n*m + 1", "w*max(n, m)*min(n, m)", "3*w*n"]


@st.composite
def spec_folders(draw: st.DrawFn) -> dict[str, Any]:
    """Device and kernel spec bodies for `write_specs`."""
    precisions = ["fp64", "fp32", "tf32", "bf16", "fp8", "int8", "fp4"]
    devices: dict[str, str] = {}
    n_devices = draw(st.integers(1, 3))
    for d in range(n_devices):
        chosen = draw(st.lists(st.sampled_from(precisions), min_size=1, max_size=4, unique=True))
        lines = [f"id: dev-{d}", f"name: Device {d}", "vendor: V", "compute:"]
        for pid in chosen:
            unit = "TOPS" if pid == "int8" else "TFLOP/s"
            sparse = ', sparsity: "2:4"' if draw(st.booleans()) else ""
            peak = draw(st.sampled_from(PEAKS))
            lines.append(f"  {pid}: {{peak: {peak} {unit}{sparse}, source: s}}")
        lines.append("memory:")
        for level in ["dram", *draw(st.lists(st.sampled_from(["l2", "l1"]), unique=True))]:
            bw = draw(st.sampled_from(BANDWIDTHS))
            lines.append(f"  {level}: {{label: M, bandwidth: {bw} TB/s, source: s}}")
        shares = draw(st.sampled_from([None, ("100%", "100%"), ("90%", "80%"), ("50%", "75%")]))
        if shares:
            lines += ["sustained:", f"  compute: {shares[0]}", f"  memory: {shares[1]}"]
        devices[f"dev-{d}"] = "\n".join(lines) + "\n"
    kernels: dict[str, str] = {}
    case_id = 0
    for k in range(draw(st.integers(1, 2))):
        flops = draw(st.sampled_from(FLOPS)).replace("a*", f"{draw(st.integers(1, 3))}*")
        levels = ["dram", *draw(st.lists(st.sampled_from(["l2", "l1"]), unique=True))]
        lines = [
            f"id: ker-{k}",
            f"name: Kernel {k}",
            "description: A kernel.",
            "symbols: {n: a size, m: another size}",
            f"flops: {flops}",
            "bytes:",
            *(f"  {lv}: {draw(st.sampled_from(TRAFFIC))}" for lv in levels),
            "cases:",
        ]
        for _ in range(draw(st.integers(1, 3))):
            n, m = draw(st.integers(1, 12)), draw(st.integers(1, 12))
            lines += [
                f"  - id: case-{case_id}",
                f"    name: Case {case_id}",
                f"    precision: {draw(st.sampled_from(precisions))}",
                f"    shape: {{n: {n}, m: {m}}}",
            ]
            run = draw(st.sampled_from([None, "rate: 1 GFLOP/s", "time: 2 ms"]))
            device = draw(st.integers(0, n_devices - 1))
            owner = devices[f"dev-{device}"]
            measured_precision = next(p for p in precisions if f"  {p}: " in owner)
            if run:
                lines += [
                    "    measured:",
                    f"      - {{device: dev-{device}, precision: {measured_precision}, {run}}}",
                ]
            case_id += 1
        kernels[f"ker-{k}"] = "\n".join(lines) + "\n"
    return {"devices": devices, "kernels": kernels}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec_folders())
def test_random_catalogs_agree(specs: dict[str, Any]) -> None:
    """Random catalogs full of exact and near ties: limited_by equal everywhere, floats close."""
    with tempfile.TemporaryDirectory() as tmp:
        catalog = catalog_or_raise(write_specs(Path(tmp), **specs))
    assert_agrees(compile_catalog(catalog))


def _floored_catalog(root: Path) -> Path:
    """Devices with launch floors of awkward lengths and cases of many sizes and launch
    counts: many cells held by the floor, many just above it."""
    devices = {}
    for k, latency in enumerate(["1.3 µs", "5 µs", "2.7 µs", "700 ns", "3.1 µs"]):
        devices[f"dev-{k}"] = (
            f"id: dev-{k}\nname: Device {k}\nvendor: A vendor\n"
            f"compute:\n  bf16: {{peak: {97 + 13 * k} TFLOP/s, source: s}}\n"
            f"  fp32: {{peak: {31 + 7 * k} TFLOP/s, source: s}}\n"
            f"memory:\n  dram: {{label: HBM, bandwidth: {1.7 + k} TB/s, source: s}}\n"
            f"  l2: {{label: SRAM, bandwidth: {11 + 3 * k} TB/s, source: s}}\n"
            f"launch: {{latency: {latency}, source: s}}\n"
        )
    cases = "".join(
        f"  - {{id: ew-{i}, name: case {i}, precision: bf16, shape: {{n: {n}}},"
        f" launches: {1 + i % 7}}}\n"
        for i, n in enumerate(sorted({(3**j * 7 + 5 * j) % 10**8 + 1 for j in range(90)}))
    )
    kernel = (
        "id: ew\nname: Elementwise\ndescription: y = f(x).\nsymbols: {n: values}\n"
        "flops: 3*n + 1\nbytes: {dram: 2*n*w + 64, l2: 3*n*w}\ncases:\n" + cases
    )
    return write_specs(root, devices, {"ew": kernel})


def test_the_x1_sweeps_are_the_attainable_rate_exactly(tmp_path: Path) -> None:
    """On every cell, held by the launch floor or not, bandwidth ×1 and peak ×1 are the
    very number `attainable` prints, in JSON and in CSV (no 13107199999.999998 beside
    13107200000), and a held cell's attainable rate is the exact one, correctly rounded."""
    check = compile_catalog(catalog_or_raise(_floored_catalog(tmp_path)))
    cells = check.rows()
    records = json.loads(results_text(check, cells, "json"))["results"]
    held = [r for r in records if "latency" == r["limited_by"]]
    assert 50 < len(held) < len(records)  # both kinds of cell are exercised
    for record in records:
        where = (record["case"], record["device"], record["precision"])
        assert record["attainable"] == record["bandwidth_sweep"]["1"], where
        assert record["attainable"] == record["peak_sweep"]["1"], where
    for cell, record in zip(cells, records, strict=True):
        exact = check.result_at(cell)
        if "latency" == record["limited_by"]:
            assert float(exact.attainable) == record["attainable"]
        for key, value in exact.bandwidth_sweep.items():
            if value == exact.floor_rate:  # a sweep point the floor holds
                assert float(value) == record["bandwidth_sweep"][key]
    rows = list(csv.DictReader(io.StringIO(results_text(check, cells, "csv"))))
    for row in rows:
        attainable = row["attainable [OP/s]"]
        assert attainable == row["bandwidth_x1 [OP/s]"] == row["peak_x1 [OP/s]"]


def test_bundled_x1_sweeps_are_the_attainable_rate(bundled: Compiled) -> None:
    """Every bundled cell, in JSON and CSV: the ×1 sweeps print `attainable`."""
    cells = bundled.rows()
    for record in json.loads(results_text(bundled, cells, "json"))["results"]:
        assert record["attainable"] == record["bandwidth_sweep"]["1"] == record["peak_sweep"]["1"]
    for row in csv.DictReader(io.StringIO(results_text(bundled, cells, "csv"))):
        assert row["attainable [OP/s]"] == row["bandwidth_x1 [OP/s]"] == row["peak_x1 [OP/s]"]
