"""Exact polynomial conditions of a crossover: coefficients and the integers near their roots.

A formula whose varied symbol appears only in sums, products, integer powers and
numerators (no `min`, `max`, `ceil`, `floor` around it, no division by it) is a
polynomial in that symbol once the others are bound. Its coefficients come from exact
evaluation at `degree + 1` integers and exact (Fraction) interpolation, so no sympy
expression is built or substituted per case; the real roots of each condition
polynomial are isolated exactly (a linear one directly, higher degrees by bisection on
the integers with Sturm sequences in integer arithmetic), never with floats, and with
no sympy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from itertools import pairwise

from rooflinec.formulas import Formula
from rooflinec.formulas.tree import _Node, tree_degree

Poly = tuple[Fraction, ...]  # coefficients, constant term first, no trailing zeros


def degree(node: _Node, symbol: str) -> int | None:
    """The degree bound of `node` in `symbol`, or None when it is not a polynomial in it."""
    return tree_degree(node, {symbol: 1})


def coefficients(
    formula: Formula, values: Mapping[str, int | Fraction], symbol: str
) -> Poly | None:
    """The formula as a polynomial in `symbol` with the other `values` bound, or None.

    Interpolates exact values at 1..degree+1, which is exact because the degree bound
    holds.
    """
    d = degree(formula._tree, symbol)
    if d is None:
        return None
    xs = range(1, d + 2)
    return interpolate(xs, [formula.evaluate({**values, symbol: x}) for x in xs])


def interpolate(xs: Sequence[int], ys: Sequence[Fraction | int]) -> Poly:
    """The polynomial of degree below len(xs) through the points (xs, ys), exactly
    (Newton's divided differences, then expanded into monomial coefficients)."""
    dd = [Fraction(y) for y in ys]
    # Divided differences in place: dd[k] becomes f[x0..xk].
    for level in range(1, len(xs)):
        for k in range(len(xs) - 1, level - 1, -1):
            dd[k] = (dd[k] - dd[k - 1]) / (xs[k] - xs[k - level])
    # Expand the Newton form into monomial coefficients (Horner from the top).
    coeffs: list[Fraction] = [dd[-1]]
    for k in range(len(xs) - 2, -1, -1):
        # coeffs * (x - xs[k]) + dd[k]
        shifted = [Fraction(0), *coeffs]
        for i, c in enumerate(coeffs):
            shifted[i] -= c * xs[k]
        shifted[0] += dd[k]
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
    no condition changes sign, so one evaluation there stands for the whole run. (More
    integers than that would be harmless: each is evaluated exactly and equal runs merge.)
    """
    out: set[int] = set()
    # A root at zero (a factor of the symbol itself) needs no isolation; dividing it
    # out often leaves a linear condition, solved directly.
    zeros = next((i for i, c in enumerate(poly) if c != 0), 0)
    if zeros and lo <= 0 <= hi:
        out.add(0)
    poly = poly[zeros:]
    if len(poly) <= 1:
        return out
    if len(poly) == 2:
        root = -poly[0] / poly[1]
        if lo - 1 <= root <= hi + 1:
            start, stop = max(math.floor(root), lo), min(math.ceil(root), hi)
            out.update(range(start, stop + 1))
        return out
    # Roots in [lo - 1, hi + 1] have a neighbour in [lo, hi]; others do not matter.
    for a, b in _root_steps(poly, lo - 1, hi + 1):
        out.update(n for n in (a, b) if lo <= n <= hi)
    return out


def _integer_poly(poly: Sequence[Fraction]) -> list[int]:
    """`poly` times the positive least common multiple of its denominators: the same
    signs everywhere, evaluated in integers."""
    scale = math.lcm(*(c.denominator for c in poly))
    return [int(c * scale) for c in poly]


def _at(poly: Sequence[int], x: int) -> int:
    value = 0
    for c in reversed(poly):
        value = value * x + c
    return value


def _sturm(poly: Poly) -> list[list[int]]:
    """The Sturm sequence of `poly` (p, p', then minus each remainder), each scaled to
    integer coefficients by a positive factor."""
    seq: list[list[Fraction]] = [list(poly), [c * i for i, c in enumerate(poly)][1:]]
    while True:
        rem = list(seq[-2])
        div = seq[-1]
        while len(rem) >= len(div):
            factor = rem[-1] / div[-1]
            shift = len(rem) - len(div)
            for i, c in enumerate(div):
                rem[shift + i] -= factor * c
            rem.pop()  # its leading term is now zero
        while rem and rem[-1] == 0:
            rem.pop()
        if not rem:
            break
        seq.append([-c for c in rem])
    return [_integer_poly(p) for p in seq]


def _root_steps(poly: Poly, lo: int, hi: int) -> list[tuple[int, int]]:
    """Pairs of consecutive integers (n, n + 1) in [lo, hi] that hold every real root of
    `poly` in [lo, hi] between or on them: exact, by Sturm's theorem (the distinct roots
    in (a, b) are V(a) - V(b) when neither end is a root) and bisection on integers."""
    seq = _sturm(poly)
    signs: dict[int, tuple[int, int]] = {}  # x -> (p(x), sign variations at x)

    def at(x: int) -> tuple[int, int]:
        hit = signs.get(x)
        if hit is None:
            values = [v for p in seq if (v := _at(p, x)) != 0]
            changes = sum(1 for u, v in pairwise(values) if (u < 0) != (v < 0))
            hit = signs[x] = (_at(seq[0], x), changes)
        return hit

    out: list[tuple[int, int]] = []
    stack = [(lo, hi)]
    while stack:
        a, b = stack.pop()
        (pa, va), (pb, vb) = at(a), at(b)
        if pa != 0 and pb != 0 and va == vb:
            continue  # no root in [a, b]
        if b - a <= 1:
            out.append((a, b))
            continue
        mid = (a + b) // 2
        stack.append((mid, b))
        stack.append((a, mid))
    return out
