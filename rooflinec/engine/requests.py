"""Requests: a static batch of `b` requests of `input` and `output` tokens on a deployment.

DESIGN v3, "Requests and `plan`": every figure is on the pass's `time_overlapped` (its
`time` when the pass has no collective). The prefill pass at b, s = L = input yields the
first token (`ttft`); the output - 1 decode passes follow, pass j at s = 1, L = input + j;
`itl` is their exact mean and `latency` = ttft + (output - 1) × itl. Rates, cost and
energy follow from those with the small pure functions below.

Under speculation (`RequestShape.speculation`: k drafted tokens, acceptance α) each
decode pass is a verify pass of s = k + 1 tokens over k more keys (pass j at L = input +
j + k), and yields (1 − α^(k+1))/(1 − α) tokens on average: each of the output − 1
tokens after the first costs that share of the verify pass at its place. The draft's
own work (a draft model, prediction heads) is not counted: the bound stays a bound.

The decode passes are summed in closed form where they can be: each step's run is a
max over ceilings of polynomials in L (operations over the peak, bytes over each
bandwidth, the launch floor), so the pass's time is piecewise polynomial in L. Only the
steps whose shape names `L` vary (attention, usually); the others' time is the same at
every L and is read off the first decode pass the engine evaluates. The pieces' ends are
the integers beside the real roots of every difference of two ceilings of one step
(`solve_poly.critical_integers`, exact), and of the memory steps' sum against the
collectives' (for `time_overlapped`); inside a piece each step keeps one ceiling, and the
piece's sum is an arithmetic (Newton forward-difference) series. A kernel formula with
`min` or `max` of L (a sliding window's `min(L, W)`) is a polynomial on runs of L
(`solve_piecewise.cuts`), each summed so. Where a shape formula is not a polynomial in L,
a shape that is not a whole number for every L, or a collective that varies with L, each
pass is evaluated in turn: exact either way, and a test checks that both agree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from itertools import pairwise
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from rooflinec.catalog import LEVELS, Deployment, Model, RequestShape, Speculation
from rooflinec.engine.evaluate import width_values
from rooflinec.engine.memory import MemoryFit
from rooflinec.engine.models import DeploymentError, ModelEngine, ModelResult, RunPoint
from rooflinec.engine.solve_interval import folded
from rooflinec.engine.solve_piecewise import cuts, on_run, piece_degree, spans
from rooflinec.engine.solve_poly import Poly, coefficients, critical_integers, trim
from rooflinec.engine.step_crossover import composed
from rooflinec.formulas import EvaluationError, FormulaError
from rooflinec.formulas.tree import _Node

if TYPE_CHECKING:
    from rooflinec.engine.cells import DeviceFigures

__all__ = [
    "DecodeSum",
    "Piece",
    "RequestBatch",
    "RequestResult",
    "RequestShape",
    "decode_curve",
    "decode_keys",
    "decode_sum",
    "evaluate_request",
    "joules_per_token",
    "pass_time",
    "request_fit",
    "request_passes",
    "tokens_per_second_per_kw",
    "usd_per_million_tokens",
]

#: The run variable the decode passes vary.
KEYS = "L"
_ZERO = Fraction(0)
#: The most decode passes evaluated one by one (where the closed form does not apply):
#: more would take minutes, not the milliseconds a command line answers in.
MAX_ONE_BY_ONE = 1 << 16
_SECONDS_PER_HOUR = 3600
_MILLION = 10**6


@dataclass(frozen=True)
class RequestResult:
    """One deployment's figures for a static batch of `batch` requests of one shape."""

    model: str
    device: str
    precision: str
    deployment: Deployment
    batch: int
    input: int
    output: int
    # The ledger at the request's peak (the prefill's activations, the last decode pass's
    # keys): both fit; None when the model has no ledger (or the device no capacity).
    fits: bool | None
    needs_chips: int | None
    ttft: Fraction  # s: the prefill pass at b, s = L = input
    itl: Fraction | None  # s: the decode passes' exact mean; None when output == 1
    latency: Fraction  # s: ttft + (output - 1) × itl
    tokens_per_second_per_user: Fraction | None  # 1 / itl
    tokens_per_second: Fraction  # b × output / latency × dp
    tokens_per_second_per_chip: Fraction
    usd_per_million_tokens: Fraction | None  # None without a price
    price_source: str | None  # "quoted" (the device's `price`), "reader" (given), None
    joules_per_token: Fraction | None  # at board power; None without the device's power
    tokens_per_second_per_kw: Fraction | None  # of board power
    speculation: Speculation | None = None  # how the tokens after the first are decoded

    @property
    def chips(self) -> int:
        return self.deployment.total

    @property
    def draft_tokens(self) -> int | None:
        """The tokens a verify pass drafts under speculation; None without."""
        return None if self.speculation is None else self.speculation.k

    @property
    def acceptance(self) -> Fraction | None:
        """The chance each drafted token is kept; None without speculation."""
        return None if self.speculation is None else self.speculation.acceptance

    @property
    def tokens_per_pass(self) -> Fraction:
        """The tokens a decode pass yields on average: 1, or a verify pass's."""
        if self.speculation is None:
            return Fraction(1)
        return self.speculation.tokens_per_verify


@dataclass(frozen=True)
class RequestBatch:
    """A static batch of `batch` requests of `shape`, of `model` at `precision` under
    `deployment`: what a request's passes are planned for, the same on every device."""

    model: Model
    precision: str
    deployment: Deployment
    batch: int
    shape: RequestShape

    @property
    def key(self) -> tuple[str, str, Deployment, int, RequestShape]:
        """What tells two batches apart, hashable (a model is not)."""
        return self.model.id, self.precision, self.deployment, self.batch, self.shape

    def prefill(self) -> RunPoint:
        """The prefill pass: b, s = L = input."""
        return RunPoint(self.batch, self.shape.input, self.shape.input)

    def decode(self, keys: int) -> RunPoint:
        """The decode (or verify) pass at L = `keys`."""
        return RunPoint(self.batch, self.shape.drafted + 1, keys)

    def run(self, engine: ModelEngine, point: RunPoint, figures: DeviceFigures) -> ModelResult:
        """One pass of the batch on `figures`."""
        return _pass(engine, self.model, point, figures, self.precision, self.deployment)


# ---------------------------------------------------------------------- cost and energy


def usd_per_million_tokens(
    price_per_chip_hour: Fraction, chips: int, tokens_per_second: Fraction
) -> Fraction:
    """US dollars per million tokens: the deployment's dollars per second over its tokens
    per second, × 10^6 (llm-analysis' cost per 1k tokens is this over 1000)."""
    return Fraction(price_per_chip_hour) * chips / _SECONDS_PER_HOUR / tokens_per_second * _MILLION


def joules_per_token(
    power_per_chip: Fraction, chips: int, seconds: Fraction, tokens: int
) -> Fraction:
    """Joules per token at board power: every chip at its printed power for `seconds`,
    over the `tokens` made meanwhile. A reference figure, not a bound either way (the
    power bounds the draw from above, the time the duration from below)."""
    return Fraction(power_per_chip) * chips * seconds / tokens


def tokens_per_second_per_kw(
    tokens_per_second: Fraction, power_per_chip: Fraction, chips: int
) -> Fraction:
    """Tokens per second per kilowatt of board power."""
    return tokens_per_second * 1000 / (Fraction(power_per_chip) * chips)


# ---------------------------------------------------------------------- passes


def pass_time(row: ModelResult) -> Fraction:
    """The time a request counts for a pass: `time_overlapped`, or `time` when the pass
    has no collective."""
    return row.time if row.time_overlapped is None else row.time_overlapped


def _pass(
    engine: ModelEngine,
    model: Model,
    point: RunPoint,
    figures: DeviceFigures,
    precision: str,
    deployment: Deployment,
) -> ModelResult:
    return engine.evaluate(
        model,
        point,
        figures,
        precision,
        engine.latencies.get(figures.id),
        deployment=deployment,
    )


@dataclass(frozen=True)
class Piece:
    """Consecutive decode passes (L = first..last) whose time is one polynomial in L
    (`poly`, constant term first, s); `total` is their sum, s."""

    first: int
    last: int
    poly: Poly
    total: Fraction


@dataclass(frozen=True)
class DecodeSum:
    """The output - 1 decode passes of a request: their summed time (s) and, in closed
    form, the pieces; `closed` is False where each pass was evaluated in turn (then each
    pass is a piece of its own, with a constant polynomial)."""

    total: Fraction
    pieces: tuple[Piece, ...]
    closed: bool


def series(poly: Poly, first: int, last: int) -> Fraction:
    """Σ poly(x) for x = first..last, exactly: Newton's forward differences at `first`,
    Σ_k Δ^k p(first) × C(n, k + 1) over the n = last - first + 1 terms."""
    n = last - first + 1
    if n <= 0 or not poly:
        return _ZERO
    values = [_horner(poly, first + k) for k in range(len(poly))]
    total = _ZERO
    for k in range(len(values)):
        total += values[0] * math.comb(n, k + 1)
        values = [b - a for a, b in pairwise(values)]
    return total


def _horner(poly: Poly, x: int) -> Fraction:
    value = _ZERO
    for c in reversed(poly):
        value = value * x + c
    return value


def _add(p: Poly, q: Poly, scale: Fraction | int = 1) -> Poly:
    """p + scale·q."""
    if scale == 1:  # a sum: no product per coefficient
        short, long_ = (p, q) if len(p) <= len(q) else (q, p)
        return trim([a + b for a, b in zip(short, long_, strict=False)] + list(long_[len(short) :]))
    if scale == -1:
        n = max(len(p), len(q))
        return trim(
            [(p[i] if i < len(p) else _ZERO) - (q[i] if i < len(q) else _ZERO) for i in range(n)]
        )
    if not p:  # a ceiling: one product per coefficient, no sum with zero
        return trim([scale * c for c in q])
    n = max(len(p), len(q))
    return trim(
        [
            (p[i] if i < len(p) else _ZERO) + scale * (q[i] if i < len(q) else _ZERO)
            for i in range(n)
        ]
    )


@dataclass(frozen=True)
class _VaryingStep:
    """A memory step whose counts vary with L: one run's operations and bytes per level
    as trees in L (b, s and the deployment bound, `folded`), each a polynomial on the runs
    of L between its `cuts` (one run, where no `min` or `max` names L)."""

    index: int
    precision: str
    count: int
    flops: _Node
    traffic: tuple[tuple[str, _Node], ...]
    values: dict[str, int | Fraction]

    def polys(self, first: int, last: int) -> tuple[Poly, list[tuple[str, Poly]]] | None:
        """The step's operations and bytes per level as polynomials on L = first..last,
        where none of its calls changes argument; None when the run is too short to
        interpolate (its passes are then taken one at a time)."""
        flops = on_run(self.flops, self.values, KEYS, first, last)
        if flops is None:
            return None
        traffic: list[tuple[str, Poly]] = []
        for lv, tree in self.traffic:
            poly = on_run(tree, self.values, KEYS, first, last)
            if poly is None:
                return None
            traffic.append((lv, poly))
        return flops, traffic

    def cuts(self, first: int, last: int) -> set[int] | None:
        """Where any of the step's calls changes argument over L = first..last (`cuts`);
        None: not piecewise polynomial in L."""
        out: set[int] = set()
        for tree in (self.flops, *(t for _, t in self.traffic)):
            found = cuts(tree, self.values, KEYS, first, last)
            if found is None:
                return None
            out |= found
        return out


_Segment = tuple[int, int, list[tuple[Poly, list[tuple[str, Poly]]]]]


@dataclass(frozen=True)
class _Curve:
    """The varying steps of a pass (`_VaryingStep`), and per decode range the runs of L
    on which each is one polynomial, with those polynomials (kept: the same on every
    device)."""

    steps: tuple[_VaryingStep, ...]
    known: dict[tuple[int, int], list[_Segment] | None] = field(default_factory=dict)

    def segments(self, first: int, last: int) -> list[_Segment] | None:
        """L = first..last as runs (a, c) with every varying step's polynomials on it;
        None where a step is not piecewise polynomial in L."""
        key = (first, last)
        if key not in self.known:
            self.known[key] = self._segments(first, last)
        return self.known[key]

    def _segments(self, first: int, last: int) -> list[_Segment] | None:
        points = {first, last}
        for step in self.steps:
            found = step.cuts(first, last)
            if found is None:
                return None
            points |= found
        out: list[_Segment] = []
        for a, c in spans(first, last, points):
            polys = [step.polys(a, c) for step in self.steps]
            if any(p is None for p in polys):
                # Too short to interpolate: each pass of it on its own.
                for x in range(a, c + 1):
                    own = [step.polys(x, x) for step in self.steps]
                    out.append((x, x, [p for p in own if p is not None]))
                continue
            out.append((a, c, [p for p in polys if p is not None]))
        return out


_Curves = dict[tuple[str, str, Deployment, int, int], _Curve | None]
# Per engine, per (model, precision, deployment, b, s): the varying steps, or None where the
# passes must be evaluated in turn. The same on every device, so found once for all; kept
# as long as the engine is.
_CURVES: WeakKeyDictionary[ModelEngine, _Curves] = WeakKeyDictionary()


def _varying_steps(engine: ModelEngine, at: RequestBatch) -> _Curve | None:
    """The decode passes' varying steps, kept per engine: batches whose requests differ
    only in their token counts share them."""
    known = _CURVES.get(engine)
    if known is None:
        known = _CURVES[engine] = {}
    key = (at.model.id, at.precision, at.deployment, at.batch, at.shape.drafted + 1)
    if key not in known:
        try:
            steps = _curves(engine, at)
            found = None if steps is None else _Curve(steps)
        except (EvaluationError, FormulaError, ZeroDivisionError):
            found = None  # each pass in turn, which says what is wrong, if anything
        known[key] = found
    return known[key]


def _curves(engine: ModelEngine, request: RequestBatch) -> tuple[_VaryingStep, ...] | None:
    catalog, model, precision = engine.catalog, request.model, request.precision
    scope: dict[str, int | Fraction] = {
        **model.parameters,
        "b": request.batch,
        "s": request.shape.drafted + 1,
        **request.deployment.variables(),
    }
    out: list[_VaryingStep] = []
    for index, step in enumerate(model.steps):
        kernel = catalog.kernels[step.kernel]
        names = [f for f in step.shape.values() if KEYS in f.symbols]
        if KEYS in step.count.symbols:
            return None
        if not names:
            continue  # the same run at every L
        if kernel.collective is not None:
            return None  # a message that grows with L: its level's bound per pass
        for formula in names:
            # A whole number at every L, positive between two positive ends
            shape = coefficients(formula, scope, KEYS)
            if shape is None or len(shape) > 2 or any(c.denominator != 1 for c in shape):
                return None
            if len(shape) == 2 and shape[1] < 0:
                return None  # shrinks with L: not checked at the last pass
        at = step.precision or precision
        values = {
            **scope,
            **width_values(
                kernel.widths, catalog.precisions[at].bytes, step.widths, catalog.precisions
            ),
        }
        found = composed(kernel, step, model)
        if found is None:
            return None
        flops_f, traffic_f = found
        if piece_degree(flops_f._tree, KEYS) is None:
            return None
        traffic: list[tuple[str, _Node]] = []
        for lv in LEVELS:
            if lv in traffic_f:
                if piece_degree(traffic_f[lv]._tree, KEYS) is None:
                    return None
                traffic.append((lv, folded(traffic_f[lv], values, KEYS)))
        count = int(step.count.evaluate(scope))
        flops = folded(flops_f, values, KEYS)
        out.append(_VaryingStep(index, at, count, flops, tuple(traffic), values))
    return tuple(out)


def _one_by_one(
    engine: ModelEngine, figures: DeviceFigures, at: RequestBatch, first: int, last: int
) -> DecodeSum:
    pieces = []
    total = _ZERO
    for keys in range(first, last + 1):
        t = pass_time(at.run(engine, at.decode(keys), figures))
        total += t
        pieces.append(Piece(keys, keys, (t,) if t else (), t))
    return DecodeSum(total, tuple(pieces), False)


def decode_keys(shape: RequestShape) -> tuple[int, int]:
    """The keys of a request's first and last decode pass: L = input + 1 .. input +
    output - 1, shifted by the draft under speculation (last < first: none)."""
    drafted = shape.drafted
    return shape.input + 1 + drafted, shape.input + shape.output - 1 + drafted


def decode_curve(
    engine: ModelEngine, at: RequestBatch, closed: bool = True
) -> tuple[_Curve | None, list[_Segment] | None]:
    """The varying steps of a request's decode passes and their polynomials on the runs
    of L (both None where the passes must be taken one by one: `closed=False`, or not a
    polynomial in L). Raises `DeploymentError` when that is more passes than
    `MAX_ONE_BY_ONE`."""
    first, last = decode_keys(at.shape)
    curve = _varying_steps(engine, at) if closed else None
    segments = None if curve is None else curve.segments(first, last)
    if (curve is None or segments is None) and last - first + 1 > MAX_ONE_BY_ONE:
        raise DeploymentError(
            f"model '{at.model.id}': its decode passes are not a polynomial in L, and"
            f" {last - first + 1:,} of them are more than the {MAX_ONE_BY_ONE:,}"
            " evaluated one by one"
        )
    return curve, segments


def decode_sum(
    engine: ModelEngine, figures: DeviceFigures, at: RequestBatch, *, closed: bool = True
) -> DecodeSum:
    """The summed time of a request's output - 1 decode passes (L = input + 1 .. input +
    output - 1, s = 1; under speculation, verify passes of s = k + 1 at k more keys each),
    in closed form where the formulas allow (`closed=False`: each pass in turn, always).
    The sum is of the passes' times: a token's share of a verify pass is the caller's."""
    first, last = decode_keys(at.shape)
    if last < first:
        return DecodeSum(_ZERO, (), True)
    curve, segments = decode_curve(engine, at, closed)
    if curve is None or segments is None:
        return _one_by_one(engine, figures, at, first, last)
    # The first pass through the engine: it checks the deployment's shapes, and gives the
    # time of every step that does not vary with L and of the collectives.
    row = at.run(engine, at.decode(first), figures)
    plan = row.plan
    assert plan is not None
    steps = curve.steps
    varying = {s.index for s in steps}
    const_n, const_d = 0, 1
    for entry, (n, d, _) in zip(plan.steps, row.runs, strict=True):
        if entry.position in varying:
            continue
        n *= entry.counts.count
        const_n, const_d = const_n * d + n * const_d, const_d * d
    constant = Fraction(const_n, const_d)
    talk: Fraction | None = None
    if plan.collectives:
        talk = sum(
            (
                b.time * c.count
                for c, b in zip(plan.collectives, row.collective_bounds, strict=True)
            ),
            _ZERO,
        )
    latency = engine.latencies.get(figures.id)
    pieces: list[Piece] = []
    for start, end, polys in segments:
        # Each varying step's ceilings as polynomials of its `count` runs' time in L.
        ceilings: list[list[Poly]] = []
        for s, (flops, traffic) in zip(steps, polys, strict=True):
            peak = figures.peaks[s.precision]
            own = [_add((), flops, Fraction(s.count) / peak)]
            for lv, poly in traffic:
                bw = figures.bandwidths.get(lv)
                if bw is not None:
                    own.append(_add((), poly, Fraction(s.count) / bw))
            if latency is not None:
                own.append(trim([latency * s.count]))
            ceilings.append(own)
        cut: set[int] = set()
        for own in ceilings:
            for i, p in enumerate(own):
                for q in own[i + 1 :]:
                    cut |= critical_integers(_add(p, q, -1), start, end)
        for a, c in spans(start, end, cut):
            memory: Poly = trim([constant])
            for own in ceilings:
                memory = _add(memory, max(own, key=lambda p: _horner(p, a)))
            if talk is None:
                pieces.append(Piece(a, c, memory, series(memory, a, c)))
                continue
            # time_overlapped: the longer of the memory steps' sum and the collectives'
            flat = trim([talk])
            for a2, c2 in spans(a, c, critical_integers(_add(memory, flat, -1), a, c)):
                poly = memory if _horner(memory, a2) >= talk else flat
                pieces.append(Piece(a2, c2, poly, series(poly, a2, c2)))
    merged = _merged(pieces)
    return DecodeSum(sum((p.total for p in merged), _ZERO), merged, True)


def _merged(pieces: list[Piece]) -> tuple[Piece, ...]:
    """Neighbouring pieces with the same polynomial as one."""
    out: list[Piece] = []
    for p in pieces:
        if out and out[-1].poly == p.poly and out[-1].last + 1 == p.first:
            q = out[-1]
            out[-1] = Piece(q.first, p.last, p.poly, q.total + p.total)
        else:
            out.append(p)
    return tuple(out)


# ---------------------------------------------------------------------- the request


def request_fit(engine: ModelEngine, device: str, at: RequestBatch) -> MemoryFit | None:
    """The ledger at the request's peak: the one of its two ends that fits worse (the
    prefill's activations at L = input; the last pass's keys at L = input + output - 1,
    and the k drafted tokens' under speculation), the prefill's on a tie, with the chips
    both ends fit on when neither fits; None without a ledger."""
    if device not in engine.catalog.devices:
        return None
    memory, shape = engine.memory, at.shape
    ends = [{"b": at.batch, "s": shape.input, "L": shape.input}]
    if shape.output > 1:
        drafted = shape.drafted
        last = shape.input + shape.output - 1 + drafted
        ends.append({"b": at.batch, "s": drafted + 1, "L": last})
    fits = [memory.fit_at(at.model, run, at.precision, device, at.deployment) for run in ends]
    if any(f is None for f in fits):
        return None
    found = [f for f in fits if f is not None]
    worst = max(found, key=lambda f: f.ledger.total)
    short = [f.needs_chips for f in found if f.fits is False]
    if len(short) < 2:
        return worst
    # Both ends short: the chips both fit on (None when one fits on none tried)
    needs = None if None in short else max(n for n in short if n is not None)
    return replace(worst, needs_chips=needs)


def request_passes(
    engine: ModelEngine, figures: DeviceFigures, at: RequestBatch
) -> tuple[Fraction, Fraction]:
    """A request's prefill time (its ttft) and its decode's time, s, exactly (the
    deployment checked by the caller): the decode passes' sum over the tokens each
    yields (1, or the verify pass's under speculation)."""
    prefill = at.run(engine, at.prefill(), figures)
    if at.shape.output == 1:
        return pass_time(prefill), _ZERO
    decode = decode_sum(engine, figures, at)
    return pass_time(prefill), decode.total / at.shape.tokens_per_pass


def evaluate_request(
    engine: ModelEngine,
    model_id: str,
    device: str,
    precision: str,
    deployment: Deployment,
    batch: int,
    shape: RequestShape,
    price: Fraction | None = None,
) -> RequestResult:
    """A static batch of `batch` requests of `shape` on `device` under `deployment`
    (`price`: the reader's USD per chip-hour, in place of the device's quoted one).

    Raises `DeploymentError` when the model or the device cannot run the deployment (or a
    pass's shapes are not whole numbers, or more than `MAX_ONE_BY_ONE` decode passes are
    not a polynomial in L), `ValueError` for a batch below 1 or a
    precision the device has no peak for, `KeyError` for an unknown model or device."""
    if type(batch) is not int or batch < 1:
        raise ValueError(f"batch = {batch!r}: a batch has 1 request or more")
    model = engine.catalog.models[model_id]
    figures = engine.devices[device]
    if precision not in figures.peaks:
        raise ValueError(f"device '{device}' has no peak at {precision}")
    problem = engine.deployment_problem(model, deployment)
    if problem is None:
        problem = engine.fabric_problem(model, device, deployment)
    if problem is not None:
        raise DeploymentError(problem)
    at = RequestBatch(model, precision, deployment, batch, shape)
    ttft, decoding = request_passes(engine, figures, at)
    itl: Fraction | None = None
    latency = ttft
    if shape.output > 1:
        itl = decoding / (shape.output - 1)
        latency = ttft + decoding
    chips, dp = deployment.total, deployment.dp
    tokens = batch * shape.output * dp
    rate = tokens / latency
    fit = request_fit(engine, device, at)
    spec = engine.catalog.devices.get(device)
    source: str | None = None
    if price is not None:
        source = "reader"
    elif spec is not None and spec.price is not None:
        price, source = spec.price.per_hour, "quoted"
    power = spec.power.per_chip if spec is not None and spec.power is not None else None
    return RequestResult(
        model.id,
        device,
        precision,
        deployment,
        batch,
        shape.input,
        shape.output,
        None if fit is None else fit.fits,
        None if fit is None else fit.needs_chips,
        ttft,
        itl,
        latency,
        None if itl is None else 1 / itl,
        rate,
        rate / chips,
        None if price is None else usd_per_million_tokens(price, chips, rate),
        source,
        None if power is None else joules_per_token(power, chips, latency, tokens),
        None if power is None else tokens_per_second_per_kw(rate, power, chips),
        shape.speculation,
    )
