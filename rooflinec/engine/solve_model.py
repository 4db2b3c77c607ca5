"""`solve --model`: a model's pass over the tensor-parallel degree, and the batch at which
it stops fitting.

`sweep_tp` evaluates the pass at every degree tp = 1, 2, 3, ... up to a bound the
device sets (`tp_bound`), with the rest of the deployment held (`pp`, `ep`, `chips`), as
`compile --tp N` would: a degree that is no deployment with the held degrees, that the
model cannot take (a shape or count not whole in some phase: `deployment_problem`) or
that the device cannot host (a collective group with no level to cross:
`fabric_problem`) is skipped, with the reason. Each degree evaluated is `compile`'s row
itself (`ModelEngine.row`), so every figure is the same. From the rows:

- the least degree from which on the pass stays interconnect bound: its `limited_by`
  is `scale_up` or `scale_out` at that degree and at every larger degree evaluated
  (None when the largest degree evaluated is not interconnect bound);
- the least degree evaluated at which its memory ledger fits.

Both are over the degrees evaluated: nothing is claimed beyond the bound.

`batch_limit` reads the ledger at one deployment: the largest batch `b` that fits at the
phase's other variables (`max_batch`, solved exactly by `rooflinec.engine.memory`), so the
pass stops fitting at `max_batch + 1`. With it, the batch from which each step (not
the pass) turns compute bound at that deployment, by the step crossover the model pages
give (`rooflinec.engine.step_crossover`: exact, the roofline alone, no launch floor). The
pass's own limit over b, a sum of such steps with floors and collectives, is not solved.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Literal

from rooflinec.catalog import INTERCONNECT_ROLES, Deployment
from rooflinec.engine.memory import CHIP_DEGREES, MAX_SEARCH, device_capacity
from rooflinec.engine.step_crossover import StepCrossover, step_crossover

if TYPE_CHECKING:
    from rooflinec.engine.compiler import Compiled
    from rooflinec.engine.models import Link, ModelResult

__all__ = [
    "MAX_TP",
    "BatchLimit",
    "Degree",
    "Skipped",
    "TpSweep",
    "batch_limit",
    "collective_time",
    "interconnect_time",
    "least_from_on",
    "sweep_tp",
    "tp_bound",
]

#: The largest degree tried where the device's fabric joins groups of any size: the most
#: chips `needs_chips` tries.
MAX_TP = CHIP_DEGREES[-1]

SkipKind = Literal["deployment", "model", "device"]


def interconnect_time(row: ModelResult) -> Fraction:
    """The time of the steps the interconnect levels hold (`scale_up`, `scale_out`), s."""
    return sum(
        (row.time_by_limit.get(role, Fraction(0)) for role in INTERCONNECT_ROLES), Fraction(0)
    )


def collective_time(row: ModelResult) -> Fraction:
    """The time of the collective steps, whatever holds each (its level, the level's
    latency, the launch floor, its operations), s."""
    if row.plan is None:
        return Fraction(0)
    return sum(
        (
            b.time * c.count
            for c, b in zip(row.plan.collectives, row.collective_bounds, strict=True)
        ),
        Fraction(0),
    )


@dataclass(frozen=True)
class Degree:
    """The pass at one tensor-parallel degree: `compile --tp N`'s row, exactly.

    `tokens_per_second` is None for a pass whose ledger does not fit (`fits` False): no
    rate is given for it, as the table prints none."""

    tp: int
    chips: int
    pp: int
    ep: int
    fits: bool | None
    needs_chips: int | None
    time: Fraction
    time_overlapped: Fraction
    tokens_per_second: Fraction | None
    limited_by: str
    interconnect_time: Fraction  # the time the interconnect levels hold, s
    collective_time: Fraction  # the time the collective steps take, whatever holds them, s

    @property
    def interconnect_share(self) -> Fraction:
        """The interconnect's share of the pass's time."""
        return self.interconnect_time / self.time

    @property
    def collective_share(self) -> Fraction:
        """The collective steps' share of the pass's time."""
        return self.collective_time / self.time

    @property
    def interconnect_bound(self) -> bool:
        return self.limited_by in INTERCONNECT_ROLES

    @classmethod
    def of(cls, row: ModelResult) -> Degree:
        return cls(
            row.tp,
            row.chips,
            row.pp,
            row.ep,
            row.fits,
            row.needs_chips,
            row.time,
            row.time_overlapped,
            None if row.fits is False else row.tokens_per_second,
            row.limited_by,
            interconnect_time(row),
            collective_time(row),
        )


@dataclass(frozen=True)
class Skipped:
    """Degrees `start`..`end` (inclusive) skipped for one kind of reason: no deployment
    with the held degrees, not one of the model's, or not one the device can host;
    `reason` is the one at `start`."""

    start: int
    end: int
    kind: SkipKind
    reason: str


@dataclass(frozen=True)
class TpSweep:
    """A model's pass of one phase on one device at one precision over tp = 1..`up_to`."""

    model: str
    phase: str
    device: str
    precision: str
    held: Deployment  # pp, ep and chips (None: each degree's least); tp is varied
    up_to: int
    bound_note: str  # why `up_to`
    degrees: tuple[Degree, ...]
    skipped: tuple[Skipped, ...] = field(default=())

    @property
    def interconnect_bound_from(self) -> int | None:
        """The least degree from which on, over the degrees evaluated, the pass stays
        interconnect bound; None when the largest is not."""
        return least_from_on(self.degrees, lambda d: d.interconnect_bound)

    @property
    def interconnect_bound_at(self) -> tuple[int, ...]:
        """Every degree evaluated at which the pass is interconnect bound."""
        return tuple(d.tp for d in self.degrees if d.interconnect_bound)

    @property
    def fit_known(self) -> bool:
        """Whether the rows say if the pass fits (a ledger, and a capacity)."""
        return any(d.fits is not None for d in self.degrees)

    @property
    def least_fitting(self) -> int | None:
        """The least degree evaluated at which the ledger fits; None: none does (or the
        fit is unknown)."""
        return next((d.tp for d in self.degrees if d.fits), None)


def least_from_on(degrees: Sequence[Degree], holds: Callable[[Degree], bool]) -> int | None:
    """The least degree from which `holds` is true at every degree up to the last; None
    when it is false at the last (or there is none)."""
    found = None
    for degree in reversed(degrees):
        if not holds(degree):
            break
        found = degree.tp
    return found


def tp_bound(links: dict[str, Link]) -> tuple[int, str]:
    """The largest degree tried on a device with these levels, and why: `MAX_TP` where a
    group of any size has a level to cross (a scale-out network, or a scale-up fabric
    without a domain or one of `MAX_TP` chips or more), else the scale-up domain, else 1
    (no interconnect: one chip)."""
    up = links.get("scale_up")
    if "scale_out" in links:
        return MAX_TP, f"the scale-out network joins domains; {MAX_TP:,} is the cap"
    if up is not None and (up.domain is None or up.domain >= MAX_TP):
        return MAX_TP, f"the scale-up fabric joins any group; {MAX_TP:,} is the cap"
    if up is not None:
        assert up.domain is not None
        return up.domain, "the scale-up domain; the device gives no scale-out network"
    return 1, "the device gives no interconnect"


def sweep_tp(
    compiled: Compiled,
    model_id: str,
    phase: str,
    device: str,
    precision: str,
    held: Deployment,
) -> TpSweep:
    """The pass at every tp from 1 to the device's bound, `held`'s pp, ep and chips kept
    (ids known to the catalog, a peak at every precision the pass computes at)."""
    engine = compiled.model_engine
    model = compiled.catalog.models[model_id]
    up_to, note = tp_bound(engine.links(device))
    degrees: list[Degree] = []
    skipped: list[Skipped] = []
    for tp in range(1, up_to + 1):
        deployment = Deployment(tp, held.pp, held.ep, held.chips)
        kind: SkipKind = "deployment"
        problem = deployment.problem()
        if problem is None:
            kind, problem = "model", engine.deployment_problem(model, deployment)
        if problem is None:
            kind, problem = "device", engine.fabric_problem(model, device, deployment)
        if problem is not None:
            last = skipped[-1] if skipped else None
            if last is not None and last.kind == kind and last.end == tp - 1:
                skipped[-1] = Skipped(last.start, tp, kind, last.reason)
            else:
                skipped.append(Skipped(tp, tp, kind, problem))
            continue
        row = engine.row(model_id, phase, device, precision, deployment)
        degrees.append(Degree.of(row))
    return TpSweep(
        model_id, phase, device, precision, held, up_to, note, tuple(degrees), tuple(skipped)
    )


@dataclass(frozen=True)
class BatchLimit:
    """The largest batch whose ledger fits, at the phase's other variables and one
    deployment; `unknown` says why the fit is not known (no capacity, no ledger)."""

    model: str
    phase: str
    device: str
    precision: str
    deployment: Deployment
    variables: dict[str, int]  # the phase's run variables (b among them)
    fits: bool | None  # at the phase's own b
    max_batch: int | None  # None: b = 1 does not fit, or the fit is unknown
    needs_chips: int | None  # at the phase's own b, when it does not fit
    unknown: str | None = None
    # Each step's batch crossover at the deployment (collectives aside): the roofline
    # alone, as the model pages give it at one chip
    steps: tuple[StepCrossover, ...] = ()

    @property
    def batch(self) -> int:
        return self.variables["b"]

    @property
    def every_batch_fits(self) -> bool:
        """Whether every batch searched fits (`max_batch` is the search's end)."""
        return self.max_batch == MAX_SEARCH

    @property
    def stops_fitting_at(self) -> int | None:
        """The least batch that does not fit: `max_batch + 1`, 1 when b = 1 does not;
        None when the fit is unknown or every batch searched fits."""
        if self.unknown is not None or self.every_batch_fits:
            return None
        return 1 if self.max_batch is None else self.max_batch + 1


NO_CAPACITY = "the device states no capacity"


def batch_limit(
    compiled: Compiled,
    model_id: str,
    phase: str,
    device: str,
    precision: str,
    deployment: Deployment,
) -> BatchLimit:
    """The batch limit of the pass `compile` rows at `deployment` (a valid one, ids known
    and a phase with `b`): the row's own ledger."""
    catalog = compiled.catalog
    model = catalog.models[model_id]
    row = compiled.model_engine.row(model_id, phase, device, precision, deployment)
    unknown = None
    if model.memory is None:
        unknown = f"model '{model.id}' gives no memory ledger"
    elif device_capacity(catalog.devices[device]) is None:
        unknown = NO_CAPACITY
    elif row.fit is None:
        unknown = "the memory ledger has no value at this deployment"
    figures = compiled.model_engine.devices[device]
    steps = tuple(
        step_crossover(catalog, model, i, phase, figures, precision, deployment=deployment)
        for i, step in enumerate(model.steps)
        if catalog.kernels[step.kernel].collective is None
    )
    return BatchLimit(
        model_id,
        phase,
        device,
        precision,
        deployment,
        dict(model.phases[phase]),
        row.fits,
        None if unknown else row.max_batch,
        row.needs_chips,
        unknown,
        steps,
    )
