"""A model's routed experts under another routing: the same model with the `X` of its
routed steps (`Experts.binding`) and the `ranks` its shapes read (`Experts.ranks`) bound
anew, as an example's `routing:` asks."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from rooflinec.catalog import (
    ROUTED_KERNEL,
    ROUTED_RANKS,
    ROUTED_SYMBOL,
    Model,
    ModelStep,
    model_names,
)
from rooflinec.formulas import Formula, parse_formula
from rooflinec.formulas.substitute import substituted


def rerouted(model: Model, routing: str) -> Model:
    """`model` with its experts routed by `routing` (the model itself when that is its
    own). The copy's id is `ID~ROUTING`, so that no row or plan the engine keeps for the
    model itself is taken for one of the copy's."""
    experts = model.experts
    if experts is None or experts.routing == routing:
        return model
    experts = replace(experts, routing=routing)
    names = model_names(model.parameters, model.phases)
    uniform = routing == "uniform"

    # Several steps bind the same text (the expert projections' X, dispatch and combine's
    # m): each parsed, and evaluated per phase, once.
    parsed: dict[str, Formula] = {}
    values: dict[tuple[str, str], int | Fraction] = {}

    def engine_formula(text: str) -> Formula:
        hit = parsed.get(text)
        if hit is None:
            hit = parsed[text] = parse_formula(text, names, reserved=(), engine=True)
        return hit

    def bound(step: ModelStep) -> dict[str, Formula]:
        out: dict[str, Formula] = {}
        if step.kernel == ROUTED_KERNEL:
            out[ROUTED_SYMBOL] = engine_formula(experts.binding(model.tokens.text))
        for symbol, text in step.written.items():
            out[symbol] = engine_formula(substituted(text, {ROUTED_RANKS: experts.ranks}))
        return out

    def value(formula: Formula, phase: str) -> int | Fraction:
        key = (formula.text, phase)
        if key not in values:
            found = formula.evaluate(model.variables(phase))
            values[key] = int(found) if found.denominator == 1 else found
        return values[key]

    steps = []
    for step in model.steps:
        anew = bound(step)
        if not anew:
            steps.append(step)
            continue
        steps.append(
            replace(
                step,
                shape={**step.shape, **anew},
                shapes={
                    phase: {**values, **{s: value(f, phase) for s, f in anew.items()}}  # type: ignore[misc]
                    for phase, values in step.shapes.items()
                },
                fractional=frozenset(anew) if uniform else frozenset(),
            )
        )
    return replace(model, id=f"{model.id}~{routing}", experts=experts, steps=tuple(steps))
