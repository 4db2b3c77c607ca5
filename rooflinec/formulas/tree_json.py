"""A formula's validated tree as plain JSON data, for the calculator page's interpreter.

The browser never parses formula text: the build emits the tree `parse_formula` already
validated, and the page's small interpreter evaluates it with the same operations and
limits (`rooflinec/site/assets/calculator.js`). Each node is a list whose first item says
what it is:

- `["n", "p/q"]` a literal, exactly (`"p"` when whole);
- `["s", name]` a symbol;
- `["+", [[negated, node], ...]]` a sum in the author's order (`negated` 0 or 1);
- `["*", [[divide, node, token], ...]]` a product, left to right (`divide` 0 or 1;
  `token` a divisor's text, for the division-by-zero message, else empty);
- `["-", node]` a negation; `["^", node, exponent]` a power by a literal 0..64;
- `["f", name, [node, ...]]` a call of `min`, `max`, `ceil`, `floor` (or `unpicked`).

`tree_from_json` reads it back, checking every node the way the page does: a test
round-trips every bundled formula through both.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, cast

from rooflinec.formulas.errors import FormulaError
from rooflinec.formulas.formula import Formula
from rooflinec.formulas.limits import ENGINE_FUNCTIONS, FUNCTIONS, LIMITS, _FunctionName
from rooflinec.formulas.tree import _Call, _Factor, _Neg, _Node, _Num, _Pow, _Prod, _Sum, _Sym

__all__ = ["rational_text", "tree_from_json", "tree_json"]


def rational_text(value: int | Fraction) -> str:
    """`value` exactly as `p/q`, or `p` when whole: what the page parses into BigInts."""
    value = Fraction(value)
    if value.denominator == 1:
        return str(value.numerator)
    return f"{value.numerator}/{value.denominator}"


def tree_json(formula: Formula) -> list[Any]:
    """The formula's tree as JSON data (see the module docstring)."""
    return _node_json(formula._tree)


def _node_json(node: _Node) -> list[Any]:
    if isinstance(node, _Num):
        return ["n", rational_text(node.value)]
    if isinstance(node, _Sym):
        return ["s", node.name]
    if isinstance(node, _Sum):
        return ["+", [[int(negated), _node_json(term)] for negated, term in node.terms]]
    if isinstance(node, _Prod):
        return [
            "*",
            [
                [int(f.divide), _node_json(f.node), f.token if f.divide else ""]
                for f in node.factors
            ],
        ]
    if isinstance(node, _Neg):
        return ["-", _node_json(node.operand)]
    if isinstance(node, _Pow):
        return ["^", _node_json(node.base), node.exponent]
    return ["f", node.name, [_node_json(arg) for arg in node.args]]


def tree_from_json(data: Any) -> _Node:
    """The tree `data` stands for, checked node by node against the parser's limits (the
    node count, the depth, the exponent, the functions and their arities); a
    `FormulaError` for anything else. Columns are not kept (0)."""
    counter = [0]
    return _node_from(data, 1, counter)


def _node_from(data: Any, depth: int, counter: list[int]) -> _Node:
    counter[0] += 1
    if counter[0] > LIMITS.nodes:
        raise FormulaError(f"formula tree has more than {LIMITS.nodes} nodes")
    if depth > LIMITS.depth:
        raise FormulaError(f"formula tree is nested deeper than {LIMITS.depth}")
    if not isinstance(data, list) or not data or not isinstance(data[0], str):
        raise FormulaError("formula tree node is not a tagged list")
    tag = data[0]
    if tag == "n" and len(data) == 2 and isinstance(data[1], str):
        return _Num(_rational(data[1]), data[1])
    if tag == "s" and len(data) == 2 and isinstance(data[1], str) and data[1].isidentifier():
        return _Sym(data[1])
    if tag == "+" and len(data) == 2 and isinstance(data[1], list) and data[1]:
        return _Sum(
            tuple((_flag(t, 2)[0] == 1, _node_from(t[1], depth + 1, counter)) for t in data[1])
        )
    if tag == "*" and len(data) == 2 and isinstance(data[1], list) and data[1]:
        factors = []
        for f in data[1]:
            divide = _flag(f, 3)[0] == 1
            if not isinstance(f[2], str):
                raise FormulaError("formula tree factor's token is not text")
            factors.append(_Factor(divide, _node_from(f[1], depth + 1, counter), 0, f[2]))
        return _Prod(tuple(factors))
    if tag == "-" and len(data) == 2:
        return _Neg(_node_from(data[1], depth + 1, counter))
    if tag == "^" and len(data) == 3 and type(data[2]) is int:
        if not 0 <= data[2] <= LIMITS.exponent:
            raise FormulaError(f"exponent {data[2]} is beyond 0..{LIMITS.exponent}")
        return _Pow(_node_from(data[1], depth + 1, counter), data[2])
    if tag == "f" and len(data) == 3 and isinstance(data[2], list):
        arity = {**FUNCTIONS, **ENGINE_FUNCTIONS}.get(data[1])
        if arity is None:
            raise FormulaError(f"unknown function {data[1]!r}")
        least, most = arity
        if len(data[2]) < least or (most is not None and len(data[2]) > most):
            raise FormulaError(f"{data[1]} takes {least} to {most or 'any'} arguments")
        args = tuple(_node_from(a, depth + 1, counter) for a in data[2])
        return _Call(cast(_FunctionName, data[1]), args)
    raise FormulaError(f"formula tree node {tag!r} is not one the parser makes")


def _flag(item: Any, length: int) -> list[Any]:
    if not isinstance(item, list) or len(item) != length or item[0] not in (0, 1):
        raise FormulaError("formula tree term is not [flag, node, ...]")
    return item


def _rational(text: str) -> Fraction:
    head, _, tail = text.partition("/")
    if not head.lstrip("-").isdigit() or (tail and not tail.isdigit()) or len(text) > 80:
        raise FormulaError(f"formula tree number {text!r} is not p or p/q")
    return Fraction(int(head), int(tail or "1"))
