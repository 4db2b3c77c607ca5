"""What a cell of every output holds: exact numbers as JSON numbers, text guarded for
spreadsheets. Shared by the results writers (`rooflinec.outputs.results`) and the model rows'
(`rooflinec.outputs.model_rows`)."""

from __future__ import annotations

import csv
import io
from fractions import Fraction

Number = int | float


def num(value: Fraction | int) -> Number:
    """An exact value as a JSON number: integers stay integers."""
    if isinstance(value, int) or value.denominator == 1:
        return int(value)
    return float(value)


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
