"""Serving bounds: every measured serving result beside the bound it must not beat.

DESIGN v3, "Measured serving". Every figure is on the passes' `time_overlapped`:

- `ttft`: the prefill pass at b = 1, s = L = input (queueing is not modelled, so a
  loaded server's first token only comes later);
- `itl`: the decode passes' exact mean at b = 1 (a request's tokens only come slower
  in a larger batch), `user_rate` its inverse;
- `output_rate`: b × output × replicas / max(Σ operations / peak, Σ decode-pass bytes /
  DRAM bandwidth) over one replica's requests, where b is the most sequences that can be
  resident (the largest batch whose KV cache at input + 1 keys fits beside the weights,
  no reserve, no activations), capped by the concurrency; a static batch B at B. Each
  chip does its share of the work (the shapes are per chip, and a pipeline's stages split
  the layers), and no schedule does less: chunked prefill, paged caches and in-flight
  batching included. The prefill's bytes are left out (they may be read with a decode
  pass's), its operations are not;
- `energy`: shown, not bounded (board power × a bound's time bounds nothing).

A result that names a `technique` with a draft (`speculation: {k}`) is bounded at
acceptance 1: each verify pass yields k + 1 tokens. Its ratio may still fall below 1
(other techniques: prefix caching) without being an error; one that names no technique
and beats its bound is a `check` error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from rooflinec.catalog import (
    SERVING_METRICS,
    Deployment,
    Model,
    RequestShape,
    ServingResult,
)
from rooflinec.engine.memory import device_capacity, largest_cache_batch, ledger_terms
from rooflinec.engine.models import DeploymentError, ModelEngine, ModelResult
from rooflinec.engine.requests import (
    RequestBatch,
    decode_curve,
    decode_keys,
    decode_sum,
    pass_time,
    series,
)
from rooflinec.errors import Diagnostic
from rooflinec.formatting import format_number, format_si
from rooflinec.formulas import EvaluationError, FormulaError

if TYPE_CHECKING:
    from rooflinec.engine.cells import DeviceFigures
    from rooflinec.engine.models import Plan

__all__ = [
    "RATES",
    "TIMES",
    "ServingPoint",
    "serving_diagnostics",
    "serving_points",
]

#: Metrics whose bound is a least time (ratio = measured / bound) and a most rate
#: (ratio = bound / measured): both ratios are 1 or more when the bound holds.
TIMES = frozenset({"ttft", "itl"})
RATES = frozenset({"output_rate", "user_rate"})
_DRAM = "dram"
_ZERO = Fraction(0)
#: The most sequences a resident batch is searched up to (a bound's b; the ledger's own
#: search stops there too).
_MOST_RESIDENT = 1 << 20


@dataclass(frozen=True)
class ServingPoint:
    """One metric of one serving result, its bound and the pass regime the bound sits in.

    `bound` is None where no bound applies (`energy`) or none could be found (`problem`
    says why); `batch` the sequences the bound is at; `regime` the limit of the pass that
    sets it (the prefill's for `ttft`, else the decode pass's at L = input + ⌈output/2⌉)."""

    model: str
    result: ServingResult
    metric: str
    measured: Fraction
    bound: Fraction | None
    batch: int | None
    regime: str | None
    problem: str | None = None
    # The place of an output-rate bound on the latency–throughput frontier: the tokens
    # per second each request gets at the bound's batch (1 / its decode passes' mean
    # time), beside the bound's tokens per second per chip; None elsewhere (and for
    # `check`, which does not read it).
    user_rate_at_batch: Fraction | None = None

    @property
    def chip_rate(self) -> Fraction | None:
        """An output rate's bound per chip of the deployment."""
        if self.metric != "output_rate" or self.bound is None:
            return None
        return self.bound / self.result.deployment.total

    @property
    def ratio(self) -> Fraction | None:
        """Measured over bound for a time, bound over measured for a rate: 1 or more
        when the bound holds; None without a bound."""
        if self.bound is None or self.metric not in TIMES | RATES:
            return None
        if self.metric in TIMES:
            return self.measured / self.bound
        return self.bound / self.measured

    @property
    def beats(self) -> bool:
        """The measurement is better than its bound allows."""
        ratio = self.ratio
        return ratio is not None and ratio < 1

    @property
    def device(self) -> str:
        return self.result.device


# ---------------------------------------------------------------------- work sums


def _plan_work(
    plan: Plan,
    flops: dict[str, Fraction],
    scale: int | Fraction = 1,
    skip: frozenset[int] = frozenset(),
) -> Fraction:
    """Adds a pass's operations per precision to `flops` (times `scale`); its DRAM bytes.
    The steps at the positions in `skip` are left out."""
    dram = _ZERO
    for entry in plan.steps:
        if entry.position in skip:
            continue
        counts = entry.counts
        flops[entry.precision] = flops.get(entry.precision, _ZERO) + counts.total_flops * scale
        dram += counts.total_bytes.get(_DRAM, _ZERO) * scale
    return dram


def _decode_work(engine: ModelEngine, at: RequestBatch) -> tuple[dict[str, Fraction], Fraction]:
    """The decode passes' operations per precision and DRAM bytes, summed exactly over
    L = input + 1 .. input + output - 1 (shifted by the draft under speculation): the
    steps that do not vary with L times the passes, the others as series of their
    polynomials in L (`requests._Curve`), or each pass in turn where they are not."""
    flops: dict[str, Fraction] = {}
    first, last = decode_keys(at.shape)
    if last < first:
        return flops, _ZERO
    curve, segments = decode_curve(engine, at)
    # Operations and bytes are the same on every device: the passes' plans, not rows.
    model, precision, deployment = at.model, at.precision, at.deployment
    if curve is None or segments is None:
        dram = _ZERO
        for keys in range(first, last + 1):
            plan = engine.plan(model, at.decode(keys), precision, deployment)
            dram += _plan_work(plan, flops)
        return flops, dram
    plan = engine.plan(model, at.decode(first), precision, deployment)
    varying = frozenset(s.index for s in curve.steps)
    dram = _plan_work(plan, flops, last - first + 1, skip=varying)
    for a, c, polys in segments:
        for step, (fpoly, traffic) in zip(curve.steps, polys, strict=True):
            flops[step.precision] = (
                flops.get(step.precision, _ZERO) + series(fpoly, a, c) * step.count
            )
            for level, poly in traffic:
                if level == _DRAM:
                    dram += series(poly, a, c) * step.count
    return flops, dram


# ---------------------------------------------------------------------- one result


class _Bounds:
    """The bounds of one model's serving results on one engine, each pass found once:
    results of one sweep share their batch-1 passes."""

    def __init__(self, engine: ModelEngine, model: Model) -> None:
        self.engine = engine
        self.model = model
        self.prefills: dict[tuple[object, ...], ModelResult] = {}
        self.decodes: dict[tuple[object, ...], Fraction] = {}
        self.work: dict[tuple[object, ...], tuple[dict[str, Fraction], Fraction]] = {}
        self.regimes: dict[tuple[object, ...], str] = {}

    def batch(self, result: ServingResult, batch: int = 1) -> RequestBatch:
        """`batch` requests of the result's shape, at its precision and deployment."""
        shape = RequestShape(result.input, result.output, result.speculation)
        return RequestBatch(self.model, result.precision, result.deployment, batch, shape)

    def prefill(self, figures: DeviceFigures, at: RequestBatch) -> ModelResult:
        key = (figures.id, at.precision, at.deployment, at.batch, at.shape.input)
        hit = self.prefills.get(key)
        if hit is None:
            hit = self.prefills[key] = at.run(self.engine, at.prefill(), figures)
        return hit

    def itl(self, figures: DeviceFigures, at: RequestBatch) -> Fraction:
        """The decode passes' mean time per token of each request of `at`, s."""
        key = (figures.id, *at.key)
        hit = self.decodes.get(key)
        if hit is None:
            total = decode_sum(self.engine, figures, at)
            shape = at.shape
            hit = self.decodes[key] = total.total / shape.tokens_per_pass / (shape.output - 1)
        return hit

    def regime(self, figures: DeviceFigures, at: RequestBatch) -> str:
        """The limit of the decode pass at L = input + ⌈output/2⌉ (+ the draft)."""
        keys = at.shape.input + math.ceil(at.shape.output / 2) + at.shape.drafted
        key = (figures.id, at.precision, at.deployment, at.batch, at.shape.drafted + 1, keys)
        hit = self.regimes.get(key)
        if hit is None:
            hit = self.regimes[key] = at.run(self.engine, at.decode(keys), figures).limited_by
        return hit

    def rate(self, figures: DeviceFigures, at: RequestBatch) -> Fraction:
        """The most tokens per second the requests of `at` per replica yield."""
        work = self.work.get(at.key)
        if work is None:
            flops, dram = _decode_work(self.engine, at)
            per = at.shape.tokens_per_pass
            flops = {p: f / per for p, f in flops.items()}
            dram /= per
            prefill = self.engine.plan(self.model, at.prefill(), at.precision, at.deployment)
            _plan_work(prefill, flops)
            work = self.work[at.key] = (flops, dram)
        flops, dram = work
        compute = sum((f / figures.peaks[p] for p, f in flops.items()), _ZERO)
        bandwidth = figures.bandwidths.get(_DRAM)
        memory = _ZERO if bandwidth is None else dram / bandwidth
        # The stages of a pipeline split the layers: each chip does 1/pp of the pass.
        seconds = max(compute, memory) / at.deployment.pp
        return at.batch * at.shape.output * at.deployment.dp / seconds

    def resident(
        self, result: ServingResult, precision: str, deployment: Deployment
    ) -> tuple[int | None, str | None]:
        """The sequences the output-rate bound is at: a static batch, or the most whose KV
        cache at input + 1 keys fits beside the weights (no reserve, no activations),
        capped by the concurrency; (None, why) when that cannot be found."""
        if result.batch is not None:
            return result.batch, None
        cap = result.concurrency or _MOST_RESIDENT
        model, catalog = self.model, self.engine.catalog
        ledger = model.memory
        capacity = device_capacity(catalog.devices[result.device])
        if ledger is None or capacity is None:
            if result.concurrency is not None:
                return result.concurrency, None
            return None, (
                "the model gives no memory ledger (or the device no capacity): the resident"
                " batch of an offline run is unknown"
            )
        keys = result.input + 1
        terms = ledger_terms(
            catalog, model, ledger, {"b": 1, "s": 1, "L": keys}, precision, deployment
        )
        if terms is None:
            return None, "the memory ledger does not evaluate for this deployment"
        most = largest_cache_batch(terms, capacity - terms.weights, keys) or 0
        return max(1, min(cap, most)), None


def _points_of(bounds: _Bounds, result: ServingResult) -> list[ServingPoint]:
    engine, model = bounds.engine, bounds.model
    out: list[ServingPoint] = []

    def each(
        bound: dict[str, Fraction | None],
        batch: dict[str, int | None],
        regime: dict[str, str | None],
        problem: str | None,
    ) -> list[ServingPoint]:
        return [
            ServingPoint(
                model.id,
                result,
                metric,
                result.metrics[metric],
                bound.get(metric),
                batch.get(metric),
                regime.get(metric),
                None if metric == "energy" or bound.get(metric) is not None else problem,
            )
            for metric in SERVING_METRICS
            if metric in result.metrics
        ]

    figures = engine.devices.get(result.device)
    precision, deployment = result.precision, result.deployment
    problem: str | None = None
    if figures is None:
        problem = f"device '{result.device}' has no figures"
    else:
        needed = {precision, *(s.precision for s in model.steps if s.precision is not None)}
        missing = sorted(needed - figures.peaks.keys())
        if missing:
            problem = f"device '{result.device}' has no peak for {', '.join(missing)}"
        else:
            problem = engine.deployment_problem(model, deployment) or engine.fabric_problem(
                model, result.device, deployment
            )
    if problem is not None or figures is None:
        return each({}, {}, {}, problem)
    one = bounds.batch(result)
    bound: dict[str, Fraction | None] = {}
    batch: dict[str, int | None] = {}
    regime: dict[str, str | None] = {}
    wanted = result.metrics.keys()
    try:
        if "ttft" in wanted:
            row = bounds.prefill(figures, one)
            bound["ttft"], batch["ttft"], regime["ttft"] = pass_time(row), 1, row.limited_by
        if wanted & {"itl", "user_rate", "energy"}:
            if result.output > 1:
                itl = bounds.itl(figures, one)
                for metric, value in (("itl", itl), ("user_rate", 1 / itl)):
                    bound[metric], batch[metric] = value, 1
            else:
                problem = "one output token: no decode pass follows the first token"
        if "output_rate" in wanted:
            resident, why = bounds.resident(result, precision, deployment)
            if resident is None:
                problem = why
            else:
                bound["output_rate"] = bounds.rate(figures, bounds.batch(result, resident))
                batch["output_rate"] = resident
    except (DeploymentError, EvaluationError, FormulaError, ZeroDivisionError) as exc:
        problem = str(exc)
    out.extend(each(bound, batch, regime, problem))
    return out


# ---------------------------------------------------------------------- all results

_POINTS: WeakKeyDictionary[ModelEngine, dict[bool, tuple[ServingPoint, ...]]] = WeakKeyDictionary()


def serving_points(engine: ModelEngine, *, regimes: bool = True) -> tuple[ServingPoint, ...]:
    """Every metric of every model's serving results with its bound, in catalog order;
    found once per engine. `regimes=False` leaves out what `check` does not read: the
    decode passes' regimes (a point's `regime` is then the prefill's for `ttft`, else
    None) and the output rates' places on the frontier (`user_rate_at_batch`)."""
    known = _POINTS.setdefault(engine, {})
    hit = known.get(regimes)
    if hit is not None:
        return hit
    plain = known.get(False)
    if plain is None:
        out: list[ServingPoint] = []
        for model in engine.catalog.models.values():
            if model.serving:
                bounds = _Bounds(engine, model)
                out.extend(p for r in model.serving for p in _points_of(bounds, r))
        plain = known[False] = tuple(out)
    if not regimes:
        return plain
    found = known[True] = _with_regimes(engine, plain)
    return found


def _with_regimes(
    engine: ModelEngine, points: tuple[ServingPoint, ...]
) -> tuple[ServingPoint, ...]:
    """The points with the regime of the decode pass at L = input + ⌈output/2⌉ at each
    one's batch (the energy's and the per-user figures' at batch 1), and each output
    rate's tokens per second per user at its batch."""
    out: list[ServingPoint] = []
    kept: dict[str, _Bounds] = {}
    for p in points:
        if p.regime is not None or (p.batch is None and p.metric != "energy"):
            out.append(p)
            continue
        r = p.result
        figures = engine.devices.get(r.device)
        if figures is None or (r.output < 2 and p.metric != "output_rate"):
            out.append(p)
            continue
        bounds = kept.get(p.model)
        if bounds is None:
            bounds = kept[p.model] = _Bounds(engine, engine.catalog.models[p.model])
        at = bounds.batch(r, p.batch or 1)
        user: Fraction | None = None
        try:
            regime = bounds.regime(figures, at)
            if p.metric == "output_rate" and p.batch is not None and r.output > 1:
                user = 1 / bounds.itl(figures, at)
        except (DeploymentError, EvaluationError, FormulaError, ZeroDivisionError):
            regime = None
        out.append(replace(p, regime=regime, user_rate_at_batch=user))
    return tuple(out)


def _degrees(d: Deployment) -> str:
    parts = [f"{name} {value}" for name, value in (("tp", d.tp), ("pp", d.pp), ("ep", d.ep))]
    return f"{d.total} chip{'s' if d.total != 1 else ''}, {', '.join(parts)}"


def serving_diagnostics(engine: ModelEngine) -> list[Diagnostic]:
    """A serving result that beats its bound without naming a technique, or that cannot
    be bounded, is an error at its entry; energy is not checked."""
    out: list[Diagnostic] = []
    for p in serving_points(engine, regimes=False):
        r = p.result
        where = (
            f"model '{p.model}' on '{r.device}' ({_degrees(r.deployment)}, {r.precision},"
            f" {r.input} in / {r.output} out)"
        )
        if p.problem is not None:
            out.append(
                Diagnostic(
                    r.location,
                    f"measured {p.metric} of {where} cannot be bounded: {p.problem}",
                    f"$.measured[{r.index}].{p.metric}",
                    "error",
                    "measured",
                )
            )
        elif p.beats and r.technique is None:
            ratio = p.ratio
            assert ratio is not None and p.bound is not None
            out.append(
                Diagnostic(
                    r.location,
                    f"measured {p.metric} of {where} is {r.texts[p.metric]}, better than its"
                    f" bound {_shown(p.metric, p.bound)} (ratio {float(ratio):.3g}): name the"
                    " technique that changes the work per token, or check the precision, the"
                    " deployment, the token counts and the units",
                    f"$.measured[{r.index}].{p.metric}",
                    "error",
                    "measured",
                )
            )
    return out


def _shown(metric: str, value: Fraction) -> str:
    if metric in TIMES:
        return format_si(value, "s")
    return f"{format_number(value)} tokens/s"
