"""Exact evaluation: the private tree compiled into closures over `int` and `Fraction`.

No sympy at evaluation time. `bulk_evaluate` runs one formula over many rows given as
columns, reading each row as a tuple.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import TypeAlias, TypeVar

from rooflinec.formulas.errors import EvaluationError, _shown
from rooflinec.formulas.limits import LIMITS, MAX_UNPICKED_TOKENS, MAX_UNREACHED_ACTIVE
from rooflinec.formulas.tree import _Call, _Neg, _Node, _Num, _Pow, _Sum, _Sym, _Value

_Env = TypeVar("_Env")
_Fn: TypeAlias = Callable[[_Env], _Value]


def _divide(x: _Value, y: _Value, column: int, token: str) -> _Value:
    if not y:
        raise EvaluationError(f"division by zero: {_shown(token)} is 0", column, token)
    if type(x) is int and type(y) is int:
        # Stay in int arithmetic (several times faster than Fraction) when exact.
        quotient, remainder = divmod(x, y)
        return quotient if not remainder else Fraction(x, y)
    return Fraction(x) / y


def _power(x: _Value, exponent: int) -> _Value:
    # exponent is a literal 0..64, so int ** int stays an exact int.
    if isinstance(x, int):
        result: int = x**exponent
        return result
    return x**exponent


def _compile(node: _Node, leaf: Callable[[str], _Fn[_Env]]) -> _Fn[_Env]:
    """A closure computing `node` exactly; `leaf` supplies the symbol lookups."""
    if isinstance(node, _Num):
        constant = node.value
        return lambda env: constant
    if isinstance(node, _Sym):
        return leaf(node.name)
    if isinstance(node, _Neg):
        inner = _compile(node.operand, leaf)
        return lambda env: -inner(env)
    if isinstance(node, _Pow):
        base = _compile(node.base, leaf)
        exponent = node.exponent
        return lambda env: _power(base(env), exponent)
    if isinstance(node, _Call):
        args = tuple(_compile(arg, leaf) for arg in node.args)
        if node.name == "ceil":
            (arg,) = args
            return lambda env: math.ceil(arg(env))
        if node.name == "floor":
            (arg,) = args
            return lambda env: math.floor(arg(env))
        if node.name == "unpicked":
            experts, active, tokens = args
            return lambda env: unpicked(experts(env), active(env), tokens(env))
        if node.name == "unreached":
            experts, active, group = args
            return lambda env: unreached(experts(env), active(env), group(env))
        pick = min if node.name == "min" else max
        return lambda env: pick(f(env) for f in args)
    if isinstance(node, _Sum):
        parts = tuple((neg, _compile(term, leaf)) for neg, term in node.terms)
        if len(parts) == 2:
            (_, a), (negated, b) = parts
            if negated:
                return lambda env: a(env) - b(env)
            return lambda env: a(env) + b(env)
        first = parts[0][1]
        rest = parts[1:]

        def add(env: _Env) -> _Value:
            acc = first(env)
            for negated, term in rest:
                acc = acc - term(env) if negated else acc + term(env)
            return acc

        return add
    steps = tuple((f.divide, _compile(f.node, leaf), f.column, f.token) for f in node.factors)
    if all(not divide for divide, _, _, _ in steps):
        fns = tuple(fn for _, fn, _, _ in steps)
        if len(fns) == 2:
            a, b = fns
            return lambda env: a(env) * b(env)

        def multiply(env: _Env) -> _Value:
            acc = fns[0](env)
            for fn in fns[1:]:
                acc = acc * fn(env)
            return acc

        return multiply
    head = steps[0][1]
    tail = steps[1:]

    def product(env: _Env) -> _Value:
        acc = head(env)
        for divide, fn, column, token in tail:
            acc = _divide(acc, fn(env), column, token) if divide else acc * fn(env)
        return acc

    return product


def _finish(result: _Value) -> Fraction:
    """The result as a Fraction, refused when its magnitude is beyond `LIMITS.result`."""
    if isinstance(result, int):  # an int subclass passed through `M` alone stays one
        if -LIMITS.result <= result <= LIMITS.result:
            return Fraction(result)
    elif isinstance(result, Fraction):
        if abs(result.numerator) <= LIMITS.result * result.denominator:
            return result
    else:  # pragma: no cover - the closures only make ints and Fractions
        raise EvaluationError(f"unexpected value {result!r}")
    raise EvaluationError("result is larger than 10**60 in magnitude")


def _check_value(name: str, value: object, column: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, Fraction)):
        raise EvaluationError(
            f"value of {name!r} must be an int or a Fraction, not {type(value).__name__}",
            column,
            name,
        )


def unpicked(experts: _Value, active: _Value, tokens: _Value) -> _Value:
    """((E - k) / E) ** n exactly: the chance that n tokens, each routed to k of E experts
    uniformly at random, all miss a given expert (whole E >= k >= 0 and n >= 0, n at
    most `MAX_UNPICKED_TOKENS`: the exact power of a large count has as many digits as
    it has tokens)."""
    for value in (experts, active, tokens):
        if isinstance(value, Fraction) and value.denominator != 1:
            raise EvaluationError(f"unpicked takes whole numbers, not {value}")
    e, k, n = int(experts), int(active), int(tokens)
    if not 0 <= k <= e or e < 1 or n < 0:
        raise EvaluationError(f"unpicked({e}, {k}, {n}): needs E >= k >= 0, E >= 1, n >= 0")
    if n > MAX_UNPICKED_TOKENS:
        raise EvaluationError(
            f"uniform routing over {n:,} tokens: computed exactly up to"
            f" {MAX_UNPICKED_TOKENS:,} tokens a pass"
        )
    return Fraction(e - k, e) ** n


def unreached(experts: _Value, active: _Value, group: _Value) -> _Value:
    """C(E - g, k) / C(E, k) exactly: the chance that a token routed to k of E experts
    uniformly at random (k distinct ones) misses every one of a given g, the experts one
    chip of an expert-parallel group holds (whole E >= g >= 0, E >= k >= 0, E >= 1, k at
    most `MAX_UNREACHED_ACTIVE`)."""
    for value in (experts, active, group):
        if isinstance(value, Fraction) and value.denominator != 1:
            raise EvaluationError(f"unreached takes whole numbers, not {value}")
    e, k, g = int(experts), int(active), int(group)
    if not (0 <= k <= e and 0 <= g <= e and e >= 1):
        raise EvaluationError(f"unreached({e}, {k}, {g}): needs E >= k >= 0, E >= g >= 0, E >= 1")
    if k > MAX_UNREACHED_ACTIVE:
        raise EvaluationError(
            f"{k:,} experts per token: computed exactly up to {MAX_UNREACHED_ACTIVE:,}"
        )
    if e - g < k:
        return 0  # fewer experts elsewhere than a token takes: it always reaches the group
    # The ratio of the two binomials as one product of k fractions, (E-g-i)/(E-i).
    numerator = denominator = 1
    for i in range(k):
        numerator *= e - g - i
        denominator *= e - i
    ratio = Fraction(numerator, denominator)
    return int(ratio) if ratio.denominator == 1 else ratio
