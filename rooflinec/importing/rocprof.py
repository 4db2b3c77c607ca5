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

Operations: the MFMA counters count in units of 512 operations whatever the matrix
shape, so the kernel's formula gives the operations and the note records the count.
"""

from __future__ import annotations

import csv
import io
from fractions import Fraction

from rooflinec.importing.rows import ExportError, Problem, Row, number

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


def read_rocprof(path: str, text: str) -> list[Row]:
    """One row per dispatch of a `pmc_perf.csv`."""
    reader = csv.DictReader(io.StringIO(text))
    names = reader.fieldnames or []
    missing = [c for c in REQUIRED if c not in names]
    if missing:
        raise ExportError(
            [
                Problem(path, 1, f"missing column '{c}': not a rocprof-compute pmc_perf.csv")
                for c in missing
            ]
        )
    problems: list[Problem] = []
    rows: list[Row] = []
    for record in reader:
        line = reader.line_num
        values: dict[str, Fraction] = {}
        for column, text_value in record.items():
            if column is None or text_value is None or not text_value.strip():
                continue
            value = number(text_value)
            if value is not None:
                values[column] = value
        start, end = values.get("Start_Timestamp"), values.get("End_Timestamp")
        if start is None or end is None:
            problems.append(Problem(path, line, "a timestamp is empty or not a number"))
            continue
        if end <= start:
            problems.append(
                Problem(
                    path,
                    line,
                    f"End_Timestamp {end} is not after Start_Timestamp {start}:"
                    " a negative or zero time",
                )
            )
            continue
        rows.append(
            Row(
                line,
                record["Kernel_Name"],
                (end - start) / 10**9,
                bytes=_bytes(values),
                counted=_counted(values),
            )
        )
    if problems:
        raise ExportError(problems)
    if not rows:
        raise ExportError([Problem(path, 1, "the file has no dispatches")])
    return rows


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
