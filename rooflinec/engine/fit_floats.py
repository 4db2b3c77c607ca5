"""The largest batch that fits, for many deployments and capacities at once, on floats.

The frontier asks, for every deployment of a model's grid on every device, the largest
batch whose memory ledger fits the device's capacity at the prefill and at the last
decode pass (`frontier.largest_batch`). Exactly, that takes the ledger's terms per
deployment (`memory.ledger_terms`: the weights, the kv cache per token and the method's
activation rule, the largest step's inputs and outputs), hundreds of Fraction
evaluations per deployment for a model with many deployments. Here the same terms are
evaluated in float64 over a column per deployment, and each capacity's largest batch is
the floor of a quotient.

**What is decided here**: a ledger of linear terms (no `kv` formula, a `kv_per_token`
that names neither b nor L, activations by the rule or as a quantity per sequence) whose
shapes are whole and positive, whose values are finite, and whose quotient lies clearly
away from a whole number: by more than `REL` of it, and more than what cancellation in
the room left (the capacity less the reserve and the weights) could move it. Everything
else is left to the exact path, which names what it finds.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from rooflinec.catalog import Deployment, Model, RequestShape
from rooflinec.engine.memory import MAX_SEARCH
from rooflinec.engine.request_floats import REL
from rooflinec.formulas import WIDTH
from rooflinec.formulas.vectorised import evaluate_float

if TYPE_CHECKING:
    from rooflinec.catalog import Catalog
    from rooflinec.formulas import Formula
    from rooflinec.formulas.vectorised import Bools, Floats

__all__ = ["largest_batches"]

# How far the room's float may be from its exact value, relative to the capacity and
# the weights it is the difference of: a few roundings of each, generously.
_ROOM_ERROR = 2.0**-40


def largest_batches(
    catalog: Catalog,
    model: Model,
    precision: str,
    deployments: Sequence[Deployment],
    shape: RequestShape,
    capacities: Sequence[Fraction],
) -> dict[tuple[Deployment, Fraction], int | None]:
    """`frontier.largest_batch` of each deployment on each capacity (B per chip) where
    floats tell it (None: batch 1 does not fit); the pairs not in the answer are for the
    exact path (see the module)."""
    ledger = model.memory
    if ledger is None or not deployments or not capacities:
        return {}
    drafted = shape.drafted  # a verify pass's drafted tokens, with their keys
    last = shape.input + shape.output - 1 + drafted
    found: list[tuple[Floats, Floats] | None] = []
    for run in (
        {"b": 1, "s": shape.input, "L": shape.input},
        {"b": 1, "s": drafted + 1, "L": last},
    ):
        found.append(_terms(catalog, model, precision, deployments, run))
    if any(terms is None for terms in found):
        return {}
    reserve = float(ledger.reserve)
    out: dict[tuple[Deployment, Fraction], int | None] = {}
    for capacity in capacities:
        cap = float(capacity)
        tops: list[tuple[Floats, Bools]] = []  # per run: the batch and where it is told
        for terms in found:
            assert terms is not None
            weights, per = terms
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                room = cap * (1 - reserve) - weights
                q = room / per
                slack = q * REL + (cap + np.abs(weights)) / per * _ROOM_ERROR
                whole = np.floor(q)
                clear = (
                    np.isfinite(q)
                    & (per > 0)
                    & (np.minimum(q - whole, whole + 1 - q) > slack)
                    & (q < MAX_SEARCH)
                )
            # Below 1: batch 1 does not fit (0 here stands for None)
            tops.append((np.where(whole < 1, 0.0, whole), clear))
        told = tops[0][1] & tops[1][1]
        top = np.minimum(tops[0][0], tops[1][0])
        for d, ok, n in zip(deployments, told.tolist(), top.tolist(), strict=True):
            if ok:
                out[d, capacity] = int(n) if n >= 1 else None
    return out


def _terms(
    catalog: Catalog,
    model: Model,
    precision: str,
    deployments: Sequence[Deployment],
    run: dict[str, int],
) -> tuple[Floats, Floats] | None:
    """The ledger's weights and the bytes one more sequence adds at the run's L (`kv`
    per token × L, or the slope in b of the spec's `kv`, and the activations per
    sequence), per deployment, on floats; nan where the exact path must tell. None: the
    ledger is not of terms linear in b."""
    ledger = model.memory
    assert ledger is not None
    kv = ledger.kv
    if kv is not None and kv.formula is not None and (kv.formula.degree({"b": 1}) or 0) > 1:
        return None  # a cache that is not a line in the batch (whatever L does: a window)
    kvpt = ledger.kv_per_token
    if kvpt is not None and kvpt.symbols & {"b", "L"}:
        return None
    act = ledger.activations
    if act is not None and act.value is None:
        return None
    size = len(deployments)
    scope: dict[str, float | Floats] = {k: float(v) for k, v in model.parameters.items()}
    scope.update((k, float(v)) for k, v in run.items())
    for name in ("tp", "pp", "ep", "dp"):
        scope[name] = np.array([d.variables()[name] for d in deployments], dtype=np.float64)
    scope[WIDTH] = float(catalog.precisions[precision].bytes)
    for name, pid in ledger.widths.items():
        scope[name] = float(catalog.precisions[pid].bytes)
    weights = _term(ledger.weights.value, ledger.weights.formula, scope, size)
    per_token = np.zeros(size) if kvpt is None else _term(kvpt.value, kvpt.formula, scope, size)
    if kv is not None:
        # The spec's own cache over b and L (a window's min(L, W)): a line in b at the
        # run's L, its slope one more sequence's bytes and its value at b = 0 held.
        if kvpt is not None:
            scope["kv_per_token"] = per_token
        held = _term(kv.value, kv.formula, {**scope, "b": 0.0}, size)
        one = _term(kv.value, kv.formula, {**scope, "b": 1.0}, size)
        weights = weights + held
        per_token = (one - held) / run["L"]
    if act is not None:
        assert act.value is not None
        per_sequence = np.full(size, float(act.value))
    else:
        per_sequence = _rule(catalog, model, precision, {**scope, "L": float(run["s"])}, size)
    per: Floats = run["L"] * per_token + per_sequence / run["b"]
    bad = ~(np.isfinite(weights) & np.isfinite(per))
    return np.where(bad, np.nan, weights), np.where(bad, np.nan, per)


def _term(
    value: Fraction | None, formula: Formula | None, scope: dict[str, float | Floats], size: int
) -> Floats:
    """A ledger term per deployment: its quantity, or its formula over `scope`."""
    if value is not None:
        return np.full(size, float(value))
    assert formula is not None
    return np.broadcast_to(np.asarray(evaluate_float(formula, scope), np.float64), (size,))


def _rule(
    catalog: Catalog,
    model: Model,
    precision: str,
    scope: dict[str, float | Floats],
    size: int,
) -> Floats:
    """`memory.activation_rule` at `scope` per deployment: the largest step's DRAM bytes
    at its shapes, its width bound and its kernel's other widths at 0; nan where a shape
    is not a whole number of at least 1 (the exact path finds the rule at the run's own L,
    or no deployment)."""
    best = np.zeros(size)
    bad = np.zeros(size, dtype=np.bool_)
    for step in model.steps:
        kernel = catalog.kernels[step.kernel]
        formula = kernel.bytes.get("dram")
        if formula is None:
            continue
        values: dict[str, float | Floats] = {}
        for name, f in step.shape.items():
            v = np.broadcast_to(np.asarray(evaluate_float(f, scope), np.float64), (size,))
            bad |= ~(np.isfinite(v) & (v == np.floor(v)) & (v >= 1) & (v < 2.0**53))
            values[name] = v
        width = catalog.precisions[step.precision or precision].bytes
        values[WIDTH] = float(width)
        values.update(dict.fromkeys(kernel.widths, 0.0))
        found = np.asarray(evaluate_float(formula, values), np.float64)
        bad |= ~np.isfinite(found) | (np.abs(found) >= 2.0**53)
        best = np.maximum(best, found)
    return np.where(bad, np.nan, best)
