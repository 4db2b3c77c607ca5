"""The columnar compile agrees with the exact compiler on every cell, and writes the same files."""

from __future__ import annotations

import csv
import io
import json
import math
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.synth import write_catalog
from rooflinec.assemble import catalog_or_raise
from rooflinec.bulk import LIMITED_BY, ResultTable, bulk_compile, write_csv, write_json
from rooflinec.catalog import LEVELS, Catalog
from rooflinec.cli import commands
from rooflinec.cli.main import main
from rooflinec.compiler import Result, compile_catalog
from rooflinec.export import result_record, to_csv, to_json
from tests.specfactory import BUNDLED, write_specs

REL = 1e-12  # floats agree with the exact values to this relative error


@pytest.fixture(scope="module")
def bundled() -> Catalog:
    return catalog_or_raise(BUNDLED)


@pytest.fixture(scope="module")
def synthetic() -> Iterator[Catalog]:
    with tempfile.TemporaryDirectory() as tmp:
        yield catalog_or_raise(write_catalog(Path(tmp), devices=3, cases=120))


def close(exact: Any, value: float) -> bool:
    """`value` is the float of `exact` to within REL (NaN stands for None)."""
    if exact is None:
        return math.isnan(value)
    return math.isclose(float(exact), value, rel_tol=REL, abs_tol=0.0)


def assert_cell_agrees(table: ResultTable, i: int, r: Result) -> None:
    """Every column of row i against the exact result r: ids equal, floats within REL."""
    where = (r.case, r.device, r.precision)
    assert (r.case, r.device, r.precision) == (
        table.case_ids[table.case[i]],
        table.device_ids[table.device[i]],
        table.precision_ids[table.precision[i]],
    ), where
    assert r.declared == bool(table.declared[i]), where
    assert r.limited_by == LIMITED_BY[table.limited_by[i]], where
    scalars = [
        (r.flops, table.flops[i]),
        (r.peak, table.peak[i]),
        (r.attainable, table.attainable[i]),
        (r.share_of_peak, table.share_of_peak[i]),
        (r.time, table.time[i]),
        (r.measured, table.measured[i]),
        (r.efficiency, table.efficiency[i]),
    ]
    scalars += list(zip(r.bandwidth_sweep.values(), table.bandwidth_sweep[i], strict=True))
    scalars += list(zip(r.peak_sweep.values(), table.peak_sweep[i], strict=True))
    for li, level in enumerate(LEVELS):
        scalars.append((r.bytes.get(level), table.bytes[i, li]))
        scalars.append((r.intensity.get(level), table.intensity[i, li]))
        scalars.append((r.bandwidths.get(level), table.bandwidth[i, li]))
    for n, (exact, value) in enumerate(scalars):
        assert close(exact, float(value)), (where, n, exact, value)


def assert_agrees(catalog: Catalog, **select: Any) -> ResultTable:
    """bulk_compile(**select) against compile_catalog(...).select(**select), every cell."""
    results = compile_catalog(catalog).select(**select)
    table = bulk_compile(catalog, **select)
    assert len(results) == len(table)
    for i, r in enumerate(results):
        assert_cell_agrees(table, i, r)
    return table


def numbers_agree(a: Any, b: Any, rel: float = REL) -> bool:
    """Two JSON values equal, numbers within `rel` (int and float of one value are equal)."""
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and list(a) == list(b)
            and all(numbers_agree(a[k], b[k], rel) for k in a)
        )
    if isinstance(a, list):
        return (
            isinstance(b, list)
            and len(a) == len(b)
            and all(numbers_agree(x, y, rel) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, (int, float)) and not isinstance(a, bool):
        return (
            isinstance(b, (int, float))
            and not isinstance(b, bool)
            and math.isclose(a, b, rel_tol=rel, abs_tol=0.0)
        )
    return bool(a == b)


# --------------------------------------------------------------------------- bundled


def test_bundled_every_cell_agrees(bundled: Catalog) -> None:
    """On the bundled catalog, every cell's columns match the exact compiler's result."""
    table = assert_agrees(bundled)
    assert len(table) > 500


def test_synthetic_two_levels_agree(synthetic: Catalog) -> None:
    """A generated catalog with DRAM and L2 traffic, ceil/min/max formulas and measured runs."""
    table = assert_agrees(synthetic)
    assert {"dram", "l2", "compute"} <= set(table.limited_by_names.tolist())
    assert np.isfinite(table.efficiency).any()


@pytest.mark.parametrize(
    "select",
    [
        {"devices": ["nvidia-h100-sxm", "amd-mi300x"]},
        {"precisions": ["bf16", "fp8"]},
        {"cases": ["gemm-large", "conv3x3"], "devices": ["nvidia-b200"]},
        {"declared_only": True},
        {"devices": []},
    ],
)
def test_selections_agree(bundled: Catalog, select: dict[str, Any]) -> None:
    """Selections give the exact compiler's rows, in its order."""
    assert_agrees(bundled, **select)


def test_rows_are_result_records(bundled: Catalog) -> None:
    """`row(i)` is the contract record of the exact result, keys in order, numbers within REL."""
    results = compile_catalog(bundled).results
    table = bulk_compile(bundled)
    rows = list(table)
    assert len(rows) == len(results)
    for r, row in zip(results, rows, strict=True):
        assert numbers_agree(result_record(r), row), r.case
    assert table.row(-1) == rows[-1]


def test_json_layout_is_json_dumps(bundled: Catalog) -> None:
    """The streamed JSON is character for character json.dumps(indent=2) of the rows."""
    table = bulk_compile(bundled)
    out = io.StringIO()
    write_json(table, out)
    document = json.loads(out.getvalue())
    document["results"] = list(table)
    assert json.dumps(document, indent=2, ensure_ascii=False) + "\n" == out.getvalue()


def test_json_matches_exact_export(bundled: Catalog, synthetic: Catalog) -> None:
    """The document equals `export.to_json`'s: same keys and strings, numbers to ~15 digits."""
    for catalog in (bundled, synthetic):
        compiled = compile_catalog(catalog)
        out = io.StringIO()
        write_json(bulk_compile(catalog), out)
        expected = json.loads(to_json(compiled, compiled.results))
        assert numbers_agree(expected, json.loads(out.getvalue()), rel=1e-14)


def test_csv_matches_exact_export(bundled: Catalog) -> None:
    """CSV: same header, same text cells, numbers to ~15 digits."""
    compiled = compile_catalog(bundled)
    out = io.StringIO()
    write_csv(bulk_compile(bundled), out)
    expected = list(csv.reader(io.StringIO(to_csv(compiled, compiled.results))))
    actual = list(csv.reader(io.StringIO(out.getvalue())))
    assert expected[0] == actual[0]
    assert len(expected) == len(actual)
    for want, got in zip(expected[1:], actual[1:], strict=True):
        for a, b in zip(want, got, strict=True):
            assert a == b or math.isclose(float(a), float(b), rel_tol=1e-14), (want[:4], a, b)


def test_empty_selection(bundled: Catalog) -> None:
    """No rows: an empty table and the exact export's empty document."""
    table = bulk_compile(bundled, precisions=["no-such-precision"])
    assert len(table) == 0
    assert list(table) == []
    out = io.StringIO()
    write_json(table, out)
    compiled = compile_catalog(bundled)
    assert json.loads(out.getvalue()) == json.loads(to_json(compiled, []))


# --------------------------------------------------------------------------- CLI


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_cli_large_path_matches_exact(monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    """`compile` above BULK_ROWS takes the columnar path; its output agrees with the exact one."""
    args = ["compile", "--specs", str(BUNDLED), "--format", fmt, "--precision", "bf16"]
    exact, fast = io.StringIO(), io.StringIO()
    assert main(args, out=exact) == 0
    monkeypatch.setattr(commands, "BULK_ROWS", 0)
    assert main(args, out=fast) == 0
    if fmt == "json":
        assert numbers_agree(json.loads(exact.getvalue()), json.loads(fast.getvalue()), 1e-14)
    else:
        for want, got in zip(
            csv.reader(io.StringIO(exact.getvalue())),
            csv.reader(io.StringIO(fast.getvalue())),
            strict=True,
        ):
            for a, b in zip(want, got, strict=True):
                assert a == b or math.isclose(float(a), float(b), rel_tol=1e-14)


def test_cli_small_catalog_stays_exact(bundled: Catalog) -> None:
    """Below BULK_ROWS the CLI writes exactly what export.to_json writes."""
    assert len(compile_catalog(bundled).results) < commands.BULK_ROWS
    out = io.StringIO()
    assert main(["compile", "--specs", str(BUNDLED), "--format", "json"], out=out) == 0
    compiled = compile_catalog(bundled)
    assert to_json(compiled, compiled.results) == out.getvalue()


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
    assert_agrees(catalog)
