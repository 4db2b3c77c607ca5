"""The crossover of a catalog case: which symbol, device and precision; the answer as
JSON (the design's names) and as text. `held_problem` poses the exact question, for a
case and for a model's step (`rooflinec.engine.step_crossover`).

`bandwidth_to_compute_bound` and `peak_to_memory_bound` are read at the case's own
shape: the bandwidth of each level from which that level's ceiling reaches the peak
(peak × bytes / flops), and the peak above which the result turns memory bound (the
lowest memory ceiling; at exactly that peak it is still compute bound).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from rooflinec.catalog import LEVEL_SHORT_NAMES, LEVELS, Case, Catalog, Device, Kernel
from rooflinec.engine.cells import DeviceFigures
from rooflinec.engine.compiler import device_figures
from rooflinec.engine.evaluate import width_values
from rooflinec.engine.solve import DOMAIN, Problem, Region, crossover, solve_regions
from rooflinec.engine.terms import COMPUTE, LATENCY
from rooflinec.errors import UsageError
from rooflinec.formatting import format_si
from rooflinec.formulas import SHARED_MEMORY, Formula


@dataclass(frozen=True)
class Crossover:
    """One case on one device at one precision, one symbol varied over `DOMAIN`."""

    case: str
    device: str
    precision: str
    symbol: str
    shape: dict[str, int]
    regions: tuple[Region, ...]
    bandwidth_to_compute_bound: dict[str, Fraction]
    peak_to_memory_bound: Fraction | None
    launches: int = 1  # launches one run of the case takes
    latency: Fraction | None = None  # the device's launch latency, s; None: no floor

    @property
    def floor(self) -> Fraction | None:
        """The least time of a run: launches × latency, s; None without a floor."""
        return None if self.latency is None else self.launches * self.latency

    @property
    def crossover(self) -> int | None:
        return crossover(self.regions)


def problem_of(
    catalog: Catalog,
    case_id: str,
    device_id: str,
    precision: str,
    symbol: str,
    *,
    shape: dict[str, int] | None = None,
) -> Problem:
    """The exact question for a catalog case (held at `shape`, default the case's own:
    for a grid case, its first shape); `UsageError` for anything unknown."""
    case = catalog.cases.get(case_id)
    if case is None:
        raise UsageError(f"unknown case '{case_id}' (known: {', '.join(sorted(catalog.cases))})")
    device = catalog.devices.get(device_id)
    if device is None:
        known = ", ".join(sorted(catalog.devices))
        raise UsageError(f"unknown device '{device_id}' (known: {known})")
    if precision not in catalog.precisions:
        known = ", ".join(sorted(catalog.precisions))
        raise UsageError(f"unknown precision '{precision}' (known: {known})")
    if precision not in device.peaks:
        raise UsageError(
            f"device '{device.id}' has no peak for precision '{precision}'"
            f" (it has: {', '.join(device.peaks)})"
        )
    kernel = catalog.kernels[case.kernel]
    if symbol not in kernel.symbols:
        raise UsageError(
            f"kernel '{kernel.id}' of case '{case.id}' has no symbol '{symbol}'"
            f" (it has: {', '.join(kernel.symbols)})"
        )
    # The floor `compile` applies to the case's cells: launches × latency.
    floor = None if device.launch is None else case.launches * device.launch.latency
    held = case.shape if shape is None else shape
    return case_problem(
        catalog, case, device, held, symbol, device_figures(device), precision, floor
    )


def tiled(
    kernel: Kernel, device: Device | None, held: Mapping[str, int | Fraction]
) -> tuple[Mapping[str, Formula], Mapping[str, int | Fraction]]:
    """A kernel's byte formulas and held values on `device`: a tiled kernel's traffic
    reads the device's shared memory per core (`smem`, bound here); on a device that
    quotes none (or none of the catalog's) that level is no ceiling, as in `compile`."""
    if not kernel.shared_levels:
        return kernel.bytes, held
    if device is None or device.core is None:
        kept = {lv: f for lv, f in kernel.bytes.items() if lv not in kernel.shared_levels}
        return kept, held
    return kernel.bytes, {**held, SHARED_MEMORY: device.core.shared_memory}


def case_problem(
    catalog: Catalog,
    case: Case,
    device: Device | None,
    shape: Mapping[str, int],
    symbol: str,
    figures: DeviceFigures,
    precision: str,
    floor: Fraction | None = None,
) -> Problem:
    """The crossover question of a case's `symbol` on `figures`, its other symbols held at
    `shape`, its kernel tiled for `device` (`tiled`)."""
    kernel = catalog.kernels[case.kernel]
    traffic, held = tiled(kernel, device, shape)
    return held_problem(
        catalog, kernel, case.widths, kernel.flops, traffic, held, symbol, figures, precision, floor
    )


def held_problem(
    catalog: Catalog,
    kernel: Kernel,
    widths: Mapping[str, str],
    flops: Formula,
    traffic: Mapping[str, Formula],
    held: Mapping[str, int | Fraction],
    symbol: str,
    figures: DeviceFigures,
    precision: str,
    floor: Fraction | None = None,
) -> Problem:
    """The crossover question of `symbol` varied, every other symbol at its `held` value
    and the kernel's width symbols at `precision` (bound as `widths` says), on `figures`:
    shared by a case's and a model step's crossover."""
    values: dict[str, int | Fraction] = {k: v for k, v in held.items() if k != symbol}
    width = catalog.precisions[precision].bytes
    values.update(width_values(kernel.widths, width, widths, catalog.precisions))
    return Problem(
        flops,
        tuple(traffic.items()),
        tuple(sorted(values.items())),
        symbol,
        figures.peaks[precision],
        tuple(
            (lv, figures.bandwidths[lv])
            for lv in LEVELS
            if lv in traffic and lv in figures.bandwidths
        ),
        floor,
    )


def solve_case(
    catalog: Catalog,
    case_id: str,
    device_id: str,
    precision: str | None,
    symbol: str,
    *,
    shape: dict[str, int] | None = None,
) -> Crossover:
    """The crossover of `case_id` varying `symbol` (default precision: the case's own),
    the other symbols held at `shape` (default: the case's shape)."""
    case = catalog.cases.get(case_id)
    chosen = precision if precision is not None else case.precision if case else ""
    problem = problem_of(catalog, case_id, device_id, chosen, symbol, shape=shape)
    assert case is not None
    held = case.shape if shape is None else shape
    regions = solve_regions(problem)
    own = {**dict(problem.shape), symbol: held[symbol]}
    flops = problem.flops.evaluate(own)
    to_compute: dict[str, Fraction] = {}
    ceilings: list[Fraction] = []
    for level, bandwidth in problem.bandwidths:
        count = dict(problem.bytes)[level].evaluate(own)
        if flops > 0 and count > 0:
            to_compute[level] = problem.peak * count / flops
            ceilings.append(flops * bandwidth / count)
    return Crossover(
        case.id,
        device_id,
        chosen,
        symbol,
        dict(held),
        regions,
        to_compute,
        min(ceilings) if ceilings else None,
        case.launches,
        None if problem.floor is None else problem.floor / case.launches,
    )


def to_data(c: Crossover) -> dict[str, Any]:
    """The design's JSON shape: SI base units as floats, region bounds as ints; on a
    device with a launch floor, `latency_floor` (s) too."""
    data = {
        "case": c.case,
        "device": c.device,
        "precision": c.precision,
        "symbol": c.symbol,
        "regions": [{"from": r.start, "to": r.end, "limited_by": r.limited_by} for r in c.regions],
        "crossover": c.crossover,
        "bandwidth_to_compute_bound": {
            lv: float(bw) for lv, bw in c.bandwidth_to_compute_bound.items()
        },
        "peak_to_memory_bound": (
            float(c.peak_to_memory_bound) if c.peak_to_memory_bound is not None else None
        ),
    }
    if c.floor is not None:
        data["latency_floor"] = float(c.floor)
    return data


def latency_regions(c: Crossover) -> tuple[Region, ...]:
    """The regions the launch floor holds."""
    return tuple(r for r in c.regions if r.limited_by == LATENCY)


def limit_name(limit: str) -> str:
    return COMPUTE if limit == COMPUTE else LEVEL_SHORT_NAMES.get(limit, limit)


def to_text(catalog: Catalog, c: Crossover) -> str:
    """The answer for a terminal: regions, crossover, and the two thresholds."""
    device = catalog.devices[c.device]
    precision = catalog.precisions[c.precision]
    unit = precision.unit
    held = ", ".join(f"{k} = {v:,}" for k, v in c.shape.items() if k != c.symbol)
    lines = [
        f"{catalog.cases[c.case].name} on {device.name} at {precision.label}",
        f"  case {c.case}, device {c.device}, precision {c.precision}",
        f"  {c.symbol} varied over the integers {DOMAIN[0]:,}..{DOMAIN[1]:,}"
        + (f"; held: {held}" if held else ""),
        "",
        "Regions",
    ]
    for r in c.regions:
        end = f"{r.end:,}" if r.end is not None else f"{DOMAIN[1]:,}"
        lines.append(f"  {c.symbol} = {r.start:,} .. {end}: {limit_name(r.limited_by)}")
    lines.append("")
    if c.crossover is None:
        lines.append(f"Crossover: none (not compute bound at {c.symbol} = {DOMAIN[1]:,})")
    elif c.crossover == DOMAIN[0] and len(c.regions) == 1:
        lines.append(f"Crossover: {c.symbol} = {c.crossover:,} (compute bound throughout)")
    else:
        lines.append(f"Crossover: {c.symbol} = {c.crossover:,} (compute bound from there on)")
    if c.floor is not None and c.latency is not None:
        lines.append(_floor_line(c, c.floor, c.latency))
    lines.append("")
    lines.append(f"At the case's own shape ({c.symbol} = {c.shape[c.symbol]:,})")
    for level, bw in c.bandwidth_to_compute_bound.items():
        lines.append(
            f"  {LEVEL_SHORT_NAMES[level]} bandwidth from which it is compute bound:"
            f" {format_si(bw, 'B/s', digits=6)}"
        )
    if c.peak_to_memory_bound is not None:
        lines.append(
            f"  peak above which it is memory bound: "
            f"{format_si(c.peak_to_memory_bound, unit + '/s', digits=6)}"
        )
    return "\n".join(lines) + "\n"


def _floor_line(c: Crossover, floor: Fraction, latency: Fraction) -> str:
    """Where the launch floor holds: the time at the roofline below launches × latency."""
    launches = f"{c.launches:,} launches" if c.launches != 1 else "1 launch"
    text = (
        f"Latency floor: a run takes at least {format_si(floor, 's', digits=6)}"
        f" ({launches} × {format_si(latency, 's', digits=6)})"
    )
    held = latency_regions(c)
    if not held:
        return text + f"; the time at the roofline reaches it at every {c.symbol}"
    spans = ", ".join(f"{r.start:,} .. {r.end if r.end is not None else DOMAIN[1]:,}" for r in held)
    text += f"; latency bound (the time at the roofline below it) at {c.symbol} = {spans}"
    last = held[-1].end
    if last is not None:
        text += f"; the roofline holds from {c.symbol} = {last + 1:,} on"
    return text
