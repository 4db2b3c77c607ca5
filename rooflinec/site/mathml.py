"""Formulas as MathML, rendered by the browser itself: no math library, no CDN, no JavaScript.

`Formula.latex()` writes a small, fixed subset of LaTeX (identifiers, numbers, `+ - ,`,
`\\frac`, `^{}`, `_{}`, `\\mathit`, `\\mathrm`, `\\left( \\right)`, ceil/floor brackets,
`\\min`/`\\max`, `\\cdot`, Greek letters). This module turns exactly that subset into
presentation MathML, which current browsers draw natively. Anything outside it gives
`None`, and the page then shows the formula as text only (it always shows the text and
the LaTeX source as well).
"""

from __future__ import annotations

import html
import re

__all__ = ["latex_to_mathml"]

_GREEK = {
    "alpha": "α",
    "beta": "β",
    "gamma": "γ",
    "delta": "δ",
    "epsilon": "ε",
    "zeta": "ζ",
    "eta": "η",
    "theta": "θ",
    "iota": "ι",
    "kappa": "κ",
    "lambda": "λ",
    "mu": "μ",
    "nu": "ν",
    "xi": "ξ",
    "pi": "π",
    "rho": "ρ",
    "sigma": "σ",
    "tau": "τ",
    "upsilon": "υ",
    "phi": "φ",
    "chi": "χ",
    "psi": "ψ",
    "omega": "ω",
    "Gamma": "Γ",
    "Delta": "Δ",
    "Theta": "Θ",
    "Xi": "Ξ",
    "Pi": "Π",
    "Sigma": "Σ",
    "Upsilon": "Υ",
    "Phi": "Φ",
    "Psi": "Ψ",
    "Omega": "Ω",
}
_FENCES = {
    "(": ("(", ")"),
    "\\lceil": ("⌈", "⌉"),
    "\\lfloor": ("⌊", "⌋"),
}
_TOKEN = re.compile(
    r"\s*(?:(?P<cmd>\\(?:[A-Za-z]+|_))|(?P<num>[0-9]+(?:\.[0-9]+)?)|(?P<letter>[A-Za-z])"
    r"|(?P<sym>[{}()^_+\-,]))"
)
_MAX_LENGTH = 4000
_FUNCTION = re.compile(r'^<mi mathvariant="normal">(?:min|max)</mi>$')
_WORD = re.compile(r"^(?:<m(?:sub|sup|row)>)*<mi>[^<]{2,}</mi>")


def _is_operand(item: str) -> bool:
    return not item.startswith("<mo")


class _Unsupported(Exception):
    pass


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        text = text.rstrip()
        while pos < len(text):
            match = _TOKEN.match(text, pos)
            if match is None or match.end() == pos:
                raise _Unsupported(text[pos:])
            kind = match.lastgroup or ""
            self.tokens.append((kind, match.group(kind)))
            pos = match.end()
        self.pos = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise _Unsupported("unexpected end")
        self.pos += 1
        return token

    def expect(self, value: str) -> None:
        if self.take()[1] != value:
            raise _Unsupported(value)

    def sequence(self, stop: set[str]) -> str:
        """Items up to (not including) a token whose text is in `stop`, as one mrow."""
        items: list[str] = []
        while True:
            token = self.peek()
            if token is None or token[1] in stop:
                break
            item = self.item()
            if items and _is_operand(items[-1]) and _is_operand(item):
                # Implicit multiplication: a visible dot between words (`peak · share`),
                # invisible times between letters and numbers (`2MNK`, as printed).
                if _FUNCTION.match(items[-1]):
                    items.append("<mo>\u2061</mo>")
                elif _WORD.search(items[-1]) or _WORD.search(item):
                    items.append("<mo>·</mo>")
                else:
                    items.append("<mo>\u2062</mo>")
            items.append(item)
        return "<mrow>" + "".join(items) + "</mrow>"

    def group(self) -> str:
        self.expect("{")
        inner = self.sequence({"}"})
        self.expect("}")
        return inner

    def text_group(self) -> str:
        """The raw text of `{...}` for \\mathit/\\mathrm: letters, digits, escaped `_`."""
        self.expect("{")
        out = ""
        while True:
            kind, value = self.take()
            if value == "}":
                return out
            if value == "\\_":
                out += "_"
            elif kind in ("letter", "num"):
                out += value
            else:
                raise _Unsupported(value)

    def item(self) -> str:
        base = self.atom()
        while True:
            token = self.peek()
            if token is None or token[1] not in ("^", "_"):
                return base
            op = self.take()[1]
            script = self.group()
            base = f"<msup>{base}{script}</msup>" if op == "^" else f"<msub>{base}{script}</msub>"

    def atom(self) -> str:
        kind, value = self.take()
        if kind == "num":
            return f"<mn>{value}</mn>"
        if kind == "letter":
            return f"<mi>{value}</mi>"
        if value in ("+", "-"):
            return f"<mo>{'−' if value == '-' else '+'}</mo>"
        if value == ",":
            return '<mo separator="true">,</mo>'
        if value == "{":
            self.pos -= 1
            return self.group()
        if kind != "cmd":
            raise _Unsupported(value)
        name = value[1:]
        if name == "frac":
            top = self.group()
            bottom = self.group()
            return f"<mfrac>{top}{bottom}</mfrac>"
        if name == "cdot":
            return "<mo>·</mo>"
        if name in ("min", "max"):
            return f'<mi mathvariant="normal">{name}</mi>'
        if name == "mathit":
            return f"<mi>{html.escape(self.text_group())}</mi>"
        if name == "mathrm":
            return f'<mi mathvariant="normal">{html.escape(self.text_group())}</mi>'
        if name == "left":
            return self.fenced()
        if name in _GREEK:
            return f"<mi>{_GREEK[name]}</mi>"
        raise _Unsupported(value)

    def fenced(self) -> str:
        value = self.take()[1]
        if value not in _FENCES:
            raise _Unsupported(value)
        opening, closing = _FENCES[value]
        inner = self.sequence({"\\right"})
        self.expect("\\right")
        close = self.take()[1]
        expected = {"(": ")", "\\lceil": "\\rceil", "\\lfloor": "\\rfloor"}[value]
        if close != expected:
            raise _Unsupported(close)
        return f"<mrow><mo>{opening}</mo>{inner}<mo>{closing}</mo></mrow>"


def latex_to_mathml(latex: str, *, display: bool = False) -> str | None:
    """Presentation MathML for the LaTeX subset `Formula.latex()` writes, or None."""
    if len(latex) > _MAX_LENGTH:
        return None
    try:
        parser = _Parser(latex)
        body = parser.sequence(set())
    except (_Unsupported, RecursionError):
        return None
    mode = ' display="block"' if display else ""
    return f"<math{mode}>{body}</math>"
