"""Write compiled results out: the JSON results contract, JSON Lines, CSV, and a table.

One table of fields (`FIELDS`) says, for each output, where its value comes from and
how each format shows it; the three writers only lay the fields out. A cell's text is
made from that cell's values alone (its exact counts, its pair's figures, its row of
`Compiled.columns`), so it never depends on what else was selected.

Numbers in JSON: an exact count (operations, bytes, intensity, peak, bandwidth) is
written as an integer when it is one, else as the nearest float; a computed float
(attainable rate, share, time, sweeps, measured, efficiency) as an integer when the float
is integral and its exact value is an integer too, else as the float.

CSV and Parquet are written a batch of cells at a time from the same table, by
`rooflinec.outputs.columnar`: a field shared by many cells (per case, row of counts, pair) is
read once, and a per-cell field gives its numpy columns (`Field.vector`). Numbers in CSV:
an exact count as in JSON (an integer when it is one), every other number as its float64
value in the shortest text that reads back to it (pyarrow's formatting, `1.15e+13`).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from fractions import Fraction
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Literal, TextIO

from rooflinec import __version__
from rooflinec.catalog import LEVELS, Kernel
from rooflinec.engine import Roof
from rooflinec.engine.cells import Result
from rooflinec.engine.compiler import Compiled
from rooflinec.engine.grids import Selection
from rooflinec.engine.terms import LIMITED_BY, SWEEP, SWEEP_KEYS
from rooflinec.formatting import format_percent, format_si
from rooflinec.outputs.cells import (
    FORMULA_STARTS,
    Number,
    aligned_lines,
    csv_text,
    num,
    scalar_text,
    spreadsheet_text,
)
from rooflinec.outputs.fields import Field as GenericField
from rooflinec.outputs.fields import Progress, Scope
from rooflinec.outputs.formats import FORMATS as REGISTRY

if TYPE_CHECKING:
    from rooflinec.engine.columns import Columns
    from rooflinec.engine.models import ModelResult
    from rooflinec.formulas.vectorised import Ints
    from rooflinec.outputs.columnar import FieldTable
    from rooflinec.outputs.request_rows import RequestRow

__all__ = [
    "CSV_HEADERS",
    "FIELDS",
    "FORMATS",
    "FORMULA_STARTS",
    "TEXT_FORMATS",
    "CsvHeader",
    "Progress",
    "csv_text",
    "num",
    "results_text",
    "spreadsheet_text",
    "write_results",
]

FORMATS: tuple[str, ...] = tuple(REGISTRY)
"""Every format of `compile` (`rooflinec.outputs.formats.FORMATS` says what each writes)."""
CsvHeader = Literal["units", "plain"]
CSV_HEADERS: tuple[CsvHeader, ...] = ("units", "plain")
"""CSV header styles: `time [s]` (units, the default) or `time` (plain: SQL identifiers,
the units being those of the results schema, `schemas/results.schema.json`)."""


class _Source:
    """What the fields read for one compiled catalog: exact counts, columns, views."""

    def __init__(self, compiled: Compiled) -> None:
        self.compiled = compiled
        self.counts = compiled.counts
        self.n_pairs = len(compiled.counts.pair_device)
        self.n_widths = max(len(compiled.counts.widths), 1)
        self._peaks: dict[tuple[int, Fraction], Fraction] = {}
        self._last: tuple[int, Fraction] = (-1, Fraction(0))

    @cached_property
    def columns(self) -> Columns:
        return self.compiled.columns

    @cached_property
    def kernel_of_case(self) -> list[int]:
        """Per case, the index of its kernel among the distinct kernels (in order)."""
        index: dict[str, int] = {}
        return [index.setdefault(k.id, len(index)) for k in self.counts.kernels]

    @cached_property
    def kernels(self) -> list[Kernel]:
        """The distinct kernels of the cases, in order: `kernel_pair` rows are
        `kernel * n_pairs + pair`."""
        seen: dict[str, Kernel] = {}
        for kernel in self.counts.kernels:
            seen.setdefault(kernel.id, kernel)
        return list(seen.values())

    @cached_property
    def declared_codes(self) -> tuple[Any, Any]:
        """Per case and per pair, a code of its precision: equal codes are a declared cell."""
        import numpy as np

        c = self.counts
        codes: dict[str, int] = {}
        pairs = [codes.setdefault(p, len(codes)) for p in c.pair_precision]
        cases = [codes.get(case.precision, -1) for case in c.cases]
        return np.array(cases, dtype=np.int64), np.array(pairs, dtype=np.int64)

    @cached_property
    def run_cells(self) -> Any:
        """The cells with a measured run, sorted, as an int64 array."""
        import numpy as np

        return np.array(sorted(self.counts.runs), dtype=np.int64)

    def exact(self, cell: int) -> Result:
        return self.compiled.result_at(cell)

    def lowest(self, cell: int, a: Fraction, b: Fraction) -> Fraction:
        """min(peak × a, lowest memory ceiling × b, latency floor), exactly: the floats
        pick the side when it is far below the others, and only that side is computed."""
        columns = self.columns
        j = cell % self.n_pairs
        sides: list[tuple[float, Callable[[], Fraction]]] = [
            (float(columns.peak[j]) * _FLOAT[a], lambda: self._peak(j, a)),
            (float(columns.memory[cell]) * _FLOAT[b], lambda: self._memory(cell) * b),
        ]
        floor = self.counts.floor(cell)
        if floor is not None:
            row = self.counts.count_row(cell)
            sides.append((float(columns.floor[cell]), lambda: self.counts.flops[row] / floor))
        sides.sort(key=lambda side: side[0])
        if sides[0][0] < sides[1][0] * (1 - _MARGIN):
            return sides[0][1]()
        return min(exact() for value, exact in sides if value != float("inf"))

    def unit(self, cell: int) -> str:
        precision = self.counts.pair_precision[cell % self.n_pairs]
        return self.compiled.catalog.precisions[precision].unit

    def _peak(self, pair: int, a: Fraction) -> Fraction:
        key = (pair, a)
        value = self._peaks.get(key)
        if value is None:
            value = self._peaks[key] = self.counts.pair_peak[pair] * a
        return value

    def _memory(self, cell: int) -> Fraction:
        """The lowest memory ceiling of a cell, exactly (the last cell's is kept)."""
        if self._last[0] != cell:
            c = self.counts
            case, j = divmod(cell, self.n_pairs)
            ceilings, _ = self.compiled.counts.levels(c.kernels[case], c.pair_device[j])
            row = c.count_row(cell)
            roof = Roof(c.pair_peak[j], ceilings)
            lowest = roof.memory(c.flops[row], c.bytes[row])
            assert lowest is not None  # asked only where a memory ceiling is finite
            self._last = (cell, lowest[1])
        return self._last[1]


_MARGIN = 1e-9  # relative: float sides this far apart are ordered as the exact ones
_FLOAT = {f: float(f) for f in SWEEP}

Values = Callable[[_Source, Sequence[int]], list[Any]]
Vector = Callable[[_Source, "Ints"], list[Any]]


Field = GenericField[_Source]
"""A field of kernel cells (see `rooflinec.outputs.fields.Field`)."""


def _floats(name: str, exact: Callable[[_Source, int], Fraction | None]) -> Values:
    """A per-cell float column as numbers (see the module docstring)."""

    def values(src: _Source, cells: Sequence[int]) -> list[Any]:
        column = getattr(src.columns, name)[list(cells)].tolist()
        return [_number(v, exact, src, cell) for v, cell in zip(column, cells, strict=True)]

    return values


def _sweep(name: str, peak: bool) -> Values:
    """A sweep: min(peak × f, memory) for the peak sweep, min(peak, memory × f) else."""
    factors = [(f, Fraction(1)) if peak else (Fraction(1), f) for f in SWEEP]
    exact = [_lowest(a, b) for a, b in factors]

    def values(src: _Source, cells: Sequence[int]) -> list[Any]:
        table = getattr(src.columns, name)[list(cells)].tolist()
        out = []
        for row, cell in zip(table, cells, strict=True):
            record = {}
            for key, v, of in zip(SWEEP_KEYS, row, exact, strict=True):
                record[key] = _number(v, of, src, cell)
            out.append(record)
        return out

    return values


def _lowest(a: Fraction, b: Fraction) -> Callable[[_Source, int], Fraction | None]:
    def exact(src: _Source, cell: int) -> Fraction | None:
        return src.lowest(cell, a, b)

    return exact


def _number(
    value: float,
    exact: Callable[[_Source, int], Fraction | None],
    src: _Source,
    cell: int,
) -> Number | None:
    """A computed float as written: None for NaN, an int when both it and its exact
    value are integers (the exact value is looked at only then)."""
    if value != value:
        return None
    if value.is_integer():
        x = exact(src, cell)
        if x is not None and x.denominator == 1:
            return int(value)
    return value


def _case(src: _Source, rows: Sequence[int]) -> list[Any]:
    return [src.counts.cases[i].id for i in rows]


def _shape(src: _Source, rows: Sequence[int]) -> list[Any]:
    return [src.counts.cases[i].shape for i in rows]


def _shape_text(value: Any, counting: str = "") -> str:
    """A shape in one cell, symbols in the kernel's order: `M=8192 N=8192 K=8192`."""
    return " ".join(f"{k}={v}" for k, v in value.items())


def _kernel(src: _Source, rows: Sequence[int]) -> list[Any]:
    return [src.counts.kernels[r // src.n_widths].id for r in rows]


def _device(src: _Source, rows: Sequence[int]) -> list[Any]:
    return [src.counts.pair_device[j] for j in rows]


def _precision(src: _Source, rows: Sequence[int]) -> list[Any]:
    return [src.counts.pair_precision[j] for j in rows]


def _declared(src: _Source, cells: Sequence[int]) -> list[Any]:
    c = src.counts
    return [c.pair_precision[i % src.n_pairs] == c.cases[i // src.n_pairs].precision for i in cells]


def _flops(src: _Source, rows: Sequence[int]) -> list[Any]:
    return [num(src.counts.flops[r]) for r in rows]


def _bytes(src: _Source, rows: Sequence[int]) -> list[Any]:
    return [{lv: num(b) for lv, b in src.counts.bytes[r].items()} for r in rows]


def _intensity(src: _Source, rows: Sequence[int]) -> list[Any]:
    c = src.counts
    return [{lv: num(c.flops[r] / b) for lv, b in c.bytes[r].items()} for r in rows]


def _peak(src: _Source, rows: Sequence[int]) -> list[Any]:
    return [num(src.counts.pair_peak[j]) for j in rows]


def _bandwidth(src: _Source, rows: Sequence[int]) -> list[Any]:
    """The ceilings of a (kernel, pair): the levels both the kernel and the device give."""
    out = []
    for r in rows:
        k, j = divmod(r, src.n_pairs)
        ceilings, _ = src.compiled.counts.levels(src.kernels[k], src.counts.pair_device[j])
        out.append({lv: num(bw) for lv, bw in ceilings.items()})
    return out


def _limited_by(src: _Source, cells: Sequence[int]) -> list[Any]:
    codes = src.columns.limited_by[list(cells)].tolist()
    return [LIMITED_BY[k] for k in codes]


def _run_levels(view: Callable[[Result], dict[str, Fraction]]) -> Values:
    """A per-level view of a cell's measured run, from the exact values; empty without one."""

    def values(src: _Source, cells: Sequence[int]) -> list[Any]:
        runs = src.counts.runs
        return [
            {lv: num(v) for lv, v in view(src.exact(cell)).items()} if cell in runs else {}
            for cell in cells
        ]

    return values


def _column(name: str) -> Vector:
    """A per-cell float column of `Compiled.columns`; a sweep gives one per factor."""

    def vector(src: _Source, cells: Ints) -> list[Any]:
        column = getattr(src.columns, name)[cells]
        if column.ndim == 1:
            return [column]
        return [column[:, k] for k in range(column.shape[1])]

    return vector


def _declared_vector(src: _Source, cells: Ints) -> list[Any]:
    cases, pairs = src.declared_codes
    return [cases[cells // src.n_pairs] == pairs[cells % src.n_pairs]]


def _limited_by_vector(src: _Source, cells: Ints) -> list[Any]:
    return [src.columns.limited_by[cells]]


def _run_vector(view: Callable[[Result], dict[str, Fraction]]) -> Vector:
    """A per-level view of each cell's measured run as floats, NaN without one (few cells
    have a run: only those are looked at, exactly)."""

    def vector(src: _Source, cells: Ints) -> list[Any]:
        import numpy as np

        out = [np.full(len(cells), np.nan) for _ in LEVELS]
        if len(src.run_cells):
            for n in np.flatnonzero(np.isin(cells, src.run_cells)).tolist():
                values = view(src.exact(int(cells[n])))
                for k, lv in enumerate(LEVELS):
                    if lv in values:
                        out[k][n] = float(values[lv])
        return out

    return vector


def _si(unit: str) -> Callable[[Any, str], str]:
    """Table text in SI units; `{}` in `unit` is the counting unit (FLOP or OP)."""

    def show(value: Any, counting: str) -> str:
        return "-" if value is None else format_si(value, unit.format(counting))

    return show


def _percent(value: Any, counting: str) -> str:
    return "-" if value is None else format_percent(value)


def _dram(value: Any, counting: str) -> str:
    return _si("{}/B")(value.get("dram"), counting)


def _float_field(
    name: str,
    unit: str,
    exact: Callable[[_Source, int], Fraction | None],
    table: str,
    show: Callable[[Any, str], str],
) -> Field:
    """A per-cell float column of `Compiled.columns` the table shows: `name [unit]` in CSV,
    its numbers as `_floats` gives them."""
    return Field(
        name,
        "cell",
        _floats(name, exact),
        (f"{name} [{unit}]",),
        table=table,
        show=show,
        vector=_column(name),
    )


# name, unit, and the view of a result that gives it per level
_RUN_FIGURES: tuple[tuple[str, str, Callable[[Result], dict[str, Fraction]]], ...] = (
    ("measured_intensity", "OP/B", lambda r: r.measured_intensity),
    ("measured_bandwidth", "B/s", lambda r: r.measured_bandwidth),
    ("traffic_ratio", "1", lambda r: r.traffic_ratio),
)

FIELDS: tuple[Field, ...] = (
    Field("case", "case", _case, ("case",), table="case", kind="text"),
    Field("kernel", "count", _kernel, ("kernel",), kind="text"),
    Field(
        "shape",
        "case",
        _shape,
        ("shape",),
        table="shape",
        show=_shape_text,
        mapping=True,
        kind="text",
    ),
    Field("device", "pair", _device, ("device",), table="device", kind="text"),
    Field("precision", "pair", _precision, ("precision",), table="precision", kind="text"),
    Field("declared", "cell", _declared, ("declared",), kind="flag", vector=_declared_vector),
    Field("flops", "count", _flops, ("flops [OP]",), table="operations", show=_si("{}")),
    Field("bytes", "count", _bytes, tuple(f"bytes_{lv} [B]" for lv in LEVELS), LEVELS),
    Field(
        "intensity",
        "count",
        _intensity,
        tuple(f"intensity_{lv} [OP/B]" for lv in LEVELS),
        LEVELS,
        table="intensity (DRAM)",
        show=_dram,
    ),
    Field("peak", "pair", _peak, ("peak [OP/s]",), json=False),
    Field(
        "bandwidth",
        "kernel_pair",
        _bandwidth,
        tuple(f"bandwidth_{lv} [B/s]" for lv in LEVELS),
        LEVELS,
        json=False,
    ),
    _float_field(
        "attainable",
        "OP/s",
        lambda s, c: s.lowest(c, Fraction(1), Fraction(1)),
        "attainable",
        _si("{}/s"),
    ),
    Field(
        "limited_by",
        "cell",
        _limited_by,
        ("limited_by",),
        table="limited by",
        kind="text",
        vector=_limited_by_vector,
        choices=LIMITED_BY,
    ),
    _float_field(
        "share_of_peak",
        "1",
        lambda s, c: s.lowest(c, Fraction(1), Fraction(1)) / s.counts.pair_peak[c % s.n_pairs],
        "share of peak",
        _percent,
    ),
    _float_field("time", "s", lambda s, c: s.exact(c).time, "time", _si("s")),
    # The bandwidth sweep, then the peak sweep: one column per factor.
    *(
        Field(
            f"{varied}_sweep",
            "cell",
            _sweep(f"{varied}_sweep", peak=varied == "peak"),
            tuple(f"{varied}_x{k} [OP/s]" for k in SWEEP_KEYS),
            SWEEP_KEYS,
            vector=_column(f"{varied}_sweep"),
        )
        for varied in ("bandwidth", "peak")
    ),
    Field(
        "measured",
        "cell",
        _floats("measured", lambda s, c: s.counts.measured.get(c)),
        ("measured [OP/s]",),
        vector=_column("measured"),
    ),
    _float_field("efficiency", "1", lambda s, c: s.exact(c).efficiency, "efficiency", _percent),
    # A measured run's figures per level: present only on cells with a run.
    *(
        Field(
            name,
            "cell",
            _run_levels(view),
            tuple(f"{name}_{lv} [{unit}]" for lv in LEVELS),
            LEVELS,
            optional=True,
            vector=_run_vector(view),
        )
        for name, unit, view in _RUN_FIGURES
    ),
)

CSV_COLUMNS: list[str] = [header for field in FIELDS for header in field.headers]


# `case` is reserved in every SQL dialect and `precision` in standard SQL: the id columns
# take an `_id` suffix in plain headers, all four alike.
_PLAIN_IDS = {name: f"{name}_id" for name in ("case", "kernel", "device", "precision")}


def plain_header(header: str) -> str:
    """A CSV header as a bare SQL identifier, without its unit: `bandwidth_x0.5 [OP/s]` ->
    `bandwidth_x0_5`, `case` -> `case_id`, so that no SQL engine needs it quoted."""
    name = header.split(" [", 1)[0].replace(".", "_")
    return _PLAIN_IDS.get(name, name)


CSV_PLAIN_COLUMNS: list[str] = [plain_header(h) for h in CSV_COLUMNS]


# --------------------------------------------------------------------------- laying out


def shared_sizes(src: _Source) -> dict[str, int]:
    """How many rows each shared scope has."""
    c = src.counts
    return {
        "case": len(c.cases),
        "count": len(c.flops),
        "pair": len(c.pair_device),
        "kernel_pair": len(src.kernels) * src.n_pairs,
    }


class _Rows:
    """Field texts for cells, a batch at a time; a field shared by many cells (per case,
    per row of counts, per pair) is read and formatted once."""

    def __init__(
        self, compiled: Compiled, fields: Sequence[Field], text: Callable[[Field, Any], Any]
    ) -> None:
        self.src = _Source(compiled)
        self.fields = fields
        self.text = text
        self._shared: dict[str, list[Any]] = {}

    def _index(self, scope: Scope, cells: Sequence[int]) -> list[int]:
        src = self.src
        if scope == "case":
            return [i // src.n_pairs for i in cells]
        if scope == "pair":
            return [i % src.n_pairs for i in cells]
        if scope == "kernel_pair":
            n, kernel = src.n_pairs, src.kernel_of_case
            return [kernel[i // n] * n + i % n for i in cells]
        return [src.counts.count_row(i) for i in cells]

    def batch(self, cells: Sequence[int]) -> list[list[Any]]:
        """Per field, its text for each of `cells`."""
        sizes = shared_sizes(self.src)
        out = []
        for field in self.fields:
            if field.scope == "cell":
                out.append([self.text(field, v) for v in field.values(self.src, cells)])
                continue
            shared = self._shared.get(field.key)
            if shared is None:
                values = field.values(self.src, range(sizes[field.scope]))
                shared = self._shared[field.key] = [self.text(field, v) for v in values]
            out.append([shared[k] for k in self._index(field.scope, cells)])
        return out


_BATCH = 1 << 14


def _batches(cells: Sequence[int]) -> Iterator[Sequence[int]]:
    for start in range(0, len(cells), _BATCH):
        yield cells[start : start + _BATCH]


Cells = Sequence[int] | Selection
"""What the writers take: cells of the `Compiled` given (`Compiled.rows`), or a
`rooflinec.engine.grids.Selection` (`grids.select`), which adds the rows of grid cases."""


def _row_batches(
    compiled: Compiled, cells: Cells, fields: Sequence[Field], text: Callable[[Field, Any], Any]
) -> Iterator[tuple[_Rows, Sequence[int]]]:
    """The rows of `cells` a batch at a time, each with the `_Rows` that lays it out (a
    grid's chunk is a `Compiled` of its own; the catalog's rows share one `_Rows`)."""
    if not isinstance(cells, Selection):
        rows = _Rows(compiled, fields, text)
        for batch in _batches(cells):
            yield rows, batch
        return
    own = _Rows(cells.compiled, fields, text)
    for part in cells.batches():
        rows = own if part.grid is None else _Rows(part.compiled, fields, text)
        for batch in _batches(part.cells):
            yield rows, batch


def _json_value(value: Any) -> str:
    return scalar_text(value, "null", _json_text, repr)


def _json_text(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _json_field(field: Field, value: Any, pad: str | None = "      ") -> str:
    """A field's JSON member, indented by `pad` with a mapping's keys on lines of their
    own, or all on one line (`pad` None, for JSON Lines); an optional field without a
    value gives none ("")."""
    if field.optional and not value:
        return ""
    lead = pad or ""
    if not field.keys and not field.mapping:
        return f'{lead}"{field.key}": {_json_value(value)}'
    if pad is None:
        inner = ", ".join(f'"{k}": {_json_value(v)}' for k, v in value.items())
        return f'"{field.key}": {{{inner}}}'
    if not value:
        return f'{pad}"{field.key}": {{}}'
    inner = ",".join(f'\n{pad}  "{k}": {_json_value(v)}' for k, v in value.items())
    return f'{pad}"{field.key}": {{{inner}\n{pad}}}'


def _jsonl_field(field: Field, value: Any) -> str:
    """A field as `"key": value` on one line, as the JSON document writes it."""
    return _json_field(field, value, None)


def _header(
    compiled: Compiled,
    cells: Cells,
    models: Sequence[ModelResult] = (),
    devices: Iterable[str] = (),
) -> dict[str, Any]:
    """The results document without its rows (`devices`: those of other rows too)."""
    catalog = compiled.catalog
    pair_device = compiled.counts.pair_device
    n_pairs = len(pair_device)
    if isinstance(cells, Selection):
        device_ids = cells.device_ids()
    else:
        device_ids = {pair_device[i % n_pairs] for i in cells}
    device_ids = (device_ids | {r.device for r in models} | set(devices)) or set(compiled.devices)
    return {
        "rooflinec": __version__,
        "precisions": {
            p.id: {"label": p.label, "bytes": num(p.bytes), "unit": p.unit}
            for p in catalog.precisions.values()
        },
        "devices": {
            d.id: {
                "name": d.name,
                "peaks": {p: num(v) for p, v in d.peaks.items()},
                "bandwidths": {lv: num(v) for lv, v in d.bandwidths.items()},
                "ridges": {
                    p: {lv: num(v) for lv, v in by_level.items()}
                    for p, by_level in d.ridges.items()
                },
            }
            for d in compiled.devices.values()
            if d.id in device_ids
        },
        "results": [],
        "models": [],
    }


def json_rows(compiled: Compiled, cells: Cells) -> Iterator[list[str]]:
    """The rows of `cells` in the JSON document, a batch at a time: each row from its
    `    {` to its `    }` (depth one of the `results` list), without separators."""
    fields = [f for f in FIELDS if f.json]
    for rows, batch in _row_batches(compiled, cells, fields, _json_field):
        texts = rows.batch(batch)
        yield [
            "    {\n" + ",\n".join(p for p in parts if p) + "\n    }"
            for parts in zip(*texts, strict=True)
        ]


def write_json(
    compiled: Compiled,
    cells: Cells,
    out: TextIO,
    models: Sequence[ModelResult] = (),
    progress: Progress | None = None,
    *,
    rows: Iterable[list[str]] | None = None,
) -> None:
    """The results contract, laid out as `json.dumps(document, indent=2)` would: the
    kernel results, then the model rows beside them; each batch of rows is written as
    soon as it is laid out. `rows`: the batches of `json_rows(compiled, cells)` when the
    caller has them already (`serve` keeps each device's rows between rebuilds)."""
    from rooflinec.outputs.model_rows import write_model_json_rows

    head = json.dumps(_header(compiled, cells, models), indent=2, ensure_ascii=False)
    tail = '"results": [],\n  "models": []\n}'
    out.write(head[: -len(tail)] + '"results": [')
    if len(cells):
        separator = "\n"
        for batch in json_rows(compiled, cells) if rows is None else rows:
            if not batch:
                continue
            out.write(separator + ",\n".join(batch))
            separator = ",\n"
            if progress is not None:
                progress(len(batch))
        out.write("\n  ")
    out.write('],\n  "models": [')
    if models:
        write_model_json_rows(models, out)
        out.write("\n  ")
    out.write("]\n}\n")


def write_json_requests(compiled: Compiled, rows: Sequence[RequestRow], out: TextIO) -> None:
    """The results contract with request rows alone (`compile --model M --input I --output
    O`): no kernel results or model rows, the request rows under `requests`."""
    from rooflinec.outputs.request_rows import write_request_json_rows

    head = _header(compiled, (), devices=[r.result.device for r in rows])
    head["requests"] = []
    text = json.dumps(head, indent=2, ensure_ascii=False)
    out.write(text[: -len("[]\n}")] + "[")
    if rows:
        write_request_json_rows(rows, out)
        out.write("\n  ")
    out.write("]\n}\n")


def _write_jsonl_results(
    compiled: Compiled, cells: Cells, out: TextIO, progress: Progress | None
) -> None:
    fields = [f for f in FIELDS if f.json]
    for rows, batch in _row_batches(compiled, cells, fields, _jsonl_field):
        out.write(
            "".join(
                "{" + ", ".join(p for p in parts if p) + "}\n"
                for parts in zip(*rows.batch(batch), strict=True)
            )
        )
        if progress is not None:
            progress(len(batch))


def _write_results_table(
    compiled: Compiled, cells: Cells, out: TextIO, progress: Progress | None
) -> None:
    fields = [f for f in FIELDS if f.table is not None]
    header = [str(f.table) for f in fields]
    table = [header]
    for rows, batch in _row_batches(compiled, cells, [*fields, _DECLARED], lambda f, v: v):
        *values, declared = rows.batch(batch)
        for n, cell in enumerate(batch):
            unit = rows.src.unit(cell)
            line = [f.show(column[n], unit) for f, column in zip(fields, values, strict=True)]
            if not declared[n]:
                line[header.index("precision")] += "*"
            table.append(line)
        if progress is not None:
            progress(len(batch))
    lines = aligned_lines(table)
    lines.append(f"{len(cells)} results; * = not the case's declared precision")
    out.write("\n".join(lines) + "\n")


_DECLARED = next(f for f in FIELDS if f.key == "declared")
TEXT_FORMATS: tuple[str, ...] = tuple(f.name for f in REGISTRY.values() if not f.needs_out)
"""The formats `write_results` writes to a text stream; Parquet, a binary file, is written
to a file or a folder of files (`rooflinec.outputs.columnar.write_parquet`)."""


def _tables(compiled: Compiled, cells: Cells) -> Iterator[tuple[FieldTable, Sequence[int]]]:
    """The rows of `cells` as (field table, cells of its compile) parts, in order: the
    catalog's rows share one table; a grid's chunk is a compile, and a table, of its own."""
    from rooflinec.outputs.columnar import FieldTable

    def table(of: Compiled) -> FieldTable:
        src = _Source(of)
        return FieldTable(src, FIELDS, shared_sizes(src), csv_text, _shape_text)

    own = table(compiled)
    if not isinstance(cells, Selection):
        yield own, cells
        return
    for part in cells.batches():
        yield (own if part.grid is None else table(part.compiled)), part.cells


def write_csv(
    compiled: Compiled,
    cells: Cells,
    out: TextIO | BinaryIO,
    header: CsvHeader = "units",
    *,
    progress: Progress | None = None,
    batch_rows: int | None = None,
) -> None:
    """One row per cell, a batch at a time through pyarrow (`rooflinec.outputs.columnar`,
    `batch_rows` a batch, its default when None); empty cells where a level is absent.
    The header row names each column with its unit (`time [s]`), or with
    `header="plain"` by name alone (`time`)."""
    from rooflinec.outputs import columnar

    names = CSV_PLAIN_COLUMNS if header == "plain" else CSV_COLUMNS
    rows = columnar.BATCH_ROWS if batch_rows is None else batch_rows
    columnar.write_csv(_tables(compiled, cells), out, names, progress=progress, batch_rows=rows)


def write_parquet(
    compiled: Compiled,
    cells: Cells,
    target: Path | BinaryIO,
    *,
    partition: str | None = None,
    progress: Progress | None = None,
) -> None:
    """The cells as Parquet: one file (`target` a path or a binary file), or with
    `partition="device"` a folder of Hive partitions, `device=ID/part-0.parquet`, under
    the path `target` (`rooflinec.outputs.columnar.write_parquet`)."""
    from rooflinec.outputs import columnar

    columnar.write_parquet(
        _tables(compiled, cells), FIELDS, target, partition=partition, progress=progress
    )


def write_results(
    compiled: Compiled,
    cells: Cells,
    format: str,
    out: TextIO,
    *,
    csv_header: CsvHeader = "units",
    models: Sequence[ModelResult] = (),
    progress: Progress | None = None,
) -> None:
    """Write the cells `cells` (from `Compiled.rows`, or a `grids.Selection` with grid rows)
    and the model rows `models` as `format`: json, jsonl, csv or table.

    A CSV holds one kind of row, named by its header: the results when any cell is
    selected, else the model rows. JSON Lines holds one kind of row too, and takes only
    one: one kernel cell per line, the rows of the results contract as records; or, given
    `models` (and no cells), one model row per line with its steps, the rows of the
    contract's `models`. pandas (`read_json(lines=True)`), polars (`read_ndjson`) and
    duckdb (`read_json`) read either stream as one rectangular table; every value has the
    JSON document's own text. A stream never mixes the kinds (their fields differ): both
    at once is a ValueError (the command line passes model rows only with `--model`). The
    table writes model rows in a table of their own after the cells' (`*` marks a
    precision other than the case's declared one); with model rows alone, only that one.
    `csv_header` picks the CSV header style (see `CSV_HEADERS`); other formats ignore it.
    `progress` is told the rows written after each batch.
    """
    from rooflinec.outputs import model_rows

    if format == "json":
        write_json(compiled, cells, out, models, progress)
    elif format == "jsonl":
        if models and len(cells):
            raise ValueError("a JSON Lines stream holds kernel cells or model rows, not both")
        if models:
            model_rows.write_model_jsonl(models, out)
        else:
            _write_jsonl_results(compiled, cells, out, progress)
    elif format == "table":
        if len(cells) or not models:
            _write_results_table(compiled, cells, out, progress)
        if models:
            out.write("\n" if len(cells) else "")
            model_rows.write_model_table(compiled.catalog, models, out)
    elif format != "csv":
        raise ValueError(f"no text format {format!r} (known: {', '.join(TEXT_FORMATS)})")
    elif models and not len(cells):
        model_rows.write_model_csv(models, out, plain=csv_header == "plain")
    else:
        write_csv(compiled, cells, out, csv_header, progress=progress)


def results_text(
    compiled: Compiled,
    cells: Cells,
    format: str,
    *,
    csv_header: CsvHeader = "units",
    models: Sequence[ModelResult] = (),
) -> str:
    """`write_results` into a string."""
    buffer = io.StringIO()
    write_results(compiled, cells, format, buffer, csv_header=csv_header, models=models)
    return buffer.getvalue()
