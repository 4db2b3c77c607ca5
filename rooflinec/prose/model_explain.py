"""The derivation of one model row, written for a reviewer to check by hand.

The model's variables, the device's ceilings, then each step: its shape formulas and
values, the kernel's formulas at that shape, each ceiling of one run and which one
wins, the time of one run and of `count` runs; then the sums, and tokens per second.
"""

from __future__ import annotations

from fractions import Fraction

from rooflinec.catalog import LEVEL_NAMES, LEVELS, ONE_CHIP, Deployment, Model
from rooflinec.engine.cells import Result
from rooflinec.engine.compiler import Compiled
from rooflinec.engine.models import CollectiveBound, CollectiveStep, ModelEngine, ModelResult
from rooflinec.engine.terms import COMPUTE, LATENCY
from rooflinec.formatting import format_number, format_percent, format_si, width_text
from rooflinec.outputs.model_rows import fit_text
from rooflinec.prose.explain import width_lines


def _count(value: int | Fraction) -> str:
    """Tokens as a whole number, or to six digits where a verify pass makes a fraction."""
    return f"{value:,}" if isinstance(value, int) else format_number(value, 6)


def _exact(value: Fraction) -> str:
    if value.denominator == 1:
        return f"{value.numerator:,}"
    return f"{value.numerator:,}/{value.denominator:,} ≈ {format_number(value, 10)}"


def _bound(limit: str) -> str:
    if limit == COMPUTE:
        return "compute bound"
    if limit == LATENCY:
        return "latency bound (the launch takes longer than the work at the roofline)"
    if limit not in LEVEL_NAMES:
        return f"bound by the {limit.replace('_', '-')} interconnect"
    return f"memory bound on {LEVEL_NAMES[limit]}"


def _bound_value(name: str, text: str, value: int | Fraction) -> str:
    """`N = 3*h = 15,360`; a formula that is the number itself is not repeated. A
    fraction (an expectation under uniform routing) to ten figures, marked `≈`."""
    if isinstance(value, Fraction) and value.denominator != 1:
        return f"{name} = {text} ≈ {format_number(value, 10)}"
    return f"{name} = {value:,}" if text == str(value) else f"{name} = {text} = {value:,}"


def _variables(model: Model, phase: str, row: ModelResult) -> list[str]:
    params = ", ".join(f"{k} = {v:,}" for k, v in model.parameters.items())
    run = ", ".join(f"{k} = {v:,}" for k, v in model.phases[phase].items())
    out = [f"   parameters: {params}", f"   phase {phase}: {run or '(no variables)'}"]
    deployment = row.deployment
    if deployment != ONE_CHIP:
        degrees = ", ".join(f"{k} = {v:,}" for k, v in deployment.variables().items())
        out.append(f"   deployment: {degrees}; chips = {deployment.total:,}")
    return out


def _collective_lines(
    compiled: Compiled, row: ModelResult, index: int, c: CollectiveStep, b: CollectiveBound
) -> list[str]:
    """A collective step's bindings: the level its group crosses and why, red, the
    bandwidth the group gets, and its time."""
    catalog = compiled.catalog
    step = c.step
    kernel = catalog.kernels[step.kernel]
    link = b.link
    s_unit = catalog.precisions[c.precision].unit
    shape = ", ".join(_bound_value(name, f.text, c.shape[name]) for name, f in step.shape.items())
    domain = "no domain given" if link.domain is None else f"domain {link.domain:,} chips"
    if b.role == "scale_up":
        packing = f"stays in one scale-up domain ({domain})"
    else:
        up = compiled.model_engine.links(row.device).get("scale_up")
        packing = (
            "leaves the scale-up domain"
            + ("" if up is None or up.domain is None else f" of {up.domain:,} chips")
            + ": re-keyed to scale_out"
        )
    red_why = {
        "all-reduce": "1: the switch reduces in-network"
        if link.in_network and c.n > 2
        else "2(n-1)/n over point-to-point links",
        "send": "1: every value crosses one link once",
    }.get(c.kind, "(n-1)/n: each chip's own share stays")
    lines = [
        f"   3.{index} {step.id}: {step.name}, collective {kernel.id} (kernel {kernel.id})",
        f"       shape: {shape}",
        f"       {_bound_value('count', step.count.text, c.count)}",
        f"       group: n = {c.n:,} chips spanning {c.span:,} once packed (tp innermost);"
        f" {packing}",
        f"       level: {b.role} ({link.label or b.role}),"
        f" {link.topology or 'topology not given'}, {domain}",
        f"       red = {red_why} = {_exact(b.red)}",
        f"       {b.role} bytes per run = {kernel.bytes['scale_up'].text} = {_exact(b.bytes)} B",
    ]
    share = ""
    if link.topology == "mesh" and link.domain is not None and 1 < c.n < link.domain:
        share = f" × (n-1)/(domain-1) = {c.n - 1}/{link.domain - 1} (mesh)"
    lines.append(
        f"       bandwidth = {format_si(link.bandwidth, 'B/s', digits=6)} sustained per chip and"
        f" direction{share} = {format_si(b.bandwidth, 'B/s', digits=6)}"
    )
    lat = (
        "" if link.latency is None else f"; level latency {format_si(link.latency, 's', digits=6)}"
    )
    lines.append(
        f"       bytes / bandwidth = {format_si(b.bytes / b.bandwidth, 's', digits=6)}{lat};"
        f" {s_unit} per run = {kernel.flops.text} = {_exact(c.flops)}"
    )
    lines.append(
        f"       lowest: {b.limited_by}; time = {format_si(b.time, 's', digits=6)} per run ×"
        f" {c.count:,} = {format_si(b.time * c.count, 's', digits=6)}"
    )
    return lines


def explain_model(compiled: Compiled, row: ModelResult) -> str:
    """A line-by-line derivation of `row` (a catalog device's row)."""
    catalog = compiled.catalog
    model = catalog.models[row.model]
    device = catalog.devices[row.device]
    precision = catalog.precisions[row.precision]
    unit = precision.unit
    lines: list[str] = []
    add = lines.append
    add(f"{model.name}, phase {row.phase}, on {device.name} at {precision.label}")
    add(f"  model {model.id}, phase {row.phase}, device {device.id}, precision {precision.id}")
    if not row.declared:
        add(
            f"  note: the model computes at {model.precision};"
            f" this row evaluates it at {precision.id}"
        )
    add("")
    add("1. Variables")
    lines.extend(_variables(model, row.phase, row))
    spec = model.speculation.get(row.phase)
    if spec is None:
        add(f"   tokens = {model.tokens.text} = {_count(row.tokens)}")
    else:
        add(
            f"   a verify pass of speculation: k = {spec.k} drafted tokens, acceptance"
            f" {format_number(spec.acceptance, 6)}; tokens = b × (1 - a^(k+1)) / (1 - a)"
            f" = {_count(row.tokens)}"
        )
    add("")
    add("2. Ceilings of the device")
    for pid in dict.fromkeys(s.precision for s in row.steps):
        peak = device.peaks[pid]
        sparse = " ÷ 2 (printed with 2:4 sparsity)" if peak.sparsity == "2:4" else ""
        p_unit = catalog.precisions[pid].unit
        add(
            f"   {pid} peak = {peak.figure.text}{sparse} × {format_percent(device.compute_share)}"
            f" sustained = {format_si(device.peak(pid), p_unit + '/s', digits=6)}"
            f"    [source: {peak.figure.source}]"
        )
    for level, mem in device.memory.items():
        add(
            f"   {level} bandwidth = {mem.bandwidth.text} ({mem.label}) ×"
            f" {format_percent(device.share_of(level))} sustained"
            f" = {format_si(device.bandwidth(level), 'B/s', digits=6)}"
            f"    [source: {mem.bandwidth.source}]"
        )
    if device.launch is not None:
        add(
            f"   latency floor = {device.launch.text} per launch, one launch per run"
            f"    [source: {device.launch.source}]"
        )
    add("")
    add("3. Steps (each run sits on its own roofline; a step's totals are count × one run)")
    by_id = {step.id: i for i, step in enumerate(model.steps)}
    plan = row.plan
    collectives = {} if plan is None else {c.step.id: c for c in plan.collectives}
    bounds = {} if plan is None else dict(zip(collectives, row.collective_bounds, strict=True))
    for index, s in enumerate(row.steps, start=1):
        step = model.steps[by_id[s.step]]
        if s.step in collectives:
            lines.extend(
                _collective_lines(compiled, row, index, collectives[s.step], bounds[s.step])
            )
            continue
        kernel = catalog.kernels[step.kernel]
        one = step_instance(
            compiled.model_engine,
            model,
            row.phase,
            by_id[s.step],
            row.device,
            s.precision,
            row.deployment,
        )
        s_unit = catalog.precisions[s.precision].unit
        add(f"   3.{index} {step.id}: {step.name}, kernel {kernel.id}")
        shape = ", ".join(
            _bound_value(name, f.text, s.shape[name]) for name, f in step.shape.items()
        )
        add(f"       shape: {shape}")
        add(f"       {_bound_value('count', step.count.text, s.count)}")
        w = catalog.precisions[s.precision].bytes
        add(f"       w = {width_text(w)} B per value ({s.precision})")
        for text in width_lines(catalog, kernel.widths, step.widths):
            add(f"       {text}")
        add(f"       {s_unit} per run = {kernel.flops.text} = {_exact(one.flops)}")
        for level, formula in kernel.bytes.items():
            add(
                f"       {level} bytes per run = {formula.text} = {_exact(one.bytes[level])} B;"
                f" intensity {format_si(one.intensity[level], s_unit + '/B', digits=6)}"
            )
        ceilings = "; ".join(
            f"{name} {format_si(rate, s_unit + '/s', digits=6)}"
            for name, rate in one.ceilings.items()
        )
        add(f"       ceilings: {ceilings}")
        for level, why in one.unmodelled:
            add(f"       {level}: no ceiling for this step: {why}")
        add(
            f"       lowest: {s.limited_by} → {_bound(s.limited_by)};"
            f" attainable {format_si(s.attainable, s_unit + '/s', digits=6)}"
        )
        add(
            f"       time = {format_si(one.time, 's', digits=6)} per run × {s.count:,}"
            f" = {format_si(s.time, 's', digits=6)};"
            f" {s_unit} = {_exact(s.flops)}"
        )
    add("")
    add("4. Sums over the steps")
    add(f"   {unit} = {_exact(row.flops)}  ({format_si(row.flops, unit)})")
    for level, b in row.bytes.items():
        add(f"   {level} bytes = {_exact(b)} B  ({format_si(b, 'B')})")
    add(
        f"   time = sum of the steps' times = {format_si(row.time, 's', digits=6)}  (a lower bound)"
    )
    if plan is not None and plan.collectives:
        add(
            "   time overlapped = max(the steps on memory rooflines, the collectives)"
            f" = {format_si(row.time_overlapped, 's', digits=6)}"
            "  (an engine that overlaps communication with compute)"
        )
    for name, t in row.time_by_limit.items():
        add(
            f"     limited by {name}: {format_si(t, 's', digits=6)}"
            f" ({format_percent(t / row.time)})"
        )
    add(
        f"   attainable = {unit} / time = {format_si(row.attainable, unit + '/s', digits=6)}"
        f" ({format_percent(row.attainable / device.peak(row.precision))} of the"
        f" {row.precision} peak)"
    )
    add("")
    add("5. Tokens per second")
    if row.fits is False:
        add(f"   {fit_text(row)}: no rate is given for a pass whose memory does not fit")
    else:
        add(
            f"   tokens / time = {_count(row.tokens)} / {format_si(row.time, 's', digits=6)}"
            f" = {format_number(row.tokens_per_second, 6)} tokens/s"
        )
    add("")
    add("6. Memory per chip")
    lines.extend(memory_lines(compiled, row))
    if row.measured_time is not None and row.efficiency is not None:
        add("")
        add("7. Measured")
        add(
            f"   measured time = {format_si(row.measured_time, 's', digits=6)}"
            f"    [source: {row.measured_source}]"
        )
        add(f"   efficiency = time / measured time = {format_percent(row.efficiency)}")
    return "\n".join(lines) + "\n"


def step_instance(
    engine: ModelEngine,
    model: Model,
    phase: str,
    index: int,
    device: str,
    precision: str,
    deployment: Deployment = ONE_CHIP,
) -> Result:
    """One run of a step as a kernel `Result` (for a derivation): its ceilings,
    what limits it and why the levels it does not see are no ceiling."""
    step = model.steps[index]
    kernel = engine.catalog.kernels[step.kernel]
    figures = engine.devices[device]
    one = engine.counts(model, phase, index, precision, deployment)
    given = figures.bandwidths
    ceilings = {lv: given[lv] for lv in LEVELS if lv in kernel.bytes and lv in given}
    unmodelled = tuple(
        (
            lv,
            f"the device gives no {lv} bandwidth"
            if lv in kernel.bytes
            else f"the kernel gives no {lv} traffic",
        )
        for lv in LEVELS
        if (lv in kernel.bytes) != (lv in given)
    )
    return Result(
        step.id,
        kernel.id,
        device,
        precision,
        precision == (step.precision or model.precision),
        one.flops,
        one.bytes,
        figures.peaks[precision],
        ceilings,
        unmodelled,
        None,
        engine.latencies.get(device),
    )


def _bytes(value: Fraction) -> str:
    return f"{_exact(value)} B ({format_si(value, 'B')})"


def memory_lines(compiled: Compiled, row: ModelResult) -> list[str]:
    """The memory ledger of a row, term by term, with the formulas it evaluates."""
    catalog = compiled.catalog
    model = catalog.models[row.model]
    ledger = model.memory
    fit = row.fit
    if ledger is None or fit is None:
        return ["   no memory ledger: the model spec has no `memory:` section; fits is unknown"]
    out: list[str] = []
    add = out.append
    w = catalog.precisions[row.precision].bytes
    bound = "".join(
        f", {n} = {width_text(catalog.precisions[p].bytes)} B ({p})"
        for n, p in ledger.widths.items()
    )
    # The ledger's formulas read the row's own degrees (each chip holds its share).
    values = row.deployment.variables()
    degrees = (
        "tp = pp = ep = dp = 1"
        if set(values.values()) == {1}
        else ", ".join(f"{k} = {v:,}" for k, v in values.items())
    )
    add(f"   w = {width_text(w)} B per value ({row.precision}){bound}; {degrees}")
    m = fit.ledger
    add(f"   weights = {ledger.weights.text} = {_bytes(m.weights)}")
    if ledger.kv is not None:
        add(f"   kv cache = {ledger.kv.text} = {_bytes(m.kv_cache)}")
    elif ledger.kv_per_token is not None:
        add(
            f"   kv cache = b*L*kv_per_token, kv_per_token = {ledger.kv_per_token.text}"
            f" = {_bytes(m.kv_cache)}"
        )
    else:
        add("   kv cache = 0 B (the ledger gives no cache)")
    if ledger.activations is None:
        add(
            "   activations = the largest step's inputs and outputs of one run"
            f" (the method note's rule) = {_bytes(m.activations)}"
        )
    elif ledger.activations.value is not None:
        add(
            f"   activations = b × {ledger.activations.text} per sequence = {_bytes(m.activations)}"
        )
    else:
        add(f"   activations = {ledger.activations.text} = {_bytes(m.activations)}")
    if m.capacity is None or m.reserve is None:
        add(f"   total = {_bytes(m.total)}; the device gives no DRAM capacity: fits is unknown")
        return out
    add(f"   reserve = {format_percent(ledger.reserve)} of the capacity = {_bytes(m.reserve)}")
    add(f"   total = {_bytes(m.total)}")
    verdict = "fits" if fit.fits else fit_text(row)
    add(f"   capacity = {_bytes(m.capacity)} (DRAM, per chip): {verdict}")
    add(f"   largest batch at this L: {_or_none(fit.max_batch, 'none: b = 1 does not fit')}")
    context = fit.max_context_note or "none: L = 1 does not fit"
    add(f"   longest context at this b: {_or_none(fit.max_context, context)}")
    return out


def _or_none(value: int | None, otherwise: str) -> str:
    return otherwise if value is None else f"{value:,}"
