"""The safe formula engine: kernel formulas as text -> a validated tree -> exact numbers.

Kernel specs give operation and byte counts as formulas (`2*M*N*K`,
`w*(M*K + K*N + M*N)`, `ceil(M/128)*128`). Spec text comes from pull requests, so it
is never handed to `eval`, `exec`, `sympify` or `parse_expr` (sympy's parsers run
Python). Instead:

1. cheap text checks run first (length, characters, parenthesis nesting), because
   `ast.parse` itself recurses and must never see a pathological input;
2. `ast.parse(text, mode="eval")` builds a syntax tree (nothing is compiled to code
   or run);
3. every node is checked against a whitelist, and the first offending token in
   reading order is reported with its column;
4. the tree is converted into a small private tree (`_Sum`, `_Prod`, ...) whose
   same-operator chains (`a + b - c`, `a * b / c`) are flattened, so the nesting
   depth of the tree is what the author wrote, not the number of terms.

From that tree come: exact evaluation by a tree of closures over `int`/`Fraction`
(no sympy at evaluation time), a LaTeX rendering in the author's term order, and,
lazily, a sympy expression with explicit `Symbol`s (so `N`, `S`, `E`, `I`, `O`, `Q`
are plain user symbols). Parsing, evaluation and LaTeX never import sympy, which
costs ~0.5 s: `rooflinec check` validates formulas without it.

Every limit below exists to keep work bounded: a formula cannot make evaluation
allocate unbounded integers (exponents are small literals and nested powers are
capped in total), recurse deeply, or run any code.
"""

from __future__ import annotations

import ast
import math
import operator
import re
import warnings
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, Final, Literal, TypeAlias, TypeVar, cast

from rooflinec.errors import RooflinecError

if TYPE_CHECKING:
    import sympy

__all__ = [
    "FUNCTIONS",
    "LIMITS",
    "EvaluationError",
    "Formula",
    "FormulaError",
    "FormulaLimits",
    "bulk_evaluate",
    "parse_formula",
    "to_sympy",
]


# --------------------------------------------------------------------------- limits


@dataclass(frozen=True)
class FormulaLimits:
    """Bounds on what a formula may be; each keeps parsing and evaluation cheap."""

    text_length: int = 1000
    """Characters in the formula text."""
    nodes: int = 400
    """Numbers, symbols, operations and calls in the syntax tree."""
    depth: int = 40
    """Nesting, counted as parentheses in the text and as levels of the tree (a chain
    `a + b + c` is one level, so long sums and products are not penalised)."""
    exponent: int = 64
    """Largest literal exponent; `M**M` or `2**(M)` could allocate without bound."""
    nested_exponent: int = 64
    """Largest product of the exponents of nested powers: `((M**64)**64)**64` would
    otherwise be M**262144 and eat memory even though each exponent is small."""
    literal: int = 10**18
    """Largest integer literal."""
    literal_digits: int = 18
    """Most digits in a decimal literal."""
    result: int = 10**60
    """Largest magnitude of an evaluated result; beyond it a spec is surely wrong."""


LIMITS: Final = FormulaLimits()

#: The functions a formula may call, with their arity (minimum, maximum or None).
FUNCTIONS: Final[Mapping[str, tuple[int, int | None]]] = {
    "min": (2, None),
    "max": (2, None),
    "ceil": (1, 1),
    "floor": (1, 1),
}
_FUNCTION_LIST: Final = ", ".join(FUNCTIONS)

_FunctionName: TypeAlias = Literal["min", "max", "ceil", "floor"]


# --------------------------------------------------------------------------- errors


class FormulaError(RooflinecError, ValueError):
    """A formula that cannot be accepted, with the offending token and its column.

    `column` is a 0-based offset into the formula text, so a caller that knows where
    the YAML value starts can point at file:line:col. `token` is the offending text,
    or None when the problem concerns the whole formula (too long, empty).
    It is a `ValueError` for callers that only know the standard library and a
    `RooflinecError` so that an uncaught one is printed in one line by the CLI.
    """

    def __init__(self, message: str, column: int = 0, token: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.column = column
        self.token = token

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.message!r}, column={self.column}, token={self.token!r})"
        )

    def __reduce__(self) -> tuple[type[FormulaError], tuple[str, int, str | None]]:
        # The default reduce passes only `args` (the message): keep column and token.
        return (type(self), (self.message, self.column, self.token))


class EvaluationError(FormulaError):
    """A formula that parsed but cannot be evaluated with the given values.

    Division by zero (column and token name the divisor), a result larger than
    `LIMITS.result` in magnitude, a missing value or a value that is not an `int` or
    a `Fraction`. `row` is the 0-based row when raised by `bulk_evaluate`.
    """

    def __init__(
        self, message: str, column: int = 0, token: str | None = None, row: int | None = None
    ) -> None:
        super().__init__(message, column, token)
        self.row = row

    def __reduce__(self) -> tuple[type[FormulaError], tuple[str, int, str | None]]:
        # `row` is set after construction by bulk_evaluate; it does not survive pickling.
        return (type(self), (self.message, self.column, self.token))


# --------------------------------------------------------------------------- private tree

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


# --------------------------------------------------------------------------- text checks

# Printable ASCII plus tab and newline. Restricting to ASCII makes the AST's byte
# offsets equal to character offsets and avoids NFKC-normalised identifiers (`ﬁ` is
# read as `fi`). `#` is refused because a comment would hide text from the checks.
_ALLOWED_CHARS: Final = frozenset(chr(c) for c in range(0x20, 0x7F)) - {"#"} | {"\t", "\n"}
_OPENERS: Final = {"(": ")", "[": "]", "{": "}"}
_CLOSERS: Final = frozenset(_OPENERS.values())


def _check_text(text: str) -> None:
    """Refuse what must never reach `ast.parse`: huge, empty, odd characters, deep nesting."""
    if len(text) > LIMITS.text_length:
        raise FormulaError(
            f"formula is {len(text)} characters long; at most {LIMITS.text_length} are allowed"
        )
    if not text.strip():
        raise FormulaError("formula is empty")
    for i, ch in enumerate(text):
        if ch not in _ALLOWED_CHARS:
            if ch == "#":
                why = "comments"
            elif ord(ch) > 0x7E:
                why = "only ASCII characters"
            else:
                why = "control characters"
            raise FormulaError(f"{ch!r} is not allowed in a formula ({why})", i, ch)
    # Scan bracket nesting here: CPython's parser recurses on nesting and gives up at
    # 200 levels with a less helpful message; 5,000 levels must cost nothing.
    stack: list[int] = []
    for i, ch in enumerate(text):
        if ch in _OPENERS:
            stack.append(i)
            if len(stack) > LIMITS.depth:
                raise FormulaError(f"formula nests brackets more than {LIMITS.depth} deep", i, ch)
        elif ch in _CLOSERS:
            if not stack:
                raise FormulaError(f"unmatched {ch!r}", i, ch)
            stack.pop()
    if stack:
        i = stack[-1]
        raise FormulaError(f"{text[i]!r} is never closed", i, text[i])


class _Source:
    """Maps AST positions (line, byte offset in the stripped text) to text offsets."""

    def __init__(self, text: str, lead: int) -> None:
        self.text = text
        self.lead = lead
        starts = [0]
        for i, ch in enumerate(text[lead:]):
            if ch == "\n":
                starts.append(i + 1)
        self.line_starts = starts

    def offset(self, lineno: int | None, col: int | None) -> int:
        if lineno is None or col is None or lineno < 1:
            return 0
        line = min(lineno, len(self.line_starts)) - 1
        return min(self.lead + self.line_starts[line] + max(col, 0), len(self.text))

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.offset(getattr(node, "lineno", None), getattr(node, "col_offset", None))
        end = self.offset(getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None))
        return start, max(start, end)

    def segment(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.text[start:end]

    def between(self, left: ast.AST, right: ast.AST) -> tuple[int, str]:
        """The operator token between two operands (`//` in `(M) // (N)`) and its column."""
        start = self.span(left)[1]
        end = self.span(right)[0]
        gap = self.text[start:end]
        junk = " \t\n\\()"
        stripped = gap.lstrip(junk)
        column = start + len(gap) - len(stripped)
        token = stripped.rstrip(junk)
        return (column, token) if token else (start, gap)


_TOKEN_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9][0-9_.]*|\.[0-9_]+|\*\*|//|\S")


def _token_at(text: str, column: int) -> str | None:
    """The token starting at `column` (a name, a number, `**`, `//` or one character)."""
    match = _TOKEN_RE.match(text, column)
    return match.group() if match else None


def _parse_ast(text: str) -> tuple[ast.expr, _Source]:
    """`ast.parse` in eval mode (builds a tree, runs nothing), with positions mapped back."""
    # Leading whitespace is an IndentationError in eval mode; parse without it and
    # add its length back to every column.
    body = text.lstrip(" \t\n")
    lead = len(text) - len(body)
    source = _Source(text, lead)
    try:
        with warnings.catch_warnings():
            # Invalid escapes in (refused) strings warn; with -W error they would raise.
            warnings.simplefilter("ignore")
            tree = ast.parse(body, mode="eval")
    except SyntaxError as exc:
        raise _syntax_error(exc, source) from None
    except (RecursionError, MemoryError, ValueError, OverflowError):
        raise FormulaError("formula is too complex to parse") from None
    return tree.body, source


def _syntax_error(exc: SyntaxError, source: _Source) -> FormulaError:
    text = source.text
    if exc.offset is None or exc.offset < 1:
        column = len(text.rstrip())
    else:
        column = source.offset(exc.lineno, exc.offset - 1)
    while column < len(text) and text[column].isspace() and text[column:].strip():
        column += 1  # point at the next token, not at the blank before it
    token = _token_at(text, column)
    where = f"at {token!r}" if token is not None else "at the end"
    hint = ""
    before = text[:column].rstrip()
    follows_operand = bool(before) and (before[-1].isalnum() or before[-1] in "._)")
    if token is not None and follows_operand and (token.isalnum() or token in "_("):
        hint = "; write '*' between factors"
    if "decimal literal" in (exc.msg or ""):
        hint = "; write '*' between a number and a name"
    if token is None or not text[column:].strip():
        hint = "; the formula ends too early"
    return FormulaError(f"invalid formula syntax {where}{hint}", column, token)


# --------------------------------------------------------------------------- whitelist

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


def _shown(token: str) -> str:
    """A token as quoted in a message: repr-quoted, cut short if very long."""
    if len(token) > 40:
        token = token[:37] + "..."
    return repr(token)


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


def _walk(root: ast.AST) -> Iterator[ast.AST]:
    """Every node under `root`, iteratively (like `ast.walk`, which imports on each call)."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(ast.iter_child_nodes(node))


class _Checker:
    """Finds every refused construct in the syntax tree, without recursion."""

    def __init__(self, source: _Source, known: Collection[str], declared_note: str) -> None:
        self.source = source
        self.known = known
        self.declared_note = declared_note
        self.found: list[_Violation] = []

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
        if func.id not in FUNCTIONS:
            message = f"function {func.id!r} is not allowed (allowed: {_FUNCTION_LIST})"
            self.add(_Violation(start, len(func.id), message, func.id))
            return
        least, most = FUNCTIONS[func.id]
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


# --------------------------------------------------------------------------- conversion


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


def _declared_note(declared: Collection[str], reserved: Collection[str]) -> str:
    names = ", ".join(sorted(declared)) if declared else "none"
    parts = [f"declared: {names}"]
    for name in sorted(reserved):
        parts.append("w is the bytes per value" if name == "w" else f"{name} is reserved")
    return "; ".join(parts)


def parse_formula(
    text: str, symbols: Collection[str], *, reserved: Collection[str] = ("w",)
) -> Formula:
    """Parse and validate a formula over the declared `symbols` and the `reserved` names.

    Raises `FormulaError` naming the offending token and its column. Reserved names
    (by default `w`, the bytes per value) are positive rationals; declared symbols are
    positive integers. A name both declared and reserved counts as reserved.
    Never imports sympy and never runs code from the text.
    """
    if not isinstance(text, str):
        raise TypeError(f"formula text must be a str, not {type(text).__name__}")
    if isinstance(symbols, str):
        # A str is a Collection[str] of letters: "Nb" would declare N and b.
        raise TypeError("symbols must be a collection of names, not a str")
    _check_text(text)
    root, source = _parse_ast(text)
    count = sum(1 for node in _walk(root) if isinstance(node, (ast.expr, ast.keyword)))
    if count > LIMITS.nodes:
        raise FormulaError(
            f"formula is too large: {count} numbers, symbols and operations; "
            f"at most {LIMITS.nodes} are allowed"
        )
    reserved_set = frozenset(reserved)
    known = frozenset(symbols) | reserved_set
    violation = _Checker(source, known, _declared_note(symbols, reserved_set)).first(root)
    if violation is not None:
        raise FormulaError(violation.message, violation.column, violation.token)
    tree = _Builder(source).build(root)
    positions: dict[str, int] = {}
    callees = {id(node.func) for node in _walk(root) if isinstance(node, ast.Call)}
    for node in _walk(root):
        if isinstance(node, ast.Name) and node.id in known and id(node) not in callees:
            column = source.span(node)[0]
            positions[node.id] = min(column, positions.get(node.id, column))
    used = frozenset(positions)
    return Formula(
        text=text,
        symbols=used,
        reserved=used & reserved_set,
        _tree=tree,
        _positions=positions,
    )


# --------------------------------------------------------------------------- evaluation

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


# --------------------------------------------------------------------------- LaTeX

_GREEK: Final = frozenset(
    (
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "zeta",
        "eta",
        "theta",
        "iota",
        "kappa",
        "mu",
        "nu",
        "xi",
        "pi",
        "rho",
        "sigma",
        "tau",
        "upsilon",
        "phi",
        "chi",
        "psi",
        "omega",
        "Gamma",
        "Delta",
        "Theta",
        "Xi",
        "Pi",
        "Sigma",
        "Upsilon",
        "Phi",
        "Psi",
        "Omega",
    )
)
_NAME_DIGITS_RE: Final = re.compile(r"([A-Za-z]+)([0-9]+)")


def _tex_name(name: str) -> str:
    """A symbol name in LaTeX: `M`, `\\alpha`, `x_{1}`, `d_{\\mathrm{model}}`, `\\mathit{Nb}`."""
    if len(name) == 1:
        return name
    if name in _GREEK:
        return "\\" + name
    match = _NAME_DIGITS_RE.fullmatch(name)
    if match:
        return f"{_tex_name(match[1])}_{{{match[2]}}}"
    base, _, sub = name.partition("_")
    if base and sub and "_" not in sub:
        shown = sub if len(sub) == 1 or sub.isdigit() else f"\\mathrm{{{sub}}}"
        return f"{_tex_name(base)}_{{{shown}}}"
    escaped = name.replace("_", "\\_")
    return f"\\mathit{{{escaped}}}"


def _paren(tex: str) -> str:
    return f"\\left({tex}\\right)"


def _tex(node: _Node) -> str:
    """LaTeX for a node, in the author's order, with only the parentheses needed."""
    if isinstance(node, _Num):
        text = node.text
        if text.startswith("."):
            text = "0" + text
        return text.rstrip(".") if text.endswith(".") else text
    if isinstance(node, _Sym):
        return _tex_name(node.name)
    if isinstance(node, _Neg):
        inner = _tex(node.operand)
        return "-" + (_paren(inner) if isinstance(node.operand, (_Sum, _Neg)) else inner)
    if isinstance(node, _Pow):
        base = _tex(node.base)
        if not isinstance(node.base, (_Num, _Sym, _Call)):
            base = _paren(base)
        return f"{base}^{{{node.exponent}}}"
    if isinstance(node, _Call):
        args = [_tex(arg) for arg in node.args]
        if node.name == "ceil":
            return f"\\left\\lceil {args[0]} \\right\\rceil"
        if node.name == "floor":
            return f"\\left\\lfloor {args[0]} \\right\\rfloor"
        return f"\\{node.name}\\left({', '.join(args)}\\right)"
    if isinstance(node, _Sum):
        out = _tex(node.terms[0][1])
        for negated, term in node.terms[1:]:
            tex = _tex(term)
            # Keep the author's grouping `M - (N - K)` and avoid `M + -N`.
            if isinstance(term, (_Sum, _Neg)):
                tex = _paren(tex)
            out += (" - " if negated else " + ") + tex
        return out
    return _tex_product(node)


def _tex_product(node: _Prod) -> str:
    """`a*b/c*d` -> `\\frac{a b}{c} d`: each run of divisors closes a fraction."""
    pieces: list[str] = []
    numerator: list[_Node] = []
    denominator: list[_Node] = []

    def group(nodes: list[_Node], first: bool) -> str:
        if len(nodes) == 1 and not first:
            # Alone in a numerator or denominator: the fraction bar groups it.
            return _tex(nodes[0])
        parts = []
        for i, item in enumerate(nodes):
            tex = _tex(item)
            leading = first and i == 0
            if isinstance(item, _Sum) or (isinstance(item, _Neg) and not leading):
                tex = _paren(tex)
            elif (
                isinstance(item, _Prod) and not leading and not any(f.divide for f in item.factors)
            ):
                tex = _paren(tex)  # the author grouped `2*(M*N)`
            parts.append(tex)
        return _join_factors(parts)

    def flush() -> None:
        if denominator:
            top = group(numerator, first=False)
            bottom = group(denominator, first=False)
            pieces.append(f"\\frac{{{top}}}{{{bottom}}}")
        elif numerator:
            pieces.append(group(numerator, first=not pieces))

    for factor in node.factors:
        if factor.divide:
            denominator.append(factor.node)
        else:
            if denominator:
                flush()
                numerator, denominator = [], []
            numerator.append(factor.node)
    flush()
    return _join_factors(pieces)


def _join_factors(parts: list[str]) -> str:
    """Juxtapose factors, with `\\cdot` where a number follows (`M \\cdot 2`, not `M 2`)."""
    out = parts[0]
    for part in parts[1:]:
        out += (" \\cdot " if part[:1].isdigit() else " ") + part
    return out


# --------------------------------------------------------------------------- sympy


def _to_sympy(node: _Node, symbols: Mapping[str, sympy.Symbol]) -> sympy.Expr:
    import sympy  # lazy: ~0.5 s, only for this

    def make(build: Callable[[bool], sympy.Expr], constant: bool) -> sympy.Expr:
        # evaluate=False keeps the author's structure (sympy would sort and merge terms).
        # Symbol-free parts are evaluated, though: `subs` never rebuilds them, and an
        # unevaluated exact zero such as `1 - 1` inside Min/Max makes sympy raise
        # "not comparable" (its evalf gives 0.e-110). If evaluating fails (Min of zoo,
        # from a constant division by zero) the part stays unevaluated.
        if constant:
            try:
                return build(True)
            except (ValueError, TypeError, ZeroDivisionError):
                pass
        return build(False)

    def negate(expr: sympy.Expr) -> Callable[[bool], sympy.Expr]:
        return lambda ev: sympy.Mul(sympy.S.NegativeOne, expr, evaluate=ev)

    def reciprocal(expr: sympy.Expr) -> Callable[[bool], sympy.Expr]:
        return lambda ev: sympy.Pow(expr, sympy.S.NegativeOne, evaluate=ev)

    def conv(n: _Node) -> tuple[sympy.Expr, bool]:
        """The sympy expression for `n` and whether it is free of symbols."""
        if isinstance(n, _Num):
            value = n.value
            if isinstance(value, int):
                return sympy.Integer(value), True
            return sympy.Rational(value.numerator, value.denominator), True
        if isinstance(n, _Sym):
            return symbols[n.name], False
        if isinstance(n, _Neg):
            inner, constant = conv(n.operand)
            if isinstance(inner, sympy.Number):
                return -inner, True
            return make(negate(inner), constant), constant
        if isinstance(n, _Pow):
            base, constant = conv(n.base)
            exponent = sympy.Integer(n.exponent)
            return make(lambda ev: sympy.Pow(base, exponent, evaluate=ev), constant), constant
        parts: list[sympy.Expr] = []
        constant = True
        if isinstance(n, _Call):
            for arg in n.args:
                expr, arg_constant = conv(arg)
                parts.append(expr)
                constant = constant and arg_constant
            if n.name in ("ceil", "floor"):
                func = sympy.ceiling if n.name == "ceil" else sympy.floor
                return make(lambda ev: func(parts[0], evaluate=ev), constant), constant
            minmax = sympy.Min if n.name == "min" else sympy.Max
            return make(lambda ev: minmax(*parts, evaluate=ev), constant), constant
        if isinstance(n, _Sum):
            for negated, term in n.terms:
                expr, term_constant = conv(term)
                if negated:
                    expr = make(negate(expr), term_constant)
                parts.append(expr)
                constant = constant and term_constant
            return make(lambda ev: sympy.Add(*parts, evaluate=ev), constant), constant
        for factor in n.factors:
            expr, factor_constant = conv(factor.node)
            if factor.divide:
                expr = make(reciprocal(expr), factor_constant)
            parts.append(expr)
            constant = constant and factor_constant
        return make(lambda ev: sympy.Mul(*parts, evaluate=ev), constant), constant

    return conv(node)[0]


def to_sympy(formula: Formula) -> sympy.Expr:
    """The formula as a sympy expression with explicit, assumption-laden Symbols.

    Built unevaluated, so the author's grouping survives as far as sympy allows
    (sympy still orders the arguments it prints); only symbol-free parts such as
    `1/3` are folded. Declared symbols are positive integers, reserved ones (`w`)
    positive rationals. Built from the validated tree, never from text; imports
    sympy on first use.
    """
    import sympy

    symbols = {
        name: sympy.Symbol(name, positive=True, rational=True)
        if name in formula.reserved
        else sympy.Symbol(name, positive=True, integer=True)
        for name in formula.symbols
    }
    return _to_sympy(formula._tree, symbols)


# --------------------------------------------------------------------------- Formula


@dataclass(frozen=True)
class Formula:
    """A validated formula. Make one with `parse_formula`, not directly.

    `symbols` are the names the formula uses (may include `w`); `reserved` are those
    of them that are reserved names (positive rationals rather than integers).
    Equality and hashing go by text and names.
    """

    text: str
    symbols: frozenset[str]
    reserved: frozenset[str]
    _tree: _Node = field(repr=False, compare=False)
    _positions: Mapping[str, int] = field(repr=False, compare=False)

    def __str__(self) -> str:
        return self.text

    def __getstate__(self) -> dict[str, object]:
        # Only the fields: cached closures cannot be pickled (multiprocessing, deepcopy)
        # and are rebuilt on first use.
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @cached_property
    def expr(self) -> sympy.Expr:
        """The sympy expression (see `to_sympy`), built and cached on first use."""
        return to_sympy(self)

    @cached_property
    def _names(self) -> tuple[str, ...]:
        return tuple(sorted(self.symbols))

    @cached_property
    def _by_name(self) -> _Fn[Mapping[str, _Value]]:
        def leaf(name: str) -> _Fn[Mapping[str, _Value]]:
            return cast(_Fn[Mapping[str, _Value]], operator.itemgetter(name))

        return _compile(self._tree, leaf)

    @cached_property
    def _by_position(self) -> _Fn[Sequence[_Value]]:
        """Symbols read from a row tuple in `_names` order: no dict per row in bulk."""
        index = {name: i for i, name in enumerate(self._names)}

        def leaf(name: str) -> _Fn[Sequence[_Value]]:
            return cast(_Fn[Sequence[_Value]], operator.itemgetter(index[name]))

        return _compile(self._tree, leaf)

    @cached_property
    def _evaluator(self) -> Callable[[Mapping[str, int | Fraction]], Fraction]:
        root = self._by_name
        checks = tuple((name, self._positions.get(name, 0)) for name in self._names)

        def evaluate(values: Mapping[str, int | Fraction]) -> Fraction:
            for name, column in checks:
                try:
                    value = values[name]
                except KeyError:
                    raise EvaluationError(f"no value for symbol {name!r}", column, name) from None
                if type(value) is not int and type(value) is not Fraction:
                    _check_value(name, value, column)
            return _finish(root(values))

        return evaluate

    def evaluator(self) -> Callable[[Mapping[str, int | Fraction]], Fraction]:
        """A compiled evaluator (closures over int/Fraction arithmetic, no sympy), cached."""
        return self._evaluator

    def evaluate(self, values: Mapping[str, int | Fraction]) -> Fraction:
        """The exact value for `values` (extra keys are ignored).

        Raises `EvaluationError` on division by zero, a missing or non-exact value, or
        a result beyond 10**60 in magnitude.
        """
        return self._evaluator(values)

    @cached_property
    def _latex(self) -> str:
        return _tex(self._tree)

    def latex(self) -> str:
        """LaTeX in the author's term order: `2*M*N*K` -> `2 M N K`; no sympy needed."""
        return self._latex


def bulk_evaluate(
    formula: Formula, columns: Mapping[str, Sequence[int | Fraction]]
) -> list[Fraction]:
    """Evaluate over many rows given as columns (symbol -> values), exactly.

    The number of rows is the common length of the columns given (extra columns are
    allowed; different lengths are an error). Rows are read as tuples by position,
    so no dict is built per row. An `EvaluationError` carries the failing `row`.
    """
    lengths = {len(column) for column in columns.values()}
    if len(lengths) > 1:
        raise EvaluationError(f"columns have different lengths: {sorted(lengths)}")
    rows = lengths.pop() if lengths else 0
    names = formula._names
    for name in names:
        column_values = columns.get(name)
        if column_values is None:
            raise EvaluationError(
                f"no column for symbol {name!r}", formula._positions.get(name, 0), name
            )
        for value in column_values:
            if type(value) is not int and type(value) is not Fraction:
                _check_value(name, value, formula._positions.get(name, 0))
    if rows == 0:
        return []
    if not names:
        return [formula.evaluate({})] * rows
    fn = formula._by_position
    out: list[Fraction] = []
    append = out.append
    limit = LIMITS.result
    try:
        for row in zip(*(columns[name] for name in names), strict=True):
            result = fn(row)
            # Inline `_finish` for the common int case: this loop is the hot path.
            if type(result) is int and -limit <= result <= limit:
                append(Fraction(result))
            else:
                append(_finish(result))
    except EvaluationError as exc:
        exc.row = len(out)
        raise
    return out
