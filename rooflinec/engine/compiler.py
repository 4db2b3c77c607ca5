"""The compile engine: catalog in, one result per kernel case × device × precision out.

A cell is one case on one device at one precision the device has a peak for. What a
cell needs is shared: its operation and byte counts depend only on the case and the
precision's width (evaluated exactly, once per case and width), its ceilings only on
the device and the precision. `compile_catalog` computes those exact counts; a cell's
float outputs (attainable rate, share of peak, time, sweeps, efficiency) are computed
on first use, as columns, by `rooflinec.engine.columns`, one fixed computation per cell, so
a cell's numbers never depend on which other cells exist or were asked for.

A `Result` is the exact view of one cell (Fractions in SI base units), built on
demand for the few cells that need a derivation (`explain`, reference examples,
site text); `Compiled.result(case, device, precision)` is a lookup.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING

from rooflinec.catalog import (
    LEVELS,
    ONE_CHIP,
    Case,
    Catalog,
    Deployment,
    Device,
    Kernel,
    Measured,
)
from rooflinec.engine.cells import Counts, DeviceFigures, Result, Run
from rooflinec.engine.evaluate import bound_widths, evaluate_counts
from rooflinec.errors import Diagnostic, Location
from rooflinec.formulas import SHARED_MEMORY

if TYPE_CHECKING:
    from rooflinec.engine.columns import Columns
    from rooflinec.engine.models import ModelEngine, ModelResult
    from rooflinec.formulas import Formula


@dataclass(frozen=True, eq=False)
class Compiled:
    """Everything `compile` produces: device figures, the cells, and the problems found."""

    catalog: Catalog
    devices: dict[str, DeviceFigures]
    counts: Counts
    diagnostics: tuple[Diagnostic, ...]

    @cached_property
    def columns(self) -> Columns:
        """Every cell's float outputs as numpy columns (computed on first use)."""
        from rooflinec.engine.columns import compute_columns

        return compute_columns(self.counts)

    @cached_property
    def model_engine(self) -> ModelEngine:
        """The models' rows over this catalog's devices (computed on demand)."""
        from rooflinec.engine.models import ModelEngine

        return ModelEngine(self.catalog, self.devices, self.counts.latencies)

    @property
    def models(self) -> tuple[ModelResult, ...]:
        """Every model row (model × phase × device × precision), in catalog order."""
        return self.model_engine.all

    def model_result(
        self,
        model: str,
        phase: str,
        device: str,
        precision: str,
        deployment: Deployment = ONE_CHIP,
    ) -> ModelResult | None:
        """One model row, or None when the model, phase, device or peak is not there (or
        the model or device cannot run `deployment`)."""
        keys = self.model_engine.keys(
            models=[model],
            phases=[phase],
            devices=[device],
            precisions=[precision],
            deployment=deployment,
        )
        key = next(keys, None)
        return None if key is None else self.model_engine.row(*key, deployment=deployment)

    @cached_property
    def _pair_index(self) -> dict[tuple[str, str], int]:
        c = self.counts
        return {pair: j for j, pair in enumerate(zip(c.pair_device, c.pair_precision, strict=True))}

    @cached_property
    def _case_index(self) -> dict[str, int]:
        return {case.id: i for i, case in enumerate(self.counts.cases)}

    def rows(
        self,
        *,
        devices: Iterable[str] | None = None,
        cases: Iterable[str] | None = None,
        precisions: Iterable[str] | None = None,
        declared_only: bool = False,
    ) -> list[int]:
        """The cells a selection keeps, in catalog order: the one selection every
        consumer uses (`None` keeps everything)."""
        c = self.counts
        d, k, p = (set(x) if x is not None else None for x in (devices, cases, precisions))
        pairs = [
            j
            for j, (device, precision) in enumerate(
                zip(c.pair_device, c.pair_precision, strict=True)
            )
            if (d is None or device in d) and (p is None or precision in p)
        ]
        n_pairs = len(c.pair_device)
        out: list[int] = []
        for i, case in enumerate(c.cases):
            if k is not None and case.id not in k:
                continue
            base = i * n_pairs
            if declared_only:
                out.extend(base + j for j in pairs if c.pair_precision[j] == case.precision)
            else:
                out.extend(base + j for j in pairs)
        return out

    def select(
        self,
        *,
        devices: Iterable[str] | None = None,
        cases: Iterable[str] | None = None,
        precisions: Iterable[str] | None = None,
        declared_only: bool = False,
    ) -> list[Result]:
        """The results of `rows(...)`."""
        chosen = self.rows(
            devices=devices, cases=cases, precisions=precisions, declared_only=declared_only
        )
        return [self.result_at(i) for i in chosen]

    @cached_property
    def results(self) -> tuple[Result, ...]:
        """Every result, in catalog order."""
        return tuple(self.result_at(i) for i in range(len(self.counts)))

    def result(self, case: str, device: str, precision: str) -> Result | None:
        i = self._case_index.get(case)
        j = self._pair_index.get((device, precision))
        if i is None or j is None:
            return None
        return self.result_at(i * len(self.counts.pair_device) + j)

    def result_at(self, cell: int) -> Result:
        """The exact view of cell `cell`."""
        return self.counts.result_at(cell)


def device_figures(device: Device) -> DeviceFigures:
    return DeviceFigures(
        device.id,
        device.name,
        {p: device.peak(p) for p in device.peaks},
        {level: device.bandwidth(level) for level in device.memory},
    )


def compile_catalog(catalog: Catalog) -> Compiled:
    """Resolve every case against every device at every precision the device has a peak for.

    Raises the formula engine's `EvaluationError` when a formula cannot be evaluated.
    """
    figures = {d.id: device_figures(d) for d in catalog.devices.values()}
    # A pair's counts are read at its context: its precision's width, and its device's
    # shared memory per core where a kernel's traffic reads it (else None for every
    # device, so a catalog without such a kernel has one context per width).
    shared = {d.id: d.core.shared_memory for d in catalog.devices.values() if d.core}
    tiled = any(
        k.shared_levels and any(c.grid is None for c in k.cases) for k in catalog.kernels.values()
    )
    contexts: list[tuple[Fraction, int | None]] = []
    widths: list[Fraction] = []
    pair_device: list[str] = []
    pair_precision: list[str] = []
    pair_peak: list[Fraction] = []
    pair_width: list[int] = []
    for device in catalog.devices.values():
        smem = shared.get(device.id) if tiled else None
        for pid, peak in figures[device.id].peaks.items():
            width = catalog.precisions[pid].bytes
            if width not in widths:
                widths.append(width)
            context = (width, smem)
            if context not in contexts:
                contexts.append(context)
            pair_device.append(device.id)
            pair_precision.append(pid)
            pair_peak.append(peak)
            pair_width.append(contexts.index(context))
    width_at = [widths.index(w) for w, _ in contexts]
    cases: list[Case] = []
    kernels: list[Kernel] = []
    flops: list[Fraction] = []
    byte_counts: list[dict[str, Fraction]] = []
    for kernel in catalog.kernels.values():
        # A grid case has no cells here: `rooflinec.engine.grids` expands it a chunk at a time.
        plain = [case for case in kernel.cases if case.grid is None]
        if not plain or not widths:
            continue
        cases.extend(plain)
        kernels.extend([kernel] * len(plain))
        shapes = [case.shape for case in plain]
        bound = [bound_widths(kernel.widths, case.widths, catalog.precisions) for case in plain]
        kernel_flops = evaluate_counts(kernel.flops, shapes, widths, bound)
        by_level = {
            lv: _context_counts(f, shapes, widths, bound, contexts, width_at)
            for lv, f in kernel.bytes.items()
        }
        for i in range(len(plain)):
            for k in range(len(contexts)):
                flops.append(kernel_flops[i][width_at[k]])
                byte_counts.append(
                    {lv: v for lv, values in by_level.items() if (v := values[i][k]) is not None}
                )
    counts = Counts(
        tuple(cases),
        tuple(kernels),
        tuple(w for w, _ in contexts),
        flops,
        byte_counts,
        tuple(pair_device),
        tuple(pair_precision),
        tuple(pair_peak),
        tuple(pair_width),
        {d: fig.bandwidths for d, fig in figures.items()},
        {},
        {d.id: d.launch.latency for d in catalog.devices.values() if d.launch is not None},
        shared=shared,
    )
    compiled = Compiled(catalog, figures, counts, ())
    diagnostics = _measure(compiled)
    diagnostics += compiled.model_engine.measured_diagnostics()
    return Compiled(catalog, figures, counts, tuple(diagnostics))


def _context_counts(
    formula: Formula,
    shapes: list[dict[str, int]],
    widths: list[Fraction],
    bound: list[dict[str, Fraction]],
    contexts: list[tuple[Fraction, int | None]],
    width_at: list[int],
) -> list[list[Fraction | None]]:
    """A byte formula at every shape and context: result[shape][context]. A formula that
    reads `smem` is evaluated once per device figure; None where the context's device
    quotes none (that level is then no ceiling for the cell)."""
    if SHARED_MEMORY not in formula.symbols:
        plain = evaluate_counts(formula, shapes, widths, bound)
        return [[row[k] for k in width_at] for row in plain]
    per: dict[int, list[list[Fraction]]] = {}
    for _, smem in contexts:
        if smem is not None and smem not in per:
            at = [{**shape, SHARED_MEMORY: smem} for shape in shapes]
            per[smem] = evaluate_counts(formula, at, widths, bound)
    return [
        [
            None if smem is None else per[smem][i][width_at[k]]
            for k, (_, smem) in enumerate(contexts)
        ]
        for i in range(len(shapes))
    ]


def _measure(compiled: Compiled) -> list[Diagnostic]:
    """Record each measured run's rate on its cell; report rates above the roofline."""
    c = compiled.counts
    pair_index = compiled._pair_index
    diagnostics: list[Diagnostic] = []
    found: list[tuple[int, Case, Measured]] = []
    for i, case in enumerate(c.cases):
        for m in case.measured:
            j = pair_index.get((m.device, m.precision))
            if j is not None:
                found.append((i * len(c.pair_device) + j, case, m))
    for cell, case, m in sorted(found, key=lambda item: item[0]):
        modelled = c.flops[c.count_row(cell)]
        rate = m.rate
        if rate is None:
            if m.time is None:
                continue
            rate = modelled / (m.time * _per_run(case, m))
        c.measured[cell] = rate
        c.runs[cell] = _run(case, m, modelled, rate)
        result = compiled.result_at(cell)
        if rate > result.attainable:
            diagnostics.append(_above_ceiling(case, m.location, result, rate))
        for level, bandwidth in result.measured_bandwidth.items():
            ceiling = result.bandwidths.get(level)
            if ceiling is not None and bandwidth > ceiling:
                diagnostics.append(_above_bandwidth(case, m.location, result, level, bandwidth))
    return diagnostics


def _per_run(case: Case, m: Measured) -> Fraction:
    """The share of a measurement's sums that one run of the case accounts for."""
    return Fraction(case.launches, m.launches if m.launches is not None else case.launches)


def _run(case: Case, m: Measured, modelled: Fraction, rate: Fraction) -> Run:
    """A measurement per run of the case; a rate alone gives the time its formula implies."""
    share = _per_run(case, m)
    time = m.time * share if m.time is not None else modelled / rate
    counted = m.flops is not None
    flops = m.flops * share if m.flops is not None else modelled
    traffic = {lv: m.bytes[lv] * share for lv in LEVELS if lv in m.bytes}
    return Run(time, flops, counted, traffic, m.source, m.location)


def _above_bandwidth(
    case: Case, location: Location, result: Result, level: str, bandwidth: Fraction
) -> Diagnostic:
    ratio = float(bandwidth / result.bandwidths[level])
    return Diagnostic(
        location,
        f"measured {level} bandwidth of case '{case.id}' on '{result.device}' at"
        f" {result.precision} is {ratio:.3g}x the device's sustained {level} bandwidth;"
        " check the counter (sectors or requests, or another level's traffic), the units,"
        " and that time and bytes cover the same `launches`",
        "",
        "error",
        "measured",
    )


def _above_ceiling(case: Case, location: Location, result: Result, rate: Fraction) -> Diagnostic:
    ratio = float(rate / result.attainable)
    return Diagnostic(
        location,
        f"measured rate of case '{case.id}' on '{result.device}' at {result.precision} is "
        f"{ratio:.3g}x the roofline ceiling ({result.limited_by} bound); check the units, "
        "the precision, how FLOPs are counted (an FMA is 2), and whether the peak was "
        "printed with sparsity",
        "",
        "error",
        "measured",
    )
