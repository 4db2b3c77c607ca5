"""Where a formula with `min` and `max` around the varied symbol is one polynomial.

A formula whose varied symbol appears in sums, products, integer powers, numerators and
the arguments of `min` and `max` is a polynomial on each run of integers over which
every `min` and `max` keeps one argument (a windowed attention's `min(s, L)`, a routed
layer's `min(E, M)`). The ends of those runs are found from the inside out: on a run
where a call's arguments are polynomials, the call changes argument only where the
difference of two arguments changes sign, beside a real root of that difference
(`critical_integers`), whose coefficients come from exact interpolation at integers
inside the run. So the crossover of such a formula is solved by roots, as a polynomial's
is, instead of by an interval search over the range.

A `ceil` or `floor` of a polynomial that is a whole number at every integer is that
polynomial. Other `ceil`s and `floor`s, `unpicked` around the symbol and a division by
it are not piecewise polynomial: `cuts` answers None and the crossover falls back to the
interval search.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from fractions import Fraction
from itertools import pairwise
from typing import cast

from rooflinec.engine.solve_poly import Poly, combine, critical_integers, interpolate
from rooflinec.formulas.evaluate import _compile, _Fn
from rooflinec.formulas.tree import (
    _Call,
    _Neg,
    _Node,
    _Num,
    _Pow,
    _Prod,
    _Sum,
    _Sym,
    _Value,
    tree_degree,
)

ONE = Fraction(1)


def piece_degree(node: _Node, symbol: str) -> int | None:
    """The degree bound of `node` in `symbol` on a run where every `min` and `max` keeps
    one argument (the largest of their arguments' degrees) and every `ceil` and `floor`
    is of a whole number (its argument's degree); None: not piecewise polynomial in it
    (`unpicked` around it, or a division by it)."""
    return tree_degree(node, {symbol: 1}, pieces=True)


def gaps(points: list[int]) -> Iterator[tuple[int, int]]:
    """The runs of integers strictly between consecutive `points` (sorted), as (first,
    last); none between neighbours."""
    for a, b in pairwise(points):
        if b > a + 1:
            yield a + 1, b - 1


def spans(first: int, last: int, cuts: set[int]) -> list[tuple[int, int]]:
    """[first, last] cut at each integer of `cuts` (each its own span): between two of
    them nothing changes sign."""
    out: list[tuple[int, int]] = []
    start = first
    for cut in sorted(c for c in cuts if first <= c <= last):
        if start < cut:
            out.append((start, cut - 1))
        out.append((cut, cut))
        start = cut + 1
    if start <= last:
        out.append((start, last))
    return out


def cuts(
    node: _Node, values: Mapping[str, int | Fraction], symbol: str, lo: int, hi: int
) -> set[int] | None:
    """Integers of [lo, hi], lo and hi among them, such that on the integers strictly
    between two consecutive ones every `min` and `max` of `node` keeps one argument, so
    that `node` is one polynomial there (`on_run`); None when `node` is not piecewise
    polynomial in `symbol` (`piece_degree`).

    Raises `EvaluationError` when an argument cannot be evaluated in the range.
    """
    if piece_degree(node, symbol) is None:
        return None
    try:
        return _cuts(node, values, symbol, lo, hi)
    except _NotWhole:
        return None


class _NotWhole(Exception):
    """A `ceil` or `floor` of a polynomial that is not a whole number at every integer."""


def on_run(
    node: _Node, values: Mapping[str, int | Fraction], symbol: str, first: int, last: int
) -> Poly | None:
    """`node` as one polynomial on the integers first..last, where no `min` or `max` of
    it changes argument (between consecutive `cuts`): a constant on one integer; None
    when the run holds too few integers to interpolate its degree (each of them is then
    worth evaluating alone)."""
    d = piece_degree(node, symbol)
    assert d is not None  # the caller has its cuts
    if first == last:
        return interpolate((first,), [_at(node, values, symbol)(first)])  # a constant there
    if last - first < d:
        return None
    at = _at(node, values, symbol)
    xs = range(first, first + d + 1)
    return interpolate(xs, [at(x) for x in xs])


def _cuts(
    node: _Node, values: Mapping[str, int | Fraction], symbol: str, lo: int, hi: int
) -> set[int]:
    if piece_degree(node, symbol) == 0 or isinstance(node, (_Num, _Sym)):
        return {lo, hi}
    if isinstance(node, _Neg):
        return _cuts(node.operand, values, symbol, lo, hi)
    if isinstance(node, _Pow):
        return _cuts(node.base, values, symbol, lo, hi)
    if isinstance(node, _Sum):
        parts = [term for _, term in node.terms]
    elif isinstance(node, _Call):
        parts = list(node.args)
    else:
        parts = [factor.node for factor in node.factors]
    inner: set[int] = set()
    for part in parts:
        inner |= _cuts(part, values, symbol, lo, hi)
    if not isinstance(node, _Call):
        return inner
    if node.name in ("ceil", "floor"):
        # The call is its argument where that is a whole number at every integer, which a
        # polynomial of degree d is when it is at d + 1 consecutive integers (its
        # coefficients in the binomial basis are its finite differences there): a token
        # count `ceil(b*s*k*dp/ep)` at dp = ep = 1. Other periods are left to the search.
        (arg,) = parts
        d = piece_degree(arg, symbol)
        assert d is not None
        at = _at(arg, values, symbol)
        out = set(inner)
        for first, last in gaps(sorted(inner)):
            if last - first < d:
                out.update(range(first, last + 1))
            elif any(Fraction(at(x)).denominator != 1 for x in range(first, first + d + 1)):
                raise _NotWhole
        return out
    # A `min` or `max`: between the arguments' own cuts each argument is a polynomial,
    # and the call keeps one argument wherever no two arguments' difference changes sign.
    out = set(inner)
    for first, last, polys in polys_on_gaps(parts, values, symbol, sorted(inner)):
        if polys is None:
            out.update(range(first, last + 1))
            continue
        for i, a in enumerate(polys):
            for b in polys[i + 1 :]:
                out |= critical_integers(combine(ONE, a, -ONE, b), first, last)
    return out


def polys_on_gaps(
    nodes: Sequence[_Node], values: Mapping[str, int | Fraction], symbol: str, points: list[int]
) -> Iterator[tuple[int, int, list[Poly] | None]]:
    """Each run of integers strictly between consecutive `points` (sorted, among them
    the nodes' `cuts`), with every node's polynomial there (`on_run`); None where the run
    is too short to interpolate one of them."""
    for first, last in gaps(points):
        polys = [on_run(node, values, symbol, first, last) for node in nodes]
        found = [p for p in polys if p is not None]
        yield first, last, found if len(found) == len(polys) else None


def _at(node: _Node, values: Mapping[str, int | Fraction], symbol: str) -> Callable[[int], _Value]:
    def leaf(name: str) -> _Fn[Mapping[str, _Value]]:
        return cast(_Fn[Mapping[str, _Value]], operator.itemgetter(name))

    fn = _compile(node, leaf)
    env = dict(values)

    def at(x: int) -> _Value:
        env[symbol] = x
        return fn(env)

    return at


def resolved(node: _Node, values: Mapping[str, int | Fraction], symbol: str, x: int) -> _Node:
    """`node` with each `min` and `max` of `symbol` replaced by the argument it takes at
    `symbol = x`, and each `ceil` and `floor` of it by its argument (whole there, as
    `cuts` checks): on the run of `x` between two cuts (x not a cut itself), the same
    values as `node`, as a tree whose degree `tree_degree` reads."""
    if piece_degree(node, symbol) == 0 or isinstance(node, (_Num, _Sym)):
        return node
    if isinstance(node, _Neg):
        return _Neg(resolved(node.operand, values, symbol, x))
    if isinstance(node, _Pow):
        return _Pow(resolved(node.base, values, symbol, x), node.exponent)
    if isinstance(node, _Sum):
        return _Sum(tuple((neg, resolved(t, values, symbol, x)) for neg, t in node.terms))
    if isinstance(node, _Call):
        if node.name in ("ceil", "floor"):
            return resolved(node.args[0], values, symbol, x)
        found = [_at(arg, values, symbol)(x) for arg in node.args]
        best = min(found) if node.name == "min" else max(found)
        # Arguments equal at x are equal on its whole run (their difference has no root
        # inside it): the one of least degree reads tightest (`max(0, W - L + s - 1)`
        # below the window is 0, not a difference whose terms cancel).
        tied = [arg for arg, v in zip(node.args, found, strict=True) if v == best]
        pick = min(tied, key=lambda arg: piece_degree(arg, symbol) or 0)
        return resolved(pick, values, symbol, x)
    return _Prod(tuple(replace(f, node=resolved(f.node, values, symbol, x)) for f in node.factors))


def degree_on_run(
    node: _Node,
    values: Mapping[str, int | Fraction],
    symbol: str,
    x: int,
    generic: tuple[Mapping[str, int | Fraction], ...] = (),
) -> int | None:
    """The degree in `symbol` of `node` on the run of `x` (`resolved` there): the tree's
    bound, or where that exceeds one, the degree its exact values interpolate to at
    `values` updated by each of `generic` (values of the variables that differ from
    use to use, far from any root of the coefficients: terms that cancel, `L - L`, are
    of degree 0); None: not a polynomial there."""
    tree = resolved(node, values, symbol, x)
    bound = tree_degree(tree, {symbol: 1})
    if bound is None or bound <= 1:
        return bound
    found = 0
    for extra in generic or ({},):
        at = _at(tree, {**values, **extra}, symbol)
        xs = range(x, x + bound + 1)
        found = max(found, len(interpolate(xs, [at(n) for n in xs])) - 1)
    return found
