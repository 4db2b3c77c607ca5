"""The method's fixed terms, shared by the exact engine and its float columns: what can
limit a result, and the factors of the sweeps."""

from __future__ import annotations

from fractions import Fraction

from rooflinec.catalog import LEVELS

SWEEP = (Fraction(1, 2), Fraction(1), Fraction(2), Fraction(4))
SWEEP_KEYS = ("0.5", "1", "2", "4")
COMPUTE = "compute"
#: What can limit a cell, in the order ties are broken: compute, then each level.
LIMITED_BY: tuple[str, ...] = (COMPUTE, *LEVELS)

__all__ = ["COMPUTE", "LIMITED_BY", "SWEEP", "SWEEP_KEYS"]
