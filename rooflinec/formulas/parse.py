"""`parse_formula`: formula text to a validated `Formula`, through every check in order."""

from __future__ import annotations

import ast
from collections.abc import Collection

from rooflinec.formulas.convert import _Builder
from rooflinec.formulas.errors import FormulaError
from rooflinec.formulas.formula import Formula
from rooflinec.formulas.limits import LIMITS, WIDTH
from rooflinec.formulas.syntax import _parse_ast, _walk
from rooflinec.formulas.text import _check_text
from rooflinec.formulas.whitelist import _Checker


def _declared_note(declared: Collection[str], reserved: Collection[str]) -> str:
    names = ", ".join(sorted(declared)) if declared else "none"
    parts = [f"declared: {names}"]
    for name in sorted(reserved):
        parts.append("w is the bytes per value" if name == WIDTH else f"{name} is reserved")
    return "; ".join(parts)


def parse_formula(
    text: str,
    symbols: Collection[str],
    *,
    reserved: Collection[str] = (WIDTH,),
    engine: bool = False,
) -> Formula:
    """Parse and validate a formula over the declared `symbols` and the `reserved` names.

    Raises `FormulaError` naming the offending token and its column. Reserved names
    (by default `w`, the bytes per value) are positive rationals; declared symbols are
    positive integers. A name both declared and reserved counts as reserved.
    Never imports sympy and never runs code from the text. `engine`: a formula the
    engine writes (never spec text), which may call `ENGINE_FUNCTIONS` as well.
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
    note = _declared_note(symbols, reserved_set)
    violation = _Checker(source, known, note, engine=engine).first(root)
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
