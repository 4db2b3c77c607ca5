"""One exact value at the output edge: "an int when integral", and its correctly rounded
float64. Plain Python, no numpy: `check` and the loaders use it and load no numpy (the
columns' rounding of whole numpy arrays is `rooflinec.engine.rounding`)."""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction

__all__ = ["exact_sum", "exactly_float", "fraction_float", "integral", "quotient_float"]

_EXACT_INT = 2**53


def integral(value: Fraction | int) -> int | Fraction:
    """`value` as an int when it is integral, else the Fraction itself."""
    if isinstance(value, int):
        return value
    return value.numerator if value.denominator == 1 else value


def fraction_float(value: Fraction | int) -> float:
    """`float(value)`, correctly rounded, without the `numbers.Rational` detour."""
    n, d = value.numerator, value.denominator  # an int has both too
    return float(n) if d == 1 else n / d


def quotient_float(a: Fraction | int, b: Fraction | int) -> float:
    """`float(a / b)`, correctly rounded (int / int is), without building the Fraction."""
    return (a.numerator * b.denominator) / (a.denominator * b.numerator)


def exactly_float(value: Fraction | int) -> bool:
    """Whether `value` is a float64 exactly (its correctly rounded float is itself)."""
    n, d = value.numerator, value.denominator
    if d == 1 and -_EXACT_INT <= n <= _EXACT_INT:
        return True  # the common case, decided without a float
    if d & (d - 1):
        return False  # a denominator not a power of two is no binary fraction
    f = n / d
    return abs(f) != float("inf") and Fraction(f) == value


def exact_sum(values: Iterable[Fraction | int]) -> Fraction:
    """The exact sum, the numerators of equal denominators added as integers first.

    `sum(..., Fraction(0))` reduces after every term: one gcd of the running total's
    digits each. Under uniform routing a pass's counts share denominators of thousands
    of digits (powers of (E - k)/E), where those gcds were most of a plan's time; here
    each distinct denominator costs one reduction."""
    by_denominator: dict[int, int] = {}
    for v in values:
        d = v.denominator
        by_denominator[d] = by_denominator.get(d, 0) + v.numerator
    total = Fraction(0)
    for d, n in by_denominator.items():
        total += Fraction(n, d)
    return total
