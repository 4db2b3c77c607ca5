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

`nearest_product` rounds a product of two exact values each given as a float and its
correctly rounded tail (`quotient_tail`), with the factors' splits made once per value
rather than once per product: the float columns' ceilings, intensity × bandwidth, whose
intensities and bandwidths repeat over many cells.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from rooflinec.formulas.vectorised import Bools, Floats

__all__ = [
    "in_range",
    "nearest_product",
    "product_quotient",
    "quotient_tail",
    "split",
    "two_product",
]

_SPLIT = 134217729.0  # 2^27 + 1: Veltkamp's splitter for 53-bit significands
_EPS = 2.0**-52
# Outside these magnitudes a split, a product or a half-ulp could leave the normal
# range (overflow or a subnormal low part): such cells are left to the exact path.
_LOW, _HIGH = 2.0**-200, 2.0**200
_CHUNK = 4096


def split(a: Floats) -> tuple[Floats, Floats]:
    """(hi, lo) with hi + lo = a exactly, each of at most 26 significant bits (Veltkamp),
    for `a` in the normal range below 2^996."""
    c = _SPLIT * a
    hi = c - (c - a)
    return hi, a - hi


_split = split


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


def in_range(a: Floats) -> Bools:
    """Where |a| is within the range the error-free transformations here need."""
    magnitude = np.abs(a)
    result: Bools = (magnitude > _LOW) & (magnitude < _HIGH)
    return result


def quotient_tail(a: Floats, b: Floats, q: Floats) -> Floats:
    """The correctly rounded float of a / b − q, for q = a / b rounded to nearest and a,
    b exactly floats in `in_range`: with q, the quotient as a pair of floats to about
    2^-106 relative. The remainder a − q × b is a float exactly (a known property of a
    correctly rounded quotient), found from the exact product q × b (Sterbenz: a − fl(q
    × b) is exact, the two are within a factor two); one division rounds it."""
    with np.errstate(all="ignore"):
        h, e = two_product(q, b)
        result: Floats = ((a - h) - e) / b
    return result


#: Ziv's rounding test: a candidate whose tail, enlarged by this factor, still rounds
#: back to the candidate lies within half an ulp of it by a margin of about 2^-85 of its
#: magnitude, far above the pair's own error (below 2^-100 of it).
_ZIV = 1.0 + 2.0**-30


def nearest_product(
    p: Floats,
    ah: Floats,
    al: Floats,
    a_tail: Floats,
    bh: Floats,
    bl: Floats,
    b_tail: Floats | None = None,
) -> tuple[Floats, Bools]:
    """(s, decided): s[i] is the correctly rounded float64 of a × b wherever
    `decided[i]`, for a = A + a_tail and b = B + b_tail, each given as a float (A, B,
    split as `split` does: A = ah + al) and the correctly rounded float of its tail (the
    exact value minus the float; `quotient_tail`; b_tail None: b is B exactly), and p
    the float product fl(A × B).

    A × B is carried exactly as p + e (Dekker's two-product, on splits made once per
    value rather than per product); the tails' products are added to e, which leaves
    the pair p + t within about 10 × 2^-106 of a × b, relative. The candidate s = fl(p
    + t) is the nearest float unless a × b lies within that error of a midpoint: Ziv's
    test (`_ZIV`) on the exact remainder of the sum decides. A NaN anywhere (how a caller
    marks a value that is not exactly its float, or is out of range) leaves the cell
    undecided. Every value must be in `in_range`."""
    with np.errstate(all="ignore"):
        e = ah * bh
        e -= p
        e += ah * bl
        e += al * bh
        e += al * bl
        b = bh + bl  # exact: the split's parts
        t = a_tail * b
        if b_tail is not None:
            t += (ah + al) * b_tail
        t += e
        s = p + t
        # s + l = p + t exactly (Fast2Sum: |t| is a few ulps of p at most)
        l_part = s - p
        np.subtract(t, l_part, out=l_part)
        l_part *= _ZIV
        l_part += s
        decided: Bools = l_part == s
    return s, decided
