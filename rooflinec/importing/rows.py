"""What every export reader gives: rows with their line, and problems with theirs.

Numbers in an export are read here, once for every reader: capped in length and
exponent before any exact arithmetic (as spec quantities are), finite, not negative,
and with the comma read as the user says (`--decimal-comma`, `--thousands-comma`)
wherever it could be either. A table's lines (`table_rows`), its columns named twice
and a counter's number with the problem pointing at it are read here too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, BinaryIO, Literal

from rooflinec.errors import MAX_MESSAGE, RooflinecError, one_line
from rooflinec.quantities import MAX_EXPONENT, MAX_LENGTH

if TYPE_CHECKING:
    from _csv import Reader as CsvReader

#: How a comma in a number is read: `ask` refuses a comma that could be either.
Commas = Literal["ask", "decimal", "thousands"]

MAX_PROBLEMS = 20
"""Problems shown of one file; the rest are counted on one more line."""

_SHOWN = 40  # characters of a cell's text quoted in a message


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
    """A problem at one line (and, where known, column) of an export file."""

    file: str
    line: int
    message: str
    col: int | None = None

    def __str__(self) -> str:
        message = one_line(self.message)
        if len(message) > MAX_MESSAGE:
            message = message[: MAX_MESSAGE - 1] + "…"
        where = f"{self.line}:{self.col}" if self.col else f"{self.line}"
        return f"{one_line(self.file)}:{where}: error: {message}"


class ExportError(RooflinecError):
    """An export file with problems; nothing was written."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class Problems:
    """The problems of one file, at most `MAX_PROBLEMS` kept: a file with a million bad
    lines costs no more memory than one with twenty."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.kept: list[Problem] = []
        self.more = 0

    def add(self, problem: Problem) -> None:
        if problem in self.kept:  # a raw page's bad unit, found again at every launch
            return
        if len(self.kept) < MAX_PROBLEMS:
            self.kept.append(problem)
        else:
            self.more += 1

    def __len__(self) -> int:
        return len(self.kept) + self.more

    def raise_any(self) -> None:
        """Raise `ExportError` when there is a problem."""
        if not self.kept:
            return
        shown = list(self.kept)
        if self.more:
            last = shown[-1].line
            shown.append(Problem(self.path, last, f"and {self.more} more problem(s) not shown"))
        raise ExportError(shown)


def shown(text: str) -> str:
    """A cell's text as a message quotes it: repr, cut when long."""
    if len(text) > _SHOWN:
        return repr(text[:_SHOWN]) + "…"
    return repr(text)


def table_rows(
    path: str, reader: CsvReader, width: int, problems: Problems, before: int = 0
) -> Iterator[tuple[int, list[str]]]:
    """Each non-blank line of a CSV table of `width` columns with its line number (`before`:
    the file's lines ahead of the reader's first); a line with a cell too many or too few
    is a problem at its line, and skipped."""
    for cells in reader:
        line = before + reader.line_num
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != width:
            problems.add(
                Problem(
                    path,
                    line,
                    f"expected {width} cells, found {len(cells)} (a line cut short?)",
                )
            )
            continue
        yield line, cells


def columns_named_twice(
    path: str,
    line: int,
    header: list[str],
    read: Collection[str],
    lines: Lines,
    problems: Problems,
) -> dict[str, int]:
    """Each column's first index; a problem for each column of `read` named twice (which
    one holds the figure?), at the header's `line` and the second one's column."""
    first: dict[str, int] = {}
    for i, name in enumerate(header):
        if name in first and name in read:
            problems.add(
                Problem(
                    path,
                    line,
                    f"column {shown(name)} appears twice, as columns {first[name] + 1} and"
                    f" {i + 1}: keep one",
                    lines.column(i),
                )
            )
        first.setdefault(name, i)
    return first


class NumberError(ValueError):
    """A cell that is not a number an export may hold; `offset` is where in the cell."""

    def __init__(self, message: str, offset: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


# ASCII digits only; separators are sorted out after the match. Every class is disjoint
# from the next, so matching is linear in the (capped) length.
_NUMBER = re.compile(r"(?P<sign>[+-]?)(?P<body>[0-9][0-9.,]*)(?:[eE](?P<exp>[+-]?[0-9]+))?")
_NOT_FINITE = re.compile(r"[+-]?(?:nan|inf(?:inity)?)", re.IGNORECASE)
_GROUPED = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+")
_GROUPS = re.compile(r"[0-9]{1,3}(?:X[0-9]{3})*")


def number(text: str, commas: Commas = "ask") -> Fraction | None:
    """A number as profilers print it ('10,240,000', '4.0e-05', '0,2' with a decimal
    comma); None for an empty cell; `NumberError` when it is not one.

    Refused before any exact arithmetic: text over `MAX_LENGTH` characters or an exponent
    beyond ±`MAX_EXPONENT` (too large to be a measurement, and costly to expand), NaN and
    infinities, negative values, and a comma that could be a decimal or a thousands
    separator (`0,2`, `1,234`) unless `commas` says which.
    """
    body = text.strip()
    if body.isascii() and len(body) <= MAX_LENGTH:  # the common shapes, read at once
        if body.isdigit():
            return Fraction(int(body))
        grouped = commas == "thousands" or (commas == "ask" and body.count(",") > 1)
        if grouped and _GROUPED.fullmatch(body):
            return Fraction(int(body.replace(",", "")))
    lead = len(text) - len(text.lstrip())
    if not body:
        return None
    if len(body) > MAX_LENGTH:
        raise NumberError(
            f"is too large: {len(body)} characters (a measurement has at most {MAX_LENGTH})",
            lead,
        )
    if _NOT_FINITE.fullmatch(body):
        raise NumberError("is not a finite number", lead)
    match = _NUMBER.fullmatch(body)
    if match is None:
        raise NumberError("is not a number", lead)
    if match["sign"] == "-":
        raise NumberError("is negative", lead)
    exponent = 0
    if match["exp"] is not None:
        digits = match["exp"].lstrip("+-").lstrip("0")
        # Checked on the digit string: '1e99999999' costs nothing to refuse.
        if len(digits) > 2 or int(digits or "0") > MAX_EXPONENT:
            offset = lead + match.start("exp") - 1
            if match["exp"].startswith("-"):
                raise NumberError(f"has an exponent below e-{MAX_EXPONENT}", offset)
            raise NumberError(f"is too large: an exponent beyond e+{MAX_EXPONENT}", offset)
        exponent = int(match["exp"])
    whole, frac = _separators(match["body"], commas, lead + match.start("body"))
    mantissa = int(whole + frac)
    scale = exponent - len(frac)
    return Fraction(mantissa * 10**scale) if scale >= 0 else Fraction(mantissa, 10**-scale)


def counter_number(
    path: str,
    line: int,
    name: str,
    text: str,
    column: Callable[[int], int | None],
    commas: Commas,
    problems: Problems,
) -> Fraction | None:
    """The number in a cell of counter or metric `name`; None for an empty cell, and for
    one that is not a number, with a problem at `column(offset)` of the fault."""
    try:
        return number(text, commas)
    except NumberError as exc:
        problems.add(Problem(path, line, f"{name} {shown(text)} {exc.message}", column(exc.offset)))
        return None


def note_number(text: str, commas: Commas) -> Fraction | None:
    """A count read for an entry's note only: None for an empty cell and for one that is
    not a number (left out of the note, it is not used as a figure)."""
    try:
        return number(text, commas)
    except NumberError:
        return None


def _separators(body: str, commas: Commas, at: int) -> tuple[str, str]:
    """(whole digits, fraction digits) of `1,234.5` or, with a decimal comma, `1.234,5`."""
    n_commas, n_points = body.count(","), body.count(".")
    if commas == "decimal":
        point, group = ",", "."
    elif commas == "thousands" or n_commas == 0:
        point, group = ".", ","
    elif n_points and body.index(".") < body.rindex(","):
        raise NumberError(
            "has a decimal comma (as in '1.234,5'): give --decimal-comma to read it so",
            at + body.rindex(","),
        )
    elif n_points or n_commas > 1:
        point, group = ".", ","  # '1,234.5' and '1,234,567': thousands separators
    else:
        raise NumberError(
            "could be a decimal comma or a thousands separator: give --decimal-comma"
            " or --thousands-comma to say which",
            at + body.index(","),
        )
    whole, sep, frac = body.partition(point)
    if point in frac or group in frac:
        bad = len(whole) + 1 + min(i for i in (frac.find(point), frac.find(group)) if i >= 0)
        raise NumberError("has a separator after its decimal point", at + bad)
    if sep and not frac:
        raise NumberError("has no digits after its decimal point", at + len(whole))
    if group in whole and not _GROUPS.fullmatch(whole.replace(group, "X")):
        raise NumberError(
            f"has a misplaced thousands separator: '{group}' groups digits by three", at
        )
    return whole.replace(group, ""), frac


def cell_columns(raw: str) -> list[int]:
    """The 1-based column where each cell of one CSV line starts (quotes honoured)."""
    starts = [1]
    quoted = False
    for i, char in enumerate(raw.rstrip("\r\n")):
        if char == '"':
            quoted = not quoted
        elif char == "," and not quoted:
            starts.append(i + 2)
    return starts


MAX_LINE_BYTES = 1 << 20
"""Longest line of an export read: a profiler's line is a few kilobytes at most, and a
file with no line breaks must not be read whole."""


class Lines:
    """The lines of an export opened in binary, decoded one by one (UTF-8, a leading BOM
    dropped), remembering the last: a reader that finds a bad cell can point at its
    column, and text that is not UTF-8 or a line too long is refused at its line."""

    def __init__(self, handle: BinaryIO | Iterable[bytes], path: str = "") -> None:
        self._handle = handle
        self.path = path
        self.last = ""
        self.count = 0  # lines read so far

    def __iter__(self) -> Iterator[str]:
        for raw in self._raw():
            self.count += 1
            if len(raw) > MAX_LINE_BYTES:
                raise ExportError(
                    [
                        Problem(
                            self.path,
                            self.count,
                            f"the line is longer than {MAX_LINE_BYTES // 2**20} MiB: not an"
                            " export a profiler writes",
                        )
                    ]
                )
            try:
                line = raw.decode("utf-8-sig" if self.count == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                col = len(raw[: exc.start].decode("utf-8", "replace")) + 1
                message = f"not UTF-8 text ({exc.reason})"
                raise ExportError([Problem(self.path, self.count, message, col)]) from None
            self.last = line
            yield line

    def _raw(self) -> Iterator[bytes]:
        """Lines as bytes, each cut at `MAX_LINE_BYTES` + 1 so that none is read whole."""
        readline = getattr(self._handle, "readline", None)
        if readline is None:
            yield from self._handle
            return
        while raw := readline(MAX_LINE_BYTES + 1):
            yield raw

    def column(self, index: int, offset: int = 0) -> int | None:
        """The column of `offset` in cell `index` of the last line, when it is one line."""
        starts = cell_columns(self.last)
        if index >= len(starts):
            return None
        start = starts[index]
        quote = self.last[start - 1 : start] == '"'
        return start + offset + (1 if quote else 0)
