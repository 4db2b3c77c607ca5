"""Exact polynomial conditions of a crossover: coefficients and the integers near their roots.

A formula whose varied symbol appears only in sums, products, integer powers and
numerators (no `min`, `max`, `ceil`, `floor` around it, no division by it) is a
polynomial in that symbol once the others are bound. Its coefficients come from exact
evaluation at `degree + 1` integers and exact (Fraction) interpolation, so no sympy
expression is built or substituted per case; the real roots of each condition
polynomial are isolated exactly (a linear one directly, higher degrees with sympy's
real-root isolation on rational coefficients), never with floats.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

from rooflinec.formulas import Formula
from rooflinec.formulas.tree import _Call, _Neg, _Node, _Num, _Pow, _Prod, _Sum, _Sym

Poly = tuple[Fraction, ...]  # coefficients, constant term first, no trailing zeros


def degree(node: _Node, symbol: str) -> int | None:
    """The degree bound of `node` in `symbol`, or None when it is not a polynomial in it."""
    if isinstance(node, _Num):
        return 0
    if isinstance(node, _Sym):
        return 1 if node.name == symbol else 0
    if isinstance(node, _Neg):
        return degree(node.operand, symbol)
    if isinstance(node, _Pow):
        inner = degree(node.base, symbol)
        return None if inner is None else inner * node.exponent
    if isinstance(node, _Call):
        parts = [degree(arg, symbol) for arg in node.args]
        return 0 if all(p == 0 for p in parts) else None
    if isinstance(node, _Sum):
        total = 0
        for _, term in node.terms:
            d = degree(term, symbol)
            if d is None:
                return None
            total = max(total, d)
        return total
    assert isinstance(node, _Prod)
    total = 0
    for factor in node.factors:
        d = degree(factor.node, symbol)
        if d is None or (factor.divide and d > 0):
            return None
        total += d
    return total


def coefficients(
    formula: Formula, values: Mapping[str, int | Fraction], symbol: str
) -> Poly | None:
    """The formula as a polynomial in `symbol` with the other `values` bound, or None.

    Interpolates exact values at 1..degree+1 (Newton's divided differences), which is
    exact because the degree bound holds.
    """
    d = degree(formula._tree, symbol)
    if d is None:
        return None
    xs = list(range(1, d + 2))
    ys = [formula.evaluate({**values, symbol: x}) for x in xs]
    # Divided differences in place: ys[k] becomes f[x0..xk].
    for level in range(1, len(xs)):
        for k in range(len(xs) - 1, level - 1, -1):
            ys[k] = (ys[k] - ys[k - 1]) / (xs[k] - xs[k - level])
    # Expand the Newton form into monomial coefficients (Horner from the top).
    coeffs: list[Fraction] = [ys[-1]]
    for k in range(len(xs) - 2, -1, -1):
        # coeffs * (x - xs[k]) + ys[k]
        shifted = [Fraction(0), *coeffs]
        for i, c in enumerate(coeffs):
            shifted[i] -= c * xs[k]
        shifted[0] += ys[k]
        coeffs = shifted
    return trim(coeffs)


def trim(coeffs: Sequence[Fraction]) -> Poly:
    out = list(coeffs)
    while out and out[-1] == 0:
        out.pop()
    return tuple(out)


def combine(a: Fraction, p: Poly, b: Fraction, q: Poly) -> Poly:
    """a·p + b·q."""
    n = max(len(p), len(q))
    return trim(
        [a * (p[i] if i < len(p) else 0) + b * (q[i] if i < len(q) else 0) for i in range(n)]
    )


def critical_integers(poly: Poly, lo: int, hi: int) -> set[int]:
    """Integers in [lo, hi] beside every real root: both neighbours of each root.

    Between two consecutive integers of the union of these sets (over every condition)
    no condition changes sign, so one evaluation there stands for the whole run.
    """
    out: set[int] = set()
    # A root at zero (a factor of the symbol itself) needs no isolation; dividing it
    # out often leaves a linear condition, solved without sympy.
    zeros = next((i for i, c in enumerate(poly) if c != 0), 0)
    if zeros and lo <= 0 <= hi:
        out.add(0)
    poly = poly[zeros:]
    if len(poly) <= 1:
        return out
    if len(poly) == 2:
        root = -poly[0] / poly[1]
        bounds = [(root, root)]
    else:
        bounds = _isolate(poly)
    for left, right in bounds:
        if right < lo - 1 or left > hi + 1:
            continue
        start, stop = max(math.floor(left), lo), min(math.ceil(right), hi)
        out.update(range(start, stop + 1))
    return out


def _isolate(poly: Poly) -> list[tuple[Fraction, Fraction]]:
    """Isolating intervals of the real roots, each narrower than 1/2 (exact, sympy)."""
    import sympy  # lazy: ~0.5 s, only for conditions of degree 2 and more

    x = sympy.Dummy("x")
    rational = [sympy.Rational(c.numerator, c.denominator) for c in reversed(poly)]
    p = sympy.Poly(rational, x, domain=sympy.QQ)
    out = []
    for (left, right), _ in p.intervals(eps=sympy.Rational(1, 2)):
        out.append((_fraction(left), _fraction(right)))
    return out


def _fraction(value: object) -> Fraction:
    import sympy

    r = sympy.Rational(value)
    return Fraction(int(r.p), int(r.q))
