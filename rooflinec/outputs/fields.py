"""The form of every field table: one `Field` per output of a row kind.

Each row kind has one table of fields, from which all its formats are written: kernel
cells (`rooflinec.outputs.results.FIELDS`), model rows and their steps
(`rooflinec.outputs.model_rows.MODEL_FIELDS`, `STEP_FIELDS`). A field names its JSON
key, CSV headers and table column once; the writers only lay the fields out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TextIO, TypeVar

from rooflinec.outputs.cells import aligned_lines

__all__ = ["Field", "Kind", "Progress", "Scope", "each", "write_rows_table"]

Scope = Literal["case", "count", "pair", "kernel_pair", "cell", "plan", "fit", "row", "step", "run"]
"""What a field's value is one of. Kernel cells: a case, a row of exact counts, a
(device, precision) pair, a (kernel, pair) or a cell. Model rows: the same for every
row of a plan (model, phase, precision), the same for every row of one memory fit (a
plan's deployment on a capacity), or one row's own. Model steps: the same for
every device (a plan's step) or one run's bound on a device."""
Kind = Literal["text", "number", "flag"]
S = TypeVar("S")  # what the values are read from
Progress = Callable[[int], None]
"""Told how many more rows were written, after each batch (a progress bar)."""


@dataclass(frozen=True)
class Field(Generic[S]):
    """One output: its JSON key, CSV headers, table column, and where its values come from.

    `values` gives one value per row of `scope` asked for: a string, bool, number or
    None, or for a field with `keys` a mapping from those keys (levels, sweep factors,
    limits) to them, missing keys meaning absent (JSON leaves them out, CSV leaves the
    cell empty). `kind` is the column type in CSV and Parquet (text, number or flag).

    A per-cell field also gives `vector`: for an int64 array of cells, one numpy array
    per header (float64 with NaN where absent, bool, or for a field with `choices`
    integer codes into them); the columnar writers read that instead of `values`.
    """

    key: str
    scope: Scope
    values: Callable[[S, Sequence[int]], list[Any]]
    headers: tuple[str, ...]
    keys: tuple[str, ...] = ()
    json: bool = True
    table: str | None = None  # the table's column header, when the table shows it
    show: Callable[[Any, str], str] = lambda value, counting: str(value)  # -> table text
    optional: bool = False  # JSON leaves the field out of a row where it is empty
    mapping: bool = False  # a mapping with its own keys (a shape): one CSV cell, `M=1 N=2`
    kind: Kind = "number"
    vector: Callable[[S, Any], list[Any]] | None = None
    choices: tuple[str, ...] = ()


def each(get: Callable[[Any], Any]) -> Callable[[Sequence[Any], Sequence[int]], list[Any]]:
    """A field's `values` from what it reads of one row."""

    def values(rows: Sequence[Any], at: Sequence[int]) -> list[Any]:
        return [get(rows[i]) for i in at]

    return values


def write_rows_table(
    fields: Sequence[Field[Any]],
    rows: Sequence[Any],
    units: Sequence[str],
    declared: Sequence[bool],
    unfit: Callable[[int, list[str]], None],
    noun: str,
    out: TextIO,
) -> None:
    """A readable table of model or request rows: row `n`'s values shown in `units[n]`,
    `unfit(n, line)` given each line to put its own text where a pass does not fit, and
    `*` marking a precision other than the model's own (`declared[n]` false)."""
    header = [str(f.table) for f in fields]
    at = range(len(rows))
    columns = [f.values(rows, at) for f in fields]
    precision = header.index("precision")
    table = [header]
    for n, unit in enumerate(units):
        line = [f.show(column[n], unit) for f, column in zip(fields, columns, strict=True)]
        unfit(n, line)
        if not declared[n]:
            line[precision] += "*"
        table.append(line)
    lines = aligned_lines(table)
    count = f"1 {noun}" if len(rows) == 1 else f"{len(rows)} {noun}s"
    lines.append(f"{count}; * = not the model's own precision")
    out.write("\n".join(lines) + "\n")
