"""The checked syntax tree converted into the private tree, with depth and powers capped."""

from __future__ import annotations

import ast
from typing import cast

from rooflinec.formulas.errors import FormulaError
from rooflinec.formulas.limits import LIMITS, _FunctionName
from rooflinec.formulas.syntax import _Source, _token_at
from rooflinec.formulas.tree import _Call, _Factor, _Neg, _Node, _Num, _Pow, _Prod, _Sum, _Sym
from rooflinec.formulas.whitelist import _literal_value


class _Builder:
    """Turns a checked syntax tree into the private tree, checking depth and powers.

    Recursion here is bounded by `LIMITS.depth`: same-operator chains are walked
    down their left spine in a loop, and every other level adds one to `depth`.
    """

    def __init__(self, source: _Source) -> None:
        self.source = source

    def build(self, node: ast.expr, depth: int = 1, power: int = 1) -> _Node:
        if depth > LIMITS.depth:
            start, _ = self.source.span(node)
            token = _token_at(self.source.text, start)
            raise FormulaError(f"formula nests more than {LIMITS.depth} levels deep", start, token)
        deeper = depth + 1
        if isinstance(node, ast.Name):
            return _Sym(node.id)
        if isinstance(node, ast.Constant):
            value, text = _literal_value(self.source.segment(node))
            assert value is not None  # refused by the checker otherwise
            return _Num(value, text)
        if isinstance(node, ast.UnaryOp):
            operand = self.build(node.operand, deeper, power)
            return _Neg(operand) if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.Call):
            assert isinstance(node.func, ast.Name)
            name = cast(_FunctionName, node.func.id)
            return _Call(name, tuple(self.build(arg, deeper, power) for arg in node.args))
        assert isinstance(node, ast.BinOp)
        if isinstance(node.op, ast.Pow):
            assert isinstance(node.right, ast.Constant) and isinstance(node.right.value, int)
            exponent = node.right.value
            total = power * exponent
            if total > LIMITS.nested_exponent:
                start, _ = self.source.span(node.right)
                raise FormulaError(
                    f"nested powers raise to the power {total}; "
                    f"at most {LIMITS.nested_exponent} in all",
                    start,
                    self.source.segment(node.right),
                )
            return _Pow(self.build(node.left, deeper, max(total, 1)), exponent)
        if isinstance(node.op, (ast.Add, ast.Sub)):
            terms: list[tuple[bool, _Node]] = []
            cur: ast.expr = node
            while isinstance(cur, ast.BinOp) and isinstance(cur.op, (ast.Add, ast.Sub)):
                terms.append((isinstance(cur.op, ast.Sub), self.build(cur.right, deeper, power)))
                cur = cur.left
            terms.append((False, self.build(cur, deeper, power)))
            return _Sum(tuple(reversed(terms)))
        factors: list[_Factor] = []
        cur = node
        while isinstance(cur, ast.BinOp) and isinstance(cur.op, (ast.Mult, ast.Div)):
            start, _ = self.source.span(cur.right)
            factors.append(
                _Factor(
                    isinstance(cur.op, ast.Div),
                    self.build(cur.right, deeper, power),
                    start,
                    self.source.segment(cur.right),
                )
            )
            cur = cur.left
        start, _ = self.source.span(cur)
        factors.append(_Factor(False, self.build(cur, deeper, power), start, ""))
        return _Prod(tuple(reversed(factors)))
