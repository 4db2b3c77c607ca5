"""Rounding at the output edge: exact values in, correctly rounded float64 out.

Every number rooflinec writes is exact (an integer) or the correctly rounded float64 of
its exact value; one exact value is rounded by `rooflinec.engine.exact` (which needs no
numpy, so that `check` loads none). `product_quotient` rounds
a whole numpy column of quotients of products, (a1 × a2) / (b1 × b2), without
Fractions: such products exceed 2^53 in almost every cell, so one float division would
round twice. It carries each product as an unevaluated sum of two floats (Dekker's
FMA-free two-product, with Veltkamp's split), computes the exact residual of a
candidate quotient, and keeps the candidate only where the residual is provably below
half an ulp; the cells it cannot decide (inputs not exactly floats, a residual within
rounding noise of the half-ulp, values outside the normal range) are reported, for the
caller to round from the exact value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

    Floats = NDArray[np.float64]
    Bools = NDArray[np.bool_]

__all__ = ["product_quotient", "two_product"]

_SPLIT = 134217729.0  # 2^27 + 1: Veltkamp's splitter for 53-bit significands
_EPS = 2.0**-52
# Outside these magnitudes a split, a product or a half-ulp could leave the normal
# range (overflow or a subnormal low part): such cells are left to the exact path.
_LOW, _HIGH = 2.0**-200, 2.0**200
_CHUNK = 4096


def _split(a: Floats) -> tuple[Floats, Floats]:
    c = _SPLIT * a
    hi = c - (c - a)
    return hi, a - hi


def two_product(a: Floats, b: Floats) -> tuple[Floats, Floats]:
    """(p, e) with p = fl(a × b) and p + e = a × b exactly (Dekker, without FMA), for
    products and splits in the normal range."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def _residual(
    q: Floats, ah: Floats, al: Floats, bh: Floats, bl: Floats | None
) -> tuple[Floats, Floats]:
    """(r, error bound) for r ≈ (ah + al) − q × (bh + bl), the residual of quotient q."""
    s, t = two_product(q, bh)  # s + t = q × bh exactly
    head = ah - s  # exact: q × bh is within a factor two of ah (Sterbenz)
    if bl is None:
        r = (head - t) + al
        return r, 4 * _EPS * (np.abs(head) + np.abs(t) + np.abs(al))
    u = q * bl
    r = (head - t) + (al - u)
    return r, 4 * _EPS * (np.abs(head) + np.abs(t) + np.abs(al) + 2 * np.abs(u))


def product_quotient(
    a1: Floats, a2: Floats, b1: Floats, b2: Floats | None = None
) -> tuple[Floats, Bools]:
    """(q, decided): see `_product_quotient`; computed a few thousand elements at a time,
    so that its two dozen temporaries stay in the CPU's caches (on whole blocks of
    cells it runs several times slower)."""
    n = len(a1)
    q, decided = np.empty(n), np.empty(n, dtype=np.bool_)
    for start in range(0, n, _CHUNK):
        part = slice(start, start + _CHUNK)
        q[part], decided[part] = _product_quotient(
            a1[part], a2[part], b1[part], None if b2 is None else b2[part]
        )
    return q, decided


def _product_quotient(
    a1: Floats, a2: Floats, b1: Floats, b2: Floats | None
) -> tuple[Floats, Bools]:
    """(q, decided): q[i] is the correctly rounded float64 of (a1 × a2) / (b1 × b2) (of
    (a1 × a2) / b1 without `b2`) at every i where `decided[i]`; elsewhere q is a close
    approximation only.

    Every input must be the exact value as a float (`exactly_float`); a caller marks the
    cells where one is not as undecided itself.
    """
    with np.errstate(all="ignore"):
        ah, al = two_product(a1, a2)
        if b2 is None:
            bh, bl = b1, None
        else:
            bh, bl = two_product(b1, b2)
        q = ah / bh
        decided = _nearest(q, ah, al, bh, bl)
        # Where the first quotient is not provably nearest (the low parts moved it past a
        # midpoint), one Newton step lands on the nearest float, but at a midpoint.
        again = np.flatnonzero(~decided)
        if len(again):
            sub_bl = None if bl is None else bl[again]
            sub = (ah[again], al[again], bh[again], sub_bl)
            r, _ = _residual(q[again], *sub)
            q[again] = q[again] + r / bh[again]
            decided[again] = _nearest(q[again], *sub)
        for x in (a1, a2, b1, q) if b2 is None else (a1, a2, b1, b2, q):
            decided &= (np.abs(x) > _LOW) & (np.abs(x) < _HIGH)
    return q, decided


def _nearest(q: Floats, ah: Floats, al: Floats, bh: Floats, bl: Floats | None) -> Bools:
    """Where q is provably the float nearest to (ah + al) / (bh + bl): its residual is
    below half the gap to the neighbour on the residual's side (the gap halves below a
    power of two), times the divisor, by more than the residual's rounding noise."""
    r, noise = _residual(q, ah, al, bh, bl)
    toward = np.where(r < 0, -np.inf, np.inf)
    half = np.abs(np.nextafter(q, toward) - q) * 0.5
    limit = half * bh
    if bl is not None:
        limit = limit + half * bl
        noise = noise + 4 * _EPS * np.abs(half * bl)
    result: Bools = np.abs(r) + noise < limit
    return result
