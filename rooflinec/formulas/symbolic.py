"""The private tree as a sympy expression; sympy is imported lazily, only here."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING

from rooflinec.formulas.tree import _Call, _Neg, _Node, _Num, _Pow, _Sum, _Sym

if TYPE_CHECKING:
    import sympy

    # Negates or inverts a converted part, building it evaluated or not (see `make`).
    _Wrap = Callable[[sympy.Expr], Callable[[bool], sympy.Expr]]


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
        if isinstance(n, _Call):
            parts, constant = conv_all((arg, None) for arg in n.args)
            if n.name in ("ceil", "floor"):
                func = sympy.ceiling if n.name == "ceil" else sympy.floor
                return make(lambda ev: func(parts[0], evaluate=ev), constant), constant
            if n.name == "unpicked":
                e, k, t = parts
                return (
                    make(lambda ev: sympy.Pow((e - k) / e, t, evaluate=ev), constant),
                    constant,
                )
            if n.name == "unreached":
                e, k, g = parts
                return (
                    make(
                        lambda ev: sympy.Mul(
                            sympy.binomial(e - g, k, evaluate=ev),
                            sympy.Pow(sympy.binomial(e, k, evaluate=ev), -1, evaluate=ev),
                            evaluate=ev,
                        ),
                        constant,
                    ),
                    constant,
                )
            minmax = sympy.Min if n.name == "min" else sympy.Max
            return make(lambda ev: minmax(*parts, evaluate=ev), constant), constant
        if isinstance(n, _Sum):
            parts, constant = conv_all((term, negate if neg else None) for neg, term in n.terms)
            return make(lambda ev: sympy.Add(*parts, evaluate=ev), constant), constant
        parts, constant = conv_all((f.node, reciprocal if f.divide else None) for f in n.factors)
        return make(lambda ev: sympy.Mul(*parts, evaluate=ev), constant), constant

    def conv_all(children: Iterable[tuple[_Node, _Wrap | None]]) -> tuple[list[sympy.Expr], bool]:
        """The children converted, each negated or inverted by its wrap; all symbol-free?"""
        parts: list[sympy.Expr] = []
        constant = True
        for child, wrap in children:
            expr, child_constant = conv(child)
            if wrap is not None:
                expr = make(wrap(expr), child_constant)
            parts.append(expr)
            constant = constant and child_constant
        return parts, constant

    return conv(node)[0]


def tree_to_sympy(tree: _Node, names: Iterable[str], reserved: Collection[str]) -> sympy.Expr:
    """A validated tree as a sympy expression (see `rooflinec.formulas.formula.to_sympy`)."""
    import sympy

    symbols = {
        name: sympy.Symbol(name, positive=True, rational=True)
        if name in reserved
        else sympy.Symbol(name, positive=True, integer=True)
        for name in names
    }
    return _to_sympy(tree, symbols)
