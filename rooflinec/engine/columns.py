"""Every cell's float outputs as numpy columns: one fixed computation per cell.

The exact counts (`rooflinec.engine.compiler.Counts`) are converted to float64 once each,
correctly rounded: operations per case and width, intensity per case, width and level
(the exact quotient, rounded once), sustained peak per (device, precision), bandwidth
per device and level. Each cell then takes the same steps, element by element (numpy's
arithmetic is IEEE per element, so a cell's value does not depend on the block or the
other cells it is computed with):

    ceiling[level] = flops × bandwidth[level] / bytes[level]   (+inf where no ceiling)
    memory         = min over levels of ceiling
    floor          = flops / (launches × latency)         (+inf where no latency floor)
    attainable     = min(peak, memory, floor)
    share          = 1 (compute), flops × bandwidth / (bytes × peak) (a level)
    time           = flops / peak (compute), bytes / bandwidth (a level)
    bandwidth_sweep[f] = min(peak, memory × f, floor);  peak_sweep[f] = min(peak × f, memory, floor)

Every one of those is the correctly rounded float64 of its exact value, never a float
computed from rounded floats. Which level is lowest is decided on intensity × bandwidth
(as fast as it gets, and far within `TIE_TOLERANCE` of the exact ceiling); that level's
ceiling, intensity × bandwidth with the intensity an exact quotient (flops × bandwidth
exceeds 2^53 in almost every cell), and a level-bound cell's share, intensity ×
(bandwidth / peak), are then rounded by `rooflinec.engine.rounding.nearest_product`,
which decides in numpy from each factor's float and tail (made once per row and per
pair); the min of correctly rounded values is the correctly rounded min, and the sweep
factors are powers of two. A cell it cannot decide (a count or figure that is not a
float exactly, a product within 2^-85 of a midpoint) takes all its values from the exact
view and is marked in `Columns.rounded`; efficiency (measured cells only) is always
exact.

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
from rooflinec.engine.exact import exactly_float, fraction_float, quotient_float
from rooflinec.engine.rounding import in_range, nearest_product, quotient_tail, split
from rooflinec.engine.terms import LATENCY, LIMITED_BY, SWEEP, SWEEP_KEYS

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from rooflinec.engine.cells import Counts
    from rooflinec.formulas.vectorised import Floats, Ints

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
    rounded: NDArray[np.bool_]  # rounded from the exact values (numpy could not decide)
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


_float = fraction_float
_quotient = quotient_float


def _floats(values: list[Fraction | None]) -> tuple[Floats, NDArray[np.bool_]]:
    """Values as float64 (NaN for None), and where each is exactly its float."""
    out = np.array([np.nan if v is None else _float(v) for v in values], dtype=np.float64)
    exact = np.array([v is not None and exactly_float(v) for v in values], dtype=np.bool_)
    return out, exact


@dataclass(frozen=True, eq=False)
class _Inputs:
    """The exact inputs as float64 tables, each with where it is its float exactly."""

    flops: Floats  # per (case, width)
    flops_exact: NDArray[np.bool_]
    traffic: Floats  # per (case, width), (rows, levels); NaN where not given
    traffic_exact: NDArray[np.bool_]
    peak: Floats  # per pair
    peak_exact: NDArray[np.bool_]
    bandwidth: Floats  # per pair, (pairs, levels); NaN where not given
    bandwidth_exact: NDArray[np.bool_]


def _inputs(counts: Counts) -> _Inputs:
    c = counts
    flops, flops_exact = _floats(list(c.flops))
    traffic, traffic_exact = _floats([b.get(lv) for b in c.bytes for lv in LEVELS])
    peak, peak_exact = _floats(list(c.pair_peak))
    bandwidth, bandwidth_exact = _floats(
        [c.bandwidths[d].get(lv) for d in c.pair_device for lv in LEVELS]
    )
    shape_rows, shape_pairs = (len(c.flops), len(LEVELS)), (len(c.pair_device), len(LEVELS))
    return _Inputs(
        flops,
        flops_exact,
        traffic.reshape(shape_rows),
        traffic_exact.reshape(shape_rows),
        peak,
        peak_exact,
        bandwidth.reshape(shape_pairs),
        bandwidth_exact.reshape(shape_pairs),
    )


def compute_columns(counts: Counts) -> Columns:
    """The float outputs of every cell of `counts`."""
    c = counts
    given = _inputs(counts)
    flops = given.flops
    intensity = _intensity(counts, given)
    n_cases, n_pairs, n_widths = len(c.cases), len(c.pair_device), max(len(c.widths), 1)
    width_of = np.array(c.pair_width, dtype=np.int64)
    count_row = (np.arange(n_cases, dtype=np.int64)[:, None] * n_widths + width_of[None, :]).ravel()
    pair = np.tile(np.arange(n_pairs, dtype=np.int64), n_cases)
    n = len(count_row)
    out: dict[str, Any] = {
        "exact": np.zeros(n, dtype=np.bool_),
        "rounded": np.zeros(n, dtype=np.bool_),
        "memory": np.empty(n),
        "floor": _floor_rates(counts, flops, count_row, n_pairs),
        "limited_by": np.zeros(n, dtype=np.int8),
        "attainable": np.empty(n),
        "share_of_peak": np.empty(n),
        "time": np.empty(n),
        "bandwidth_sweep": np.empty((n, len(SWEEP))),
        "peak_sweep": np.empty((n, len(SWEEP))),
        "measured": np.full(n, np.nan),
        "efficiency": np.full(n, np.nan),
    }
    _roofline(counts, given, intensity, count_row, n_pairs, out)
    for cell, rate in c.measured.items():
        out["measured"][cell] = _float(rate)
        out["efficiency"][cell] = _quotient(rate, counts.result_at(cell).attainable)
    return Columns(count_row, pair, flops, intensity, given.peak, **out)


def _intensity(counts: Counts, given: _Inputs) -> Floats:
    """Operations per byte per (case, width) row and level, correctly rounded (NaN where
    the kernel gives no traffic): one division where both counts are floats exactly
    (IEEE division rounds correctly), the exact quotient elsewhere."""
    with np.errstate(all="ignore"):
        out: Floats = given.flops[:, None] / given.traffic
    inexact = ~(given.flops_exact[:, None] & given.traffic_exact) & ~np.isnan(given.traffic)
    for row, li in zip(*(axis.tolist() for axis in np.nonzero(inexact)), strict=True):
        out[row, li] = _quotient(counts.flops[row], counts.bytes[row][LEVELS[li]])
    return out


def _floor_rates(counts: Counts, flops: Floats, count_row: Ints, n_pairs: int) -> Floats:
    """Each cell's latency-floor rate, flops / (launches × latency); +inf without a floor."""
    c = counts
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


# Where each part sits in the rows of `_row_parts` and `_pair_parts`.
_INTENSITY_HI, _INTENSITY_LO, _INTENSITY_TAIL, _BYTES = range(4)
_BANDWIDTH_HI, _BANDWIDTH_LO, _RATIO_HI, _RATIO_LO, _RATIO_TAIL = range(5)


def _row_parts(given: _Inputs, intensity: Floats, levels: list[int]) -> Floats:
    """Per (case, width) row and level (row-major, in `levels` order), what rounding a
    ceiling reads: the intensity split in halves (`split`), its tail (flops / bytes −
    intensity, correctly rounded: `quotient_tail`) and the bytes. The first part is NaN
    where the row's counts at that level are not floats exactly or out of range: those
    cells are left undecided, to the exact view."""
    ratio = intensity[:, levels]
    traffic = given.traffic[:, levels]
    flops = given.flops[:, None]
    ok = given.flops_exact[:, None] & given.traffic_exact[:, levels]
    ok &= in_range(flops) & in_range(traffic) & in_range(ratio)
    table = np.empty((len(flops), len(levels), 4))
    with np.errstate(all="ignore"):
        hi, lo = split(ratio)
        table[..., _INTENSITY_TAIL] = quotient_tail(flops, traffic, ratio)
    hi[~ok] = np.nan
    table[..., _INTENSITY_HI], table[..., _INTENSITY_LO] = hi, lo
    table[..., _BYTES] = traffic
    return table.reshape(-1, 4)


def _pair_parts(given: _Inputs, levels: list[int]) -> Floats:
    """Per (device, precision) pair and level (pair-major, in `levels` order): the
    bandwidth split in halves, and bandwidth / peak (what a level-bound cell's share of
    peak is intensity times) split in halves with its tail. A first half is NaN where
    its figures are not floats exactly or out of range: those cells go exact."""
    bandwidth = given.bandwidth[:, levels]
    peak = given.peak[:, None]
    bandwidth_ok = given.bandwidth_exact[:, levels] & in_range(bandwidth)
    table = np.empty((len(peak), len(levels), 5))
    with np.errstate(all="ignore"):
        ratio = bandwidth / peak
        ratio_ok = bandwidth_ok & given.peak_exact[:, None] & in_range(peak) & in_range(ratio)
        hi, lo = split(bandwidth)
        ratio_hi, ratio_lo = split(ratio)
        table[..., _RATIO_TAIL] = quotient_tail(bandwidth, peak, ratio)
    hi[~bandwidth_ok] = np.nan
    ratio_hi[~ratio_ok] = np.nan
    table[..., _BANDWIDTH_HI], table[..., _BANDWIDTH_LO] = hi, lo
    table[..., _RATIO_HI], table[..., _RATIO_LO] = ratio_hi, ratio_lo
    return table.reshape(-1, 5)


def _roofline(
    counts: Counts,
    given: _Inputs,
    intensity: Floats,
    count_row: Ints,
    n_pairs: int,
    out: dict[str, Any],
) -> None:
    """Fill the output columns block by block of whole cases (cells are case-major).

    The decisions (which level is lowest, which ceiling limits) are made on intensity ×
    bandwidth, rounded twice but far closer than `TIE_TOLERANCE`: where they could
    differ from the exact ones, the cell is a near tie and goes exact. The values are
    then rounded once, for the lowest level only: the ceiling is intensity × bandwidth
    and the share of peak intensity × (bandwidth / peak), each factor carried as a float
    and its tail (`_row_parts`, `_pair_parts`, made once per row and pair), each product
    rounded by `nearest_product`."""
    flops = given.flops
    lines_of = np.where(np.isnan(intensity), np.inf, intensity)
    levels = [
        li
        for li in range(len(LEVELS))
        if not (np.isnan(given.traffic[:, li]).all() or np.isnan(given.bandwidth[:, li]).all())
    ]  # a level no kernel or no device gives is never a ceiling
    n_levels = max(len(levels), 1)
    if levels:
        row_parts, pair_parts = _row_parts(given, intensity, levels), _pair_parts(given, levels)
    else:  # no level is a ceiling anywhere (collectives alone): the parts are never read
        row_parts, pair_parts = np.full((len(flops), 4), np.nan), np.full((n_pairs, 5), np.nan)
    code_of = np.array([li + 1 for li in levels] or [0], dtype=np.int8)  # into LIMITED_BY
    per_block = max(1, _BLOCK // max(n_pairs, 1)) * n_pairs
    n_blocks = -(-len(count_row) // per_block) if len(count_row) else 0
    repeats = min(per_block // max(n_pairs, 1), len(count_row) // max(n_pairs, 1))
    peak_tiled = np.tile(given.peak, repeats)
    # Rows of `pair_parts` of each cell of a block at the first level.
    pair_row = np.tile(np.arange(n_pairs, dtype=np.int64) * n_levels, repeats)
    # Cells whose time (flops / peak) is not one division of exact floats go exact.
    inexact_time = not (given.flops_exact.all() and given.peak_exact.all())
    peak_exact = np.tile(given.peak_exact, repeats)
    intensity_of = {li: np.ascontiguousarray(lines_of[:, li]) for li in levels}
    # A level a device does not give is no ceiling: +inf, never NaN, in the comparisons.
    bandwidth_line = {
        li: np.tile(np.where(np.isnan(bw), np.inf, bw), repeats)
        for li, bw in ((li, given.bandwidth[:, li]) for li in levels)
    }
    code, attainable = out["limited_by"], out["attainable"]
    has_floor = not np.isinf(out["floor"]).all()
    for b in range(n_blocks):
        rows = slice(b * per_block, min((b + 1) * per_block, len(count_row)))
        size = rows.stop - rows.start
        block_rows = count_row[rows]
        peak = peak_tiled[:size]
        cell_flops = flops[block_rows]
        best, bound = attainable[rows], code[rows]
        memory = out["memory"][rows]
        memory[:] = np.inf
        level = np.zeros(size, dtype=np.int64)  # the lowest level, as its place in `levels`
        lines = []
        for k, li in enumerate(levels):
            line = intensity_of[li][block_rows]
            line *= bandwidth_line[li][:size]
            if k:
                np.copyto(level, k, where=line < memory)  # strict: on a tie the earlier stays
            np.minimum(memory, line, out=memory)
            lines.append(line)
        has_memory = memory < np.inf
        # The lowest level's ceiling, rounded once: intensity × bandwidth. Cells whose
        # counts or figures are no floats exactly, or that numpy cannot round, go exact.
        parts = row_parts.take(block_rows * n_levels + level if n_levels > 1 else block_rows, 0)
        figures = pair_parts.take(pair_row[:size] + level, 0)
        intensity_hi, intensity_lo = parts[:, _INTENSITY_HI], parts[:, _INTENSITY_LO]
        intensity_tail, bytes_low = parts[:, _INTENSITY_TAIL], parts[:, _BYTES]
        bandwidth_hi, bandwidth_lo = figures[:, _BANDWIDTH_HI], figures[:, _BANDWIDTH_LO]
        rounded, decided = nearest_product(
            memory, intensity_hi, intensity_lo, intensity_tail, bandwidth_hi, bandwidth_lo
        )
        if has_memory.all():
            memory[:] = rounded
            undecided = ~decided
        else:
            np.copyto(memory, rounded, where=has_memory)
            undecided = has_memory & ~decided
        if inexact_time:
            undecided |= ~(given.flops_exact[block_rows] & peak_exact[:size])
        best[:] = peak
        lower = memory < best  # strict: the peak wins a tie
        bound[:] = 0
        np.copyto(bound, code_of.take(level), where=lower)
        np.minimum(best, memory, out=best)
        # time: flops / peak or bytes / bandwidth, one division of exact floats each;
        # share: 1 or intensity × (bandwidth / peak).
        time, share = out["time"][rows], out["share_of_peak"][rows]
        np.divide(cell_flops, peak, out=time)
        with np.errstate(all="ignore"):
            np.copyto(time, bytes_low / (bandwidth_hi + bandwidth_lo), where=lower)
            ratio_hi, ratio_lo = figures[:, _RATIO_HI], figures[:, _RATIO_LO]
            product = (intensity_hi + intensity_lo) * (ratio_hi + ratio_lo)
        ratio, ratio_decided = nearest_product(
            product,
            intensity_hi,
            intensity_lo,
            intensity_tail,
            ratio_hi,
            ratio_lo,
            figures[:, _RATIO_TAIL],
        )
        share[:] = 1.0
        np.copyto(share, ratio, where=lower)
        undecided |= lower & ~ratio_decided
        floor = out["floor"][rows]
        if has_floor and not np.isinf(floor).all():
            _exact_floors(counts, floor, best, rows.start)
            bound[floor < best] = _LATENCY  # strict: the roofline wins a tie
            np.minimum(best, floor, out=best)
            lines.append(floor)
        # Near ties: another ceiling c with c - lowest <= TIE_TOLERANCE × c, that is
        # c <= lowest / (1 - TIE_TOLERANCE). Those cells are decided again, exactly.
        near = best / (1 - TIE_TOLERANCE)
        close = (peak <= near).view(np.int8)
        for line in lines:
            close = close + (line <= near)
        bandwidth_sweep, peak_sweep = out["bandwidth_sweep"][rows], out["peak_sweep"][rows]
        np.multiply(memory[:, None], _SWEEP_F, out=bandwidth_sweep)
        np.minimum(bandwidth_sweep, peak[:, None], out=bandwidth_sweep)
        np.multiply(peak[:, None], _SWEEP_F, out=peak_sweep)
        np.minimum(peak_sweep, memory[:, None], out=peak_sweep)
        if has_floor:
            np.minimum(bandwidth_sweep, floor[:, None], out=bandwidth_sweep)
            np.minimum(peak_sweep, floor[:, None], out=peak_sweep)
            for i in (np.flatnonzero(bound == _LATENCY) + rows.start).tolist():
                _at_floor(counts, i, out)
        for i in (np.flatnonzero(undecided) + rows.start).tolist():
            out["rounded"][i] = True
            _decide_exactly(counts, i, out)
        for i in (np.flatnonzero(close > 1) + rows.start).tolist():
            out["exact"][i] = True
            _decide_exactly(counts, i, out)


_LATENCY = LIMITED_BY.index(LATENCY)
_SWEEP_TOP = float(max(SWEEP)) * (1 + TIE_TOLERANCE)


def _exact_floors(counts: Counts, floor: Floats, roof: Floats, start: int) -> None:
    """Round the floor rate once, from the exact values, wherever it can be a cell's
    attainable rate or one of its sweep points (at most the top sweep factor times the
    roofline): flops / (launches × latency) computed in float is rounded three times,
    and a sweep's ×1 point must be the very `attainable` a held cell prints."""
    c = counts
    for k in np.flatnonzero(floor <= roof * _SWEEP_TOP).tolist():
        time = c.floor(start + k)
        if time is not None:
            floor[k] = _quotient(c.flops[c.count_row(start + k)], time)


def _at_floor(counts: Counts, cell: int, out: dict[str, Any]) -> None:
    """A cell held by the latency floor: its rate is flops / floor, its time the floor,
    its share flops / (floor × peak), each correctly rounded."""
    c = counts
    floor = c.floor(cell)
    if floor is not None:
        flops = c.flops[c.count_row(cell)]
        out["attainable"][cell] = _quotient(flops, floor)
        out["time"][cell] = _float(floor)
        peak = c.pair_peak[cell % len(c.pair_device)]
        out["share_of_peak"][cell] = _quotient(flops, floor * peak)


def _decide_exactly(counts: Counts, cell: int, out: dict[str, Any]) -> None:
    """A cell the floats cannot decide or round: its exact view gives every value."""
    result = counts.result_at(cell)
    out["limited_by"][cell] = LIMITED_BY.index(result.limited_by)
    out["attainable"][cell] = _float(result.attainable)
    out["time"][cell] = _float(result.time)
    out["share_of_peak"][cell] = _float(result.share_of_peak)
    for k, key in enumerate(SWEEP_KEYS):
        out["bandwidth_sweep"][cell, k] = _float(result.bandwidth_sweep[key])
        out["peak_sweep"][cell, k] = _float(result.peak_sweep[key])
