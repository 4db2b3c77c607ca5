"""Formula text with names replaced by other formulas' text: a kernel's symbols by a
model step's shape, or a name the engine binds by its formula. Only tokenised, never
run: the result is parsed again by the safe parser."""

from __future__ import annotations

import io
import tokenize
from collections.abc import Mapping


def substituted(text: str, by_name: Mapping[str, str]) -> str:
    """`text` with each name of `by_name` replaced by its formula in parentheses and the
    rest as written. Raises `tokenize.TokenError` on text that does not tokenise."""
    starts = [0]
    for line in io.StringIO(text):
        starts.append(starts[-1] + len(line))
    out: list[str] = []
    done = 0
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.NAME and token.string in by_name:
            begin = starts[token.start[0] - 1] + token.start[1]
            out.append(text[done:begin])
            out.append(f"({by_name[token.string]})")
            done = starts[token.end[0] - 1] + token.end[1]
    out.append(text[done:])
    return "".join(out)
