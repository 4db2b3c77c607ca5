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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING

from rooflinec.catalog import LEVELS, Case, Catalog, Device, Kernel, Measured
from rooflinec.engine import WIDTH, Bound, Roof, integral
from rooflinec.errors import Diagnostic, Location
from rooflinec.formulas import Formula, bulk_evaluate
from rooflinec.terms import SWEEP, SWEEP_KEYS

if TYPE_CHECKING:
    from rooflinec.engine.columns import Columns
    from rooflinec.engine.models import ModelEngine, ModelResult


@dataclass(frozen=True)
class DeviceFigures:
    """A device's sustained ceilings: dense peak per precision, bandwidth per level, ridges."""

    id: str
    name: str
    peaks: dict[str, Fraction]
    bandwidths: dict[str, Fraction]

    @property
    def ridges(self) -> dict[str, dict[str, Fraction]]:
        return {
            p: {level: peak / bw for level, bw in self.bandwidths.items()}
            for p, peak in self.peaks.items()
        }


@dataclass(frozen=True)
class Run:
    """A measured run of one cell, per run of the case (one run is `Case.launches` launches).

    `flops` is the profiler's count where it gave one, else the kernel's formula
    (`counted_flops` says which); `bytes` holds only the levels a profiler counted.
    """

    time: Fraction  # s
    flops: Fraction
    counted_flops: bool
    bytes: dict[str, Fraction]
    source: str | None
    location: Location

    def intensity(self) -> dict[str, Fraction]:
        """Operations per byte as measured, at each counted level: only where the profiler
        counted the operations too. The formula's operations over counted bytes would be
        neither the modelled intensity nor the measured one (one source per quotient)."""
        if not self.counted_flops:
            return {}
        return {lv: self.flops / b for lv, b in self.bytes.items() if b > 0}

    def bandwidth(self) -> dict[str, Fraction]:
        """Bytes per second as measured, at each counted level."""
        return {lv: b / self.time for lv, b in self.bytes.items()}


@dataclass(frozen=True)
class Result:
    """One case on one device at one precision, exactly."""

    case: str
    kernel: str
    device: str
    precision: str
    declared: bool
    flops: Fraction
    bytes: dict[str, Fraction]  # every level the kernel gives
    peak: Fraction
    bandwidths: dict[str, Fraction]  # the levels both kernel and device give
    unmodelled: tuple[tuple[str, str], ...]  # (level, why it is no ceiling here)
    measured: Fraction | None
    floor: Fraction | None = None  # launches × the device's launch latency, s; None: no floor
    run: Run | None = None  # the measured run, where one was recorded
    shape: dict[str, int] | None = None  # the shape evaluated (a grid case's row has its own)

    @property
    def intensity(self) -> dict[str, Fraction]:
        return {level: self.flops / b for level, b in self.bytes.items()}

    @cached_property
    def floor_rate(self) -> Fraction | None:
        """The highest rate the latency floor allows: operations / (launches × latency)."""
        return None if self.floor is None else self.flops / self.floor

    @property
    def measured_intensity(self) -> dict[str, Fraction]:
        return {} if self.run is None else self.run.intensity()

    @property
    def measured_bandwidth(self) -> dict[str, Fraction]:
        return {} if self.run is None else self.run.bandwidth()

    @property
    def traffic_ratio(self) -> dict[str, Fraction]:
        """Measured bytes / modelled bytes, at each level both give."""
        if self.run is None:
            return {}
        return {
            lv: b / self.bytes[lv]
            for lv, b in self.run.bytes.items()
            if lv in self.bytes and self.bytes[lv] > 0
        }

    # The derived values below are cached on first use (a frozen dataclass keeps them in
    # the instance's __dict__; they take no part in equality): a derivation reads the
    # attainable rate half a dozen times.
    @cached_property
    def roof(self) -> Roof:
        """The cell's roof: its peak, the levels that are ceilings, and its floor (the
        floor is this case's launches × latency already: the roof sees one launch)."""
        return Roof.of(self.peak, self.bandwidths, self.floor)

    @cached_property
    def ceilings(self) -> dict[str, Fraction]:
        """Each ceiling's rate: `compute` is the peak, a level is intensity × bandwidth."""
        return self.roof.ceilings(self.flops, self.bytes)

    @cached_property
    def bound(self) -> Bound:
        return self.roof.bound(self.flops, self.bytes)

    @property
    def limited_by(self) -> str:
        return self.bound.limit

    @property
    def attainable(self) -> Fraction:
        return self.bound.rate

    @property
    def share_of_peak(self) -> Fraction:
        return self.attainable / self.peak

    @property
    def time(self) -> Fraction:
        """Time at the roofline: a lower bound on the run time, in seconds."""
        return self.bound.time

    def attainable_with(
        self, *, peak: Fraction = Fraction(1), bandwidth: Fraction = Fraction(1)
    ) -> Fraction:
        """The attainable rate with the peak or the bandwidths scaled (a sweep point)."""
        return self.roof.scaled(peak=peak, bandwidth=bandwidth).bound(self.flops, self.bytes).rate

    @cached_property
    def bandwidth_sweep(self) -> dict[str, Fraction]:
        return {
            k: self.attainable_with(bandwidth=f) for k, f in zip(SWEEP_KEYS, SWEEP, strict=True)
        }

    @cached_property
    def peak_sweep(self) -> dict[str, Fraction]:
        return {k: self.attainable_with(peak=f) for k, f in zip(SWEEP_KEYS, SWEEP, strict=True)}

    @property
    def efficiency(self) -> Fraction | None:
        return None if self.measured is None else self.measured / self.attainable


@dataclass(frozen=True, eq=False)
class Counts:
    """The exact inputs of every cell.

    Cells are the product of `cases` (in catalog order, kernel by kernel) and the
    (device, precision) pairs (devices in catalog order, each device's peaks in its
    spec's order), case-major: cell `i` is case `i // len(pair_device)` on pair
    `i % len(pair_device)`. Counts are kept per (case, width): row `case * len(widths)
    + pair_width[pair]` of `flops` and `bytes`.
    """

    cases: tuple[Case, ...]
    kernels: tuple[Kernel, ...]  # the kernel of each case
    widths: tuple[Fraction, ...]  # the distinct bytes per value of the pairs' precisions
    flops: list[Fraction]
    bytes: list[dict[str, Fraction]]  # levels the kernel gives, in the kernel's order
    pair_device: tuple[str, ...]
    pair_precision: tuple[str, ...]
    pair_peak: tuple[Fraction, ...]  # sustained dense peak
    pair_width: tuple[int, ...]  # index into `widths`
    bandwidths: dict[str, dict[str, Fraction]]  # device -> sustained bandwidth per level
    measured: dict[int, Fraction]  # cell -> measured rate, exactly
    latencies: dict[str, Fraction] = field(default_factory=dict)  # device -> launch latency
    runs: dict[int, Run] = field(default_factory=dict)  # cell -> measured run

    def floor(self, cell: int) -> Fraction | None:
        """launches × launch latency of a cell, or None where its device has no floor."""
        latency = self.latencies.get(self.pair_device[cell % len(self.pair_device)])
        if latency is None:
            return None
        return self.cases[cell // len(self.pair_device)].launches * latency

    def __len__(self) -> int:
        return len(self.cases) * len(self.pair_device)

    def count_row(self, cell: int) -> int:
        """The row of `flops` and `bytes` a cell reads."""
        case, pair = divmod(cell, len(self.pair_device))
        return case * len(self.widths) + self.pair_width[pair]


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

        return compute_columns(self)

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
        self, model: str, phase: str, device: str, precision: str
    ) -> ModelResult | None:
        """One model row, or None when the model, phase, device or peak is not there."""
        keys = self.model_engine.keys(
            models=[model], phases=[phase], devices=[device], precisions=[precision]
        )
        key = next(keys, None)
        return None if key is None else self.model_engine.row(*key)

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
        c = self.counts
        i, j = divmod(cell, len(c.pair_device))
        case, kernel, device = c.cases[i], c.kernels[i], c.pair_device[j]
        row = c.count_row(cell)
        bandwidths, unmodelled = self._levels(kernel, device)
        return Result(
            case.id,
            kernel.id,
            device,
            c.pair_precision[j],
            c.pair_precision[j] == case.precision,
            c.flops[row],
            c.bytes[row],
            c.pair_peak[j],
            bandwidths,
            unmodelled,
            c.measured.get(cell),
            c.floor(cell),
            c.runs.get(cell),
            case.shape,
        )

    @cached_property
    def _level_cache(
        self,
    ) -> dict[tuple[str, str], tuple[dict[str, Fraction], tuple[tuple[str, str], ...]]]:
        return {}

    def _levels(
        self, kernel: Kernel, device: str
    ) -> tuple[dict[str, Fraction], tuple[tuple[str, str], ...]]:
        """Which levels are ceilings, and why the others are not: per kernel and device."""
        key = (kernel.id, device)
        hit = self._level_cache.get(key)
        if hit is None:
            given = self.counts.bandwidths[device]
            ceilings = {lv: given[lv] for lv in LEVELS if lv in kernel.bytes and lv in given}
            unmodelled = tuple(
                (lv, _why(lv, kernel)) for lv in LEVELS if (lv in kernel.bytes) != (lv in given)
            )
            hit = self._level_cache[key] = (ceilings, unmodelled)
        return hit


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
    widths: list[Fraction] = []
    pair_device: list[str] = []
    pair_precision: list[str] = []
    pair_peak: list[Fraction] = []
    pair_width: list[int] = []
    for device in catalog.devices.values():
        for pid, peak in figures[device.id].peaks.items():
            width = catalog.precisions[pid].bytes
            if width not in widths:
                widths.append(width)
            pair_device.append(device.id)
            pair_precision.append(pid)
            pair_peak.append(peak)
            pair_width.append(widths.index(width))
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
        bound = [_bound_widths(kernel, case.widths, catalog) for case in plain]
        kernel_flops = _evaluate(kernel.flops, plain, widths)
        by_level = {lv: _evaluate(f, plain, widths, bound) for lv, f in kernel.bytes.items()}
        for i in range(len(plain)):
            for k in range(len(widths)):
                flops.append(kernel_flops[i][k])
                byte_counts.append({lv: values[i][k] for lv, values in by_level.items()})
    counts = Counts(
        tuple(cases),
        tuple(kernels),
        tuple(widths),
        flops,
        byte_counts,
        tuple(pair_device),
        tuple(pair_precision),
        tuple(pair_peak),
        tuple(pair_width),
        {d: fig.bandwidths for d, fig in figures.items()},
        {},
        {d.id: d.launch.latency for d in catalog.devices.values() if d.launch is not None},
    )
    compiled = Compiled(catalog, figures, counts, ())
    diagnostics = _measure(compiled)
    diagnostics += compiled.model_engine.measured_diagnostics()
    return Compiled(catalog, figures, counts, tuple(diagnostics))


def _bound_widths(kernel: Kernel, binding: dict[str, str], catalog: Catalog) -> dict[str, Fraction]:
    """The width symbols a case or step binds, with their precisions' bytes per value."""
    return {
        name: catalog.precisions[pid].bytes
        for name, pid in binding.items()
        if name in kernel.widths and pid in catalog.precisions
    }


# An integral width goes in as an int: the same exact values, without Fraction
# arithmetic on every term (bytes per value are 8, 4, 2, 1 for most precisions).
_exact = integral


def _evaluate(
    formula: Formula,
    cases: Sequence[Case],
    widths: Sequence[Fraction],
    bound: Sequence[dict[str, Fraction]] | None = None,
) -> list[list[Fraction]]:
    """The formula for every case at every width, exactly: result[case][width].

    `bound[i]` holds the width symbols case `i` binds to a precision; every other width
    symbol (and `w`) takes the evaluated width.
    """
    widthlike = formula.reserved
    names = sorted(formula.symbols - widthlike)
    n = len(cases)
    if not widthlike:
        values = bulk_evaluate(formula, {name: [c.shape[name] for c in cases] for name in names})
        return [[v] * len(widths) for v in values]
    columns: dict[str, list[int | Fraction]] = {}
    for name in names:
        column: list[int | Fraction] = [c.shape[name] for c in cases]
        columns[name] = column * len(widths)
    exact_widths = [_exact(w) for w in widths]
    for name in widthlike:
        if name == WIDTH or bound is None:
            columns[name] = [w for w in exact_widths for _ in range(n)]
        else:
            fixed = [bound[i].get(name) for i in range(n)]
            columns[name] = [w if b is None else _exact(b) for w in exact_widths for b in fixed]
    flat = bulk_evaluate(formula, columns)
    return [[flat[k * n + i] for k in range(len(widths))] for i in range(n)]


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


def _why(level: str, kernel: Kernel) -> str:
    if level in kernel.bytes:
        return f"the device gives no {level} bandwidth"
    return f"the kernel gives no {level} traffic"


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
