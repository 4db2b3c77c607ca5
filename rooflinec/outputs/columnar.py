"""Results as Arrow columns, a batch of cells at a time: CSV text and Parquet files.

The fields of `rooflinec.outputs.results.FIELDS` that many cells share (per case, per row of
exact counts, per (device, precision) pair, per kernel and pair) are laid out once per
compile as Arrow arrays, and each batch takes its rows from them by index; a per-cell
field gives its numpy columns (`Field.vector`). No cell is formatted in Python, and a
batch is written before the next is laid out, so memory stays bounded whatever the
number of rows.

CSV text, one definition for every CSV rooflinec writes (a cell's text depends on that
cell alone, never on the batch it falls in or on what else was selected):

- text (ids, `limited_by`): `rooflinec.outputs.results.csv_text`, guarded against spreadsheet
  formulas and quoted only where CSV needs it;
- `declared`: `true` or `false`;
- an exact count shared by cells (operations, bytes, intensity, peak, bandwidth): an
  integer when it is one, else as a float below;
- every other number: its float64 value in the shortest text that reads back to it,
  as pyarrow writes it (`0.5`, `1.15e+13`, `1e-7`); an absent value is an empty cell.

Parquet: one column per CSV column, named as the CSV's plain header but keeping the ids'
own names (`case`, `device`, `bandwidth_x0_5`); numbers are float64 with their unit in
the field's metadata (`{"unit": "OP/s"}`), and the schema's metadata names the rooflinec
version (the results contract's `rooflinec`). `partition="device"` writes a folder of
Hive partitions, `device=ID/part-0.parquet`, that DuckDB, Polars and Spark read as one
table.

pyarrow is imported here only: `check` and the command line's parsing never load it.
The field table is `rooflinec.outputs.results`'s, handed in as a `FieldTable` (this module
does not import it, not even for types: `results`' writers call this one).
"""

from __future__ import annotations

import csv
import dataclasses
import io
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rooflinec import __version__
from rooflinec.outputs.fields import Field as GenericField
from rooflinec.outputs.fields import Progress

if TYPE_CHECKING:
    from rooflinec.formulas.vectorised import Ints

__all__ = [
    "BATCH_ROWS",
    "PARTITIONS",
    "Column",
    "FieldTable",
    "Layout",
    "columns_of",
    "number_text",
    "parquet_schema",
    "write_csv",
    "write_parquet",
]

Field = GenericField[Any]

BATCH_ROWS = 1 << 16
"""Cells laid out and written at a time: a batch of CSV text is about 25 MB."""

PARTITIONS = ("device",)
"""The columns a Parquet folder may be partitioned by."""

PARQUET_COMPRESSION = "zstd"


@dataclass(frozen=True)
class FieldTable:
    """What the writers read: a compile's field sources and the field table itself."""

    src: Any  # what the fields read (`rooflinec.outputs.results`'s source of a compile)
    fields: Sequence[Field]
    sizes: dict[str, int]  # rows of each shared scope
    text: Callable[[str], str]  # a text cell as CSV writes it
    mapping: Callable[[Any], str]  # a mapping field's value (a shape) as one text, `M=1 N=2`
    layouts: dict[bool, Layout] = dataclasses.field(default_factory=dict, compare=False)

    def layout(self, text: bool) -> Layout:
        """The arrays of this compile's shared fields, laid out once (CSV text or typed)."""
        found = self.layouts.get(text)
        if found is None:
            found = self.layouts[text] = Layout(self, text=text)
        return found


Parts = Iterable[tuple[FieldTable, "Sequence[int] | Ints"]]
"""Rows to write, in order: runs of cells, each of the compile its field table reads."""


@dataclass(frozen=True)
class Column:
    """One output column: a field, or one key of a field with keys (a level, a factor)."""

    field: Field
    key: int  # index into `field.keys`, 0 for a field without keys
    header: str  # the CSV header with its unit, `bytes_dram [B]`
    name: str  # the Parquet name, `bytes_dram`
    unit: str | None  # `B`; None for text and flags


def columns_of(fields: Sequence[Field]) -> tuple[Column, ...]:
    """Every column of the field table, in order."""
    out = []
    for field in fields:
        for k, header in enumerate(field.headers):
            name, _, unit = header.partition(" [")
            out.append(
                Column(field, k, header, name.replace(".", "_"), unit[:-1] if unit else None)
            )
    return tuple(out)


def _arrow_type(column: Column) -> pa.DataType:
    kind = column.field.kind
    return pa.string() if kind == "text" else pa.bool_() if kind == "flag" else pa.float64()


def parquet_schema(fields: Sequence[Field], without: Sequence[str] = ()) -> pa.Schema:
    """The Parquet schema: units in each number's field metadata, the version in the
    schema's; `without` leaves out partition columns (their values are folder names)."""
    columns = [
        pa.field(c.name, _arrow_type(c), metadata={"unit": c.unit} if c.unit else None)
        for c in columns_of(fields)
        if c.name not in without
    ]
    return pa.schema(columns, metadata={"rooflinec": __version__})


# --------------------------------------------------------------------------- laying out


def number_text(values: Sequence[Any]) -> pa.Array:
    """Exact counts as CSV text: an int as its digits, a float as pyarrow writes it."""
    floats = pa.array([v if isinstance(v, float) else None for v in values], pa.float64())
    float_text = pc.cast(floats, pa.string()).to_pylist()
    return pa.array(
        [
            None if v is None else str(v) if isinstance(v, int) else float_text[i]
            for i, v in enumerate(values)
        ],
        pa.string(),
    )


def _shared(field: Field, values: Sequence[Any], text: Callable[[str], str] | None) -> pa.Array:
    """A shared field's values (one key's) as an array: CSV text, or typed for Parquet."""
    if field.kind == "text":
        return pa.array([text(v) if text else v for v in values], pa.string())
    if field.kind == "flag":
        return pa.array(values, pa.bool_())
    if text is not None:
        return number_text(values)
    return pa.array([None if v is None else float(v) for v in values], pa.float64())


_FLAGS_TEXT = pa.array(["false", "true"])


class Layout:
    """Arrow arrays for batches of cells of one compile: CSV text (`text=True`) or typed."""

    def __init__(self, table: FieldTable, *, text: bool) -> None:
        self.src = src = table.src
        self.fields = table.fields
        self.text = text
        as_text = table.text if text else None
        self._shared: dict[str, list[pa.Array]] = {}
        self._choices: dict[str, pa.Array] = {}
        for field in self.fields:
            if field.scope == "cell":
                if field.choices:
                    choices = [as_text(v) if as_text else v for v in field.choices]
                    self._choices[field.key] = pa.array(choices, pa.string())
                continue
            values = field.values(src, range(table.sizes[field.scope]))
            if field.mapping:
                values = [table.mapping(v) for v in values]
            if field.keys:
                per_key = [[v.get(k) for v in values] for k in field.keys]
                self._shared[field.key] = [_shared(field, vs, as_text) for vs in per_key]
            else:
                self._shared[field.key] = [_shared(field, values, as_text)]
        self._pair_width = np.array(src.counts.pair_width, dtype=np.int64)
        self._kernel_of_case = np.array(src.kernel_of_case, dtype=np.int64)

    def _index(self, scope: str, cells: Ints) -> Ints:
        n: int = self.src.n_pairs
        widths: int = self.src.n_widths
        if scope == "case":
            return cells // n
        if scope == "pair":
            return cells % n
        if scope == "kernel_pair":
            return self._kernel_of_case[cells // n] * n + cells % n
        return (cells // n) * widths + self._pair_width[cells % n]  # count

    def batch(self, cells: Ints) -> list[pa.Array]:
        """One array per column of the field table, a row per cell of `cells`."""
        out: list[pa.Array] = []
        index: dict[str, Ints] = {}
        for field in self.fields:
            if field.scope != "cell":
                rows = index.get(field.scope)
                if rows is None:
                    rows = index[field.scope] = self._index(field.scope, cells)
                out.extend(array.take(rows) for array in self._shared[field.key])
                continue
            assert field.vector is not None, field.key
            for values in field.vector(self.src, cells):
                out.append(self._cell_array(field, values))
        return out

    def _cell_array(self, field: Field, values: Any) -> pa.Array:
        if field.choices:
            return self._choices[field.key].take(values)
        if field.kind == "flag":
            return _FLAGS_TEXT.take(values.view(np.int8)) if self.text else pa.array(values)
        array = pa.array(values, pa.float64(), from_pandas=True)  # NaN: absent
        return pc.cast(array, pa.string()) if self.text else array


def _batches(cells: Sequence[int] | Ints, rows: int = BATCH_ROWS) -> Iterator[Ints]:
    array = np.asarray(cells, dtype=np.int64)
    for start in range(0, len(array), rows):
        yield array[start : start + rows]


# --------------------------------------------------------------------------- CSV


def _binary(out: TextIO | BinaryIO) -> BinaryIO:
    """The byte stream under a text stream (flushed first); a `StringIO` gets an adapter."""
    buffer = getattr(out, "buffer", None)
    if buffer is not None:
        out.flush()
        return buffer  # type: ignore[no-any-return]
    if isinstance(out, io.TextIOBase):
        return _TextAdapter(out)  # type: ignore[return-value]
    return out  # type: ignore[return-value]


class _TextAdapter:
    """Bytes written to a text stream without a byte stream under it (tests' `StringIO`)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def write(self, data: bytes | memoryview) -> int:
        self.out.write(bytes(data).decode("utf-8"))
        return len(data)


def _csv_rows(arrays: Sequence[pa.Array]) -> memoryview:
    """The CSV lines of a batch: each row's cells joined by commas, ended by a newline."""
    *first, last = arrays
    ended = pc.binary_join_element_wise(
        last, "", "\n", null_handling="replace", null_replacement=""
    )
    rows = pc.binary_join_element_wise(
        *first, ended, ",", null_handling="replace", null_replacement=""
    )
    if isinstance(rows, pa.ChunkedArray):
        rows = rows.combine_chunks()
    offsets = np.frombuffer(rows.buffers()[1], dtype=np.int32)
    start, stop = int(offsets[rows.offset]), int(offsets[rows.offset + len(rows)])
    return memoryview(rows.buffers()[2])[start:stop]


def write_csv(
    parts: Parts,
    out: TextIO | BinaryIO,
    names: Sequence[str],
    *,
    progress: Progress | None = None,
    batch_rows: int = BATCH_ROWS,
) -> None:
    """The rows as CSV: a header row of `names`, then one row per cell, `batch_rows`
    rows at a time (the bytes do not depend on it)."""
    line = io.StringIO()
    csv.writer(line, lineterminator="\n").writerow(names)
    sink = _binary(out)
    sink.write(line.getvalue().encode("utf-8"))
    for table, cells in parts:
        if not len(cells):
            continue
        layout = table.layout(text=True)
        for batch in _batches(cells, batch_rows):
            sink.write(_csv_rows(layout.batch(batch)))
            if progress is not None:
                progress(len(batch))


# --------------------------------------------------------------------------- Parquet


def write_parquet(
    parts: Parts,
    fields: Sequence[Field],
    target: Path | BinaryIO,
    *,
    partition: str | None = None,
    progress: Progress | None = None,
) -> None:
    """The rows as one Parquet file (`target` a path or a binary file), or with
    `partition="device"` as a folder of Hive partitions under the path `target`
    (`device=ID/part-0.parquet`, one per device that has rows, its rows in catalog order).
    Writes in place: callers write to a temporary file or folder and move it in
    (`rooflinec.outputs.outfile`)."""
    import pyarrow.parquet as pq

    if partition is None:
        schema = parquet_schema(fields)
        with pq.ParquetWriter(target, schema, compression=PARQUET_COMPRESSION) as writer:
            for table, cells in parts:
                layout = table.layout(text=False)
                for batch in _batches(cells):
                    arrays = layout.batch(batch)
                    writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=schema))
                    if progress is not None:
                        progress(len(batch))
        return
    if not isinstance(target, Path) or partition not in PARTITIONS:
        raise ValueError(f"cannot partition by {partition!r} into {target!r}")
    _write_partitions(parts, fields, target, partition, progress)


class _Partition:
    """One device's file of a partitioned folder: rows gathered until a row group is full."""

    def __init__(self, path: Path, schema: pa.Schema) -> None:
        import pyarrow.parquet as pq

        path.parent.mkdir(parents=True, exist_ok=True)
        self.writer = pq.ParquetWriter(path, schema, compression=PARQUET_COMPRESSION)
        self.pending: list[pa.RecordBatch] = []
        self.rows = 0

    def add(self, batch: pa.RecordBatch) -> None:
        self.pending.append(batch)
        self.rows += batch.num_rows

    def flush(self) -> None:
        if self.pending:
            self.writer.write_table(pa.Table.from_batches(self.pending))
            self.pending, self.rows = [], 0


_GATHER_ROWS = 1 << 20  # rows held for all partitions together before they are written


def _write_partitions(
    parts: Parts,
    fields: Sequence[Field],
    target: Path,
    partition: str,
    progress: Progress | None,
) -> None:
    """One pass over the rows, each batch split by device: every device's rows go to its
    own file in order, written a row group at a time (rows gathered per device, all
    devices together holding at most `_GATHER_ROWS`)."""
    columns = columns_of(fields)
    keep = [i for i, c in enumerate(columns) if c.name != partition]
    at = next(i for i, c in enumerate(columns) if c.name == partition)
    schema = parquet_schema(fields, without=(partition,))
    files: dict[str, _Partition] = {}
    try:
        for table, cells in parts:
            layout = table.layout(text=False)
            for batch in _batches(cells):
                arrays = layout.batch(batch)
                rows = pa.RecordBatch.from_arrays([arrays[i] for i in keep], schema=schema)
                device = arrays[at]
                for value in pc.unique(device).to_pylist():
                    part = files.get(value)
                    if part is None:
                        path = target / f"{partition}={value}" / "part-0.parquet"
                        part = files[value] = _Partition(path, schema)
                    part.add(rows.filter(pc.equal(device, value)))
                if sum(p.rows for p in files.values()) >= _GATHER_ROWS:
                    for part in files.values():
                        part.flush()
                if progress is not None:
                    progress(len(batch))
        for part in files.values():
            part.flush()
    finally:
        for part in files.values():
            part.writer.close()
