"""The write-up block of a measured run: the kernel line and the five lines a benchmark
report carries (achieved throughput, achieved bandwidth, arithmetic intensity, regime,
bottleneck to attack), each worded from the method.

The regime is read from the measured point where a profiler counted bytes: the point's
own roofline (peak, measured intensity × bandwidth at each counted level, the latency
floor) says which limit it sits under. Without counted bytes it is the modelled one.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from rooflinec.catalog import LEVEL_SHORT_NAMES, LEVELS, Catalog
from rooflinec.engine import Roof
from rooflinec.engine.cells import Result, Run
from rooflinec.engine.terms import COMPUTE, LATENCY
from rooflinec.formatting import format_number, format_percent, format_si

__all__ = ["TRAFFIC_WELL_ABOVE", "NotMeasured", "Regime", "regime", "report"]

#: A traffic ratio from which on the caches are said not to hold what the formula assumes.
TRAFFIC_WELL_ABOVE = Fraction(3, 2)


class NotMeasured(ValueError):
    """The result has no measured run to report on."""


@dataclass(frozen=True)
class Regime:
    """What limits a measured run, and whether the counted traffic says so."""

    limited_by: str  # compute, a level, or latency
    from_traffic: bool  # decided at the measured intensity (bytes were counted)


def regime(result: Result) -> Regime:
    """The limit under the measured point, or the modelled one without counted bytes."""
    run = result.run
    intensity = result.measured_intensity
    levels = [lv for lv in LEVELS if lv in intensity and lv in result.bandwidths]
    if run is None or not levels:
        return Regime(result.limited_by, False)
    # The measured point on the cell's roof: its counted levels, the modelled floor.
    roof = Roof.of(result.peak, {lv: result.bandwidths[lv] for lv in levels}, result.floor)
    return Regime(roof.bound(run.flops, run.bytes).limit, True)


def _name(level: str) -> str:
    return LEVEL_SHORT_NAMES.get(level, level)


def report(catalog: Catalog, result: Result) -> str:
    """The kernel line and the five write-up lines of `result`'s measured run.

    Raises `NotMeasured` when the result has no measured run.
    """
    run = result.run
    if run is None or result.measured is None:
        raise NotMeasured(
            f"case '{result.case}' has no measured run on '{result.device}' at"
            f" {result.precision}: add a `measured` entry to its kernel spec"
            " (`rooflinec import` writes one from a profiler's export)"
        )
    unit = catalog.precisions[result.precision].unit
    lines = [
        _kernel_line(catalog, result, run),
        _throughput_line(result, result.measured, unit),
        _bandwidth_line(result, run),
        _intensity_line(result, unit),
    ]
    found = regime(result)
    lines.append(_regime_line(result, found, unit))
    lines.append(_bottleneck_line(result, found))
    return "\n".join(lines) + "\n"


def _kernel_line(catalog: Catalog, result: Result, run: Run) -> str:
    kernel = catalog.kernels[result.kernel]
    case = catalog.cases[result.case]
    device = catalog.devices[result.device]
    label = catalog.precisions[result.precision].label
    launches = f"{case.launches} launches" if case.launches != 1 else "1 launch"
    text = (
        f"Kernel: {kernel.name}, {case.name} ({case.id}) on {device.name} at {label},"
        f" {launches} a run"
    )
    source = kernel.sources.get(run.source) if run.source is not None else None
    if source is not None:
        tool = f" with {source.tool}" if source.tool else ""
        text += f"; measured{tool} on {source.read} (source {source.id})"
    flops = "counted by the profiler" if run.counted_flops else "from the kernel's formula"
    return f"{text}; operations {flops}"


def _throughput_line(result: Result, measured: Fraction, unit: str) -> str:
    return (
        f"Achieved throughput: {format_si(measured, unit + '/s')},"
        f" {format_percent(measured / result.peak)} of the"
        f" {format_si(result.peak, unit + '/s')} sustained peak"
        f" ({format_percent(measured / result.attainable)} of the"
        f" {format_si(result.attainable, unit + '/s')} attainable)"
    )


def _bandwidth_line(result: Result, run: Run) -> str:
    counted = result.measured_bandwidth
    parts = []
    for level in LEVELS:
        if level in counted:
            bandwidth, how = counted[level], ""
        elif level in result.bytes and level in result.bandwidths:
            bandwidth, how = result.bytes[level] / run.time, " (modelled bytes)"
        else:
            continue
        text = f"{_name(level)} {format_si(bandwidth, 'B/s')}{how}"
        if level in result.bandwidths:
            ceiling = result.bandwidths[level]
            text += f", {format_percent(bandwidth / ceiling)} of {format_si(ceiling, 'B/s')}"
        parts.append(text)
    return "Achieved bandwidth: " + ("; ".join(parts) or "no level modelled or counted")


def _intensity_line(result: Result, unit: str) -> str:
    """Each intensity from one source: the formula's operations over its bytes (modelled),
    or the profiler's operations over its bytes (measured); never one over the other."""
    measured = result.measured_intensity
    counted = result.run.bytes if result.run is not None else {}
    parts = []
    for level in LEVELS:
        if level not in result.intensity and level not in measured:
            continue
        texts, notes = [], []
        if level in result.intensity:
            texts.append(f"{format_si(result.intensity[level], unit + '/B')} modelled")
        if level in measured:
            texts.append(f"{format_si(measured[level], unit + '/B')} measured")
        elif level in counted:
            texts.append("none measured")
            notes.append("bytes counted, operations not")
        if level in result.traffic_ratio:
            notes.append(f"traffic ratio {format_number(result.traffic_ratio[level], 3)}")
        text = f"{_name(level)} {', '.join(texts)}"
        parts.append(text + (f" ({'; '.join(notes)})" if notes else ""))
    sources = ["modelled: the formula's operations and bytes"]
    if measured:
        sources.append("measured: the profiler's operations and bytes")
    return "Arithmetic intensity: " + "; ".join([*parts, *sources])


def _regime_line(result: Result, found: Regime, unit: str) -> str:
    if found.from_traffic:
        basis = "at the measured intensity"
    elif result.run is not None and result.run.bytes and not result.run.counted_flops:
        basis = "modelled: the profiler counted bytes but no operations"
    else:
        basis = "modelled: no bytes counted"
    if found.limited_by == COMPUTE:
        what = "compute-bound"
    elif found.limited_by == LATENCY:
        what = f"latency-bound (a run takes at least {format_si(result.floor or 0, 's')})"
    else:
        ridge = result.peak / result.bandwidths[found.limited_by]
        what = (
            f"memory-bound at {_name(found.limited_by)}"
            f" (ridge point {format_si(ridge, unit + '/B')})"
        )
    return f"Regime: {what}, {basis}"


def _bottleneck_line(result: Result, found: Regime) -> str:
    if found.limited_by == COMPUTE:
        text = (
            "feed the matrix units: the instruction mix and tensor-core use"
            " (occupancy is not the goal)"
        )
    elif found.limited_by == LATENCY:
        text = "launch fewer, larger kernels: fuse them or capture them in a graph"
    else:
        text = (
            f"move fewer bytes at {_name(found.limited_by)}: fusion, a lower precision,"
            " tiling for reuse"
        )
    high = [
        f"{_name(lv)} moved {format_number(r, 3)}x the modelled bytes"
        for lv, r in result.traffic_ratio.items()
        if r >= TRAFFIC_WELL_ABOVE
    ]
    if high:
        text += f"; {', '.join(high)}: the caches are not holding what the formula assumes"
    return f"Bottleneck to attack: {text}"
