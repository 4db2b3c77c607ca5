"""Nsight Compute CSV exports: the raw page (`ncu --page raw --csv`: one line per launch,
one column per metric, a second line of units) and the details page (one line per
launch and metric, with `Metric Name`, `Metric Unit` and `Metric Value`).

The metrics read are NERSC's roofline set: time from `gpu__time_duration.sum` (else
`sm__cycles_elapsed.avg` / `sm__cycles_elapsed.avg.per_second`), bytes from
`dram__bytes.sum` (else read + write), `lts__t_bytes.sum` (L2) and `l1tex__t_bytes.sum`
(L1). Units are read, never assumed; values may carry thousands separators. Lines before
the header (the application's output, `==PROF==` lines) are skipped. The file is read
line by line and only the metrics above are kept, so a million launches cost no more
memory than one: the readers' callers sum them as they come.

Operations: the CUDA-core counts (`sm__sass_thread_inst_executed_op_{d,f,h}{add,mul,fma}
_pred_on.sum`, an FMA counting two) are exact, but the tensor pipe is counted in
instructions (`sm__inst_executed_pipe_tensor.sum`) whose operations per instruction
depend on the architecture and the instruction. So the kernel's own formula gives the
operations, and the entry's note records what the profiler counted.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from typing import TYPE_CHECKING

from rooflinec.importing.rows import (
    Commas,
    Lines,
    Problem,
    Problems,
    Row,
    cell_columns,
    columns_named_twice,
    counter_number,
    note_number,
    shown,
    table_rows,
)

if TYPE_CHECKING:
    from _csv import Reader as CsvReader

BYTE_UNITS = {
    "byte": 1, "Kbyte": 10**3, "Mbyte": 10**6, "Gbyte": 10**9, "Tbyte": 10**12,
    "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
    "Kibyte": 2**10, "Mibyte": 2**20, "Gibyte": 2**30,
}  # fmt: skip
TIME_UNITS = {
    "second": Fraction(1), "msecond": Fraction(1, 10**3), "usecond": Fraction(1, 10**6),
    "nsecond": Fraction(1, 10**9), "s": Fraction(1), "ms": Fraction(1, 10**3),
    "us": Fraction(1, 10**6), "ns": Fraction(1, 10**9),
}  # fmt: skip
RATE_UNITS = {
    "hz": 1, "Khz": 10**3, "Mhz": 10**6, "Ghz": 10**9, "cycle/second": 1,
    "cycle/msecond": 10**3, "cycle/usecond": 10**6, "cycle/nsecond": 10**9,
}  # fmt: skip
COUNT_UNITS = {"": 1, "inst": 1, "cycle": 1, "K": 10**3, "M": 10**6, "G": 10**9}

TIME = "gpu__time_duration.sum"
CYCLES = "sm__cycles_elapsed.avg"
CYCLE_RATE = "sm__cycles_elapsed.avg.per_second"
LEVEL_METRICS = {"dram": "dram__bytes.sum", "l2": "lts__t_bytes.sum", "l1": "l1tex__t_bytes.sum"}
DRAM_PARTS = ("dram__bytes_read.sum", "dram__bytes_write.sum")
TENSOR = "sm__inst_executed_pipe_tensor.sum"
_CORE = "sm__sass_thread_inst_executed_op_{}{}_pred_on.sum"


_WANTED = frozenset(
    {
        TIME,
        CYCLES,
        CYCLE_RATE,
        TENSOR,
        *LEVEL_METRICS.values(),
        *DRAM_PARTS,
        *(_CORE.format(k, op) for k in "dfh" for op in ("add", "mul", "fma")),
    }
)
# An FMA counts two operations.
_CORE_WEIGHTS = tuple(
    (_CORE.format(kind, op), weight)
    for kind in "dfh"
    for op, weight in (("add", 1), ("mul", 1), ("fma", 2))
)
_LONG = ("ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value")


@dataclass(frozen=True)
class _Cell:
    """One metric's value as read, with where it was: a bad value is pointed at."""

    text: str
    unit: str
    line: int
    raw: str  # the physical line it is on
    index: int  # its cell in that line
    unit_line: int  # where its unit is: the raw page's line of units, or the same line
    unit_raw: str
    unit_index: int


@dataclass(frozen=True)
class _Launch:
    line: int
    name: str
    metrics: dict[str, _Cell]


@dataclass(frozen=True)
class _Table:
    """The export's table under its header, as a page reader reads it."""

    path: str
    start: int  # the header's index among the file's lines
    header: list[str]
    reader: CsvReader  # the lines after the header
    lines: Lines
    problems: Problems

    def named_twice(self) -> bool:
        """Whether a column the pages read is named twice (each a problem at the header)."""
        before = len(self.problems)
        read = _WANTED | set(_LONG)
        columns_named_twice(self.path, self.start + 1, self.header, read, self.lines, self.problems)
        return len(self.problems) > before

    def rows(self) -> Iterator[tuple[int, list[str]]]:
        """Each line of the table with its line number in the file (see `table_rows`)."""
        return table_rows(self.path, self.reader, len(self.header), self.problems, self.start + 1)


def read_ncu(path: str, lines: Lines, commas: Commas = "ask") -> Iterator[Row]:
    """One row per launch of an Nsight Compute CSV export, read line by line."""
    problems = Problems(path)
    feed = iter(lines)
    start = 0
    header: list[str] | None = None
    for start, text in enumerate(feed):  # noqa: B007 - `start` is the header's index
        if "Kernel Name" in text:
            try:
                cells = next(csv.reader([text]), [])
            except csv.Error:  # a line of the application's output, not the header
                continue
            if "Kernel Name" in cells:
                header = cells
                break
    if header is None:
        problems.add(
            Problem(
                path,
                1,
                "no header line with a 'Kernel Name' column: not an Nsight Compute CSV export",
            )
        )
        problems.raise_any()
        return
    reader = csv.reader(feed)
    table = _Table(path, start, header, reader, lines, problems)
    launches = _long(table) if "Metric Name" in header else _wide(table)
    seen = False
    try:
        for launch in launches:
            row = _row(path, launch, problems, commas)
            if row is not None:
                seen = True
                yield row
    except csv.Error as exc:
        problems.add(Problem(path, start + 1 + reader.line_num, f"not a CSV file: {exc}"))
    problems.raise_any()
    if not seen:
        problems.add(Problem(path, start + 1, "the export has no launches"))
        problems.raise_any()


def _wide(t: _Table) -> Iterator[_Launch]:
    """The raw page: header, then a line of units, then one line per launch."""
    if t.named_twice():
        return
    units = next(t.reader, None)
    if units is None or len(units) != len(t.header):
        t.problems.add(
            Problem(t.path, t.start + 2, "expected the raw page's line of units under the header")
        )
        return
    units_raw = t.lines.last
    name_at = t.header.index("Kernel Name")
    wanted = [(i, h, units[i].strip()) for i, h in enumerate(t.header) if h in _WANTED]
    for line, cells in t.rows():
        raw = t.lines.last
        metrics = {
            h: _Cell(cells[i], unit, line, raw, i, t.start + 2, units_raw, i)
            for i, h, unit in wanted
        }
        yield _Launch(line, cells[name_at], metrics)


def _long(t: _Table) -> Iterator[_Launch]:
    """The details page: one line per launch and metric; a launch's lines are together
    (told apart by `ID`), so each launch is complete when the next one starts."""
    missing = [c for c in _LONG if c not in t.header]
    if missing:
        t.problems.add(Problem(t.path, t.start + 1, f"missing column '{missing[0]}'"))
        return
    if t.named_twice():
        return
    at = {c: t.header.index(c) for c in _LONG}
    current: _Launch | None = None
    current_id: str | None = None
    last_id: int | None = None
    for line, cells in t.rows():
        if cells[at["ID"]] != current_id:
            if current is not None:
                yield current
            current_id = cells[at["ID"]]
            number_id = int(current_id) if current_id.isascii() and current_id.isdigit() else None
            if number_id is not None and last_id is not None and number_id <= last_id:
                # Launches are numbered in order: a smaller ID is a launch met before,
                # whose lines the export split (sorted by metric?): its sums would be wrong.
                t.problems.add(
                    Problem(
                        t.path,
                        line,
                        f"launch ID {number_id} comes after launch ID {last_id}: the export's"
                        " lines are not in launch order (export it again, or sort it by ID)",
                    )
                )
                current = None
                break
            last_id = number_id if number_id is not None else last_id
            current = _Launch(line, cells[at["Kernel Name"]], {})
        assert current is not None
        metric = cells[at["Metric Name"]]
        if metric in _WANTED:
            current.metrics[metric] = _Cell(
                cells[at["Metric Value"]],
                cells[at["Metric Unit"]].strip(),
                line,
                t.lines.last,
                at["Metric Value"],
                line,
                t.lines.last,
                at["Metric Unit"],
            )
    if current is not None:
        yield current


def _read(
    path: str, metric: str, cell: _Cell, problems: Problems, commas: Commas
) -> Fraction | None:
    """A cell's number; a problem pointing at it when it is not one."""
    value = counter_number(
        path, cell.line, metric, cell.text, partial(_column, cell), commas, problems
    )
    if value is None and not cell.text.strip():  # empty, not refused
        problems.add(Problem(path, cell.line, f"{metric} is empty", _column(cell, 0)))
    return value


def _column(cell: _Cell, offset: int, unit: bool = False) -> int | None:
    """The column of a cell's value (or of its unit) on its line."""
    raw, index = (cell.unit_raw, cell.unit_index) if unit else (cell.raw, cell.index)
    starts = cell_columns(raw)
    if index >= len(starts):
        return None
    start = starts[index]
    return start + offset + (1 if raw[start - 1 : start] == '"' else 0)


def _value(
    path: str,
    launch: _Launch,
    metric: str,
    units: dict[str, int] | dict[str, Fraction],
    problems: Problems,
    commas: Commas,
) -> Fraction | None:
    """A metric in base units; a problem when its value or unit cannot be read."""
    cell = launch.metrics[metric]
    value = _read(path, metric, cell, problems, commas)
    if value is None:
        return None
    if cell.unit not in units:
        what = "has no unit" if not cell.unit else f"has the unit {shown(cell.unit)}"
        problems.add(
            Problem(
                path,
                cell.unit_line,
                f"{metric} {what}: expected one of {', '.join(u for u in units if u)}",
                _column(cell, 0, unit=True),
            )
        )
        return None
    factor = units[cell.unit]
    return value if factor == 1 else value * factor


def _row(path: str, launch: _Launch, problems: Problems, commas: Commas) -> Row | None:
    before = len(problems)
    has = launch.metrics.__contains__
    time: Fraction | None
    if has(TIME):
        time = _value(path, launch, TIME, TIME_UNITS, problems, commas)
    elif has(CYCLES) and has(CYCLE_RATE):
        cycles = _value(path, launch, CYCLES, COUNT_UNITS, problems, commas)
        rate = _value(path, launch, CYCLE_RATE, RATE_UNITS, problems, commas)
        time = cycles / rate if cycles is not None and rate else None
        if rate == 0:
            problems.add(Problem(path, launch.line, f"{CYCLE_RATE} is zero"))
    else:
        problems.add(
            Problem(
                path,
                launch.line,
                f"missing column '{TIME}' (or '{CYCLES}' with '{CYCLE_RATE}'): no time for"
                f" kernel {shown(launch.name)}",
            )
        )
        return None
    traffic: dict[str, Fraction] = {}
    for level, metric in LEVEL_METRICS.items():
        if has(metric):
            value = _value(path, launch, metric, BYTE_UNITS, problems, commas)
            if value is not None:
                traffic[level] = value
        elif level == "dram" and all(map(has, DRAM_PARTS)):
            parts = [_value(path, launch, m, BYTE_UNITS, problems, commas) for m in DRAM_PARTS]
            if None not in parts:
                traffic[level] = sum((p for p in parts if p is not None), Fraction(0))
    if len(problems) > before or time is None:
        return None
    if time <= 0:
        problems.add(Problem(path, launch.line, "the launch's time is zero"))
        return None
    return Row(launch.line, launch.name, time, bytes=traffic, counted=_counted(launch, commas))


def _counted(launch: _Launch, commas: Commas) -> dict[str, Fraction]:
    """What the profiler counted, for the entry's note: CUDA-core FLOP, tensor instructions.
    A count that is not a number is left out of the note (it is not used as a figure)."""
    out: dict[str, Fraction] = {}
    for metric, weight in _CORE_WEIGHTS:
        value = _note_number(launch, metric, commas)
        if value is not None:
            out["FLOP on CUDA cores"] = out.get("FLOP on CUDA cores", Fraction(0)) + weight * value
    tensor = _note_number(launch, TENSOR, commas)
    if tensor is not None:
        out["tensor-pipe instructions"] = tensor
    return out


def _note_number(launch: _Launch, metric: str, commas: Commas) -> Fraction | None:
    cell = launch.metrics.get(metric)
    return None if cell is None else note_number(cell.text, commas)
