"""The plain CSV of measured runs: one line per case (or per launch of it).

Columns: `case` and `time` (a quantity with its unit, e.g. `0.21 ms`, the total over
`launches`) are required; `device` and `precision` unless `--device` / `--precision`
give them; `launches` (default 1), `flops` and `bytes.dram`, `bytes.l2`, `bytes.l1` (a
whole number, or a quantity with its unit: `4.3 TFLOP`, `7.2 GB`) are optional. A column
named twice is refused (which one holds the run?), and so is a count of zero: a run that
did no work, or moved no bytes, cannot be placed on a roofline.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from fractions import Fraction

from rooflinec.catalog import LEVELS
from rooflinec.importing.rows import (
    Commas,
    Lines,
    NumberError,
    Problem,
    Problems,
    Row,
    number,
    shown,
    table_rows,
)
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
# Between number and unit, as in spec quantities: spaces, no-break and thin spaces.
_SPACE = re.compile(r"[ \t\u00a0\u2009\u202f]+")


def read_plain(path: str, lines: Lines, commas: Commas = "ask") -> Iterator[Row]:
    """The rows of a plain CSV, read line by line; `ExportError` naming every bad line
    once the file has been read."""
    reader = csv.reader(lines)
    problems = Problems(path)
    try:
        header = next(reader, None)
        if header is None:
            problems.add(Problem(path, 1, "the file is empty: expected a header line"))
            problems.raise_any()
            return
        names = _header(path, lines, [h.strip() for h in header], problems)
        problems.raise_any()
        for line, cells in table_rows(path, reader, len(names), problems):
            row = _row(path, line, lines, names, cells, commas, problems)
            if row is not None:
                yield row
    except csv.Error as exc:
        problems.add(Problem(path, reader.line_num or 1, f"not a CSV file: {exc}"))
    problems.raise_any()


def _header(path: str, lines: Lines, names: list[str], problems: Problems) -> list[str]:
    listed = ", ".join(COLUMNS)
    for c in REQUIRED:
        if c not in names:
            problems.add(Problem(path, 1, f"missing column '{c}' (columns: {listed})"))
    seen: dict[str, int] = {}
    for i, n in enumerate(names):
        if n and n not in COLUMNS:
            problems.add(
                Problem(path, 1, f"unknown column {shown(n)} (columns: {listed})", lines.column(i))
            )
        elif n in seen:
            problems.add(
                Problem(
                    path,
                    1,
                    f"column '{n}' appears twice, as columns {seen[n] + 1} and {i + 1}: keep one",
                    lines.column(i),
                )
            )
        seen.setdefault(n, i)
    return names


def _row(
    path: str,
    line: int,
    lines: Lines,
    names: list[str],
    cells: list[str],
    commas: Commas,
    problems: Problems,
) -> Row | None:
    before = len(problems)
    record = {n: c.strip() for n, c in zip(names, cells, strict=True)}

    def bad(column: str, message: str, offset: int = 0) -> None:
        text = record[column]
        col = lines.column(names.index(column), offset)
        problems.add(Problem(path, line, f"{column} {shown(text)} {message}", col))

    def quantity(column: str, dimension: Dimension) -> Fraction | None:
        text = record.get(column, "")
        if not text:
            return None
        token, *rest = _SPACE.split(text, maxsplit=1)
        unit = rest[0] if rest else ""
        try:
            value = number(token, commas)
        except NumberError as exc:
            bad(column, exc.message, exc.offset)
            return None
        assert value is not None  # the cell is not empty
        unit = unit.strip()
        if unit:
            try:
                value *= parse_quantity(f"1 {unit}", dimension).value
            except QuantityError as exc:
                hint = f" ({exc.hint})" if exc.hint else ""
                bad(column, f"has a bad unit: {exc.message}{hint}", len(token) + 1)
                return None
        elif dimension is Dimension.TIME:
            bad(column, "has no unit: write it, as in '0.21 ms'", len(token))
            return None
        if value == 0:
            what = "a time" if dimension is Dimension.TIME else "a count"
            bad(column, f"is zero: {what} of zero cannot be placed on a roofline")
            return None
        return value

    if not record["case"]:
        problems.add(Problem(path, line, "the case is empty"))
    time = quantity("time", Dimension.TIME)
    if time is None and len(problems) == before:
        problems.add(Problem(path, line, "the time is empty"))
    launches = 1
    if record.get("launches"):
        try:
            count = number(record["launches"], commas)
        except NumberError as exc:
            bad("launches", exc.message, exc.offset)
        else:
            if count is None or count.denominator != 1 or count < 1:
                bad("launches", "is not a whole number from 1")
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
