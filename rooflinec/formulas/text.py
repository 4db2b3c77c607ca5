"""Cheap checks of the formula text, before `ast.parse` may see it."""

from __future__ import annotations

from typing import Final

from rooflinec.formulas.errors import FormulaError
from rooflinec.formulas.limits import LIMITS

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
