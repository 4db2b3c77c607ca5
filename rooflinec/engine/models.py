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
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING

from rooflinec.catalog import LEVELS, Catalog, Model, ModelStep
from rooflinec.engine.evaluate import width_values
from rooflinec.engine.memory import MemoryEngine, MemoryFit
from rooflinec.engine.roof import slowest
from rooflinec.engine.terms import COMPUTE, LATENCY
from rooflinec.errors import Diagnostic

if TYPE_CHECKING:
    from rooflinec.engine.cells import DeviceFigures

__all__ = ["ModelEngine", "ModelResult", "Plan", "PlanStep", "StepResult", "collector_paused"]

_ZERO = Fraction(0)


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

    __slots__ = ("counts", "precision", "shape", "step")

    def __init__(self, step: ModelStep, precision: str, shape: dict[str, int], counts: _Counts):
        self.step = step
        self.precision = precision  # the step's own, or the row's
        self.shape = shape
        self.counts = counts


class Plan:
    """A model's pass of one phase at one precision, with everything that does not
    depend on the device: the steps' counts and the pass's operation and byte sums.

    `unique` holds each distinct run of the pass (a kernel at a shape and width, at a
    precision) with the runs of it the pass makes in all (the steps' counts summed), and
    `index` the position in `unique` of each step's run: a device's bound is found once
    per distinct run, and the pass's time per limit is a sum over them."""

    __slots__ = ("flops", "index", "steps", "traffic", "unique")

    def __init__(
        self, steps: tuple[PlanStep, ...], flops: Fraction, traffic: dict[str, Fraction]
    ) -> None:
        self.steps = steps
        self.flops = flops
        self.traffic = traffic
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
        "tokens",
    )

    def __init__(
        self,
        model: str,
        phase: str,
        device: str,
        precision: str,
        declared: bool,  # the model's own precision
        tokens: int,
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

    @property
    def steps(self) -> tuple[StepResult, ...]:
        if self._steps is None:
            assert self.plan is not None
            self._steps = tuple(
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
        return self._steps

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

    __slots__ = ("bandwidths", "bounds", "figures", "latency", "peaks")

    def __init__(self, figures: DeviceFigures, latency: Fraction | None) -> None:
        self.figures = figures
        self.latency = latency
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
    """Model rows over a catalog's devices; counts cached per (model, phase, step, width)."""

    def __init__(
        self,
        catalog: Catalog,
        devices: dict[str, DeviceFigures],
        latencies: dict[str, Fraction],
    ) -> None:
        self.catalog = catalog
        self.devices = devices
        self.latencies = latencies
        self._counts: dict[tuple[str, str, int, Fraction], _Counts] = {}
        self._plans: dict[tuple[str, str, str], Plan] = {}
        # one run's counts by kernel, shape, width bindings and width (see `_Counts.run`)
        self._runs: dict[tuple[object, ...], _Run] = {}
        self._rows: dict[tuple[str, str, str, str], ModelResult] = {}
        self._devices: dict[str, _DeviceBounds] = {}
        self.memory = MemoryEngine(catalog)

    # ------------------------------------------------------------------ selection
    def keys(
        self,
        *,
        models: Iterable[str] | None = None,
        phases: Iterable[str] | None = None,
        devices: Iterable[str] | None = None,
        precisions: Iterable[str] | None = None,
        declared_only: bool = False,
    ) -> Iterator[tuple[str, str, str, str]]:
        """(model, phase, device, precision) of every row a selection keeps, in catalog
        order: models, their phases, devices, each device's peaks (`None` keeps all, but
        precisions: `None` keeps the model's own precision only)."""
        m, ph, d, p = (
            set(x) if x is not None else None for x in (models, phases, devices, precisions)
        )
        for model in self.catalog.models.values():
            if m is not None and model.id not in m:
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

    def rows(self, **selection: Iterable[str] | bool | None) -> list[ModelResult]:
        with collector_paused():
            return [self.row(*key) for key in self.keys(**selection)]  # type: ignore[arg-type]

    @cached_property
    def all(self) -> tuple[ModelResult, ...]:
        """Every row, in catalog order."""
        return tuple(self.rows())

    def row(self, model_id: str, phase: str, device: str, precision: str) -> ModelResult:
        """The row of a catalog device (KeyError for an unknown id); made once."""
        key = (model_id, phase, device, precision)
        hit = self._rows.get(key)
        if hit is None:
            hit = self._rows[key] = self._row(*key)
        return hit

    def _row(self, model_id: str, phase: str, device: str, precision: str) -> ModelResult:
        model = self.catalog.models[model_id]
        measured = next(
            (
                m
                for m in model.measured
                if (m.device, m.phase, m.precision) == (device, phase, precision)
            ),
            None,
        )
        row = self.evaluate(
            model,
            phase,
            self.devices[device],
            precision,
            self.latencies.get(device),
            measured.time if measured else None,
            measured.source if measured else None,
        )
        if device in self.catalog.devices:
            row.fit = self.memory.fit(model, phase, precision, device)
        return row

    # ------------------------------------------------------------------ evaluation
    def evaluate(
        self,
        model: Model,
        phase: str,
        figures: DeviceFigures,
        precision: str,
        latency: Fraction | None = None,
        measured_time: Fraction | None = None,
        measured_source: str | None = None,
    ) -> ModelResult:
        """The pass of `phase` on a device's figures: each step on its own roofline.

        Each distinct run's bound comes from the device's `_DeviceBounds` (see
        `run_bound`). The steps' times are summed per limit as integers (their
        denominators are mostly the same ceiling's), so a row makes one `Fraction` per
        limit and one for its time; its steps' results are made when first read.
        """
        plan = self.plan(model, phase, precision)
        device = self._device(figures, latency)
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
        by_limit = {COMPUTE: found.get(COMPUTE, _ZERO)}
        for lv in LEVELS:
            if lv in bandwidths and lv in traffic:
                by_limit[lv] = found.get(lv, _ZERO)
        if latency is not None:
            by_limit[LATENCY] = found.get(LATENCY, _ZERO)
        # The pass's time: the limits' sums added as integers, one Fraction made.
        time_n, time_d = 0, 1
        for n, d in sums.values():
            if d == time_d:
                time_n += n
            else:
                time_n, time_d = time_n * d + n * time_d, time_d * d
        time = Fraction(time_n, time_d)
        return ModelResult(
            model.id,
            phase,
            figures.id,
            precision,
            precision == model.precision,
            model.tokens_by_phase[phase],
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
        )

    def _device(self, figures: DeviceFigures, latency: Fraction | None) -> _DeviceBounds:
        """The bounds of a catalog device's runs, kept for every row on it; figures of
        no catalog device (an example's own) get theirs for the one pass."""
        hit = self._devices.get(figures.id)
        if hit is None or hit.figures is not figures or hit.latency != latency:
            hit = _DeviceBounds(figures, latency)
            if self.devices.get(figures.id) is figures:
                self._devices[figures.id] = hit
        return hit

    def plan(self, model: Model, phase: str, precision: str) -> Plan:
        """The steps' counts and the pass's operations and bytes: the same on every device."""
        key = (model.id, phase, precision)
        hit = self._plans.get(key)
        if hit is None:
            steps = tuple(
                PlanStep(
                    step,
                    step.precision or precision,
                    step.shapes[phase],
                    self.counts(model, phase, i, step.precision or precision),
                )
                for i, step in enumerate(model.steps)
            )
            counts = [entry.counts for entry in steps]
            levels = [lv for lv in LEVELS if any(lv in c.bytes for c in counts)]
            hit = self._plans[key] = Plan(
                steps,
                sum((c.total_flops for c in counts), Fraction(0)),
                {
                    lv: sum((c.total_bytes[lv] for c in counts if lv in c.bytes), Fraction(0))
                    for lv in levels
                },
            )
        return hit

    def counts(self, model: Model, phase: str, index: int, precision: str) -> _Counts:
        """Operations and bytes of one run of step `index` at `precision`'s width."""
        width = self.catalog.precisions[precision].bytes
        key = (model.id, phase, index, width)
        hit = self._counts.get(key)
        if hit is None:
            step = model.steps[index]
            shape = step.shapes[phase]
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
            count = step.counts[phase]
            hit = self._counts[key] = _Counts(
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
