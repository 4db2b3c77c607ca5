"""A count positive over a whole grid, proved without evaluating every shape.

`compile` and `build` evaluate every shape of a grid case and refuse one whose
operation or byte count is not positive (or implausibly large); `check`, the CI gate,
must refuse the same grids without evaluating 10^9 shapes. `first_bad_shape` answers
for one formula at one width, exactly:

- a grid of at most `EXHAUSTIVE_SHAPES` shapes is evaluated shape by shape when the
  proof below is not conclusive (the answer is then always given);
- otherwise boxes of shapes (a range of value indices per axis) are examined, smallest
  first shape first:
  1. exact interval bounds of the formula over the box (`solve_interval.box_bounds`)
     prove every shape good (lowest > 0, highest <= the limit) or every shape bad;
  2. a box of at most `LEAF_SHAPES` shapes is evaluated shape by shape;
  3. a box with one axis left whose symbol the formula is a polynomial in is solved
     along that axis as `solve` does: the real roots of the count (and of the count
     minus the limit) are isolated exactly (`solve_poly.critical_integers`, Sturm
     sequences), the sign is constant between the integers beside them, and the
     axis's first value in a bad run is found directly;
  4. any other box is split in two along an axis (the polynomial's axis last).
  The first bad shape (in the grid's order) of every box is found, so the answer is
  the grid's first bad shape. More than `MAX_BOXES` boxes or `EXHAUSTIVE_SHAPES`
  shapes evaluated without an answer is `Unproven`: `check` refuses the grid rather
  than accept it unproved.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from rooflinec.engine.solve_interval import Interval, box_bounds
from rooflinec.engine.solve_poly import Poly, coefficients, combine, critical_integers, degree
from rooflinec.formulas import EvaluationError, Formula, bulk_evaluate
from rooflinec.grid_values import Grid, GridAxis

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "EXHAUSTIVE_SHAPES",
    "LEAF_SHAPES",
    "MAX_BOXES",
    "Bad",
    "Unproven",
    "first_bad_shape",
]

#: Grids up to this many shapes are evaluated shape by shape when the proof is not
#: conclusive; larger ones never are (nor more shapes than this in leaves).
EXHAUSTIVE_SHAPES = 10**6
#: A box of at most this many shapes is evaluated shape by shape.
LEAF_SHAPES = 1 << 12
#: Boxes examined before a grid larger than `EXHAUSTIVE_SHAPES` is declared unproven.
MAX_BOXES = 20_000
_CHUNK = 1 << 16  # shapes evaluated at a time
_SMALL = 1 << 8  # a box evaluated shape by shape even when an axis could be solved along


@dataclass(frozen=True)
class Bad:
    """The first shape where the count is not positive or too large (`value`), or
    cannot be evaluated (`error`); `index` is its 0-based number in the grid's order."""

    index: int
    shape: dict[str, int]
    value: Fraction | None
    error: EvaluationError | None = None


@dataclass(frozen=True)
class Unproven:
    """Neither proved good everywhere nor a bad shape found within the budget."""

    boxes: int


Box = tuple[tuple[int, int], ...]  # (first, last) value index per axis, inclusive


def first_bad_shape(
    formula: Formula,
    constants: Mapping[str, int | Fraction],
    grid: Grid,
    limit: int,
) -> Bad | Unproven | None:
    """The grid's first shape where `formula` (its other symbols at `constants`) is not
    in 1..`limit`, None when there is none, or `Unproven`."""
    proof = _Proof(formula, constants, grid, limit)
    small = grid.size <= EXHAUSTIVE_SHAPES
    # A small grid the bounds do not settle is evaluated whole, once, rather than box
    # by box first.
    found = proof.run(0 if small else EXHAUSTIVE_SHAPES)
    if isinstance(found, Unproven) and small:
        return proof.exhaustive()
    return found


class _Proof:
    def __init__(
        self, formula: Formula, constants: Mapping[str, int | Fraction], grid: Grid, limit: int
    ) -> None:
        self.formula = formula
        self.constants = dict(constants)
        self.grid = grid
        self.limit = limit
        self.axes = grid.axes
        # Axes whose symbol the formula reads; the others stay at their first value (the
        # earliest shapes in the grid's order), as they change no count.
        self.used = {k for k, a in enumerate(self.axes) if a.symbol in formula.symbols}
        # Axes a box may be solved along: the formula is a polynomial in their symbol.
        self.poly_axes = {k for k in self.used if degree(formula._tree, self.axes[k].symbol)}
        self.evaluated = 0

    def bad(self, value: Fraction) -> bool:
        return value <= 0 or value > self.limit

    # ------------------------------------------------------------ grid positions
    def index_of(self, digits: tuple[int, ...]) -> int:
        index = 0
        for axis, digit in zip(self.axes, digits, strict=True):
            index = index * axis.count + digit
        return index

    def shape_of(self, digits: tuple[int, ...]) -> dict[str, int]:
        return {a.symbol: a.value_at(d) for a, d in zip(self.axes, digits, strict=True)}

    def at(self, digits: tuple[int, ...]) -> Bad | None:
        """The engine's answer at one shape: a `Bad`, or None when the count is good."""
        shape = self.shape_of(digits)
        try:
            value = self.formula.evaluate({**self.constants, **shape})
        except EvaluationError as exc:
            return Bad(self.index_of(digits), shape, None, exc)
        return Bad(self.index_of(digits), shape, value) if self.bad(value) else None

    # ------------------------------------------------------------ the search
    def run(self, budget: int) -> Bad | Unproven | None:
        """The first bad shape, boxes examined smallest first shape first; `Unproven`
        past `MAX_BOXES` boxes or when a box to evaluate would pass `budget` shapes."""
        if any(a.count == 0 for a in self.axes):
            return None
        whole: Box = tuple(
            (0, a.count - 1 if k in self.used else 0) for k, a in enumerate(self.axes)
        )
        queue: list[tuple[int, Box]] = [(0, whole)]
        best: Bad | None = None
        boxes = 0
        while queue:
            first, box = heapq.heappop(queue)
            if best is not None and first >= best.index:
                break  # every box left starts after the bad shape found
            boxes += 1
            if boxes > MAX_BOXES:
                return Unproven(boxes)
            found = self.examine(box, budget)
            if isinstance(found, Unproven):
                return found
            if isinstance(found, list):
                for part in found:
                    heapq.heappush(queue, (self.index_of(tuple(lo for lo, _ in part)), part))
            elif found is not None and (best is None or found.index < best.index):
                best = found
        return best

    def examine(self, box: Box, budget: int) -> Bad | Unproven | list[Box] | None:
        """A box's first bad shape, None when it has none, or its two halves."""
        lowest = tuple(lo for lo, _ in box)
        bounds = self.bounds(box)
        if bounds is not None:
            if bounds[0] > 0 and bounds[1] <= self.limit:
                return None
            if bounds[1] <= 0 or bounds[0] > self.limit:
                return self.at(lowest)  # every shape is bad: the box's first
        size = 1
        for lo, hi in box:
            size *= hi - lo + 1
        wide = [k for k, (lo, hi) in enumerate(box) if hi > lo]
        if len(wide) == 1 and wide[0] in self.poly_axes:
            # No count above the limit in the box when its bounds say so: one condition.
            return self.along(box, wide[0], bounds is None or bounds[1] > self.limit)
        # Evaluate a small box, unless it is to be solved along an axis soon: roots
        # settle a long axis in a few evaluations.
        if size <= LEAF_SHAPES and (size <= _SMALL or not set(wide) & self.poly_axes):
            if self.evaluated + size > budget:
                return Unproven(0)
            return self.leaf(box)
        # Split the widest axis but the polynomial axis with the most values, which is
        # left to be solved along once it is the only one.
        widest = {k: box[k][1] - box[k][0] for k in wide}
        solved = [k for k in wide if k in self.poly_axes]
        keep = max(solved, key=widest.__getitem__) if solved else None
        k = max((j for j in wide if j != keep), key=widest.__getitem__)
        lo, hi = box[k]
        mid = (lo + hi) // 2
        return [
            (*box[:k], (lo, mid), *box[k + 1 :]),
            (*box[:k], (mid + 1, hi), *box[k + 1 :]),
        ]

    def bounds(self, box: Box) -> Interval | None:
        varying = {
            a.symbol: (Fraction(a.value_at(lo)), Fraction(a.value_at(hi)))
            for a, (lo, hi) in zip(self.axes, box, strict=True)
            if a.symbol in self.formula.symbols
        }
        return box_bounds(self.formula, self.constants, varying)

    # ------------------------------------------------------------ one axis, exactly
    def along(self, box: Box, k: int, high: bool = True) -> Bad | Unproven | None:
        """The first bad shape of a box with one axis left, from the real roots of the
        count and of the count minus the limit (exact, as `solve` isolates them)."""
        axis = self.axes[k]
        lowest = tuple(lo for lo, _ in box)
        held = {**self.constants, **self.shape_of(lowest)}
        del held[axis.symbol]
        try:
            poly = coefficients(self.formula, held, axis.symbol)
        except EvaluationError:
            # Interpolation evaluates at 1, 2, ...: not necessarily values of the grid.
            # A failure there that the box's first shape shares is its first bad shape;
            # anything else is settled by evaluation, or not at all.
            return self.at(lowest) or Unproven(0)
        assert poly is not None  # `k` is one of the polynomial axes
        lo_index, hi_index = box[k]
        start, stop = axis.value_at(lo_index), axis.value_at(hi_index)
        points = {start, stop} | critical_integers(poly, start, stop)
        if high:  # the count may pass the limit: where it does, too
            over = combine(Fraction(1), poly, Fraction(-self.limit), (Fraction(1),))
            points |= critical_integers(over, start, stop)
        # Between two consecutive points neither condition changes sign: one value
        # stands for the run.
        runs = []
        ordered = sorted(points)
        for i, point in enumerate(ordered):
            runs.append((point, point))
            if i + 1 < len(ordered) and ordered[i + 1] > point + 1:
                runs.append((point + 1, ordered[i + 1] - 1))
        for a, b in runs:
            if not self.bad(_value(poly, a)):
                continue
            index = _index_at_least(axis, a)
            if index is not None and index <= hi_index and axis.value_at(index) <= b:
                index = max(index, lo_index)
                digits = (*lowest[:k], index, *lowest[k + 1 :])
                found = self.at(digits)
                if found is None:  # pragma: no cover - the polynomial is the formula
                    raise AssertionError(f"no bad count at {self.shape_of(digits)}")
                return found
        return None

    # ------------------------------------------------------------ shape by shape
    def leaf(self, box: Box) -> Bad | None:
        """Every shape of a small box, in the grid's order."""
        import numpy as np

        size = 1
        for lo, hi in box:
            size *= hi - lo + 1
        self.evaluated += size
        indices = [np.arange(lo, hi + 1, dtype=np.int64) for lo, hi in box]
        mesh = np.meshgrid(*indices, indexing="ij")  # the last axis fastest: grid order
        digits = {a.symbol: m.ravel() for a, m in zip(self.axes, mesh, strict=True)}
        columns = {
            a.symbol: a.array(digits[a.symbol])
            for a in self.axes
            if a.symbol in self.formula.symbols
        }
        row = self.first_bad_row(columns, size)
        if row is None:
            return None
        return self.at(tuple(int(digits[a.symbol][row]) for a in self.axes))

    def exhaustive(self) -> Bad | None:
        """Every shape of the grid, in order, a chunk at a time."""
        size = self.grid.size
        for start in range(0, size, _CHUNK):
            stop = min(size, start + _CHUNK)
            shapes = self.grid.columns(start, stop)
            columns = {s: v for s, v in shapes.items() if s in self.formula.symbols}
            row = self.first_bad_row(columns, stop - start)
            if row is not None:
                digits = []
                index = start + row
                for axis in reversed(self.axes):
                    index, rest = divmod(index, axis.count)
                    digits.append(rest)
                return self.at(tuple(reversed(digits)))
        return None

    def first_bad_row(self, columns: dict[str, NDArray[np.int64]], n: int) -> int | None:
        """The first row of `columns` where the count is bad or cannot be evaluated."""
        import numpy as np

        from rooflinec.formulas.vectorised import evaluate_int64

        fast = evaluate_int64(self.formula, columns, self.constants) if columns else None
        if fast is not None:
            wrong = (fast <= 0) | (fast > self.limit) if self.limit < 2**62 else fast <= 0
            return int(np.argmax(wrong)) if wrong.any() else None
        exact: dict[str, list[int | Fraction]] = {s: v.tolist() for s, v in columns.items()}
        for name in self.formula.symbols:
            if name not in exact:
                exact[name] = [self.constants[name]] * n
        try:
            values = bulk_evaluate(self.formula, exact) if exact else [self.formula.evaluate({})]
        except EvaluationError as exc:
            return exc.row or 0
        return next((i for i, v in enumerate(values) if self.bad(v)), None)


def _value(poly: Poly, x: int) -> Fraction:
    value = Fraction(0)
    for c in reversed(poly):
        value = value * x + c
    return value


def _index_at_least(axis: GridAxis, x: int) -> int | None:
    """The index of the axis's smallest value >= x, None when every value is below."""
    count = axis.count
    if not axis.is_range:
        i = bisect.bisect_left(axis.values, x)
        return i if i < count else None
    if x <= axis.start:
        return 0
    if axis.step is not None:
        i = -(-(x - axis.start) // axis.step)
    else:
        i, value = 0, axis.start
        while value < x:
            i, value = i + 1, value * (axis.times or 2)
    return i if i < count else None
