"""The derivation of one result, written for a reviewer to check by hand.

`explain` lists the formulas, the values bound, the operation and byte counts,
each ceiling with its number, which one wins and why, and the time. With
`symbolic=True` the shape stays free and the device's constants are folded in.
"""

from __future__ import annotations

from fractions import Fraction

from rooflinec.catalog import LEVEL_NAMES, Catalog
from rooflinec.engine.cells import Result
from rooflinec.engine.evaluate import width_values
from rooflinec.engine.terms import COMPUTE, LATENCY
from rooflinec.formatting import format_number, format_percent, format_si, width_text
from rooflinec.formulas import SHARED_MEMORY


def _exact(value: Fraction) -> str:
    if value.denominator == 1:
        return f"{value.numerator:,}"
    return f"{value.numerator:,}/{value.denominator:,} ≈ {format_number(value, 7)}"


def explain(catalog: Catalog, result: Result) -> str:
    """A line-by-line derivation of `result`."""
    kernel = catalog.kernels[result.kernel]
    case = catalog.cases[result.case]
    device = catalog.devices[result.device]
    precision = catalog.precisions[result.precision]
    unit = precision.unit
    peak = device.peaks[result.precision]
    lines: list[str] = []
    add = lines.append
    add(f"{case.name} on {device.name} at {precision.label}")
    add(f"  case {case.id} (kernel {kernel.id}), device {device.id}, precision {precision.id}")
    if not result.declared:
        add(f"  note: the case declares {case.precision}; this row evaluates it at {precision.id}")
    add("")
    add("1. Shape and precision")
    for name, value in (result.shape or case.shape).items():
        add(f"   {name} = {value:,}    ({kernel.symbols[name]})")
    add(f"   w = {width_text(precision.bytes)} B per value ({precision.label})")
    for line in width_lines(catalog, kernel.widths, case.widths):
        add(f"   {line}")
    if kernel.shared_levels and device.core is not None:
        core = device.core
        add(
            f"   {SHARED_MEMORY} = {core.shared_memory:,} B    (shared memory per {core.label},"
            f" {core.text} as quoted)    [source: {core.source}]"
        )
    add("")
    add("2. Operations")
    add(f"   {unit} = {kernel.flops.text}")
    add(f"       = {_exact(result.flops)} {unit}  ({format_si(result.flops, unit)})")
    add("")
    add("3. Bytes and intensity per memory level")
    for level, formula in kernel.bytes.items():
        add(f"   {level}: bytes = {formula.text}")
        if level not in result.bytes:
            add(
                f"         not evaluated: the device quotes no {SHARED_MEMORY}"
                " (shared memory per core)"
            )
            continue
        b = result.bytes[level]
        i = result.intensity[level]
        add(f"         = {_exact(b)} B  ({format_si(b, 'B')})")
        add(f"       intensity = {unit} / bytes = {format_si(i, unit + '/B', digits=6)}")
    add("")
    add("4. Ceilings of the device")
    printed = peak.figure.text
    sparse = " ÷ 2 (printed with 2:4 sparsity)" if peak.sparsity == "2:4" else ""
    share = device.compute_share
    add(
        f"   peak = {printed}{sparse} × {format_percent(share)} sustained"
        f" = {format_si(result.peak, unit + '/s', digits=6)}    [source: {peak.figure.source}]"
    )
    for level, bw in result.bandwidths.items():
        mem = device.memory[level]
        add(
            f"   {level} bandwidth = {mem.bandwidth.text} ({mem.label}) ×"
            f" {format_percent(device.share_of(level))} sustained"
            f" = {format_si(bw, 'B/s', digits=6)}    [source: {mem.bandwidth.source}]"
        )
        ridge = result.peak / bw
        add(
            f"   {level} ridge point = peak / bandwidth = {format_si(ridge, unit + '/B', digits=6)}"
        )
    for level, why in result.unmodelled:
        add(f"   {level}: no ceiling for this pair: {why}")
    add("")
    add("5. Attainable rate = min(peak, intensity × bandwidth for each level)")
    ceilings = result.ceilings
    for name, rate in ceilings.items():
        if name == COMPUTE:
            add(f"   compute ceiling: {format_si(rate, unit + '/s', digits=6)}")
        else:
            i = result.intensity[name]
            add(
                f"   {name} ceiling: {format_si(i, unit + '/B', digits=6)} ×"
                f" {format_si(result.bandwidths[name], 'B/s', digits=6)}"
                f" = {format_si(rate, unit + '/s', digits=6)}"
            )
    if result.floor is not None and result.floor_rate is not None and device.launch is not None:
        add(
            f"   latency floor: {case.launches} launch(es) × {device.launch.text}"
            f" = {format_si(result.floor, 's', digits=6)}, at most"
            f" {format_si(result.floor_rate, unit + '/s', digits=6)}"
            f"    [source: {device.launch.source}]"
        )
    winner = result.limited_by
    add(f"   lowest: {winner} → attainable = {format_si(result.attainable, unit + '/s', digits=6)}")
    if winner == COMPUTE:
        add("   compute bound: the intensity is at or above every ridge point")
    elif winner == LATENCY:
        add("   latency bound: the launch takes longer than the work at the roofline")
    else:
        add(
            f"   memory bound on {LEVEL_NAMES[winner]}: the intensity is below that level's"
            " ridge point"
        )
    add(f"   share of peak = attainable / peak = {format_percent(result.share_of_peak)}")
    add("")
    add("6. Time at the roofline (a lower bound on run time)")
    add(f"   time = {unit} / attainable = {format_si(result.time, 's', digits=6)}")
    if result.measured is not None and result.efficiency is not None:
        add("")
        add("7. Measured")
        add(f"   measured rate = {format_si(result.measured, unit + '/s', digits=6)}")
        add(f"   efficiency = measured / attainable = {format_percent(result.efficiency)}")
        for level, ratio in result.traffic_ratio.items():
            # Counted operations over counted bytes, or none: one source per quotient.
            counted = result.measured_intensity.get(level)
            intensity = (
                "no measured intensity (operations not counted)"
                if counted is None
                else f"measured intensity {format_si(counted, unit + '/B', digits=6)}"
            )
            add(
                f"   {level}: {intensity},"
                f" bandwidth {format_si(result.measured_bandwidth[level], 'B/s', digits=6)},"
                f" traffic ratio {format_number(ratio, 4)}"
            )
    add("")
    number = 8 if result.measured is not None and result.efficiency is not None else 7
    add(f"{number}. Crossovers (one symbol varied over the integers, the others held)")
    for symbol in kernel.symbols:
        add(f"   {symbol}: {crossover_phrase(catalog, result, symbol)}")
    return "\n".join(lines) + "\n"


def width_lines(catalog: Catalog, widths: dict[str, str], bound: dict[str, str]) -> list[str]:
    """One line per width symbol of a kernel: bound to a precision's bytes, or w."""
    out = []
    for name, meaning in widths.items():
        pid = bound.get(name)
        if pid is None:
            out.append(f"{name} = w    ({meaning}; not bound)")
        else:
            p = catalog.precisions[pid]
            out.append(
                f"{name} = {width_text(p.bytes)} B per value    ({meaning}; bound to"
                f" {p.id}, {p.label})"
            )
    return out


def crossover_phrase(catalog: Catalog, result: Result, symbol: str) -> str:
    """Where the result turns compute bound as `symbol` varies, in a few words."""
    from rooflinec.engine.solve import DOMAIN, SolveError, crossover, solve_regions
    from rooflinec.engine.solve_case import limit_name, problem_of

    try:
        regions = solve_regions(
            problem_of(
                catalog, result.case, result.device, result.precision, symbol, shape=result.shape
            )
        )
    except SolveError as exc:
        return f"not solved ({exc})"
    at = crossover(regions)
    more = f"; {len(regions)} regions, see `rooflinec solve`" if len(regions) > 2 else ""
    if at is None:
        last = limit_name(regions[-1].limited_by)
        return f"never stays compute bound ({last} bound at {symbol} = {DOMAIN[1]:,}){more}"
    if len(regions) == 1:
        return f"compute bound at every {symbol} from {DOMAIN[0]:,} to {DOMAIN[1]:,}"
    return f"compute bound from {symbol} = {at:,} on{more}"


def explain_symbolic(catalog: Catalog, result: Result) -> tuple[str, str]:
    """Time at the roofline over the free shape: (plain text, LaTeX).

    time = max(flops / peak, bytes_L / bandwidth_L for each level), with the
    device's numbers folded into constants.
    """
    import sympy

    kernel = catalog.kernels[result.kernel]
    precision = catalog.precisions[result.precision]
    case = catalog.cases[result.case]
    widths = width_values(kernel.widths, precision.bytes, case.widths, catalog.precisions)
    core = catalog.devices[result.device].core
    if core is not None:
        widths[SHARED_MEMORY] = core.shared_memory  # a device constant, folded in too

    def term(expr: object, divisor: Fraction) -> object:
        # Keep the shape's structure: c * (M*K + K*N + M*N), not c*M*K + c*K*N + ...
        coeff, rest = sympy.factor_terms(expr).as_coeff_Mul()
        constant = sympy.Float(sympy.Rational(coeff) / _rational(divisor), 6)
        return sympy.Mul(constant, rest, evaluate=False)

    terms = [term(kernel.flops.expr, result.peak)]
    for level, bw in result.bandwidths.items():
        expr = kernel.bytes[level].expr
        # Substitute w (and the width symbols) by name: the formula engine creates its
        # own Symbol objects.
        expr = expr.subs(
            {s: _rational(widths[s.name]) for s in expr.free_symbols if s.name in widths}
        )
        terms.append(term(expr, bw))
    time = terms[0] if len(terms) == 1 else sympy.Max(*terms, evaluate=False)
    plain = "time = " + sympy.sstr(time).replace("Max(", "max(") + "  [s]"
    latex = r"t = " + sympy.latex(time) + r"\ \mathrm{s}"
    return plain, latex


def _rational(value: Fraction | int) -> object:
    import sympy

    return sympy.Rational(value.numerator, value.denominator)
