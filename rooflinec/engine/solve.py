"""Crossovers: over which integers of one symbol a kernel is limited by compute, by a level,
or by the device's launch-latency floor.

One symbol of a case varies over the integers `DOMAIN` (1..10^12) with the others held
at the case's shape; at every value the exact engine (`rooflinec.engine.Roof`)
says what limits the result. The answer is the runs of equal limits (`Region`s), found
without visiting every integer:

- When every formula is a polynomial in the symbol, what limits the result changes
  only where one of a few polynomials changes sign: each level's ceiling minus the peak
  (`bandwidth × flops − peak × bytes`), the difference of two levels' times
  (`bandwidth_M × bytes_L − bandwidth_L × bytes_M`), the flops and the bytes, and on a
  device with a launch floor the time at each ceiling against the floor (`flops − peak ×
  floor`, `bytes_L − bandwidth_L × floor`: latency bound where every one is negative,
  that is where the time at the roofline is below launches × latency). Their
  real roots are isolated exactly (`rooflinec.engine.solve_poly`); between the integers next
  to the roots nothing changes, so one exact evaluation stands for each run.
- With `min` and `max` around the symbol (or `ceil` and `floor` of whole numbers) the
  formulas are polynomials on runs of integers (`rooflinec.engine.solve_piecewise` finds
  where each call changes argument), and the same conditions are solved on each run.
- Otherwise (`ceil` or `floor` of a fraction, `unpicked` around the symbol, or a
  division by it) an exact integer search splits the range until exact interval bounds
  (`rooflinec.engine.solve_interval`) prove one limit for a whole piece, down to single
  integers, each evaluated exactly. Non-monotone formulas are handled alike: nothing is
  assumed of their shape.

Every boundary is then checked by evaluating the engine on both sides (b − 1 and b).
Solutions are cached per formulas, shape, symbol, peak and bandwidths.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from itertools import pairwise

from rooflinec.catalog import LEVELS
from rooflinec.engine import Roof
from rooflinec.engine.solve_interval import bounds_of, folded
from rooflinec.engine.solve_piecewise import cuts, polys_on_gaps
from rooflinec.engine.solve_poly import Poly, combine, critical_integers
from rooflinec.engine.terms import COMPUTE, LATENCY
from rooflinec.errors import RooflinecError
from rooflinec.formulas import EvaluationError, Formula
from rooflinec.formulas.tree import _Node

#: The integers a symbol is varied over.
DOMAIN = (1, 10**12)
#: Pieces the exact integer search may examine before it gives up (see `SolveError`).
SEARCH_BUDGET = 50_000
#: Regions beyond which an answer is refused as unreadable (a limit flipping at every
#: integer, as `ceil(x/2)*2` against a ridge of exactly 1 does).
MAX_REGIONS = 10_000


class SolveError(RooflinecError):
    """A crossover that cannot be given: a formula fails to evaluate in the range, or the
    answer would exceed `MAX_REGIONS` or the search `SEARCH_BUDGET`."""


@dataclass(frozen=True)
class Region:
    """Integers `start`..`end` (inclusive; `end` None: to the end of `DOMAIN`) over which
    the result is limited by `limited_by` (`compute`, a level, or `latency`)."""

    start: int
    end: int | None
    limited_by: str


@dataclass(frozen=True)
class Problem:
    """One crossover question, as exact values: hashable, so solutions are cached."""

    flops: Formula
    bytes: tuple[tuple[str, Formula], ...]  # every level the kernel gives
    shape: tuple[tuple[str, int | Fraction], ...]  # every other symbol, and `w`
    symbol: str
    peak: Fraction
    bandwidths: tuple[tuple[str, Fraction], ...]  # the levels both kernel and device give
    floor: Fraction | None = None  # launches × the device's launch latency, s; None: none


def crossover(regions: tuple[Region, ...]) -> int | None:
    """The least value from which on the result stays compute bound; None: never."""
    if regions and regions[-1].limited_by == COMPUTE:
        return regions[-1].start
    return None


def limited_by(problem: Problem, value: int) -> str:
    """What limits the result at `symbol = value`: the exact engine's answer."""
    values = {**dict(problem.shape), problem.symbol: value}
    try:
        flops = problem.flops.evaluate(values)
        counts = {level: f.evaluate(values) for level, f in problem.bytes}
        roof = Roof.of(problem.peak, dict(problem.bandwidths), problem.floor)
        return roof.bound(flops, counts).limit
    except (EvaluationError, ZeroDivisionError) as exc:
        raise SolveError(f"cannot evaluate at {problem.symbol} = {value:,}: {exc}") from exc


@lru_cache(maxsize=8192)
def solve_regions(
    problem: Problem, lo: int = DOMAIN[0], hi: int = DOMAIN[1], budget: int = SEARCH_BUDGET
) -> tuple[Region, ...]:
    """The regions of `problem` over the integers lo..hi, each boundary checked.

    The last region's `end` is None when it reaches `hi`. A search that would examine
    more than `budget` pieces stops with a `SolveError`.
    """
    runs = _root_runs(problem, lo, hi)
    if runs is None:
        runs = _search_runs(problem, lo, hi, budget)
    regions = _merge(runs)
    for before, after in pairwise(regions):
        b = after.start
        if limited_by(problem, b - 1) != before.limited_by or (
            limited_by(problem, b) != after.limited_by
        ):  # pragma: no cover - a bug in the solver, never a spec problem
            raise AssertionError(f"boundary {problem.symbol} = {b} failed its check")
    last = regions[-1]
    return (*regions[:-1], Region(last.start, None, last.limited_by))


# A run: integers start..end (inclusive) with one limit.
_Run = tuple[int, int, str]


def _merge(runs: list[_Run]) -> tuple[Region, ...]:
    out: list[Region] = []
    for start, end, limit in sorted(runs):
        if out and out[-1].limited_by == limit:
            out[-1] = Region(out[-1].start, end, limit)
        else:
            if len(out) >= MAX_REGIONS:
                raise SolveError(
                    f"more than {MAX_REGIONS:,} regions: the limit changes too often to list"
                )
            out.append(Region(start, end, limit))
    return tuple(out)


def _root_runs(problem: Problem, lo: int, hi: int) -> list[_Run] | None:
    """The runs from the roots of the conditions, on each run of integers where every
    formula is one polynomial (`cuts`); None when a formula is not piecewise polynomial."""
    values = dict(problem.shape)
    symbol = problem.symbol
    flops_tree, byte_trees = _folded(problem)
    trees = [flops_tree, *byte_trees.values()]
    points = {lo, hi}
    try:
        for tree in trees:
            found = cuts(tree, values, symbol, lo, hi)
            if found is None:
                return None
            points |= found
        critical = set(points)
        for first, last, polys in polys_on_gaps(trees, values, symbol, sorted(points)):
            if polys is None:
                critical.update(range(first, last + 1))
                continue
            flops, *counts = polys
            for poly in _conditions(problem, flops, dict(zip(byte_trees, counts, strict=True))):
                critical |= critical_integers(poly, first, last)
    except EvaluationError as exc:
        raise SolveError(f"cannot evaluate {problem.symbol} in {lo:,}..{hi:,}: {exc}") from exc
    ordered = sorted(critical)
    runs: list[_Run] = []
    for i, point in enumerate(ordered):
        runs.append((point, point, limited_by(problem, point)))
        if i + 1 < len(ordered) and ordered[i + 1] > point + 1:
            # No condition changes sign strictly between two critical integers.
            runs.append((point + 1, ordered[i + 1] - 1, limited_by(problem, point + 1)))
    return runs


def _conditions(problem: Problem, flops: Poly, counts: Mapping[str, Poly]) -> list[Poly]:
    """The polynomials whose signs decide the limit, given the formulas' polynomials."""
    polys: list[Poly] = [flops, *counts.values()]
    bw = dict(problem.bandwidths)
    for level, count in counts.items():
        if level in bw:
            polys.append(combine(bw[level], flops, -problem.peak, count))
    if problem.floor is not None:
        # The roofline's time against the floor, per ceiling: flops / peak vs floor and
        # bytes_L / bandwidth_L vs floor, multiplied out (peak, bandwidth > 0).
        one: Poly = (Fraction(1),)
        polys.append(combine(Fraction(1), flops, -problem.peak * problem.floor, one))
        for level, bandwidth in bw.items():
            polys.append(combine(Fraction(1), counts[level], -bandwidth * problem.floor, one))
    levels = list(bw)
    for i, a in enumerate(levels):
        for b in levels[i + 1 :]:
            polys.append(combine(bw[b], counts[a], -bw[a], counts[b]))
    return polys


def _search_runs(problem: Problem, lo: int, hi: int, budget: int) -> list[_Run]:
    runs: list[_Run] = []
    stack = [(lo, hi)]
    examined = 0
    while stack:
        a, b = stack.pop()
        examined += 1
        if examined > budget:
            raise SolveError(
                f"the limit of {problem.symbol} could not be resolved within "
                f"{budget:,} pieces; try a smaller shape or a formula without "
                "min, max, ceil or floor around it"
            )
        if a == b:
            runs.append((a, a, limited_by(problem, a)))
            continue
        limit = _proven(problem, a, b)
        if limit is not None:
            runs.append((a, b, limit))
            continue
        mid = (a + b) // 2
        stack.append((mid + 1, b))
        stack.append((a, mid))
    return runs


@lru_cache(maxsize=1024)
def _folded(problem: Problem) -> tuple[_Node, dict[str, _Node]]:
    """The problem's formulas with their held part worked out once (`folded`): a search
    bounds them over hundreds of ranges."""
    values = dict(problem.shape)
    symbol = problem.symbol
    trees = {level: folded(f, values, symbol) for level, f in problem.bytes}
    return folded(problem.flops, values, symbol), trees


def _proven(problem: Problem, a: int, b: int) -> str | None:
    """The one limit of every integer in [a, b] if the bounds prove it, else None.

    With flops > 0 and bytes > 0 throughout: a level's ceiling is at least the peak
    where `bandwidth × flops − peak × bytes ≥ 0`, and level L's ceiling is below level
    M's where `bandwidth_M × bytes_L − bandwidth_L × bytes_M > 0`. Ties go as in the
    engine: compute first, then the levels in order.
    """
    values = dict(problem.shape)
    symbol = problem.symbol
    flops_tree, byte_trees = _folded(problem)
    f = bounds_of(flops_tree, values, symbol, a, b)
    if f is None or f[0] <= 0:
        return None
    bw = dict(problem.bandwidths)
    by: dict[str, tuple[Fraction, Fraction]] = {}
    for level in bw:
        c = bounds_of(byte_trees[level], values, symbol, a, b)
        if c is None or c[0] <= 0:
            return None
        by[level] = c
    peak = problem.peak
    floor = problem.floor
    if floor is not None:
        # Latency bound where the time at every ceiling is below the floor (strictly: the
        # roofline wins a tie); not where the time at some ceiling reaches it.
        if f[1] < peak * floor and all(by[lv][1] < bw[lv] * floor for lv in bw):
            return LATENCY
        if not (f[0] >= peak * floor or any(by[lv][0] >= bw[lv] * floor for lv in bw)):
            return None
    margin = {
        level: (bw[level] * f[0] - peak * by[level][1], bw[level] * f[1] - peak * by[level][0])
        for level in bw
    }
    if all(m[0] >= 0 for m in margin.values()):
        return COMPUTE
    order = sorted(bw, key=LEVELS.index)
    for i, level in enumerate(order):
        if margin[level][1] >= 0:
            continue
        wins = True
        for j, other in enumerate(order):
            if other == level:
                continue
            # Lower bound of bandwidth_other × bytes_level − bandwidth_level × bytes_other.
            gap = bw[other] * by[level][0] - bw[level] * by[other][1]
            if gap < 0 or (gap == 0 and j < i):
                wins = False
                break
        if wins:
            return level
    return None
