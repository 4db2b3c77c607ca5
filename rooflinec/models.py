"""The model engine: a model's pass per phase × device × precision, step by step.

Each step runs its kernel at the step's shape (evaluated per phase when the model was
built) with the kernel's own formulas, once per `count`; every run sits on its own
roofline (time = max(operations / peak, bytes_L / bandwidth_L for each level, latency
floor)), and the pass's time is the sum of the steps' times: a lower bound, with no
overlap between steps. Everything is exact (`Fraction`); floats appear only where the
rows are written out (`rooflinec.model_export`).

A row exists for every model × phase × device with a peak for the model's precision
(and for the precisions its steps name of their own); a selection that names other
precisions (`--precision`) gets rows at those too, and `declared` marks the model's own
precision. Operation and byte counts depend only on (model, phase, step, width), so
they are evaluated once and shared by every device.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING

from rooflinec.catalog import LEVELS, Catalog, Model, ModelStep
from rooflinec.errors import Diagnostic
from rooflinec.terms import COMPUTE, LATENCY

if TYPE_CHECKING:
    from rooflinec.compiler import DeviceFigures

__all__ = ["ModelEngine", "ModelResult", "StepResult"]


@dataclass(frozen=True)
class StepResult:
    """One step of a pass on one device: its kernel at its shape, `count` times.

    `flops`, `bytes` and `time` cover all `count` runs; `intensity`, `attainable` and
    `limited_by` are those of every run (the same for each).
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


@dataclass(frozen=True)
class ModelResult:
    """One model's pass of one phase on one device at one precision, exactly."""

    model: str
    phase: str
    device: str
    precision: str
    declared: bool  # the model's own precision
    tokens: int
    flops: Fraction
    bytes: dict[str, Fraction]  # sums over the steps, every level some step gives
    time: Fraction  # s, the sum of the steps' times
    time_by_limit: dict[str, Fraction]  # compute, each level, latency: steps limited by it
    measured_time: Fraction | None
    steps: tuple[StepResult, ...]
    measured_source: str | None = None

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

    def step(self, step_id: str) -> StepResult | None:
        return next((s for s in self.steps if s.step == step_id), None)


@dataclass(frozen=True)
class _Counts:
    """A step's kernel at its shape for one phase and width: one run, and `count` runs."""

    flops: Fraction
    bytes: dict[str, Fraction]
    intensity: dict[str, Fraction]
    count: int
    total_flops: Fraction
    total_bytes: dict[str, Fraction]


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
        self._totals: dict[tuple[str, str, str], tuple[Fraction, dict[str, Fraction]]] = {}

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
        return [self.row(*key) for key in self.keys(**selection)]  # type: ignore[arg-type]

    @cached_property
    def all(self) -> tuple[ModelResult, ...]:
        """Every row, in catalog order."""
        return tuple(self.rows())

    def row(self, model_id: str, phase: str, device: str, precision: str) -> ModelResult:
        """The row of a catalog device (KeyError for an unknown id)."""
        model = self.catalog.models[model_id]
        measured = next(
            (
                m
                for m in model.measured
                if (m.device, m.phase, m.precision) == (device, phase, precision)
            ),
            None,
        )
        return self.evaluate(
            model,
            phase,
            self.devices[device],
            precision,
            self.latencies.get(device),
            measured.time if measured else None,
            measured.source if measured else None,
        )

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
        """The pass of `phase` on a device's figures: each step on its own roofline."""
        steps = tuple(
            self._step(model, phase, i, step, figures, step.precision or precision, latency)
            for i, step in enumerate(model.steps)
        )
        flops, traffic = self._sums(model, phase, precision)
        limits = [COMPUTE, *(lv for lv in LEVELS if lv in figures.bandwidths and lv in traffic)]
        if latency is not None:
            limits.append(LATENCY)
        # Sums by limit first, then their sum: fewer exact additions than two passes.
        found: dict[str, Fraction] = {}
        for s in steps:
            found[s.limited_by] = found[s.limited_by] + s.time if s.limited_by in found else s.time
        by_limit = {name: found.get(name, Fraction(0)) for name in limits}
        time = sum(found.values(), Fraction(0))
        return ModelResult(
            model.id,
            phase,
            figures.id,
            precision,
            precision == model.precision,
            model.tokens_by_phase[phase],
            flops,
            traffic,
            time,
            by_limit,
            measured_time,
            steps,
            measured_source,
        )

    def _sums(
        self, model: Model, phase: str, precision: str
    ) -> tuple[Fraction, dict[str, Fraction]]:
        """Operations and bytes of the whole pass: the same on every device."""
        key = (model.id, phase, precision)
        hit = self._totals.get(key)
        if hit is None:
            counts = [
                self.counts(model, phase, i, step.precision or precision)
                for i, step in enumerate(model.steps)
            ]
            levels = [lv for lv in LEVELS if any(lv in c.bytes for c in counts)]
            hit = self._totals[key] = (
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
            kernel = self.catalog.kernels[step.kernel]
            values: dict[str, int | Fraction] = {
                **step.shapes[phase],
                **kernel.width_values(width, step.widths, self.catalog.precisions),
            }
            flops = kernel.flops.evaluate(values)
            traffic = {lv: f.evaluate(values) for lv, f in kernel.bytes.items()}
            intensity = {lv: flops / b for lv, b in traffic.items()}
            count = step.counts[phase]
            hit = self._counts[key] = _Counts(
                flops,
                traffic,
                intensity,
                count,
                flops * count,
                {lv: b * count for lv, b in traffic.items()},
            )
        return hit

    def _step(
        self,
        model: Model,
        phase: str,
        index: int,
        step: ModelStep,
        figures: DeviceFigures,
        precision: str,
        latency: Fraction | None,
    ) -> StepResult:
        one = self.counts(model, phase, index, precision)
        # The time of one run under each ceiling, as (numerator, denominator) integers:
        # the longest wins, ties in LIMITED_BY order (compute first), as the lowest rate
        # does for a kernel case. Only the winner becomes a Fraction.
        peak = figures.peaks[precision]
        best = (one.flops.numerator * peak.denominator, one.flops.denominator * peak.numerator)
        limited_by = COMPUTE
        for lv in LEVELS:
            traffic = one.bytes.get(lv)
            bandwidth = figures.bandwidths.get(lv)
            if traffic is None or bandwidth is None:
                continue
            t = (
                traffic.numerator * bandwidth.denominator,
                traffic.denominator * bandwidth.numerator,
            )
            if t[0] * best[1] > best[0] * t[1]:
                best, limited_by = t, lv
        if latency is not None and latency.numerator * best[1] > best[0] * latency.denominator:
            best, limited_by = (latency.numerator, latency.denominator), LATENCY
        time = Fraction(best[0] * one.count, best[1])
        return StepResult(
            step.id,
            step.kernel,
            one.count,
            step.shapes[phase],
            precision,
            step.widths,
            one.total_flops,
            one.total_bytes,
            time,
            one.intensity,
            limited_by,
            latency,
        )

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
