"""The latency–throughput frontier of a model on a device, and the queries `plan` answers.

**The grid.** Per model × device, at one precision and one request shape (`input`,
`output` tokens), the deployments searched are: `chips` a power of two up to
min(the scale-up domain, 64) (1 when the device has no scale-up fabric); `tp` a power of
two dividing the query-head count (`hq`, or `heads`; any power of two up to the chips
when the model names neither); `pp` a divisor of the layer count (`layers`; 1 without
one); `ep` a divisor of the expert count (`E`, or `experts`; 1 for a dense model);
chips = tp × pp × dp with `ep` dividing tp × dp. A deployment the model cannot take
(`ModelEngine.deployment_problem`) or the device cannot host (`fabric_problem`) is
skipped and named in the result. The batches of a deployment are 1, 2, 4, … up to the
largest batch that fits (`max_batch`: the memory ledger's exact largest `b` at both the
prefill, s = L = input, and the last decode pass, s = 1, L = input + output − 1; the
ledger grows with `b` and `L`, so every pass between fits too), that largest batch
included. A deployment at which batch 1 does not fit has no points. The deployments are
checked on floats first, all at once (`request_floats.clear_deployments`); the exact
check runs only for those the floats do not clear, and names what is wrong. The largest
batches too, for every deployment and device capacity at once (`fit_floats`), exactly
only where a quotient lies within `REL` of a whole number.

**The float path** (the default): every point of every device's grid is evaluated at
once in numpy (`rooflinec.engine.request_floats`), within a few units in the last place of its exact
figures; the frontier and the queries are decided on those floats, and exactly
(`Fraction`) wherever two figures are within `REL` of each other, where a float cannot
tell, unless the two points run the same passes (equal keys: exactly equal). A point's
exact figures (`Point.result`) are made when first read. Points the float path declines
(a shape that is not a whole number, a decode that is not a line in L) are evaluated
exactly, as are all points of a request with one output token.

**Pruning** (the exact path, with `prune=True` and an `evaluate` of the caller's; the
brute-force test checks that the frontier and every query's answer are the same without
it). Two rules, neither of which changes the answer:

- When no step, count or ledger formula names `dp`, every figure of a point but its chips
  is the same at every `dp` (tokens/s per chip, cost and energy per token divide the
  replicas out), so only the fewest chips, lcm(tp, ep) × pp, are evaluated: the others
  are exactly equal points with more chips, which the tie rule below never picks.
- Within a deployment, a larger batch has no more tokens/s per user and no shorter ttft
  or latency (no pass gets faster with more sequences: the counts grow with `b`), and is
  taken to have no fewer tokens/s per chip. So the batches between two evaluated ones lie
  below the lower one's tokens/s per user and the upper one's tokens/s per chip, and a
  batch above an evaluated one below its tokens/s per user and its tokens/s per chip
  times the batches' ratio (the latency does not fall). When an evaluated point is at
  least as good as such a corner on both axes and better on one, no batch within can be
  on the frontier and none is evaluated. The first batch of every deployment is
  evaluated, then deployment by deployment (the highest bound first) its largest batch
  and the middle batch of each span not ruled out, in turn. Every evaluated triple is
  checked to be so ordered, exactly; a deployment where one is not (a `ceil` in a shape
  can make the rate per chip dip) has every batch evaluated.

**The frontier** is the Pareto set of the points by (tokens/s per user, tokens/s per
chip), both maximised. Dominance is decided on floats, and exactly (`Fraction`) where
two floats are within `REL` of each other, where a float cannot tell. A point is off
the set when another is at least as good on both axes and better on one, or exactly
equal and first in the tie order: fewer chips, then smaller tp, pp, ep and batch. The
set is listed by tokens/s per user, highest first.

**Queries** (`best`). Targets: the least tokens/s per user, the most ttft, the most
latency, the most chips (each optional, each compared exactly). Objectives:
`tokens-per-chip` (the most tokens/s per chip), `cost` (the least USD per million
tokens, among points with a price), `energy` (the least joules per token, among points
with a board power). Cost and energy per token are the device's price and power over its
tokens/s per chip, so the three rank a device's points alike. Ties in the objective go to
the higher tokens/s per user, then the tie order above. The best point of a device is the
best among its points that meet every target (points off the frontier included: ttft and
latency are not its axes). Tokens/s per user falls and ttft and latency rise with the
batch, so in a pruned deployment the batches meeting the targets are the first ones: the
largest of them is found by a binary search, evaluating the few batches it needs, and
deployments are searched best bound first, until the best bound left is below the best
point found. With
no target but the least tokens/s per user, the best point is on the frontier (a point
beating it there would meet that target and beat it here), which is read alone.

A target **binds** when dropping it alone gives a better answer: with a plan, a
better point by the objective; without one, any point at all. The binding target is
the first that binds in the order min-user-rate, max-ttft, max-latency, max-chips. When
no plan exists and no target binds alone (two or more exclude every point together), it
is the first target, in that order, that the best point without any target fails.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property, cmp_to_key, partial
from typing import TYPE_CHECKING, Literal, overload

import numpy as np

from rooflinec.catalog import Deployment
from rooflinec.engine.fit_floats import largest_batches
from rooflinec.engine.memory import (
    LedgerTerms,
    device_capacity,
    largest_batch_at,
    ledger_terms,
)
from rooflinec.engine.models import DeploymentError
from rooflinec.engine.request_floats import (
    REL,
    Groups,
    Rates,
    RequestTimes,
    RequestWork,
    clear_deployments,
    device_rates,
    exact_passes,
    floored_talk,
    request_times,
    request_times_on,
    same_memory_time,
)
from rooflinec.engine.request_floats import _Pass as RunPass
from rooflinec.engine.requests import RequestBatch, request_passes

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from rooflinec.catalog import Model
    from rooflinec.engine.models import ModelEngine
    from rooflinec.engine.requests import RequestResult, RequestShape

__all__ = [
    "MAX_CHIPS",
    "OBJECTIVES",
    "REL",
    "TARGETS",
    "Choice",
    "DeviceFrontier",
    "GridDeployment",
    "PlanAnswer",
    "Point",
    "Skip",
    "Targets",
    "best",
    "device_frontier",
    "frontiers",
    "grid",
    "largest_batch",
    "pareto",
    "plan",
]

#: The most chips searched, whatever the fabric joins.
MAX_CHIPS = 64
#: The most batches searched: a ledger that barely grows with b would otherwise ask for
#: batches up to the memory search's limit.
MAX_BATCH = 1 << 20
HEAD_PARAMETERS = ("hq", "heads", "n_heads")
LAYER_PARAMETERS = ("layers", "n_layers")
EXPERT_PARAMETERS = ("E", "experts")

Objective = Literal["tokens-per-chip", "cost", "energy"]
OBJECTIVES: tuple[Objective, ...] = ("tokens-per-chip", "cost", "energy")
Target = Literal["min-user-rate", "max-ttft", "max-latency", "max-chips"]
#: The targets in the order the binding rule reads them.
TARGETS: tuple[Target, ...] = ("min-user-rate", "max-ttft", "max-latency", "max-chips")

Evaluate = Callable[..., "RequestResult"]


@dataclass
class TermsCache:
    """What the grids of a model on several devices share: the memory ledger's terms by
    (model, precision, deployment, run), the largest batch by (model, precision,
    deployment, request shape, capacity), and the deployments checked on floats and
    those cleared (`_clear`)."""

    terms: dict[tuple[object, ...], LedgerTerms | None] = field(default_factory=dict)
    tops: dict[tuple[object, ...], int | None] = field(default_factory=dict)
    checked: set[tuple[str, Deployment]] = field(default_factory=set)
    cleared: dict[tuple[str, Deployment], Groups] = field(default_factory=dict)
    # The float path's work by (model, precision, request shape): `frontiers` reuses it
    # when it holds every point asked for
    works: dict[tuple[str, str, RequestShape], _Shared] = field(default_factory=dict)


@dataclass(frozen=True)
class Targets:
    """What a plan must meet; None: no such target."""

    min_user_rate: Fraction | None = None  # tokens/s per user
    max_ttft: Fraction | None = None  # s
    max_latency: Fraction | None = None  # s
    max_chips: int | None = None

    def values(self) -> tuple[Fraction | int | None, ...]:
        """The targets' values in `TARGETS` order, None where not given."""
        return (self.min_user_rate, self.max_ttft, self.max_latency, self.max_chips)

    def given(self) -> tuple[Target, ...]:
        return tuple(t for t, v in zip(TARGETS, self.values(), strict=True) if v is not None)

    def without(self, target: Target) -> Targets:
        return Targets(
            None if target == "min-user-rate" else self.min_user_rate,
            None if target == "max-ttft" else self.max_ttft,
            None if target == "max-latency" else self.max_latency,
            None if target == "max-chips" else self.max_chips,
        )


@dataclass(frozen=True)
class Skip:
    """A deployment of the grid that was not evaluated, and why."""

    deployment: Deployment
    reason: str


@dataclass(frozen=True)
class GridDeployment:
    """A deployment of the grid and the batches searched at it."""

    deployment: Deployment
    max_batch: int
    batches: tuple[int, ...]


class Point:
    """One (deployment, batch) of the grid: its axes and its ttft and latency as floats,
    and its exact figures (`result`), made on first use where the floats came from the
    float path (`rooflinec.engine.request_floats`)."""

    __slots__ = (
        "_at",
        "_result",
        "_source",
        "batch",
        "chip_rate",
        "deployment",
        "latency",
        "ttft",
        "user_rate",
    )

    def __init__(
        self,
        result: RequestResult | None,
        user_rate: float,  # tokens/s per user
        chip_rate: float,  # tokens/s per chip
        *,
        deployment: Deployment | None = None,
        batch: int | None = None,
        ttft: float | None = None,  # s
        latency: float | None = None,  # s
        source: _Search | None = None,
        at: int | None = None,
    ) -> None:
        self._result, self._source, self._at = result, source, at
        self.user_rate, self.chip_rate = user_rate, chip_rate
        if result is not None:
            deployment, batch = result.deployment, result.batch
            ttft, latency = float(result.ttft), float(result.latency)
        assert deployment is not None and batch is not None
        assert ttft is not None and latency is not None
        self.deployment, self.batch, self.ttft, self.latency = deployment, batch, ttft, latency

    @property
    def result(self) -> RequestResult:
        """The point's exact figures."""
        if self._result is None:
            assert self._source is not None
            self._result = self._source.exact(self.deployment, self.batch)
        return self._result

    def exact_user(self) -> Fraction:
        """Tokens/s per user, exactly (without the rest of `result` when not made yet)."""
        rate = self.exact_user_or_none()
        assert rate is not None
        return rate

    def exact_user_or_none(self) -> Fraction | None:
        """Tokens/s per user exactly, None for a request without a decode pass."""
        if self._result is None and self._source is not None:
            return self._source.rates(self.deployment, self.batch, self._at)[0]
        return self.result.tokens_per_second_per_user

    def exact_chip(self) -> Fraction:
        """Tokens/s per chip, exactly."""
        if self._result is None and self._source is not None:
            return self._source.rates(self.deployment, self.batch, self._at)[1]
        return self.result.tokens_per_second_per_chip

    @property
    def tie(self) -> tuple[int, int, int, int, int]:
        """The tie order among exactly equal points: fewer chips, then smaller tp, pp, ep
        and batch."""
        d = self.deployment
        return (d.total, d.tp, d.pp, d.ep, self.batch)

    def __repr__(self) -> str:
        d, rates = self.deployment, f"{self.user_rate:.6g}, {self.chip_rate:.6g}"
        return f"Point({d}, batch={self.batch}, {rates})"


@dataclass(frozen=True)
class DeviceFrontier:
    """A device's points, its frontier and what was not searched."""

    device: str
    points: tuple[Point, ...]  # every point evaluated, in grid order
    frontier: tuple[Point, ...]  # tokens/s per user, highest first
    skipped: tuple[Skip, ...] = ()
    problem: str | None = None  # why the device has no points at all
    deployments: tuple[GridDeployment, ...] = field(default=(), repr=False)
    # Deployments some of whose batches were not evaluated (pruned), and the search that
    # evaluates any point on demand (`best` does, for the batches a query needs)
    partial: frozenset[Deployment] = field(default=frozenset(), repr=False)
    search: _Search | None = field(default=None, repr=False, compare=False)
    # The objectives its points have a figure for (a price: cost; a board power: energy);
    # None: read off the points
    figures: frozenset[Objective] | None = None


@dataclass(frozen=True)
class Choice:
    """A device's answer to a query: its best point (None: nothing meets the targets, or
    nothing to choose from), whether it meets them, and the binding target."""

    device: str
    point: Point | None
    meets: bool
    binding: Target | None
    note: str | None = None


# ---------------------------------------------------------------------- the grid


def _parameter(model: Model, names: Sequence[str]) -> int | None:
    for name in names:
        value = model.parameters.get(name)
        if value is not None:
            return int(value)
    return None


def _powers_of_two(limit: int) -> list[int]:
    return [1 << i for i in range(limit.bit_length()) if 1 << i <= limit]


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def chip_limit(engine: ModelEngine, device: str) -> int:
    """The most chips searched on `device`: its scale-up domain, at most `MAX_CHIPS`; 1
    without a scale-up fabric (or one that quotes no domain)."""
    fabric = engine.catalog.devices[device].interconnect.get("scale_up")
    if fabric is None or fabric.chips is None:
        return 1
    return max(1, min(fabric.chips, MAX_CHIPS))


def names_dp(model: Model) -> bool:
    """Whether any step's shape or count, or the memory ledger, names `dp`."""
    for step in model.steps:
        if "dp" in step.count.symbols or any("dp" in f.symbols for f in step.shape.values()):
            return True
    ledger = model.memory
    if ledger is None:
        return False
    terms = (ledger.weights, ledger.kv, ledger.kv_per_token, ledger.activations)
    return any(t is not None and t.formula is not None and "dp" in t.formula.symbols for t in terms)


def deployments(model: Model, chips_limit: int, *, prune: bool) -> Iterator[Deployment]:
    """The grid's deployments, fewest chips first, then tp, pp, ep."""
    heads = _parameter(model, HEAD_PARAMETERS)
    layers = _parameter(model, LAYER_PARAMETERS)
    experts = _parameter(model, EXPERT_PARAMETERS)
    fewest = prune and not names_dp(model)
    for chips in _powers_of_two(chips_limit):
        for tp in _powers_of_two(chips):
            if heads is not None and heads % tp:
                continue
            for pp in _divisors(layers) if layers is not None else [1]:
                if chips % (tp * pp):
                    continue
                dp = chips // (tp * pp)
                for ep in _divisors(experts) if experts is not None else [1]:
                    if (tp * dp) % ep:
                        continue
                    if fewest and chips != math.lcm(tp, ep) * pp:
                        continue  # an exact copy of that point with more chips
                    yield Deployment(tp, pp, ep, chips)


def largest_batch(
    engine: ModelEngine,
    model: Model,
    device: str,
    precision: str,
    deployment: Deployment,
    shape: RequestShape,
    terms: TermsCache | None = None,
) -> int | None:
    """The largest batch whose ledger fits at both the prefill and the last decode pass
    of `shape` (None: batch 1 does not fit, or the device gives no capacity). `terms`
    keeps the ledger's terms, the same on every device, across calls."""
    capacity = device_capacity(engine.catalog.devices[device])
    if capacity is None or model.memory is None:
        return None
    # The same on every device of this capacity
    top_key = (model.id, precision, deployment, shape, capacity)
    if terms is not None and top_key in terms.tops:
        return terms.tops[top_key]
    top = _largest_batch(engine, model, precision, deployment, shape, capacity, terms)
    if terms is not None:
        terms.tops[top_key] = top
    return top


def _largest_batch(
    engine: ModelEngine,
    model: Model,
    precision: str,
    deployment: Deployment,
    shape: RequestShape,
    capacity: Fraction,
    terms: TermsCache | None,
) -> int | None:
    assert model.memory is not None
    drafted = shape.drafted  # a verify pass's drafted tokens, with their keys
    last = shape.input + shape.output - 1 + drafted
    found: list[int] = []
    for run in (
        (("b", 1), ("s", shape.input), ("L", shape.input)),
        (("b", 1), ("s", drafted + 1), ("L", last)),
    ):
        key = (model.id, precision, deployment, run)
        if terms is not None and key in terms.terms:
            held = terms.terms[key]
        else:
            held = ledger_terms(
                engine.catalog,
                model,
                model.memory,
                dict(run),
                precision,
                deployment,
                engine.memory.rules,
            )
            if terms is not None:
                terms.terms[key] = held
        if held is None:
            return None
        top = largest_batch_at(held, capacity, dict(run)["L"])
        if top is None:
            return None
        found.append(top)
    return min(found)


def batches(max_batch: int) -> tuple[int, ...]:
    """1, 2, 4, … up to `max_batch`, and `max_batch` itself (at most `MAX_BATCH`)."""
    top = min(max_batch, MAX_BATCH)
    out = _powers_of_two(top)
    if out[-1] != top:
        out.append(top)
    return tuple(out)


def grid(
    engine: ModelEngine,
    model: Model,
    device: str,
    precision: str,
    shape: RequestShape,
    *,
    prune: bool = True,
    terms: TermsCache | None = None,
) -> tuple[list[GridDeployment], list[Skip], str | None]:
    """The deployments searched on `device` with their batches, those skipped and why,
    and why the device has none at all (None when it has some)."""
    spec = engine.catalog.devices[device]
    needed = {precision, *(s.precision for s in model.steps if s.precision)}
    missing = sorted(needed - spec.peaks.keys())
    if missing:
        return [], [], f"no peak for precision {', '.join(missing)}"
    if device_capacity(spec) is None:
        return [], [], "no DRAM capacity: which batches fit is unknown"
    if model.memory is None:
        return [], [], f"model '{model.id}' gives no memory ledger: which batches fit is unknown"
    found: list[GridDeployment] = []
    skipped: list[Skip] = []
    searched = list(deployments(model, chip_limit(engine, device), prune=prune))
    clear = _clear(engine, model, terms, searched)
    for d in searched:
        groups = clear.get(d)
        problem = None if groups is not None else engine.deployment_problem(model, d)
        if problem is None:
            problem = engine.fabric_problem(model, device, d, groups=groups)
        if problem is not None:
            skipped.append(Skip(d, problem))
            continue
        top = largest_batch(engine, model, device, precision, d, shape, terms)
        if top is None:
            skipped.append(Skip(d, "batch 1 does not fit"))
            continue
        found.append(GridDeployment(d, top, batches(top)))
    return found, skipped, None


def _clear(
    engine: ModelEngine, model: Model, terms: TermsCache | None, wanted: Sequence[Deployment]
) -> dict[Deployment, Groups]:
    """Of the deployments `wanted`, those shown to have no problem on floats
    (`request_floats.clear_deployments`), with their collectives' groups; the checks are
    kept in `terms`. The others are checked exactly, one by one."""
    held = terms if terms is not None else TermsCache()
    fresh = [d for d in wanted if (model.id, d) not in held.checked]
    if fresh:
        found = clear_deployments(engine, model, fresh)
        held.checked.update((model.id, d) for d in fresh)
        held.cleared.update(((model.id, d), groups) for d, groups in found.items())
    return {d: held.cleared[model.id, d] for d in wanted if (model.id, d) in held.cleared}


def _evaluator() -> Evaluate:
    from rooflinec.engine.requests import evaluate_request

    return evaluate_request


class _Search:
    """One device's points, each evaluated once, on first use."""

    def __init__(
        self,
        engine: ModelEngine,
        model_id: str,
        device: str,
        precision: str,
        shape: RequestShape,
        price: Fraction | None,
        run: Evaluate,
    ) -> None:
        self.args = (engine, model_id, device, precision)
        self.shape, self.price, self.run = shape, price, run
        self.found: dict[tuple[Deployment, int], Point | None] = {}
        self.order: list[Point] = []  # every point evaluated, in the order it was
        self.errors: list[Skip] = []  # points the engine could not evaluate, and why
        self._rates: dict[tuple[Deployment, int], tuple[Fraction, Fraction]] = {}
        self._floats: tuple[RequestWork, RequestTimes] | None = None
        # The points' axes as floats, in `order`, grown by doubling: `dominated` reads
        # them at every deployment, and rebuilding them there made the search quadratic.
        self._axes = np.empty((2, 64), dtype=np.float64)

    def point(self, deployment: Deployment, batch: int) -> Point | None:
        """The point of (deployment, batch); None where it does not fit (never on the
        frontier, and not a plan)."""
        key = (deployment, batch)
        if key in self.found:
            return self.found[key]
        engine, model_id, device, precision = self.args
        try:
            r = self.run(
                engine, model_id, device, precision, deployment, batch, self.shape, self.price
            )
        except DeploymentError as exc:  # a pass the engine cannot evaluate: said, not hidden
            self.errors.append(Skip(deployment, f"batch {batch}: {exc.message}"))
            self.found[key] = None
            return None
        found = None
        if r.fits is not False and r.tokens_per_second_per_user is not None:
            found = Point(
                r, float(r.tokens_per_second_per_user), float(r.tokens_per_second_per_chip)
            )
            n = len(self.order)
            if n == self._axes.shape[1]:
                self._axes = np.concatenate((self._axes, np.empty_like(self._axes)), axis=1)
            self._axes[0, n], self._axes[1, n] = found.user_rate, found.chip_rate
            self.order.append(found)
        self.found[key] = found
        return found

    def exact(self, deployment: Deployment, batch: int) -> RequestResult:
        """The exact figures of a point on the float path (made on demand)."""
        engine, model_id, device, precision = self.args
        return self.run(
            engine, model_id, device, precision, deployment, batch, self.shape, self.price
        )

    def rates(
        self, deployment: Deployment, batch: int, at: int | None = None
    ) -> tuple[Fraction, Fraction]:
        """A point's tokens/s per user and per chip exactly, from its passes alone (what
        a near tie needs), once: from the float path's exact counts where it shows what
        holds every step (`request_floats.exact_passes`; `at`: the point's index in its
        work), else from the exact engine's passes."""
        key = (deployment, batch)
        hit = self._rates.get(key)
        if hit is None:
            engine, model_id, device, precision = self.args
            shape = self.shape
            figures, latency = engine.devices[device], engine.latencies.get(device)
            found = None
            if at is not None and self._floats is not None:
                links = engine.links(device)
                found = exact_passes(*self._floats, at, figures, latency, links)
            if found is None:
                model = engine.catalog.models[model_id]
                request = RequestBatch(model, precision, deployment, batch, shape)
                found = request_passes(engine, figures, request)
            ttft, decoding = found
            tokens = batch * shape.output * deployment.dp
            hit = self._rates[key] = (
                (shape.output - 1) / decoding,
                tokens / (ttft + decoding) / deployment.total,
            )
        return hit

    def on_floats(self, work: RequestWork, times: RequestTimes) -> None:
        """The float path's work and times of this device's points (`_floated`), which
        `same` reads."""
        self._floats = (work, times)

    def same(self, i: int, j: int, axis: int) -> bool:
        """Whether the float path's points i and j spend exactly the same time in every
        decode pass (axis 0: equal tokens/s per user) and also in the prefill with as
        many tokens per chip (axis 1: equal tokens/s per chip), read off the steps'
        exact counts where one ceiling clearly holds each (`request_floats.signature`)
        and the collectives' shapes where they may count."""
        if self._floats is None:
            return False
        work, _ = self._floats
        if not self._same_pass(1, i, j):
            return False
        if axis == 0:
            return True
        (di, bi), (dj, bj) = work.points[i], work.points[j]
        if Fraction(bi * di.dp, di.total) != Fraction(bj * dj.dp, dj.total):
            return False
        return self._same_pass(0, i, j)

    def _same_pass(self, which: int, i: int, j: int) -> bool:
        """`same` for the prefill (0) or the decode passes (1): the collectives count in
        neither, or run at the same shapes in both; and the memory steps run at the same
        shapes, or spend the same time by their signatures."""
        assert self._floats is not None
        work, times = self._floats
        passes = work.decode if which else work.prefill
        assert passes is not None
        if which and len(work.decodes) > 1:
            # A decode cut into runs (a sliding window): the same time in each.
            return all(self._same_run(run, c - a, i, j) for a, c, run in work.decodes)
        talks = (times.prefill_talk, times.decode_talk)[which]
        if talks[i] or talks[j]:
            if not (talks[i] and talks[j]):
                return False
            if not np.array_equal(passes.talk_key[i], passes.talk_key[j]):
                # Collectives held by their floors take the same time at other shapes
                engine, _, device, _ = self.args
                links, floor = engine.links(device), engine.latencies.get(device)
                floors = times.floors[which]
                ti = floored_talk(floors, i, links, floor)
                if ti is None or ti != floored_talk(floors, j, links, floor):
                    return False
        peaks, bandwidths, launch = self._device_rates
        last = work.last - work.first if which else 0
        return same_memory_time(passes, i, j, peaks, bandwidths, launch, last)

    @cached_property
    def _device_rates(self) -> Rates:
        """The device's peaks, bandwidths and launch floor as floats, for `same`."""
        engine, _, device, _ = self.args
        return device_rates(engine.devices[device], engine.latencies.get(device))

    def _same_run(self, run: RunPass, last: int, i: int, j: int) -> bool:
        """`_same_pass` for one run of a cut decode, collectives aside: the memory steps
        at the same shapes, or the same time by their signatures."""
        assert self._floats is not None
        _, times = self._floats
        if times.decode_talk[i] or times.decode_talk[j]:
            return False  # collectives that count: the exact engine tells
        peaks, bandwidths, launch = self._device_rates
        return same_memory_time(run, i, j, peaks, bandwidths, launch, last)

    def dominated(self, user: Fraction, chip: Fraction) -> bool:
        """Whether an evaluated point has at least `user` and `chip`, and more of one.
        The points' floats are correctly rounded, so a float below the corner's rules a
        point out; the few left are compared exactly."""
        points = self.order
        us, cs = self._axes[0, : len(points)], self._axes[1, : len(points)]
        for i in np.flatnonzero((us >= float(user)) & (cs >= float(chip))).tolist():
            r = points[i].result
            u, c = r.tokens_per_second_per_user, r.tokens_per_second_per_chip
            assert u is not None
            if u >= user and c >= chip and (u > user or c > chip):
                return True
        return False

    def all_of(self, g: GridDeployment) -> None:
        for b in g.batches:
            self.point(g.deployment, b)


def _ordered(low: Point | None, mid: Point | None, high: Point | None) -> bool:
    """Whether three points of one deployment at rising batches have falling tokens/s
    per user and rising tokens/s per chip, as the pruning takes them to (exactly)."""
    if low is None or mid is None or high is None:
        return False
    a, b, c = low.result, mid.result, high.result
    ua, ub, uc = (
        a.tokens_per_second_per_user,
        b.tokens_per_second_per_user,
        c.tokens_per_second_per_user,
    )
    assert ua is not None and ub is not None and uc is not None
    ca, cb, cc = (
        a.tokens_per_second_per_chip,
        b.tokens_per_second_per_chip,
        c.tokens_per_second_per_chip,
    )
    return ua >= ub >= uc and ca <= cb <= cc


def _pruned(search: _Search, found: Sequence[GridDeployment]) -> frozenset[Deployment]:
    """Evaluate what can be on the frontier; the deployments some of whose batches were
    left out (see the module: a batch between two evaluated ones is bounded by the lower
    one's tokens/s per user and the upper one's tokens/s per chip, and one above every
    evaluated batch by the largest evaluated one's tokens/s per chip scaled by the
    batches' ratio, the latency growing with the batch)."""
    whole: set[Deployment] = set()
    firsts: list[tuple[Fraction, GridDeployment, Point]] = []
    for g in found:  # the first batch of every deployment: it bounds the per-user rate
        first = search.point(g.deployment, g.batches[0])
        if first is None or len(g.batches) == 1:
            search.all_of(g)
            whole.add(g.deployment)
            continue
        bound = first.result.tokens_per_second_per_chip * g.batches[-1] / g.batches[0]
        firsts.append((bound, g, first))
    # The most promising first: their points rule the others out sooner.
    firsts.sort(key=lambda item: -item[0])
    intervals: list[tuple[GridDeployment, int, int]] = []
    for bound, g, first in firsts:
        user = first.result.tokens_per_second_per_user
        assert user is not None
        if search.dominated(user, bound):
            continue  # no batch above the first can be on the frontier
        last = search.point(g.deployment, g.batches[-1])
        if not _ordered(first, first, last):
            search.all_of(g)  # not as the pruning takes it: every batch, then
            whole.add(g.deployment)
            continue
        intervals.append((g, 0, len(g.batches) - 1))
        while intervals:
            g, i, j = intervals.pop()
            d, batches = g.deployment, g.batches
            if d in whole or j - i < 2:
                continue
            low, high = search.point(d, batches[i]), search.point(d, batches[j])
            assert low is not None and high is not None
            user = low.result.tokens_per_second_per_user
            assert user is not None
            if search.dominated(user, high.result.tokens_per_second_per_chip):
                continue
            m = (i + j) // 2
            if not _ordered(low, search.point(d, batches[m]), high):
                search.all_of(g)
                whole.add(d)
                continue
            intervals += [(g, i, m), (g, m, j)]
    return frozenset(
        g.deployment
        for g in found
        if g.deployment not in whole
        and any((g.deployment, b) not in search.found for b in g.batches)
    )


def device_frontier(
    engine: ModelEngine,
    model_id: str,
    device: str,
    precision: str,
    shape: RequestShape,
    price: Fraction | None = None,
    *,
    prune: bool = True,
    evaluate: Evaluate | None = None,
    terms: TermsCache | None = None,
    searched: tuple[list[GridDeployment], list[Skip], str | None] | None = None,
    shared: _Shared | None = None,
    floats: tuple[RequestTimes, list[int]] | None = None,
) -> DeviceFrontier:
    """The points of `device`'s grid that can be on the frontier (every point with
    `prune=False`), and the frontier (see the module). `terms` keeps the memory ledger's
    terms across devices (`frontiers` shares one)."""
    model = engine.catalog.models[model_id]
    search = _Search(engine, model_id, device, precision, shape, price, evaluate or _evaluator())
    if searched is None:
        searched = grid(engine, model, device, precision, shape, prune=prune, terms=terms)
    found, skipped, problem = searched
    partial: frozenset[Deployment] = frozenset()
    if prune and evaluate is None and shape.output > 1:
        points = _floated(search, model, found, shared, *(floats or (None, None)))
    else:
        if prune:
            partial = _pruned(search, found)
        else:
            for g in found:
                search.all_of(g)
        points = search.order
    if problem is None and not points:
        problem = "no deployment searched fits"
    order = pareto(
        [p.user_rate for p in points],
        [p.chip_rate for p in points],
        lambda i: _user(points[i]),
        lambda i: points[i].exact_chip(),
        _Ties(points),
        lambda axis, i, j: _same_rate(points[i], points[j], axis),
    )
    spec = engine.catalog.devices[device]
    figures: set[Objective] = {"tokens-per-chip"}
    if price is not None or spec.price is not None:
        figures.add("cost")
    if spec.power is not None:
        figures.add("energy")
    return DeviceFrontier(
        device,
        tuple(points),
        tuple(points[i] for i in order),
        (*skipped, *search.errors),
        problem,
        tuple(found),
        partial,
        search,
        frozenset(figures),
    )


def _floated(
    search: _Search,
    model: Model,
    found: Sequence[GridDeployment],
    shared: _Shared | None,
    times: RequestTimes | None = None,
    own: list[int] | None = None,
) -> list[Point]:
    """Every point of the grid on the float path (`request_floats`), in grid order; the
    points it declines evaluated exactly (`_Search.point`). A point's exact figures are
    made when first read."""
    engine, _, device, precision = search.args
    shape = search.shape
    pairs = [(g.deployment, b) for g in found for b in g.batches]
    if not pairs:
        return []
    # The devices' grids' points together (`frontiers`): evaluated whole on each device
    # (numpy's cost is in its calls, not its elements) and read at this grid's points.
    if shared is None:
        work, at = RequestWork(engine, model, precision, shape, pairs), list(range(len(pairs)))
    else:
        work = shared.work
        at = own if own is not None else [shared.index[pair] for pair in pairs]
    if times is None:
        times = request_times(
            work, engine.devices[device], engine.latencies.get(device), engine.links(device)
        )
    search.on_floats(work, times)
    index = np.asarray(at, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ttft, decode = times.ttft[index], times.decode[index]
        latency = ttft + decode
        user = (shape.output - 1) / decode
        chip = work.batch[index] * shape.output * work.dp[index] / latency / work.chips[index]
    declined = times.declined[index].tolist()
    out: list[Point] = []
    new = Point.__new__
    for i, (d, b), no, u, c, t, lat in zip(
        at,
        pairs,
        declined,
        user.tolist(),
        chip.tolist(),
        ttft.tolist(),
        latency.tolist(),
        strict=True,
    ):
        if no:
            p = search.point(d, b)
            if p is not None:
                out.append(p)
            continue
        # `Point(None, u, c, deployment=d, ...)`, field by field: thousands per device
        p = new(Point)
        p._result, p._source, p._at = None, search, i
        p.user_rate, p.chip_rate, p.deployment, p.batch = u, c, d, b
        p.ttft, p.latency = t, lat
        out.append(p)
    return out


def frontiers(
    engine: ModelEngine,
    model_id: str,
    devices: Sequence[str],
    precision: str,
    shape: RequestShape,
    prices: dict[str, Fraction] | None = None,
    *,
    prune: bool = True,
    evaluate: Evaluate | None = None,
    cache: TermsCache | None = None,
) -> list[DeviceFrontier]:
    """`device_frontier` of each device in turn, sharing what every device shares: the
    memory ledger's terms, and on the float path one `RequestWork` for the points of
    every device's grid. `cache` keeps those for later calls on the same model, kernels
    and precisions (the site keeps one between `serve` rebuilds)."""
    terms = cache if cache is not None else TermsCache()
    prices = prices or {}
    model = engine.catalog.models[model_id]
    # Every device's deployments are checked on floats together: those of the largest
    # domain searched hold every other device's.
    widest = max((chip_limit(engine, device) for device in devices), default=1)
    every = list(deployments(model, widest, prune=prune))
    _clear(engine, model, terms, every)
    # And the largest batch of each on every device's capacity, on floats where they tell
    capacities = {c for c in map(device_capacity, (engine.catalog.devices[d] for d in devices))}
    wanted = [
        c
        for c in capacities
        if c is not None
        and any((model_id, precision, d, shape, c) not in terms.tops for d in every)
    ]
    told = largest_batches(engine.catalog, model, precision, every, shape, wanted)
    for (d, c), top in told.items():
        terms.tops.setdefault((model_id, precision, d, shape, c), top)
    grids = {
        device: grid(engine, model, device, precision, shape, prune=prune, terms=terms)
        for device in devices
    }
    shared: _Shared | None = None
    floats: dict[str, tuple[RequestTimes, list[int]]] = {}
    if prune and evaluate is None and shape.output > 1:
        index: dict[tuple[Deployment, int], int] = {}
        for found, _, _ in grids.values():
            for g in found:
                for b in g.batches:
                    index.setdefault((g.deployment, b), len(index))
        kept = terms.works.get((model_id, precision, shape))
        if kept is not None and all(pair in kept.index for pair in index):
            shared = kept
        else:
            shared = _Shared(RequestWork(engine, model, precision, shape, list(index)), index)
            terms.works[model_id, precision, shape] = shared
        # Every device with points on the float path together (numpy's cost is in calls)
        searched = [device for device in devices if grids[device][0]]
        roofs = [
            (engine.devices[device], engine.latencies.get(device), engine.links(device))
            for device in searched
        ]
        own = [
            [shared.index[g.deployment, b] for g in grids[device][0] for b in g.batches]
            for device in searched
        ]
        at = [np.array(i, dtype=np.int64) for i in own]
        on_each = request_times_on(shared.work, roofs, at)
        floats = {d: (t, i) for d, t, i in zip(searched, on_each, own, strict=True)}
    return [
        device_frontier(
            engine,
            model_id,
            device,
            precision,
            shape,
            prices.get(device),
            prune=prune,
            evaluate=evaluate,
            terms=terms,
            searched=grids[device],
            shared=shared,
            floats=floats.get(device),
        )
        for device in devices
    ]


class _Ties(Sequence[tuple[int, ...]]):
    """The points' tie keys, each made when `pareto` reads it (a few of thousands)."""

    def __init__(self, points: Sequence[Point]) -> None:
        self.points = points

    @overload
    def __getitem__(self, i: int) -> tuple[int, ...]: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[tuple[int, ...]]: ...
    def __getitem__(self, i: int | slice) -> tuple[int, ...] | Sequence[tuple[int, ...]]:
        if isinstance(i, slice):
            return [p.tie for p in self.points[i]]
        return self.points[i].tie

    def __len__(self) -> int:
        return len(self.points)


@dataclass(frozen=True)
class _Shared:
    """The float path's work for the points of several devices' grids, and each point's
    index in it."""

    work: RequestWork
    index: dict[tuple[Deployment, int], int]


def _same_rate(a: Point, b: Point, axis: int) -> bool:
    """Whether points `a` and `b` of one device are known to have exactly equal tokens/s
    per user (axis 0) or per chip (axis 1): passes that spend exactly the same time on
    this device (`_Search.same`)."""
    source = a._source
    if source is None or source is not b._source or a._at is None or b._at is None:
        return False
    return source.same(a._at, b._at, axis)


def _user(p: Point) -> Fraction:
    return p.exact_user()


# ---------------------------------------------------------------------- exact comparison


def _close(a: float, b: float) -> bool:
    """Whether floats `a` and `b` are too close for their order to be trusted: within
    `REL` of each other (the float path's figures are far more accurate than that, and a
    correctly rounded float is within half a unit in the last place)."""
    if a == b:
        return True
    if not (math.isfinite(a) and math.isfinite(b)):
        return False
    return abs(a - b) <= REL * max(abs(a), abs(b))


Exact = Fraction | Callable[[], Fraction]


def _exact(value: Exact) -> Fraction:
    return value if isinstance(value, Fraction) else value()


def compare(
    a: float,
    b: float,
    exact_a: Exact,
    exact_b: Exact,
    *,
    same: Callable[[], bool] | None = None,
) -> int:
    """-1, 0 or 1 as a < b, a == b, a > b: on the floats where they are far apart, else
    on the exact values (given, or made on demand); `same`, asked only then: whether the
    two are known to be exactly equal."""
    if not _close(a, b):
        return -1 if a < b else 1
    if same is not None and same():
        return 0
    ea, eb = _exact(exact_a), _exact(exact_b)
    return (ea > eb) - (ea < eb)


def pareto(
    xs: Sequence[float],
    ys: Sequence[float],
    exact_xs: Sequence[Fraction] | Callable[[int], Fraction],
    exact_ys: Sequence[Fraction] | Callable[[int], Fraction],
    ties: Sequence[tuple[int, ...]],
    same: Callable[[int, int, int], bool] | None = None,
) -> list[int]:
    """The indices of the Pareto set of the points (x, y), both maximised, highest x first.

    A point is off the set when another has x and y at least as large and one larger, or
    both equal and a smaller tie key (so one of exactly equal points stays: the least
    tie key). Decided on the floats, exactly where they are within `REL` (`compare`); the
    exact values are given, or made by index on demand. `same(axis, i, j)`: whether
    points i and j are known to be exactly equal on axis 0 (x) or 1 (y).
    """
    ex = exact_xs if callable(exact_xs) else exact_xs.__getitem__
    ey = exact_ys if callable(exact_ys) else exact_ys.__getitem__
    known = same if same is not None else (lambda axis, i, j: False)

    n = len(xs)
    if n == 0:
        return []
    fx = np.asarray(xs, dtype=np.float64)
    fy = np.asarray(ys, dtype=np.float64)

    def order(i: int, j: int) -> int:
        c = compare(xs[j], xs[i], lambda: ex(j), lambda: ex(i), same=partial(known, 0, i, j))
        if c:  # larger x first
            return c
        c = compare(ys[j], ys[i], lambda: ey(j), lambda: ey(i), same=partial(known, 1, i, j))
        if c:  # then larger y
            return c
        return (ties[i] > ties[j]) - (ties[i] < ties[j])

    # A point another beats by more than `REL` on both axes is off the set, and so is
    # every point it beats: what is left is the set and the points near it, few, which
    # numpy orders and exact comparisons reorder only within runs of near-equal x.
    left = np.flatnonzero(~_clearly_beaten(fx, fy))
    rough = left[np.lexsort((-fy[left], -fx[left]))].tolist()
    ranked = sorted(rough, key=cmp_to_key(order))
    kept: list[int] = []
    top = -1  # the index with the largest y so far
    for i in ranked:
        if (
            top < 0
            or compare(
                ys[i], ys[top], partial(ey, i), partial(ey, top), same=partial(known, 1, i, top)
            )
            > 0
        ):
            kept.append(i)
            top = i
    return kept


def _clearly_beaten(fx: NDArray[np.float64], fy: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Where another point has both x and y more than `REL` (relatively) larger: beaten
    whatever the exact values (positive, finite floats within `REL` of them)."""
    finite = np.isfinite(fx) & np.isfinite(fy) & (fx > 0) & (fy > 0)
    if not finite.all():
        return np.zeros(len(fx), dtype=np.bool_)
    by_x = np.argsort(-fx, kind="stable")
    sx, best_y = fx[by_x], np.maximum.accumulate(fy[by_x])
    # How many points have x above each point's x × (1 + REL): a prefix of `by_x`
    above = np.searchsorted(-sx, -fx * (1 + REL), side="left")
    reach = np.where(above > 0, best_y[np.maximum(above - 1, 0)], -np.inf)
    return reach > fy * (1 + REL)


# ---------------------------------------------------------------------- queries


def _meets(p: Point, t: Targets) -> bool:
    """Whether `p` meets every target: on its floats, exactly where they are near one."""
    least = t.min_user_rate
    if least is not None and compare(p.user_rate, float(least), lambda: _user(p), least) < 0:
        return False
    most = t.max_ttft
    if most is not None and compare(p.ttft, float(most), lambda: p.result.ttft, most) > 0:
        return False
    most = t.max_latency
    if most is not None and compare(p.latency, float(most), lambda: p.result.latency, most) > 0:
        return False
    return t.max_chips is None or p.deployment.total <= t.max_chips


def _figure(p: Point, objective: Objective) -> Fraction | None:
    """The objective's figure, larger better (cost and energy negated)."""
    r = p.result
    if objective == "tokens-per-chip":
        return r.tokens_per_second_per_chip
    value = r.usd_per_million_tokens if objective == "cost" else r.joules_per_token
    return None if value is None else -value


def _has_figure(frontier: DeviceFrontier, objective: Objective) -> bool:
    """Whether the device's points have a figure for `objective` (all or none do: a
    price and a board power are the device's)."""
    if frontier.figures is not None:
        return objective in frontier.figures
    return any(_figure(p, objective) is not None for p in frontier.points)


def _better(a: Point, b: Point) -> bool:
    """Whether `a` beats `b` by the objective, then the per-user rate, then the tie
    order. Cost and energy per token are a device's price and power over its tokens/s per
    chip, so every objective ranks one device's points by that rate."""
    c = compare(
        a.chip_rate,
        b.chip_rate,
        a.exact_chip,
        b.exact_chip,
        same=partial(_same_rate, a, b, 1),
    )
    if c:
        return c > 0
    c = compare(
        a.user_rate,
        b.user_rate,
        lambda: _user(a),
        lambda: _user(b),
        same=partial(_same_rate, a, b, 0),
    )
    if c:
        return c > 0
    return a.tie < b.tie


def _best_of(frontier: DeviceFrontier, t: Targets, objective: Objective) -> Point | None:
    """The best point meeting `t`: of every evaluated point, and in each deployment whose
    batches were pruned, of the largest batch meeting `t` (a binary search: tokens/s per
    user falls and ttft and latency rise with the batch, so the batches meeting `t` are
    the first ones) and the smaller ones exactly as good by the objective. The search
    starts from the evaluated batches on either side, and a pruned deployment whose
    batches meeting `t` have fewer tokens/s per chip than the best so far (bounded by the
    first evaluated batch past them, or its largest) is passed over: every objective
    ranks a device's points by that rate."""
    best_point: Point | None = None

    if not _has_figure(frontier, objective):
        return None

    def consider(p: Point) -> None:
        nonlocal best_point
        if not _meets(p, t):
            return
        if best_point is None or _better(p, best_point):
            best_point = p

    if t.max_ttft is None and t.max_latency is None and t.max_chips is None:
        # The best point is on the frontier: one that beats it there would beat it here
        # too (at least its tokens/s per user, so it meets `t` as well).
        for p in frontier.frontier:
            consider(p)
        return best_point
    for p in frontier.points:
        if p.deployment not in frontier.partial:
            consider(p)
    search = frontier.search
    if search is None or not frontier.partial:
        return best_point
    # Best first: the deployment with the highest bound on its batches meeting `t`; a
    # bound read off a smaller batch is made exact by evaluating the largest, then the
    # deployment goes back in line. Stop once the best bound is below the best point.
    line: list[tuple[Fraction, int, GridDeployment]] = []
    for n, g in enumerate(frontier.deployments):
        if g.deployment in frontier.partial:
            low, _, bound, _ = _bracket(g, search, t)
            if low is not None:
                heapq.heappush(line, (-bound, n, g))
    while line:
        negative, n, g = heapq.heappop(line)
        if best_point is not None and -negative < best_point.result.tokens_per_second_per_chip:
            break
        low, high, bound, exact = _bracket(g, search, t)
        if low is None:
            continue
        if not exact:
            search.point(g.deployment, g.batches[-1])
            low, high, bound, exact = _bracket(g, search, t)
            if low is not None:
                heapq.heappush(line, (-bound, n, g))
            continue
        for p in _largest_meeting(g, search, t, low, high):
            consider(p)
    return best_point


def _bracket(
    g: GridDeployment, search: _Search, t: Targets
) -> tuple[int | None, int, Fraction, bool]:
    """Of `g`'s evaluated batches: the last index meeting `t` (None: batch 1 fails it),
    the first failing it (past the end when none does), a bound on the tokens/s per chip
    of every batch meeting `t`, and whether that bound is a batch's own rate (the first
    failing one's, or the largest's) rather than the last evaluated one's scaled to the
    largest batch (the latency grows with the batch)."""
    low: int | None = None
    high = len(g.batches)
    last: Point | None = None
    for i, b in enumerate(g.batches):
        key = (g.deployment, b)
        if key not in search.found:
            continue
        p = search.found[key]
        if p is not None and _meets(p, t):
            low, last = i, p
        else:
            high = i
            break
    if high < len(g.batches):
        edge = search.found[(g.deployment, g.batches[high])]
        if edge is not None:
            return low, high, edge.result.tokens_per_second_per_chip, True
    if last is None or low is None:
        return None, high, Fraction(0), True
    scale = Fraction(g.batches[-1], g.batches[low])
    return low, high, last.result.tokens_per_second_per_chip * scale, scale == 1


def _largest_meeting(
    g: GridDeployment, search: _Search, t: Targets, low: int, high: int
) -> list[Point]:
    """The point of the largest batch of `g` meeting `t`, given that index `low` meets it
    and `high` does not, and those below it with the same tokens/s per chip (the tie
    rule may prefer them)."""
    d, batches = g.deployment, g.batches
    while high - low > 1:
        mid = (low + high) // 2
        p = search.point(d, batches[mid])
        if p is not None and _meets(p, t):
            low = mid
        else:
            high = mid
    top = search.point(d, batches[low])
    assert top is not None
    out = [top]
    rate = top.result.tokens_per_second_per_chip
    for i in range(low - 1, -1, -1):
        p = search.point(d, batches[i])
        if p is None or p.result.tokens_per_second_per_chip != rate:
            break
        out.append(p)
    return out


def best(frontier: DeviceFrontier, targets: Targets, objective: Objective) -> Choice:
    """The device's best point meeting `targets` by `objective`, and the binding target
    (the rule is the module's). Cost and energy per token are a device's price and power
    over its tokens/s per chip, so every objective ranks a device's points alike; they
    differ in which devices have the figure at all."""
    device = frontier.device
    if frontier.problem is not None:
        return Choice(device, None, False, None, frontier.problem)
    if not _has_figure(frontier, objective):
        what = "no price: give one with --price" if objective == "cost" else "no board power"
        return Choice(device, None, False, None, what)
    chosen = _best_of(frontier, targets, objective)
    for target in targets.given():
        relaxed = _best_of(frontier, targets.without(target), objective)
        if relaxed is None:
            continue
        if chosen is None or _better(relaxed, chosen):
            return Choice(device, chosen, chosen is not None, target)
    if chosen is not None:
        return Choice(device, chosen, True, None)
    free = _best_of(frontier, Targets(), objective)
    binding = None
    if free is not None:
        binding = next(
            (t for t in targets.given() if not _meets(free, _only(targets, t))),
            None,
        )
    return Choice(device, None, False, binding)


def _only(targets: Targets, target: Target) -> Targets:
    """`targets` with `target` alone kept."""
    out = targets
    for other in TARGETS:
        if other != target:
            out = out.without(other)
    return out


# ---------------------------------------------------------------------- plan


@dataclass(frozen=True)
class PlanAnswer:
    """`plan`'s answer: per device its best point (`choices`) and its frontier."""

    model: str
    precision: str
    shape: RequestShape
    targets: Targets
    objective: Objective
    choices: tuple[Choice, ...]
    frontiers: tuple[DeviceFrontier, ...]
    prices: dict[str, Fraction]  # the reader's, USD per chip-hour


def plan(
    engine: ModelEngine,
    model_id: str,
    shape: RequestShape,
    devices: Sequence[str],
    precision: str,
    targets: Targets,
    objective: Objective,
    prices: dict[str, Fraction] | None = None,
) -> PlanAnswer:
    """Each device's frontier and its best point for the query."""
    prices = dict(prices or {})
    found = frontiers(engine, model_id, devices, precision, shape, prices)
    choices = tuple(best(f, targets, objective) for f in found)
    return PlanAnswer(model_id, precision, shape, targets, objective, choices, tuple(found), prices)
