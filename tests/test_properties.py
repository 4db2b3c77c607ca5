"""Properties of the roofline arithmetic that must hold for any device and kernel."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from rooflinec.engine.cells import Result
from rooflinec.engine.terms import COMPUTE

positive = st.fractions(min_value=Fraction(1, 10**6), max_value=Fraction(10**18)).filter(
    lambda f: f > 0
)
levels = st.sets(st.sampled_from(["dram", "l2", "l1"]), min_size=1)


@st.composite
def results(draw: st.DrawFn) -> Result:
    chosen = sorted(draw(levels))
    byte_counts = {level: draw(positive) for level in chosen}
    bandwidths = {level: draw(positive) for level in chosen}
    return Result(
        "c",
        "k",
        "d",
        "bf16",
        True,
        draw(positive),
        byte_counts,
        draw(positive),
        bandwidths,
        (),
        draw(st.none() | positive),
    )


@given(results())
def test_attainable_never_above_any_ceiling(r: Result) -> None:
    """Attainable is at most the peak and at most every level's line."""
    assert r.attainable <= r.peak
    for level, bw in r.bandwidths.items():
        assert r.attainable <= r.intensity[level] * bw


@given(results())
def test_attainable_is_one_of_the_ceilings(r: Result) -> None:
    """Attainable equals the ceiling named by limited_by."""
    assert r.ceilings[r.limited_by] == r.attainable


@given(results())
def test_time_times_attainable_is_operations(r: Result) -> None:
    """time × attainable = operations, exactly."""
    assert r.flops == r.time * r.attainable


@given(results())
def test_sweeps_are_monotone(r: Result) -> None:
    """More bandwidth or more peak never lowers the attainable rate."""
    for sweep in (r.bandwidth_sweep, r.peak_sweep):
        values = [sweep[k] for k in ("0.5", "1", "2", "4")]
        assert values == sorted(values)
        assert r.attainable == sweep["1"]


@given(results(), st.fractions(min_value=1, max_value=100))
def test_monotone_in_bandwidth_and_peak(r: Result, factor: Fraction) -> None:
    """Scaling bandwidth or peak up by any factor ≥ 1 never lowers attainable."""
    assert r.attainable_with(bandwidth=factor) >= r.attainable
    assert r.attainable_with(peak=factor) >= r.attainable


@given(results())
def test_share_of_peak_between_zero_and_one(r: Result) -> None:
    """Share of peak lies in (0, 1] and is 1 exactly when compute bound."""
    assert 0 < r.share_of_peak <= 1
    assert (r.share_of_peak == 1) == (r.limited_by == COMPUTE)


@given(positive, positive)
def test_sparsity_halves_exactly(printed: Fraction, share: Fraction) -> None:
    """A 2:4-sparse printed peak gives exactly half the dense rate."""
    from rooflinec.catalog import Figure, Peak
    from rooflinec.errors import Location

    figure = Figure(printed, "x", "s", None, None, (), Location("f"))
    assert printed / 2 == Peak("bf16", figure, "2:4", None).dense
    assert printed == Peak("bf16", figure, None, None).dense


@given(results())
def test_efficiency_is_measured_over_attainable(r: Result) -> None:
    """Efficiency is measured / attainable, or None without a measurement."""
    if r.measured is None:
        assert r.efficiency is None
    else:
        assert r.measured / r.attainable == r.efficiency
