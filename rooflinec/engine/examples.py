"""Run reference examples: catalog inputs in, expected outputs compared with tolerance.

The same runner serves `rooflinec check`, the pytest plugin (one item per example)
and the site (expected beside computed on the method page).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

from rooflinec.catalog import ONE_CHIP, Example, ExampleFigures, Expectation, LedgerTerm
from rooflinec.engine.cells import DeviceFigures, Result
from rooflinec.engine.compiler import Compiled
from rooflinec.engine.experts import rerouted
from rooflinec.engine.memory import MemoryFit, device_capacity, evaluate_fit
from rooflinec.engine.models import Link, ModelResult
from rooflinec.engine.solve import crossover, solve_regions
from rooflinec.engine.solve_case import case_problem
from rooflinec.engine.terms import COMPUTE
from rooflinec.errors import Diagnostic
from rooflinec.formatting import format_percent, format_si


@dataclass(frozen=True)
class Outcome:
    """One expectation checked: the computed value, and whether it is within tolerance."""

    expectation: Expectation
    actual: Fraction | int | str | None
    passed: bool
    problem: str | None = None


def _results(compiled: Compiled, example: Example) -> list[Result]:
    out = compiled.select(devices=[example.device], precisions=[example.precision])
    if example.cases:
        wanted = set(example.cases)
        out = [r for r in out if r.case in wanted]
    return out


def model_row(compiled: Compiled, example: Example) -> ModelResult | None:
    """The model row an example is about: on a catalog device (with its measured time), or
    on the example's own figures; None when the model, phase or a peak is missing."""
    return model_row_or_problem(compiled, example)[0]


def _links(figures: ExampleFigures) -> dict[str, Link]:
    """An example's interconnect figures as the collectives see them, taken as sustained."""
    return {
        role: Link(role, f.per_direction, f.domain, f.topology, f.in_network, f.latency)
        for role, f in figures.interconnect.items()
    }


def model_row_or_problem(
    compiled: Compiled, example: Example
) -> tuple[ModelResult | None, str | None]:
    """The model row an example is about at its deployment (one chip without one), or
    why there is none: a deployment the model's shapes do not divide, or a fabric that
    lacks a level its collectives cross."""
    model = compiled.catalog.models.get(example.model or "")
    if model is None or example.phase not in model.phases:
        return None, None
    own = model
    if example.routing is not None:
        model = rerouted(model, example.routing)
    engine = compiled.model_engine
    deployment = example.deployment or ONE_CHIP
    problem = engine.deployment_problem(model, deployment)
    if problem is not None:
        return None, f"not a deployment of {problem}"
    if example.figures is None:
        problem = engine.fabric_problem(model, example.device, deployment)
        if problem is not None:
            return None, problem
        if model is own:
            row = compiled.model_result(
                model.id, example.phase, example.device, example.precision, deployment
            )
            return row, None
        device = example.device
        row = engine.evaluate(
            model,
            example.phase,
            compiled.devices[device],
            example.precision,
            engine.latencies.get(device),
            deployment=deployment,
        )
        return row, None
    f = example.figures
    figures = _figures(compiled, example)
    assert figures is not None  # the example's own
    if any(s.precision not in (None, example.precision) for s in model.steps):
        return None, None  # the figures give one peak, at the example's precision
    links = _links(f)
    problem = engine.fabric_problem(model, f.name, deployment, links)
    if problem is not None:
        return None, problem.replace(f"device '{f.name}' gives", "the example's figures give")
    row = engine.evaluate(
        model,
        example.phase,
        figures,
        example.precision,
        f.latency,
        deployment=deployment,
        links=links,
    )
    return row, None


def memory_fit(compiled: Compiled, example: Example) -> MemoryFit | None:
    """The memory ledger an example is about: the model's, with the example's settings
    (capacity, activations per sequence, reserve, run variables) in place of its own."""
    model = compiled.catalog.models.get(example.model or "")
    if model is None or model.memory is None or example.phase not in model.phases:
        return None
    settings = example.memory
    ledger = model.memory
    capacity = None
    if example.device in compiled.catalog.devices:
        capacity = device_capacity(compiled.catalog.devices[example.device])
    run = dict(model.phases[example.phase])
    if settings is not None:
        if settings.activations is not None:
            text = settings.activations_text or ""
            term = LedgerTerm(text, None, settings.activations, example.location)
            ledger = replace(ledger, activations=term)
        if settings.reserve is not None:
            ledger = replace(ledger, reserve=settings.reserve)
        capacity = settings.capacity if settings.capacity is not None else capacity
        run.update(settings.variables)
    return evaluate_fit(
        compiled.catalog,
        model,
        example.phase,
        example.precision,
        capacity,
        example.deployment or ONE_CHIP,
        run=run,
        ledger=ledger,
    )


def _memory_actual(fit: MemoryFit | None, e: Expectation) -> Fraction | int | None:
    if fit is None:
        return None
    values: dict[str, Fraction | int | None] = {
        "weights": fit.ledger.weights,
        "kv_cache": fit.ledger.kv_cache,
        "max_batch": fit.max_batch,
        "max_context": fit.max_context,
    }
    return values.get(e.output)


MEMORY_OUTPUTS = ("weights", "kv_cache", "max_batch", "max_context")


def _model_actual(row: ModelResult, e: Expectation) -> Fraction | int | str | None:
    level = e.level or "dram"
    if e.step is not None:
        s = row.step(e.step)
        if s is None:
            return None
        values: dict[str, Fraction | str | None] = {
            "flops": s.flops,
            "bytes": s.bytes.get(level),
            "intensity": s.intensity.get(level),
            "attainable": s.attainable,
            "limited_by": s.limited_by,
            "time": s.time,
        }
        return values.get(e.output)
    totals: dict[str, Fraction | str | None] = {
        "flops": row.flops,
        "bytes": row.bytes.get(level),
        "attainable": row.attainable,
        "time": row.time,
        "efficiency": row.efficiency,
        "limited_by": row.limited_by,
        "time_by_limit": row.time_by_limit.get(level),
        "collective_time": sum((s.time for s in row.collective_steps()), Fraction(0))
        if row.plan is not None
        else Fraction(0),
        "time_overlapped": row.time_overlapped,
    }
    return totals.get(e.output)


def _figures(compiled: Compiled, example: Example) -> DeviceFigures | None:
    """The ceilings the example runs on: its device's, or its own (sustained, dense)."""
    if example.figures is None:
        return compiled.devices.get(example.device)
    f = example.figures
    return DeviceFigures(example.id, f.name, {example.precision: f.peak}, f.bandwidths)


def _crossover(compiled: Compiled, example: Example, e: Expectation) -> int | str | None:
    """The least value of `e.symbol` from which `e.case` stays compute bound on the
    example's ceilings ("none": memory bound up to 10^12), the case's other symbols held
    at its shape, exactly (`solve`)."""
    figures = _figures(compiled, example)
    catalog = compiled.catalog
    case = catalog.cases.get(e.case or "")
    if figures is None or case is None or e.symbol is None:
        return None
    if example.precision not in figures.peaks:
        return None
    device = catalog.devices.get(example.device or "")
    problem = case_problem(catalog, case, device, case.shape, e.symbol, figures, example.precision)
    found = crossover(solve_regions(problem))
    return "none" if found is None else found


def _actual(
    compiled: Compiled, example: Example, e: Expectation, results: list[Result]
) -> Fraction | int | str | None:
    if e.output == "crossover":
        return _crossover(compiled, example, e)
    figures = compiled.devices.get(example.device)
    if figures is None:
        return None
    level = e.level or "dram"
    if e.output == "peak":
        return figures.peaks.get(example.precision)
    if e.output == "bandwidth":
        return figures.bandwidths.get(level)
    if e.output == "ridge":
        return figures.ridges.get(example.precision, {}).get(level)
    if e.output == "memory_bound_count":
        return sum(1 for r in results if r.limited_by != COMPUTE)
    result = next((r for r in results if r.case == e.case), None)
    if result is None:
        return None
    if e.output == "flops":
        return result.flops
    if e.output == "bytes":
        return result.bytes.get(level)
    if e.output == "intensity":
        return result.intensity.get(level)
    if e.output == "attainable":
        return result.attainable
    if e.output == "limited_by":
        return result.limited_by
    if e.output == "share_of_peak":
        return result.share_of_peak
    if e.output == "time":
        return result.time
    if e.output == "efficiency":
        return result.efficiency
    return None


def run_example(compiled: Compiled, example: Example) -> list[Outcome]:
    row, problem = (
        model_row_or_problem(compiled, example) if example.model is not None else (None, None)
    )
    results = _results(compiled, example) if example.model is None else []
    wants_memory = any(e.output in MEMORY_OUTPUTS for e in example.expect)
    fit = memory_fit(compiled, example) if example.model is not None and wants_memory else None
    outcomes = []
    for e in example.expect:
        if e.output in MEMORY_OUTPUTS:
            actual: Fraction | int | str | None = _memory_actual(fit, e)
        elif example.model is not None:
            actual = None if row is None else _model_actual(row, e)
        else:
            actual = _actual(compiled, example, e, results)
        if actual is None:
            why = problem or "no such output in the compiled results"
            outcomes.append(Outcome(e, None, False, why))
            continue
        if isinstance(e.value, str) or isinstance(actual, str):
            outcomes.append(Outcome(e, actual, actual == e.value))
            continue
        error = abs(Fraction(actual) - e.value)
        passed = error <= e.tolerance * abs(Fraction(e.value))
        outcomes.append(Outcome(e, actual, passed))
    return outcomes


_BASE_UNITS = {
    "peak": "FLOP/s",
    "attainable": "FLOP/s",
    "bandwidth": "B/s",
    "ridge": "FLOP/B",
    "intensity": "FLOP/B",
    "flops": "FLOP",
    "bytes": "B",
    "weights": "B",
    "kv_cache": "B",
    "time": "s",
    "time_by_limit": "s",
    "collective_time": "s",
    "time_overlapped": "s",
}


def _shown(output: str, value: Fraction | int | str | None) -> str:
    if value is None or isinstance(value, str):
        return str(value)
    if output in ("share_of_peak", "efficiency"):
        return format_percent(value, digits=6)
    if output in _BASE_UNITS:
        return format_si(value, _BASE_UNITS[output], digits=7)
    return str(value)


def describe_failure(outcome: Outcome) -> str:
    e = outcome.expectation
    target = (
        f"{e.output}"
        + (f" of case '{e.case}'" if e.case else "")
        + (f" of step '{e.step}'" if e.step else "")
        + (f" at {e.level}" if e.level else "")
    )
    if outcome.problem:
        return f"reference example: {target}: {outcome.problem}"
    tolerance = "" if e.tolerance == 0 else f" (within {format_percent(e.tolerance, digits=2)})"
    return (
        f"reference example: {target} expected {e.text}{tolerance},"
        f" computed {_shown(e.output, outcome.actual)}"
    )


def check_examples(compiled: Compiled) -> list[Diagnostic]:
    """Every failing expectation of every example in the catalog, as diagnostics."""
    out = []
    for example in compiled.catalog.examples:
        for outcome in run_example(compiled, example):
            if not outcome.passed:
                out.append(
                    Diagnostic(
                        outcome.expectation.location,
                        f"{example.id}: " + describe_failure(outcome),
                        code="examples",
                    )
                )
    return out
