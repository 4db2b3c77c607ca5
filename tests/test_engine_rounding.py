"""The engine's rounding: every float it decides is the correctly rounded exact value."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rooflinec.engine.exact import exactly_float, fraction_float, integral, quotient_float
from rooflinec.engine.rounding import (
    nearest_product,
    product_quotient,
    quotient_tail,
    split,
    two_product,
)

# Integers as counts and rates are: up to 2^53 (exact floats), some with few bits.
_INTS = st.one_of(
    st.integers(1, 2**53),
    st.integers(1, 2**20).map(lambda n: n * 10**9),
    st.integers(1, 2**30).map(lambda n: n * 2**12),
)
# Floats that are not integers: dyadic fractions (exactly floats).
_DYADIC = st.builds(lambda n, k: Fraction(n, 2**k), st.integers(1, 2**40), st.integers(0, 60))
_VALUES = st.one_of(_INTS, _DYADIC)


def test_integral_is_an_int_only_when_integral() -> None:
    """`integral` gives an int for an integral Fraction and the Fraction otherwise."""
    assert (integral(Fraction(6, 3)), integral(Fraction(1, 2))) == (2, Fraction(1, 2))
    assert type(integral(Fraction(4))) is int


@given(st.fractions(min_value=Fraction(1, 10**30), max_value=10**30))
def test_fraction_float_is_python_float(value: Fraction) -> None:
    """`fraction_float` is Python's (correctly rounded) `float(Fraction)`."""
    assert float(value) == fraction_float(value)


@given(_VALUES, _VALUES)
def test_quotient_float(a: Fraction | int, b: Fraction | int) -> None:
    """`quotient_float(a, b)` is float(Fraction(a, b))."""
    assert float(Fraction(a) / Fraction(b)) == quotient_float(a, b)


def test_exactly_float() -> None:
    """Integers up to 2^53 and binary fractions are floats exactly; 2^53 + 1 and 1/3 not."""
    assert [True, True, False, False, True] == [
        exactly_float(v) for v in (2**53, Fraction(3, 8), 2**53 + 1, Fraction(1, 3), 2**60)
    ]


@given(_VALUES, _VALUES)
def test_two_product_is_exact(a: Fraction | int, b: Fraction | int) -> None:
    """p + e is the exact product of two floats."""
    p, e = two_product(np.array([float(a)]), np.array([float(b)]))
    assert Fraction(float(a)) * Fraction(float(b)) == Fraction(float(p[0])) + Fraction(float(e[0]))


@settings(max_examples=300)
@given(st.lists(st.tuples(_VALUES, _VALUES, _VALUES, _VALUES), min_size=1, max_size=40))
def test_product_quotient_decides_correctly(rows: list[tuple[Fraction | int, ...]]) -> None:
    """Every quotient of products the numpy path decides is float(exact Fraction)."""
    columns = [np.array([float(row[k]) for row in rows]) for k in range(4)]
    assert all(exactly_float(v) for row in rows for v in row)
    q, decided = product_quotient(*columns)
    for i, (a1, a2, b1, b2) in enumerate(rows):
        if decided[i]:
            exact = Fraction(a1) * Fraction(a2) / (Fraction(b1) * Fraction(b2))
            assert float(exact) == float(q[i])


@settings(max_examples=200)
@given(st.lists(st.tuples(_VALUES, _VALUES, _VALUES), min_size=1, max_size=40))
def test_product_quotient_without_b2(rows: list[tuple[Fraction | int, ...]]) -> None:
    """(a1 × a2) / b1, the form a ceiling takes (flops × bandwidth / bytes)."""
    columns = [np.array([float(row[k]) for row in rows]) for k in range(3)]
    q, decided = product_quotient(*columns)
    for i, (a1, a2, b1) in enumerate(rows):
        if decided[i]:
            assert float(Fraction(a1) * Fraction(a2) / Fraction(b1)) == float(q[i])


def test_product_quotient_decides_most_cells() -> None:
    """The numpy path leaves few cells to the exact one (midpoints are rare)."""
    rng = np.random.default_rng(7)
    a1 = rng.integers(1, 2**50, 10_000).astype(np.float64)
    a2 = rng.integers(1, 2**40, 10_000).astype(np.float64)
    b1 = rng.integers(1, 2**45, 10_000).astype(np.float64)
    _, decided = product_quotient(a1, a2, b1)
    assert decided.mean() > 0.99


def test_the_issue_cell() -> None:
    """67,133,440 B at 1.2288 TB/s: the time the issue found rounded twice."""
    exact = Fraction(67_133_440, 1_228_800_000_000)
    q, decided = product_quotient(np.array([67_133_440.0]), np.ones(1), np.array([1.2288e12]))
    assert (True, float(exact)) == (bool(decided[0]), float(q[0]))
    assert 5.463333333333333e-05 == float(exact)


def _halves(value: Fraction) -> tuple[float, float]:
    """A positive exact value as its correctly rounded float and that of its tail."""
    head = float(value)
    return head, float(value - Fraction(head))


def _product(a: Fraction, b: Fraction, b_tail: bool) -> tuple[float, bool]:
    """`nearest_product` of one exact a × b, from a's halves and b's (b alone without
    `b_tail`, so b must then be a float exactly)."""
    ah_, a_tail = _halves(a)
    bh_, b_rest = _halves(b)
    A, B = np.array([ah_]), np.array([bh_])
    ah, al = split(A)
    bh, bl = split(B)
    s, decided = nearest_product(
        A * B, ah, al, np.array([a_tail]), bh, bl, np.array([b_rest]) if b_tail else None
    )
    return float(s[0]), bool(decided[0])


_RATIOS = st.builds(
    lambda n, d: Fraction(n, d), st.integers(1, 2**70), st.integers(1, 2**70)
).filter(lambda v: Fraction(1, 2**150) < v < 2**150)


@settings(max_examples=400)
@given(_RATIOS, _RATIOS)
def test_nearest_product_decides_correctly(a: Fraction, b: Fraction) -> None:
    """Where `nearest_product` decides, its float is float(a × b) of the exact values."""
    s, decided = _product(a, b, b_tail=True)
    if decided:
        assert float(a * b) == s


@settings(max_examples=300)
@given(_RATIOS, _VALUES)
def test_nearest_product_with_a_float_factor(a: Fraction, b: Fraction | int) -> None:
    """A ceiling's form: an exact intensity times a bandwidth that is a float exactly."""
    s, decided = _product(a, Fraction(b), b_tail=False)
    if decided:
        assert float(a * b) == s


def test_nearest_product_leaves_midpoints_undecided() -> None:
    """A product exactly halfway between two floats is never decided, whichever way
    round-half-even would go; one a hair off the midpoint is decided, the right way."""
    one_ulp = Fraction(1, 2**52)
    for a in (1 + one_ulp / 2, 3 + one_ulp, 1 + 5 * one_ulp / 2):  # ulp(3) = 2 ulp(1)
        assert (float(a), False) == _product(a, Fraction(1), b_tail=True)
    hair = Fraction(1, 2**80)
    for a in (1 + one_ulp / 2 + hair, 1 + one_ulp / 2 - hair):
        assert (float(a), True) == _product(a, Fraction(1), b_tail=True)


def test_nearest_product_decides_most_cells() -> None:
    """Random intensities times random bandwidths: almost every product is decided."""
    rng = np.random.default_rng(11)
    flops = rng.integers(1, 2**50, 10_000).astype(np.float64)
    traffic = rng.integers(1, 2**45, 10_000).astype(np.float64)
    bandwidth = rng.integers(1, 2**40, 10_000).astype(np.float64)
    intensity = flops / traffic
    ah, al = split(intensity)
    bh, bl = split(bandwidth)
    tail = quotient_tail(flops, traffic, intensity)
    s, decided = nearest_product(intensity * bandwidth, ah, al, tail, bh, bl)
    assert decided.mean() > 0.999
    for i in range(0, 10_000, 97):
        exact = Fraction(int(flops[i])) * int(bandwidth[i]) / int(traffic[i])
        assert (True, float(exact)) == (bool(decided[i]), float(s[i]))


@given(_VALUES, _VALUES)
def test_quotient_tail_is_the_rounded_remainder(a: Fraction | int, b: Fraction | int) -> None:
    """a / b as a float and the correctly rounded float of what is left of it."""
    q = np.array([float(Fraction(a) / Fraction(b))])
    tail = quotient_tail(np.array([float(a)]), np.array([float(b)]), q)
    assert float(Fraction(a) / Fraction(b) - Fraction(float(q[0]))) == float(tail[0])
