"""The private expression tree a formula is parsed into.

Same-operator chains (`a + b - c`, `a * b / c`) are flat, so the nesting depth of the
tree is what the author wrote, not the number of terms. Evaluation, LaTeX and sympy are
all made from this tree; none of it is public.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import TypeAlias

from rooflinec.formulas.limits import _FunctionName

_Value: TypeAlias = int | Fraction


@dataclass(frozen=True, slots=True)
class _Num:
    """A literal; `text` is the author's spelling (for LaTeX), `value` is exact."""

    value: _Value
    text: str


@dataclass(frozen=True, slots=True)
class _Sym:
    name: str


@dataclass(frozen=True, slots=True)
class _Sum:
    """`t0 ± t1 ± ...` in the author's order; each term is (negated, node)."""

    terms: tuple[tuple[bool, _Node], ...]


@dataclass(frozen=True, slots=True)
class _Factor:
    """One factor of a product; a divisor keeps its position for error messages."""

    divide: bool
    node: _Node
    column: int
    token: str


@dataclass(frozen=True, slots=True)
class _Prod:
    """`f0 */ f1 */ ...` in the author's order, evaluated left to right."""

    factors: tuple[_Factor, ...]


@dataclass(frozen=True, slots=True)
class _Neg:
    operand: _Node


@dataclass(frozen=True, slots=True)
class _Pow:
    base: _Node
    exponent: int


@dataclass(frozen=True, slots=True)
class _Call:
    name: _FunctionName
    args: tuple[_Node, ...]


_Node: TypeAlias = _Num | _Sym | _Sum | _Prod | _Neg | _Pow | _Call


#: The calls that keep one of their arguments (or, for a whole number, the argument
#: itself) on a run of the variable: `tree_degree(..., pieces=True)` reads through them.
PIECEWISE_CALLS = frozenset({"min", "max", "ceil", "floor"})


def tree_degree(node: _Node, degrees: Mapping[str, int], *, pieces: bool = False) -> int | None:
    """The degree of the tree `node` as a polynomial in one variable whatever the other
    symbols' values, given each symbol's own degree in it (`degrees`; a symbol not named
    there is of degree 0). None: not a polynomial in it (the variable inside `ceil`,
    `min` or a divisor). A bound: terms may cancel to a lower degree. Read off the tree
    alone: no numpy (`Formula.degree` and the exact solvers use it).

    With `pieces`, the degree on a run of the variable where every `min` and `max` keeps
    one argument and every `ceil` and `floor` is of a whole number: the largest of their
    arguments' degrees (`unpicked` and divisors of the variable are still None)."""
    if isinstance(node, _Num):
        return 0
    if isinstance(node, _Sym):
        return degrees.get(node.name, 0)
    if isinstance(node, _Neg):
        return tree_degree(node.operand, degrees, pieces=pieces)
    if isinstance(node, _Pow):
        inner = tree_degree(node.base, degrees, pieces=pieces)
        return None if inner is None else inner * node.exponent
    if isinstance(node, _Call):
        inner_degrees = [tree_degree(arg, degrees, pieces=pieces) for arg in node.args]
        if all(d == 0 for d in inner_degrees):
            return 0
        if not pieces or node.name not in PIECEWISE_CALLS or None in inner_degrees:
            return None
        return max(d for d in inner_degrees if d is not None)
    if isinstance(node, _Sum):
        found = [tree_degree(term, degrees, pieces=pieces) for _, term in node.terms]
        return None if None in found else max(d for d in found if d is not None)
    assert isinstance(node, _Prod)
    total = 0
    for factor in node.factors:
        d = tree_degree(factor.node, degrees, pieces=pieces)
        if d is None or (factor.divide and d > 0):
            return None
        total += d
    return total
