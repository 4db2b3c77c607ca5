"""The plain CSV of measured runs: one line per case (or per launch of it).

Columns: `case` and `time` (a quantity with its unit, e.g. `0.21 ms`, the total over
`launches`) are required; `device` and `precision` unless `--device` / `--precision`
give them; `launches` (default 1), `flops` and `bytes.dram`, `bytes.l2`, `bytes.l1` (a
whole number, or a quantity with its unit: `4.3 TFLOP`, `7.2 GB`) are optional.
"""

from __future__ import annotations

import csv
import io
from fractions import Fraction

from rooflinec.catalog import LEVELS
from rooflinec.importing.rows import ExportError, Problem, Row, number
from rooflinec.quantities import Dimension, QuantityError, parse_quantity

COLUMNS = (
    "case",
    "device",
    "precision",
    "time",
    "launches",
    "flops",
    *(f"bytes.{lv}" for lv in LEVELS),
)
REQUIRED = ("case", "time")


def read_plain(path: str, text: str) -> list[Row]:
    """The rows of a plain CSV; `ExportError` naming every bad line."""
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None:
        raise ExportError([Problem(path, 1, "the file is empty: expected a header line")])
    names = [h.strip() for h in header]
    problems = [
        Problem(path, 1, f"missing column '{c}' (columns: {', '.join(COLUMNS)})")
        for c in REQUIRED
        if c not in names
    ]
    problems += [
        Problem(path, 1, f"unknown column '{n}' (columns: {', '.join(COLUMNS)})")
        for n in names
        if n and n not in COLUMNS
    ]
    if problems:
        raise ExportError(problems)
    rows: list[Row] = []
    for cells in reader:
        line = reader.line_num
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(names):
            problems.append(Problem(path, line, f"expected {len(names)} cells, found {len(cells)}"))
            continue
        record = {n: c.strip() for n, c in zip(names, cells, strict=True)}
        row = _row(path, line, record, problems)
        if row is not None:
            rows.append(row)
    if problems:
        raise ExportError(problems)
    return rows


def _row(path: str, line: int, record: dict[str, str], problems: list[Problem]) -> Row | None:
    before = len(problems)

    def quantity(column: str, dimension: Dimension) -> Fraction | None:
        text = record.get(column, "")
        if not text:
            return None
        plain = number(text)
        if plain is not None and dimension is not Dimension.TIME:
            if plain < 0:
                problems.append(Problem(path, line, f"{column} {text!r} is negative"))
            return plain
        try:
            return parse_quantity(text, dimension, positive=True).value
        except QuantityError as exc:
            hint = f" ({exc.hint})" if exc.hint else ""
            problems.append(Problem(path, line, f"{column} {text!r}: {exc.message}{hint}"))
            return None

    if not record["case"]:
        problems.append(Problem(path, line, "the case is empty"))
    time = quantity("time", Dimension.TIME)
    if time is None and not problems[before:]:
        problems.append(Problem(path, line, "the time is empty"))
    launches = 1
    if record.get("launches"):
        count = number(record["launches"])
        if count is None or count.denominator != 1 or count < 1:
            problems.append(
                Problem(
                    path, line, f"launches {record['launches']!r}: expected a whole number from 1"
                )
            )
        else:
            launches = int(count)
    flops = quantity("flops", Dimension.OPS)
    traffic = {lv: quantity(f"bytes.{lv}", Dimension.BYTES) for lv in LEVELS}
    if len(problems) > before or time is None:
        return None
    return Row(
        line,
        record["case"],
        time,
        launches,
        record.get("device") or None,
        record.get("precision") or None,
        flops,
        {lv: b for lv, b in traffic.items() if b is not None},
    )
