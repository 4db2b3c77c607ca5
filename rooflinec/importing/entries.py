"""Rows of an export resolved against the catalog: one `Entry` per case, device and
precision, the launches of one kernel summed (as NERSC's scripts sum them)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction

from rooflinec.catalog import LEVELS, Catalog
from rooflinec.errors import UsageError
from rooflinec.importing.rows import ExportError, Problem, Row


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
    lines: tuple[int, ...] = field(default=())  # the export's lines it sums


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
    lines: list[int] = field(default_factory=list)

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
        self.lines.append(row.line)


def resolve(
    rows: list[Row],
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
    Without, the name must be a case id. Raises `ExportError` naming every bad line.
    """
    cases = catalog.cases
    problems: list[Problem] = []
    sums: dict[tuple[str, str, str], _Sum] = {}
    for row in rows:
        case_id = row.name
        if matches:
            found = next((case for pattern, case in matches if pattern.search(row.name)), None)
            if found is None:
                if skipped is not None:
                    skipped[row.name] = skipped.get(row.name, 0) + row.launches
                continue
            case_id = found
        case = cases.get(case_id)
        if case is None:
            hint = "" if matches else "; map kernel names to cases with --match REGEX=CASE"
            problems.append(Problem(path, row.line, f"unknown case '{case_id}'{hint}"))
            continue
        device_id = row.device or device
        if device_id is None:
            problems.append(Problem(path, row.line, "no device: give a device column or --device"))
            continue
        known = catalog.devices.get(device_id)
        if known is None:
            problems.append(Problem(path, row.line, f"unknown device '{device_id}'"))
            continue
        precision_id = row.precision or precision or case.precision
        if precision_id not in known.peaks:
            problems.append(
                Problem(
                    path,
                    row.line,
                    f"device '{device_id}' has no peak for precision '{precision_id}'",
                )
            )
            continue
        key = (case.id, device_id, precision_id)
        sums.setdefault(key, _Sum(*key)).add(row)
    if problems:
        raise ExportError(problems)
    return [_entry(catalog, s, tool) for s in sums.values()]


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
        tuple(s.lines),
    )


def _whole(value: Fraction) -> str:
    return str(int(value)) if value.denominator == 1 else str(float(value))
