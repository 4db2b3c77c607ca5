"""`plan`'s answer written out: JSON (DESIGN v3, "Requests and `plan`"), CSV and text.

JSON:

    {"model", "precision", "input", "output", "speculation", "objective",
     "targets": {"min_user_rate": 1/s | null, "max_ttft": s | null,
                 "max_latency": s | null, "max_chips": int | null},
     "prices": {D: USD per chip-hour},        # the reader's (--price)
     "plans": [{"device", "chips", "tp", "pp", "ep", "batch", "fits", "ttft", "itl",
                "latency", "tokens_per_second_per_user", "tokens_per_second",
                "tokens_per_second_per_chip", "usd_per_million_tokens", "price_source",
                "joules_per_token", "tokens_per_second_per_kw", "meets", "binding",
                "note", "explain"}],       # one per device; figures null without a plan
     "frontier": [{"device", "chips", "tp", "pp", "ep", "batch",
                   "tokens_per_second_per_user", "tokens_per_second_per_chip"}],
     "skipped": [{"device", "chips", "tp", "pp", "ep", "reason"}]}  # not searched, and why

`price_source` is "reader" where the price is the reader's (`--price`), "quoted" where it
is the device's own; `joules_per_token` is at board power, a reference figure and not a
bound either way. CSV: one row per plan, then one per frontier point, the column `row`
saying which (a frontier row leaves the plan's other columns empty). Every field is
named once, in `PLAN_FIELDS` and `FRONTIER_FIELDS`.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from rooflinec.catalog import Catalog, Speculation
from rooflinec.engine.frontier import TARGETS, Choice, PlanAnswer, Point
from rooflinec.formatting import format_number, format_si
from rooflinec.outputs.cells import num, spreadsheet_text
from rooflinec.outputs.fields import Field, Kind

__all__ = [
    "FRONTIER_FIELDS",
    "PLAN_FIELDS",
    "READER",
    "TARGET_NAMES",
    "PlanRow",
    "plan_csv",
    "plan_data",
    "plan_rows",
    "plan_text",
]

#: How a reader's price is labelled wherever it shows.
READER = "reader's price"
#: What each of `plan`'s targets bounds, as the outputs and the site name it.
TARGET_NAMES = {
    "min-user-rate": "tokens/s per user",
    "max-ttft": "time to first token",
    "max-latency": "request latency",
    "max-chips": "chips",
}
#: A binding target in `plan`'s text: its option, and what it bounds where the option's
#: name does not say it already.
TARGET_TEXT = {
    target: f"--{target}" if target == "max-chips" else f"--{target} ({name})"
    for target, name in TARGET_NAMES.items()
}


@dataclass(frozen=True)
class PlanRow:
    """One device's plan as the writers read it."""

    choice: Choice
    explain: str | None  # the command that derives the row


def _opt(value: Fraction | int | None) -> Any:
    return None if value is None else num(value)


def _of(get: Callable[[PlanRow], Any]) -> Callable[[Sequence[PlanRow], Sequence[int]], list[Any]]:
    return lambda rows, index: [get(rows[i]) for i in index]


def _figure(name: str) -> Callable[[PlanRow], Any]:
    def get(row: PlanRow) -> Any:
        point = row.choice.point
        if point is None:
            return None
        value = getattr(point.result, name)
        return value if isinstance(value, (bool, str)) or value is None else num(value)

    return get


def _deployment(name: str) -> Callable[[PlanRow], Any]:
    def get(row: PlanRow) -> Any:
        point = row.choice.point
        if point is None:
            return None
        d = point.deployment
        return {"chips": d.total, "tp": d.tp, "pp": d.pp, "ep": d.ep}[name]

    return get


def _plan_field(key: str, get: Callable[[PlanRow], Any], kind: Kind = "number") -> Field[Any]:
    return Field(key, "row", _of(get), (key,), kind=kind)


PLAN_FIELDS: tuple[Field[Any], ...] = (
    _plan_field("device", lambda r: r.choice.device, "text"),
    *(_plan_field(k, _deployment(k)) for k in ("chips", "tp", "pp", "ep")),
    _plan_field("batch", _figure("batch")),
    _plan_field("fits", _figure("fits"), "flag"),
    *(
        _plan_field(k, _figure(k))
        for k in (
            "ttft",
            "itl",
            "latency",
            "tokens_per_second_per_user",
            "tokens_per_second",
            "tokens_per_second_per_chip",
            "usd_per_million_tokens",
        )
    ),
    _plan_field("price_source", _figure("price_source"), "text"),
    _plan_field("joules_per_token", _figure("joules_per_token")),
    _plan_field("tokens_per_second_per_kw", _figure("tokens_per_second_per_kw")),
    _plan_field("meets", lambda r: r.choice.meets, "flag"),
    _plan_field("binding", lambda r: r.choice.binding, "text"),
    _plan_field("note", lambda r: r.choice.note, "text"),
    _plan_field("explain", lambda r: r.explain, "text"),
)
"""A plan row's outputs, in order."""


def _point_field(
    key: str, get: Callable[[tuple[str, Point]], Any], kind: Kind = "number"
) -> Field[Any]:
    return Field(key, "row", lambda rows, index: [get(rows[i]) for i in index], (key,), kind=kind)


FRONTIER_FIELDS: tuple[Field[Any], ...] = (
    _point_field("device", lambda dp: dp[0], "text"),
    _point_field("chips", lambda dp: dp[1].deployment.total),
    _point_field("tp", lambda dp: dp[1].deployment.tp),
    _point_field("pp", lambda dp: dp[1].deployment.pp),
    _point_field("ep", lambda dp: dp[1].deployment.ep),
    _point_field("batch", lambda dp: dp[1].batch),
    # The two rates alone: the rest of a point's figures is not written
    _point_field("tokens_per_second_per_user", lambda dp: _opt(dp[1].exact_user_or_none())),
    _point_field("tokens_per_second_per_chip", lambda dp: num(dp[1].exact_chip())),
)
"""A frontier point's outputs, in order."""


def explain_command(answer: PlanAnswer, choice: Choice, specs: str | None) -> str | None:
    """The `rooflinec explain` command that derives a plan row, or None without one."""
    point = choice.point
    if point is None:
        return None
    d = point.deployment
    parts = [
        "rooflinec explain",
        f"--model {answer.model}",
        f"--device {choice.device}",
        f"--tp {d.tp} --pp {d.pp} --ep {d.ep} --chips {d.total}",
        f"--batch {point.result.batch}",
        f"--input {answer.shape.input} --output {answer.shape.output}",
        f"--precision {answer.precision}",
    ]
    speculation = answer.shape.speculation
    if speculation is not None:
        parts.append(f"--speculate {speculation_option(speculation)}")
    if specs is not None:
        parts.append(f"--specs {specs}")
    return " ".join(parts)


def speculation_option(speculation: Speculation) -> str:
    """`--speculate`'s value for `speculation`: the acceptance as typed back exactly (a
    decimal where it has one, else a ratio)."""
    a = speculation.acceptance
    # A decimal of n places is a / 10^n exactly when the denominator divides 10^n.
    places = next((n for n in range(13) if 10**n % a.denominator == 0), None)
    if places is None:
        text = f"{a.numerator}/{a.denominator}"
    else:
        digits = str(a.numerator * 10**places // a.denominator).rjust(places + 1, "0")
        text = digits if not places else f"{digits[:-places]}.{digits[-places:]}"
    return f"k={speculation.k},acceptance={text}"


def speculation_data(speculation: Speculation | None) -> dict[str, Any] | None:
    """A request's speculation as JSON: k, the acceptance and the tokens per verify pass."""
    if speculation is None:
        return None
    return {
        "k": speculation.k,
        "acceptance": num(speculation.acceptance),
        "tokens_per_pass": num(speculation.tokens_per_verify),
    }


def plan_rows(answer: PlanAnswer, specs: str | None = None) -> list[PlanRow]:
    return [PlanRow(c, explain_command(answer, c, specs)) for c in answer.choices]


def _frontier_points(answer: PlanAnswer) -> list[tuple[str, Point]]:
    return [(f.device, p) for f in answer.frontiers for p in f.frontier]


def _targets(answer: PlanAnswer) -> dict[str, Any]:
    """Each target's value (null: not given), keyed by its option's name in snake case."""
    values = answer.targets.values()
    return {t.replace("-", "_"): _opt(v) for t, v in zip(TARGETS, values, strict=True)}


def plan_data(answer: PlanAnswer, specs: str | None = None) -> dict[str, Any]:
    """The answer as JSON data (the shape in the module's docstring)."""
    rows = plan_rows(answer, specs)
    index = range(len(rows))
    plans = [dict.fromkeys(f.key for f in PLAN_FIELDS) for _ in rows]
    for f in PLAN_FIELDS:
        for plan, value in zip(plans, f.values(rows, index), strict=True):
            plan[f.key] = value
    points = _frontier_points(answer)
    frontier = [dict.fromkeys(f.key for f in FRONTIER_FIELDS) for _ in points]
    for f in FRONTIER_FIELDS:
        for entry, value in zip(frontier, f.values(points, range(len(points))), strict=True):
            entry[f.key] = value
    return {
        "model": answer.model,
        "precision": answer.precision,
        "input": answer.shape.input,
        "output": answer.shape.output,
        "speculation": speculation_data(answer.shape.speculation),
        "objective": answer.objective,
        "targets": _targets(answer),
        "prices": {d: num(p) for d, p in answer.prices.items()},
        "plans": plans,
        "frontier": frontier,
        "skipped": [
            {
                "device": f.device,
                "chips": k.deployment.total,
                "tp": k.deployment.tp,
                "pp": k.deployment.pp,
                "ep": k.deployment.ep,
                "reason": k.reason,
            }
            for f in answer.frontiers
            for k in f.skipped
        ],
    }


def plan_json(answer: PlanAnswer, specs: str | None = None) -> str:
    return json.dumps(plan_data(answer, specs), indent=2, ensure_ascii=False) + "\n"


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return spreadsheet_text(value)
    return repr(value) if isinstance(value, float) else value


def plan_csv(answer: PlanAnswer, specs: str | None = None) -> str:
    """One row per plan, then one per frontier point (the module's docstring)."""
    keys = [f.key for f in PLAN_FIELDS]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["row", *keys])
    rows = plan_rows(answer, specs)
    columns = [f.values(rows, range(len(rows))) for f in PLAN_FIELDS]
    for i in range(len(rows)):
        writer.writerow(["plan", *(_cell(column[i]) for column in columns)])
    points = _frontier_points(answer)
    by_key = {f.key: f.values(points, range(len(points))) for f in FRONTIER_FIELDS}
    for i in range(len(points)):
        writer.writerow(["frontier", *(_cell(by_key[k][i]) if k in by_key else "" for k in keys)])
    return buffer.getvalue()


# ---------------------------------------------------------------------- text


def _rate(value: Fraction | None, unit: str) -> str:
    return "none" if value is None else f"{format_number(value, 4)} {unit}"


def _price_text(answer: PlanAnswer, choice: Choice, catalog: Catalog) -> str | None:
    point = choice.point
    if point is None:
        return None
    r = point.result
    if r.usd_per_million_tokens is None:
        return "no price (give one with --price DEVICE=2.5USD/h)"
    cost = f"{format_number(r.usd_per_million_tokens, 4)} USD per million tokens"
    if r.price_source == "reader":
        given = answer.prices[choice.device]
        return f"{cost} at the {READER} of {format_number(given, 4)} USD/h per chip"
    price = catalog.devices[choice.device].price
    when = f", {price.date}" if price is not None else ""
    return f"{cost} at the quoted price{when}"


def _targets_text(answer: PlanAnswer) -> str:
    t = answer.targets
    parts = []
    if t.min_user_rate is not None:
        parts.append(f"at least {format_number(t.min_user_rate, 4)} tokens/s per user")
    if t.max_ttft is not None:
        parts.append(f"first token within {format_si(t.max_ttft, 's')}")
    if t.max_latency is not None:
        parts.append(f"request within {format_si(t.max_latency, 's')}")
    if t.max_chips is not None:
        parts.append(f"at most {t.max_chips:,} chips")
    return ", ".join(parts) if parts else "none"


OBJECTIVE_TEXT = {
    "tokens-per-chip": "the most tokens/s per chip",
    "cost": "the least USD per million tokens",
    "energy": "the least joules per token (at board power)",
}


def _choice_lines(answer: PlanAnswer, row: PlanRow, catalog: Catalog) -> list[str]:
    c = row.choice
    point = c.point
    if point is None:
        if c.note is not None and c.binding is None:
            return [f"{c.device}: no plan: {c.note}"]
        lines = [f"{c.device}: no deployment meets the targets"]
        if c.binding is not None:
            lines.append(f"  binding: {TARGET_TEXT[c.binding]}")
        return lines
    r, d = point.result, point.deployment
    lines = [
        f"{c.device}: {d.total:,} chip{'s' if d.total != 1 else ''} (tp {d.tp}, pp {d.pp},"
        f" ep {d.ep}), batch {r.batch:,}",
        f"  {_rate(r.tokens_per_second_per_chip, 'tokens/s per chip')},"
        f" {_rate(r.tokens_per_second_per_user, 'tokens/s per user')},"
        f" {_rate(r.tokens_per_second, 'tokens/s in all')}",
        f"  ttft {format_si(r.ttft, 's')},"
        f" itl {'none' if r.itl is None else format_si(r.itl, 's')},"
        f" latency {format_si(r.latency, 's')}",
    ]
    price = _price_text(answer, c, catalog)
    if price is not None:
        lines.append(f"  cost: {price}")
    if r.joules_per_token is not None:
        kw = r.tokens_per_second_per_kw
        lines.append(
            f"  energy: {format_number(r.joules_per_token, 4)} J per token at board power"
            + ("" if kw is None else f", {format_number(kw, 4)} tokens/s per kW")
            + " (a reference figure, not a bound)"
        )
    lines.append(f"  binding: {'none' if c.binding is None else TARGET_TEXT[c.binding]}")
    if row.explain is not None:
        lines.append(f"  derive it: {row.explain}")
    return lines


def plan_text(catalog: Catalog, answer: PlanAnswer, specs: str | None = None) -> str:
    """The answer for a terminal: per device its plan, or why there is none."""
    model = catalog.models[answer.model]
    precision = catalog.precisions[answer.precision].label
    shape = answer.shape
    decoded = ""
    if shape.speculation is not None:
        decoded = (
            f", decoded by speculation (k = {shape.speculation.k}, acceptance"
            f" {format_number(shape.speculation.acceptance, 4)}:"
            f" {format_number(shape.speculation.tokens_per_verify, 4)} tokens a verify pass)"
        )
    lines = [
        f"{model.name} at {precision}: requests of {shape.input:,} input and"
        f" {shape.output:,} output tokens{decoded}",
        f"targets: {_targets_text(answer)}",
        f"objective: {OBJECTIVE_TEXT[answer.objective]}",
    ]
    for device, price in answer.prices.items():
        lines.append(f"{READER} for {device}: {format_number(price, 4)} USD/h per chip")
    lines.append("")
    for row in plan_rows(answer, specs):
        lines.extend(_choice_lines(answer, row, catalog))
    skipped = sum(len(f.skipped) for f in answer.frontiers)
    if skipped:
        lines.append("")
        lines.append(
            f"{skipped:,} deployments the model or a device cannot take (or where batch 1"
            " does not fit) were skipped: --format json lists them with the reason"
        )
    met = sum(c.meets for c in answer.choices)
    points = sum(len(f.frontier) for f in answer.frontiers)
    lines.append("")
    lines.append(
        f"{met:,} of {len(answer.choices):,} devices meet the targets;"
        f" the frontiers hold {points:,} points (--format json or csv lists them)"
    )
    return "\n".join(lines) + "\n"
