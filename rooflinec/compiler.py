"""The roofline compiler: catalog in, results out, exact throughout.

For every kernel case × device × precision the device has a peak for:
operations, bytes per memory level, intensity, sustained peak and bandwidths,
the attainable rate (the lowest ceiling), what limits it, share of peak, time at
the roofline, sweeps, and the efficiency of measured runs. Values are `Fraction`s
in SI base units; floats appear only when a result is written out.

Work is shared across cells: formulas are compiled once per kernel and evaluated
once per case and precision width; device ceilings are computed once per device.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

from rooflinec.catalog import LEVELS, Case, Catalog, Device, Kernel
from rooflinec.errors import Diagnostic, Location

SWEEP = (Fraction(1, 2), Fraction(1), Fraction(2), Fraction(4))
SWEEP_KEYS = ("0.5", "1", "2", "4")
COMPUTE = "compute"

#: From this many rows on, `compile --format json|csv` and the site's downloads take the
#: columnar path (`rooflinec.bulk`): the same document, numbers equal to ~15 significant
#: digits, streamed, at a tenth of the time. Smaller catalogs, and `table`, stay exact.
BULK_ROWS = 20_000


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
class Result:
    """One case on one device at one precision."""

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

    @property
    def intensity(self) -> dict[str, Fraction]:
        return {level: self.flops / b for level, b in self.bytes.items()}

    # The derived values below are cached on first use (a frozen dataclass keeps them in
    # the instance's __dict__; they take no part in equality): exporting one result reads
    # the attainable rate half a dozen times.
    @cached_property
    def ceilings(self) -> dict[str, Fraction]:
        """Each ceiling's rate: `compute` is the peak, a level is intensity × bandwidth."""
        out = {COMPUTE: self.peak}
        for level, bw in self.bandwidths.items():
            out[level] = self.flops * bw / self.bytes[level]
        return out

    @cached_property
    def limited_by(self) -> str:
        # A kernel exactly at the ridge is compute bound: the peak wins ties.
        ceilings = self.ceilings
        lowest = min(ceilings.values())
        if ceilings[COMPUTE] == lowest:
            return COMPUTE
        return next(level for level in LEVELS if ceilings.get(level) == lowest)

    @cached_property
    def attainable(self) -> Fraction:
        return min(self.ceilings.values())

    @property
    def share_of_peak(self) -> Fraction:
        return self.attainable / self.peak

    @property
    def time(self) -> Fraction:
        """Time at the roofline: a lower bound on the run time, in seconds."""
        return self.flops / self.attainable

    def attainable_with(
        self, *, peak: Fraction = Fraction(1), bandwidth: Fraction = Fraction(1)
    ) -> Fraction:
        # flops × bw × f / bytes is the level's (cached, exact) ceiling × f.
        ceilings = self.ceilings
        rates = [self.peak * peak]
        rates += [ceilings[lv] * bandwidth for lv in self.bandwidths]
        return min(rates)

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


@dataclass(frozen=True)
class Compiled:
    """Everything `compile` produces: device figures, results in catalog order, problems."""

    catalog: Catalog
    devices: dict[str, DeviceFigures]
    results: tuple[Result, ...]
    diagnostics: tuple[Diagnostic, ...]

    def select(
        self,
        *,
        devices: Iterable[str] | None = None,
        cases: Iterable[str] | None = None,
        precisions: Iterable[str] | None = None,
        declared_only: bool = False,
    ) -> list[Result]:
        d, c, p = (set(x) if x is not None else None for x in (devices, cases, precisions))
        return [
            r
            for r in self.results
            if (d is None or r.device in d)
            and (c is None or r.case in c)
            and (p is None or r.precision in p)
            and (not declared_only or r.declared)
        ]

    def result(self, case: str, device: str, precision: str) -> Result | None:
        for r in self.results:
            if r.case == case and r.device == device and r.precision == precision:
                return r
        return None


def device_figures(device: Device) -> DeviceFigures:
    return DeviceFigures(
        device.id,
        device.name,
        {p: device.peak(p) for p in device.peaks},
        {level: device.bandwidth(level) for level in device.memory},
    )


def _traffic(kernel: Kernel, case: Case, width: Fraction) -> tuple[Fraction, dict[str, Fraction]]:
    values: dict[str, int | Fraction] = {**case.shape, "w": width}
    flops = kernel.flops.evaluate(values)
    return flops, {level: f.evaluate(values) for level, f in kernel.bytes.items()}


def compile_catalog(
    catalog: Catalog,
    *,
    devices: Iterable[str] | None = None,
    cases: Iterable[str] | None = None,
    precisions: Iterable[str] | None = None,
) -> Compiled:
    """Resolve every case against every device at every precision the device has a peak for."""
    want_devices = set(devices) if devices is not None else None
    want_cases = set(cases) if cases is not None else None
    want_precisions = set(precisions) if precisions is not None else None
    figures = {d.id: device_figures(d) for d in catalog.devices.values()}
    # Hoisted out of the cell loop: the devices and (precision, peak) pairs wanted, and
    # each precision's width as a small index (hashing a Fraction per cell costs more
    # than the rest of the cell).
    widths: list[Fraction] = []
    width_index: dict[str, int] = {}
    for pid, precision in catalog.precisions.items():
        if precision.bytes not in widths:
            widths.append(precision.bytes)
        width_index[pid] = widths.index(precision.bytes)
    chosen = [
        (
            device,
            figures[device.id],
            [
                (pid, peak, width_index[pid])
                for pid, peak in figures[device.id].peaks.items()
                if want_precisions is None or pid in want_precisions
            ],
        )
        for device in catalog.devices.values()
        if want_devices is None or device.id in want_devices
    ]
    results: list[Result] = []
    diagnostics: list[Diagnostic] = []
    for kernel in catalog.kernels.values():
        # Which levels are ceilings depends only on the kernel and the device.
        per_device = [
            (
                device,
                pairs,
                {
                    level: fig.bandwidths[level]
                    for level in LEVELS
                    if level in kernel.bytes and level in fig.bandwidths
                },
                tuple(
                    (level, _why(level, kernel, device))
                    for level in LEVELS
                    if (level in kernel.bytes) != (level in fig.bandwidths)
                ),
            )
            for device, fig, pairs in chosen
        ]
        for case in kernel.cases:
            if want_cases is not None and case.id not in want_cases:
                continue
            traffic: list[tuple[Fraction, dict[str, Fraction]] | None] = [None] * len(widths)
            measured = {(m.device, m.precision): m for m in case.measured}
            for device, pairs, bandwidths, unmodelled in per_device:
                for precision_id, peak, wi in pairs:
                    counts = traffic[wi]
                    if counts is None:
                        counts = traffic[wi] = _traffic(kernel, case, widths[wi])
                    flops, byte_counts = counts
                    m = measured.get((device.id, precision_id)) if measured else None
                    rate = None
                    if m is not None:
                        rate = m.rate if m.rate is not None else flops / m.time  # type: ignore[operator]
                    result = Result(
                        case.id,
                        kernel.id,
                        device.id,
                        precision_id,
                        precision_id == case.precision,
                        flops,
                        byte_counts,
                        peak,
                        bandwidths,
                        unmodelled,
                        rate,
                    )
                    if m is not None and rate is not None and rate > result.attainable:
                        diagnostics.append(_above_ceiling(kernel, case, m.location, result, rate))
                    results.append(result)
    return Compiled(catalog, figures, tuple(results), tuple(diagnostics))


def _why(level: str, kernel: Kernel, device: Device) -> str:
    if level in kernel.bytes:
        return f"the device gives no {level} bandwidth"
    return f"the kernel gives no {level} traffic"


def _above_ceiling(
    kernel: Kernel, case: Case, location: Location, result: Result, rate: Fraction
) -> Diagnostic:
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
