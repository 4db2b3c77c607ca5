"""`validate`'s answer: every measured serving result beside its bound and estimate
(DESIGN v3, "Measured serving"), as JSON, CSV and text; the Accuracy page reads the same
`Accuracy` value.

JSON:

    {"points": [{"model", "device", "chips", "tp", "pp", "ep", "precision", "kv", "input",
                 "output", "concurrency", "batch", "engine", "metric", "unit",
                 "measured", "bound", "ratio", "regime", "bound_batch",
                 "bound_user_rate", "bound_chip_rate", "estimate", "estimate_scope",
                 "technique", "assumed", "source", "entry", "problem"}],
     "summary": [{"device", "metric", "regime", "points", "median_ratio", "worst_ratio"}],
     "estimate_error": {"all": {"median_ape", "worst_ape"},
                        "by_device": {D: {"median_ape", "worst_ape"}}},   # leave-one-out
     "bound_error": {"all": ..., "by_device": ...}}                         # the bound's own

Times in s, rates in tokens/s, energy in J per token. An output rate's place on the
latency–throughput frontier: at its bound's batch (`bound_batch`), each request's
tokens/s (`bound_user_rate`) and the bound's tokens/s per chip (`bound_chip_rate`).
`ratio` is 1 or more where the bound holds (measured / bound for a time, bound /
measured for a rate); `worst_ratio` is the group's farthest from 1. `estimate` is
fitted on every point (`estimate_scope`: the group its factor is from);
`estimate_error` refits without each point in turn.
"""

from __future__ import annotations

import csv
import io
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rooflinec.engine.calibration import (
    ErrorSummary,
    Estimate,
    calibrate,
    estimate_errors,
    leave_one_out,
)
from rooflinec.engine.serving import RATES, TIMES, ServingPoint
from rooflinec.formatting import format_number, format_si
from rooflinec.outputs.cells import aligned_lines, spreadsheet_text

__all__ = [
    "METRIC_NAMES",
    "POINT_FIELDS",
    "Accuracy",
    "Group",
    "accuracy",
    "accuracy_csv",
    "accuracy_data",
    "accuracy_text",
    "metric_text",
    "percent_text",
]

#: Each metric as the outputs name it, and its SI unit.
METRIC_NAMES = {
    "ttft": "time to first token",
    "itl": "inter-token latency",
    "output_rate": "output tokens/s",
    "user_rate": "tokens/s per user",
    "energy": "energy per token",
}
_UNITS = {
    "ttft": "s",
    "itl": "s",
    "output_rate": "tokens/s",
    "user_rate": "tokens/s",
    "energy": "J/token",
}

POINT_FIELDS = (
    "model",
    "device",
    "chips",
    "tp",
    "pp",
    "ep",
    "precision",
    "kv",
    "input",
    "output",
    "concurrency",
    "batch",
    "engine",
    "metric",
    "unit",
    "measured",
    "bound",
    "ratio",
    "regime",
    "bound_batch",
    "bound_user_rate",
    "bound_chip_rate",
    "estimate",
    "estimate_scope",
    "technique",
    "assumed",
    "source",
    "entry",
    "problem",
)


@dataclass(frozen=True)
class Group:
    """The points of one device, metric and regime: how many, the median ratio and the
    one farthest from 1."""

    device: str
    metric: str
    regime: str
    points: int
    median_ratio: float
    worst_ratio: float


@dataclass(frozen=True)
class Accuracy:
    """Every point with its estimate (fitted on all) and its leave-one-out estimate, the
    groups, and the estimate's and the bound's errors."""

    points: tuple[ServingPoint, ...]
    estimates: tuple[Estimate | None, ...]
    left_out: tuple[Estimate | None, ...]
    groups: tuple[Group, ...]
    estimate_all: ErrorSummary | None
    estimate_by_device: dict[str, ErrorSummary]
    bound_all: ErrorSummary | None
    bound_by_device: dict[str, ErrorSummary]


def _groups(points: Sequence[ServingPoint]) -> tuple[Group, ...]:
    ratios: dict[tuple[str, str, str], list[float]] = {}
    for p in points:
        ratio = p.ratio
        if ratio is None or p.regime is None:
            continue
        ratios.setdefault((p.device, p.metric, p.regime), []).append(float(ratio))
    return tuple(
        Group(
            device,
            metric,
            regime,
            len(values),
            statistics.median(values),
            max(values, key=lambda r: abs(math.log(r))),
        )
        for (device, metric, regime), values in sorted(ratios.items())
    )


def _bound_estimates(points: Sequence[ServingPoint]) -> list[Estimate | None]:
    """The bound itself as an estimate (factor 1): its own error beside the estimate's."""
    return [
        None
        if p.bound is None or p.metric not in TIMES | RATES
        else Estimate(float(p.bound), 1.0, "")
        for p in points
    ]


def accuracy(points: Sequence[ServingPoint]) -> Accuracy:
    """The bounds, estimates and errors of `points`."""
    fitted = calibrate(points)
    estimates = tuple(fitted.estimate(p) for p in points)
    left_out = tuple(leave_one_out(points))
    estimate_all, estimate_by = estimate_errors(points, left_out)
    bound_all, bound_by = estimate_errors(points, _bound_estimates(points))
    return Accuracy(
        tuple(points),
        estimates,
        left_out,
        _groups(points),
        estimate_all,
        estimate_by,
        bound_all,
        bound_by,
    )


# ---------------------------------------------------------------------- JSON and CSV


def _point(p: ServingPoint, e: Estimate | None) -> dict[str, Any]:
    r = p.result
    d = r.deployment
    ratio = p.ratio
    return {
        "model": p.model,
        "device": r.device,
        "chips": d.total,
        "tp": d.tp,
        "pp": d.pp,
        "ep": d.ep,
        "precision": r.precision,
        "kv": r.kv,
        "input": r.input,
        "output": r.output,
        "concurrency": r.concurrency,
        "batch": r.batch,
        "engine": r.engine,
        "metric": p.metric,
        "unit": _UNITS[p.metric],
        "measured": float(p.measured),
        "bound": None if p.bound is None else float(p.bound),
        "ratio": None if ratio is None else float(ratio),
        "regime": p.regime,
        "bound_batch": p.batch,
        "bound_user_rate": None if p.user_rate_at_batch is None else float(p.user_rate_at_batch),
        "bound_chip_rate": None if p.chip_rate is None else float(p.chip_rate),
        "estimate": None if e is None else e.value,
        "estimate_scope": None if e is None else e.scope,
        "technique": r.technique,
        "assumed": list(r.assumed),
        "source": r.source,
        "entry": str(r.location),
        "problem": p.problem,
    }


def _errors(all_: ErrorSummary | None, by: dict[str, ErrorSummary]) -> dict[str, Any]:
    def one(s: ErrorSummary | None) -> dict[str, Any] | None:
        if s is None:
            return None
        return {"points": s.points, "median_ape": s.median_ape, "worst_ape": s.worst_ape}

    return {"all": one(all_), "by_device": {d: one(s) for d, s in by.items()}}


def accuracy_data(a: Accuracy) -> dict[str, Any]:
    """The JSON document (see the module's docstring)."""
    return {
        "points": [_point(p, e) for p, e in zip(a.points, a.estimates, strict=True)],
        "summary": [
            {
                "device": g.device,
                "metric": g.metric,
                "regime": g.regime,
                "points": g.points,
                "median_ratio": g.median_ratio,
                "worst_ratio": g.worst_ratio,
            }
            for g in a.groups
        ],
        "estimate_error": _errors(a.estimate_all, a.estimate_by_device),
        "bound_error": _errors(a.bound_all, a.bound_by_device),
    }


def accuracy_csv(a: Accuracy) -> str:
    """One row per point, the columns of `POINT_FIELDS`; text guarded for spreadsheets."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(POINT_FIELDS)
    for p, e in zip(a.points, a.estimates, strict=True):
        row = _point(p, e)
        cells = []
        for name in POINT_FIELDS:
            value = row[name]
            if value is None:
                cells.append("")
            elif isinstance(value, list):
                cells.append(spreadsheet_text(";".join(value)))
            elif isinstance(value, str):
                cells.append(spreadsheet_text(value))
            else:
                cells.append(repr(value) if isinstance(value, float) else str(value))
        writer.writerow(cells)
    return buffer.getvalue()


# ---------------------------------------------------------------------- text


def metric_text(metric: str, value: float) -> str:
    """A figure as the text and the page show it: ms for times, tokens/s, J/token."""
    if metric in TIMES:
        return format_si(value, "s")
    if metric == "energy":
        return f"{format_number(value)} J/token"
    return f"{format_number(value)} tokens/s"


def percent_text(value: float) -> str:
    """A share as the outputs and the page print it: `28.7 %`."""
    return f"{format_number(value * 100, 3)} %"


def error_line(name: str, s: ErrorSummary | None) -> str:
    if s is None:
        return f"{name}: no point"
    return (
        f"{name}: median {percent_text(s.median_ape)}, worst {percent_text(s.worst_ape)}"
        f" over {s.points} point{'' if s.points == 1 else 's'}"
    )


def accuracy_text(a: Accuracy) -> str:
    """The points, the groups and the errors as aligned tables."""
    table = [
        [
            "model",
            "device",
            "chips",
            "precision",
            "in/out",
            "load",
            "metric",
            "measured",
            "bound",
            "ratio",
            "regime",
            "estimate",
        ]
    ]
    for p, e in zip(a.points, a.estimates, strict=True):
        r = p.result
        load = (
            f"batch {r.batch}"
            if r.batch is not None
            else f"conc. {r.concurrency}"
            if r.concurrency is not None
            else "offline"
        )
        ratio = p.ratio
        table.append(
            [
                p.model,
                r.device,
                str(r.deployment.total),
                r.precision,
                f"{r.input}/{r.output}",
                load,
                p.metric + (" *" if r.technique else ""),
                metric_text(p.metric, float(p.measured)),
                "-" if p.bound is None else metric_text(p.metric, float(p.bound)),
                "-" if ratio is None else format_number(float(ratio), 3),
                p.regime or "-",
                "-" if e is None else metric_text(p.metric, e.value),
            ]
        )
    lines = aligned_lines(table)
    if any(p.result.technique for p in a.points):
        lines.append("* names a technique that changes the work per token")
    lines.append("")
    groups = [["device", "metric", "regime", "points", "median ratio", "worst ratio"]]
    for g in a.groups:
        groups.append(
            [
                g.device,
                g.metric,
                g.regime,
                str(g.points),
                format_number(g.median_ratio, 3),
                format_number(g.worst_ratio, 3),
            ]
        )
    lines.extend(aligned_lines(groups))
    lines.append("")
    lines.append(error_line("bound's error against measurement", a.bound_all))
    lines.append(error_line("estimate's error, leave-one-out", a.estimate_all))
    for device, s in a.estimate_by_device.items():
        lines.append(error_line(f"  {device}", s))
    return "\n".join(lines) + "\n"
