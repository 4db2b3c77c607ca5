"""The catalog export: one row per device figure with its provenance, as CSV or JSON."""

from __future__ import annotations

import csv
import datetime
import io
import json
from pathlib import Path

import pytest

from rooflinec.assemble import catalog_or_raise
from rooflinec.catalog import Catalog, Fabric
from rooflinec.cli.main import main
from rooflinec.outputs.catalog import COLUMNS, catalog_csv, catalog_json
from rooflinec.outputs.columnar import number_text
from rooflinec.outputs.results import FORMULA_STARTS, csv_text, spreadsheet_text
from tests.specfactory import BUNDLED, copy_bundled

TODAY = datetime.date(2026, 11, 30)


@pytest.fixture(scope="module")
def bundled() -> Catalog:
    return catalog_or_raise(BUNDLED)


def rows(text: str) -> dict[tuple[str, str], dict[str, str]]:
    return {(r["device"], r["field"]): r for r in csv.DictReader(io.StringIO(text))}


def test_csv_header() -> None:
    """The CSV header is the documented column list."""
    expected = (
        "device,vendor,field,figure,key,label,printed,unit,sparsity,pipe,direction,power_kind,"
        "price_date,dense,sustained,source,source_title,publisher,url,source_kind,read,quote,quote_source,alternatives,"
        "spread_min,spread_max,conflict"
    )
    assert expected == ",".join(COLUMNS)


def test_csv_h100_bf16_row(bundled: Catalog) -> None:
    """H100 BF16: printed sparse, dense and sustained 989.5 TFLOP/s, NVIDIA's quote."""
    row = rows(catalog_csv(bundled, today=TODAY))[("nvidia-h100-sxm", "compute.bf16")]
    expected = {
        "device": "nvidia-h100-sxm",
        "vendor": "NVIDIA",
        "field": "compute.bf16",
        "figure": "peak",
        "key": "bf16",
        "label": "BF16 or FP16",
        "printed": "1979 TFLOP/s",
        "unit": "FLOP/s",
        "sparsity": "2:4",
        "pipe": "",
        "direction": "",
        "power_kind": "",
        "price_date": "",
        "dense": "989500000000000",
        "sustained": "989500000000000",
        "source": "nvidia-h100",
        "source_title": "NVIDIA H100 Tensor Core GPU",
        "publisher": "NVIDIA",
        "url": "https://www.nvidia.com/en-us/data-center/h100/",
        "source_kind": "vendor",
        "read": "2026-10-25",
        "quote": "BFLOAT16 Tensor コア | 1,979 TFLOPS* | 1,513 TFLOPS* |",
        "quote_source": "",
        "alternatives": "3",
        "spread_min": "-0.0001010611419909045",  # 989.4 (computed)
        "spread_max": "0.010611419909044972",  # 1000 (preliminary, 2022)
        "conflict": "true",
    }
    assert expected == row


def test_csv_quote_traced_through_an_alternative(bundled: Catalog) -> None:
    """Gaudi 3 BF16 cites the white paper; its quote comes from the 1677 alternative."""
    row = rows(catalog_csv(bundled, today=TODAY))[("intel-gaudi3", "compute.bf16")]
    assert ("intel-gaudi3-whitepaper", "ml-engineering-accelerators", "4", "true") == (
        row["source"],
        row["quote_source"],
        row["alternatives"],
        row["conflict"],
    )
    assert 0.0936 == round(float(row["spread_max"]), 4)


def test_csv_capacity_row_has_no_sustained_value(bundled: Catalog) -> None:
    """A capacity row gives the bytes as dense and leaves sustained empty."""
    row = rows(catalog_csv(bundled, today=TODAY))[("google-tpu-v5p", "memory.dram.capacity")]
    assert ("capacity", "95 GiB", "B", str(95 * 2**30), "") == (
        row["figure"],
        row["printed"],
        row["unit"],
        row["dense"],
        row["sustained"],
    )


def test_csv_has_one_row_per_figure(bundled: Catalog) -> None:
    """Every peak, bandwidth and capacity of every device is a row; so is every
    interconnect level, each of its domain, latency and share that cites a source of its
    own, every power and price, and every core's shared memory."""

    def own(fabric: Fabric) -> int:
        quoted = (fabric.domain, fabric.latency, fabric.sustained)
        return sum(1 for q in quoted if q is not None and q.source is not None)

    expected = sum(
        len(d.peaks)
        + len(d.memory)
        + sum(1 for m in d.memory.values() if m.capacity)
        + sum(1 + own(f) for f in d.interconnect.values())
        + (d.power is not None)
        + (d.price is not None)
        + (d.core is not None)
        for d in bundled.devices.values()
    )
    assert expected == len(rows(catalog_csv(bundled, today=TODAY)))


def test_csv_interconnect_and_power_rows(bundled: Catalog) -> None:
    """H100's NVLink row: printed 900 GB/s bidirectional, 450 GB/s per direction, 370.35
    GB/s sustained; its scale-out row in bits; its power row with its kind."""
    table = rows(catalog_csv(bundled, today=TODAY))
    link = table[("nvidia-h100-sxm", "interconnect.scale_up")]
    assert ("interconnect", "900 GB/s", "bidirectional", "450000000000", "370350000000") == (
        link["figure"],
        link["printed"],
        link["direction"],
        link["dense"],
        link["sustained"],
    )
    nic = table[("nvidia-h100-sxm", "interconnect.scale_out")]
    assert ("400 Gb/s", "unstated", "50000000000") == (
        nic["printed"],
        nic["direction"],
        nic["dense"],
    )
    power = table[("nvidia-h100-sxm", "power")]
    assert ("power", "700 W", "W", "TDP", "700", "") == (
        power["figure"],
        power["printed"],
        power["unit"],
        power["power_kind"],
        power["dense"],
        power["sustained"],
    )


def test_json_gaudi3_bf16(bundled: Catalog) -> None:
    """The JSON record lists the steps and each alternative with its relative difference."""
    document = json.loads(catalog_json(bundled, today=TODAY))
    record = next(
        f
        for f in document["figures"]
        if (f["device"], f["field"]) == ("intel-gaudi3", "compute.bf16")
    )
    assert [("printed", 1, 1.678e15), ("sustained", 1, 1.678e15)] == [
        (s["step"], s["factor"], s["result"]) for s in record["steps"]
    ]
    assert [
        ("1835 TFLOP/s", "intel-gaudi3-hotchips", True),
        ("1677 TFLOP/s", "ml-engineering-accelerators", False),
        ("28.7 TFLOP/s", "intel-gaudi3-hotchips", False),
        ("459 TFLOP/s", "ml-engineering-accelerators", True),
    ] == [(a["printed"], a["source"], a["conflicting"]) for a in record["alternatives"]]
    assert pytest.approx(157 / 1678) == record["alternatives"][0]["relative"]


def test_json_h100_bf16_steps(bundled: Catalog) -> None:
    """The JSON steps carry the exact factors: × 1/2 for sparsity."""
    document = json.loads(catalog_json(bundled, today=TODAY))
    record = next(
        f
        for f in document["figures"]
        if (f["device"], f["field"]) == ("nvidia-h100-sxm", "compute.bf16")
    )
    assert [1979e12, 989.5e12, 989.5e12] == [s["result"] for s in record["steps"]]
    assert [1, 0.5, 1] == [s["factor"] for s in record["steps"]]


def test_cli_export_csv() -> None:
    """`rooflinec export --specs DIR` writes the CSV."""
    buffer = io.StringIO()
    assert 0 == main(["export", "--specs", str(BUNDLED)], out=buffer)
    assert ",".join(COLUMNS) == buffer.getvalue().splitlines()[0]


def test_cli_export_json() -> None:
    """`rooflinec export --format json` writes one JSON document."""
    buffer = io.StringIO()
    assert 0 == main(["export", "--specs", str(BUNDLED), "--format", "json"], out=buffer)
    document = json.loads(buffer.getvalue())
    assert {"rooflinec", "figures"} == set(document)


def test_cli_export_spec_errors_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A broken catalog is not exported: the errors go to stderr and the exit code is 1."""
    (tmp_path / "devices").mkdir()
    (tmp_path / "precisions.yaml").write_text("precisions: {bf16: {label: BF16, bytes: 2}}\n")
    (tmp_path / "devices" / "bad.yaml").write_text("id: bad\n")
    buffer = io.StringIO()
    assert 1 == main(["export", "--specs", str(tmp_path)], out=buffer)
    assert "" == buffer.getvalue()
    assert "bad.yaml" in capsys.readouterr().err


# --------------------------------------------------------------------------- formula injection

HOSTILE = {
    "vendor": "=cmd|' /C calc'!A0",
    "quote": "+SUM(1)",
    "publisher": "@x",
    "source_title": '=HYPERLINK("https://example.com","x")',
}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """The bundled catalog with formulas in free text: the H100's vendor, FP32 quote,
    source title and publisher, and two precision labels."""
    specs = copy_bundled(tmp_path_factory.mktemp("hostile"))
    device = specs / "devices" / "nvidia-h100-sxm.yaml"
    text = device.read_text("utf-8")
    for old, new in (
        ("vendor: NVIDIA\n", "vendor: \"=cmd|' /C calc'!A0\"\n"),
        ('quote: "FP32 | 67 TFLOPS | 51 TFLOPS |"', 'quote: "+SUM(1)"'),
        ("    title: NVIDIA H100 Tensor Core GPU\n    publisher: NVIDIA\n", ""),
    ):
        assert old in text
        text = text.replace(old, new, 1)
    text = text.replace(
        "  nvidia-h100:\n",
        "  nvidia-h100:\n"
        '    title: \'=HYPERLINK("https://example.com","x")\'\n'
        "    publisher: '@x'\n",
        1,
    )
    device.write_text(text, "utf-8")
    precisions = specs / "precisions.yaml"
    text = precisions.read_text("utf-8")
    text = text.replace("label: BF16 or FP16", 'label: "-2+3"', 1)
    text = text.replace("label: FP32", 'label: "\\t=1+1"', 1)
    precisions.write_text(text, "utf-8")
    return catalog_or_raise(specs)


def test_csv_text_cells_that_are_formulas_start_with_a_quote(hostile: Catalog) -> None:
    """Each formula start (`=`, `+`, `@`, `-`, tab) gets a single quote; numbers stay."""
    table = rows(catalog_csv(hostile, today=TODAY))
    fp32 = table[("nvidia-h100-sxm", "compute.fp32")]
    assert {k: "'" + v for k, v in HOSTILE.items()} == {k: fp32[k] for k in HOSTILE}
    assert "'\t=1+1" == fp32["label"]
    bf16 = table[("nvidia-h100-sxm", "compute.bf16")]
    assert ("'-2+3", "989500000000000", "'=cmd|' /C calc'!A0") == (
        bf16["label"],
        bf16["dense"],
        bf16["vendor"],
    )
    assert "NVIDIA" == table[("nvidia-l40s", "compute.bf16")]["vendor"]


def test_json_keeps_text_as_written(hostile: Catalog) -> None:
    """The JSON export is data, not a spreadsheet: the text is unchanged there."""
    figures = json.loads(catalog_json(hostile, today=TODAY))["figures"]
    fp32 = next(
        f for f in figures if (f["device"], f["field"]) == ("nvidia-h100-sxm", "compute.fp32")
    )
    assert HOSTILE == {k: fp32[k] for k in HOSTILE}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("=1+1", "'=1+1"),
        ("+1", "'+1"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("nvidia-h100-sxm", "nvidia-h100-sxm"),
        ("a=b", "a=b"),
        ("", ""),
    ],
)
def test_spreadsheet_text(text: str, expected: str) -> None:
    """OWASP's rule: a quote before a leading `=`, `+`, `-`, `@`, tab or CR, nothing else."""
    assert expected == spreadsheet_text(text)


def test_compile_csv_text_cells_are_ids() -> None:
    """`compile --format csv` writes ids and fixed terms only: none can start a formula, and
    a text cell goes through the same guard; numbers (negative ones too) stay numbers."""
    assert "'=x" == csv_text("=x")
    assert '"a,b"' == csv_text("a,b")
    assert ["-2.5", "-3"] == number_text([-2.5, -3]).to_pylist()
    out = io.StringIO()
    assert 0 == main(["compile", "--format", "csv", "--specs", str(BUNDLED)], out=out)
    text_columns = ("case", "kernel", "device", "precision", "declared", "limited_by")
    for row in csv.DictReader(io.StringIO(out.getvalue())):
        for column in text_columns:
            assert not row[column].startswith(FORMULA_STARTS), (column, row[column])


def test_the_documents_pieced_by_device_are_the_whole_ones(bundled: Catalog) -> None:
    """`catalog_json` (joined from each device's figures, so that `serve` keeps a device's
    pieces) is exactly `json.dumps` of the whole document with indent 2, and `catalog_csv`
    exactly the csv writer's rows; with no device, an empty list and a header."""
    from rooflinec import __version__
    from rooflinec.outputs.catalog import _cell, _detail, _row, catalog_csv_of, catalog_json_of
    from rooflinec.provenance import trails

    figures = trails(bundled, today=TODAY)
    whole = {"rooflinec": __version__, "figures": [_detail(t) for t in figures]}
    assert json.dumps(whole, indent=2, ensure_ascii=False) + "\n" == catalog_json(
        bundled, today=TODAY
    )
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for t in figures:
        row = _row(t)
        writer.writerow([_cell(row[c]) for c in COLUMNS])
    assert buffer.getvalue() == catalog_csv(bundled, today=TODAY)
    empty = {"rooflinec": __version__, "figures": []}
    assert json.dumps(empty, indent=2) + "\n" == catalog_json_of([])
    assert ",".join(COLUMNS) + "\n" == catalog_csv_of([])
