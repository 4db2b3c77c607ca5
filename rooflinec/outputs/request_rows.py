"""Request rows written out: the `requests` array of the results contract, JSON Lines, CSV,
Parquet and a table.

One field table, `REQUEST_FIELDS`, in the form of the model rows'
(`rooflinec.outputs.fields.Field`), names every output of a request row (a static batch
of requests of one shape on one device × precision under one deployment,
`rooflinec.engine.requests.RequestResult`) once; every writer lays those fields out.
Values are exact (ints and Fractions); JSON and CSV write an integer as one and anything
else as the nearest float, the table in SI units.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from rooflinec.catalog import Catalog
from rooflinec.engine.requests import RequestResult
from rooflinec.formatting import format_number, format_si
from rooflinec.outputs.cells import csv_text, num, scalar_text
from rooflinec.outputs.fields import Field, each, write_rows_table
from rooflinec.outputs.model_rows import needs_text

__all__ = [
    "REQUEST_CSV_COLUMNS",
    "REQUEST_CSV_PLAIN_COLUMNS",
    "REQUEST_FIELDS",
    "RequestRow",
    "request_data",
    "write_request_csv",
    "write_request_json_rows",
    "write_request_jsonl",
    "write_request_parquet",
    "write_request_table",
]


@dataclass(frozen=True)
class RequestRow:
    """A request's figures with what the row says beside them: the named shape it is of
    (`requests:` in the model's spec; None for `--input/--output`), and whether the
    precision is the model's own."""

    result: RequestResult
    request: str | None
    declared: bool


RequestField = Field[Sequence[RequestRow]]


def _read(
    key: str, headers: tuple[str, ...], attribute: str | None = None, **options: Any
) -> RequestField:
    """The field `key`, read from the row's result (or the row's own `attribute`)."""
    get = attrgetter(attribute if attribute is not None else f"result.{key}")
    return Field(key, "row", each(get), headers, **options)


def _si(unit: str) -> Callable[[Any, str], str]:
    def show(value: Any, counting: str) -> str:
        return "-" if value is None else format_si(value, unit)

    return show


def _text(value: Any, counting: str) -> str:
    return "-" if value is None else str(value)


def _usd(value: Any, counting: str) -> str:
    return "-" if value is None else f"${format_number(value)}"


REQUEST_FIELDS: tuple[RequestField, ...] = (
    _read("model", ("model",), table="model", kind="text"),
    _read("request", ("request",), "request", table="request", kind="text", show=_text),
    _read("device", ("device",), table="device", kind="text"),
    _read("precision", ("precision",), table="precision", kind="text"),
    _read("declared", ("declared",), "declared", kind="flag"),
    # The deployment: chips = tp × pp × dp; dp replicas serve batches of their own.
    _read("chips", ("chips",), "result.deployment.total", table="chips"),
    _read("tp", ("tp",), "result.deployment.tp"),
    _read("pp", ("pp",), "result.deployment.pp"),
    _read("ep", ("ep",), "result.deployment.ep"),
    _read("batch", ("batch",), table="batch"),
    _read("input", ("input",), table="input"),
    _read("output", ("output",), table="output"),
    # Speculation: k drafted tokens a verify pass, each kept with chance `acceptance`
    # (null without); the tokens a decode pass yields on average (1 without).
    _read("draft_tokens", ("draft_tokens",)),
    _read("acceptance", ("acceptance",)),
    _read("tokens_per_pass", ("tokens_per_pass",)),
    # The ledger at the request's peak; the table shows the fit in place of the rates.
    _read("fits", ("fits",), kind="flag"),
    _read("needs_chips", ("needs_chips",)),
    _read("ttft", ("ttft [s]",), table="ttft", show=_si("s")),
    _read("itl", ("itl [s]",), table="itl", show=_si("s")),
    _read("latency", ("latency [s]",), table="latency", show=_si("s")),
    _read(
        "tokens_per_second_per_user",
        ("tokens_per_second_per_user [1/s]",),
        table="tok/s/user",
        show=_si("tok/s"),
    ),
    _read("tokens_per_second", ("tokens_per_second [1/s]",), table="tok/s", show=_si("tok/s")),
    _read(
        "tokens_per_second_per_chip",
        ("tokens_per_second_per_chip [1/s]",),
        table="tok/s/chip",
        show=_si("tok/s"),
    ),
    _read("usd_per_million_tokens", ("usd_per_million_tokens [USD]",), table="$/M tok", show=_usd),
    _read("price_source", ("price_source",), kind="text"),
    # At board power: a reference figure, not a bound either way.
    _read("joules_per_token", ("joules_per_token [J]",), table="J/tok", show=_si("J")),
    _read("tokens_per_second_per_kw", ("tokens_per_second_per_kw [1/(s*kW)]",)),
)

#: The table's columns a row that does not fit shows its fit in place of.
RATE_COLUMNS = ("tok/s/user", "tok/s", "tok/s/chip", "$/M tok", "J/tok")


# ------------------------------------------------------------------------------ values


def _plain(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    return num(value)


def request_data(row: RequestRow) -> dict[str, Any]:
    """One request row as plain JSON data, in the field table's order."""
    return {f.key: _plain(f.values((row,), (0,))[0]) for f in REQUEST_FIELDS if f.json}


# -------------------------------------------------------------------------------- JSON


def write_request_json_rows(rows: Sequence[RequestRow], out: TextIO) -> None:
    """The rows of the `requests` array, indented as `json.dumps(document, indent=2)` nests
    them (the caller writes the brackets)."""
    separator = "\n"
    for row in rows:
        text = json.dumps(request_data(row), indent=2, ensure_ascii=False)
        out.write(separator + "    " + text.replace("\n", "\n    "))
        separator = ",\n"


def write_request_jsonl(rows: Sequence[RequestRow], out: TextIO) -> None:
    """One request row per line."""
    for row in rows:
        out.write(json.dumps(request_data(row), ensure_ascii=False) + "\n")


# --------------------------------------------------------------------------------- CSV

REQUEST_CSV_COLUMNS: list[str] = [h for f in REQUEST_FIELDS for h in f.headers]
_PLAIN_IDS = {name: f"{name}_id" for name in ("model", "device", "precision")}
REQUEST_CSV_PLAIN_COLUMNS: list[str] = [
    _PLAIN_IDS.get(h.split(" [", 1)[0], h.split(" [", 1)[0]) for h in REQUEST_CSV_COLUMNS
]


def _cell(value: Any) -> str:
    return scalar_text(value, "", csv_text, lambda v: repr(num(v)))


def write_request_csv(rows: Sequence[RequestRow], out: TextIO, *, plain: bool = False) -> None:
    """One line per request row; the header with units (or plain names, as the model rows')."""
    header = io.StringIO()
    csv.writer(header, lineterminator="\n").writerow(
        REQUEST_CSV_PLAIN_COLUMNS if plain else REQUEST_CSV_COLUMNS
    )
    out.write(header.getvalue())
    at = range(len(rows))
    columns = [f.values(rows, at) for f in REQUEST_FIELDS]
    for cells in zip(*columns, strict=True):
        out.write(",".join(_cell(c) for c in cells) + "\n")


# ----------------------------------------------------------------------------- Parquet


def write_request_parquet(rows: Sequence[RequestRow], target: Path | BinaryIO) -> None:
    """The rows as one Parquet file: the CSV's columns typed, each number's unit in its
    field's metadata (as the kernel cells' file has them)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rooflinec.outputs.columnar import PARQUET_COMPRESSION, parquet_schema

    schema = parquet_schema(REQUEST_FIELDS)
    at = range(len(rows))
    arrays = []
    for f, column in zip(REQUEST_FIELDS, schema, strict=True):
        values = f.values(rows, at)
        if f.kind == "number":
            values = [None if v is None else float(v) for v in values]
        arrays.append(pa.array(values, column.type))
    pq.write_table(
        pa.Table.from_arrays(arrays, schema=schema), target, compression=PARQUET_COMPRESSION
    )


# ------------------------------------------------------------------------------- table


def write_request_table(catalog: Catalog, rows: Sequence[RequestRow], out: TextIO) -> None:
    """A readable table; `*` marks a precision other than the model's own; a row that does
    not fit says so, and the chips it needs, in place of its rates."""
    fields = [f for f in REQUEST_FIELDS if f.table is not None]
    header = [f.table for f in fields]
    rates = [header.index(name) for name in RATE_COLUMNS]

    def unfit(n: int, line: list[str]) -> None:
        result = rows[n].result
        if result.fits is False:
            for i in rates:
                line[i] = ""
            line[rates[0]] = needs_text(result.needs_chips)

    units = [catalog.precisions[row.result.precision].unit for row in rows]
    write_rows_table(fields, rows, units, [row.declared for row in rows], unfit, "request row", out)
