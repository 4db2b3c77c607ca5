"""`solve --model`'s answers written out: JSON (numbers as the model rows write them, so a
degree's figures are `compile --tp N`'s to the bit) and text for a terminal.

JSON of `--vary tp`:

    {"model", "phase", "device", "precision", "vary": "tp",
     "held": {"pp": int, "ep": int, "chips": int | null},
     "up_to": int, "bound": str,          # the largest degree tried, and why
     "degrees": [{"tp", "chips", "pp", "ep", "fits": bool | null, "needs_chips": int | null,
                  "time": s, "time_overlapped": s,
                  "tokens_per_second": 1/s | null,    # null where it does not fit
                  "limited_by": LIMIT, "interconnect_time": s, "interconnect_share": 1,
                  "collective_time": s, "collective_share": 1}],
     "skipped": [{"from": int, "to": int, "kind": "deployment" | "model" | "device",
                  "reason": str}],        # the reason at `from`
     "interconnect_bound_from": int | null,   # over the degrees evaluated
     "interconnect_bound_at": [int],
     "fit_known": bool, "least_fitting": int | null}

JSON of `--vary b`:

    {"model", "phase", "device", "precision", "vary": "b",
     "deployment": {"chips", "tp", "pp", "ep"}, "variables": {"b", "s", "L", ...},
     "fits": bool | null, "max_batch": int | null, "stops_fitting_at": int | null,
     "needs_chips": int | null, "unknown": str | null,
     "steps": [{"step": id, "compute_bound_from": int | null, "error": str | null}]}

A step's `compute_bound_from` is the least batch from which on it stays compute bound
(the roofline alone, no launch floor); null: never, or not solved (`error` says why).
"""

from __future__ import annotations

from typing import Any

from rooflinec.catalog import Catalog, Deployment
from rooflinec.engine.memory import MAX_SEARCH
from rooflinec.engine.solve_model import BatchLimit, Degree, Skipped, TpSweep
from rooflinec.formatting import format_percent, format_si
from rooflinec.outputs.cells import aligned_lines, num
from rooflinec.outputs.model_rows import needs_text

__all__ = ["batch_data", "batch_text", "sweep_data", "sweep_text"]


def count(number: int, noun: str) -> str:
    """`1 degree`, `7 degrees`."""
    return f"{number:,} {noun}" if number == 1 else f"{number:,} {noun}s"


def _degree_data(d: Degree) -> dict[str, Any]:
    return {
        "tp": d.tp,
        "chips": d.chips,
        "pp": d.pp,
        "ep": d.ep,
        "fits": d.fits,
        "needs_chips": d.needs_chips,
        "time": num(d.time),
        "time_overlapped": num(d.time_overlapped),
        "tokens_per_second": None if d.tokens_per_second is None else num(d.tokens_per_second),
        "limited_by": d.limited_by,
        "interconnect_time": num(d.interconnect_time),
        "interconnect_share": num(d.interconnect_share),
        "collective_time": num(d.collective_time),
        "collective_share": num(d.collective_share),
    }


def _asked(answer: TpSweep | BatchLimit, vary: str) -> dict[str, Any]:
    """What either document opens with: the pass asked about, and what it varies."""
    return {
        "model": answer.model,
        "phase": answer.phase,
        "device": answer.device,
        "precision": answer.precision,
        "vary": vary,
    }


def sweep_data(s: TpSweep) -> dict[str, Any]:
    """`--vary tp` as JSON data (the shape in the module's docstring)."""
    return {
        **_asked(s, "tp"),
        "held": {"pp": s.held.pp, "ep": s.held.ep, "chips": s.held.chips},
        "up_to": s.up_to,
        "bound": s.bound_note,
        "degrees": [_degree_data(d) for d in s.degrees],
        "skipped": [
            {"from": k.start, "to": k.end, "kind": k.kind, "reason": k.reason} for k in s.skipped
        ],
        "interconnect_bound_from": s.interconnect_bound_from,
        "interconnect_bound_at": list(s.interconnect_bound_at),
        "fit_known": s.fit_known,
        "least_fitting": s.least_fitting,
    }


def batch_data(b: BatchLimit) -> dict[str, Any]:
    """`--vary b` as JSON data (the shape in the module's docstring)."""
    d = b.deployment
    return {
        **_asked(b, "b"),
        "deployment": {"chips": d.total, "tp": d.tp, "pp": d.pp, "ep": d.ep},
        "variables": dict(b.variables),
        "fits": b.fits,
        "max_batch": b.max_batch,
        "stops_fitting_at": b.stops_fitting_at,
        "needs_chips": b.needs_chips,
        "unknown": b.unknown,
        "steps": [
            {"step": x.step, "compute_bound_from": x.crossover, "error": x.error} for x in b.steps
        ],
    }


def _title(catalog: Catalog, model: str, phase: str, device: str, precision: str) -> list[str]:
    m, dev, p = catalog.models[model], catalog.devices[device], catalog.precisions[precision]
    return [
        f"{m.name}, phase {phase}, on {dev.name} at {p.label}",
        f"  model {model}, phase {phase}, device {device}, precision {precision}",
    ]


def _fits_cell(d: Degree) -> str:
    return "-" if d.fits is None else "yes" if d.fits else "no"


def _rate_cell(d: Degree) -> str:
    if d.tokens_per_second is None:
        return needs_text(d.needs_chips)  # no rate for a pass that does not fit
    return format_si(d.tokens_per_second, "tok/s")


def _spans(skipped: list[Skipped]) -> str:
    return ", ".join(
        f"{k.start:,}" if k.start == k.end else f"{k.start:,}..{k.end:,}" for k in skipped
    )


_SKIPPED = {
    "deployment": "no deployment with the held degrees",
    "model": "not a deployment of the model",
    "device": "the device cannot host it",
}


def sweep_text(catalog: Catalog, s: TpSweep) -> str:
    """`--vary tp` for a terminal: the degrees, the skipped ones, then the answers."""
    held = s.held
    chips = "each degree's least" if held.chips is None else f"{held.chips:,}"
    lines = _title(catalog, s.model, s.phase, s.device, s.precision)
    lines.append(
        f"  tp varied over 1..{s.up_to:,} ({s.bound_note}); held: pp = {held.pp:,},"
        f" ep = {held.ep:,}, chips = {chips}"
    )
    lines.append("")
    table = [
        [
            "tp",
            "chips",
            "fits",
            "time",
            "time overlapped",
            "tokens/s",
            "limited by",
            "interconnect",
            "collectives",
        ]
    ]
    for d in s.degrees:
        table.append(
            [
                f"{d.tp:,}",
                f"{d.chips:,}",
                _fits_cell(d),
                format_si(d.time, "s"),
                format_si(d.time_overlapped, "s"),
                _rate_cell(d),
                d.limited_by,
                format_percent(d.interconnect_share),
                format_percent(d.collective_share),
            ]
        )
    if s.degrees:
        lines.extend(aligned_lines(table))
        lines.append("  interconnect: the share of the time the scale-up and scale-out levels hold")
        lines.append("  collectives: the collective steps' share of the time, whatever holds them")
    for kind, why in _SKIPPED.items():
        group = [k for k in s.skipped if k.kind == kind]
        if group:
            lines.append(f"Skipped, {why}: tp = {_spans(group)}")
            lines.append(f"  at tp = {group[0].start:,}: {group[0].reason}")
    lines.append("")
    lines.extend(_sweep_answers(s))
    return "\n".join(lines) + "\n"


def _sweep_answers(s: TpSweep) -> list[str]:
    if not s.degrees:
        return [f"No degree from 1 to {s.up_to:,} is evaluated: every one is skipped"]
    largest = s.degrees[-1].tp
    over = f"over the {count(len(s.degrees), 'degree')} evaluated, up to tp = {largest:,}"
    start = s.interconnect_bound_from
    at = s.interconnect_bound_at
    if start is not None:
        bound = f"Interconnect bound: from tp = {start:,} on ({over})"
    elif at:
        shown = ", ".join(f"{tp:,}" for tp in at)
        bound = f"Interconnect bound: at tp = {shown} only, not from any degree on ({over})"
    else:
        bound = f"Interconnect bound: not at any degree up to {largest:,} ({over})"
    if not s.fit_known:
        fits = "Fits: unknown (no capacity or no memory ledger to hold against it)"
    elif s.least_fitting is None:
        fits = f"Fits: at no degree evaluated, up to tp = {largest:,}"
    else:
        fits = f"Fits: from tp = {s.least_fitting:,} (the least degree evaluated at which it fits)"
    return [bound, fits]


def _deployment_text(d: Deployment) -> str:
    return f"tp = {d.tp:,}, pp = {d.pp:,}, ep = {d.ep:,}, chips = {d.total:,}"


def batch_text(catalog: Catalog, b: BatchLimit) -> str:
    """`--vary b` for a terminal: the largest batch that fits, and where it stops."""
    lines = _title(catalog, b.model, b.phase, b.device, b.precision)
    others = ", ".join(f"{k} = {v:,}" for k, v in b.variables.items() if k != "b")
    lines.append(
        f"  b varied; held: {others or 'no other variable'}; deployment: "
        f"{_deployment_text(b.deployment)}"
    )
    lines.append("")
    if b.unknown is not None:
        lines.append(f"Largest batch that fits: unknown: {b.unknown}")
    elif b.every_batch_fits:
        lines.append(f"Largest batch that fits: every batch up to {MAX_SEARCH:,} fits")
    elif b.max_batch is None:
        lines.append("Largest batch that fits: none: b = 1 does not fit (stops fitting at b = 1)")
    else:
        lines.append(
            f"Largest batch that fits: b = {b.max_batch:,} (stops fitting at"
            f" b = {b.max_batch + 1:,})"
        )
    if b.fits is not None:
        at = f"At the phase's b = {b.batch:,}: "
        lines.append(at + ("fits" if b.fits else needs_text(b.needs_chips)))
    if b.steps:
        lines.append("")
        lines.extend(_step_lines(b))
    return "\n".join(lines) + "\n"


def _step_lines(b: BatchLimit) -> list[str]:
    """Each step's batch crossover; the steps never compute bound on one line."""
    lines = [
        "Batch from which each step stays compute bound (the roofline alone, no launch"
        " floor; the pass as a whole is not solved)"
    ]
    never = []
    for x in b.steps:
        if x.regions is None:
            lines.append(f"  {x.step}: not solved ({x.error})")
        elif x.crossover is None:
            never.append(x.step)
        else:
            lines.append(f"  {x.step}: b = {x.crossover:,}")
    if never:
        lines.append(f"  never: {', '.join(never)}")
    return lines
