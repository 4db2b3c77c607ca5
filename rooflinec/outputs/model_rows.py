"""Model rows written out: the `models` array of the results contract, JSON Lines, CSV
and a table.

Two field tables, in the form of the kernel cells' (`rooflinec.outputs.fields.Field`),
name every output once: `MODEL_FIELDS` for a row (model × phase × device × precision)
and `STEP_FIELDS` for each of its steps. Their values are exact (ints and Fractions);
each writer turns them into its text: JSON and CSV an exact value that is an integer as
one and anything else as the nearest float, the table in SI units.

A row's text is made from that row's exact values alone (`ModelResult`), so it never
depends on what else was selected. The JSON writers write what every row of a plan
shares (a field of scope `plan`, a step's fields of scope `step`) once per plan, and a
step's fields of scope `run` once per device's bound of a run: a compile of the bundled
catalog writes tens of thousands of steps, a few thousand distinct.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction
from functools import lru_cache
from operator import attrgetter
from typing import Any, TextIO

from rooflinec.catalog import INTERCONNECT_ROLES, LEVELS, Catalog
from rooflinec.engine.memory import CHIP_DEGREES, LEDGER_KEYS
from rooflinec.engine.models import (
    CollectiveBound,
    CollectiveStep,
    ModelResult,
    PlanStep,
    Runs,
    StepResult,
    collector_paused,
)
from rooflinec.engine.terms import MODEL_LIMITS
from rooflinec.formatting import format_percent, format_si
from rooflinec.outputs.cells import csv_text, num, scalar_text
from rooflinec.outputs.fields import Field, Scope, each, write_rows_table

__all__ = [
    "MODEL_CSV_COLUMNS",
    "MODEL_CSV_PLAIN_COLUMNS",
    "MODEL_FIELDS",
    "STEP_FIELDS",
    "fit_text",
    "model_data",
    "needs_text",
    "step_data",
    "write_model_csv",
    "write_model_json_rows",
    "write_model_jsonl",
    "write_model_table",
]

ModelField = Field[Sequence[ModelResult]]
_BYTE_KEYS = (*LEVELS, *INTERCONNECT_ROLES)
StepField = Field[Sequence[StepResult]]


def _read(
    name: str, scope: Scope, headers: tuple[str, ...], keys: tuple[str, ...] = (), **options: Any
) -> Field[Any]:
    """The field `name` of a model row or a step, read from its attribute of that name."""
    return Field(name, scope, each(attrgetter(name)), headers, keys, **options)


def _si(unit: str) -> Callable[[Any, str], str]:
    """Table text in SI units; `{}` in `unit` is the counting unit (FLOP or OP)."""

    def show(value: Any, counting: str) -> str:
        return "-" if value is None else format_si(value, unit.format(counting))

    return show


def dominant_limit(r: ModelResult) -> str:
    """What holds the most of the pass's time (ties in the method's order)."""
    return _dominant(r.time_by_limit)


def _dominant(time_by_limit: dict[str, Fraction]) -> str:
    longest = max(time_by_limit.values())
    return next(name for name in MODEL_LIMITS if time_by_limit.get(name) == longest)


def _most_time(value: dict[str, Fraction], counting: str) -> str:
    """The limit that holds the most time and its share (the times sum to the pass's)."""
    limit = _dominant(value)
    return f"{limit} ({format_percent(value[limit] / sum(value.values()))})"


def _step_count(r: ModelResult) -> int:
    if r.plan is None:
        return len(r.steps)
    return len(r.plan.steps) + len(r.plan.collectives)  # without making them


def _percent(value: Any, counting: str) -> str:
    return "-" if value is None else format_percent(value)


MODEL_FIELDS: tuple[ModelField, ...] = (
    _read("model", "plan", ("model",), table="model", kind="text"),
    _read("phase", "plan", ("phase",), table="phase", kind="text"),
    _read("device", "row", ("device",), table="device", kind="text"),
    _read("precision", "plan", ("precision",), table="precision", kind="text"),
    _read("declared", "plan", ("declared",), kind="flag"),
    # The deployment: chips = tp × pp × dp (a row is one replica's pass).
    _read("chips", "plan", ("chips",)),
    _read("tp", "plan", ("tp",)),
    _read("pp", "plan", ("pp",)),
    _read("ep", "plan", ("ep",)),
    _read("tokens", "plan", ("tokens",)),
    _read("flops", "plan", ("flops [OP]",), table="operations", show=_si("{}")),
    # Of scope row: a collective's bytes (scale_up, scale_out) are its device's.
    _read("bytes", "row", tuple(f"bytes_{lv} [B]" for lv in _BYTE_KEYS), _BYTE_KEYS),
    _read("time", "row", ("time [s]",), table="time", show=_si("s")),
    _read("time_overlapped", "row", ("time_overlapped [s]",)),
    _read("attainable", "row", ("attainable [OP/s]",), table="attainable", show=_si("{}/s")),
    _read(
        "tokens_per_second",
        "row",
        ("tokens_per_second [1/s]",),
        table="tokens/s",
        show=_si("tok/s"),
    ),
    _read(
        "time_by_limit",
        "row",
        tuple(f"time_{name} [s]" for name in MODEL_LIMITS),
        MODEL_LIMITS,
        table="most time",
        show=_most_time,
    ),
    _read("limited_by", "row", ("limited_by",), kind="text"),
    _read("measured_time", "row", ("measured_time [s]",)),
    _read("efficiency", "row", ("efficiency [1]",), table="efficiency", show=_percent),
    # The memory ledger per chip (`rooflinec.engine.memory`); null without a ledger or a
    # capacity. Of scope fit: every row of the same fit (`ModelResult.fit`) shares them.
    # The table shows the fit in place of tokens/s (`fit_text`).
    _read("fits", "fit", ("fits",), kind="flag"),
    _read("memory", "fit", tuple(f"memory_{k} [B]" for k in LEDGER_KEYS), LEDGER_KEYS),
    _read("max_batch", "fit", ("max_batch",)),
    _read("max_context", "fit", ("max_context",)),
    _read("max_context_note", "fit", ("max_context_note",), kind="text"),
    _read("needs_chips", "fit", ("needs_chips",)),
    # JSON nests the steps themselves (`STEP_FIELDS`); CSV, one row per model row, counts them.
    Field("steps", "row", each(_step_count), ("steps",), json=False),
)

STEP_FIELDS: tuple[StepField, ...] = (
    _read("step", "step", ("step",), kind="text"),
    _read("kernel", "step", ("kernel",), kind="text"),
    _read("count", "step", ("count",)),
    _read("shape", "step", ("shape",), mapping=True, kind="text"),
    _read("precision", "step", ("precision",), kind="text"),
    _read("widths", "step", ("widths",), mapping=True, kind="text"),
    _read("flops", "step", ("flops [OP]",)),
    _read("bytes", "step", ("bytes [B]",), _BYTE_KEYS),
    _read("time", "run", ("time [s]",)),
    _read("intensity", "step", ("intensity [OP/B]",), _BYTE_KEYS),
    _read("attainable", "run", ("attainable [OP/s]",)),
    _read("limited_by", "run", ("limited_by",), kind="text"),
)


# ------------------------------------------------------------------------------ values


def _plain(value: Any) -> Any:
    """An exact value as plain JSON data: numbers by `num`, mappings member by member."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (Fraction, int)) and not isinstance(value, bool):
        return num(value)
    return value


def _data(fields: Sequence[Field[Any]], row: Any) -> dict[str, Any]:
    return {f.key: _plain(f.values((row,), (0,))[0]) for f in fields if f.json}


def step_data(s: StepResult) -> dict[str, Any]:
    """One step as the contract gives it: totals over `count`, rates of each run."""
    return _data(STEP_FIELDS, s)


def model_data(r: ModelResult, *, steps: bool = True) -> dict[str, Any]:
    """One model row as plain JSON data, in the contract's order (without its steps
    when `steps` is false)."""
    data = _data(MODEL_FIELDS, r)
    if steps:
        data["steps"] = [step_data(s) for s in r.steps]
    return data


# -------------------------------------------------------------------------------- JSON


@lru_cache(maxsize=1 << 14)
def _string(text: str) -> str:
    """A JSON string; ids, keys and terms repeat on every row, so each is encoded once
    (by what `json.dumps(text, ensure_ascii=False)` encodes a string with)."""
    return _encode_string(text)


_encode_string: Callable[[str], str] = json.encoder.encode_basestring


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


def _line(value: Any) -> str:
    """`json.dumps(value)` on one line."""
    return _ENCODER.encode(value)


# What `json.dumps(value, ensure_ascii=False)` encodes with, made once: `dumps` makes an
# encoder per call when given any option, which costs more than encoding a step's shape.
_ENCODER = json.JSONEncoder(ensure_ascii=False)


# A step's line without its fields of scope `run`: the texts of its `step` fields around
# each group of neighbouring `run` fields (`_RUN_GROUPS`), which the line joins in
# between. Joined, not a `str.format` template: formatting scans the whole line for its
# places, a join copies the pieces (a compile writes tens of thousands of step lines).
_Fragment = tuple[str, ...]


class _Texts:
    """Texts that the rows of one write share, keyed by the identity of what they are
    made from (the rows keep their plans, bounds and fits alive, and a `_Texts` lives no
    longer than the write that fills it from those rows) or by value.

    `heads`: a row's `plan` fields between its own fields, by the plan and indentation;
    `steps`: each plan's steps' fragments and run keys, by the plan and indentation;
    `runs`: the texts of a step's `run` fields, by the value of its bound and of its
    count and operations, so a step's numbers are written once per distinct run and
    ceilings, whatever device or precision has them; `fits`: a row's members of its
    fields of scope `fit`, by its fit and indentation; `blocks`: a row's steps' text, by
    its plan, indentation and runs.
    """

    __slots__ = (
        "blocks",
        "bounds",
        "collectives",
        "fits",
        "fragments",
        "heads",
        "runs",
        "steps",
    )

    def __init__(self) -> None:
        self.heads: dict[tuple[int, str], tuple[str, ...]] = {}
        self.steps: dict[
            tuple[int, str], tuple[tuple[_Fragment, ...], tuple[tuple[int, int, int], ...]]
        ] = {}
        # one step's fragment by its counts, precision and indentation: a step whose
        # shape names no degree has the same counts, so the same text, in every deployment
        self.fragments: dict[tuple[int, str, str], _Fragment] = {}
        self.runs: dict[tuple[tuple[int, int, str], tuple[int, int, int]], tuple[str, ...]] = {}
        # a collective step's shared members, and its device's members per bound and count
        self.collectives: dict[int, str] = {}
        self.bounds: dict[tuple[int, int], str] = {}
        self.fits: dict[tuple[int, str], tuple[str, ...]] = {}
        # a row's steps' lines, joined, by its plan, indentation and runs (`_steps_text`)
        self.blocks: dict[tuple[int, str, Runs], str] = {}


def _between(groups: list[list[str]], separator: str) -> tuple[str, ...]:
    """The texts around a row's own fields: the shared members before the first, between
    each two and after the last, each with the separators its neighbours need."""
    last = len(groups) - 1
    return tuple(
        separator.join(([""] if n else []) + group + ([""] if n < last else []))
        for n, group in enumerate(groups)
    )


def _shared(
    fields: Sequence[Field[Any]], scope: str, row: Any, member: Callable[[str, Any], str]
) -> list[list[str]]:
    """The members of `row`'s JSON fields of `scope`, grouped between its other fields."""
    groups: list[list[str]] = [[]]
    for f in fields:
        if not f.json:
            continue
        if f.scope == scope:
            groups[-1].append(member(f.key, _plain(f.values((row,), (0,))[0])))
        else:
            groups.append([])
    return groups


def _own(fields: Sequence[Field[Any]], scope: str) -> list[Field[Any]]:
    """The JSON fields a row does not share (of any scope but `scope`), in order."""
    return [f for f in fields if f.json and f.scope != scope]


def _plan_step(entry: PlanStep) -> StepResult:
    """A plan's step as a step result for its `step` fields (its `run` fields unread)."""
    c = entry.counts
    return StepResult(
        entry.step.id,
        entry.step.kernel,
        c.count,
        dict(entry.shape),
        entry.precision,
        dict(entry.step.widths),
        c.total_flops,
        c.total_bytes,
        Fraction(0),
        c.intensity,
        "",
    )


def _shared_fragment(entry: PlanStep, lead: str, texts: _Texts) -> _Fragment:
    """`_fragment` of a plan's step, once per counts object (which fixes the model, phase,
    step, shape and width), precision and indentation."""
    key = (id(entry.counts), entry.precision, lead)
    hit = texts.fragments.get(key)
    if hit is None:
        hit = texts.fragments[key] = _fragment(entry, lead)
    return hit


def _fragment(entry: PlanStep, lead: str) -> _Fragment:
    """A plan's step as the texts around each group of its `run` fields."""
    texts = _between(_shared(STEP_FIELDS, "step", _plan_step(entry), _member), ", ")
    # Between two `run` fields of a group there is only the separator: in the group's text.
    return (lead + "{" + texts[0], *[t for t in texts[1:-1] if t != ", "], texts[-1] + "}")


def _member(key: str, value: Any) -> str:
    return f"{_string(key)}: {_flat(value)}"


def _flat(value: Any) -> str:
    """`json.dumps(value)` of plain data, a number or string without the encoder."""
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return repr(value)  # json writes both as repr does
    if type(value) is dict and all(type(k) is str for k in value):
        # A step's shape, widths, bytes: the encoder makes a C encoder per call, for a
        # few members (json's separators, ", " and ": ").
        return "{" + ", ".join([f"{_string(k)}: {_flat(v)}" for k, v in value.items()]) + "}"
    return _line(value)


_RUN_FIELDS = _own(STEP_FIELDS, "step")
_ROW_FIELDS = _own(MODEL_FIELDS, "plan")


def _step_lines(r: ModelResult, texts: _Texts, lead: str = "") -> list[str]:
    """`json.dumps(step_data(s))` for each step of `r`, from its plan and runs (without
    making its steps' results), each line after `lead` (its indentation)."""
    if r.plan is None:
        return [lead + _line(step_data(s)) for s in r.steps]
    shared = texts.steps.get((id(r.plan), lead))
    if shared is None:
        shared = texts.steps[id(r.plan), lead] = (
            tuple([_shared_fragment(e, lead, texts) for e in r.plan.steps]),
            tuple([_run_key(e) for e in r.plan.steps]),
        )
    fragments, counts = shared
    done = texts.runs
    # By value: devices (and precisions) with the same ceilings bound a run alike.
    keys = list(zip(r.runs, counts, strict=True))
    try:
        found = list(map(done.__getitem__, keys))
    except KeyError:  # some run not written yet: all of this row's new ones at once
        runs = zip(keys, r.plan.steps, r.runs, strict=True)
        new = {key: (e, bound) for key, e, bound in runs if key not in done}
        done.update(zip(new, _run_texts(list(new.values())), strict=True))
        found = list(map(done.__getitem__, keys))
    # `_RUN_GROUPS` is two groups (the time; the rate and limit): woven in place.
    join = "".join
    lines = [
        join((f0, t0, f1, t1, f2)) for (f0, f1, f2), (t0, t1) in zip(fragments, found, strict=True)
    ]
    if not r.plan.collectives:
        return lines
    # A collective's bytes and time are its device's: written from its own result, in place.
    positions = [e.position for e in r.plan.steps]
    positions += [c.position for c in r.plan.collectives]
    lines += [
        lead + _collective_line(c, b, texts)
        for c, b in zip(r.plan.collectives, r.collective_bounds, strict=True)
    ]
    return [line for _, line in sorted(zip(positions, lines, strict=True))]


def _steps_text(r: ModelResult, texts: _Texts, lead: str) -> str:
    """`_step_lines` joined, one per line. Rows of one plan whose runs are bound alike (the
    same integers: devices with the same ceilings) have the same text: written once."""
    if r.plan is None or r.plan.collectives:
        return ",\n".join(_step_lines(r, texts, lead))
    key = (id(r.plan), lead, r.runs)
    hit = texts.blocks.get(key)
    if hit is None:
        hit = texts.blocks[key] = ",\n".join(_step_lines(r, texts, lead))
    return hit


def _run_key(e: PlanStep) -> tuple[int, int, int]:
    """What a step's `run` fields read of it besides its bound: its count and operations
    (as integers: a Fraction's hash is a modular inverse)."""
    flops = e.counts.total_flops
    return (e.counts.count, flops.numerator, flops.denominator)


def _collective_line(c: CollectiveStep, b: CollectiveBound, texts: _Texts) -> str:
    """`_line(step_data(s))` of a collective step, written from its plan entry and its
    device's bound: what the plan gives once per plan, what the bound gives once per
    bound and count (a layer's all-reduces share both)."""
    head = texts.collectives.get(id(c))
    if head is None:
        shared = {
            "step": c.step.id,
            "kernel": c.step.kernel,
            "count": c.count,
            "shape": _plain(c.shape),  # `ranks` under uniform routing: a fraction
            "precision": c.precision,
            "widths": c.step.widths,
            "flops": num(c.flops * c.count),
        }
        head = texts.collectives[id(c)] = _line(shared)[:-1]
    key = (id(b), c.count)
    tail = texts.bounds.get(key)
    if tail is None:
        role = _string(b.role)
        # From the integers, as `_flat(num(...))` of the products and quotients writes
        # them: a row on a fabric has a collective line per layer kind.
        flops, nbytes, time, count = c.flops, b.bytes, b.time, c.count
        tail = texts.bounds[key] = (
            f', "bytes": {{{role}: {_ratio_text(nbytes.numerator * count, nbytes.denominator)}}},'
            f' "time": {_ratio_text(time.numerator * count, time.denominator)},'
            f' "intensity": {{{role}: {_quotient(flops, nbytes)}}},'
            f' "attainable": {_quotient(flops, time)},'
            f' "limited_by": {_string(b.limited_by)}}}'
        )
    return head + tail


def _ratio_text(n: int, d: int) -> str:
    """`_flat(num(Fraction(n, d)))` for d > 0 without making the fraction: an integer as
    one, else int / int, which Python rounds correctly (as `float(Fraction)` does: the
    same rational, so the same float, whether or not n and d share a factor)."""
    if d == 1:
        return repr(n)
    if n % d == 0:
        return repr(n // d)
    return repr(n / d)


def _run_texts(runs: list[tuple[PlanStep, tuple[int, int, str]]]) -> list[tuple[str, ...]]:
    """The members of each step's `run` fields for a device's bound of its run: the time
    of `count` runs, n * count / d, the rate, flops / time, and the limit, each written
    from the bound's integers (as `step_data` would write them from a `StepResult`), in
    `_RUN_GROUPS`: the time's text, then the rate's and the limit's."""
    time_head, rate_head, limit_head = _RUN_HEADS
    limits: dict[str, str] = {}
    out: list[tuple[str, ...]] = []
    for e, (n, d, limited_by) in runs:
        counts = e.counts
        count = counts.count
        flops = counts.total_flops  # over count runs, as the time is
        limit = limits.get(limited_by)
        if limit is None:
            limit = limits[limited_by] = limit_head + _string(limited_by)
        rate = _ratio_text(flops.numerator * d, flops.denominator * n * count)
        out.append((time_head + _ratio_text(n * count, d), rate_head + rate + limit))
    return out


def _run_groups(fields: Sequence[Field[Any]]) -> tuple[tuple[str, ...], ...]:
    """The keys of a step's `run` fields, in groups of neighbours (no `step` field between)."""
    groups: list[list[str]] = [[]]
    for f in fields:
        if not f.json:
            continue
        if f.scope == "run":
            groups[-1].append(f.key)
        elif groups[-1]:
            groups.append([])
    return tuple(tuple(g) for g in groups if g)


_RUN_GROUPS = _run_groups(STEP_FIELDS)
# The `run` fields of a step, each with its member's head.
_RUN_KEYS = {f.key: _string(f.key) + ": " for f in _RUN_FIELDS}
# `_step_lines` weaves two groups into a fragment's three texts, `_run_texts` writes these.
assert _RUN_GROUPS == (("time",), ("attainable", "limited_by")), _RUN_GROUPS
_RUN_HEADS = (_RUN_KEYS["time"], _RUN_KEYS["attainable"], ", " + _RUN_KEYS["limited_by"])


def _indented(pad: str) -> Callable[[str, Any], str]:
    inner = pad + "  "

    def member(key: str, value: Any) -> str:
        return f"{inner}{_string(key)}: {_value_text(value, inner)}"

    return member


def _value_text(value: Any, pad: str) -> str:
    """`_dump(_plain(value), pad)`, the scalars a row's fields hold dispatched on their
    type first (a compile writes tens of thousands of them)."""
    kind = type(value)
    if kind is Fraction:
        return _ratio_text(value.numerator, value.denominator)
    if kind is int or kind is str or value is None or kind is bool:
        return _dump(value, pad)
    if kind is dict and value:
        inner = pad + "  "
        items = ",\n".join(
            [
                f"{inner}{_string(k)}: "
                + (
                    _ratio_text(v.numerator, v.denominator)
                    if type(v) is Fraction  # a level's bytes, a limit's time
                    else _value_text(v, inner)
                )
                for k, v in value.items()
            ]
        )
        return "{\n" + items + "\n" + pad + "}"
    return _dump(_plain(value), pad)


def _fields(r: ModelResult, pad: str, texts: _Texts, own: Sequence[str] | None = None) -> str:
    """A row's fields before its steps, as `_dump(model_data(r, steps=False), pad)` lays
    them out but without its closing line. Its fields of scope `plan` are the same on
    every row of a plan (`evaluate` takes them all from the plan's model, phase and
    precision): written once per plan. `own`: the members of its other fields, when the
    caller wrote them (`_own_members`)."""
    member = _indented(pad)
    key = (id(r.plan), pad)
    heads = None if r.plan is None else texts.heads.get(key)
    if heads is None:
        heads = _between(_shared(MODEL_FIELDS, "plan", r, member), ",\n")
        if r.plan is not None:
            texts.heads[key] = heads
    if own is None:
        own = _own_members([r], pad, texts)[0]
    out = ["{\n", heads[0]]
    for text, head in zip(own, heads[1:], strict=True):
        out += (text, head)
    return "".join(out)


def _own_members(rows: Sequence[ModelResult], pad: str, texts: _Texts) -> list[tuple[str, ...]]:
    """The members of each row's fields not of scope `plan`, field by field over the rows:
    the fields of scope `fit` written once per fit (its rows share the object)."""
    at = range(len(rows))
    inner = pad + "  "
    columns: list[Sequence[str]] = []
    values: dict[str, list[Any]] = {}
    texts_of: dict[str, list[str]] = {}
    for f in _ROW_FIELDS:
        if f.scope == "fit":
            continue
        fast = _ROW_TEXTS.get(f.key)
        head = f"{inner}{_string(f.key)}: "  # as `_indented`'s member begins
        if fast is not None:
            columns.append([head + fast(r) for r in rows])
            continue
        values[f.key] = found = f.values(rows, at)
        same = _SAME_AS.get(f.key)
        if same in texts_of:
            # The other field's text where the value is its very object.
            other = zip(found, values[same], texts_of[same], strict=True)
            made = [t if v is w else _value_text(v, inner) for v, w, t in other]
        else:
            made = [_value_text(v, inner) for v in found]
        texts_of[f.key] = made
        columns.append([head + t for t in made])
    fits = [_fit_members(r, pad, texts) for r in rows]
    columns += zip(*fits, strict=True)
    return list(zip(*columns, strict=True))


def _fit_members(r: ModelResult, pad: str, texts: _Texts) -> tuple[str, ...]:
    """The members of a row's fields of scope `fit`, once per fit and indentation."""
    key = (id(r.fit), pad)
    hit = None if r.fit is None else texts.fits.get(key)
    if hit is None:
        member = _indented(pad)
        hit = tuple([member(f.key, f.values((r,), (0,))[0]) for f in _FIT_FIELDS])
        if r.fit is not None:
            texts.fits[key] = hit
    return hit


# The fields of scope `fit`: the last of a row's own (`_own_members` writes them last).
_FIT_FIELDS = [f for f in _ROW_FIELDS if f.scope == "fit"]
assert _ROW_FIELDS[-len(_FIT_FIELDS) :] == _FIT_FIELDS


def _quotient(n: Fraction | int, d: Fraction | int) -> str:
    """`_value_text(n / d)` for d > 0 without making the quotient (a Fraction's gcd)."""
    return _ratio_text(n.numerator * d.denominator, n.denominator * d.numerator)


def _longest(time_by_limit: dict[str, Fraction]) -> str:
    """`ModelResult.limited_by` as JSON: the first limit in the method's order of those
    that hold the most time, compared as integers."""
    name, most_n, most_d = "", -1, 1
    for limit in MODEL_LIMITS:
        value = time_by_limit.get(limit)
        if value is not None and value.numerator * most_d > most_n * value.denominator:
            name, most_n, most_d = limit, value.numerator, value.denominator
    return _string(name)


# A row's own fields whose value is a quotient of what the row holds, or read from one
# of its mappings, written from their integers: the same text, without the Fractions
# their attributes make (a compile writes thousands of rows).
# A field whose value is most often the very object of an earlier field's: a pass with
# no collective overlaps nothing, its time_overlapped is its time.
_SAME_AS = {"time_overlapped": "time"}

_ROW_TEXTS: dict[str, Callable[[ModelResult], str]] = {
    "attainable": lambda r: _quotient(r.flops, r.time),
    "tokens_per_second": lambda r: _quotient(r.tokens, r.time),
    "limited_by": lambda r: _longest(r.time_by_limit),
}


def model_json(
    r: ModelResult, pad: str = "", texts: _Texts | None = None, own: Sequence[str] | None = None
) -> str:
    """One model row as indented JSON text, each of its steps on one line: a row has a
    dozen steps, and a step per line reads as a table (and is written by json's C
    encoder, where indenting every step's fields took most of a compile's time)."""
    texts = _Texts() if texts is None else texts
    inner = pad + "    "
    lines = _steps_text(r, texts, inner)
    body = f"[\n{lines}\n{pad}  ]" if lines else "[]"
    return f"{_fields(r, pad, texts, own)},\n{pad}  {_string('steps')}: {body}\n{pad}}}"


def write_model_json_rows(rows: Sequence[ModelResult], out: TextIO) -> None:
    """The rows of the `models` array, indented as `json.dumps(document, indent=2)` nests
    them (the caller writes the brackets)."""
    separator = "\n"
    texts = _Texts()
    with collector_paused():
        for start in range(0, len(rows), _BATCH):
            batch = rows[start : start + _BATCH]
            for r, own in zip(batch, _own_members(batch, "    ", texts), strict=True):
                out.write(separator + "    " + model_json(r, "    ", texts, own))
                separator = ",\n"


_BATCH = 512  # rows whose fields are written together, field by field


def write_model_jsonl(rows: Sequence[ModelResult], out: TextIO) -> None:
    """One model row per line, with its steps: `json.dumps(model_data(r))`, its steps
    written as the JSON document's are."""
    texts = _Texts()
    with collector_paused():
        for r in rows:
            head = ", ".join(_member(k, v) for k, v in model_data(r, steps=False).items())
            steps = ", ".join(_step_lines(r, texts))
            out.write(f'{{{head}, "steps": [{steps}]}}\n')


# --------------------------------------------------------------------------------- CSV

MODEL_CSV_COLUMNS: list[str] = [h for f in MODEL_FIELDS for h in f.headers]
_PLAIN_IDS = {name: f"{name}_id" for name in ("model", "device", "precision")}
MODEL_CSV_PLAIN_COLUMNS: list[str] = [
    _PLAIN_IDS.get(h.split(" [", 1)[0], h.split(" [", 1)[0]) for h in MODEL_CSV_COLUMNS
]


def _cell(value: Any) -> str:
    return scalar_text(value, "", csv_text, _csv_number)


def _csv_number(value: Fraction | int) -> str:
    return repr(num(value))


def write_model_csv(rows: Sequence[ModelResult], out: TextIO, *, plain: bool = False) -> None:
    """One row per model × phase × device × precision; steps are in JSON and `explain`."""
    out.write(model_csv_header(plain=plain))
    for line in model_csv_lines(rows):
        out.write(line)


def model_csv_header(*, plain: bool = False) -> str:
    """The CSV's header line, newline included."""
    header = io.StringIO()
    csv.writer(header, lineterminator="\n").writerow(
        MODEL_CSV_PLAIN_COLUMNS if plain else MODEL_CSV_COLUMNS
    )
    return header.getvalue()


def model_csv_lines(rows: Sequence[ModelResult]) -> Iterator[str]:
    """The CSV line of each row, newline included, in order."""
    at = range(len(rows))
    columns: list[list[Any]] = []
    for f in MODEL_FIELDS:
        values = f.values(rows, at)
        if f.keys:
            # a mapping may be absent (null): a model row without a memory ledger
            columns.extend([None if v is None else v.get(k) for v in values] for k in f.keys)
        else:
            columns.append(values)
    for cells in zip(*columns, strict=True):
        yield ",".join(_cell(c) for c in cells) + "\n"


# ------------------------------------------------------------------------------- table


def fit_text(r: ModelResult) -> str:
    """What the table, `explain` and the site print in place of tokens/s for a pass whose
    ledger does not fit one chip's memory."""
    return needs_text(r.needs_chips)


def needs_text(needs_chips: int | None) -> str:
    """`fit_text` from the fewest chips that fit (None: none up to `CHIP_LIMIT`)."""
    if needs_chips is not None:
        return f"does not fit (needs {needs_chips} chips)"
    return f"does not fit on any deployment up to {CHIP_LIMIT} chips"


CHIP_LIMIT = CHIP_DEGREES[-1]  # the most chips `needs_chips` tries


def write_model_table(catalog: Catalog, rows: Sequence[ModelResult], out: TextIO) -> None:
    """A readable table; `*` marks a precision other than the model's own."""
    fields = [f for f in MODEL_FIELDS if f.table is not None]
    rate = [f.table for f in fields].index("tokens/s")

    def unfit(n: int, line: list[str]) -> None:
        if rows[n].fits is False:
            line[rate] = fit_text(rows[n])  # no rate is shown for a pass that does not fit

    units = [catalog.precisions[r.precision].unit for r in rows]
    write_rows_table(fields, rows, units, [r.declared for r in rows], unfit, "model row", out)
