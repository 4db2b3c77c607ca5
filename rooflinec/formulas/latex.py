"""LaTeX for the private tree, in the author's term order; no sympy needed."""

from __future__ import annotations

import re
from typing import Final

from rooflinec.formulas.tree import _Call, _Neg, _Node, _Num, _Pow, _Prod, _Sum, _Sym

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
        if node.name == "unpicked":
            e, k, n = args
            return f"\\left(\\frac{{{e} - {k}}}{{{e}}}\\right)^{{{n}}}"
        if node.name == "unreached":
            e, k, g = args
            return f"\\frac{{\\binom{{{e} - {g}}}{{{k}}}}}{{\\binom{{{e}}}{{{k}}}}}"
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
