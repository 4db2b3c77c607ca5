"""Model rows written out: the `models` array of the results contract, JSON Lines, CSV
and a table.

A row's text is made from that row's exact values alone (`ModelResult`), so it never
depends on what else was selected. Numbers follow the results: an exact value that is
an integer is written as one, anything else as the nearest float.
"""

from __future__ import annotations

import csv
import functools
import json
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, TextIO

from rooflinec.catalog import LEVELS, Catalog
from rooflinec.cells import csv_text, num
from rooflinec.formatting import format_percent, format_si
from rooflinec.models import ModelResult, PlanStep, StepResult, collector_paused
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


@functools.lru_cache(maxsize=4096)  # a pure memo, bounded
def _string(text: str) -> str:
    """A JSON string; ids, keys and terms repeat on every row, so each is encoded once."""
    return json.dumps(text, ensure_ascii=False)


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


def _quotient(numerator: int, denominator: int) -> str:
    """`json.dumps(num(Fraction(numerator, denominator)))` for positive integers, the
    fraction reduced or not: int true division rounds correctly, as `float(Fraction)`
    does."""
    if numerator % denominator == 0:
        return repr(numerator // denominator)
    return repr(numerator / denominator)


def _ratio(value: Fraction | int) -> str:
    """`json.dumps(num(value))`."""
    return _quotient(value.numerator, value.denominator)


# A step's text but for its time, rate and limit, before and after its time, with its
# count and one run's operations as integers: the same on every device.
_Fragment = tuple[str, str, int, int, int]


class _Texts:
    """Texts that the rows of one write share, keyed by the identity of what they are
    made from (the rows keep their plans and bounds alive, and a `_Texts` lives no
    longer than the write that fills it from those rows).

    `heads`: the fields of a row that are the same for every row of its plan (see
    `_fields`), by the plan and indentation; `steps`: each plan's steps' fragments, by
    the plan and indentation; `bounds`: the texts of a step's time and of its rate and
    limit, by its bound and count. A device's bound of a run is one object, shared by
    every row on that device that makes the run, so a step's numbers are written once
    per device, kernel, shape and count.
    """

    __slots__ = ("bounds", "heads", "steps")

    def __init__(self) -> None:
        self.heads: dict[tuple[int, str], tuple[str, str]] = {}
        self.steps: dict[tuple[int, str], tuple[_Fragment, ...]] = {}
        self.bounds: dict[tuple[int, int], tuple[str, str]] = {}


def _fragment(entry: PlanStep, lead: str) -> _Fragment:
    c = entry.counts
    data = {
        "step": entry.step.id,
        "kernel": entry.step.kernel,
        "count": c.count,
        "shape": dict(entry.shape),
        "precision": entry.precision,
        "widths": dict(entry.step.widths),
        "flops": num(c.total_flops),
        "bytes": {lv: num(b) for lv, b in c.total_bytes.items()},
        "time": 0,
        "intensity": {lv: num(i) for lv, i in c.intensity.items()},
    }
    text = json.dumps(data, ensure_ascii=False)
    head, _, rest = text.partition(', "time": ')
    return (
        lead + head + ', "time": ',
        rest[rest.index(', "intensity": ') : -1] + ', "attainable": ',
        c.count,
        *c.flops_ratio,
    )


def _step_lines(r: ModelResult, texts: _Texts, lead: str = "") -> list[str]:
    """`json.dumps(step_data(s))` for each step of `r`, from the integers of its plan and
    runs (without making its steps' results) and texts shared by every row, each line
    after `lead` (its indentation)."""
    if r.plan is None:
        return [lead + json.dumps(step_data(s), ensure_ascii=False) for s in r.steps]
    fragments = texts.steps.get((id(r.plan), lead))
    if fragments is None:
        fragments = texts.steps[id(r.plan), lead] = tuple(_fragment(e, lead) for e in r.plan.steps)
    done = texts.bounds
    lines = []
    for (head, middle, count, flops_n, flops_d), bound in zip(fragments, r.runs, strict=True):
        pair = done.get((id(bound), count))
        if pair is None:
            n, d, limited_by = bound
            # time = n·count/d; the rate of each run, flops / (n/d), without a Fraction
            time, rate, rate_d = n * count, flops_n * d, flops_d * n
            pair = done[id(bound), count] = (
                repr(time // d) if time % d == 0 else repr(time / d),
                (repr(rate // rate_d) if rate % rate_d == 0 else repr(rate / rate_d))
                + ', "limited_by": '
                + _string(limited_by)
                + "}",
            )
        lines.append(head + pair[0] + middle + pair[1])
    return lines


def _head(r: ModelResult, pad: str, texts: _Texts | None = None) -> str:
    """`_dump(model_data(r, steps=False), pad)`, written directly: numbers from the
    exact values' integers, as `num` writes them."""
    return _fields(r, pad, texts) + "\n" + pad + "}"


def _fields(r: ModelResult, pad: str, texts: _Texts | None = None) -> str:
    """`_head` without its closing line. What comes before the device and between it and
    the time (model, phase, precision, tokens, operations, bytes) is the same for every
    row of a plan (`evaluate` takes them all from the plan's model, phase and precision):
    written once per plan."""
    inner = pad + "  "
    key = (id(r.plan), pad)
    fixed = None if r.plan is None or texts is None else texts.heads.get(key)
    if fixed is None:
        fixed = (
            f'{{\n{inner}"model": {_string(r.model)},\n{inner}"phase": {_string(r.phase)}'
            f',\n{inner}"device": ',
            f',\n{inner}"precision": {_string(r.precision)}'
            f',\n{inner}"declared": {"true" if r.declared else "false"}'
            f',\n{inner}"tokens": {r.tokens!r}'
            f',\n{inner}"flops": {_ratio(r.flops)}'
            f',\n{inner}"bytes": {_levels(r.bytes, inner)}'
            f',\n{inner}"time": ',
        )
        if r.plan is not None and texts is not None:
            texts.heads[key] = fixed
    time_n, time_d = r.time.numerator, r.time.denominator
    flops_n, flops_d = r.flops.numerator, r.flops.denominator
    measured = "null" if r.measured_time is None else _ratio(r.measured_time)
    efficiency = "null" if r.efficiency is None else _ratio(r.efficiency)
    return (
        f"{fixed[0]}{_string(r.device)}{fixed[1]}{_quotient(time_n, time_d)}"
        f',\n{inner}"attainable": {_quotient(flops_n * time_d, flops_d * time_n)}'
        f',\n{inner}"tokens_per_second": {_quotient(r.tokens * time_d, time_n)}'
        f',\n{inner}"time_by_limit": {_levels(r.time_by_limit, inner)}'
        f',\n{inner}"measured_time": {measured}'
        f',\n{inner}"efficiency": {efficiency}'
    )


def _levels(values: dict[str, Fraction], pad: str) -> str:
    """`_dump` of a dict of exact numbers at indentation `pad`."""
    if not values:
        return "{}"
    inner = pad + "  "
    items = ",\n".join(f"{inner}{_string(k)}: {_ratio(v)}" for k, v in values.items())
    return "{\n" + items + "\n" + pad + "}"


def model_json(r: ModelResult, pad: str = "", texts: _Texts | None = None) -> str:
    """One model row as indented JSON text, each of its steps on one line: a row has a
    dozen steps, and a step per line reads as a table (and is written by json's C
    encoder, where indenting every step's fields took most of a compile's time)."""
    texts = _Texts() if texts is None else texts
    inner = pad + "    "
    lines = ",\n".join(_step_lines(r, texts, inner))
    body = f"[\n{lines}\n{pad}  ]" if lines else "[]"
    return f"{_fields(r, pad, texts)},\n{pad}  {_string('steps')}: {body}\n{pad}}}"


def write_model_json_rows(rows: Sequence[ModelResult], out: TextIO) -> None:
    """The rows of the `models` array, indented as `json.dumps(document, indent=2)` nests
    them (the caller writes the brackets)."""
    separator = "\n"
    texts = _Texts()
    with collector_paused():
        for r in rows:
            out.write(separator + "    " + model_json(r, "    ", texts))
            separator = ",\n"


def write_model_jsonl(rows: Sequence[ModelResult], out: TextIO) -> None:
    """One model row per line, with its steps: `json.dumps(model_data(r))`, its steps
    written as the JSON document's are."""
    texts = _Texts()
    with collector_paused():
        for r in rows:
            head = json.dumps(model_data(r, steps=False), ensure_ascii=False)
            steps = ", ".join(_step_lines(r, texts))
            out.write(f'{head[:-1]}, "steps": [{steps}]}}\n')


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
        return csv_text(value)
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
