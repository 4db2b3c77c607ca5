"""The largest batch on floats (`rooflinec.engine.fit_floats`): what it tells is the exact
answer (`frontier.largest_batch` without it), on every bundled model, deployment and
device capacity, for request shapes that put the binding run at the prefill and at the
last decode pass; and it tells nearly all of them."""

from __future__ import annotations

from fractions import Fraction

import pytest

from rooflinec.catalog import Deployment, MemoryLedger
from rooflinec.engine.compiler import Compiled
from rooflinec.engine.fit_floats import largest_batches
from rooflinec.engine.frontier import _largest_batch, deployments
from rooflinec.engine.memory import device_capacity, ledger_terms
from rooflinec.engine.requests import RequestShape
from rooflinec.pipeline import compiled_or_raise
from tests.specfactory import BUNDLED

SHAPES = (RequestShape(1024, 1024), RequestShape(128, 8000), RequestShape(32000, 10))


@pytest.fixture(scope="module")
def bundled() -> Compiled:
    return compiled_or_raise(BUNDLED)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_told_batches_are_the_exact_ones(bundled: Compiled, shape: RequestShape) -> None:
    """Every (deployment, capacity) the float path tells has the exact path's largest
    batch (None included: batch 1 does not fit), and it tells at least 99 % of them."""
    catalog, engine = bundled.catalog, bundled.model_engine
    capacities = sorted({c for c in map(device_capacity, catalog.devices.values()) if c})
    asked = told_count = 0
    for model in catalog.models.values():
        ds = list(deployments(model, 64, prune=True))
        told = largest_batches(catalog, model, model.precision, ds, shape, capacities)
        asked += len(ds) * len(capacities)
        told_count += len(told)
        for (d, capacity), top in told.items():
            exact = _largest_batch(engine, model, model.precision, d, shape, capacity, None)
            assert (model.id, d, capacity, top) == (model.id, d, capacity, exact)
    assert told_count >= asked * 99 // 100


def test_a_quotient_on_a_whole_number_is_left_to_the_exact_path(bundled: Compiled) -> None:
    """A capacity at which a deployment's batch fits with not a byte to spare is not
    told on floats (the quotient is whole: floats cannot say which side it falls on),
    and one a byte larger or smaller is told as the exact path tells it."""
    catalog, engine = bundled.catalog, bundled.model_engine
    model = catalog.models["llama-2-7b"]
    ledger = model.memory
    assert isinstance(ledger, MemoryLedger)
    shape = RequestShape(1024, 1024)
    d = Deployment(tp=2, chips=2)
    # The capacity at which exactly 100 sequences fit at the last decode pass
    last = {"b": 1, "s": 1, "L": shape.input + shape.output - 1}
    terms = ledger_terms(catalog, model, ledger, last, model.precision, d)
    assert terms is not None
    exact_fit = (terms.weights + 100 * terms.per_batch(last["L"])) / (1 - ledger.reserve)
    capacity = Fraction(exact_fit)
    told = largest_batches(catalog, model, model.precision, [d], shape, [capacity])
    assert (d, capacity) not in told
    for nudged in (capacity - 1, capacity + 1):
        told = largest_batches(catalog, model, model.precision, [d], shape, [nudged])
        exact = _largest_batch(engine, model, model.precision, d, shape, nudged, None)
        assert told.get((d, nudged), "untold") in (exact, "untold")
