"""The whitelist: every node of the syntax tree checked, the first refused token reported.

Only numbers written out in decimal, declared symbols, `+ - * / **` with small literal
exponents, unary minus and plus, and calls of `FUNCTIONS` are allowed.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Final

from rooflinec.formulas.errors import _shown
from rooflinec.formulas.limits import _FUNCTION_LIST, ENGINE_FUNCTIONS, FUNCTIONS, LIMITS
from rooflinec.formulas.syntax import _Source, _walk
from rooflinec.formulas.tree import _Value

_ALLOWED_BINOPS: Final = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
_INT_RE: Final = re.compile(r"[0-9]+")
_DECIMAL_RE: Final = re.compile(r"[0-9]*\.[0-9]*")

# Python constructs a formula may not use, named for the message.
_CONSTRUCTS: Final[Mapping[type[ast.AST], str]] = {
    ast.Attribute: "attribute access",
    ast.Subscript: "subscripts",
    ast.Slice: "slices",
    ast.Lambda: "lambdas",
    ast.IfExp: "conditional expressions",
    ast.Compare: "comparisons",
    ast.BoolOp: "boolean operators",
    ast.NamedExpr: "assignment expressions",
    ast.Starred: "starred arguments",
    ast.List: "lists",
    ast.Tuple: "tuples",
    ast.Set: "sets",
    ast.Dict: "dicts",
    ast.ListComp: "comprehensions",
    ast.SetComp: "comprehensions",
    ast.DictComp: "comprehensions",
    ast.GeneratorExp: "generator expressions",
    ast.JoinedStr: "f-strings",
    ast.FormattedValue: "f-strings",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
}


@dataclass(frozen=True, order=True)
class _Violation:
    """One refused construct; the earliest (then the shortest) one is reported."""

    column: int
    length: int
    message: str = field(compare=False)
    token: str = field(compare=False)


def _not_allowed(column: int, token: str, why: str) -> _Violation:
    return _Violation(
        column, len(token), f"{_shown(token)} is not allowed in a formula ({why})", token
    )


def _literal_value(text: str) -> tuple[_Value | None, str]:
    """The exact value of a numeric literal from its source text, or None and why not.

    The source text, not the parsed float, is the truth: `0.1` is 1/10 and `1e999`
    must not become `inf`.
    """
    plain = text.replace("_", "")
    if _INT_RE.fullmatch(plain):
        value = int(plain)
        if value > LIMITS.literal:
            return None, f"number {_shown(text)} is too large; at most 10**18 is allowed"
        return value, plain
    if _DECIMAL_RE.fullmatch(plain):
        digits = sum(ch.isdigit() for ch in plain)
        if digits > LIMITS.literal_digits:
            return None, (
                f"number {_shown(text)} has {digits} digits; "
                f"at most {LIMITS.literal_digits} are allowed"
            )
        return Fraction(plain), plain
    if plain[:2].lower() in ("0x", "0o", "0b"):
        return None, f"{_shown(text)} is not allowed in a formula (only decimal numbers)"
    return None, (
        f"{_shown(text)} is not allowed in a formula (no exponent notation: "
        "write the number out or use a power of 10 like 10**9)"
    )


class _Checker:
    """Finds every refused construct in the syntax tree, without recursion."""

    def __init__(
        self,
        source: _Source,
        known: Collection[str],
        declared_note: str,
        *,
        engine: bool = False,
    ) -> None:
        self.source = source
        self.known = known
        self.declared_note = declared_note
        self.found: list[_Violation] = []
        # `engine`: a formula the engine wrote, which may call `ENGINE_FUNCTIONS` too
        self.functions = {**FUNCTIONS, **ENGINE_FUNCTIONS} if engine else FUNCTIONS

    def first(self, root: ast.expr) -> _Violation | None:
        # _walk is iterative, so a 900-deep chain of unary minus is harmless here.
        skip: set[int] = set()
        for node in _walk(root):
            if id(node) in skip:
                continue
            if isinstance(node, ast.JoinedStr):
                # Positions inside f-strings are unreliable on 3.11: report the string.
                skip.update(id(n) for n in _walk(node) if n is not node)
            self.check(node, skip)
        return min(self.found, default=None)

    def add(self, violation: _Violation) -> None:
        self.found.append(violation)

    def check(self, node: ast.AST, skip: set[int]) -> None:
        src = self.source
        start, end = src.span(node)
        if isinstance(node, ast.Name):
            # A Store target (`x := 1`) is reported as the walrus, not as a symbol.
            if isinstance(node.ctx, ast.Load) and node.id not in self.known:
                self.add(
                    _Violation(
                        start,
                        len(node.id),
                        f"unknown symbol {node.id!r} ({self.declared_note})",
                        node.id,
                    )
                )
        elif isinstance(node, ast.Constant):
            self.check_constant(node, start)
        elif isinstance(node, ast.BinOp):
            if not isinstance(node.op, _ALLOWED_BINOPS):
                column, token = src.between(node.left, node.right)
                self.add(_not_allowed(column, token, "operators: + - * / ** only"))
            elif isinstance(node.op, ast.Pow):
                self.check_exponent(node.right)
        elif isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                self.add(_not_allowed(start, "not", "boolean operators"))
            elif isinstance(node.op, ast.Invert):
                self.add(_not_allowed(start, "~", "bitwise operators"))
        elif isinstance(node, ast.Call):
            self.check_call(node, skip)
        elif isinstance(node, ast.keyword):
            token = f"{node.arg}=" if node.arg is not None else src.segment(node)
            self.add(_not_allowed(start, token, "keyword arguments"))
        elif isinstance(node, ast.Attribute):
            # Point at `.attr`, the part that makes it an attribute access.
            dot = src.text.rfind(".", start, end - len(node.attr))
            column = dot if dot >= 0 else start
            self.add(_not_allowed(column, src.text[column:end], _CONSTRUCTS[ast.Attribute]))
        elif isinstance(node, ast.Subscript):
            bracket = src.text.find("[", src.span(node.value)[1], end)
            column = bracket if bracket >= 0 else start
            self.add(_not_allowed(column, src.text[column:end], _CONSTRUCTS[ast.Subscript]))
        elif isinstance(node, ast.Lambda):
            self.add(_not_allowed(start, "lambda", _CONSTRUCTS[ast.Lambda]))
        elif isinstance(node, ast.IfExp):
            column, token = src.between(node.body, node.test)
            self.add(_not_allowed(column, token, _CONSTRUCTS[ast.IfExp]))
        elif isinstance(node, ast.Compare):
            column, token = src.between(node.left, node.comparators[0])
            self.add(_not_allowed(column, token, _CONSTRUCTS[ast.Compare]))
        elif isinstance(node, ast.BoolOp):
            column, token = src.between(node.values[0], node.values[1])
            self.add(_not_allowed(column, token, _CONSTRUCTS[ast.BoolOp]))
        elif isinstance(node, ast.NamedExpr):
            column, token = src.between(node.target, node.value)
            self.add(_not_allowed(column, token, _CONSTRUCTS[ast.NamedExpr]))
        elif isinstance(node, ast.expr):
            why = _CONSTRUCTS.get(type(node), "not arithmetic")
            self.add(_not_allowed(start, src.segment(node) or type(node).__name__, why))
        # Other node kinds (operators, contexts, comprehension clauses, lambda
        # arguments) only occur under a node that is refused already.

    def check_constant(self, node: ast.Constant, start: int) -> None:
        value = node.value
        segment = self.source.segment(node)
        if isinstance(value, bool) or value is None or value is Ellipsis:
            self.add(_not_allowed(start, segment, "not a number"))
        elif isinstance(value, (str, bytes)):
            self.add(_not_allowed(start, segment, "strings"))
        elif isinstance(value, complex):
            self.add(_not_allowed(start, segment, "complex numbers"))
        else:
            number, message = _literal_value(segment)
            if number is None:
                self.add(_Violation(start, len(segment), message, segment))

    def check_exponent(self, exponent: ast.expr) -> None:
        start, _ = self.source.span(exponent)
        segment = self.source.segment(exponent)
        value = exponent.value if isinstance(exponent, ast.Constant) else None
        if not isinstance(value, int) or isinstance(value, bool):
            message = (
                f"exponent {_shown(segment)} must be a whole number written out, "
                f"from 0 to {LIMITS.exponent} (like s**2)"
            )
            self.add(_Violation(start, len(segment), message, segment))
        elif value > LIMITS.exponent:
            message = f"exponent {segment} is too large; at most {LIMITS.exponent} is allowed"
            self.add(_Violation(start, len(segment), message, segment))

    def check_call(self, node: ast.Call, skip: set[int]) -> None:
        src = self.source
        func = node.func
        if not isinstance(func, ast.Name):
            # The callee is refused on its own (attribute, lambda, ...) or is arithmetic
            # that cannot be called: `(M+N)(2)`.
            start, _ = src.span(func)
            self.add(_not_allowed(start, src.segment(func), f"only {_FUNCTION_LIST} can be called"))
            return
        skip.add(id(func))  # the name is a function, not a symbol
        start, _ = src.span(func)
        if func.id not in self.functions:
            message = f"function {func.id!r} is not allowed (allowed: {_FUNCTION_LIST})"
            self.add(_Violation(start, len(func.id), message, func.id))
            return
        least, most = self.functions[func.id]
        if node.keywords or any(isinstance(arg, ast.Starred) for arg in node.args):
            return  # reported on their own; the count would be meaningless
        count = len(node.args)
        if count < least or (most is not None and count > most):
            if most is None:
                needs = f"at least {least} arguments"
            else:
                needs = f"exactly {least} argument" + ("s" if least != 1 else "")
            message = f"{func.id} takes {needs} ({count} given)"
            self.add(_Violation(start, len(func.id), message, func.id))
