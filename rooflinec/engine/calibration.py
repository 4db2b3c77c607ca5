"""A calibrated estimate beside the bound, never in place of it (DESIGN v3, "Measured
serving"; issue: "How far is the bound from reality?").

One factor per device × metric × regime: the geometric mean of the points' ratios (1 or
more where the bound holds: measured / bound for a time, bound / measured for a rate)
over the fitting points. The estimate is the bound times the factor for a time, over it
for a rate: closed form, and explained by one number per group. A group with no fitting
point takes its device × metric factor, then the metric's over every device, then 1 (the
bound itself): each estimate says which it took (`Estimate.scope`).

End-to-end points cannot tell kernel classes apart, so the factor is per pass regime (the
limit of the pass that sets the bound), not per kernel.

The error is leave-one-out: each point's estimate fitted on every other point, and its
absolute percentage error |estimate − measured| / measured, in all and per device.
Floats: a geometric mean is not a rational, and this is an output edge.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rooflinec.engine.serving import RATES, TIMES, ServingPoint

__all__ = [
    "Calibration",
    "ErrorSummary",
    "Estimate",
    "absolute_error",
    "calibrate",
    "estimate_errors",
    "leave_one_out",
]

# The groups a factor is fitted over, finest first.
SCOPES = ("device, metric and regime", "device and metric", "metric", "none")


def _keys(p: ServingPoint) -> tuple[tuple[object, ...], ...]:
    return ((p.device, p.metric, p.regime), (p.device, p.metric), (p.metric,))


def fits(p: ServingPoint) -> bool:
    """A point the estimate is fitted on: a checked metric with a bound, of a result that
    names no technique (a technique's bound assumes every draft kept: its ratio says how
    far that is, not how far the plain bound is)."""
    ratio = p.ratio
    return (
        ratio is not None and ratio > 0 and p.metric in TIMES | RATES and p.result.technique is None
    )


def _log_ratio(p: ServingPoint) -> float:
    ratio = p.ratio
    assert ratio is not None  # `fits(p)`
    return math.log(float(ratio))


@dataclass(frozen=True)
class Estimate:
    """The calibrated figure of one point, the factor applied and the group it is from."""

    value: float
    factor: float
    scope: str


@dataclass(frozen=True)
class Calibration:
    """The log-ratio sums and counts of the fitting points per group (every scope)."""

    sums: dict[tuple[object, ...], tuple[float, int]]

    def factor(self, p: ServingPoint, without: ServingPoint | None = None) -> tuple[float, str]:
        """The factor of `p`'s finest group with a fitting point (`without` one point
        taken out of the sums: leave-one-out), and that group's scope."""
        out = _log_ratio(without) if without is not None and fits(without) else None
        for scope, key in zip(SCOPES, _keys(p), strict=False):
            total, n = self.sums.get(key, (0.0, 0))
            if out is not None and without is not None and key in _keys(without):
                total, n = total - out, n - 1
            if n > 0:
                return math.exp(total / n), scope
        return 1.0, SCOPES[-1]

    def estimate(self, p: ServingPoint, without: ServingPoint | None = None) -> Estimate | None:
        """The estimate of `p` (None: no bound, or a metric that is not bounded)."""
        if p.bound is None or p.metric not in TIMES | RATES:
            return None
        factor, scope = self.factor(p, without)
        bound = float(p.bound)
        value = bound * factor if p.metric in TIMES else bound / factor
        return Estimate(value, factor, scope)


def calibrate(points: Iterable[ServingPoint]) -> Calibration:
    """The factors fitted on `points` (those with a bound and a ratio)."""
    sums: dict[tuple[object, ...], tuple[float, int]] = {}
    for p in points:
        if not fits(p):
            continue
        log = _log_ratio(p)
        for key in _keys(p):
            total, n = sums.get(key, (0.0, 0))
            sums[key] = (total + log, n + 1)
    return Calibration(sums)


def leave_one_out(points: Sequence[ServingPoint]) -> list[Estimate | None]:
    """Each point's estimate fitted on all the others."""
    fitted = calibrate(points)
    return [fitted.estimate(p, without=p) for p in points]


def absolute_error(value: float, measured: float) -> float:
    """|value − measured| / measured."""
    return abs(value - measured) / measured


@dataclass(frozen=True)
class ErrorSummary:
    points: int
    median_ape: float
    worst_ape: float


def _summary(errors: list[float]) -> ErrorSummary:
    return ErrorSummary(len(errors), statistics.median(errors), max(errors))


def estimate_errors(
    points: Sequence[ServingPoint], estimates: Sequence[Estimate | None]
) -> tuple[ErrorSummary | None, dict[str, ErrorSummary]]:
    """The median and worst absolute percentage error of `estimates` (one per point), in
    all and per device, over the points that name no technique; None / {} without any."""
    every: list[float] = []
    by_device: dict[str, list[float]] = {}
    for p, e in zip(points, estimates, strict=True):
        if e is None or p.result.technique is not None:
            continue  # a technique's bound is not the plain one: not comparable
        error = absolute_error(e.value, float(p.measured))
        every.append(error)
        by_device.setdefault(p.device, []).append(error)
    if not every:
        return None, {}
    return _summary(every), {d: _summary(v) for d, v in sorted(by_device.items())}
