"""The model engine: a model's pass per phase × device × precision, step by step.

Each step runs its kernel at the step's shape (evaluated per phase when the model was
built) with the kernel's own formulas, once per `count`; every run sits on its own
roofline (time = max(operations / peak, bytes_L / bandwidth_L for each level, latency
floor)), and the pass's time is the sum of the steps' times: a lower bound, with no
overlap between steps. Everything is exact (`Fraction`); floats appear only where the
rows are written out (`rooflinec.outputs.model_rows`).

A row exists for every model × phase × device with a peak for the model's precision
(and for the precisions its steps name of their own); a selection that names other
precisions (`--precision`) gets rows at those too, and `declared` marks the model's own
precision. Operation and byte counts depend only on (model, phase, step, width), so
they are evaluated once and shared by every device.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING

from rooflinec.catalog import (
    DEPLOYMENT_VARIABLES,
    INTERCONNECT_ROLES,
    LEVELS,
    ONE_CHIP,
    RED,
    Catalog,
    Deployment,
    Device,
    Model,
    ModelStep,
)
from rooflinec.engine.evaluate import collective_runs, count_problem, width_values
from rooflinec.engine.exact import exact_sum
from rooflinec.engine.memory import MemoryEngine, MemoryFit
from rooflinec.engine.roof import slowest
from rooflinec.engine.terms import COMPUTE, LATENCY, MODEL_LIMITS
from rooflinec.errors import Diagnostic, short_number
from rooflinec.formulas import EvaluationError, FormulaError

if TYPE_CHECKING:
    from rooflinec.engine.cells import DeviceFigures
    from rooflinec.formulas import Formula

__all__ = [
    "CollectiveBound",
    "CollectiveStep",
    "DeploymentError",
    "Link",
    "ModelEngine",
    "ModelResult",
    "Plan",
    "PlanStep",
    "RunPoint",
    "StepResult",
    "collector_paused",
    "red_factor",
]

_ZERO = Fraction(0)
_SPLIT_NAMES = frozenset(DEPLOYMENT_VARIABLES)
MAX_SHAPE = 10**15  # as the model builder's
MAX_STEP_COUNT = 10**9


@dataclass(frozen=True)
class RunPoint:
    """The run variables of a pass that is none of the model's named phases (a request's
    prefill or one of its decode passes): `b` sequences, `s` new tokens each, `L` keys
    once they are appended. The engine takes one wherever it takes a phase's name."""

    b: int
    s: int
    L: int

    def variables(self) -> dict[str, int]:
        return {"b": self.b, "s": self.s, "L": self.L}

    def __str__(self) -> str:
        return f"b={self.b}, s={self.s}, L={self.L}"


#: A named phase of the model, or run variables of its own.
Phase = str | RunPoint


class DeploymentError(Exception):
    """A model (or device) that cannot run a deployment: why, in one line."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Link:
    """One interconnect level as a collective sees it: the sustained bandwidth per chip and
    per direction (B/s), the domain's chips, its topology, whether it reduces in-network,
    and its least measured collective time (s)."""

    role: str
    bandwidth: Fraction
    domain: int | None = None
    topology: str | None = None
    in_network: bool = False
    latency: Fraction | None = None
    label: str = ""

    @classmethod
    def of(cls, device: Device) -> dict[str, Link]:
        """A catalog device's levels by role."""
        return {
            role: cls(
                role,
                fabric.sustained_per_direction,
                fabric.chips,
                fabric.topology,
                fabric.reduction == "in-network",
                fabric.latency.value if fabric.latency is not None else None,
                fabric.label,
            )
            for role, fabric in device.interconnect.items()
        }


def red_factor(kind: str, n: int, in_network: bool) -> Fraction:
    """The least values one chip sends per value of the whole message, per direction:
    an all-reduce 2(n-1)/n over point-to-point links (a reduce-scatter, then an
    all-gather) and 1 where the switch reduces (each value up once, its sum back once);
    all-gather, reduce-scatter and all-to-all (n-1)/n (each chip's own share stays); a
    send 1."""
    if kind == "all-reduce":
        ring = Fraction(2 * (n - 1), n)
        return min(ring, Fraction(1)) if in_network else ring
    if kind in ("all-gather", "reduce-scatter", "all-to-all"):
        return Fraction(n - 1, n)
    return Fraction(1)


def group_span(step: ModelStep, n: int, deployment: Deployment) -> int:
    """The chips a group of `n` spans once groups are packed, tp innermost: a tp or ep
    group spans its own n chips, a group over pipeline stages n × tp, one over replicas
    n × tp × pp. It stays in one scale-up domain when its span fits."""
    symbols = step.shape["n"].symbols if "n" in step.shape else frozenset()
    if "dp" in symbols:
        return n * deployment.tp * deployment.pp
    if "pp" in symbols:
        return n * deployment.tp
    return n


class CollectiveStep:
    """A collective step of a pass at a row precision (n ≥ 2, count ≥ 1): its bytes depend
    on the device's fabric, so they are found per device (`CollectiveBound`)."""

    __slots__ = (
        "by_red",
        "count",
        "flops",
        "formula",
        "key",
        "kind",
        "n",
        "position",
        "precision",
        "shape",
        "span",
        "step",
        "values",
    )

    def __init__(
        self,
        step: ModelStep,
        precision: str,
        shape: dict[str, int],
        count: int,
        kind: str,
        span: int,
        flops: Fraction,
        position: int,
        formula: Formula,
        values: dict[str, int | Fraction],
    ) -> None:
        self.step = step
        self.precision = precision
        self.shape = shape
        self.formula = formula  # the kernel's scale_up bytes, over `values` and `red`
        self.values = values
        self.by_red: dict[Fraction, Fraction] = {}
        # What a device's bound of one run depends on
        self.key = HashedKey((kind, span, precision, formula.text, flops, tuple(values.items())))
        self.count = count
        self.kind = kind
        self.n = shape["n"]
        self.span = span  # chips the group spans (packing)
        self.flops = flops  # one run's operations
        self.position = position  # its place among the pass's steps

    def bytes_at(self, red: Fraction) -> Fraction:
        """One run's bytes per chip and direction with `red` bound (kept per `red`: every
        device with the same kind of link gets the same)."""
        hit = self.by_red.get(red)
        if hit is None:
            hit = self.by_red[red] = self.formula.evaluate({**self.values, RED: red})
        return hit


class HashedKey(tuple):  # type: ignore[type-arg]  # any hashable parts
    """A tuple whose hash is found once: a `Fraction`'s hash is a modular inverse, and a
    collective's key (with its operations and message values) is looked up on every row
    of every device (`_DeviceBounds.collective`)."""

    _hash: int

    def __new__(cls, parts: tuple[object, ...]) -> HashedKey:
        key = super().__new__(cls, parts)
        key._hash = tuple.__hash__(key)
        return key

    def __hash__(self) -> int:
        return self._hash


@dataclass(frozen=True)
class CollectiveBound:
    """One run of a collective step on a device: the level it crosses and its time."""

    role: str  # scale_up or scale_out
    red: Fraction
    bytes: Fraction  # one run's, per chip and direction
    bandwidth: Fraction  # B/s the group gets (mesh share applied)
    time: Fraction  # one run's, s
    limited_by: str
    link: Link


@dataclass(slots=True)
class StepResult:
    """One step of a pass on one device: its kernel at its shape, `count` times.

    `flops`, `bytes` and `time` cover all `count` runs; `intensity`, `attainable` and
    `limited_by` are those of every run (the same for each). Slotted and not frozen: a
    compile of the bundled catalog makes tens of thousands of them (when a row's steps
    are read), and a frozen dataclass sets each field through `object.__setattr__`.
    """

    step: str
    kernel: str
    count: int
    shape: dict[str, int]
    precision: str  # the precision the step computes at
    widths: dict[str, str]  # width symbol -> precision id bound
    flops: Fraction
    bytes: dict[str, Fraction]  # every level the kernel gives
    time: Fraction  # s
    intensity: dict[str, Fraction]
    limited_by: str
    floor: Fraction | None = field(default=None, compare=False)  # latency of one run, s

    @property
    def attainable(self) -> Fraction:
        """Operations over time: the rate of each run, OP/s."""
        return self.flops / self.time


# One run's operations and bytes per level as (numerator, denominator) integers.
_RunKey = tuple[int, int, tuple[tuple[str, int, int], ...]]


@dataclass(frozen=True)
class _Counts:
    """A step's kernel at its shape for one phase and width: one run, and `count` runs.

    `flops_ratio` and `levels` are one run's counts as (numerator, denominator) integers,
    for the bound's cross-multiplied comparisons on every device; `run` holds both."""

    flops: Fraction
    bytes: dict[str, Fraction]
    intensity: dict[str, Fraction]
    count: int
    total_flops: Fraction
    total_bytes: dict[str, Fraction]
    flops_ratio: tuple[int, int] = (0, 1)
    levels: tuple[tuple[str, int, int], ...] = ()
    # One object for every step, phase and model that runs the same kernel at the same
    # shape, widths and width: what a device's bound of one run depends on
    run: _RunKey = (0, 1, ())


# A run's operations, bytes per level, intensities and `_Counts.run`.
_Run = tuple[Fraction, dict[str, Fraction], dict[str, Fraction], _RunKey]


class PlanStep:
    """One step of a pass at a row precision: the same on every device."""

    __slots__ = ("counts", "position", "precision", "shape", "step")

    def __init__(
        self,
        step: ModelStep,
        precision: str,
        shape: dict[str, int],
        counts: _Counts,
        position: int = 0,
    ):
        self.step = step
        self.precision = precision  # the step's own, or the row's
        self.shape = shape
        self.counts = counts
        self.position = position  # its place among the pass's steps


class Plan:
    """A model's pass of one phase at one precision, with everything that does not
    depend on the device: the steps' counts and the pass's operation and byte sums.

    `unique` holds each distinct run of the pass (a kernel at a shape and width, at a
    precision) with the runs of it the pass makes in all (the steps' counts summed), and
    `index` the position in `unique` of each step's run: a device's bound is found once
    per distinct run, and the pass's time per limit is a sum over them."""

    __slots__ = (
        "collective_runs",
        "collectives",
        "deployment",
        "flops",
        "index",
        "steps",
        "traffic",
        "unique",
    )

    def __init__(
        self,
        steps: tuple[PlanStep, ...],
        flops: Fraction,
        traffic: dict[str, Fraction],
        collectives: tuple[CollectiveStep, ...] = (),
        deployment: Deployment = ONE_CHIP,
    ) -> None:
        self.steps = steps  # the steps on a memory roofline, in order
        self.flops = flops  # every step's, collectives' too
        self.traffic = traffic  # memory levels only: a collective's bytes are a device's
        self.collectives = collectives  # the collective steps evaluated (n ≥ 2)
        self.deployment = deployment
        positions: dict[tuple[int, str], int] = {}
        unique: list[tuple[_RunKey, str, int]] = []
        index: list[int] = []
        for entry in steps:
            key = (id(entry.counts.run), entry.precision)
            at = positions.get(key)
            if at is None:
                at = positions[key] = len(unique)
                unique.append((entry.counts.run, entry.precision, 0))
            run, precision, count = unique[at]
            unique[at] = (run, precision, count + entry.counts.count)
            index.append(at)
        self.unique = tuple(unique)
        self.index = tuple(index)
        # Each distinct collective run (its steps share one bound on any device: the same
        # `key`) with the runs of it the pass makes, in order of first appearance.
        runs: dict[tuple[object, ...], tuple[CollectiveStep, int]] = {}
        for c in collectives:
            first, count = runs.get(c.key, (c, 0))
            runs[c.key] = (first, count + c.count)
        self.collective_runs = tuple(runs.values())


# ModelResult's fields, as its constructor takes them
_FIELDS = (
    "model",
    "phase",
    "device",
    "precision",
    "declared",
    "tokens",
    "flops",
    "bytes",
    "time",
    "time_by_limit",
    "measured_time",
    "steps",
    "measured_source",
    "fit",
)

# Each step's shape and count in one pass.
_StepValues = tuple[tuple[dict[str, int], int], ...]

# One run of each step on one device: its time as (numerator, denominator) integers (not
# reduced) and what limits it.
Runs = tuple[tuple[int, int, str], ...]


class ModelResult:
    """One model's pass of one phase on one device at one precision, exactly.

    The steps' results are made when `steps` is first read: a compile to text writes
    them straight from `plan` and `runs`, integers all the way.
    """

    __slots__ = (
        "_steps",
        "bytes",
        "collective_bounds",
        "declared",
        "device",
        "fit",
        "flops",
        "latency",
        "measured_source",
        "measured_time",
        "model",
        "phase",
        "plan",
        "precision",
        "runs",
        "time",
        "time_by_limit",
        "time_overlapped",
        "tokens",
    )

    def __init__(
        self,
        model: str,
        phase: str,
        device: str,
        precision: str,
        declared: bool,  # the model's own precision
        tokens: int | Fraction,  # a fraction for a verify pass of speculation
        flops: Fraction,
        bytes: dict[str, Fraction],  # sums over the steps, every level some step gives
        time: Fraction,  # s, the sum of the steps' times
        time_by_limit: dict[str, Fraction],  # compute, each level, latency
        measured_time: Fraction | None,
        steps: tuple[StepResult, ...] | None,
        measured_source: str | None = None,
        *,
        plan: Plan | None = None,
        runs: Runs = (),
        latency: Fraction | None = None,
        fit: MemoryFit | None = None,
        collective_bounds: tuple[CollectiveBound, ...] = (),
        time_overlapped: Fraction | None = None,
    ) -> None:
        self.model = model
        self.phase = phase
        self.device = device
        self.precision = precision
        self.declared = declared
        self.tokens = tokens
        self.flops = flops
        self.bytes = bytes
        self.time = time
        self.time_by_limit = time_by_limit
        self.measured_time = measured_time
        self._steps = steps
        self.measured_source = measured_source
        self.plan = plan  # with `runs`, what `steps` is made from when not given
        self.runs = runs
        self.latency = latency  # the device's latency floor of one run, s
        self.fit = fit  # the memory ledger per chip; None: no ledger or not one chip's row
        self.collective_bounds = collective_bounds  # one per `plan.collectives`
        # No collective: nothing to overlap, the sum of the steps.
        self.time_overlapped = time if time_overlapped is None else time_overlapped

    @property
    def deployment(self) -> Deployment:
        return ONE_CHIP if self.plan is None else self.plan.deployment

    @property
    def chips(self) -> int:
        return self.deployment.total

    @property
    def tp(self) -> int:
        return self.deployment.tp

    @property
    def pp(self) -> int:
        return self.deployment.pp

    @property
    def ep(self) -> int:
        return self.deployment.ep

    @property
    def limited_by(self) -> str:
        """The limit that holds the most of the pass's time (ties in the method's order)."""
        longest = max(self.time_by_limit.values())
        return next(n for n in MODEL_LIMITS if self.time_by_limit.get(n) == longest)

    @property
    def steps(self) -> tuple[StepResult, ...]:
        if self._steps is None:
            assert self.plan is not None
            self._steps = self._made_steps()
        return self._steps

    def _made_steps(self) -> tuple[StepResult, ...]:
        assert self.plan is not None
        made = self._memory_steps()
        if not self.plan.collectives:
            return made
        out = [*made, *self.collective_steps()]
        positions = [p.position for p in self.plan.steps]
        positions += [c.position for c in self.plan.collectives]
        order = sorted(range(len(out)), key=positions.__getitem__)
        return tuple(out[i] for i in order)

    def collective_steps(self) -> list[StepResult]:
        """The results of the collective steps alone, in the plan's order."""
        assert self.plan is not None
        out = []
        for c, b in zip(self.plan.collectives, self.collective_bounds, strict=True):
            total = b.bytes * c.count
            out.append(
                StepResult(
                    c.step.id,
                    c.step.kernel,
                    c.count,
                    c.shape,
                    c.precision,
                    c.step.widths,
                    c.flops * c.count,
                    {b.role: total},
                    b.time * c.count,
                    {b.role: c.flops / b.bytes},
                    b.limited_by,
                    self.latency,
                )
            )
        return out

    def _memory_steps(self) -> tuple[StepResult, ...]:
        assert self.plan is not None
        return tuple(
            StepResult(
                p.step.id,
                p.step.kernel,
                p.counts.count,
                p.shape,
                p.precision,
                p.step.widths,
                p.counts.total_flops,
                p.counts.total_bytes,
                Fraction(n * p.counts.count, d),
                p.counts.intensity,
                limited_by,
                self.latency,
            )
            for p, (n, d, limited_by) in zip(self.plan.steps, self.runs, strict=True)
        )

    def _fields(self) -> tuple[object, ...]:
        return (
            self.model,
            self.phase,
            self.device,
            self.precision,
            self.declared,
            self.tokens,
            self.flops,
            self.bytes,
            self.time,
            self.time_by_limit,
            self.measured_time,
            self.steps,
            self.measured_source,
            self.fit,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ModelResult):
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # as a dataclass with dict fields

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={v!r}" for n, v in zip(_FIELDS, self._fields(), strict=True))
        return f"ModelResult({inner})"

    @property
    def attainable(self) -> Fraction:
        """Operations over the pass's time, OP/s."""
        return self.flops / self.time

    @property
    def tokens_per_second(self) -> Fraction:
        return self.tokens / self.time

    @property
    def efficiency(self) -> Fraction | None:
        """The roofline time over the measured time (1 would be a pass at the bound)."""
        return None if self.measured_time is None else self.time / self.measured_time

    @property
    def fits(self) -> bool | None:
        """Whether the ledger fits the device's capacity per chip; None when the model has
        no ledger or the device no capacity."""
        return None if self.fit is None else self.fit.fits

    @property
    def memory(self) -> dict[str, Fraction | None] | None:
        return None if self.fit is None else self.fit.ledger.as_dict()

    @property
    def max_batch(self) -> int | None:
        return None if self.fit is None else self.fit.max_batch

    @property
    def max_context(self) -> int | None:
        return None if self.fit is None else self.fit.max_context

    @property
    def max_context_note(self) -> str | None:
        return None if self.fit is None else self.fit.max_context_note

    @property
    def needs_chips(self) -> int | None:
        """The fewest chips (tp) on which a pass that does not fit would; None otherwise."""
        return None if self.fit is None else self.fit.needs_chips

    def step(self, step_id: str) -> StepResult | None:
        return next((s for s in self.steps if s.step == step_id), None)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector off for a while: making the rows (and writing them)
    allocates tens of thousands of small objects none of which is in a cycle, and each
    full pass it would start meanwhile walks the whole catalog for nothing (a tenth of
    a compile's time with the bundled models)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


# One run's time on a device as (numerator, denominator) integers and what limits it.
Bound = tuple[int, int, str]


class _DeviceBounds:
    """One device's bound of each distinct run, found once and shared by every row on it.

    The time of one run under each ceiling is compared as (numerator, denominator)
    integers: the longest wins, ties in LIMITED_BY order (compute first), as the lowest
    rate does for a kernel case.
    """

    __slots__ = ("bandwidths", "bounds", "collectives", "figures", "latency", "links", "peaks")

    def __init__(
        self,
        figures: DeviceFigures,
        latency: Fraction | None,
        links: dict[str, Link] | None = None,
    ) -> None:
        self.figures = figures
        self.latency = latency
        self.links = links or {}
        self.collectives: dict[tuple[object, ...], CollectiveBound] = {}
        self.bandwidths = {
            lv: (bw.numerator, bw.denominator) for lv, bw in figures.bandwidths.items()
        }
        self.peaks = {p: (v.numerator, v.denominator) for p, v in figures.peaks.items()}
        # By the run's identity (the engine keeps every run it made) and precision.
        self.bounds: dict[tuple[int, str], Bound] = {}

    def bound(self, run: _RunKey, precision: str) -> Bound:
        key = (id(run), precision)
        hit = self.bounds.get(key)
        if hit is None:
            hit = self.bounds[key] = run_bound(
                run, self.peaks[precision], self.bandwidths, self.latency
            )
        return hit

    def collective(self, c: CollectiveStep) -> CollectiveBound:
        """One run of a collective step on this device's fabric (`collective_bound`), once
        per distinct run: a layer's all-reduces share one (the same kind, group and
        message), as the steps on a memory roofline share theirs."""
        hit = self.collectives.get(c.key)
        if hit is None:
            hit = self.collectives[c.key] = collective_bound(
                c, self.figures.peaks[c.precision], self.links, self.latency
            )
        return hit


def fabric_role(span: int, links: Mapping[str, Link]) -> str:
    """The level a group spanning `span` chips crosses: the scale-up fabric when the
    group fits in one of its domains (a level without a domain joins any group), else
    the scale-out network."""
    up = links.get("scale_up")
    if up is not None and (up.domain is None or span <= up.domain):
        return "scale_up"
    return "scale_out"


def collective_bound(
    c: CollectiveStep,
    peak: Fraction,
    links: dict[str, Link],
    launch: Fraction | None,
) -> CollectiveBound:
    """One run of a collective on a device: `red` bound for the level the group crosses,
    bytes over the bandwidth the group gets (on a mesh, (n-1)/(domain-1) of the chip's),
    and the time the longest of that, the operations over the peak, the level's measured
    latency and the launch floor (a floor only where strictly longer)."""
    role = fabric_role(c.span, links)
    link = links.get(role)
    if link is None:
        raise DeploymentError(f"no {role.replace('_', '-')} level for a group of {c.span} chips")
    bandwidth = link.bandwidth
    if link.topology == "mesh" and link.domain is not None and 1 < c.n < link.domain:
        bandwidth = bandwidth * Fraction(c.n - 1, link.domain - 1)
    red = red_factor(c.kind, c.n, link.in_network)
    nbytes = c.bytes_at(red)
    floors: list[tuple[str, tuple[int, int]]] = []
    if link.latency is not None:
        floors.append((role, (link.latency.numerator, link.latency.denominator)))
    if launch is not None:
        floors.append((LATENCY, (launch.numerator, launch.denominator)))
    ops = c.flops / peak
    traffic = nbytes / bandwidth
    n, d, limit = slowest(
        (ops.numerator, ops.denominator),
        ((role, (traffic.numerator, traffic.denominator)),),
        floors,
    )
    return CollectiveBound(role, red, nbytes, bandwidth, Fraction(n, d), limit, link)


def run_bound(
    run: _RunKey,
    peak: tuple[int, int],
    bandwidths: dict[str, tuple[int, int]],
    latency: Fraction | None,
) -> Bound:
    """The time of one run (`_Counts.run`) at a peak (OP/s), bandwidths (B/s) and latency
    floor (s), each as (numerator, denominator), exactly, with what limits it: the
    longest time of any ceiling, by the roof's one rule (`rooflinec.engine.roof.slowest`)."""
    flops_n, flops_d, levels = run
    return slowest(
        (flops_n * peak[1], flops_d * peak[0]),
        (
            (lv, (traffic_n * bandwidths[lv][1], traffic_d * bandwidths[lv][0]))
            for lv, traffic_n, traffic_d in levels
            if lv in bandwidths
        ),
        () if latency is None else ((LATENCY, (latency.numerator, latency.denominator)),),
    )


class ModelEngine:
    """Model rows over a catalog's devices; counts cached per (model, phase, step, width)
    and deployment."""

    def __init__(
        self,
        catalog: Catalog,
        devices: dict[str, DeviceFigures],
        latencies: dict[str, Fraction],
    ) -> None:
        self.catalog = catalog
        self.devices = devices
        self.latencies = latencies
        self._counts: dict[tuple[str, Phase, int, Fraction, Deployment], _Counts] = {}
        self._plans: dict[tuple[str, Phase, str, Deployment], Plan] = {}
        # one run's counts by kernel, shape, width bindings and width (see `_Counts.run`)
        self._runs: dict[tuple[object, ...], _Run] = {}
        self._rows: dict[tuple[str, str, str, str, Deployment], ModelResult] = {}
        self._devices: dict[str, _DeviceBounds] = {}
        self.memory = MemoryEngine(catalog)
        self._values: dict[tuple[str, Phase, Deployment], _StepValues] = {}
        # A step's shape and count at run points, by the values of the symbols it names:
        # a step that names no run variable (a projection's N and K, its count) has the
        # same at every batch and length, and one that names no degree, at every
        # deployment alike.
        self._step_at: dict[tuple[object, ...], tuple[dict[str, int], int]] = {}
        self._step_names: dict[tuple[str, int], tuple[str, ...]] = {}
        # A step's counts by its run (`_runs`' key) and its count: the same object for
        # every phase and deployment that runs that step alike
        self._counts_of: dict[tuple[object, ...], _Counts] = {}
        self._point_tokens: dict[tuple[str, RunPoint, Deployment], int] = {}
        self._problems: dict[tuple[str, Deployment], str | None] = {}
        self._links: dict[str, dict[str, Link]] = {}
        self._spans: dict[tuple[str, Deployment], list[tuple[str, int]]] = {}
        self._fabric: dict[tuple[str, str, Deployment], str | None] = {}
        self._free: dict[tuple[str, int], bool] = {}
        self._checked: set[tuple[object, ...]] = set()  # kernel runs whose counts are positive

    # ------------------------------------------------------------------ deployments
    def deployment_problem(self, model: Model, deployment: Deployment) -> str | None:
        """Why `model` cannot run `deployment` (a degree that leaves a shape or count not a
        whole number, or a step with nothing to do), or None. One chip always can."""
        if deployment == ONE_CHIP:
            return None
        key = (model.id, deployment)
        if key not in self._problems:
            problem = deployment.problem()
            try:
                if problem is None:
                    for phase in model.phases:
                        self._check_counts(model, phase, deployment)
            except DeploymentError as exc:
                problem = exc.message
            self._problems[key] = problem
        return self._problems[key]

    def fabric_problem(
        self,
        model: Model,
        device: str,
        deployment: Deployment,
        links: dict[str, Link] | None = None,
        *,
        groups: Sequence[tuple[str, int]] | None = None,
    ) -> str | None:
        """Why `device` cannot run `model`'s collectives under `deployment` (a level its
        spec, or `links` given in its place, does not give), or None. `groups`: the
        collective steps and their spans (`_groups`), when the caller found them."""
        if links is None:
            # The same for every phase of the model: found once per device.
            key = (model.id, device, deployment)
            if key not in self._fabric:
                self._fabric[key] = self._fabric_problem(model, device, deployment, None, groups)
            return self._fabric[key]
        return self._fabric_problem(model, device, deployment, links, groups)

    def _fabric_problem(
        self,
        model: Model,
        device: str,
        deployment: Deployment,
        links: dict[str, Link] | None,
        groups: Sequence[tuple[str, int]] | None = None,
    ) -> str | None:
        links = self.links(device) if links is None else links
        if groups is None:
            groups = self._groups(model, deployment)
        for step_id, span in groups:
            role = fabric_role(span, links)
            if not links:
                return (
                    f"device '{device}' gives no interconnect (scale_up, scale_out) for"
                    f" step '{step_id}' of model '{model.id}' over {span} chips"
                )
            if role not in links:
                level = "scale-up fabric" if role == "scale_up" else "scale-out network"
                return (
                    f"device '{device}' gives no {level} (interconnect.{role}) for step"
                    f" '{step_id}' of model '{model.id}' over {span} chips"
                )
        return None

    def _groups(self, model: Model, deployment: Deployment) -> list[tuple[str, int]]:
        """Each collective step evaluated in some phase and the chips its group spans, the
        widest first: the same on every device."""
        key = (model.id, deployment)
        hit = self._spans.get(key)
        if hit is None:
            spans: dict[str, int] = {}
            for phase in model.phases:
                values = self.step_values(model, phase, deployment)
                for step, (shape, count) in zip(model.steps, values, strict=True):
                    if self.catalog.kernels[step.kernel].collective is None:
                        continue
                    if collective_runs(shape, count):
                        span = group_span(step, shape["n"], deployment)
                        spans[step.id] = max(span, spans.get(step.id, 0))
            hit = self._spans[key] = sorted(spans.items(), key=lambda item: -item[1])
        return hit

    def links(self, device: str) -> dict[str, Link]:
        """A catalog device's interconnect levels as collectives see them."""
        hit = self._links.get(device)
        if hit is None:
            spec = self.catalog.devices.get(device)
            hit = self._links[device] = {} if spec is None else Link.of(spec)
        return hit

    def step_values(
        self, model: Model, phase: Phase, deployment: Deployment = ONE_CHIP
    ) -> tuple[tuple[dict[str, int], int], ...]:
        """Each step's shape and count in `phase` under `deployment`: on one chip those
        the model was built with; otherwise (or at a `RunPoint`) evaluated here, and a
        `DeploymentError` when one is not a whole number (or a step's count is not
        positive)."""
        key = (model.id, phase, deployment)
        hit = self._values.get(key)
        if hit is None:
            if isinstance(phase, RunPoint):
                at = {**model.parameters, **phase.variables(), **deployment.variables()}
                hit = tuple(
                    self._evaluated_at(model, i, s, str(phase), at)
                    for i, s in enumerate(model.steps)
                )
            elif deployment == ONE_CHIP:
                hit = tuple((s.shapes[phase], s.counts[phase]) for s in model.steps)
            else:
                variables = model.variables(phase, deployment)
                # A step whose formulas name no degree has its one-chip values (checked
                # as these would be when the model was built): not evaluated again.
                hit = tuple(
                    (s.shapes[phase], s.counts[phase])
                    if self._split_free(model, i)
                    else self._evaluated(model, s, phase, variables)
                    for i, s in enumerate(model.steps)
                )
            self._values[key] = hit
        return hit

    def _split_free(self, model: Model, index: int) -> bool:
        """Whether step `index`'s shape and count name no deployment variable: then every
        deployment gives it its one-chip shape, count and counts."""
        key = (model.id, index)
        hit = self._free.get(key)
        if hit is None:
            step = model.steps[index]
            names = step.count.symbols.union(*(f.symbols for f in step.shape.values()))
            hit = self._free[key] = not names & _SPLIT_NAMES
        return hit

    def _evaluated_at(
        self, model: Model, index: int, step: ModelStep, phase: str, variables: dict[str, int]
    ) -> tuple[dict[str, int], int]:
        """`_evaluated` at a run point, once per distinct value of the symbols the step
        names (the same formulas over the same values give the same whole numbers; a
        step that fails is evaluated again each time, so its error names its own
        phase)."""
        names = self._step_names.get((model.id, index))
        if names is None:
            symbols = step.count.symbols.union(*(f.symbols for f in step.shape.values()))
            names = self._step_names[(model.id, index)] = tuple(sorted(symbols))
        if any(n not in variables for n in names):
            return self._evaluated(model, step, phase, variables)  # says which is missing
        key = (model.id, index, *(variables[n] for n in names))
        hit = self._step_at.get(key)
        if hit is None:
            hit = self._evaluated(model, step, phase, variables)
            self._step_at[key] = hit
        return hit

    def _evaluated(
        self, model: Model, step: ModelStep, phase: str, variables: dict[str, int]
    ) -> tuple[dict[str, int], int]:
        collective = self.catalog.kernels[step.kernel].collective is not None
        count = self._whole(model, step, phase, "count", step.count.text, variables, step.count)
        if count < 0 or (count == 0 and not collective):
            raise DeploymentError(
                f"model '{model.id}', step '{step.id}' in phase '{phase}': its count"
                f" {step.count.text} = {count}"
            )
        shape: dict[str, int] = {}
        for symbol, formula in step.shape.items():
            shape[symbol] = self._whole(
                model, step, phase, symbol, formula.text, variables, formula,
                whole=symbol not in step.fractional,
            )  # fmt: skip
        if collective and not collective_runs(shape, count):
            return shape, count
        for symbol, value in shape.items():
            # A fraction (experts read per chip under uniform routing) may be under 1.
            if value < 1 and not (symbol in step.fractional and value > 0):
                raise DeploymentError(
                    f"model '{model.id}', step '{step.id}' in phase '{phase}': {symbol} ="
                    f" {step.shape[symbol].text} = {value}, not 1 or more"
                )
        return shape, count

    @staticmethod
    def _whole(
        model: Model,
        step: ModelStep,
        phase: str,
        what: str,
        text: str,
        variables: dict[str, int],
        formula: Formula,
        *,
        whole: bool = True,
    ) -> int:
        """The value of a step's count or shape formula; `whole` false for a symbol that
        may be a fraction (`ModelStep.fractional`), which is returned as one."""
        where = f"model '{model.id}', step '{step.id}' in phase '{phase}'"
        try:
            value = formula.evaluate(variables)
        except (EvaluationError, FormulaError) as exc:
            raise DeploymentError(f"{where}: {what} = {text}: {exc.message}") from None
        if not whole and value.denominator != 1:
            return value  # type: ignore[return-value]  # a fraction where one may be
        if value.denominator != 1:
            raise DeploymentError(
                f"{where}: {what} = {text} = {short_number(value)}, not a whole number"
            )
        limit = MAX_STEP_COUNT if what == "count" else MAX_SHAPE
        if value > limit:
            raise DeploymentError(f"{where}: {what} = {text} is implausibly large")
        return int(value)

    def _check_counts(self, model: Model, phase: str, deployment: Deployment) -> None:
        """Every step's kernel at its shape under `deployment` gives positive counts at
        the model's width, as the builder checks on one chip."""
        values = self.step_values(model, phase, deployment)
        for step, (shape, _) in zip(model.steps, values, strict=True):
            kernel = self.catalog.kernels[step.kernel]
            if kernel.collective is not None:
                continue
            precision = step.precision or model.precision
            width = self.catalog.precisions[precision].bytes
            same = (step.kernel, tuple(shape.items()), tuple(step.widths.items()), width)
            if same in self._checked:
                continue  # the same kernel at the same shape: checked already
            bound: dict[str, int | Fraction] = {
                **shape,
                **width_values(kernel.widths, width, step.widths, self.catalog.precisions),
            }
            formulas = [("operations", kernel.flops), *kernel.bytes.items()]
            for what, formula in formulas:
                problem = count_problem(formula.evaluate(bound))
                if problem is not None:
                    shown = ", ".join(f"{k}={v}" for k, v in shape.items())
                    raise DeploymentError(
                        f"model '{model.id}', step '{step.id}' in phase '{phase}': kernel"
                        f" '{kernel.id}' at {shown}: the {what} count {problem}"
                    )
            self._checked.add(same)

    # ------------------------------------------------------------------ selection
    def keys(
        self,
        *,
        models: Iterable[str] | None = None,
        phases: Iterable[str] | None = None,
        devices: Iterable[str] | None = None,
        precisions: Iterable[str] | None = None,
        declared_only: bool = False,
        deployment: Deployment = ONE_CHIP,
    ) -> Iterator[tuple[str, str, str, str]]:
        """(model, phase, device, precision) of every row a selection keeps, in catalog
        order: models, their phases, devices, each device's peaks (`None` keeps all, but
        precisions: `None` keeps the model's own precision only). Under another
        deployment than one chip, a model that cannot run it and a device without the
        fabric its collectives cross are left out (`deployment_problem`,
        `fabric_problem` say why)."""
        m, ph, d, p = (
            set(x) if x is not None else None for x in (models, phases, devices, precisions)
        )
        for model in self.catalog.models.values():
            if m is not None and model.id not in m:
                continue
            if self.deployment_problem(model, deployment) is not None:
                continue
            own = {s.precision for s in model.steps if s.precision is not None}
            for phase in model.phases:
                if ph is not None and phase not in ph:
                    continue
                for figures in self.devices.values():
                    if d is not None and figures.id not in d:
                        continue
                    if not own <= figures.peaks.keys():
                        continue
                    if deployment != ONE_CHIP and self.fabric_problem(
                        model, figures.id, deployment
                    ):
                        continue
                    for precision in figures.peaks:
                        # A model says what it computes at: unlike a kernel case, whose
                        # formulas hold at any width, its rows at every other precision
                        # would be what-ifs nobody asked for (a fp64 Llama) and thirty
                        # times the output. `--precision` asks for them.
                        if (p is None or declared_only) and precision != model.precision:
                            continue
                        if p is not None and precision not in p:
                            continue
                        yield model.id, phase, figures.id, precision

    def rows(
        self, deployment: Deployment = ONE_CHIP, **selection: Iterable[str] | bool | None
    ) -> list[ModelResult]:
        with collector_paused():
            keys = self.keys(deployment=deployment, **selection)  # type: ignore[arg-type]
            return [self.row(*key, deployment=deployment) for key in keys]

    @cached_property
    def all(self) -> tuple[ModelResult, ...]:
        """Every row, in catalog order."""
        return tuple(self.rows())

    def row(
        self,
        model_id: str,
        phase: str,
        device: str,
        precision: str,
        deployment: Deployment = ONE_CHIP,
    ) -> ModelResult:
        """The row of a catalog device (KeyError for an unknown id); made once."""
        key = (model_id, phase, device, precision, deployment)
        hit = self._rows.get(key)
        if hit is None:
            hit = self._rows[key] = self._row(*key)
        return hit

    def _row(
        self, model_id: str, phase: str, device: str, precision: str, deployment: Deployment
    ) -> ModelResult:
        model = self.catalog.models[model_id]
        measured = next(
            (
                m
                for m in model.measured
                if (m.device, m.phase, m.precision) == (device, phase, precision)
            ),
            None,
        )
        if deployment != ONE_CHIP:
            measured = None  # a measured pass time is of one chip
        row = self.evaluate(
            model,
            phase,
            self.devices[device],
            precision,
            self.latencies.get(device),
            measured.time if measured else None,
            measured.source if measured else None,
            deployment=deployment,
        )
        if device in self.catalog.devices:
            row.fit = self.memory.fit(model, phase, precision, device, deployment)
        return row

    # ------------------------------------------------------------------ evaluation
    def evaluate(
        self,
        model: Model,
        phase: Phase,
        figures: DeviceFigures,
        precision: str,
        latency: Fraction | None = None,
        measured_time: Fraction | None = None,
        measured_source: str | None = None,
        *,
        deployment: Deployment = ONE_CHIP,
        links: dict[str, Link] | None = None,
    ) -> ModelResult:
        """The pass of `phase` on a device's figures: each step on its own roofline.

        Each distinct run's bound comes from the device's `_DeviceBounds` (see
        `run_bound`). The steps' times are summed per limit as integers (their
        denominators are mostly the same ceiling's), so a row makes one `Fraction` per
        limit and one for its time; its steps' results are made when first read. A
        collective step's run is bound on the device's fabric (`collective_bound`;
        `links` replaces the catalog device's levels, as an example's figures do).
        """
        plan = self.plan(model, phase, precision, deployment)
        device = self._device(figures, latency, links)
        bound_of = device.bound
        bounds: list[Bound] = []
        sums: dict[str, list[int]] = {}
        # Per distinct run, not per step: the steps that run the same kernel at the same
        # shape and width (a layer's projections) share one bound, and their times sum
        # to that bound times their counts summed.
        for run, run_precision, count in plan.unique:
            bound = bound_of(run, run_precision)
            bounds.append(bound)
            n, d, limited_by = bound
            total = sums.get(limited_by)
            if total is None:
                sums[limited_by] = [n * count, d]
            elif total[1] == d:
                total[0] += n * count
            else:
                total[0] = total[0] * d + n * count * total[1]
                total[1] *= d
        runs = tuple([bounds[i] for i in plan.index])
        bandwidths = device.bandwidths
        found = {name: Fraction(n, d) for name, (n, d) in sums.items()}
        traffic = plan.traffic
        # The pass's time: the limits' sums added as integers, one Fraction made.
        time_n, time_d = 0, 1
        for n, d in sums.values():
            if d == time_d:
                time_n += n
            else:
                time_n, time_d = time_n * d + n * time_d, time_d * d
        time = Fraction(time_n, time_d)
        collective_bounds: tuple[CollectiveBound, ...] = ()
        overlapped: Fraction | None = None
        roles: list[str] = []
        if plan.collectives:
            collective = device.collective
            collective_bounds = tuple([collective(c) for c in plan.collectives])
            # Summed per distinct run (a layer's all-reduces share one bound) as integers,
            # as the steps on memory rooflines are: one Fraction per limit and role.
            talk_n, talk_d = 0, 1
            spent: dict[str, list[int]] = {}
            sent: dict[str, list[int]] = {}
            for c, count in plan.collective_runs:
                b = collective(c)
                t, nbytes = b.time, b.bytes
                n, d = t.numerator * count, t.denominator
                if d == talk_d:
                    talk_n += n
                else:
                    talk_n, talk_d = talk_n * d + n * talk_d, talk_d * d
                for into, key, (vn, vd) in (
                    (spent, b.limited_by, (n, d)),
                    (sent, b.role, (nbytes.numerator * count, nbytes.denominator)),
                ):
                    total = into.get(key)
                    if total is None:
                        into[key] = [vn, vd]
                    elif total[1] == vd:
                        total[0] += vn
                    else:
                        total[0] = total[0] * vd + vn * total[1]
                        total[1] *= vd
            for limit, (n, d) in spent.items():
                found[limit] = found.get(limit, _ZERO) + Fraction(n, d)
            traffic = dict(traffic)
            for role, (n, d) in sent.items():
                traffic[role] = Fraction(n, d)  # no memory level is a role
            roles = list(sent)
            talk = Fraction(talk_n, talk_d)
            overlapped = max(time, talk)
            time += talk
        by_limit = {COMPUTE: found.get(COMPUTE, _ZERO)}
        for lv in LEVELS:
            if lv in bandwidths and lv in traffic:
                by_limit[lv] = found.get(lv, _ZERO)
        if latency is not None:
            by_limit[LATENCY] = found.get(LATENCY, _ZERO)
        for role in INTERCONNECT_ROLES:
            if role in roles:
                by_limit[role] = found.get(role, _ZERO)
        return ModelResult(
            model.id,
            str(phase),
            figures.id,
            precision,
            precision == model.precision,
            self._tokens(model, phase, deployment),
            plan.flops,
            traffic,
            time,
            by_limit,
            measured_time,
            None,
            measured_source,
            plan=plan,
            runs=runs,
            latency=latency,
            collective_bounds=collective_bounds,
            time_overlapped=overlapped,
        )

    def _tokens(self, model: Model, phase: Phase, deployment: Deployment) -> int | Fraction:
        """The tokens a pass yields: the built model's for a named phase (a fraction for a
        verify pass of speculation), else `tokens` evaluated at the point (a whole number
        for every bundled model's `b*s`)."""
        if isinstance(phase, str):
            return model.tokens_by_phase[phase]
        key = (model.id, phase, deployment)
        hit = self._point_tokens.get(key)
        if hit is None:
            hit = self._point_tokens[key] = self._point_tokens_of(model, phase, deployment)
        return hit

    @staticmethod
    def _point_tokens_of(model: Model, phase: RunPoint, deployment: Deployment) -> int:
        at = {**model.parameters, **phase.variables(), **deployment.variables()}
        try:
            tokens = model.tokens.evaluate(at)
        except (EvaluationError, FormulaError) as exc:
            raise DeploymentError(f"model '{model.id}' at {phase}: tokens: {exc.message}") from None
        if tokens.denominator != 1 or tokens < 1:
            raise DeploymentError(
                f"model '{model.id}' at {phase}: tokens = {model.tokens.text} = "
                f"{short_number(tokens)}, not a whole number from 1"
            )
        return int(tokens)

    def _device(
        self,
        figures: DeviceFigures,
        latency: Fraction | None,
        links: dict[str, Link] | None = None,
    ) -> _DeviceBounds:
        """The bounds of a catalog device's runs, kept for every row on it; figures of
        no catalog device (an example's own), or other links, get theirs for the one
        pass."""
        hit = self._devices.get(figures.id)
        if links is not None or hit is None or hit.figures is not figures or hit.latency != latency:
            own = links if links is not None else self.links(figures.id)
            hit = _DeviceBounds(figures, latency, own)
            if links is None and self.devices.get(figures.id) is figures:
                self._devices[figures.id] = hit
        return hit

    def plan(
        self, model: Model, phase: Phase, precision: str, deployment: Deployment = ONE_CHIP
    ) -> Plan:
        """The steps' counts and the pass's operations and bytes: the same on every device
        (a collective's bytes are the device's: `evaluate` adds them)."""
        key = (model.id, phase, precision, deployment)
        hit = self._plans.get(key)
        if hit is None:
            values = self.step_values(model, phase, deployment)
            entries: list[PlanStep] = []
            collectives: list[CollectiveStep] = []
            for i, step in enumerate(model.steps):
                shape, count = values[i]
                at = step.precision or precision
                kernel = self.catalog.kernels[step.kernel]
                if kernel.collective is None:
                    counts = self.counts(model, phase, i, at, deployment)
                    entries.append(PlanStep(step, at, shape, counts, i))
                elif collective_runs(shape, count):
                    collectives.append(self._collective(model, i, shape, count, at, deployment))
            steps = tuple(entries)
            counts_all = [entry.counts for entry in steps]
            levels = [lv for lv in LEVELS if any(lv in c.bytes for c in counts_all)]
            flops = exact_sum(c.total_flops for c in counts_all)
            for c in collectives:
                flops += c.flops * c.count
            hit = self._plans[key] = Plan(
                steps,
                flops,
                {
                    lv: exact_sum(c.total_bytes[lv] for c in counts_all if lv in c.bytes)
                    for lv in levels
                },
                tuple(collectives),
                deployment,
            )
        return hit

    def _collective(
        self,
        model: Model,
        index: int,
        shape: dict[str, int],
        count: int,
        precision: str,
        deployment: Deployment,
    ) -> CollectiveStep:
        step = model.steps[index]
        kernel = self.catalog.kernels[step.kernel]
        assert kernel.collective is not None
        width = self.catalog.precisions[precision].bytes
        values: dict[str, int | Fraction] = {
            **shape,
            **width_values(kernel.widths, width, step.widths, self.catalog.precisions),
        }
        return CollectiveStep(
            step,
            precision,
            shape,
            count,
            kernel.collective,
            group_span(step, shape["n"], deployment),
            kernel.flops.evaluate(values),
            index,
            kernel.bytes["scale_up"],
            values,
        )

    def counts(
        self,
        model: Model,
        phase: Phase,
        index: int,
        precision: str,
        deployment: Deployment = ONE_CHIP,
    ) -> _Counts:
        """Operations and bytes of one run of step `index` at `precision`'s width."""
        width = self.catalog.precisions[precision].bytes
        if deployment != ONE_CHIP and isinstance(phase, str) and self._split_free(model, index):
            deployment = ONE_CHIP  # the same counts on every deployment: shared
        key = (model.id, phase, index, width, deployment)
        hit = self._counts.get(key)
        if hit is None:
            step = model.steps[index]
            shape, count = self.step_values(model, phase, deployment)[index]
            same = (step.kernel, tuple(shape.items()), tuple(step.widths.items()), width)
            one = self._runs.get(same)
            if one is None:
                kernel = self.catalog.kernels[step.kernel]
                values: dict[str, int | Fraction] = {
                    **shape,
                    **width_values(kernel.widths, width, step.widths, self.catalog.precisions),
                }
                flops = kernel.flops.evaluate(values)
                traffic = {lv: f.evaluate(values) for lv, f in kernel.bytes.items()}
                run = (
                    flops.numerator,
                    flops.denominator,
                    tuple(
                        (lv, traffic[lv].numerator, traffic[lv].denominator)
                        for lv in LEVELS
                        if lv in traffic
                    ),
                )
                one = self._runs[same] = (
                    flops,
                    traffic,
                    {lv: flops / b for lv, b in traffic.items()},
                    run,
                )
            flops, traffic, intensity, run = one
            shared = (model.id, index, same, count)  # one step: the writers key on it
            hit = self._counts_of.get(shared)
            if hit is None:
                hit = self._counts_of[shared] = _Counts(
                    flops,
                    traffic,
                    intensity,
                    count,
                    flops * count,
                    {lv: b * count for lv, b in traffic.items()},
                    (run[0], run[1]),
                    run[2],
                    run,
                )
            self._counts[key] = hit
        return hit

    # ------------------------------------------------------------------ checks
    def measured_diagnostics(self) -> list[Diagnostic]:
        """A measured pass faster than its roofline bound is an error: the bound holds."""
        out = []
        for model in self.catalog.models.values():
            for m in model.measured:
                figures = self.devices.get(m.device)
                if figures is None or m.precision not in figures.peaks:
                    continue
                own = {s.precision for s in model.steps if s.precision is not None}
                if not own <= figures.peaks.keys():
                    continue
                row = self.row(model.id, m.phase, m.device, m.precision)
                if m.time < row.time:
                    out.append(
                        Diagnostic(
                            m.location,
                            f"measured time of model '{model.id}' in phase '{m.phase}' on"
                            f" '{m.device}' at {m.precision} is {float(row.time / m.time):.3g}x"
                            " faster than its roofline bound; check the units, the precision,"
                            " the phase's variables and the steps",
                            "",
                            "error",
                            "measured",
                        )
                    )
        return out
