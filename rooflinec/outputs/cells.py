"""What a cell of every output holds: exact numbers as JSON numbers, text guarded for
spreadsheets; and the readable tables' aligned columns. Shared by the results writers
(`rooflinec.outputs.results`) and the model rows' (`rooflinec.outputs.model_rows`)."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

Number = int | float


def num(value: Fraction | int) -> Number:
    """An exact value as a JSON number: integers stay integers."""
    if isinstance(value, int) or value.denominator == 1:
        return int(value)
    return float(value)


def scalar_text(
    value: Any, none: str, text: Callable[[str], str], number: Callable[[Any], str]
) -> str:
    """A scalar cell as a writer spells it: `none` for no value, true or false for a flag,
    `text(value)` for text and `number(value)` for a number."""
    if value is None:
        return none
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return text(value)
    return number(value)


# A text cell starting with one of these is a formula to a spreadsheet (OWASP, "CSV
# injection"): `=cmd|' /C calc'!A0`, `+SUM(1)`, `@x`, `-2+3`, or any of them after a tab.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")


def spreadsheet_text(text: str) -> str:
    """A CSV text cell a spreadsheet shows as text: a single quote before a formula start.

    Only text goes through here; numbers are written as numbers (`-2.5` stays a number).
    """
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def csv_text(text: str) -> str:
    """A text cell as every CSV rooflinec writes has it: guarded against formulas
    (`spreadsheet_text`), quoted only where CSV needs it."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow([spreadsheet_text(text)])
    return buffer.getvalue()


def aligned_lines(table: Sequence[Sequence[str]]) -> list[str]:
    """A readable table's lines: columns padded to their widest cell, a rule of dashes
    under the header (the first row)."""
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = []
    for n, row in enumerate(table):
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines
