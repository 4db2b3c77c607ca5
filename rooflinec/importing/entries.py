"""Rows of an export resolved against the catalog: one `Entry` per case, device and
precision, the launches of one kernel summed (as NERSC's scripts sum them).

Rows are summed as they are read, so memory grows with the kernels, not the launches.
`--match` patterns are the user's regular expressions: each search runs under a time
limit (a pattern like `(a+)+$` backtracks for ages on a long kernel name), and each
kernel name is matched once.
"""

from __future__ import annotations

import re
import signal
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from types import FrameType

from rooflinec.catalog import LEVELS, Catalog
from rooflinec.errors import UsageError
from rooflinec.importing.rows import ExportError, Problem, Problems, Row, shown

MATCH_SECONDS = 1.0
"""Longest one `--match` search may take on one kernel name."""


@dataclass(frozen=True)
class Entry:
    """A measured entry to add to a case: totals over `launches` launches."""

    case: str
    kernel: str
    device: str
    precision: str
    time: Fraction
    launches: int
    flops: Fraction | None
    bytes: dict[str, Fraction]
    note: str | None
    line: int = 0  # the export's line of its first launch


def parse_matches(texts: tuple[str, ...]) -> list[tuple[re.Pattern[str], str]]:
    """`REGEX=CASE` options as (compiled pattern, case id); the last `=` splits them."""
    out = []
    for text in texts:
        pattern, sep, case = text.rpartition("=")
        if not sep or not pattern or not case:
            raise UsageError(f"--match {text!r}: expected REGEX=CASE")
        try:
            out.append((re.compile(pattern), case))
        except re.error as exc:
            raise UsageError(f"--match {text!r}: not a regular expression: {exc}") from exc
    return out


class MatchTimeout(UsageError):
    """A `--match` pattern that took too long on a kernel name."""


class _Expired(Exception):
    pass


def _expire(signum: int, frame: FrameType | None) -> None:
    raise _Expired


class Matcher:
    """The case of each kernel name: the first `--match` pattern found in it, each name
    searched once, each search bounded by `MATCH_SECONDS` (`MatchTimeout` past it)."""

    def __init__(self, matches: list[tuple[re.Pattern[str], str]]) -> None:
        self.matches = matches
        self.known: dict[str, str | None] = {}

    def case(self, name: str) -> str | None:
        if name not in self.known:
            self.known[name] = next(
                (case for pattern, case in self.matches if _search(pattern, name)), None
            )
        return self.known[name]


def _search(pattern: re.Pattern[str], name: str) -> bool:
    """`pattern.search(name)`, stopped by a timer signal after `MATCH_SECONDS`: `re`
    checks for signals while it backtracks. Off the main thread (no signals there) the
    search runs unbounded."""
    bounded = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not bounded:
        return pattern.search(name) is not None
    previous: Callable[[int, FrameType | None], object] | int | None
    previous = signal.signal(signal.SIGALRM, _expire)
    try:
        signal.setitimer(signal.ITIMER_REAL, MATCH_SECONDS)
        try:
            return pattern.search(name) is not None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _Expired:
        raise MatchTimeout(
            f"--match {shown(pattern.pattern)} took over {MATCH_SECONDS:g} s on kernel"
            f" {shown(name)}: simplify the pattern (nested repeats like '(a+)+' backtrack)"
        ) from None
    finally:
        signal.signal(signal.SIGALRM, previous)


@dataclass
class _Sum:
    case: str
    device: str
    precision: str
    time: Fraction = Fraction(0)
    launches: int = 0
    flops: Fraction | None = Fraction(0)
    bytes: dict[str, Fraction] | None = None
    counted: dict[str, Fraction] = field(default_factory=dict)
    line: int = 0

    def add(self, row: Row) -> None:
        self.time += row.time
        self.launches += row.launches
        self.flops = None if self.flops is None or row.flops is None else self.flops + row.flops
        if self.bytes is None:
            self.bytes = dict(row.bytes)
        else:  # a level is kept only where every launch counted it
            self.bytes = {lv: b + row.bytes[lv] for lv, b in self.bytes.items() if lv in row.bytes}
        for what, value in row.counted.items():
            self.counted[what] = self.counted.get(what, Fraction(0)) + value
        self.line = self.line or row.line


def resolve(
    rows: Iterable[Row],
    catalog: Catalog,
    path: str,
    *,
    tool: str,
    device: str | None = None,
    precision: str | None = None,
    matches: list[tuple[re.Pattern[str], str]] | None = None,
    skipped: dict[str, int] | None = None,
) -> list[Entry]:
    """One entry per (case, device, precision), in the order first seen.

    With `matches`, a row's name is mapped to the case of the first pattern found in it
    (`re.search`); names no pattern finds are counted in `skipped` and left out.
    Without, the name must be a case id. Raises `ExportError` naming every bad line
    (the reader's first), `MatchTimeout` when a pattern takes too long.
    """
    problems = Problems(path)
    sums: dict[tuple[str, str, str], _Sum] = {}
    matcher = Matcher(matches) if matches else None
    try:
        for row in rows:
            case_id = row.name
            if matcher is not None:
                found = matcher.case(row.name)
                if found is None:
                    if skipped is not None:
                        skipped[row.name] = skipped.get(row.name, 0) + row.launches
                    continue
                case_id = found
            problem = _place(catalog, row, case_id, device, precision, sums, bool(matches))
            if problem is not None:
                problems.add(Problem(path, row.line, problem))
    except ExportError as exc:  # the reader's problems, then those found before them
        raise ExportError([*exc.problems, *problems.kept]) from None
    for s in sums.values():
        for level, value in (s.bytes or {}).items():
            if value == 0:
                problems.add(
                    Problem(
                        path,
                        s.line,
                        f"{level} bytes of {shown(s.case)} on '{s.device}' sum to 0 over"
                        f" {s.launches} launch(es): a measured level without traffic cannot"
                        " be placed on a roofline (leave its column out)",
                    )
                )
    problems.raise_any()
    return [_entry(catalog, s, tool) for s in sums.values()]


def _place(
    catalog: Catalog,
    row: Row,
    case_id: str,
    device: str | None,
    precision: str | None,
    sums: dict[tuple[str, str, str], _Sum],
    matched: bool,
) -> str | None:
    """Add `row` to its entry's sum; the problem with it, if any."""
    case = catalog.cases.get(case_id)
    if case is None:
        hint = "" if matched else "; map kernel names to cases with --match REGEX=CASE"
        return f"unknown case {shown(case_id)}{hint}"
    device_id = row.device or device
    if device_id is None:
        return "no device: give a device column or --device"
    known = catalog.devices.get(device_id)
    if known is None:
        return f"unknown device {shown(device_id)}"
    precision_id = row.precision or precision or case.precision
    if precision_id not in known.peaks:
        return f"device '{device_id}' has no peak for precision {shown(precision_id)}"
    key = (case.id, device_id, precision_id)
    sums.setdefault(key, _Sum(*key)).add(row)
    return None


def _entry(catalog: Catalog, s: _Sum, tool: str) -> Entry:
    if s.flops is not None and s.flops > 0:
        flops: Fraction | None = s.flops
        note = None
    else:
        flops = None
        note = "operations: the kernel's formula"
        if s.counted:
            shown = " and ".join(f"{_whole(v)} {what}" for what, v in s.counted.items())
            note += (
                f" ({tool} counted {shown} over {s.launches} launch(es); operations per"
                " tensor or matrix instruction depend on the architecture)"
            )
    traffic = s.bytes or {}
    return Entry(
        s.case,
        catalog.cases[s.case].kernel,
        s.device,
        s.precision,
        s.time,
        s.launches,
        flops,
        {lv: traffic[lv] for lv in LEVELS if lv in traffic},
        note,
        s.line,
    )


def _whole(value: Fraction) -> str:
    return str(int(value)) if value.denominator == 1 else str(float(value))
