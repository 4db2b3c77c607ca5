"""The exact values of the cells: a device's figures, a measured run, one cell's result,
and the counts every cell reads.

A cell is one case on one device at one precision the device has a peak for. `Counts`
holds every cell's exact inputs (`rooflinec.engine.compiler` fills it); `Result` is the
exact view of one cell, whose bound its `Roof` decides (`rooflinec.engine.roof`). The
float columns (`rooflinec.engine.columns`) and the model rows (`rooflinec.engine.models`)
read these values; nothing here imports them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property

from rooflinec.catalog import LEVELS, Case, Kernel
from rooflinec.engine.roof import Bound, Roof
from rooflinec.engine.terms import SWEEP, SWEEP_KEYS
from rooflinec.errors import Location

__all__ = ["Counts", "DeviceFigures", "Result", "Run"]


@dataclass(frozen=True)
class DeviceFigures:
    """A device's sustained ceilings: dense peak per precision, bandwidth per level, ridges."""

    id: str
    name: str
    peaks: dict[str, Fraction]
    bandwidths: dict[str, Fraction]

    @cached_property  # the pages ask for it hundreds of times per device
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
    `i % len(pair_device)`. Counts are kept per (case, context): row `case * len(widths)
    + pair_width[pair]` of `flops` and `bytes`. A context is a width (`widths[k]`, which
    may repeat) with the shared memory per core of the devices whose pairs read it, where
    a kernel's traffic reads `smem`; a row leaves out a level its context cannot give.
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
    # device -> shared memory per core, B: what a tiled kernel's traffic reads (`smem`)
    shared: dict[str, int] = field(default_factory=dict)

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

    def result_at(self, cell: int) -> Result:
        """The exact view of cell `cell`."""
        c = self
        i, j = divmod(cell, len(c.pair_device))
        case, kernel, device = c.cases[i], c.kernels[i], c.pair_device[j]
        row = c.count_row(cell)
        bandwidths, unmodelled = self.levels(kernel, device)
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

    def levels(
        self, kernel: Kernel, device: str
    ) -> tuple[dict[str, Fraction], tuple[tuple[str, str], ...]]:
        """Which levels are ceilings, and why the others are not: per kernel and device."""
        key = (kernel.id, device)
        hit = self._level_cache.get(key)
        if hit is None:
            given = self.bandwidths[device]
            untiled = () if device in self.shared else kernel.shared_levels
            ceilings = {
                lv: given[lv]
                for lv in LEVELS
                if lv in kernel.bytes and lv in given and lv not in untiled
            }
            unmodelled = tuple(
                (lv, _why(lv, kernel, lv in untiled and lv in given))
                for lv in LEVELS
                if (lv in kernel.bytes) != (lv in given) or (lv in given and lv in untiled)
            )
            hit = self._level_cache[key] = (ceilings, unmodelled)
        return hit


def _why(level: str, kernel: Kernel, untiled: bool = False) -> str:
    if untiled:
        return (
            f"the device quotes no shared memory per core, which the kernel's {level} traffic reads"
        )
    if level in kernel.bytes:
        return f"the device gives no {level} bandwidth"
    return f"the kernel gives no {level} traffic"
