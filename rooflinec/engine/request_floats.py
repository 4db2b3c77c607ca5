"""Requests on the float path: many (deployment, batch) points of one model and request
shape on a device at once, in numpy float64.

The frontier and `plan` rank thousands of points per model; the exact engine
(`rooflinec.engine.requests.evaluate_request`) takes milliseconds a point. Here each
figure is computed the way the exact engine defines it, in floats, for every point at
once:

- **What does not depend on the device** (`RequestWork`, once per model, precision,
  request shape and set of points): every step's shape and count over the points (the
  step formulas in float64 over columns of b, s, L, tp, pp, ep, dp), then its kernel's
  operations and bytes per level at those shapes and the precision's widths; for a
  collective step its group, span and message (bytes as a function of the reduction
  factor). The prefill pass at s = L = input; the decode passes at s = 1 and at both
  ends of L.
- **On a device** (`request_times`; `request_times_on` for many devices at once, one
  array element per point and device, each device at the points of its own grid): a
  step's run takes the longest of its operations
  over the peak, its bytes over each bandwidth and the launch floor; a collective's the
  longest of its operations over the peak, its message over the bandwidth its group gets
  on the level it crosses, that level's latency and the launch floor (`collective_bound`'s
  rule). A pass takes `time_overlapped`: the longer of the memory steps' sum and the
  collectives'. The decode passes are summed in closed form: each step's ceilings are
  lines in L (checked on the formulas' trees: `Formula.degree`), so its time is their upper
  envelope; the sum is cut at every crossing and each piece summed as an arithmetic
  series. A sliding window (`min` and `max` of L and W in a kernel's formulas) cuts the
  decode into runs of L, the same for every point, on each of which the counts are lines
  again (`_key_runs`); each run is summed so.

**Where this path declines** a point, `declined` says so and the caller evaluates it
exactly: a shape or count that is not a whole number (or out of the engine's limits), a
step that would do nothing, a shape that shrinks with L, a non-finite value. A model whose
decode passes are not lines in L between cuts every point shares (`L` in a count or a
collective, a shape formula of L with `min`, a window whose place depends on the batch or
the degrees) is declined whole (`RequestWork.linear`).

**Accuracy.** Every figure is a short chain of float operations on integers below 2^53
(or their correctly rounded floats): its relative error is a small multiple of 2^-53 per
operation, far below `REL`, the tolerance within which callers take two figures as
possibly equal and compare them exactly. A test checks every point of the bundled models
on several devices against the exact engine.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, TypeAlias

import numpy as np

from rooflinec.catalog import LEVELS, RED, Deployment, Model, RequestShape
from rooflinec.engine.evaluate import MAX_COUNT, width_values
from rooflinec.engine.models import MAX_SHAPE, MAX_STEP_COUNT, Link, fabric_role
from rooflinec.engine.solve_interval import folded
from rooflinec.engine.solve_piecewise import cuts, degree_on_run, spans
from rooflinec.engine.step_crossover import composed
from rooflinec.formulas import EvaluationError
from rooflinec.formulas.tree import _Call, _Neg, _Node, _Num, _Pow, _Prod, _Sum, _Sym
from rooflinec.formulas.vectorised import evaluate_float, evaluate_int64

if TYPE_CHECKING:
    from rooflinec.engine.cells import DeviceFigures
    from rooflinec.engine.models import ModelEngine
    from rooflinec.formulas import Formula
    from rooflinec.formulas.vectorised import Bools, Floats, Ints

__all__ = [
    "REL",
    "RequestTimes",
    "RequestWork",
    "clear_deployments",
    "device_rates",
    "exact_passes",
    "floored_talk",
    "request_times",
    "request_times_on",
    "same_memory_time",
]

#: Two float-path figures within this relative distance may be equal: compare exactly.
REL = 2.0**-30
_KEYS = "L"


@dataclass(frozen=True)
class _MemoryStep:
    """A step on a memory roofline over the points: `count` runs of `flops` operations
    moving `traffic[level]` bytes each (the decode's as lines: value at the first pass and
    slope per pass)."""

    precision: str
    count: Floats
    flops: tuple[Floats, Floats]
    traffic: tuple[tuple[str, Floats, Floats], ...]
    # The operations and each level's bytes of one run (in `traffic`'s order), exactly,
    # at the first pass and at the last (the same for one pass); None where int64 cannot
    # hold them (a fractional width, a step past 2^62)
    exact: tuple[tuple[Ints, ...], tuple[Ints, ...]] | None = None
    varies: bool = False  # whether some count changes from pass to pass (at some point)
    # Where int64 cannot hold them (a fractional width: MXFP4, int4), what a point's
    # exact counts are made from when asked: the formulas, the shapes at both ends and
    # the widths
    lazy: _Lazy | None = None

    # Point and formula -> its lazy exact counts at both ends, once (a near tie reads a
    # point against several others)
    _known: dict[tuple[int, int], tuple[int | Fraction, int | Fraction]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def exact_at(self, i: int, which: int) -> tuple[int | Fraction, int | Fraction] | None:
        """Point i's operations (`which` 0) or bytes at the level `traffic[which - 1]` of
        one run at the first pass and at the last, exactly; None where not known."""
        if self.exact is not None:
            first, final = self.exact
            return first[which].item(i), final[which].item(i)
        if self.lazy is None:
            return None
        hit = self._known.get((i, which))
        if hit is None:
            formulas, shapes, widths = self.lazy
            ends = []
            for own in (shapes[0], shapes[-1]):
                values: dict[str, int | Fraction] = {k: int(v.item(i)) for k, v in own.items()}
                values.update(widths)
                ends.append(formulas[which].evaluate(values))
            hit = self._known[(i, which)] = (ends[0], ends[1])
        return hit


_Lazy = tuple[tuple["Formula", ...], tuple[dict[str, "Floats"], ...], dict[str, int | Fraction]]


@dataclass(frozen=True)
class _CollectiveStep:
    """A collective step over the points: where `runs`, `count` runs of a group of `n`
    chips spanning `span`, each of `flops` operations and a message of `message(red)`
    bytes per chip and direction."""

    precision: str
    kind: str
    runs: Bools
    count: Floats
    n: Floats
    span: Floats
    flops: Floats
    formula: Formula
    values: dict[str, float | Floats]

    def message(self, red: Floats) -> Floats:
        return np.asarray(evaluate_float(self.formula, {**self.values, RED: red}), np.float64)

    def take(self, index: Ints) -> _CollectiveStep:
        """The step at the points `index` (in that order)."""
        values = {k: v[index] if isinstance(v, np.ndarray) else v for k, v in self.values.items()}
        return _CollectiveStep(
            self.precision,
            self.kind,
            self.runs[index],
            self.count[index],
            self.n[index],
            self.span[index],
            self.flops[index],
            self.formula,
            values,
        )


@dataclass(frozen=True)
class _Pass:
    """One pass (or the decode passes as lines in L) over the points."""

    memory: tuple[_MemoryStep, ...]
    collectives: tuple[_CollectiveStep, ...]
    declined: Bools
    # Each point's memory steps' shapes and counts, and its collectives' (with their
    # groups' spans), whole numbers: two points with the same row run the same kernels
    # at the same shapes, so the steps' exact times are equal on any device
    memory_key: Floats
    talk_key: Floats
    # Each memory step's columns of `memory_key` (start, stop)
    memory_columns: tuple[tuple[int, int], ...] = ()

    @cached_property
    def _rows(self) -> dict[int, list[float]]:
        return {}

    def memory_row(self, i: int) -> list[float]:
        """Point i's row of `memory_key` as a list (kept: a near tie reads a point's row
        against several others)."""
        row = self._rows.get(i)
        if row is None:
            row = self._rows[i] = self.memory_key[i].tolist()
        return row

    def take(self, index: Ints) -> _Pass:
        """What `request_times` reads of the pass, at the points `index` (in that order;
        repeats allowed): the steps and where the points are declined."""
        memory = tuple(
            _MemoryStep(
                m.precision,
                m.count[index],
                (m.flops[0][index], m.flops[1][index]),
                tuple((lv, a[index], slope[index]) for lv, a, slope in m.traffic),
                None,
                m.varies,
            )
            for m in self.memory
        )
        collectives = tuple(c.take(index) for c in self.collectives)
        empty = np.zeros((len(index), 0))
        return _Pass(memory, collectives, self.declined[index], empty, empty)


def _column(value: float | Floats, size: int) -> Floats:
    """`value` as a column of `size` floats (a scalar repeated)."""
    if isinstance(value, np.ndarray) and value.shape == (size,) and value.dtype == np.float64:
        return value
    if isinstance(value, np.ndarray):
        return np.broadcast_to(value.astype(np.float64), (size,)).copy()
    return np.full(size, float(value))


def _whole(values: Floats, limit: int) -> Bools:
    """Where `values` are whole numbers in [0, limit]."""
    finite = np.isfinite(values)
    out: Bools = finite & (values == np.floor(values)) & (values >= 0) & (values <= limit)
    return out


def _shape_ok(values: Floats, fraction: bool) -> Bools:
    """Where a shape symbol's values are what the engine takes: whole numbers within its
    limit, or, for a symbol that may be a fraction (`ModelStep.fractional`: uniform
    routing's expectations), finite and within the limit."""
    if not fraction:
        return _whole(values, MAX_SHAPE)
    out: Bools = np.isfinite(values) & (values >= 0) & (values <= MAX_SHAPE)
    return out


class RequestWork:
    """What the float path needs of `model`'s passes at `points`, the same on every
    device (see the module)."""

    def __init__(
        self,
        engine: ModelEngine,
        model: Model,
        precision: str,
        shape: RequestShape,
        points: Sequence[tuple[Deployment, int]],
    ) -> None:
        self.engine, self.model, self.precision, self.shape = engine, model, precision, shape
        self.points = tuple(points)
        self.size = len(self.points)
        ds = [d for d, _ in self.points]
        self.batch = np.array([b for _, b in self.points], dtype=np.float64)
        self.chips = np.array([d.total for d in ds], dtype=np.float64)
        self.dp = np.array([d.dp for d in ds], dtype=np.float64)
        degrees = {
            "tp": np.array([d.tp for d in ds], dtype=np.float64),
            "pp": np.array([d.pp for d in ds], dtype=np.float64),
            "ep": np.array([d.ep for d in ds], dtype=np.float64),
            "dp": self.dp,
        }
        self._base: dict[str, float | Floats] = {
            **{k: float(v) for k, v in model.parameters.items()},
            **degrees,
            "b": self.batch,
        }
        # Under speculation a decode pass verifies k drafted tokens over k more keys, and
        # yields `per_pass` tokens on average (`requests.decode_sum`).
        drafted = shape.drafted
        first = shape.input + 1 + drafted
        last = shape.input + shape.output - 1 + drafted
        self.first, self.last = first, last
        self.per_pass = shape.tokens_per_pass
        self.prefill = self._pass(shape.input, shape.input, None)
        # The decode passes as runs of L on each of which every count is a line (one run
        # where no formula has `min` or `max` of L; a sliding window cuts it at W).
        runs = (
            _key_runs(engine, model, precision, drafted + 1, first, last) if last >= first else None
        )
        self.linear = runs is not None
        self.decodes: tuple[tuple[int, int, _Pass], ...] = tuple(
            (a, c, self._pass(drafted + 1, a, c)) for a, c in runs or ()
        )
        # The first run's pass: its collectives are every run's (none names L).
        self.decode: _Pass | None = self.decodes[0][2] if self.decodes else None

    def _pass(self, s: int, first: int, last: int | None) -> _Pass:
        """The pass at (b, s, L = first); with `last`, the decode passes from L = first to
        `last` as lines: each count at `first` and its slope per pass (lines there: a
        run of `_key_runs`)."""
        size = self.size
        catalog = self.engine.catalog
        declined = np.zeros(size, dtype=np.bool_)
        at_first = {**self._base, "s": float(s), _KEYS: float(first)}
        ends = [at_first]
        if last is not None:
            ends.append({**self._base, "s": float(s), _KEYS: float(last)})
        memory: list[_MemoryStep] = []
        collectives: list[_CollectiveStep] = []
        keys: dict[bool, list[Floats]] = {False: [], True: []}  # by: is it a collective
        columns: list[tuple[int, int]] = []
        for step in self.model.steps:
            kernel = catalog.kernels[step.kernel]
            collective = kernel.collective is not None
            count = _column(evaluate_float(step.count, at_first), size)
            declined |= ~_whole(count, MAX_STEP_COUNT)
            shapes: list[dict[str, Floats]] = []
            for env in ends:
                shapes.append(
                    {sym: _column(evaluate_float(f, env), size) for sym, f in step.shape.items()}
                )
            fractional = step.fractional
            if last is not None:
                # Whole at L = first and first + 1: a whole slope, so whole at every L.
                step_env = {**at_first, _KEYS: float(first + 1)}
                for sym, f in step.shape.items():
                    nxt = _column(evaluate_float(f, step_env), size)
                    declined |= ~_shape_ok(nxt, sym in fractional) | (nxt < shapes[0][sym])
            key = keys[collective]
            start = len(key)
            key.append(count)
            for at_end in shapes:
                for sym, values_ in at_end.items():
                    declined |= ~_shape_ok(values_, sym in fractional)
                    key.append(values_)
            at = step.precision or self.precision
            bound_widths = width_values(
                kernel.widths, catalog.precisions[at].bytes, step.widths, catalog.precisions
            )
            widths = {k: float(v) for k, v in bound_widths.items()}
            if collective:
                first_shape = shapes[0]
                n = first_shape.get("n", np.ones(size))
                runs = (n > 1) & (count > 0)
                for sym, values_ in first_shape.items():
                    declined |= runs & (values_ <= 0 if sym in fractional else values_ < 1)
                values: dict[str, float | Floats] = {**first_shape, **widths}
                flops = _column(evaluate_float(kernel.flops, values), size)
                span = n * _spread(step.shape["n"].symbols if "n" in step.shape else (), self._base)
                key.append(_column(span, size))
                collectives.append(
                    _CollectiveStep(
                        at,
                        kernel.collective or "",
                        runs,
                        count,
                        n,
                        _column(span, size),
                        flops,
                        kernel.bytes["scale_up"],
                        values,
                    )
                )
                continue
            declined |= count < 1
            for at_end in shapes:
                for sym, values_ in at_end.items():
                    # A fraction (experts read per chip) may be under 1, never 0.
                    declined |= values_ <= 0 if sym in fractional else values_ < 1
            levels = [lv for lv in LEVELS if lv in kernel.bytes]
            after = 0 if last is None else last - first  # passes after the first
            operations = self._line(kernel.flops, shapes, widths, after)
            traffic = tuple(
                (lv, *self._line(kernel.bytes[lv], shapes, widths, after)) for lv in levels
            )
            formulas = (kernel.flops, *(kernel.bytes[lv] for lv in levels))
            # A fraction's float is not its value: such a step's exact counts are the
            # exact engine's (neither int64 nor the lazy counts read it from floats).
            whole = not fractional & step.shape.keys()
            exact = _exactly(formulas, shapes, declined, bound_widths) if whole else None
            slopes = [operations[1], *(slope for _, _, slope in traffic)]
            varies = any(bool(np.any(slope != 0)) for slope in slopes)
            lazy = (
                (formulas, tuple(shapes), dict(bound_widths)) if exact is None and whole else None
            )
            memory.append(_MemoryStep(at, count, operations, traffic, exact, varies, lazy))
            columns.append((start, len(key)))
        rows = [np.stack(k, axis=1) if k else np.zeros((size, 0)) for k in keys.values()]
        return _Pass(tuple(memory), tuple(collectives), declined, rows[0], rows[1], tuple(columns))

    def _line(
        self,
        formula: Formula,
        shapes: list[dict[str, Floats]],
        widths: dict[str, float],
        span: int,
    ) -> tuple[Floats, Floats]:
        """The formula at the first shapes and its slope per pass over `span` passes
        after the first (0 for one pass)."""
        size = self.size
        a = _column(evaluate_float(formula, {**shapes[0], **widths}), size)
        if len(shapes) == 1 or span == 0:
            return a, np.zeros(size)
        z = _column(evaluate_float(formula, {**shapes[1], **widths}), size)
        return a, (z - a) / span


def _exactly(
    formulas: Sequence[Formula],
    shapes: Sequence[dict[str, Floats]],
    declined: Bools,
    widths: Mapping[str, int | Fraction],
) -> tuple[tuple[Ints, ...], tuple[Ints, ...]] | None:
    """`formulas` over the shapes at the first pass and at the last, exactly in int64
    (`evaluate_int64`; a declined point's shapes taken as 1), or None where it refuses."""
    found: list[tuple[Ints, ...]] = []
    for own in shapes:
        columns = {sym: np.where(declined, 1.0, v).astype(np.int64) for sym, v in own.items()}
        values = []
        for formula in formulas:
            q = evaluate_int64(formula, columns, widths)
            if q is None:
                return None
            values.append(q)
        found.append(tuple(values))
    return found[0], found[-1]


#: The variables that differ from point to point: a `min` or `max` of L that names one
#: would cut each point's decode at a place of its own.
_POINT_VARIABLES = frozenset({"b", "tp", "pp", "ep", "dp"})
#: The most passes of a run that is not lines taken one at a time (as a window's first
#: s - 1 keys past W, where the earliest queries still see fewer than W).
_SHORT_RUN = 16
#: Values of the point variables at which a run's degree in L is read: large and
#: unrelated, so that no coefficient of a term of L^2 vanishes there unless it vanishes
#: for every point (`degree_on_run`).
_GENERIC: tuple[dict[str, int | Fraction], ...] = (
    {"b": 1_000_003, "tp": 7_919, "pp": 104_729, "ep": 1_299_709, "dp": 15_485_863},
    {"b": 2_750_159, "tp": 32_452_843, "pp": 49_979_687, "ep": 86_028_121, "dp": 7},
)


def _key_runs(
    engine: ModelEngine, model: Model, precision: str, tokens: int, first: int, last: int
) -> list[tuple[int, int]] | None:
    """The decode passes L = first..last as runs on each of which every count is a line
    in L whatever the point: one run when every shape and kernel formula is of degree at
    most one in L through the shapes (`piece_degree`); a `min` or `max` of L that names
    no point variable (a window's `min(L, W)`) cuts it where it changes argument, the
    same for every point (`cuts`, with the other variables at 1). None: some point's
    passes are not lines in L between cuts every point shares (a count or a collective
    that names L, a degree above one, a call of L and a point variable)."""
    catalog = engine.catalog
    points: set[int] = {first, last}
    cut: list[tuple[Formula, dict[str, int | Fraction]]] = []  # formulas a window cuts
    for step in model.steps:
        kernel = catalog.kernels[step.kernel]
        if step.count.degree({_KEYS: 1}) != 0:
            return None
        shape_degrees: dict[str, int] = {}
        for sym, f in step.shape.items():
            d = f.degree({_KEYS: 1})
            if d is None or d > 1:
                return None
            shape_degrees[sym] = d
        if kernel.collective is not None:
            if any(shape_degrees.values()):
                return None
            continue
        if not any(shape_degrees.values()):
            continue
        if all(
            (d := f.degree(shape_degrees)) is not None and d <= 1
            for f in (kernel.flops, *kernel.bytes.values())
        ):
            continue  # lines in L: no cut
        found_ = composed(kernel, step, model)
        if found_ is None:
            return None
        flops_f, traffic_f = found_
        formulas = (flops_f, *traffic_f.values())
        if any(_calls_name(f._tree, _POINT_VARIABLES) for f in formulas):
            return None
        at = step.precision or precision
        values: dict[str, int | Fraction] = {
            **model.parameters,
            **dict.fromkeys(_POINT_VARIABLES, 1),
            "s": tokens,
            **width_values(
                kernel.widths, catalog.precisions[at].bytes, step.widths, catalog.precisions
            ),
        }
        try:
            for formula in formulas:
                found = cuts(folded(formula, values, _KEYS), values, _KEYS, first, last)
                if found is None:
                    return None
                points |= found
                cut.append((formula, values))
        except (EvaluationError, ZeroDivisionError):
            return None
    # The ends of the range are no cut of their own: a call that changes argument there
    # has both arguments equal at it (an integer root) or a cut beside it.
    runs = spans(first, last, points - {first, last})
    # On each run every call of L keeps one argument, the same for every point (no call
    # of L names a point variable): the formula with those arguments is a line in L. They
    # are read at the run's second pass: its first may be the range's end, where two
    # arguments may meet (a root no cut marks).
    out: list[tuple[int, int]] = []
    for a, c in runs:
        if c - a <= 1:  # two passes or one: a line
            out.append((a, c))
            continue
        for formula, values in cut:
            try:
                d = degree_on_run(formula._tree, values, _KEYS, a + 1, _GENERIC)
            except (EvaluationError, ZeroDivisionError):
                return None
            if d is None or (d > 1 and c - a >= _SHORT_RUN):
                return None
            if d > 1:  # the window's first few keys past W: a pass at a time
                out += [(x, x) for x in range(a, c + 1)]
                break
        else:
            out.append((a, c))
    return out


def _calls_name(node: _Node, names: frozenset[str]) -> bool:
    """Whether a `min`, `max`, `ceil` or `floor` of L in the tree names any of `names`."""
    if isinstance(node, _Call):
        inner = [n for arg in node.args for n in _symbols(arg)]
        if _KEYS in inner and names.intersection(inner):
            return True
        return any(_calls_name(arg, names) for arg in node.args)
    if isinstance(node, _Neg):
        return _calls_name(node.operand, names)
    if isinstance(node, _Pow):
        return _calls_name(node.base, names)
    if isinstance(node, _Sum):
        return any(_calls_name(t, names) for _, t in node.terms)
    if isinstance(node, _Prod):
        return any(_calls_name(f.node, names) for f in node.factors)
    return False


def _symbols(node: _Node) -> set[str]:
    if isinstance(node, _Sym):
        return {node.name}
    if isinstance(node, _Num):
        return set()
    if isinstance(node, _Call):
        return {n for arg in node.args for n in _symbols(arg)}
    if isinstance(node, _Neg):
        return _symbols(node.operand)
    if isinstance(node, _Pow):
        return _symbols(node.base)
    if isinstance(node, _Sum):
        return {n for _, t in node.terms for n in _symbols(t)}
    return {n for f in node.factors for n in _symbols(f.node)}


@dataclass(frozen=True)
class RequestTimes:
    """The float path's figures of each point on one device (seconds): the prefill's
    time (`ttft`), the decode passes' sum, and where the point is declined."""

    ttft: Floats
    decode: Floats
    declined: Bools
    # Where the collectives may count: their sum is not clearly below the memory steps'
    # in the prefill, or in some decode pass (elsewhere the pass's time is the memory
    # steps' alone, exactly)
    prefill_talk: Bools
    decode_talk: Bools
    # Per collective, where a floor is clearly its longest time (prefill, decode)
    floors: tuple[Floors, Floors] = ((), ())


def _red(kind: str, n: Floats, in_network: Bools) -> Floats:
    """`red_factor` over the points, for each device (`in_network`: its level's)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "all-reduce":
            ring = 2 * (n - 1) / n
            return np.where(in_network, np.minimum(ring, 1.0), ring)
        if kind in ("all-gather", "reduce-scatter", "all-to-all"):
            return (n - 1) / n
    return np.ones_like(n)


# Per collective step that runs at some point: where a floor is clearly its longest time
Floors: TypeAlias = "tuple[tuple[_CollectiveStep, Bools], ...]"


#: A device as the float path reads it: its figures, launch floor (s) and fabric levels.
DeviceRoof = tuple["DeviceFigures", Fraction | None, Mapping[str, Link]]


def _gathered(values: Iterable[float], at: Ints) -> Floats:
    """One figure per device, read at each element's device (`at`)."""
    out: Floats = np.array(list(values), dtype=np.float64)[at]
    return out


@dataclass(frozen=True)
class _LinkColumns:
    """One fabric role's level at each element (a point on a device): its device's."""

    exists: Bools
    bandwidth: Floats  # B/s per chip and direction (1 where the device has no such level)
    domain: Floats  # chips (inf: no domain quoted, or no level)
    mesh: Bools  # a mesh that quotes its domain: a group smaller than it gets a share
    in_network: Bools
    floor: Floats  # s: the longer of the level's latency and the launch floor (0: none)

    @classmethod
    def of(cls, links: Sequence[Link | None], launch: Floats, at: Ints) -> _LinkColumns | None:
        if all(link is None for link in links):
            return None
        inf = float("inf")
        flags = np.array(
            [
                (
                    lk is not None,
                    lk is not None and lk.topology == "mesh" and lk.domain is not None,
                    lk is not None and lk.in_network,
                )
                for lk in links
            ],
            dtype=np.bool_,
        )[at]
        latency = _gathered(
            (0.0 if lk is None or lk.latency is None else float(lk.latency) for lk in links), at
        )
        return cls(
            flags[:, 0],
            _gathered((1.0 if lk is None else float(lk.bandwidth) for lk in links), at),
            _gathered((inf if lk is None or lk.domain is None else lk.domain for lk in links), at),
            flags[:, 1],
            flags[:, 2],
            np.maximum(latency, launch),
        )


@dataclass(frozen=True)
class _Roofs:
    """The ceilings at each element (a point on one of several devices): its device's.
    The devices share the levels they quote and whether they quote a launch floor
    (`request_times_on` groups them so), so every element is worked out as on its device
    alone."""

    peaks: dict[str, Floats]  # OP/s by precision
    bandwidths: dict[str, Floats]  # B/s by level
    launch: Floats | None  # s
    up: _LinkColumns | None
    out: _LinkColumns | None

    @classmethod
    def of(
        cls,
        devices: Sequence[DeviceRoof],
        precisions: Sequence[str],
        levels: Sequence[str],
        at: Ints,
    ) -> _Roofs:
        """The ceilings of `devices` at `precisions` (each device quotes a peak for each)
        and those of `levels` the first device quotes (each device quotes the same), at
        each element's device (`at`: an index into `devices`)."""
        first = devices[0][0]
        peaks = {p: _gathered((float(d.peaks[p]) for d, _, _ in devices), at) for p in precisions}
        bandwidths = {
            lv: _gathered((float(d.bandwidths[lv]) for d, _, _ in devices), at)
            for lv in levels
            if lv in first.bandwidths
        }
        launch = None
        if devices[0][1] is not None:
            launch = _gathered((float(latency or 0) for _, latency, _ in devices), at)
        floor = launch if launch is not None else np.zeros(len(at))
        up = _LinkColumns.of([links.get("scale_up") for _, _, links in devices], floor, at)
        out = _LinkColumns.of([links.get("scale_out") for _, _, links in devices], floor, at)
        return cls(peaks, bandwidths, launch, up, out)


def _talk(
    steps: Sequence[_CollectiveStep], roofs: _Roofs, size: int
) -> tuple[Floats, Bools, Bools, tuple[tuple[int, Bools], ...]]:
    """The collectives' summed time per element, where some collective runs, where a
    group finds no level to cross (declined: the exact engine names it), and per
    collective that runs somewhere (by its place in `steps`) where a floor (the level's
    latency, the launch) is clearly its longest time."""
    total = np.zeros(size)
    some = np.zeros(size, dtype=np.bool_)
    missing = np.zeros(size, dtype=np.bool_)
    floored: list[tuple[int, Bools]] = []
    up, out = roofs.up, roofs.out
    for place, c in enumerate(steps):
        if not c.runs.any():
            continue
        on_up = np.zeros(size, dtype=np.bool_)
        if up is not None:
            on_up = up.exists & (c.span <= up.domain)
        time = np.zeros(size)
        held = np.zeros(size, dtype=np.bool_)  # a floor is clearly the longest
        for link, where in ((up, on_up), (out, ~on_up)):
            where = where & c.runs
            if link is None:
                missing |= where
                continue
            missing |= where & ~link.exists
            where = where & link.exists
            if not where.any():
                continue
            share = link.mesh & (c.n > 1) & (c.n < link.domain)
            bandwidth = np.where(
                share, link.bandwidth * (c.n - 1) / (link.domain - 1), link.bandwidth
            )
            red = _red(c.kind, c.n, link.in_network)
            with np.errstate(divide="ignore", invalid="ignore"):
                t = np.maximum(c.flops / roofs.peaks[c.precision], c.message(red) / bandwidth)
            held = np.where(where, t * (1 + 4 * REL) < link.floor, held)
            time = np.where(where, np.maximum(t, link.floor), time)
        total += np.where(c.runs, c.count * time, 0.0)
        some |= c.runs
        floored.append((place, held))
    return total, some, missing, tuple(floored)


def _ceilings(step: _MemoryStep, roofs: _Roofs) -> list[tuple[Floats, Floats]]:
    """A step's ceilings as lines in the pass (the time of its `count` runs: value at the
    first pass, slope per pass)."""
    peak = roofs.peaks[step.precision]
    a, slope = step.flops
    out = [(step.count * a / peak, step.count * slope / peak)]
    for lv, a, slope in step.traffic:
        bw = roofs.bandwidths.get(lv)
        if bw is not None:
            out.append((step.count * a / bw, step.count * slope / bw))
    if roofs.launch is not None:
        out.append((step.count * roofs.launch, np.zeros_like(a)))
    return out


def _envelope(lines: Sequence[Sequence[tuple[Floats, Floats]]], x: Floats) -> Floats:
    """Σ over the steps of the upper envelope of each step's lines, at pass offsets `x`
    (one column per element of the last axis of `x`)."""
    total = np.zeros_like(x)
    for own in lines:
        top = own[0][0][..., None] + own[0][1][..., None] * x
        for a, slope in own[1:]:
            top = np.maximum(top, a[..., None] + slope[..., None] * x)
        total += top
    return total


def _decode_sum(
    lines: Sequence[Sequence[tuple[Floats, Floats]]],
    talk: Floats,
    overlapped: Bools,
    passes: int,
) -> tuple[Floats, Floats]:
    """Σ over the pass offsets x = 0 .. passes - 1 of max(M(x), talk) where `overlapped`
    (else M(x)), M the summed envelopes: cut at every crossing of two lines of a step,
    M is a line between two cuts, and each piece is an arithmetic series (split once more
    where it crosses `talk`); and the least M(x) (at a piece's end)."""
    size = talk.shape[0]
    cuts = [np.zeros(size), np.full(size, float(passes))]
    with np.errstate(divide="ignore", invalid="ignore"):
        for own in lines:
            for i, (a, s) in enumerate(own):
                for b, t in own[i + 1 :]:
                    x = np.ceil((a - b) / (t - s))
                    x = np.where(np.isfinite(x), np.clip(x, 0, passes), 0.0)
                    cuts.append(x)
    edges = np.sort(np.stack(cuts, axis=-1), axis=-1)
    lo, hi = edges[..., :-1], edges[..., 1:]
    count = hi - lo
    f_lo = _envelope(lines, lo)
    f_hi = _envelope(lines, np.maximum(hi - 1, lo))
    plain = count * (f_lo + f_hi) / 2
    t = np.where(overlapped, talk, -np.inf)[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = np.where(count > 1, (f_hi - f_lo) / (count - 1), 0.0)
        # Rising through t: the first k passes at t, the rest on the line.
        k_up = np.clip(np.floor((t - f_lo) / slope) + 1, 0, count)
        rising = k_up * t + (count - k_up) * f_lo + slope * (count - 1 + k_up) * (count - k_up) / 2
        # Falling through t: the first k passes on the line, the rest at t.
        k_down = np.clip(np.floor((f_lo - t) / -slope) + 1, 0, count)
        falling = k_down * f_lo + slope * k_down * (k_down - 1) / 2 + (count - k_down) * t
        flat = count * t
    piece = np.where(
        np.minimum(f_lo, f_hi) >= t,
        plain,
        np.where(
            np.maximum(f_lo, f_hi) <= t,
            flat,
            np.where(f_hi > f_lo, rising, falling),
        ),
    )
    ends = np.where(count > 0, np.minimum(f_lo, f_hi), np.inf)
    return np.where(count > 0, piece, 0.0).sum(axis=-1), ends.min(axis=-1)


def _flat(steps: Sequence[_MemoryStep], roofs: _Roofs, size: int) -> Floats:
    """The summed time of `steps` at the first pass (each its longest ceiling)."""
    total = np.zeros(size)
    for step in steps:
        own = _ceilings(step, roofs)
        top = own[0][0]
        for a, _ in own[1:]:
            top = np.maximum(top, a)
        total += top
    return total


Rates = tuple[dict[str, float], dict[str, float], float | None]


def device_rates(figures: DeviceFigures, latency: Fraction | None) -> Rates:
    """A device's peaks (OP/s by precision), bandwidths (B/s by level) and launch floor
    (s) as floats."""
    return (
        {p: float(v) for p, v in figures.peaks.items()},
        {lv: float(v) for lv, v in figures.bandwidths.items()},
        None if latency is None else float(latency),
    )


def request_times(
    work: RequestWork,
    figures: DeviceFigures,
    latency: Fraction | None,
    links: Mapping[str, Link],
) -> RequestTimes:
    """Each point's ttft and summed decode time on a device (see the module)."""
    return request_times_on(work, [(figures, latency, links)])[0]


def request_times_on(
    work: RequestWork, devices: Sequence[DeviceRoof], points: Sequence[Ints] | None = None
) -> list[RequestTimes]:
    """`request_times` on each of `devices`, in order, at the points `points[k]` of
    device k (indices into `work.points`; None: every point), the others declined.
    Devices that quote the same levels and launch floor are worked out together, one
    element per point and device (numpy's cost is in its calls)."""
    passes = [work.prefill, *(p for _, _, p in work.decodes)]
    precisions = sorted(
        {s.precision for p in passes for s in p.memory}
        | {c.precision for p in passes for c in p.collectives}
    )
    levels = sorted({lv for p in passes for s in p.memory for lv, _, _ in s.traffic})
    every = np.arange(work.size, dtype=np.int64)
    wanted = [every] * len(devices) if points is None else list(points)
    groups: dict[tuple[object, ...], list[int]] = {}
    for k, (figures, latency, _) in enumerate(devices):
        quoted = tuple(lv in figures.bandwidths for lv in levels)
        groups.setdefault((quoted, latency is None), []).append(k)
    found: dict[int, RequestTimes] = {}
    for members in groups.values():
        own = [wanted[k] for k in members]
        index = np.concatenate(own) if own else every[:0]
        at = np.repeat(np.arange(len(members)), [len(i) for i in own])
        roofs = _Roofs.of([devices[k] for k in members], precisions, levels, at)
        elements = _times(work, index, roofs)
        start = 0
        for k, i in zip(members, own, strict=True):
            found[k] = elements.spread(work, slice(start, start + len(i)), i)
            start += len(i)
    return [found[k] for k in range(len(devices))]


@dataclass(frozen=True)
class _Elements:
    """`RequestTimes`' figures per element (a point on a device)."""

    ttft: Floats
    decode: Floats
    declined: Bools
    prefill_talk: Bools
    decode_talk: Bools
    floors: tuple[tuple[tuple[int, Bools], ...], tuple[tuple[int, Bools], ...]]

    def spread(self, work: RequestWork, own: slice, index: Ints) -> RequestTimes:
        """One device's figures (the elements `own`, at the points `index`) over every
        point of `work`: those not at `index` declined."""
        size = work.size

        def put(values: Floats, fill: float) -> Floats:
            out = np.full(size, fill)
            out[index] = values[own]
            return out

        def flag(values: Bools, fill: bool) -> Bools:
            out = np.full(size, fill, dtype=np.bool_)
            out[index] = values[own]
            return out

        passes = (work.prefill, work.decode)
        floors = tuple(
            tuple((pass_.collectives[place], flag(held, False)) for place, held in floored)
            for pass_, floored in zip(passes, self.floors, strict=True)
            if pass_ is not None
        )
        return RequestTimes(
            put(self.ttft, np.nan),
            put(self.decode, np.nan),
            flag(self.declined, True),
            flag(self.prefill_talk, False),
            flag(self.decode_talk, False),
            (floors[0], floors[1] if len(floors) > 1 else ()),
        )


def _times(work: RequestWork, index: Ints, roofs: _Roofs) -> _Elements:
    """The ttft and decode sum of each element: the point `index[e]` on its device."""
    size = len(index)
    # The prefill: one pass
    prefill = work.prefill.take(index)
    memory = _flat(prefill.memory, roofs, size)
    talk, some, missing, prefill_floors = _talk(prefill.collectives, roofs, size)
    ttft = np.where(some, np.maximum(memory, talk), memory)
    prefill_talk = some & ~(talk * (1 + 4 * REL) < memory)
    declined = prefill.declined | missing
    none = np.zeros(size, dtype=np.bool_)
    if work.decode is None:
        # A single output token has no decode pass; a decode not in lines is declined.
        passes = work.last - work.first + 1
        return _Elements(
            ttft, np.zeros(size), declined | (passes > 0), prefill_talk, none, (prefill_floors, ())
        )
    # The collectives are the same in every run (none names L): from the first.
    talk, some, missing, decode_floors = _talk(work.decode.take(index).collectives, roofs, size)
    total = np.zeros(size)
    least = np.full(size, np.inf)
    for a, c, run in work.decodes:
        decode = run.take(index)
        # The steps whose counts are the same at every pass add a constant: one line
        flat = _flat([m for m in decode.memory if not m.varies], roofs, size)
        lines = [[(flat, np.zeros(size))]]
        lines += [_ceilings(m, roofs) for m in decode.memory if m.varies]
        own, low = _decode_sum(lines, talk, some, c - a + 1)
        total, least = total + own, np.minimum(least, low)
        declined = declined | decode.declined
    if work.per_pass != 1:
        total = total / float(work.per_pass)
    declined = declined | missing | ~np.isfinite(total) | ~np.isfinite(ttft)
    decode_talk = some & ~(talk * (1 + 4 * REL) < least)
    return _Elements(
        ttft, total, declined, prefill_talk, decode_talk, (prefill_floors, decode_floors)
    )


Groups = tuple[tuple[str, int], ...]


def clear_deployments(
    engine: ModelEngine, model: Model, deployments: Sequence[Deployment]
) -> dict[Deployment, Groups]:
    """The deployments of which `ModelEngine.deployment_problem` is None, shown on floats
    for all at once: in every phase the model names, every step's count and shape are
    whole numbers within the engine's limits (a count 1 or more, a shape 1 or more where
    the step runs) and each kernel's counts positive and clearly below the limit. With
    each, its collective steps that run in some phase and the widest span of their
    groups, the widest first (`ModelEngine._groups`, for `fabric_problem`). The others
    are left to the exact check, which names what is wrong."""
    ds = [d for d in deployments if d.problem() is None]
    size = len(ds)
    if not size:
        return {}
    catalog = engine.catalog
    columns: dict[str, Floats] = {
        name: np.array([d.variables()[name] for d in ds], dtype=np.float64)
        for name in ("tp", "pp", "ep", "dp")
    }
    ok = np.ones(size, dtype=np.bool_)
    limit = MAX_COUNT * (1 - REL)
    spans: dict[str, Floats] = {}  # a collective step's widest span (0: never runs)
    for variables in model.phases.values():
        env: dict[str, float | Floats] = {
            **{k: float(v) for k, v in model.parameters.items()},
            **{k: float(v) for k, v in variables.items()},
            **columns,
        }
        for step in model.steps:
            kernel = catalog.kernels[step.kernel]
            collective = kernel.collective is not None
            count = _column(evaluate_float(step.count, env), size)
            ok &= _whole(count, MAX_STEP_COUNT) & ((count >= 1) | collective)
            shape = {sym: _column(evaluate_float(f, env), size) for sym, f in step.shape.items()}
            runs = np.ones(size, dtype=np.bool_)
            if collective:
                n = shape.get("n", np.ones(size))
                runs = (n > 1) & (count > 0)
                span = n * _spread(step.shape["n"].symbols if "n" in step.shape else (), columns)
                spans[step.id] = np.maximum(spans.get(step.id, 0.0), np.where(runs, span, 0.0))
            for values in shape.values():
                ok &= _whole(values, MAX_SHAPE) & (~runs | (values >= 1))
            if collective:
                continue
            precision = step.precision or model.precision
            widths = width_values(
                kernel.widths, catalog.precisions[precision].bytes, step.widths, catalog.precisions
            )
            bound: dict[str, float | Floats] = {**shape}
            bound.update((k, float(v)) for k, v in widths.items())
            for formula in (kernel.flops, *kernel.bytes.values()):
                value = _column(evaluate_float(formula, bound), size)
                ok &= np.isfinite(value) & (value > 0) & (value < limit)
    rows = {step_id: widest.tolist() for step_id, widest in spans.items()}
    out: dict[Deployment, Groups] = {}
    for i, (d, good) in enumerate(zip(ds, ok.tolist(), strict=True)):
        if good:
            found = [(step_id, int(widths_[i])) for step_id, widths_ in rows.items() if widths_[i]]
            out[d] = tuple(sorted(found, key=lambda item: -item[1]))
    return out


def _spread(symbols: Iterable[str], degrees: Mapping[str, float | Floats]) -> float | Floats:
    """What a collective group's `n` is multiplied by to give the chips it spans, tp
    innermost (`group_span`): tp × pp for a group over replicas, tp for one over pipeline
    stages, 1 for a tp or ep group."""
    names = set(symbols)
    if "dp" in names:
        return degrees["tp"] * degrees["pp"]
    if "pp" in names:
        return degrees["tp"]
    return 1.0


def floored_talk(
    floors: Floors, i: int, links: Mapping[str, Link], launch: Fraction | None
) -> Fraction | None:
    """Point `i`'s collectives' summed time, exactly, where a floor is clearly the
    longest time of every one that runs at it: each run's count × the longer of its
    level's latency and the launch floor. None where one is not so held."""
    total = Fraction(0)
    for c, held in floors:
        if not c.runs[i]:
            continue
        if not held[i]:
            return None
        link = links[fabric_role(int(c.span[i]), links)]
        floor = max(
            link.latency if link.latency is not None else Fraction(0),
            launch if launch is not None else Fraction(0),
        )
        total += int(c.count[i]) * floor
    return total


def same_memory_time(
    passes: _Pass,
    i: int,
    j: int,
    peaks: Mapping[str, float],
    bandwidths: Mapping[str, float],
    launch: float | None,
    last: int,
) -> bool:
    """Whether points `i` and `j` spend exactly the same time in `passes`' memory steps at
    every pass, on a device: step by step, the same count and shapes, or the same count,
    the same ceiling the longest at both ends (pass offsets 0 and `last`) by more than
    `REL` and the same exact operations or bytes of it there (`_step_signature`)."""
    row_i, row_j = passes.memory_row(i), passes.memory_row(j)
    if row_i == row_j:
        return True
    for step, (start, stop) in zip(passes.memory, passes.memory_columns, strict=True):
        if row_i[start:stop] == row_j[start:stop]:
            continue
        one = _step_signature(step, i, peaks, bandwidths, launch, last)
        if one is None or one != _step_signature(step, j, peaks, bandwidths, launch, last):
            return False
    return True


def _step_signature(
    step: _MemoryStep,
    i: int,
    peaks: Mapping[str, float],
    bandwidths: Mapping[str, float],
    launch: float | None,
    last: int,
) -> tuple[int | Fraction, ...] | None:
    """What point `i`'s time in `step` depends on, where it can be told exactly: its
    count, the ceiling that is the longest at both ends by more than `REL`, and that
    ceiling's exact operations or bytes there; None where the ceiling is not clear or
    the counts not exact."""
    if step.exact is None and step.lazy is None:
        return None
    # `item`: a Python float at once (indexing makes a numpy scalar first)
    count = step.count.item(i)
    ends: list[int] = []
    for x in (0, last):
        a, slope = step.flops
        times = [count * (a.item(i) + slope.item(i) * x) / peaks[step.precision]]
        for lv, a, slope in step.traffic:
            bw = bandwidths.get(lv)
            times.append(-1.0 if bw is None else count * (a.item(i) + slope.item(i) * x) / bw)
        if launch is not None:
            times.append(count * launch)
        ranked = sorted(range(len(times)), key=times.__getitem__, reverse=True)
        top = ranked[0]
        if len(ranked) > 1 and not times[ranked[1]] * (1 + 4 * REL) < times[top]:
            return None
        ends.append(top)
    if ends[0] != ends[-1]:
        return None
    top = ends[0]
    if top == len(step.traffic) + 1:  # the launch floor: the count alone
        return (top, int(count))
    found = step.exact_at(i, top)
    if found is None:
        return None
    return (top, int(count), *found)


def exact_passes(
    work: RequestWork,
    times: RequestTimes,
    i: int,
    figures: DeviceFigures,
    latency: Fraction | None,
    links: Mapping[str, Link],
) -> tuple[Fraction, Fraction] | None:
    """Point `i`'s prefill time and decode passes' summed time (s) exactly, as
    `requests.request_passes` gives them, where the float path shows what holds every
    step: each memory step's longest ceiling clearly the longest at both ends of the
    decode (so at every pass between: its ceilings are lines), and the collectives, if
    any, clearly below the memory steps or each held by its floor (`floored_talk`, with
    the device's `links`). Then each step's time is its count × its ceiling's exact
    operations or bytes (`_step_signature`) over the device's exact rate; a pass's time
    is the longer of the memory steps' and the collectives' (`time_overlapped`), summed
    over the decode passes in closed form (the memory steps' time is a line in the pass,
    the collectives' a constant). None elsewhere: the exact engine tells."""
    if times.declined[i]:
        return None
    rates = device_rates(figures, latency)
    ends = _memory_ends(work.prefill, i, figures, latency, rates, 0)
    if ends is None:
        return None
    ttft = ends[0]
    if times.prefill_talk[i]:
        held = floored_talk(times.floors[0], i, links, latency)
        if held is None:
            return None
        ttft = max(ttft, held)
    passes = work.last - work.first + 1
    if work.decode is None:
        return (ttft, Fraction(0)) if passes <= 0 else None
    talk: Fraction | None = None
    if times.decode_talk[i]:
        talk = floored_talk(times.floors[1], i, links, latency)
        if talk is None:
            return None
    total = Fraction(0)
    for a, c, run in work.decodes:
        ends = _memory_ends(run, i, figures, latency, rates, c - a)
        if ends is None:
            return None
        if talk is None:
            total += (c - a + 1) * (ends[0] + ends[1]) / 2
        else:
            total += overlapped_sum(ends[0], ends[1], talk, c - a + 1)
    return ttft, total / work.per_pass


def overlapped_sum(first: Fraction, last: Fraction, talk: Fraction, passes: int) -> Fraction:
    """Σ over x = 0 .. passes - 1 of max(M(x), talk), M the line from `first` (x = 0) to
    `last` (x = passes - 1), exactly: the passes on either side of the crossing summed
    apart, each side an arithmetic series or a constant."""
    if passes == 1 or first == last:
        return passes * max(first, talk)
    slope = (last - first) / (passes - 1)

    def at(x: int) -> Fraction:
        return first + slope * x

    if slope > 0:  # the first k passes below talk, held at it
        k = min(max(math.ceil((talk - first) / slope), 0), passes)
        line = (passes - k) * (at(k) + last) / 2 if k < passes else Fraction(0)
        return k * talk + line
    # Falling: the first k passes at or above talk, on the line
    k = min(max(math.floor((first - talk) / -slope) + 1, 0), passes)
    line = k * (first + at(k - 1)) / 2 if k > 0 else Fraction(0)
    return line + (passes - k) * talk


def _memory_ends(
    passes_: _Pass,
    i: int,
    figures: DeviceFigures,
    latency: Fraction | None,
    rates: Rates,
    last: int,
) -> tuple[Fraction, Fraction] | None:
    """The memory steps' time of one pass at the first pass and at offset `last`
    (the same for one pass), exactly (see `exact_passes`)."""
    peaks, bandwidths, launch = rates
    # The operations or bytes of the passes at both ends, per ceiling (a precision's peak
    # or a level's bandwidth), and the launches: exact (whole numbers but for a fractional
    # width's bytes), divided once each
    work: dict[tuple[str, str], tuple[int | Fraction, int | Fraction]] = {}
    launches = 0
    for step in passes_.memory:
        signature = _step_signature(step, i, peaks, bandwidths, launch, last)
        if signature is None:
            return None
        if len(signature) == 2:  # the launch floor: the count alone
            launches += int(signature[1])
            continue
        top, count, first, final = signature
        place = int(top)
        ceiling = ("peak", step.precision) if place == 0 else ("level", step.traffic[place - 1][0])
        a, z = work.get(ceiling, (0, 0))
        work[ceiling] = (a + count * first, z + count * final)
    at_first, at_last = Fraction(0), Fraction(0)
    for (kind, key), (a, z) in work.items():
        rate = figures.peaks[key] if kind == "peak" else figures.bandwidths[key]
        at_first += a / rate
        at_last += z / rate
    if launches:
        assert latency is not None
        at_first += launches * latency
        at_last += launches * latency
    return at_first, at_last
