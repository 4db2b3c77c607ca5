"""The engine's rounding: every float it decides is the correctly rounded exact value."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rooflinec.engine.exact import exactly_float, fraction_float, integral, quotient_float
from rooflinec.engine.rounding import product_quotient, two_product

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
