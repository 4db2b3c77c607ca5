"""Nsight Compute CSV exports: the raw page (`ncu --page raw --csv`: one line per launch,
one column per metric, a second line of units) and the details page (one line per
launch and metric, with `Metric Name`, `Metric Unit` and `Metric Value`).

The metrics read are NERSC's roofline set: time from `gpu__time_duration.sum` (else
`sm__cycles_elapsed.avg` / `sm__cycles_elapsed.avg.per_second`), bytes from
`dram__bytes.sum` (else read + write), `lts__t_bytes.sum` (L2) and `l1tex__t_bytes.sum`
(L1). Units are read, never assumed; values may carry thousands separators. Lines before
the header (the application's output, `==PROF==` lines) are skipped.

Operations: the CUDA-core counts (`sm__sass_thread_inst_executed_op_{d,f,h}{add,mul,fma}
_pred_on.sum`, an FMA counting two) are exact, but the tensor pipe is counted in
instructions (`sm__inst_executed_pipe_tensor.sum`) whose operations per instruction
depend on the architecture and the instruction. So the kernel's own formula gives the
operations, and the entry's note records what the profiler counted.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction

from rooflinec.importing.rows import ExportError, Problem, Row, number

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


@dataclass(frozen=True)
class _Launch:
    line: int
    name: str
    metrics: dict[str, tuple[str, str]]  # metric -> (value text, unit)


def read_ncu(path: str, text: str) -> list[Row]:
    """One row per launch of an Nsight Compute CSV export."""
    lines = text.splitlines()
    start = next(
        (i for i, ln in enumerate(lines) if '"Kernel Name"' in ln or "Kernel Name," in ln), None
    )
    if start is None:
        raise ExportError(
            [
                Problem(
                    path,
                    1,
                    "no header line with a 'Kernel Name' column: not an Nsight Compute CSV export",
                )
            ]
        )
    body = "\n".join(lines[start:])
    header = next(csv.reader(io.StringIO(body)))
    launches = list(
        _long(path, start, body) if "Metric Name" in header else _wide(path, start, body)
    )
    problems: list[Problem] = []
    rows = [row for launch in launches if (row := _row(path, launch, problems)) is not None]
    if problems:
        raise ExportError(problems)
    if not rows:
        raise ExportError([Problem(path, start + 1, "the export has no launches")])
    return rows


def _wide(path: str, start: int, body: str) -> Iterator[_Launch]:
    """The raw page: header, then a line of units, then one line per launch."""
    reader = csv.reader(io.StringIO(body))
    header = next(reader)
    units = next(reader, None)
    if units is None or len(units) != len(header):
        raise ExportError(
            [Problem(path, start + 2, "expected the raw page's line of units under the header")]
        )
    name_at = header.index("Kernel Name")
    for cells in reader:
        line = start + reader.line_num
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(header):
            raise ExportError(
                [Problem(path, line, f"expected {len(header)} cells, found {len(cells)}")]
            )
        metrics = {h: (c, u.strip()) for h, c, u in zip(header, cells, units, strict=True)}
        yield _Launch(line, cells[name_at], metrics)


def _long(path: str, start: int, body: str) -> Iterator[_Launch]:
    """The details page: one line per launch and metric; launches told apart by `ID`."""
    reader = csv.DictReader(io.StringIO(body))
    missing = [
        c
        for c in ("ID", "Metric Name", "Metric Unit", "Metric Value")
        if c not in (reader.fieldnames or [])
    ]
    if missing:
        raise ExportError([Problem(path, start + 1, f"missing column '{missing[0]}'")])
    launches: dict[str, _Launch] = {}
    for record in reader:
        line = start + reader.line_num
        launch = launches.get(record["ID"])
        if launch is None:
            launch = launches[record["ID"]] = _Launch(line, record["Kernel Name"], {})
        launch.metrics[record["Metric Name"]] = (
            record["Metric Value"],
            record["Metric Unit"].strip(),
        )
    yield from launches.values()


def _value(
    path: str,
    launch: _Launch,
    metric: str,
    units: dict[str, int] | dict[str, Fraction],
    problems: list[Problem],
) -> Fraction | None:
    """A metric in base units; a problem when its value or unit cannot be read."""
    text, unit = launch.metrics[metric]
    value = number(text)
    if value is None:
        problems.append(Problem(path, launch.line, f"{metric} {text!r} is not a number"))
        return None
    if value < 0:
        problems.append(Problem(path, launch.line, f"{metric} {text!r} is negative"))
        return None
    if unit not in units:
        what = "has no unit" if not unit else f"has the unit {unit!r}"
        problems.append(
            Problem(
                path,
                launch.line,
                f"{metric} {what}: expected one of {', '.join(u for u in units if u)}",
            )
        )
        return None
    return value * units[unit]


def _row(path: str, launch: _Launch, problems: list[Problem]) -> Row | None:
    before = len(problems)
    has = launch.metrics.__contains__
    if has(TIME):
        time = _value(path, launch, TIME, TIME_UNITS, problems)
    elif has(CYCLES) and has(CYCLE_RATE):
        cycles = _value(path, launch, CYCLES, COUNT_UNITS, problems)
        rate = _value(path, launch, CYCLE_RATE, RATE_UNITS, problems)
        time = cycles / rate if cycles is not None and rate else None
    else:
        problems.append(
            Problem(
                path,
                launch.line,
                f"missing column '{TIME}' (or '{CYCLES}' with '{CYCLE_RATE}'): no time for"
                f" kernel {launch.name!r}",
            )
        )
        return None
    traffic: dict[str, Fraction] = {}
    for level, metric in LEVEL_METRICS.items():
        if has(metric):
            value = _value(path, launch, metric, BYTE_UNITS, problems)
            if value is not None:
                traffic[level] = value
        elif level == "dram" and all(map(has, DRAM_PARTS)):
            parts = [_value(path, launch, m, BYTE_UNITS, problems) for m in DRAM_PARTS]
            if None not in parts:
                traffic[level] = sum((p for p in parts if p is not None), Fraction(0))
    if len(problems) > before or time is None:
        return None
    if time <= 0:
        problems.append(Problem(path, launch.line, "the launch's time is zero"))
        return None
    return Row(launch.line, launch.name, time, bytes=traffic, counted=_counted(launch))


def _counted(launch: _Launch) -> dict[str, Fraction]:
    """What the profiler counted, for the entry's note: CUDA-core FLOP, tensor instructions."""
    out: dict[str, Fraction] = {}
    for kind in "dfh":
        for op, weight in (("add", 1), ("mul", 1), ("fma", 2)):
            metric = _CORE.format(kind, op)
            value = number(launch.metrics[metric][0]) if metric in launch.metrics else None
            if value is not None:
                out["FLOP on CUDA cores"] = (
                    out.get("FLOP on CUDA cores", Fraction(0)) + weight * value
                )
    tensor = number(launch.metrics[TENSOR][0]) if TENSOR in launch.metrics else None
    if tensor is not None:
        out["tensor-pipe instructions"] = tensor
    return out
