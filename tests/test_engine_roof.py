"""The roof's one rule: the lowest ceiling wins; ties go to compute, then the levels in
order; the latency floor only when strictly slower."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from rooflinec.engine import Bound, Roof
from rooflinec.engine.terms import COMPUTE, LATENCY, LIMITED_BY

_POSITIVE = st.fractions(min_value=Fraction(1, 1000), max_value=1000)


def test_a_tie_goes_to_compute_then_the_levels_in_order() -> None:
    """At the ridge compute wins; two equal levels go to the earlier one."""
    roof = Roof(Fraction(10), {"dram": Fraction(5), "l2": Fraction(5)})
    # 20 operations, 10 bytes at each level: every ceiling is 10 OP/s.
    counts = {"dram": Fraction(10), "l2": Fraction(10)}
    assert Bound(COMPUTE, Fraction(10), Fraction(2)) == roof.bound(Fraction(20), counts)
    lower_peak = Roof(Fraction(20), roof.bandwidths)
    assert "dram" == lower_peak.bound(Fraction(20), counts).limit


def test_the_floor_holds_only_when_strictly_slower() -> None:
    """A floor equal to the roofline's time leaves the roofline's limit."""
    roof = Roof.of(Fraction(10), {}, Fraction(1))
    assert COMPUTE == roof.bound(Fraction(10), {}).limit  # 1 s either way
    assert Bound(LATENCY, Fraction(5), Fraction(2)) == roof.bound(Fraction(10), {}, launches=2)


@given(
    ops=_POSITIVE,
    peak=_POSITIVE,
    bw=_POSITIVE,
    dram=_POSITIVE,
    l2=_POSITIVE,
    latency=st.none() | _POSITIVE,
)
def test_bound_is_the_lowest_rate_in_limited_by_order(
    ops: Fraction,
    peak: Fraction,
    bw: Fraction,
    dram: Fraction,
    l2: Fraction,
    latency: Fraction | None,
) -> None:
    """The bound's rate is the lowest ceiling (or the floor), its limit the first in
    LIMITED_BY order at that rate, and rate × time is the operations."""
    roof = Roof.of(peak, {"dram": bw, "l2": bw * 2}, latency)
    counts = {"dram": dram, "l2": l2}
    bound = roof.bound(ops, counts)
    ceilings = roof.ceilings(ops, counts)
    lowest = min(ceilings.values())
    if latency is not None and ops / latency < lowest:
        expected = (LATENCY, ops / latency)
    else:
        expected = (next(n for n in LIMITED_BY if ceilings.get(n) == lowest), lowest)
    assert expected == (bound.limit, bound.rate)
    assert ops == bound.rate * bound.time


def test_memory_is_the_lowest_level_earlier_on_a_tie() -> None:
    """`Roof.memory` names the lowest memory ceiling, ties to the earlier level."""
    roof = Roof(Fraction(10), {"dram": Fraction(4), "l2": Fraction(8)})
    counts = {"dram": Fraction(1), "l2": Fraction(2)}
    assert ("dram", Fraction(4)) == roof.memory(Fraction(1), counts)
    assert Roof(Fraction(1)).memory(Fraction(1), {}) is None
