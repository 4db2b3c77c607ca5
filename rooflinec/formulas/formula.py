"""`Formula`: a validated formula, evaluated, printed and converted on demand."""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, cast

from rooflinec.formulas.errors import EvaluationError
from rooflinec.formulas.evaluate import _check_value, _compile, _finish, _Fn
from rooflinec.formulas.latex import _tex
from rooflinec.formulas.limits import LIMITS
from rooflinec.formulas.symbolic import tree_to_sympy
from rooflinec.formulas.tree import _Node, _Value, tree_degree

if TYPE_CHECKING:
    import sympy


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
        """Closures over int/Fraction arithmetic (no sympy), compiled once per formula."""
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

    def evaluate(self, values: Mapping[str, int | Fraction]) -> Fraction:
        """The exact value for `values` (extra keys are ignored).

        Raises `EvaluationError` on division by zero, a missing or non-exact value, or
        a result beyond 10**60 in magnitude.
        """
        return self._evaluator(values)

    def degree(self, degrees: Mapping[str, int]) -> int | None:
        """The formula's degree as a polynomial in one variable whatever the other
        symbols' values, given each symbol's own degree in it (`degrees`; a symbol not
        named there is of degree 0). None: not a polynomial in it (the variable inside
        `ceil`, `min` or a divisor). A bound: terms may cancel to a lower degree."""
        return tree_degree(self._tree, degrees)

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


def to_sympy(formula: Formula) -> sympy.Expr:
    """The formula as a sympy expression with explicit, assumption-laden Symbols.

    Built unevaluated, so the author's grouping survives as far as sympy allows
    (sympy still orders the arguments it prints); only symbol-free parts such as
    `1/3` are folded. Declared symbols are positive integers, reserved ones (`w`)
    positive rationals. Built from the validated tree, never from text; imports
    sympy on first use.
    """
    return tree_to_sympy(formula._tree, formula.symbols, formula.reserved)
