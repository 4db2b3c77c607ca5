"""Columnar compile for large catalogs: exact where it decides, numpy float64 where it counts.

`compile_catalog` builds one exact `Result` per cell; at a million cells (100 devices ×
1,700 cases × 6 precisions) that is seconds to build and minutes to export. This module
computes the same results as columns:

1. every kernel formula is evaluated exactly (Python ints and Fractions, through the
   formula engine's compiled closures, in bulk) once per case and precision width —
   the only place where the spec's formulas run;
2. those exact counts and the devices' exact peaks and bandwidths are converted to
   float64 once each (correctly rounded), and the case × (device, precision) product is
   computed with numpy: each ceiling, the attainable rate, what limits it, share of
   peak, time, both sweeps and the efficiency of measured runs;
3. `limited_by` is a discrete decision and must equal the exact compiler's: wherever
   another ceiling lies within a relative `TIE_TOLERANCE` of the lowest one in float,
   the cell is decided again with exact Fractions (a tie goes to compute), and its
   attainable rate and sweeps are taken from the exact values.

Floats agree with the exact compiler to a few units in the last place (a handful of
correctly rounded operations apart); `limited_by` agrees exactly. `bulk_compile` returns
a `ResultTable`: numpy columns, index arrays into the catalog's ids, and `row(i)`, a
record of the results contract (`rooflinec compile --format json`). `write_json` and
`write_csv` stream a table in the same formats as `rooflinec.export`.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from rooflinec.catalog import LEVELS, Case, Catalog, Kernel
from rooflinec.compiler import COMPUTE, SWEEP, SWEEP_KEYS, Compiled, device_figures
from rooflinec.export import CSV_COLUMNS, num, results_document
from rooflinec.formulas import Formula, bulk_evaluate

if TYPE_CHECKING:
    from numpy.typing import NDArray

    Floats = NDArray[np.float64]
    Ints = NDArray[np.int32]

__all__ = [
    "LIMITED_BY",
    "TIE_TOLERANCE",
    "ResultTable",
    "bulk_compile",
    "write_csv",
    "write_json",
]

#: `limited_by` codes: 0 is compute, 1 + i is memory level `LEVELS[i]`.
LIMITED_BY: tuple[str, ...] = (COMPUTE, *LEVELS)
#: Ceilings closer than this (relative) in float are compared again exactly.
TIE_TOLERANCE = 1e-9

_SWEEP_F = np.array([float(f) for f in SWEEP])  # powers of two: scaling by them is exact
_RESERVED = "w"


@dataclass(frozen=True, eq=False)
class ResultTable:
    """Results of `bulk_compile` as columns, one row per cell, in `compile_catalog` order.

    `case`, `device` and `precision` index `case_ids`, `device_ids` and `precision_ids`
    (the catalog's, in catalog order). Per-level columns have one column per entry of
    `LEVELS` (dram, l2, l1) and hold NaN where the level is not given (`bytes`,
    `intensity`: by the kernel; `bandwidth`: by kernel or device, i.e. no ceiling).
    `measured` and `efficiency` are NaN where no run was measured. Rates in OP/s,
    bandwidths in B/s, times in s.
    """

    catalog: Catalog = field(repr=False)
    case_ids: tuple[str, ...]
    device_ids: tuple[str, ...]
    precision_ids: tuple[str, ...]
    case: Ints
    device: Ints
    precision: Ints
    declared: NDArray[np.bool_]
    limited_by: NDArray[np.int8]
    attainable: Floats
    share_of_peak: Floats
    time: Floats
    bandwidth_sweep: Floats  # (rows, 4): bandwidth × 0.5, 1, 2, 4
    peak_sweep: Floats  # (rows, 4): peak × 0.5, 1, 2, 4
    measured: Floats
    efficiency: Floats
    _exact: _Exact = field(repr=False)
    _cw: Ints = field(repr=False)  # row of the (case, width) tables for each cell
    _dp: Ints = field(repr=False)  # row of the (device, precision) table for each cell

    def __len__(self) -> int:
        return int(self.case.shape[0])

    # ----------------------------------------------------------------- input columns
    @cached_property
    def flops(self) -> Floats:
        return self._exact.flops_f[self._cw]

    @cached_property
    def bytes(self) -> Floats:
        """(rows, 3) bytes per level; NaN where the kernel gives no traffic."""
        return self._exact.bytes_f[self._cw]

    @cached_property
    def intensity(self) -> Floats:
        """(rows, 3) operations per byte per level; NaN where the kernel gives no traffic."""
        exact = self._exact
        return (exact.flops_f[:, None] / exact.bytes_f)[self._cw]

    @cached_property
    def peak(self) -> Floats:
        return self._exact.dp_peak_f[self._dp]

    @cached_property
    def bandwidth(self) -> Floats:
        """(rows, 3) sustained bandwidth of each level that is a ceiling; NaN elsewhere."""
        exact = self._exact
        gives = ~np.isnan(exact.bytes_f[self._cw])
        bw = exact.dev_bw_f[exact.dp_device[self._dp]]
        return np.where(gives, bw, np.nan)

    @property
    def limited_by_names(self) -> NDArray[np.str_]:
        return np.asarray(LIMITED_BY)[self.limited_by]

    # ----------------------------------------------------------------- records
    def row(self, i: int) -> dict[str, Any]:
        """Row `i` as a record of the results contract, like `export.result_record`.

        Operation and byte counts and intensities come from the exact values (integers
        stay integers); per-cell values are float64, written as integers when integral,
        as the exact export writes integral Fractions.
        """
        exact = self._exact
        if i < 0:
            i += len(self)
        cw = int(self._cw[i])
        levels = exact.levels_of[cw]
        return {
            "case": self.case_ids[self.case[i]],
            "kernel": exact.kernel_of[cw],
            "device": self.device_ids[self.device[i]],
            "precision": self.precision_ids[self.precision[i]],
            "declared": bool(self.declared[i]),
            "flops": exact.flops_json[cw],
            "bytes": {lv: exact.bytes_json[cw][lv] for lv in levels},
            "intensity": {lv: exact.intensity_json(cw, lv) for lv in levels},
            "attainable": _num(self.attainable[i]),
            "limited_by": LIMITED_BY[self.limited_by[i]],
            "share_of_peak": _num(self.share_of_peak[i]),
            "time": _num(self.time[i]),
            "bandwidth_sweep": _sweep(self.bandwidth_sweep[i]),
            "peak_sweep": _sweep(self.peak_sweep[i]),
            "measured": _num_or_none(self.measured[i]),
            "efficiency": _num_or_none(self.efficiency[i]),
        }

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (self.row(i) for i in range(len(self)))


def _num(x: float | np.floating[Any]) -> float | int:
    """A float as the exact export writes it: integral values as integers."""
    value = float(x)
    return int(value) if value.is_integer() else value


def _sweep(values: Floats) -> dict[str, float | int]:
    return dict(zip(SWEEP_KEYS, map(_num, values.tolist()), strict=True))


def _num_or_none(x: float | np.floating[Any]) -> float | int | None:
    value = float(x)
    if value != value:  # NaN: no measured run
        return None
    return int(value) if value.is_integer() else value


@dataclass
class _Exact:
    """The exact per-(case, width) and per-(device, precision) values, and their floats."""

    # (case, width) rows: case-major, one row per width used
    flops: list[Fraction]
    bytes: list[dict[str, Fraction]]  # levels the kernel gives, in the kernel's order
    kernel_of: list[str]
    flops_f: Floats
    bytes_f: Floats  # (rows, 3), NaN where the kernel gives no traffic
    # (device, precision) rows
    dp_device: Ints
    dp_precision: Ints
    dp_peak: list[Fraction]
    dp_peak_f: Floats
    dev_bw: list[dict[str, Fraction]]  # per device index: sustained bandwidth per level
    dev_bw_f: Floats  # (devices, 3), NaN where the device gives no such level
    _intensity: dict[tuple[int, str], float | int] = field(default_factory=dict)

    @cached_property
    def levels_of(self) -> list[tuple[str, ...]]:
        return [tuple(b) for b in self.bytes]

    @cached_property
    def flops_json(self) -> list[float | int]:
        return [num(v) for v in self.flops]

    @cached_property
    def bytes_json(self) -> list[dict[str, float | int]]:
        return [{lv: num(v) for lv, v in b.items()} for b in self.bytes]

    def intensity_json(self, cw: int, level: str) -> float | int:
        key = (cw, level)
        value = self._intensity.get(key)
        if value is None:
            value = self._intensity[key] = num(self.flops[cw] / self.bytes[cw][level])
        return value


# --------------------------------------------------------------------------- compile


def _select(wanted: Iterable[str] | None) -> set[str] | None:
    return set(wanted) if wanted is not None else None


def _evaluate(
    formula: Formula, cases: Sequence[Case], widths: Sequence[Fraction]
) -> list[list[Fraction]]:
    """The formula for every case at every width, exactly: result[case][width]."""
    names = sorted(formula.symbols - {_RESERVED})
    n = len(cases)
    if _RESERVED not in formula.symbols:
        values = bulk_evaluate(formula, {name: [c.shape[name] for c in cases] for name in names})
        return [[v] * len(widths) for v in values]
    columns: dict[str, list[int | Fraction]] = {}
    for name in names:
        column: list[int | Fraction] = [c.shape[name] for c in cases]
        columns[name] = column * len(widths)
    # An integral width goes in as an int: the same exact values, without Fraction
    # arithmetic on every term (bytes per value are 8, 4, 2, 1 for most precisions).
    exact_widths = [int(w) if w.denominator == 1 else w for w in widths]
    columns[_RESERVED] = [w for w in exact_widths for _ in range(n)]
    flat = bulk_evaluate(formula, columns)
    return [[flat[k * n + i] for k in range(len(widths))] for i in range(n)]


def _case_tables(
    kernels: list[tuple[Kernel, list[Case]]], widths: list[Fraction]
) -> tuple[list[Fraction], list[dict[str, Fraction]], list[str]]:
    """Exact flops and bytes per (case, width), case-major, for the selected cases."""
    flops_rows: list[Fraction] = []
    bytes_rows: list[dict[str, Fraction]] = []
    kernel_rows: list[str] = []
    for kernel, cases in kernels:
        flops = _evaluate(kernel.flops, cases, widths)
        by_level = {lv: _evaluate(f, cases, widths) for lv, f in kernel.bytes.items()}
        for i in range(len(cases)):
            for k in range(len(widths)):
                flops_rows.append(flops[i][k])
                bytes_rows.append({lv: values[i][k] for lv, values in by_level.items()})
                kernel_rows.append(kernel.id)
    return flops_rows, bytes_rows, kernel_rows


@dataclass
class _Pairs:
    """The (device, precision) pairs wanted, in the exact compiler's order."""

    device: list[int]  # index into the catalog's devices
    precision: list[int]  # index into the catalog's precisions
    peak: list[Fraction]  # sustained dense peak
    width: list[int]  # index into `widths`
    widths: list[Fraction]  # the distinct bytes-per-value of the wanted precisions
    bandwidths: list[dict[str, Fraction]]  # per catalog device: sustained bandwidth per level


def _pairs(
    catalog: Catalog, want_devices: set[str] | None, want_precisions: set[str] | None
) -> _Pairs:
    """Devices in catalog order, each device's peaks in its spec's order, as compiled."""
    precision_index = {p: i for i, p in enumerate(catalog.precisions)}
    out = _Pairs([], [], [], [], [], [])
    for d, device in enumerate(catalog.devices.values()):
        out.bandwidths.append({lv: device.bandwidth(lv) for lv in LEVELS if lv in device.memory})
        if want_devices is not None and device.id not in want_devices:
            continue
        for pid in device.peaks:
            if want_precisions is not None and pid not in want_precisions:
                continue
            width = catalog.precisions[pid].bytes
            if width not in out.widths:
                out.widths.append(width)
            out.device.append(d)
            out.precision.append(precision_index[pid])
            out.peak.append(device.peak(pid))
            out.width.append(out.widths.index(width))
    return out


def _float(value: Fraction) -> float:
    """`float(value)`, correctly rounded, without the `numbers.Rational` detour."""
    n, d = value.numerator, value.denominator
    return float(n) if d == 1 else n / d


def _floats(rows: Sequence[dict[str, Fraction]]) -> Floats:
    """(rows, 3) float64 per level of `LEVELS`, NaN where a row does not give the level."""
    nan = float("nan")
    table = [[_float(row[lv]) if lv in row else nan for lv in LEVELS] for row in rows]
    return np.array(table, dtype=np.float64).reshape(len(rows), len(LEVELS))


def bulk_compile(
    catalog: Catalog,
    *,
    devices: Iterable[str] | None = None,
    cases: Iterable[str] | None = None,
    precisions: Iterable[str] | None = None,
    declared_only: bool = False,
) -> ResultTable:
    """`compile_catalog(...).select(...)` as columns: the same cells, in the same order.

    Raises what the exact compiler raises when a formula cannot be evaluated. Does not
    produce diagnostics (measured rates above the roofline): `compile_catalog` does.
    """
    want_cases = _select(cases)
    pairs = _pairs(catalog, _select(devices), _select(precisions))
    selected: list[tuple[Kernel, list[Case]]] = []
    chosen: list[Case] = []
    for kernel in catalog.kernels.values():
        picked = [c for c in kernel.cases if want_cases is None or c.id in want_cases]
        if picked and pairs.device:
            selected.append((kernel, picked))
            chosen.extend(picked)
    flops_x, bytes_x, kernel_of = _case_tables(selected, pairs.widths)
    exact = _Exact(
        flops_x,
        bytes_x,
        kernel_of,
        np.array([_float(v) for v in flops_x], dtype=np.float64),
        _floats(bytes_x),
        np.array(pairs.device, dtype=np.int32),
        np.array(pairs.precision, dtype=np.int32),
        pairs.peak,
        np.array([_float(p) for p in pairs.peak], dtype=np.float64),
        pairs.bandwidths,
        _floats(pairs.bandwidths),
    )
    n_cases, n_pairs, n_widths = len(chosen), len(pairs.device), max(len(pairs.widths), 1)
    width_of = np.array(pairs.width, dtype=np.int32)
    # Cells are the (case, pair) product, case-major: cell = case * n_pairs + pair, and the
    # cell's row of the (case, width) tables is case * n_widths + width_of[pair].
    cw = (np.arange(n_cases, dtype=np.int32)[:, None] * n_widths + width_of[None, :]).ravel()
    dp = np.tile(np.arange(n_pairs, dtype=np.int32), n_cases)
    n = len(cw)
    columns: dict[str, Any] = {
        "limited_by": np.zeros(n, dtype=np.int8),
        "attainable": np.empty(n),
        "share_of_peak": np.empty(n),
        "time": np.empty(n),
        "bandwidth_sweep": np.empty((n, len(SWEEP))),
        "peak_sweep": np.empty((n, len(SWEEP))),
        "measured": np.full(n, np.nan),
    }
    _measured_rates(catalog, exact, pairs, chosen, columns["measured"])
    _roofline(exact, cw, dp, n_pairs, columns)
    columns["efficiency"] = columns["measured"] / columns["attainable"]

    case_index = {c: i for i, c in enumerate(catalog.cases)}
    precision_index = {p: i for i, p in enumerate(catalog.precisions)}
    case_of = np.array([case_index[c.id] for c in chosen], dtype=np.int32)
    declared_precision = np.array([precision_index.get(c.precision, -1) for c in chosen])
    declared = (exact.dp_precision[None, :] == declared_precision[:, None]).ravel()
    columns.update(
        case=np.repeat(case_of, n_pairs),
        device=np.tile(exact.dp_device, n_cases),
        precision=np.tile(exact.dp_precision, n_cases),
        declared=declared,
        _cw=cw,
        _dp=dp,
    )
    if declared_only:
        columns = {name: column[declared] for name, column in columns.items()}
    return ResultTable(
        catalog,
        tuple(catalog.cases),
        tuple(catalog.devices),
        tuple(catalog.precisions),
        _exact=exact,
        **columns,
    )


_BLOCK = 1 << 16  # cells computed at a time: the temporaries stay in the CPU's caches


def _roofline(exact: _Exact, cw: Ints, dp: Ints, n_pairs: int, out: dict[str, Any]) -> None:
    """Fill the output columns block by block of whole cases (cells are case-major)."""
    # Each level's line is intensity × bandwidth, +inf where the level is no ceiling.
    intensity = np.where(np.isnan(exact.bytes_f), np.inf, exact.flops_f[:, None] / exact.bytes_f)
    bandwidth = np.where(np.isnan(exact.dev_bw_f), np.inf, exact.dev_bw_f)[exact.dp_device]
    levels = [
        li
        for li in range(len(LEVELS))
        if not (np.isinf(intensity[:, li]).all() or np.isinf(bandwidth[:, li]).all())
    ]  # a level no kernel or no device gives is never a ceiling
    per_block = max(1, _BLOCK // max(n_pairs, 1)) * n_pairs
    n_blocks = -(-len(cw) // per_block) if len(cw) else 0
    repeats = min(per_block // max(n_pairs, 1), len(cw) // max(n_pairs, 1))
    peak_tiled = np.tile(exact.dp_peak_f, repeats)
    bandwidth_tiled = {li: np.tile(bandwidth[:, li], repeats) for li in levels}
    intensity_of = {li: np.ascontiguousarray(intensity[:, li]) for li in levels}
    code, attainable = out["limited_by"], out["attainable"]
    for b in range(n_blocks):
        rows = slice(b * per_block, min((b + 1) * per_block, len(cw)))
        size = rows.stop - rows.start
        block_cw = cw[rows]
        peak = peak_tiled[:size]
        best, bound = attainable[rows], code[rows]
        best[:] = peak
        memory = np.full(size, np.inf)
        lines = []
        for li in levels:
            line = intensity_of[li][block_cw]
            line *= bandwidth_tiled[li][:size]
            bound[line < best] = li + 1  # strict: on an exact float tie the earlier stays
            np.minimum(best, line, out=best)
            np.minimum(memory, line, out=memory)
            lines.append(line)
        # Near-ties: another ceiling c with c - lowest <= TIE_TOLERANCE × c, that is
        # c <= lowest / (1 - TIE_TOLERANCE). Those cells are decided again, exactly.
        near = best / (1 - TIE_TOLERANCE)
        close = (peak <= near).view(np.int8)
        for line in lines:
            close = close + (line <= near)
        np.minimum(peak[:, None], memory[:, None] * _SWEEP_F, out=out["bandwidth_sweep"][rows])
        np.minimum(peak[:, None] * _SWEEP_F, memory[:, None], out=out["peak_sweep"][rows])
        ambiguous = np.flatnonzero(close > 1)
        if ambiguous.size:
            _decide_exactly(
                exact,
                ambiguous + rows.start,
                cw,
                dp,
                code,
                attainable,
                out["bandwidth_sweep"],
                out["peak_sweep"],
            )
        np.divide(best, peak, out=out["share_of_peak"][rows])
        np.divide(exact.flops_f[block_cw], best, out=out["time"][rows])


def _measured_rates(
    catalog: Catalog, exact: _Exact, pairs: _Pairs, chosen: list[Case], out: Floats
) -> None:
    """Fill `out` (one value per cell) with each measured run's rate, exactly converted."""
    device_ids = list(catalog.devices)
    precision_ids = list(catalog.precisions)
    pair_of = {
        (device_ids[d], precision_ids[p]): j
        for j, (d, p) in enumerate(zip(pairs.device, pairs.precision, strict=True))
    }
    n_pairs, n_widths = len(pairs.device), max(len(pairs.widths), 1)
    for ci, case in enumerate(chosen):
        for m in case.measured:
            j = pair_of.get((m.device, m.precision))
            if j is None:
                continue
            rate = m.rate
            if rate is None and m.time is not None:
                rate = exact.flops[ci * n_widths + pairs.width[j]] / m.time
            if rate is not None:
                out[ci * n_pairs + j] = float(rate)


def _decide_exactly(
    exact: _Exact,
    cells: NDArray[np.intp],
    cw: Ints,
    dp: Ints,
    code: NDArray[np.int8],
    attainable: Floats,
    bandwidth_sweep: Floats,
    peak_sweep: Floats,
) -> None:
    """Recompute the cells whose ceilings are too close to call in float, with Fractions."""
    for i in cells.tolist():
        c, j = int(cw[i]), int(dp[i])
        peak = exact.dp_peak[j]
        flops = exact.flops[c]
        bandwidths = exact.dev_bw[int(exact.dp_device[j])]
        lines = {
            lv: flops * bandwidths[lv] / b for lv, b in exact.bytes[c].items() if lv in bandwidths
        }
        lowest = min([peak, *lines.values()])
        if peak == lowest:
            code[i] = 0
        else:
            code[i] = 1 + next(li for li, lv in enumerate(LEVELS) if lines.get(lv) == lowest)
        attainable[i] = float(lowest)
        memory = min(lines.values(), default=None)
        for k, f in enumerate(SWEEP):
            bandwidth_sweep[i, k] = float(peak if memory is None else min(peak, memory * f))
            peak_sweep[i, k] = float(peak * f if memory is None else min(peak * f, memory))


# --------------------------------------------------------------------------- writers


def _header(table: ResultTable) -> dict[str, Any]:
    """The results document without its rows, as `export.results_document` writes it."""
    catalog = table.catalog
    figures = {d.id: device_figures(d) for d in catalog.devices.values()}
    document = results_document(Compiled(catalog, figures, (), ()), [])
    if len(table):
        present = {table.device_ids[i] for i in np.unique(table.device).tolist()}
        document["devices"] = {k: v for k, v in document["devices"].items() if k in present}
    return document


def _text(value: float) -> str:
    """A float as `json.dumps` writes what `export.num` makes of it (integral -> int)."""
    return repr(int(value)) if value.is_integer() else repr(value)


_CHUNK = 1 << 15  # rows formatted per batch: columns become Python lists a batch at a time


def _batches(table: ResultTable) -> Iterator[tuple[int, int, dict[str, list[Any]]]]:
    """(start, stop, columns as lists) per batch of rows."""
    for start in range(0, len(table), _CHUNK):
        stop = min(start + _CHUNK, len(table))
        part = slice(start, stop)
        yield (
            start,
            stop,
            {
                "case": table.case[part].tolist(),
                "cw": table._cw[part].tolist(),
                "dp": table._dp[part].tolist(),
                "declared": table.declared[part].tolist(),
                "limited_by": table.limited_by[part].tolist(),
                "attainable": table.attainable[part].tolist(),
                "share_of_peak": table.share_of_peak[part].tolist(),
                "time": table.time[part].tolist(),
                "bandwidth_sweep": table.bandwidth_sweep[part].tolist(),
                "peak_sweep": table.peak_sweep[part].tolist(),
                "measured": table.measured[part].tolist(),
                "efficiency": table.efficiency[part].tolist(),
            },
        )


def write_json(table: ResultTable, out: TextIO) -> None:
    """Write the results contract exactly as `export.to_json` lays it out, in batches.

    The text is what `json.dumps(document, indent=2, ensure_ascii=False)` gives for the
    document of `row(i)` records (a test holds it to that); the parts of a record that
    depend only on the case, the width or the (device, precision) pair are formatted
    once, the rest per row from plain lists, so a million rows stream in seconds and
    never exist as Python dicts.
    """
    document = _header(table)
    head = json.dumps(document, indent=2, ensure_ascii=False)
    tail = '"results": []\n}'
    if not len(table):
        out.write(head + "\n")
        return
    assert head.endswith(tail)
    out.write(head[: -len(tail)] + '"results": [')
    exact = table._exact
    dump = json.dumps

    def mapping(key: str, values: dict[str, float | int], indent: str) -> str:
        if not values:
            return f'{indent}"{key}": {{}}'
        inner = ",".join(f"\n{indent}  {dump(k)}: {dump(v)}" for k, v in values.items())
        return f'{indent}"{key}": {{{inner}\n{indent}}}'

    pad = "      "
    cases = [f'{pad}"case": {dump(c, ensure_ascii=False)},\n' for c in table.case_ids]
    kernels = [f'{pad}"kernel": {dump(k, ensure_ascii=False)},\n' for k in exact.kernel_of]
    counts = [
        f'{pad}"flops": {dump(exact.flops_json[cw])},\n'
        + mapping("bytes", exact.bytes_json[cw], pad)
        + ",\n"
        + mapping(
            "intensity", {lv: exact.intensity_json(cw, lv) for lv in exact.levels_of[cw]}, pad
        )
        + ",\n"
        for cw in range(len(exact.flops))
    ]
    pairs = [
        f'{pad}"device": {dump(table.device_ids[d], ensure_ascii=False)},\n'
        f'{pad}"precision": {dump(table.precision_ids[p], ensure_ascii=False)},\n'
        for d, p in zip(exact.dp_device.tolist(), exact.dp_precision.tolist(), strict=True)
    ]
    bounds = [f'{pad}"limited_by": "{name}",\n' for name in LIMITED_BY]
    declared = (f'{pad}"declared": false,\n', f'{pad}"declared": true,\n')
    p8 = pad + "  "

    def sweep(key: str) -> str:
        inner = ",".join(f"\n{p8}{dump(k)}: %s" for k in SWEEP_KEYS)
        return f'{pad}"{key}": {{{inner}\n{pad}}},\n'

    # One %-template per record: the pre-formatted chunks, then the per-row numbers.
    record = (
        "%s    {\n%s%s%s%s%s"
        f'{pad}"attainable": %s,\n'
        "%s"
        f'{pad}"share_of_peak": %s,\n'
        f'{pad}"time": %s,\n'
        + sweep("bandwidth_sweep")
        + sweep("peak_sweep")
        + f'{pad}"measured": %s,\n'
        f'{pad}"efficiency": %s\n'
        "    }"
    )
    text = _text
    separator = "\n"
    for _start, _stop, col in _batches(table):
        chunk: list[str] = []
        for i, case in enumerate(col["case"]):
            cw = col["cw"][i]
            measured = col["measured"][i]
            efficiency = col["efficiency"][i]
            chunk.append(
                record
                % (
                    separator,
                    cases[case],
                    kernels[cw],
                    pairs[col["dp"][i]],
                    declared[col["declared"][i]],
                    counts[cw],
                    text(col["attainable"][i]),
                    bounds[col["limited_by"][i]],
                    text(col["share_of_peak"][i]),
                    text(col["time"][i]),
                    *map(text, col["bandwidth_sweep"][i]),
                    *map(text, col["peak_sweep"][i]),
                    "null" if measured != measured else text(measured),
                    "null" if efficiency != efficiency else text(efficiency),
                )
            )
            separator = ",\n"
        out.write("".join(chunk))
    out.write("\n  ]\n}\n")


def _csv_field(text: str) -> str:
    """One field as `csv.writer` writes it (quoted only when it must be)."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow([text])
    return buffer.getvalue()


def write_csv(table: ResultTable, out: TextIO) -> None:
    """Write the rows as `export.to_csv` does (units in the headers, empty where absent).

    As in `write_json`, what depends only on the case, the width or the (device,
    precision) pair is formatted once.
    """
    exact = table._exact
    csv.writer(out, lineterminator="\n").writerow(CSV_COLUMNS)

    def cell(value: float | int | None) -> str:
        return "" if value is None else repr(value)

    cases = [_csv_field(c) for c in table.case_ids]
    kernels = [_csv_field(k) for k in exact.kernel_of]
    counts = [
        ",".join(
            [cell(exact.flops_json[cw])]
            + [cell(exact.bytes_json[cw].get(lv)) for lv in LEVELS]
            + [cell(exact.intensity_json(cw, lv)) if lv in exact.bytes[cw] else "" for lv in LEVELS]
        )
        for cw in range(len(exact.flops))
    ]
    pairs, peaks = [], []
    for j, (d, p) in enumerate(
        zip(exact.dp_device.tolist(), exact.dp_precision.tolist(), strict=True)
    ):
        pairs.append(_csv_field(table.device_ids[d]) + "," + _csv_field(table.precision_ids[p]))
        peaks.append(cell(num(exact.dp_peak[j])))
    # The bandwidth cells: the levels both the kernel (of the cw row) and the device give.
    bandwidths: dict[tuple[tuple[str, ...], int], str] = {}

    def bandwidth_cells(cw: int, j: int) -> str:
        key = (exact.levels_of[cw], j)
        text = bandwidths.get(key)
        if text is None:
            given = exact.dev_bw[int(exact.dp_device[j])]
            text = bandwidths[key] = ",".join(
                cell(num(given[lv])) if lv in key[0] and lv in given else "" for lv in LEVELS
            )
        return text

    declared = ("false", "true")
    text = _text
    for _start, _stop, col in _batches(table):
        lines = []
        for i, case in enumerate(col["case"]):
            cw, j = col["cw"][i], col["dp"][i]
            measured = col["measured"][i]
            efficiency = col["efficiency"][i]
            lines.append(
                ",".join(
                    [
                        cases[case],
                        kernels[cw],
                        pairs[j],
                        declared[col["declared"][i]],
                        counts[cw],
                        peaks[j],
                        bandwidth_cells(cw, j),
                        text(col["attainable"][i]),
                        LIMITED_BY[col["limited_by"][i]],
                        text(col["share_of_peak"][i]),
                        text(col["time"][i]),
                        *map(text, col["bandwidth_sweep"][i]),
                        *map(text, col["peak_sweep"][i]),
                        "" if measured != measured else text(measured),
                        "" if efficiency != efficiency else text(efficiency),
                    ]
                )
            )
        lines.append("")
        out.write("\n".join(lines))
