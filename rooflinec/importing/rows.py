"""What every export reader gives: rows with their line, and problems with theirs."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction

from rooflinec.errors import RooflinecError, one_line


@dataclass(frozen=True)
class Row:
    """One launch of a kernel (ncu, rocprof) or one line of a plain CSV, as read.

    `time`, `flops` and `bytes` cover `launches` launches. `counted` holds the profiler's
    own operation counts that are not used as `flops` (what was counted -> how many),
    for the entry's note.
    """

    line: int
    name: str  # the case id (plain CSV) or the kernel name the profiler shows
    time: Fraction  # s
    launches: int = 1
    device: str | None = None
    precision: str | None = None
    flops: Fraction | None = None
    bytes: dict[str, Fraction] = field(default_factory=dict)
    counted: dict[str, Fraction] = field(default_factory=dict)


@dataclass(frozen=True)
class Problem:
    """A problem at one line of an export file."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{one_line(self.file)}:{self.line}: error: {one_line(self.message)}"


class ExportError(RooflinecError):
    """An export file with problems; nothing was written."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


def number(text: str) -> Fraction | None:
    """A number as profilers print it, thousands separators allowed ('10,240,000',
    '4.0e-05'); None when it is not one."""
    cleaned = text.strip().replace(",", "")
    if not cleaned:
        return None
    try:
        return Fraction(cleaned)
    except (ValueError, ZeroDivisionError):
        return None
