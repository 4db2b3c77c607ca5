"""The private expression tree a formula is parsed into.

Same-operator chains (`a + b - c`, `a * b / c`) are flat, so the nesting depth of the
tree is what the author wrote, not the number of terms. Evaluation, LaTeX and sympy are
all made from this tree; none of it is public.
"""

from __future__ import annotations

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
