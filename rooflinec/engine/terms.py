"""The method's fixed terms, shared by the exact engine and its float columns: what can
limit a result, and the factors of the sweeps."""

from __future__ import annotations

from fractions import Fraction

from rooflinec.catalog import INTERCONNECT_ROLES, LEVELS

SWEEP = (Fraction(1, 2), Fraction(1), Fraction(2), Fraction(4))
SWEEP_KEYS = ("0.5", "1", "2", "4")
COMPUTE = "compute"
#: A result held by its device's launch-latency floor (launches × latency).
LATENCY = "latency"
#: What can limit a cell, in the order ties are broken: compute, then each level, then
#: the latency floor (which holds a result only where it is strictly slower).
LIMITED_BY: tuple[str, ...] = (COMPUTE, *LEVELS, LATENCY)
#: What can limit a model row or step: the same, then each interconnect level a
#: collective crosses (`scale_up`, `scale_out`), in that tie order.
MODEL_LIMITS: tuple[str, ...] = (*LIMITED_BY, *INTERCONNECT_ROLES)

__all__ = ["COMPUTE", "LATENCY", "LIMITED_BY", "MODEL_LIMITS", "SWEEP", "SWEEP_KEYS"]
