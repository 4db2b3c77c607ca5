"""Exact evaluation over int64 columns, or a refusal: never a wrapped or rounded value.

A grid, or a compile, evaluates one formula over many shapes. Where the result is a whole
number that int64 holds at every step, numpy computes it exactly, many shapes at a time
(`ceil` and `floor` of a quotient, `ceil(N/128)`, by integer division); anywhere else (a
step that could pass 2^62, another division that leaves a remainder, a division by
zero, a fractional literal or width) `evaluate_int64` returns None and the caller
evaluates those shapes with the exact engine (`bulk_evaluate`, Python ints and
Fractions). Overflow is ruled out before any arithmetic: a bound on the magnitude of
every intermediate value is computed from the largest magnitude of each input (|a + b|
<= |a| + |b|, |a * b| = |a| |b|, |a / b| <= |a| for a whole nonzero b) and the
evaluation is refused when a bound reaches 2^62. The bounds are floats; 2^62 leaves a
factor of two against rounding (their relative error is ~10^-16 a step).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from rooflinec.formulas.limits import MAX_UNPICKED_TOKENS, MAX_UNREACHED_ACTIVE
from rooflinec.formulas.tree import _Call, _Factor, _Neg, _Node, _Num, _Pow, _Prod, _Sum, _Sym

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from rooflinec.formulas.formula import Formula

    # The array types of all vectorised code, defined once: the engine's and the outputs'
    # modules import them from here.
    Ints = NDArray[np.int64]
    Floats = NDArray[np.float64]
    Bools = NDArray[np.bool_]

__all__ = ["INT64_SAFE", "evaluate_float", "evaluate_int64"]

#: Every intermediate value must stay below this in magnitude (int64 holds 2^63 - 1).
INT64_SAFE = float(2**62)


class _Refused(Exception):
    """This formula or these inputs are not for int64: evaluate them exactly instead."""


def evaluate_int64(
    formula: Formula, columns: Mapping[str, Ints], scalars: Mapping[str, int | Fraction]
) -> Ints | None:
    """`formula` over int64 `columns` (symbol -> values) and `scalars` (such as `w`),
    exactly, or None when int64 cannot give the exact value for every row."""
    values: dict[str, int | Ints] = {}
    bounds: dict[str, float] = {}
    for name in formula.symbols:
        if name in columns:
            column = columns[name]
            values[name] = column
            bounds[name] = float(np.abs(column).max()) if len(column) else 0.0
        elif name in scalars:
            scalar = scalars[name]
            if isinstance(scalar, Fraction) and scalar.denominator != 1:
                return None
            values[name] = int(scalar)
            bounds[name] = float(abs(int(scalar)))
        else:
            return None
    try:
        if _bound(formula._tree, bounds) >= INT64_SAFE:
            return None
        n = len(next(iter(columns.values()))) if columns else 1
        result: int | Ints = _walk(formula._tree, values, _INT64)
    except _Refused:
        return None
    if isinstance(result, int):
        return np.full(n, result, dtype=np.int64)
    return result


def _bound(node: _Node, bounds: Mapping[str, float]) -> float:
    """An upper bound on |node| over every row, refusing what int64 cannot hold."""
    if isinstance(node, _Num):
        value = node.value
        if isinstance(value, Fraction) and value.denominator != 1:
            raise _Refused
        return float(abs(int(value)))
    if isinstance(node, _Sym):
        return bounds[node.name]
    if isinstance(node, _Neg):
        return _bound(node.operand, bounds)
    if isinstance(node, _Pow):
        return _check(_bound(node.base, bounds) ** node.exponent)
    if isinstance(node, _Call):
        if node.name in ("unpicked", "unreached"):
            raise _Refused  # a probability: no int64 value
        return max(_bound(arg, bounds) for arg in node.args)
    if isinstance(node, _Sum):
        return _check(sum(_bound(term, bounds) for _, term in node.terms))
    assert isinstance(node, _Prod)
    acc = 1.0
    for factor in node.factors:
        b = _bound(factor.node, bounds)
        # A whole, nonzero divisor never makes a whole quotient larger.
        acc = acc if factor.divide else _check(acc * b)
    return acc


def _check(bound: float) -> float:
    if not bound < INT64_SAFE:  # also refuses inf and nan
        raise _Refused
    return bound


class _Arithmetic:
    """What differs between the int64 and the float64 walk of one tree: how a literal
    reads, what `ceil`/`floor` and a divisor do. Everything else is the tree's order."""

    one: int | float = 1

    def num(self, value: int | Fraction) -> int | float:
        return int(value)

    def rounded(self, call: _Call, values: Mapping[str, Any]) -> Any:
        return _rounded(call.args[0], values, up=call.name == "ceil")

    def divide(self, product: Any, value: Any) -> Any:
        quotient, remainder = np.divmod(product, _divisor(value))
        if np.any(remainder != 0):
            raise _Refused
        return quotient


class _FloatArithmetic(_Arithmetic):
    one = 1.0

    def num(self, value: int | Fraction) -> float:
        return float(value)

    def rounded(self, call: _Call, values: Mapping[str, Any]) -> Any:
        value = _walk(call.args[0], values, self)
        return np.ceil(value) if call.name == "ceil" else np.floor(value)

    def divide(self, product: Any, value: Any) -> Any:
        return product / value


_INT64 = _Arithmetic()
_FLOAT64 = _FloatArithmetic()


def _refused(experts: Any, active: Any, third: Any) -> Any:
    """Where `unpicked` or `unreached` refuses its arguments exactly: not whole numbers,
    or not E >= k >= 0, E >= 1, third >= 0."""
    whole = (experts == np.floor(experts)) & (active == np.floor(active))
    whole &= third == np.floor(third)
    return ~whole | (active < 0) | (active > experts) | (experts < 1) | (third < 0)


def _walk(node: _Node, values: Mapping[str, Any], arithmetic: _Arithmetic) -> Any:
    """The node's value in `arithmetic` (int64: `_Refused` where a quotient is not whole
    or divides by 0)."""
    if isinstance(node, _Num):
        return arithmetic.num(node.value)
    if isinstance(node, _Sym):
        return values[node.name]
    if isinstance(node, _Neg):
        return -_walk(node.operand, values, arithmetic)
    if isinstance(node, _Pow):
        base = _walk(node.base, values, arithmetic)
        acc: Any = arithmetic.one
        for _ in range(node.exponent):
            acc = acc * base
        return acc
    if isinstance(node, _Call):
        if node.name in ("ceil", "floor"):
            return arithmetic.rounded(node, values)
        args = [_walk(arg, values, arithmetic) for arg in node.args]
        if node.name == "unpicked":
            experts, active, tokens = args
            # Floats (`_bound` refused int64); NaN where the exact engine refuses.
            refused = _refused(experts, active, tokens) | (tokens > MAX_UNPICKED_TOKENS)
            return np.where(refused, np.nan, ((experts - active) / experts) ** tokens)
        if node.name == "unreached":
            experts, active, group = args
            refused = _refused(experts, active, group) | (active > MAX_UNREACHED_ACTIVE)
            refused |= group > experts
            # prod over i < k of (E - g - i) / (E - i): a factor is 0 where E - g < k.
            out = np.ones(np.broadcast(experts, active, group).shape)
            most = np.max(np.where(refused, 0, active), initial=0)
            for i in range(int(most)):
                term = (experts - group - i) / (experts - i)
                out = out * np.where(i < active, term, 1.0)
            return np.where(refused, np.nan, out)
        pick = np.minimum if node.name == "min" else np.maximum
        out = args[0]
        for arg in args[1:]:
            out = pick(out, arg)
        return out
    if isinstance(node, _Sum):
        # The parser never negates the first term (`-a + b` is a `_Neg` term).
        (_, first), *rest = node.terms
        total = _walk(first, values, arithmetic)
        for negated, term in rest:
            value = _walk(term, values, arithmetic)
            total = total - value if negated else total + value
        return total
    assert isinstance(node, _Prod)
    return _product(node.factors, values, arithmetic)


def _product(
    factors: tuple[_Factor, ...], values: Mapping[str, Any], arithmetic: _Arithmetic = _INT64
) -> Any:
    """The product of `factors` left to right (int64: `_Refused` where a quotient is not
    whole)."""
    product = _walk(factors[0].node, values, arithmetic)
    for factor in factors[1:]:
        value = _walk(factor.node, values, arithmetic)
        product = arithmetic.divide(product, value) if factor.divide else product * value
    return product


def _divisor(value: int | Ints) -> int | Ints:
    if np.any(np.asarray(value) == 0):
        raise _Refused  # the exact engine reports the division by zero, with its row
    return value


def _rounded(node: _Node, values: Mapping[str, Any], *, up: bool) -> Any:
    """`ceil(node)` (`up`) or `floor(node)`, exactly: where `node` is a product whose last
    factor divides (`ceil(N/128)`), the quotient of the whole numbers before it by that
    divisor, rounded as Python's and numpy's integer floor division do (toward −inf; ceil
    as −(−a // b)); any other `node` must be whole already."""
    if isinstance(node, _Prod) and len(node.factors) > 1 and node.factors[-1].divide:
        numerator = _product(node.factors[:-1], values)
        divisor = _divisor(_walk(node.factors[-1].node, values, _INT64))
        return -((-numerator) // divisor) if up else numerator // divisor
    return _walk(node, values, _INT64)


def evaluate_float(formula: Formula, values: Mapping[str, float | Floats]) -> float | Floats:
    """`formula` over float64 columns and scalars (symbol -> value), in float64: the
    float path's value, within a few units in the last place of the exact one where
    no step cancels. A division by zero gives inf or nan, which the caller checks."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _walk(formula._tree, values, _FLOAT64)  # type: ignore[no-any-return]
