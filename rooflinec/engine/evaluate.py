"""The one evaluation of counts: a kernel's formulas with a shape and the widths bound.

A count (operations, or bytes at one level) is a kernel formula evaluated at a shape, with
`w` bound to the bytes per value of the precision evaluated and each of the kernel's own
width symbols bound to the precision a case or step names (else `w`). `compile`, the
grids, the models and the spec validators all bind widths with `width_values` and judge a
count with `count_problem`, so a count the validators accept is one the engine computes,
and the limit on a count is written once (`MAX_COUNT`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

from rooflinec.engine.exact import integral
from rooflinec.formulas import WIDTH, Formula, bulk_evaluate

if TYPE_CHECKING:
    from rooflinec.catalog import Precision

__all__ = [
    "INT64_ROWS",
    "MAX_COUNT",
    "bound_widths",
    "collective_runs",
    "count_problem",
    "evaluate_counts",
    "width_values",
]

#: Operations or bytes of one call; more is a typo, not a kernel.
MAX_COUNT = 10**40


def count_problem(value: Fraction | int) -> str | None:
    """Why a count cannot be a count (`is not positive`, `is implausibly large`), or None."""
    if value <= 0:
        return "is not positive"
    if value > MAX_COUNT:
        return "is implausibly large"
    return None


def collective_runs(shape: Mapping[str, int], count: int) -> bool:
    """Whether a collective step at this shape and count is evaluated: a group of one
    chip (`n` = 1) or a count of 0 moves nothing and is left out of the pass."""
    return shape.get("n", 1) > 1 and count > 0


def width_values(
    symbols: Iterable[str],
    width: Fraction,
    bound: Mapping[str, str],
    precisions: Mapping[str, Precision],
) -> dict[str, int | Fraction]:
    """`w` and each of a kernel's width `symbols` at the precision width `width`: a symbol
    bound to a precision takes its bytes per value, an unbound one `w`. A whole number of
    bytes is an int: the same exact value, and formulas evaluate several times faster on
    ints than on Fractions."""
    out: dict[str, int | Fraction] = {WIDTH: integral(width)}
    for name in symbols:
        pid = bound.get(name)
        out[name] = (
            out[WIDTH] if pid is None or pid not in precisions else integral(precisions[pid].bytes)
        )
    return out


def bound_widths(
    symbols: Iterable[str], bound: Mapping[str, str], precisions: Mapping[str, Precision]
) -> dict[str, Fraction]:
    """Only the width symbols a case or step binds, with their precisions' bytes per value
    (what `evaluate_counts` takes per shape)."""
    return {
        name: precisions[pid].bytes
        for name in symbols
        if (pid := bound.get(name)) is not None and pid in precisions
    }


def evaluate_counts(
    formula: Formula,
    shapes: Sequence[Mapping[str, int]],
    widths: Sequence[Fraction],
    bound: Sequence[Mapping[str, Fraction]] | None = None,
) -> list[list[Fraction]]:
    """The formula at every shape and every width, exactly: result[shape][width].

    `bound[i]` holds the width symbols shape `i` binds to a precision's bytes; every
    other width symbol (and `w`) takes the evaluated width. A formula without width
    symbols is evaluated once per shape.
    """
    widthlike = formula.reserved
    names = sorted(formula.symbols - widthlike)
    n = len(shapes)
    many = n * len(widths) >= INT64_ROWS
    if not widthlike:
        plain = {name: [s[name] for s in shapes] for name in names}
        values = (_int64_counts(formula, plain) if many else None) or bulk_evaluate(formula, plain)
        return [[v] * len(widths) for v in values]
    columns: dict[str, list[int | Fraction]] = {}
    for name in names:
        column: list[int | Fraction] = [s[name] for s in shapes]
        columns[name] = column * len(widths)
    exact_widths = [integral(w) for w in widths]
    for name in widthlike:
        if name == WIDTH or bound is None:
            columns[name] = [w for w in exact_widths for _ in range(n)]
        else:
            fixed = [bound[i].get(name) for i in range(n)]
            columns[name] = [w if b is None else integral(b) for w in exact_widths for b in fixed]
    flat = (_int64_counts(formula, columns) if many else None) or bulk_evaluate(formula, columns)
    return [[flat[k * n + i] for k in range(len(widths))] for i in range(n)]


#: From this many counts of one formula (shapes × widths) on, `evaluate_counts` tries
#: numpy's int64 first: below it, importing numpy would cost more than it saves (and
#: `check` of a catalog of hand-written cases loads no numpy).
INT64_ROWS = 1000


def _int64_counts(
    formula: Formula, columns: Mapping[str, Sequence[int | Fraction]]
) -> list[Fraction] | None:
    """The formula over `columns` by `rooflinec.formulas.vectorised.evaluate_int64`,
    exactly the exact engine's values; None where it declines (a width that is no
    whole number of bytes, a count past int64's safe range, a quotient with a remainder
    outside `ceil` and `floor`, a division by zero), for the exact engine to evaluate."""
    if any(type(v) is not int for column in columns.values() for v in column):
        return None
    import numpy as np

    from rooflinec.formulas.vectorised import evaluate_int64

    try:
        arrays = {name: np.array(column, dtype=np.int64) for name, column in columns.items()}
    except OverflowError:
        return None
    found = evaluate_int64(formula, arrays, {})
    return None if found is None else [Fraction(v) for v in found.tolist()]
