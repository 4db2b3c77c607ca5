"""Write compiled results out: the JSON results contract, CSV, and a terminal table.

This is the output edge: exact values become floats (JSON, CSV) or rounded,
prefixed strings (table) here and nowhere earlier.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from rooflinec import __version__
from rooflinec.catalog import LEVELS
from rooflinec.compiler import Compiled, Result
from rooflinec.formatting import format_number, format_percent, format_si


def num(value: Fraction | int) -> float | int:
    """An exact value as a JSON number: integers stay integers."""
    if isinstance(value, int) or value.denominator == 1:
        return int(value)
    return float(value)


def _unit(compiled: Compiled, precision: str) -> str:
    return compiled.catalog.precisions[precision].unit


def result_record(r: Result) -> dict[str, Any]:
    """One row of the results contract."""
    return {
        "case": r.case,
        "kernel": r.kernel,
        "device": r.device,
        "precision": r.precision,
        "declared": r.declared,
        "flops": num(r.flops),
        "bytes": {level: num(b) for level, b in r.bytes.items()},
        "intensity": {level: num(i) for level, i in r.intensity.items()},
        "attainable": num(r.attainable),
        "limited_by": r.limited_by,
        "share_of_peak": num(r.share_of_peak),
        "time": num(r.time),
        "bandwidth_sweep": {k: num(v) for k, v in r.bandwidth_sweep.items()},
        "peak_sweep": {k: num(v) for k, v in r.peak_sweep.items()},
        "measured": None if r.measured is None else num(r.measured),
        "efficiency": None if r.efficiency is None else num(r.efficiency),
    }


def results_document(compiled: Compiled, results: Sequence[Result]) -> dict[str, Any]:
    """The whole results contract as plain data."""
    catalog = compiled.catalog
    device_ids = {r.device for r in results} or set(compiled.devices)
    return {
        "rooflinec": __version__,
        "precisions": {
            p.id: {"label": p.label, "bytes": num(p.bytes), "unit": p.unit}
            for p in catalog.precisions.values()
        },
        "devices": {
            d.id: {
                "name": d.name,
                "peaks": {p: num(v) for p, v in d.peaks.items()},
                "bandwidths": {lv: num(v) for lv, v in d.bandwidths.items()},
                "ridges": {
                    p: {lv: num(v) for lv, v in by_level.items()}
                    for p, by_level in d.ridges.items()
                },
            }
            for d in compiled.devices.values()
            if d.id in device_ids
        },
        "results": [result_record(r) for r in results],
    }


def to_json(compiled: Compiled, results: Sequence[Result]) -> str:
    return json.dumps(results_document(compiled, results), indent=2, ensure_ascii=False) + "\n"


CSV_COLUMNS = (
    ["case", "kernel", "device", "precision", "declared", "flops [OP]"]
    + [f"bytes_{lv} [B]" for lv in LEVELS]
    + [f"intensity_{lv} [OP/B]" for lv in LEVELS]
    + ["peak [OP/s]"]
    + [f"bandwidth_{lv} [B/s]" for lv in LEVELS]
    + ["attainable [OP/s]", "limited_by", "share_of_peak [1]", "time [s]"]
    + [f"bandwidth_x{k} [OP/s]" for k in ("0.5", "1", "2", "4")]
    + [f"peak_x{k} [OP/s]" for k in ("0.5", "1", "2", "4")]
    + ["measured [OP/s]", "efficiency [1]"]
)


def to_csv(compiled: Compiled, results: Sequence[Result]) -> str:
    """One row per result; units in the headers; empty cells where a level is absent."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in results:
        intensity = r.intensity

        def cell(value: Fraction | int | None) -> str:
            return "" if value is None else repr(num(value))

        writer.writerow(
            [r.case, r.kernel, r.device, r.precision, str(r.declared).lower(), cell(r.flops)]
            + [cell(r.bytes.get(lv)) for lv in LEVELS]
            + [cell(intensity.get(lv)) for lv in LEVELS]
            + [cell(r.peak)]
            + [cell(r.bandwidths.get(lv)) for lv in LEVELS]
            + [cell(r.attainable), r.limited_by, cell(r.share_of_peak), cell(r.time)]
            + [cell(v) for v in r.bandwidth_sweep.values()]
            + [cell(v) for v in r.peak_sweep.values()]
            + [cell(r.measured), cell(r.efficiency)]
        )
    return buffer.getvalue()


def table_rows(compiled: Compiled, results: Sequence[Result]) -> list[list[str]]:
    rows = []
    for r in results:
        unit = _unit(compiled, r.precision)
        intensity = r.intensity.get("dram")
        rows.append(
            [
                r.case,
                r.device,
                r.precision + ("" if r.declared else "*"),
                format_si(r.flops, unit),
                "-" if intensity is None else format_si(intensity, f"{unit}/B"),
                format_si(r.attainable, f"{unit}/s"),
                r.limited_by,
                format_percent(r.share_of_peak),
                format_si(r.time, "s"),
                "-" if r.efficiency is None else format_percent(r.efficiency),
            ]
        )
    return rows


TABLE_HEADER = [
    "case",
    "device",
    "precision",
    "operations",
    "intensity (DRAM)",
    "attainable",
    "limited by",
    "share of peak",
    "time",
    "efficiency",
]


def to_table(compiled: Compiled, results: Sequence[Result]) -> str:
    """A readable terminal table; `*` marks a precision other than the case's declared one."""
    rows = [TABLE_HEADER, *table_rows(compiled, results)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(TABLE_HEADER))]
    lines = []
    for n, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines.append(f"{len(results)} results; * = not the case's declared precision")
    return "\n".join(lines) + "\n"


__all__ = ["format_number", "num", "to_csv", "to_json", "to_table"]
