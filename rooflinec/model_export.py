"""Model rows written out: the `models` array of the results contract, JSON Lines, CSV
and a table.

A row's text is made from that row's exact values alone (`ModelResult`), so it never
depends on what else was selected. Numbers follow the results: an exact value that is
an integer is written as one, anything else as the nearest float.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, TextIO

from rooflinec.catalog import LEVELS, Catalog
from rooflinec.cells import num, spreadsheet_text
from rooflinec.formatting import format_percent, format_si
from rooflinec.models import ModelResult, StepResult
from rooflinec.terms import LIMITED_BY

__all__ = [
    "MODEL_CSV_COLUMNS",
    "model_data",
    "write_model_csv",
    "write_model_json_rows",
    "write_model_jsonl",
    "write_model_table",
]


def _opt(value: Fraction | None) -> int | float | None:
    return None if value is None else num(value)


def step_data(s: StepResult) -> dict[str, Any]:
    """One step as the contract gives it: totals over `count`, rates of each run."""
    return {
        "step": s.step,
        "kernel": s.kernel,
        "count": s.count,
        "shape": dict(s.shape),
        "precision": s.precision,
        "widths": dict(s.widths),
        "flops": num(s.flops),
        "bytes": {lv: num(b) for lv, b in s.bytes.items()},
        "time": num(s.time),
        "intensity": {lv: num(i) for lv, i in s.intensity.items()},
        "attainable": num(s.attainable),
        "limited_by": s.limited_by,
    }


def model_data(r: ModelResult, *, steps: bool = True) -> dict[str, Any]:
    """One model row as plain JSON data, in the contract's order (without its steps
    when `steps` is false)."""
    data = {
        "model": r.model,
        "phase": r.phase,
        "device": r.device,
        "precision": r.precision,
        "declared": r.declared,
        "tokens": r.tokens,
        "flops": num(r.flops),
        "bytes": {lv: num(b) for lv, b in r.bytes.items()},
        "time": num(r.time),
        "attainable": num(r.attainable),
        "tokens_per_second": num(r.tokens_per_second),
        "time_by_limit": {k: num(v) for k, v in r.time_by_limit.items()},
        "measured_time": _opt(r.measured_time),
        "efficiency": _opt(r.efficiency),
    }
    if steps:
        data["steps"] = [step_data(s) for s in r.steps]
    return data


_STRINGS: dict[str, str] = {}


def _string(text: str) -> str:
    """A JSON string; ids, keys and terms repeat on every row, so each is encoded once."""
    hit = _STRINGS.get(text)
    if hit is None:
        hit = _STRINGS[text] = json.dumps(text, ensure_ascii=False)
    return hit


def _dump(value: Any, pad: str) -> str:
    """`value` as `json.dumps(value, indent=2)` writes it at indentation `pad`: the same
    text, several times faster than the standard library's pure-Python indenting encoder."""
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = pad + "  "
        items = ",\n".join(f"{inner}{_string(k)}: {_dump(v, inner)}" for k, v in value.items())
        return "{\n" + items + "\n" + pad + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        inner = pad + "  "
        items = ",\n".join(inner + _dump(v, inner) for v in value)
        return "[\n" + items + "\n" + pad + "]"
    if isinstance(value, str):
        return _string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    return repr(value)  # int or float: json writes both as repr does


_StepKey = tuple[int, int, int, str, str]


def _quotient(numerator: int, denominator: int) -> str:
    """`json.dumps(num(Fraction(numerator, denominator)))` for positive integers: int
    true division rounds correctly, as `float(Fraction)` does."""
    if numerator % denominator == 0:
        return repr(numerator // denominator)
    return repr(numerator / denominator)


def _step_line(s: StepResult, fragments: dict[_StepKey, tuple[str, str]]) -> str:
    """`json.dumps(step_data(s))`, from fragments shared by every device: a step's
    counts, shape and intensities are the same on all of them (the same objects, whence
    the identity key; `fragments` lives no longer than the rows it was filled from)."""
    key = (id(s.intensity), id(s.shape), s.count, s.step, s.precision)
    hit = fragments.get(key)
    if hit is None:
        data = step_data(s)
        text = json.dumps(data, ensure_ascii=False)
        head, _, rest = text.partition(', "time": ')
        hit = fragments[key] = (
            head,
            rest[rest.index(', "intensity": ') : rest.index(', "attainable": ')],
        )
    time = _quotient(s.time.numerator, s.time.denominator)
    # flops / time without building the Fraction: the same float, no gcd
    attainable = _quotient(
        s.flops.numerator * s.time.denominator, s.flops.denominator * s.time.numerator
    )
    return (
        f'{hit[0]}, "time": {time}{hit[1]}, "attainable": {attainable}, '
        f'"limited_by": {_string(s.limited_by)}}}'
    )


def model_json(
    r: ModelResult, pad: str = "", fragments: dict[_StepKey, tuple[str, str]] | None = None
) -> str:
    """One model row as indented JSON text, each of its steps on one line: a row has a
    dozen steps, and a step per line reads as a table (and is written by json's C
    encoder, where indenting every step's fields took most of a compile's time)."""
    fragments = {} if fragments is None else fragments
    data = model_data(r, steps=False)
    head = _dump(data, pad)
    inner = pad + "    "
    lines = ",\n".join(inner + _step_line(step, fragments) for step in r.steps)
    body = f"[\n{lines}\n{pad}  ]" if r.steps else "[]"
    return f"{head[:-2]},\n{pad}  {_string('steps')}: {body}\n{pad}}}"


def write_model_json_rows(rows: Sequence[ModelResult], out: TextIO) -> None:
    """The rows of the `models` array, indented as `json.dumps(document, indent=2)` nests
    them (the caller writes the brackets)."""
    separator = "\n"
    fragments: dict[_StepKey, tuple[str, str]] = {}
    for r in rows:
        out.write(separator + "    " + model_json(r, "    ", fragments))
        separator = ",\n"


def write_model_jsonl(rows: Sequence[ModelResult], out: TextIO) -> None:
    """One model row per line, with its steps."""
    for r in rows:
        out.write(json.dumps(model_data(r), ensure_ascii=False) + "\n")


_LIMITS = LIMITED_BY  # compute, each level, latency
MODEL_CSV_COLUMNS: list[str] = [
    "model",
    "phase",
    "device",
    "precision",
    "declared",
    "tokens",
    "flops [OP]",
    *(f"bytes_{lv} [B]" for lv in LEVELS),
    "time [s]",
    "attainable [OP/s]",
    "tokens_per_second [1/s]",
    *(f"time_{name} [s]" for name in _LIMITS),
    "measured_time [s]",
    "efficiency [1]",
    "steps",
]
_PLAIN_IDS = {name: f"{name}_id" for name in ("model", "device", "precision")}
MODEL_CSV_PLAIN_COLUMNS: list[str] = [
    _PLAIN_IDS.get(h.split(" [", 1)[0], h.split(" [", 1)[0]) for h in MODEL_CSV_COLUMNS
]


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="").writerow([spreadsheet_text(value)])
        return buffer.getvalue()
    return repr(value)


def write_model_csv(rows: Sequence[ModelResult], out: TextIO, *, plain: bool = False) -> None:
    """One row per model × phase × device × precision; steps are in JSON and `explain`."""
    header = MODEL_CSV_PLAIN_COLUMNS if plain else MODEL_CSV_COLUMNS
    csv.writer(out, lineterminator="\n").writerow(header)
    for r in rows:
        cells: list[Any] = [
            r.model,
            r.phase,
            r.device,
            r.precision,
            r.declared,
            r.tokens,
            num(r.flops),
            *(_opt(r.bytes.get(lv)) for lv in LEVELS),
            num(r.time),
            num(r.attainable),
            num(r.tokens_per_second),
            *(_opt(r.time_by_limit.get(name)) for name in _LIMITS),
            _opt(r.measured_time),
            _opt(r.efficiency),
            len(r.steps),
        ]
        out.write(",".join(_cell(c) for c in cells) + "\n")


def dominant_limit(r: ModelResult) -> str:
    """What holds the most of the pass's time (ties in the method's order)."""
    longest = max(r.time_by_limit.values())
    return next(name for name in LIMITED_BY if r.time_by_limit.get(name) == longest)


def _most_time(r: ModelResult) -> str:
    limit = dominant_limit(r)
    return f"{limit} ({format_percent(r.time_by_limit[limit] / r.time)})"


def write_model_table(catalog: Catalog, rows: Sequence[ModelResult], out: TextIO) -> None:
    """A readable table; `*` marks a precision other than the model's own."""
    header = [
        "model",
        "phase",
        "device",
        "precision",
        "operations",
        "time",
        "attainable",
        "tokens/s",
        "most time",
        "efficiency",
    ]
    table = [header]
    for r in rows:
        unit = catalog.precisions[r.precision].unit
        table.append(
            [
                r.model,
                r.phase,
                r.device,
                r.precision + ("" if r.declared else "*"),
                format_si(r.flops, unit),
                format_si(r.time, "s"),
                format_si(r.attainable, unit + "/s"),
                format_si(r.tokens_per_second, "tok/s"),
                _most_time(r),
                "-" if r.efficiency is None else format_percent(r.efficiency),
            ]
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = []
    for n, row in enumerate(table):
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    rows_text = "1 model row" if len(rows) == 1 else f"{len(rows)} model rows"
    lines.append(f"{rows_text}; * = not the model's own precision")
    out.write("\n".join(lines) + "\n")
