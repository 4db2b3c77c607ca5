"""rocprof-compute's `pmc_perf.csv`: one line per kernel dispatch, one column per counter.

Columns read (rocprof-compute's `roofline_calc.py`): `Kernel_Name`, `Start_Timestamp` and
`End_Timestamp` (nanoseconds; the dispatch's time is their difference), and the counters
of its byte formulas, each level only where all its counters are present:

- HBM (MI200): 32·TCC_EA_RDREQ_32B + 64·(TCC_EA_RDREQ − TCC_EA_RDREQ_32B)
  + 64·TCC_EA_WRREQ_64B + 32·(TCC_EA_WRREQ − TCC_EA_WRREQ_64B);
  MI300 (TCC_EA0_* and TCC_BUBBLE): 128·TCC_BUBBLE + 32·TCC_EA0_RDREQ_32B
  + 64·(TCC_EA0_RDREQ − TCC_BUBBLE − TCC_EA0_RDREQ_32B) + 32·(TCC_EA0_WRREQ − TCC_EA0_WRREQ_64B)
  + 64·TCC_EA0_WRREQ_64B (all `_sum` columns);
- L2: 64·(TCP_TCC_READ_REQ + TCP_TCC_WRITE_REQ + TCP_TCC_ATOMIC_WITH_RET_REQ
  + TCP_TCC_ATOMIC_WITHOUT_RET_REQ) (`_sum` columns);
- L1: 64·TCP_TOTAL_CACHE_ACCESSES_sum.

The file is read line by line. A level whose counters give a negative byte count (counters
from different passes that do not add up) is refused at its line, as is a zero count.

Operations: the MFMA counters count in units of 512 operations whatever the matrix
shape, so the kernel's formula gives the operations and the note records the count.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from fractions import Fraction
from functools import partial

from rooflinec.importing.rows import (
    Commas,
    Lines,
    Problem,
    Problems,
    Row,
    columns_named_twice,
    counter_number,
    note_number,
    table_rows,
)

REQUIRED = ("Kernel_Name", "Start_Timestamp", "End_Timestamp")
L2_COUNTERS = tuple(
    f"TCP_TCC_{k}_REQ_sum" for k in ("READ", "WRITE", "ATOMIC_WITH_RET", "ATOMIC_WITHOUT_RET")
)
L1_COUNTER = "TCP_TOTAL_CACHE_ACCESSES_sum"
MI200 = ("TCC_EA_RDREQ_32B_sum", "TCC_EA_RDREQ_sum", "TCC_EA_WRREQ_64B_sum", "TCC_EA_WRREQ_sum")
MI300 = (
    "TCC_BUBBLE_sum",
    "TCC_EA0_RDREQ_32B_sum",
    "TCC_EA0_RDREQ_sum",
    "TCC_EA0_WRREQ_64B_sum",
    "TCC_EA0_WRREQ_sum",
)
_VALU = "SQ_INSTS_VALU_{}_{}"
_MFMA = "SQ_INSTS_VALU_MFMA_MOPS_{}"
_NOTED = tuple(
    [_VALU.format(op, k) for k in ("F16", "F32", "F64") for op in ("ADD", "MUL", "FMA", "TRANS")]
    + [_MFMA.format(k) for k in ("F16", "BF16", "F32", "F64")]
)
_COUNTERS = (*MI200, *MI300, *L2_COUNTERS, L1_COUNTER)
_LEVEL_NAMES = {"dram": "HBM", "l2": "L2", "l1": "L1"}


def read_rocprof(path: str, lines: Lines, commas: Commas = "ask") -> Iterator[Row]:
    """One row per dispatch of a `pmc_perf.csv`, read line by line."""
    problems = Problems(path)
    reader = csv.reader(lines)
    try:
        header = next(reader, None) or []
        names = [h.strip() for h in header]
        for c in REQUIRED:
            if c not in names:
                problems.add(
                    Problem(path, 1, f"missing column '{c}': not a rocprof-compute pmc_perf.csv")
                )
        first = columns_named_twice(
            path, 1, names, (*REQUIRED, *_COUNTERS, *_NOTED), lines, problems
        )
        problems.raise_any()
        used = [(c, first[c]) for c in (*REQUIRED[1:], *_COUNTERS) if c in first]
        noted = [(c, first[c]) for c in _NOTED if c in first]
        name_at = first["Kernel_Name"]
        seen = False
        for line, cells in table_rows(path, reader, len(names), problems):
            row = _row(path, line, lines, cells, name_at, used, noted, problems, commas)
            if row is not None:
                seen = True
                yield row
    except csv.Error as exc:
        problems.add(Problem(path, reader.line_num or 1, f"not a CSV file: {exc}"))
    problems.raise_any()
    if not seen:
        problems.add(Problem(path, 1, "the file has no dispatches"))
        problems.raise_any()


def _row(
    path: str,
    line: int,
    lines: Lines,
    cells: list[str],
    name_at: int,
    used: list[tuple[str, int]],
    noted: list[tuple[str, int]],
    problems: Problems,
    commas: Commas,
) -> Row | None:
    before = len(problems)
    values: dict[str, Fraction] = {}
    for column, i in used:
        value = counter_number(
            path, line, column, cells[i], partial(lines.column, i), commas, problems
        )
        if value is not None:
            values[column] = value
    for column, i in noted:  # counts for the note only: one that is not a number is left out
        value = note_number(cells[i], commas)
        if value is not None:
            values[column] = value
    if len(problems) > before:
        return None
    start, end = values.get("Start_Timestamp"), values.get("End_Timestamp")
    if start is None or end is None:
        problems.add(Problem(path, line, "a timestamp is empty"))
        return None
    if end <= start:
        problems.add(
            Problem(
                path,
                line,
                f"End_Timestamp {end} is not after Start_Timestamp {start}:"
                " a negative or zero time",
            )
        )
        return None
    traffic = _bytes(values)
    for level, value in traffic.items():
        if value < 0:
            problems.add(
                Problem(
                    path,
                    line,
                    f"the {_LEVEL_NAMES[level]} counters give {value} bytes: counters that do"
                    " not add up (from different passes?)",
                )
            )
    if len(problems) > before:
        return None
    return Row(line, cells[name_at], (end - start) / 10**9, bytes=traffic, counted=_counted(values))


def _bytes(v: dict[str, Fraction]) -> dict[str, Fraction]:
    out: dict[str, Fraction] = {}
    if all(c in v for c in MI300):
        bubble, rd32, rd, wr64, wr = (v[c] for c in MI300)
        out["dram"] = (
            128 * bubble + 32 * rd32 + 64 * (rd - bubble - rd32) + 32 * (wr - wr64) + 64 * wr64
        )
    elif all(c in v for c in MI200):
        rd32, rd, wr64, wr = (v[c] for c in MI200)
        out["dram"] = 32 * rd32 + 64 * (rd - rd32) + 64 * wr64 + 32 * (wr - wr64)
    if all(c in v for c in L2_COUNTERS):
        out["l2"] = 64 * sum((v[c] for c in L2_COUNTERS), Fraction(0))
    if L1_COUNTER in v:
        out["l1"] = 64 * v[L1_COUNTER]
    return out


def _counted(v: dict[str, Fraction]) -> dict[str, Fraction]:
    """rocprof-compute's own count: 64 per VALU lane op (FMA twice) + 512 per MFMA op."""
    valu = Fraction(0)
    seen = False
    for kind in ("F16", "F32", "F64"):
        for op, weight in (("ADD", 1), ("MUL", 1), ("FMA", 2), ("TRANS", 1)):
            column = _VALU.format(op, kind)
            if column in v:
                valu += 64 * weight * v[column]
                seen = True
    mfma = [v[_MFMA.format(k)] for k in ("F16", "BF16", "F32", "F64") if _MFMA.format(k) in v]
    if not seen and not mfma:
        return {}
    return {"FLOP by its formula (512 per MFMA op)": valu + 512 * sum(mfma, Fraction(0))}
