"""The frontier's Pareto set and `plan`'s queries (`rooflinec.engine.frontier`), on
points made here: exact against brute force, near-ties included."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from rooflinec.catalog import Deployment
from rooflinec.engine.frontier import (
    DeviceFrontier,
    Point,
    Targets,
    batches,
    best,
    compare,
    pareto,
)


def brute_pareto(xs: list[Fraction], ys: list[Fraction], ties: list[tuple[int, ...]]) -> set[int]:
    """The Pareto set by its definition, exactly and in O(n²): i is kept unless some j
    is at least as good on both axes and better on one, or equal on both with a smaller
    tie key."""
    kept = set()
    for i in range(len(xs)):
        beaten = False
        for j in range(len(xs)):
            if j == i:
                continue
            ge = xs[j] >= xs[i] and ys[j] >= ys[i]
            strictly = xs[j] > xs[i] or ys[j] > ys[i]
            if ge and (strictly or ties[j] < ties[i]):
                beaten = True
                break
        if not beaten:
            kept.add(i)
    return kept


def nudged(value: Fraction, ulps: int) -> float:
    """`value` as a float moved by `ulps` units in the last place: a float path's error."""
    f = float(value)
    for _ in range(abs(ulps)):
        f = math.nextafter(f, math.inf if ulps > 0 else -math.inf)
    return f


# Values with near-ties no float separates: a base, and the base plus a tiny exact step.
bases = st.sampled_from([Fraction(1, 3), Fraction(2, 7), Fraction(10**6, 3), Fraction(5)])
tiny = st.sampled_from([Fraction(0), Fraction(1, 10**30), Fraction(-1, 10**30), Fraction(1, 7)])
values = st.builds(lambda b, t: b + t, bases, tiny)
points = st.lists(
    st.tuples(values, values, st.integers(-2, 2), st.integers(-2, 2), st.integers(0, 3)),
    min_size=0,
    max_size=25,
)


@settings(max_examples=300, deadline=None)
@given(points)
def test_pareto_is_the_brute_force_set(
    drawn: list[tuple[Fraction, Fraction, int, int, int]],
) -> None:
    """The floats (off by up to two ulps, as a float path may be) give exactly the set the
    exact O(n²) definition gives, near-ties of 1e-30 included, and list it by x falling
    and y rising."""
    xs = [x for x, *_ in drawn]
    ys = [y for _, y, *_ in drawn]
    ties = [(t, i) for i, (*_, t) in enumerate(drawn)]
    fx = [nudged(x, dx) for x, _, dx, _, _ in drawn]
    fy = [nudged(y, dy) for _, y, _, dy, _ in drawn]
    got = pareto(fx, fy, xs, ys, ties)
    assert brute_pareto(xs, ys, ties) == set(got)
    assert len(got) == len(set(got))
    for a, b in itertools.pairwise(got):
        assert xs[a] > xs[b] and ys[a] < ys[b]


def test_compare_decides_near_ties_exactly() -> None:
    """Floats that are equal, or a few ulps apart, are compared on the exact values."""
    a, b = Fraction(1, 3), Fraction(1, 3) + Fraction(1, 10**40)
    assert float(a) == float(b)
    assert -1 == compare(float(a), float(b), a, b)
    assert 0 == compare(float(a), float(a), a, a)
    assert 1 == compare(nudged(a, 1), float(a), b, a)
    assert -1 == compare(1.0, 2.0, Fraction(5), Fraction(1))  # far apart: the floats


def test_batches_are_powers_of_two_and_the_largest() -> None:
    """1, 2, 4, … up to the largest batch that fits, that batch included once."""
    assert (1,) == batches(1)
    assert (1, 2, 4, 8, 13) == batches(13)
    assert (1, 2, 4, 8, 16) == batches(16)


@dataclass(frozen=True)
class _Result:
    """The figures `best` reads of a request's result."""

    deployment: Deployment
    batch: int
    ttft: Fraction
    latency: Fraction
    tokens_per_second_per_user: Fraction
    tokens_per_second_per_chip: Fraction
    usd_per_million_tokens: Fraction | None = None
    joules_per_token: Fraction | None = None


def _point(tp: int, batch: int, user: int, chip: int, ttft: Fraction = Fraction(1, 10)) -> Point:
    r = _Result(Deployment(tp), batch, ttft, Fraction(10), Fraction(user), Fraction(chip))
    return Point(r, float(user), float(chip))  # type: ignore[arg-type]


def _frontier(*points: Point) -> DeviceFrontier:
    """A device's points, all evaluated, and their frontier."""
    kept = pareto(
        [p.user_rate for p in points],
        [p.chip_rate for p in points],
        [p.result.tokens_per_second_per_user for p in points],
        [p.result.tokens_per_second_per_chip for p in points],
        [p.tie for p in points],
    )
    return DeviceFrontier("d", points, tuple(points[i] for i in kept))


def test_best_meets_the_targets() -> None:
    """The most tokens per chip among the points at 20 tokens/s per user or more."""
    f = _frontier(_point(1, 1, 50, 100), _point(1, 8, 25, 400), _point(1, 64, 10, 900))
    choice = best(f, Targets(min_user_rate=Fraction(20)), "tokens-per-chip")
    assert choice.meets
    assert choice.point is not None and 8 == choice.point.result.batch
    assert "min-user-rate" == choice.binding  # without it, batch 64 wins


def test_best_without_a_binding_target() -> None:
    """A target the best point meets anyway does not bind."""
    f = _frontier(_point(1, 1, 50, 100), _point(1, 8, 25, 400))
    choice = best(f, Targets(min_user_rate=Fraction(20), max_chips=8), "tokens-per-chip")
    assert choice.meets and choice.binding is None


def test_none_meets_names_the_binding_target() -> None:
    """Nothing reaches 60 tokens/s per user: no plan, and that target binds."""
    f = _frontier(_point(1, 1, 50, 100), _point(2, 1, 55, 60))
    choice = best(f, Targets(min_user_rate=Fraction(60), max_chips=8), "tokens-per-chip")
    assert not choice.meets and choice.point is None
    assert "min-user-rate" == choice.binding


def test_two_targets_binding_together() -> None:
    """Each of two targets excludes what the other lets through: neither binds alone, so
    the first the unconstrained best point fails is named."""
    slow_start = _point(1, 1, 50, 100, ttft=Fraction(2))
    slow_user = _point(1, 8, 10, 400)
    f = _frontier(slow_start, slow_user)
    targets = Targets(min_user_rate=Fraction(20), max_ttft=Fraction(1))
    choice = best(f, targets, "tokens-per-chip")
    assert not choice.meets
    assert "min-user-rate" == choice.binding  # the best point (batch 8) fails it


def test_exact_ties_go_to_fewer_chips() -> None:
    """Equal figures: the higher per-user rate, then fewer chips."""
    f = _frontier(_point(2, 4, 30, 200), _point(1, 4, 30, 200))
    choice = best(f, Targets(), "tokens-per-chip")
    assert choice.point is not None and 1 == choice.point.result.deployment.tp


def test_cost_needs_a_price() -> None:
    """The cost objective with no price anywhere: no plan, and the note says why."""
    f = _frontier(_point(1, 1, 50, 100))
    choice = best(f, Targets(), "cost")
    assert not choice.meets and choice.note is not None and "price" in choice.note
