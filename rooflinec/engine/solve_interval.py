"""Exact interval bounds of a formula over a range of one symbol.

For formulas with `min`, `max`, `ceil` or `floor` around the varied symbol, or a
division by it, the crossover is found by exact integer search: a range of integers
whose bounds prove that the same ceiling wins everywhere in it is one run; any other
range is split, down to single integers, which are evaluated exactly. The bounds are
interval arithmetic on Fractions over the formula's tree, so they are sound (they may
be loose, never wrong) whether or not the formula is monotone. `box_bounds` bounds a
formula over several symbols at once (a grid's box of shapes, `rooflinec.engine.grid_proof`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from fractions import Fraction

from rooflinec.formulas import Formula
from rooflinec.formulas.tree import _Call, _Neg, _Node, _Num, _Pow, _Prod, _Sum, _Sym

Interval = tuple[Fraction, Fraction]


def folded(formula: Formula, values: Mapping[str, int | Fraction], symbol: str) -> _Node:
    """The formula's tree with every subtree that does not name `symbol` replaced by its
    exact value at `values`: the same bounds (a constant's interval is its value), with
    none of the held part worked out again for each range (`bounds_of`)."""
    return _fold(formula._tree, values, symbol)[0]


def bounds_of(
    tree: _Node, values: Mapping[str, int | Fraction], symbol: str, lo: int, hi: int
) -> Interval | None:
    """Lower and upper bounds of a tree `folded` for `symbol`, with `symbol` in [lo, hi]
    and the other symbols at `values`; None when no finite bound follows (a divisor whose
    bounds include zero)."""
    return _bounds(tree, values, {symbol: (Fraction(lo), Fraction(hi))})


def _fold(node: _Node, values: Mapping[str, int | Fraction], symbol: str) -> tuple[_Node, bool]:
    """The node folded, and whether it names `symbol`."""
    if isinstance(node, _Num):
        return node, False
    if isinstance(node, _Sym):
        return node, node.name == symbol
    if isinstance(node, _Neg):
        inner, named = _fold(node.operand, values, symbol)
        made: _Node = _Neg(inner)
    elif isinstance(node, _Pow):
        inner, named = _fold(node.base, values, symbol)
        made = _Pow(inner, node.exponent)
    elif isinstance(node, _Call):
        parts = [_fold(arg, values, symbol) for arg in node.args]
        named = any(n for _, n in parts)
        made = _Call(node.name, tuple(p for p, _ in parts))
    elif isinstance(node, _Sum):
        terms = [(neg, *_fold(term, values, symbol)) for neg, term in node.terms]
        named = any(n for _, _, n in terms)
        made = _Sum(tuple((neg, t) for neg, t, _ in terms))
    else:
        factors = [(f, *_fold(f.node, values, symbol)) for f in node.factors]
        named = any(n for _, _, n in factors)
        made = _Prod(tuple(replace(f, node=t) for f, t, _ in factors))
    if named:
        return made, True
    # A constant: its interval is its value, from its children's, already folded.
    exact = _bounds(made, values, {})
    if exact is None or exact[0] != exact[1]:
        # A division by zero (left for the evaluation to report), or a node bounded only
        # loosely whatever its arguments (`unpicked`, a probability): kept as it is.
        return made, False
    return _Num(exact[0], str(exact[0])), False


def box_bounds(
    formula: Formula, values: Mapping[str, int | Fraction], box: Mapping[str, Interval]
) -> Interval | None:
    """Lower and upper bounds of the formula with each symbol of `box` anywhere in its
    interval and the others at `values`; None when no finite bound follows."""
    return _bounds(formula._tree, values, box)


def _bounds(
    node: _Node, values: Mapping[str, int | Fraction], varying: Mapping[str, Interval]
) -> Interval | None:
    if isinstance(node, _Num):
        v = Fraction(node.value)
        return v, v
    if isinstance(node, _Sym):
        if node.name in varying:
            return varying[node.name]
        v = Fraction(values[node.name])
        return v, v
    if isinstance(node, _Neg):
        inner = _bounds(node.operand, values, varying)
        return None if inner is None else (-inner[1], -inner[0])
    if isinstance(node, _Pow):
        base = _bounds(node.base, values, varying)
        if base is None:
            return None
        lo, hi = base
        n = node.exponent
        if n == 0:
            return Fraction(1), Fraction(1)
        if n % 2 == 0 and lo < 0 < hi:
            return Fraction(0), max(lo**n, hi**n)
        if n % 2 == 0 and hi <= 0:
            return hi**n, lo**n
        return lo**n, hi**n
    if isinstance(node, _Call):
        args = []
        for arg in node.args:
            b = _bounds(arg, values, varying)
            if b is None:
                return None
            args.append(b)
        if node.name == "ceil":
            return Fraction(math.ceil(args[0][0])), Fraction(math.ceil(args[0][1]))
        if node.name == "floor":
            return Fraction(math.floor(args[0][0])), Fraction(math.floor(args[0][1]))
        if node.name in ("unpicked", "unreached"):
            return Fraction(0), Fraction(1)  # a probability: no tighter bound needed
        pick = min if node.name == "min" else max
        return pick(a[0] for a in args), pick(a[1] for a in args)
    if isinstance(node, _Sum):
        total_lo = total_hi = Fraction(0)
        for negated, term in node.terms:
            b = _bounds(term, values, varying)
            if b is None:
                return None
            if negated:
                total_lo, total_hi = total_lo - b[1], total_hi - b[0]
            else:
                total_lo, total_hi = total_lo + b[0], total_hi + b[1]
        return total_lo, total_hi
    acc: Interval | None = None
    for factor in node.factors:
        b = _bounds(factor.node, values, varying)
        if b is None:
            return None
        if factor.divide:
            if b[0] <= 0 <= b[1]:
                return None
            b = (1 / b[1], 1 / b[0])
        if acc is None:
            acc = b
        else:
            products = (acc[0] * b[0], acc[0] * b[1], acc[1] * b[0], acc[1] * b[1])
            acc = (min(products), max(products))
    return acc
