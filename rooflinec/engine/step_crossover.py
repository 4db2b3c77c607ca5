"""The batch from which a model step turns compute bound: a crossover of a phase variable.

A step's kernel symbols are functions of the model's parameters and phase variables
(its shape formulas), so the case solver (`rooflinec.engine.solve`), which varies one kernel
symbol, cannot be asked directly. Instead the step's operation and byte counts are
written as formulas over the model's names: every kernel symbol in the kernel's
formulas is replaced by its shape formula, in parentheses, and the text goes through
the safe formula parser again (`parse_formula`, over the model's parameters and phase
variables, the width symbols reserved). The solver then varies the phase variable over
1..10^12 with every other name held at the phase's value, exactly as for a case: the
same polynomial root isolation or exact integer search, every boundary checked by
evaluating both sides.

`count` multiplies a step's operations and bytes alike, so it never changes what
limits a run and is left out. The latency floor is not part of the question (the
model page says so): the answer is about the roofline alone, where a case's crossover
(`solve`, `explain`, the kernel pages) has the launch floor's runs too.
"""

from __future__ import annotations

import tokenize
from dataclasses import dataclass
from functools import lru_cache

from rooflinec.catalog import (
    DEPLOYMENT_VARIABLES,
    ONE_CHIP,
    Catalog,
    Deployment,
    Kernel,
    Model,
    ModelStep,
)
from rooflinec.engine import WIDTH
from rooflinec.engine.cells import DeviceFigures
from rooflinec.engine.solve import Problem, Region, SolveError, crossover, solve_regions
from rooflinec.engine.solve_case import held_problem
from rooflinec.formulas import Formula, FormulaError, parse_formula
from rooflinec.formulas.substitute import substituted

__all__ = [
    "BATCH",
    "StepCrossover",
    "composed",
    "decode_phases",
    "step_crossover",
    "step_problem",
]

#: The phase variable varied: the batch.
BATCH = "b"
#: A phase is a decode phase when its name is this or starts with it and a dash.
DECODE = "decode"


def decode_phases(model: Model) -> list[str]:
    """The model's decode phases (`decode`, `decode-...`), in the spec's order."""
    return [p for p in model.phases if p == DECODE or p.startswith(DECODE + "-")]


@dataclass(frozen=True)
class StepCrossover:
    """One step of one phase on one device at one precision, the batch varied."""

    step: str
    phase: str
    device: str
    precision: str
    regions: tuple[Region, ...] | None  # None: not solved (`error` says why)
    error: str | None = None

    @property
    def crossover(self) -> int | None:
        """The least batch from which on the step stays compute bound; None: never
        (or not solved)."""
        return None if self.regions is None else crossover(self.regions)


def composed(
    kernel: Kernel, step: ModelStep, model: Model
) -> tuple[Formula, dict[str, Formula]] | None:
    """The step's operations and bytes per level as formulas over the model's names
    (parameters, phase variables) and the kernel's width symbols; None when they
    cannot be written so (a model name that is also a width symbol, a formula over
    the parser's limits)."""
    names = frozenset(model.parameters) | {v for phase in model.phases.values() for v in phase}
    names |= frozenset(DEPLOYMENT_VARIABLES)  # held at the deployment's (one chip's 1 on the pages)
    found = _composed(
        kernel.flops.text,
        tuple(kernel.bytes.items()),
        tuple((sym, f.text) for sym, f in step.shape.items()),
        names,
        frozenset({WIDTH, *kernel.widths}),
    )
    if found is None:
        return None
    flops, traffic = found
    return flops, dict(traffic)


@lru_cache(maxsize=4096)
def _composed(
    flops_text: str,
    traffic: tuple[tuple[str, Formula], ...],
    shape: tuple[tuple[str, str], ...],
    names: frozenset[str],
    reserved: frozenset[str],
) -> tuple[Formula, tuple[tuple[str, Formula], ...]] | None:
    """`composed`, once per kernel formulas, shape formulas and names."""
    if names & reserved:
        return None
    try:
        flops = parse_formula(substituted(flops_text, dict(shape)), names, reserved=reserved)
        levels = tuple(
            (lv, parse_formula(substituted(f.text, dict(shape)), names, reserved=reserved))
            for lv, f in traffic
        )
    except (FormulaError, tokenize.TokenError):
        return None
    return flops, levels


def step_problem(
    catalog: Catalog,
    model: Model,
    index: int,
    phase: str,
    figures: DeviceFigures,
    precision: str,
    symbol: str = BATCH,
    deployment: Deployment = ONE_CHIP,
) -> Problem | None:
    """The exact crossover question of step `index` with `symbol` varied and every
    other parameter and phase variable held at `phase`'s value (the deployment
    variables at `deployment`'s); None when the step's formulas cannot be composed or
    `symbol` is not a variable of the phase."""
    step = model.steps[index]
    kernel = catalog.kernels[step.kernel]
    variables = model.variables(phase, deployment)
    if symbol not in variables:
        return None
    found = composed(kernel, step, model)
    if found is None:
        return None
    flops, traffic = found
    return held_problem(
        catalog, kernel, step.widths, flops, traffic, variables, symbol, figures, precision
    )


def step_crossover(
    catalog: Catalog,
    model: Model,
    index: int,
    phase: str,
    figures: DeviceFigures,
    precision: str | None = None,
    deployment: Deployment = ONE_CHIP,
) -> StepCrossover:
    """The batch crossover of step `index` of `phase` on a device, at the step's own
    precision (else `precision`, else the model's), under `deployment` (one chip)."""
    step = model.steps[index]
    chosen = step.precision or precision or model.precision
    problem = step_problem(catalog, model, index, phase, figures, chosen, deployment=deployment)
    if problem is None:
        return StepCrossover(step.id, phase, figures.id, chosen, None, "not composable")
    try:
        regions = solve_regions(problem)
    except SolveError as exc:
        return StepCrossover(step.id, phase, figures.id, chosen, None, str(exc))
    return StepCrossover(step.id, phase, figures.id, chosen, regions)
