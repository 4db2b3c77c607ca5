"""Every cell's float outputs as numpy columns: one fixed computation per cell.

The exact counts (`rooflinec.compiler.Counts`) are converted to float64 once each,
correctly rounded: operations per case and width, intensity per case, width and level
(the exact quotient, rounded once), sustained peak per (device, precision), bandwidth
per device and level. Each cell then takes the same steps, element by element (numpy's
arithmetic is IEEE per element, so a cell's value does not depend on the block or the
other cells it is computed with):

    ceiling[level] = intensity[level] × bandwidth[level]   (+inf where no ceiling)
    memory         = min over levels of ceiling
    floor          = flops / (launches × latency)         (+inf where no latency floor)
    attainable     = min(peak, memory, floor);  share = attainable / peak
    time           = flops / attainable; efficiency = measured / attainable
    bandwidth_sweep[f] = min(peak, memory × f, floor);  peak_sweep[f] = min(peak × f, memory, floor)

A cell held by the latency floor takes its attainable rate and time from the exact
values, correctly rounded: its time is launches × latency exactly as written. Wherever
the floor can be a sweep point it is that same correctly rounded rate, so a held cell's
×1 sweeps are its attainable rate exactly.

`limited_by` is a decision and must be exact: wherever another ceiling lies within a
relative `TIE_TOLERANCE` of the lowest, the cell is decided again with the exact view
(`Compiled.result_at`, a tie goes to compute), and its attainable rate and sweeps are
the exact values, correctly rounded. Which cells those are depends only on the cell.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from rooflinec.catalog import LEVELS
from rooflinec.terms import LATENCY, LIMITED_BY, SWEEP, SWEEP_KEYS

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from rooflinec.compiler import Compiled

    Floats = NDArray[np.float64]
    Ints = NDArray[np.int64]

__all__ = ["TIE_TOLERANCE", "Columns", "compute_columns"]

#: Ceilings closer than this (relative) in float are compared again exactly.
TIE_TOLERANCE = 1e-9

_SWEEP_F = np.array([float(f) for f in SWEEP])  # powers of two: scaling by them is exact
_BLOCK = 1 << 16  # cells computed at a time: the temporaries stay in the CPU's caches


@dataclass(frozen=True, eq=False)
class Columns:
    """One row per cell of `Compiled.counts`, in cell order.

    `count_row` indexes the per-(case, width) tables `flops` and `intensity` (NaN where
    the kernel gives no traffic at a level); `pair` the (device, precision) pairs.
    Rates in OP/s, times in s; `measured` and `efficiency` are NaN without a run.
    """

    count_row: Ints
    pair: Ints
    flops: Floats  # per (case, width)
    intensity: Floats  # per (case, width), (rows, levels)
    peak: Floats  # per pair
    exact: NDArray[np.bool_]  # decided with exact arithmetic (a near tie)
    memory: Floats  # the lowest memory ceiling; +inf where no level is a ceiling
    floor: Floats  # the latency floor's rate; +inf where the device has no floor
    limited_by: NDArray[np.int8]  # index into LIMITED_BY
    attainable: Floats
    share_of_peak: Floats
    time: Floats
    bandwidth_sweep: Floats  # (cells, 4): bandwidth × 0.5, 1, 2, 4
    peak_sweep: Floats  # (cells, 4): peak × 0.5, 1, 2, 4
    measured: Floats
    efficiency: Floats

    def __len__(self) -> int:
        return int(self.count_row.shape[0])


def _float(value: Fraction) -> float:
    """`float(value)`, correctly rounded, without the `numbers.Rational` detour."""
    n, d = value.numerator, value.denominator
    return float(n) if d == 1 else n / d


def _quotient(a: Fraction, b: Fraction) -> float:
    """`float(a / b)`, correctly rounded (int / int is), without building the Fraction."""
    return (a.numerator * b.denominator) / (a.denominator * b.numerator)


def compute_columns(compiled: Compiled) -> Columns:
    """The float outputs of every cell of `compiled`."""
    c = compiled.counts
    nan = float("nan")
    flops = np.array([_float(f) for f in c.flops], dtype=np.float64)
    intensity = np.array(
        [
            [_quotient(f, b[lv]) if lv in b else nan for lv in LEVELS]
            for f, b in zip(c.flops, c.bytes, strict=True)
        ],
        dtype=np.float64,
    ).reshape(len(c.flops), len(LEVELS))
    peak = np.array([_float(p) for p in c.pair_peak], dtype=np.float64)
    bandwidth = np.array(
        [
            [_float(c.bandwidths[d][lv]) if lv in c.bandwidths[d] else nan for lv in LEVELS]
            for d in c.pair_device
        ],
        dtype=np.float64,
    ).reshape(len(c.pair_device), len(LEVELS))
    n_cases, n_pairs, n_widths = len(c.cases), len(c.pair_device), max(len(c.widths), 1)
    width_of = np.array(c.pair_width, dtype=np.int64)
    count_row = (np.arange(n_cases, dtype=np.int64)[:, None] * n_widths + width_of[None, :]).ravel()
    pair = np.tile(np.arange(n_pairs, dtype=np.int64), n_cases)
    n = len(count_row)
    out: dict[str, Any] = {
        "exact": np.zeros(n, dtype=np.bool_),
        "memory": np.empty(n),
        "floor": _floor_rates(compiled, flops, count_row, n_pairs),
        "limited_by": np.zeros(n, dtype=np.int8),
        "attainable": np.empty(n),
        "share_of_peak": np.empty(n),
        "time": np.empty(n),
        "bandwidth_sweep": np.empty((n, len(SWEEP))),
        "peak_sweep": np.empty((n, len(SWEEP))),
        "measured": np.full(n, np.nan),
    }
    for cell, rate in c.measured.items():
        out["measured"][cell] = _float(rate)
    _roofline(compiled, flops, intensity, peak, bandwidth, count_row, n_pairs, out)
    out["efficiency"] = out["measured"] / out["attainable"]
    return Columns(count_row, pair, flops, intensity, peak, **out)


def _floor_rates(compiled: Compiled, flops: Floats, count_row: Ints, n_pairs: int) -> Floats:
    """Each cell's latency-floor rate, flops / (launches × latency); +inf without a floor."""
    c = compiled.counts
    n = len(count_row)
    latency = np.array(
        [_float(c.latencies[d]) if d in c.latencies else np.inf for d in c.pair_device],
        dtype=np.float64,
    )
    if n == 0 or np.isinf(latency).all():
        return np.full(n, np.inf)
    launches = np.array([case.launches for case in c.cases], dtype=np.float64)
    time = (launches[:, None] * latency[None, :]).ravel()
    rates = np.full(n, np.inf)
    held = np.isfinite(time)
    rates[held] = flops[count_row][held] / time[held]
    return rates


def _roofline(
    compiled: Compiled,
    flops: Floats,
    intensity: Floats,
    peak_of: Floats,
    bandwidth_of: Floats,
    count_row: Ints,
    n_pairs: int,
    out: dict[str, Any],
) -> None:
    """Fill the output columns block by block of whole cases (cells are case-major)."""
    lines_of = np.where(np.isnan(intensity), np.inf, intensity)
    bandwidth = np.where(np.isnan(bandwidth_of), np.inf, bandwidth_of)
    levels = [
        li
        for li in range(len(LEVELS))
        if not (np.isinf(lines_of[:, li]).all() or np.isinf(bandwidth[:, li]).all())
    ]  # a level no kernel or no device gives is never a ceiling
    per_block = max(1, _BLOCK // max(n_pairs, 1)) * n_pairs
    n_blocks = -(-len(count_row) // per_block) if len(count_row) else 0
    repeats = min(per_block // max(n_pairs, 1), len(count_row) // max(n_pairs, 1))
    peak_tiled = np.tile(peak_of, repeats)
    bandwidth_tiled = {li: np.tile(bandwidth[:, li], repeats) for li in levels}
    intensity_of = {li: np.ascontiguousarray(lines_of[:, li]) for li in levels}
    code, attainable = out["limited_by"], out["attainable"]
    for b in range(n_blocks):
        rows = slice(b * per_block, min((b + 1) * per_block, len(count_row)))
        size = rows.stop - rows.start
        block_rows = count_row[rows]
        peak = peak_tiled[:size]
        best, bound = attainable[rows], code[rows]
        best[:] = peak
        memory = out["memory"][rows]
        memory[:] = np.inf
        lines = []
        for li in levels:
            line = intensity_of[li][block_rows]
            line *= bandwidth_tiled[li][:size]
            bound[line < best] = li + 1  # strict: on an exact float tie the earlier stays
            np.minimum(best, line, out=best)
            np.minimum(memory, line, out=memory)
            lines.append(line)
        floor = out["floor"][rows]
        if not np.isinf(floor).all():
            _exact_floors(compiled, floor, best, rows.start)
            bound[floor < best] = _LATENCY  # strict: the roofline wins a tie
            np.minimum(best, floor, out=best)
            lines.append(floor)
        # Near ties: another ceiling c with c - lowest <= TIE_TOLERANCE × c, that is
        # c <= lowest / (1 - TIE_TOLERANCE). Those cells are decided again, exactly.
        near = best / (1 - TIE_TOLERANCE)
        close = (peak <= near).view(np.int8)
        for line in lines:
            close = close + (line <= near)
        np.minimum(peak[:, None], memory[:, None] * _SWEEP_F, out=out["bandwidth_sweep"][rows])
        np.minimum(peak[:, None] * _SWEEP_F, memory[:, None], out=out["peak_sweep"][rows])
        np.minimum(out["bandwidth_sweep"][rows], floor[:, None], out=out["bandwidth_sweep"][rows])
        np.minimum(out["peak_sweep"][rows], floor[:, None], out=out["peak_sweep"][rows])
        for i in (np.flatnonzero(close > 1) + rows.start).tolist():
            _decide_exactly(compiled, i, out)
        held = (np.flatnonzero(bound == _LATENCY) + rows.start).tolist()
        for i in held:
            _at_floor(compiled, i, out)
        np.divide(best, peak, out=out["share_of_peak"][rows])
        np.divide(flops[block_rows], best, out=out["time"][rows])
        for i in held:
            out["time"][i] = _float(compiled.counts.floor(i) or Fraction(0))


_LATENCY = LIMITED_BY.index(LATENCY)
_SWEEP_TOP = float(max(SWEEP)) * (1 + TIE_TOLERANCE)


def _exact_floors(compiled: Compiled, floor: Floats, roof: Floats, start: int) -> None:
    """Round the floor rate once, from the exact values, wherever it can be a cell's
    attainable rate or one of its sweep points (at most the top sweep factor times the
    roofline): flops / (launches × latency) computed in float is rounded three times,
    and a sweep's ×1 point must be the very `attainable` a held cell prints."""
    c = compiled.counts
    for k in np.flatnonzero(floor <= roof * _SWEEP_TOP).tolist():
        time = c.floor(start + k)
        if time is not None:
            floor[k] = _quotient(c.flops[c.count_row(start + k)], time)


def _at_floor(compiled: Compiled, cell: int, out: dict[str, Any]) -> None:
    """A cell held by the latency floor: its rate is flops / floor, correctly rounded."""
    floor = compiled.counts.floor(cell)
    if floor is not None:
        c = compiled.counts
        out["attainable"][cell] = _quotient(c.flops[c.count_row(cell)], floor)


def _decide_exactly(compiled: Compiled, cell: int, out: dict[str, Any]) -> None:
    """A cell whose ceilings are too close to call in float: its exact view decides."""
    result = compiled.result_at(cell)
    out["exact"][cell] = True
    out["limited_by"][cell] = LIMITED_BY.index(result.limited_by)
    out["attainable"][cell] = _float(result.attainable)
    for k, key in enumerate(SWEEP_KEYS):
        out["bandwidth_sweep"][cell, k] = _float(result.bandwidth_sweep[key])
        out["peak_sweep"][cell, k] = _float(result.peak_sweep[key])
