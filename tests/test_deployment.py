"""`Deployment`: the degrees of a split over chips, their defaults and their checks."""

from __future__ import annotations

import pytest

from rooflinec.catalog import ONE_CHIP, Deployment


def test_one_chip_binds_every_deployment_variable_to_one() -> None:
    """On one chip tp = pp = ep = dp = 1: every v2 formula keeps its value."""
    assert {"tp": 1, "pp": 1, "ep": 1, "dp": 1} == ONE_CHIP.variables()
    assert (1, None) == (ONE_CHIP.total, ONE_CHIP.problem())


@pytest.mark.parametrize(
    ("deployment", "chips", "dp"),
    [
        (Deployment(tp=8), 8, 1),
        (Deployment(tp=4, pp=2), 8, 1),
        (Deployment(tp=2, ep=8), 8, 4),  # lcm(2, 8): experts spread over four replicas
        (Deployment(tp=8, chips=64), 64, 8),
        (Deployment(tp=4, pp=4, ep=4, chips=32), 32, 2),
    ],
)
def test_chips_default_to_the_fewest_that_hold_the_split(
    deployment: Deployment, chips: int, dp: int
) -> None:
    """chips defaults to lcm(tp, ep) × pp; dp = chips / (tp × pp)."""
    assert (chips, dp, None) == (deployment.total, deployment.dp, deployment.problem())


@pytest.mark.parametrize(
    ("deployment", "problem"),
    [
        (Deployment(tp=0), "tp = 0: a degree is 1 or more"),
        (Deployment(tp=4, pp=2, chips=12), "chips = 12 is not a multiple of tp × pp = 8"),
        (
            Deployment(tp=2, ep=3, chips=4),
            "ep = 3 does not divide tp × dp = 4, the chips of one pipeline stage",
        ),
    ],
)
def test_a_split_that_is_no_deployment_says_why(deployment: Deployment, problem: str) -> None:
    assert problem == deployment.problem()
