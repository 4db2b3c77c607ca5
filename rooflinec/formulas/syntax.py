"""`ast.parse` of a formula, with AST positions mapped back to columns of its text.

Nothing is compiled to code or run: the syntax tree is only walked and checked.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Iterator
from typing import Final

from rooflinec.formulas.errors import FormulaError


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


def _walk(root: ast.AST) -> Iterator[ast.AST]:
    """Every node under `root`, iteratively (like `ast.walk`, which imports on each call)."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(ast.iter_child_nodes(node))
