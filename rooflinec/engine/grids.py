"""Grid cases compiled lazily: a selection of rows as ordered batches, in bounded memory.

A grid case (`grid:` instead of `shape:`) stands for every shape of its grid, in the
grid's order (`rooflinec.grid_values`). It has no cells in `Compiled.counts`, which
holds the plain cases; this module expands it a chunk of shapes at a time:

1. the chunk's shapes as int64 arrays, one per symbol (`Grid.columns`);
2. every formula over them at each width, vectorised and exact
   (`rooflinec.formulas.vectorised`), or, for a chunk int64 cannot hold exactly, with
   the exact engine (Python ints and Fractions) for that chunk;
3. a `Compiled` for the chunk alone: one plain case per shape, the pairs of the
   selection, the same device figures. Its columns come from `rooflinec.engine.columns`, the
   computation every plain cell takes, so a grid row has the text and the numbers of a
   plain case with that shape ("same cell, same bytes"); only the case id and name are
   the grid case's.

`select` is the one selection every writer uses: plain cells and grid rows in catalog
order (cases kernel by kernel, each case's rows shape-major, pairs in catalog order),
and `Selection.batches` yields them a batch at a time, each `Batch` a `Compiled` with
the cells to write from it. A writer that streams keeps one batch at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, NoReturn

import numpy as np

from rooflinec.catalog import Case, Kernel
from rooflinec.engine import WIDTH, integral
from rooflinec.engine.cells import Counts, Result
from rooflinec.engine.compiler import Compiled
from rooflinec.engine.evaluate import count_problem
from rooflinec.errors import Diagnostic, SpecError
from rooflinec.formulas import EvaluationError, Formula, bulk_evaluate
from rooflinec.formulas.vectorised import evaluate_int64

if TYPE_CHECKING:
    from rooflinec.formulas.vectorised import Ints

__all__ = [
    "BATCH_ROWS",
    "Batch",
    "GridChunk",
    "GridPart",
    "Selection",
    "grid_compiled",
    "grid_result",
    "select",
]

#: Rows (shapes × pairs) a grid batch holds, about: its columns take some 100 MB.
BATCH_ROWS = 1 << 18


@dataclass(frozen=True)
class GridChunk:
    """Shapes `start` .. `stop - 1` of a grid case, one int64 array per symbol."""

    case: Case
    start: int
    stop: int
    shapes: dict[str, Ints]


@dataclass(frozen=True)
class Batch:
    """Rows to write: `cells` of `compiled`, in order.

    For plain cases `compiled` is the catalog's own and `grid` is None. For a chunk of
    a grid case it is a `Compiled` of that chunk alone: case `i` of its counts is shape
    `grid.start + i` (a plain `Case` with the grid case's id and name and that shape),
    its pairs are the ones selected, and its cells are case-major as everywhere, so row
    `r` of the batch is shape `r // n_pairs`, pair `r % n_pairs` with
    `n_pairs = len(compiled.counts.pair_device)`.
    """

    compiled: Compiled
    cells: Sequence[int]
    grid: GridChunk | None = None

    def __len__(self) -> int:
        return len(self.cells)


@dataclass(frozen=True)
class GridPart:
    """A grid case in a selection: its shapes on the selected (device, precision) pairs
    (indices into the catalog's `Compiled.counts` pairs)."""

    case: Case
    kernel: Kernel
    pairs: tuple[int, ...]

    @property
    def rows(self) -> int:
        assert self.case.grid is not None
        return self.case.grid.size * len(self.pairs)


@dataclass(frozen=True)
class Selection:
    """The rows a selection keeps, plain and grid, in catalog order, never all at once.

    `parts` alternate runs of plain cells (of `compiled`) and grid cases. `len()` counts
    every row without expanding a grid.
    """

    compiled: Compiled
    parts: tuple[list[int] | GridPart, ...]
    _sizes: dict[int, int] = field(default_factory=dict, compare=False, repr=False)

    def __len__(self) -> int:
        return sum(len(p) if isinstance(p, list) else p.rows for p in self.parts)

    @property
    def grids(self) -> tuple[GridPart, ...]:
        return tuple(p for p in self.parts if isinstance(p, GridPart))

    @property
    def plain_cells(self) -> list[int]:
        return [cell for p in self.parts if isinstance(p, list) for cell in p]

    def device_ids(self) -> set[str]:
        """The devices the selected rows are on."""
        c = self.compiled.counts
        n = len(c.pair_device)
        out = {c.pair_device[cell % n] for cell in self.plain_cells}
        out.update(c.pair_device[j] for part in self.grids for j in part.pairs)
        return out

    def batches(self, rows: int = BATCH_ROWS) -> Iterator[Batch]:
        """The rows in order, about `rows` at a time (a plain run is one batch of cells
        of the catalog's `Compiled`; a grid, a batch per chunk of shapes)."""
        for part in self.parts:
            if isinstance(part, list):
                if part:
                    yield Batch(self.compiled, part)
                continue
            yield from grid_batches(self.compiled, part, rows)

    def check(self) -> None:
        """Evaluate every formula at every selected grid shape, writing nothing: a shape
        where a count is not positive (or cannot be evaluated) raises `SpecError` here,
        before a writer has begun. Cheap beside writing: per shape, not per row."""
        for part in self.grids:
            assert part.case.grid is not None
            widths = _widths(self.compiled, part.pairs)[0]
            size = part.case.grid.size
            step = max(1, BATCH_ROWS)
            for start in range(0, size, step):
                shapes = part.case.grid.columns(start, min(size, start + step))
                bound = _bound(self.compiled, part.case, part.kernel)
                _counts(part.case, part.kernel, shapes, widths, start, bound)


def select(
    compiled: Compiled,
    *,
    devices: Iterable[str] | None = None,
    cases: Iterable[str] | None = None,
    precisions: Iterable[str] | None = None,
    declared_only: bool = False,
) -> Selection:
    """`Compiled.rows(...)` with the grid cases: every row a selection keeps, in order."""
    c = compiled.counts
    d, k, p = (set(x) if x is not None else None for x in (devices, cases, precisions))
    pairs = [
        j
        for j, (device, precision) in enumerate(zip(c.pair_device, c.pair_precision, strict=True))
        if (d is None or device in d) and (p is None or precision in p)
    ]
    plain = {case.id: i for i, case in enumerate(c.cases)}
    n_pairs = len(c.pair_device)
    parts: list[list[int] | GridPart] = []
    run: list[int] = []
    for kernel in compiled.catalog.kernels.values():
        for case in kernel.cases:
            if k is not None and case.id not in k:
                continue
            kept = [j for j in pairs if not declared_only or c.pair_precision[j] == case.precision]
            if case.grid is not None:
                if kept:
                    if run:
                        parts.append(run)
                        run = []
                    parts.append(GridPart(case, kernel, tuple(kept)))
                continue
            i = plain.get(case.id)
            if i is not None:
                run.extend(i * n_pairs + j for j in kept)
    if run:
        parts.append(run)
    return Selection(compiled, tuple(parts))


def grid_batches(compiled: Compiled, part: GridPart, rows: int = BATCH_ROWS) -> Iterator[Batch]:
    """A grid case's rows, a chunk of about `rows` rows (at least one shape) at a time."""
    grid = part.case.grid
    assert grid is not None
    per_chunk = max(1, rows // max(1, len(part.pairs)))
    size = grid.size
    for start in range(0, size, per_chunk):
        stop = min(size, start + per_chunk)
        shapes = grid.columns(start, stop)
        chunk = grid_compiled(compiled, part.case, part.kernel, part.pairs, shapes, start)
        yield Batch(chunk, range(len(chunk.counts)), GridChunk(part.case, start, stop, shapes))


def grid_compiled(
    compiled: Compiled,
    case: Case,
    kernel: Kernel,
    pairs: Sequence[int],
    shapes: dict[str, Ints],
    start: int = 0,
) -> Compiled:
    """A `Compiled` of some shapes of a grid case on `pairs` (indices into `compiled`'s
    pairs): one plain case per shape, the exact counts, the catalog's device figures."""
    c = compiled.counts
    widths, pair_width = _widths(compiled, pairs)
    flops, traffic = _counts(case, kernel, shapes, widths, start, _bound(compiled, case, kernel))
    symbols = list(shapes)
    rows = zip(*(shapes[s].tolist() for s in symbols), strict=True)
    cases = tuple(
        Case(
            case.id,
            case.name,
            case.description,
            case.kernel,
            case.precision,
            dict(zip(symbols, values, strict=True)),
            (),
            case.location,
            case.launches,
            widths=case.widths,
        )
        for values in rows
    )
    counts = Counts(
        cases,
        (kernel,) * len(cases),
        widths,
        flops,
        traffic,
        tuple(c.pair_device[j] for j in pairs),
        tuple(c.pair_precision[j] for j in pairs),
        tuple(c.pair_peak[j] for j in pairs),
        pair_width,
        c.bandwidths,
        {},
        c.latencies,
    )
    return Compiled(compiled.catalog, compiled.devices, counts, ())


def grid_result(
    compiled: Compiled, case: Case, shape: dict[str, int], device: str, precision: str
) -> Result | None:
    """The exact result of one shape of a grid case (None: the device has no such peak)."""
    c = compiled.counts
    pair = next(
        (
            j
            for j, (d, p) in enumerate(zip(c.pair_device, c.pair_precision, strict=True))
            if d == device and p == precision
        ),
        None,
    )
    if pair is None:
        return None
    kernel = compiled.catalog.kernels[case.kernel]
    shapes = {s: np.array([shape[s]], dtype=np.int64) for s in kernel.symbols}
    return grid_compiled(compiled, case, kernel, [pair], shapes).result_at(0)


def _widths(
    compiled: Compiled, pairs: Sequence[int]
) -> tuple[tuple[Fraction, ...], tuple[int, ...]]:
    """The distinct widths of `pairs` (in order of first use) and each pair's index."""
    c = compiled.counts
    widths: list[Fraction] = []
    index: list[int] = []
    for j in pairs:
        width = c.widths[c.pair_width[j]]
        if width not in widths:
            widths.append(width)
        index.append(widths.index(width))
    return tuple(widths), tuple(index)


def _bound(compiled: Compiled, case: Case, kernel: Kernel) -> dict[str, Fraction]:
    """The width symbols the case binds to a precision, with that precision's bytes."""
    precisions = compiled.catalog.precisions
    return {n: precisions[p].bytes for n, p in case.widths.items() if n in kernel.widths}


def _counts(
    case: Case,
    kernel: Kernel,
    shapes: dict[str, Ints],
    widths: Sequence[Fraction],
    start: int,
    bound: dict[str, Fraction] | None = None,
) -> tuple[list[Fraction], list[dict[str, Fraction]]]:
    """Operations and bytes per (shape, width), exactly, row `shape * len(widths) + k`;
    a width symbol the case binds takes its precision's bytes, any other one the width."""
    n = len(next(iter(shapes.values())))
    flops = _formula(case, kernel.flops, shapes, widths, start, "operation count")
    levels = {
        lv: _formula(case, f, shapes, widths, start, f"{lv} byte count", bound or {})
        for lv, f in kernel.bytes.items()
    }
    out_flops: list[Fraction] = []
    out_bytes: list[dict[str, Fraction]] = []
    for i in range(n):
        for k in range(len(widths)):
            out_flops.append(flops[k][i])
            out_bytes.append({lv: values[k][i] for lv, values in levels.items()})
    return out_flops, out_bytes


def _formula(
    case: Case,
    formula: Formula,
    shapes: dict[str, Ints],
    widths: Sequence[Fraction],
    start: int,
    what: str,
    bound: dict[str, Fraction] | None = None,
) -> list[list[Fraction]]:
    """One formula over the shapes at each width: result[width][shape], exactly, each
    value checked positive and plausible as the specs' own cases are. `w` and every
    width symbol not in `bound` take the width."""
    columns = {s: v for s, v in shapes.items() if s in formula.symbols}
    by_width: list[list[Fraction]] = []
    widthlike = formula.reserved
    for width in widths if widthlike else widths[:1]:
        constants = {name: _scalar((bound or {}).get(name, width)) for name in widthlike or {WIDTH}}
        fast = evaluate_int64(formula, columns, constants)
        if fast is not None:
            if len(fast) and int(fast.min()) <= 0:
                _refuse(case, shapes, int(np.argmax(fast <= 0)), start, what, "is not positive")
            values = [Fraction(v) for v in fast.tolist()]
        else:
            values = _exact(case, formula, shapes, constants, start, what)
        by_width.append(values)
    if not widthlike:
        by_width *= len(widths)
    return by_width


_scalar = integral


def _exact(
    case: Case,
    formula: Formula,
    shapes: dict[str, Ints],
    constants: dict[str, int | Fraction],
    start: int,
    what: str,
) -> list[Fraction]:
    """The exact engine over Python ints, for a chunk int64 cannot hold exactly."""
    n = len(next(iter(shapes.values())))
    columns: dict[str, list[int | Fraction]] = {
        s: list(v.tolist()) for s, v in shapes.items() if s in formula.symbols
    }
    for name, value in constants.items():
        if name in formula.symbols:
            columns[name] = [value] * n
    try:
        values = bulk_evaluate(formula, columns) if columns else [formula.evaluate({})] * n
    except EvaluationError as exc:
        _refuse(case, shapes, exc.row or 0, start, what, exc.message)
    for i, value in enumerate(values):
        problem = count_problem(value)
        if problem is not None:
            _refuse(case, shapes, i, start, what, problem)
    return values


def _refuse(
    case: Case, shapes: dict[str, Ints], row: int, start: int, what: str, problem: str
) -> NoReturn:
    shape = ", ".join(f"{s}={int(v[row])}" for s, v in shapes.items())
    message = f"case '{case.id}' at {shape} (shape {start + row + 1:,} of its grid): the {what}"
    message += f" {problem}" if problem.startswith("is ") else f": {problem}"
    raise SpecError([Diagnostic(case.location, message, code="formula")])
