"""One device's ceilings at one precision, and the one rule that decides the bound.

The rule, written here once: **the lowest ceiling wins; ties go to compute, then the
levels in order; the latency floor only when strictly slower.** A kernel cell, a model
step, `report`'s regime and the charts all ask a `Roof`; the float columns
(`rooflinec.engine.columns`) compute the same rule in numpy and come back here wherever the
floats cannot decide.

The decision is made on times (a count over its ceiling: operations / peak, bytes /
bandwidth, launches × latency): the longest time is the lowest rate, for positive
operations. Times are compared as (numerator, denominator) integers, so the model
steps' integer fast path and the exact views share one comparison.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from rooflinec.engine.terms import COMPUTE, LATENCY
from rooflinec.formulas import WIDTH

__all__ = ["WIDTH", "Bound", "Pair", "Roof", "slowest"]


#: A rational as (numerator, denominator) integers, the denominator positive.
Pair = tuple[int, int]


def slowest(
    compute: Pair, levels: Iterable[tuple[str, Pair]], floors: Iterable[tuple[str, Pair]] = ()
) -> tuple[int, int, str]:
    """The longest of the times `compute`, then `levels` (in order), then `floors`, as
    (numerator, denominator, what it is): a level must be strictly longer than the ones
    before it to win (ties go to compute, then the levels in order), and so must a floor
    (it holds only where strictly slower than the roofline)."""
    n, d = compute
    limit = COMPUTE
    for name, (tn, td) in levels:
        if tn * d > n * td:
            n, d, limit = tn, td, name
    for name, (tn, td) in floors:
        if tn * d > n * td:
            n, d, limit = tn, td, name
    return n, d, limit


@dataclass(frozen=True)
class Bound:
    """What limits a count on a roof, and the attainable rate and time, exactly."""

    limit: str  # `compute`, a level, or a floor's role (`latency`)
    rate: Fraction  # OP/s
    time: Fraction  # s


@dataclass(frozen=True)
class Roof:
    """The ceilings of one device at one precision.

    `peak` in OP/s; `bandwidths` in B/s per level, in the levels' order (only the levels
    that are ceilings here); `floors` in s per launch, keyed by role (`latency` for the
    launch latency): a floor holds a result only where strictly slower than the rest.
    Another limit (an interconnect level) is one more entry, in `bandwidths` when it is
    a traffic ceiling, in `floors` when it is a time per launch.
    """

    peak: Fraction
    bandwidths: Mapping[str, Fraction] = field(default_factory=dict)
    floors: Mapping[str, Fraction] = field(default_factory=dict)

    @classmethod
    def of(
        cls, peak: Fraction, bandwidths: Mapping[str, Fraction], latency: Fraction | None
    ) -> Roof:
        """A roof with the launch latency as its one floor (None: no floor)."""
        return cls(peak, bandwidths, {} if latency is None else {LATENCY: latency})

    def scaled(self, *, peak: Fraction = Fraction(1), bandwidth: Fraction = Fraction(1)) -> Roof:
        """This roof with the peak and every bandwidth scaled (a sweep point); no faster
        memory or peak lifts a floor."""
        return Roof(
            self.peak * peak,
            {lv: bw * bandwidth for lv, bw in self.bandwidths.items()},
            self.floors,
        )

    def ceilings(
        self, operations: Fraction, traffic: Mapping[str, Fraction]
    ) -> dict[str, Fraction]:
        """Each ceiling's rate: `compute` is the peak, a level is intensity × bandwidth."""
        out = {COMPUTE: self.peak}
        for level, bw in self.bandwidths.items():
            out[level] = operations * bw / traffic[level]
        return out

    def memory(
        self, operations: Fraction, traffic: Mapping[str, Fraction]
    ) -> tuple[str, Fraction] | None:
        """The lowest memory ceiling and its level (ties to the earlier level), or None
        where no level is a ceiling."""
        out: tuple[str, Fraction] | None = None
        for level, bw in self.bandwidths.items():
            rate = operations * bw / traffic[level]
            if out is None or rate < out[1]:
                out = (level, rate)
        return out

    def bound(
        self, operations: Fraction, traffic: Mapping[str, Fraction], launches: int = 1
    ) -> Bound:
        """What limits `operations` moving `traffic` (bytes per level) in `launches`
        launches on this roof: the limit, the attainable rate and the time, exactly."""
        n, d, limit = slowest(
            _pair(Fraction(operations) / self.peak),
            ((lv, _pair(Fraction(traffic[lv]) / bw)) for lv, bw in self.bandwidths.items()),
            ((role, _pair(launches * t)) for role, t in self.floors.items()),
        )
        time = Fraction(n, d)
        return Bound(limit, operations / time, time)


def _pair(value: Fraction) -> Pair:
    return value.numerator, value.denominator
