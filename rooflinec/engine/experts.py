"""A model's routed experts under another routing: the same model with the `X` of its
routed steps bound anew (`Experts.binding`), as an example's `routing:` asks."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from rooflinec.catalog import ROUTED_KERNEL, ROUTED_SYMBOL, Model, model_names
from rooflinec.formulas import parse_formula


def rerouted(model: Model, routing: str) -> Model:
    """`model` with its experts routed by `routing` (the model itself when that is its
    own). The copy's id is `ID~ROUTING`, so that no row or plan the engine keeps for the
    model itself is taken for one of the copy's."""
    experts = model.experts
    if experts is None or experts.routing == routing:
        return model
    experts = replace(experts, routing=routing)
    names = model_names(model.parameters, model.phases)
    formula = parse_formula(experts.binding(model.tokens.text), names, reserved=(), engine=True)
    fractional = frozenset([ROUTED_SYMBOL]) if routing == "uniform" else frozenset()

    def at(phase: str) -> int | Fraction:
        value = formula.evaluate(model.variables(phase))
        return int(value) if value.denominator == 1 else value

    steps = tuple(
        replace(
            step,
            shape={**step.shape, ROUTED_SYMBOL: formula},
            shapes={
                phase: {**values, ROUTED_SYMBOL: at(phase)}  # type: ignore[dict-item]
                for phase, values in step.shapes.items()
            },
            fractional=fractional,
        )
        if step.kernel == ROUTED_KERNEL
        else step
        for step in model.steps
    )
    return replace(model, id=f"{model.id}~{routing}", experts=experts, steps=steps)
