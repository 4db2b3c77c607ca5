"""The formats `compile` writes, in one registry: the command line's `--format` choices,
their help and the README's table of formats all read `FORMATS`.

A format takes kernel cells (`cells`), model rows (`models`, each with its steps), or
both; `rows` says which it writes when both are selected:

- `both`: side by side (the JSON document's `results` and `models`, the table's two tables);
- `cells-first`: one kind per output, the kernel cells when any are selected, else the
  model rows (a CSV's header names its kind);
- `by-model`: one kind per stream, the model rows with `--model`, else the kernel cells
  (JSON Lines: a data-frame tool reads a stream as one rectangular table).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "DEFAULT_FORMAT",
    "FORMATS",
    "OutputFormat",
    "RowKind",
    "format_help",
    "readme_table",
]

RowKind = Literal["cells", "models"]
Rows = Literal["both", "cells-first", "by-model"]
_KIND_NAMES: dict[RowKind, str] = {"cells": "kernel cells", "models": "model rows"}


@dataclass(frozen=True)
class OutputFormat:
    """One `--format`: what it writes and how."""

    name: str
    writes: str  # one phrase: what a reader gets (the README's table)
    streams: bool  # written a batch of rows at a time, as they are computed
    needs_out: bool  # a binary file: only with `--out FILE`
    kinds: tuple[RowKind, ...]  # the row kinds it takes
    rows: Rows = "both"
    brief: str = ""  # a few words for `--help`, after the name

    def takes(self, kind: RowKind) -> bool:
        return kind in self.kinds


FORMATS: dict[str, OutputFormat] = {
    f.name: f
    for f in (
        OutputFormat(
            "json",
            "the results contract (`schemas/results.schema.json`): `results` and `models`",
            streams=True,
            needs_out=False,
            kinds=("cells", "models"),
        ),
        OutputFormat(
            "jsonl",
            "one record per line, one kind of row per stream: kernel cells, or model rows "
            "(with their steps) with `--model`",
            streams=True,
            needs_out=False,
            kinds=("cells", "models"),
            rows="by-model",
            brief="one record per line: cells, or model rows with --model",
        ),
        OutputFormat(
            "csv",
            "one row per kernel cell, or per model row when `--model` alone selects; units "
            "in the headers or plain names (`--csv-header`)",
            streams=True,
            needs_out=False,
            kinds=("cells", "models"),
            rows="cells-first",
        ),
        OutputFormat(
            "table",
            "a readable terminal table; model rows in a table of their own after the cells",
            streams=False,
            needs_out=False,
            kinds=("cells", "models"),
        ),
        OutputFormat(
            "parquet",
            "typed columns with their units, one file or a folder of Hive partitions "
            "(`--partition device`)",
            streams=True,
            needs_out=True,
            kinds=("cells",),
        ),
    )
}
DEFAULT_FORMAT = "table"


def _names(names: list[str]) -> str:
    """`a, b and c`."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def taking(kind: RowKind) -> str:
    """The formats that take `kind`, for a message: `json, jsonl, csv and table`."""
    return _names([f.name for f in _in_order() if f.takes(kind)])


def _in_order() -> list[OutputFormat]:
    """The default first, then the registry's order."""
    return [FORMATS[DEFAULT_FORMAT], *(f for f in FORMATS.values() if f.name != DEFAULT_FORMAT)]


def format_help() -> str:
    """`--format`'s help: `table (default), json, jsonl (…), csv or parquet (needs --out)`."""
    parts = []
    for f in _in_order():
        notes = [n for n in (f.brief, "needs --out" if f.needs_out else "") if n]
        default = " (default)" if f.name == DEFAULT_FORMAT else ""
        parts.append(f.name + default + (f" ({'; '.join(notes)})" if notes else ""))
    return ", ".join(parts[:-1]) + " or " + parts[-1]


def readme_table() -> str:
    """The README's table of formats, as Markdown (a test keeps the README's copy equal)."""
    lines = [
        "| `--format` | writes | rows | streamed | needs `--out` |",
        "| --- | --- | --- | --- | --- |",
    ]
    for f in _in_order():
        kinds = " and ".join(_KIND_NAMES[k] for k in f.kinds)
        yes_no = {True: "yes", False: "no"}
        lines.append(
            f"| `{f.name}` | {f.writes} | {kinds} | {yes_no[f.streams]} | {yes_no[f.needs_out]} |"
        )
    return "\n".join(lines) + "\n"
