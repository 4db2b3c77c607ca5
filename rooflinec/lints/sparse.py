"""The sparsity lint: a tensor peak says whether it was printed 2:4 sparse or dense."""

from __future__ import annotations

import re
from fractions import Fraction

from rooflinec.catalog import Catalog, Device
from rooflinec.errors import Diagnostic
from rooflinec.lints.context import LintContext, _at, _si, _what
from rooflinec.provenance import FigureTrail, comparable_pipes, relative

TENSOR_PRECISIONS = frozenset({"tf32", "bf16", "fp8", "int8", "fp6", "fp4"})
"""Precisions run on matrix (tensor) pipes, where vendors print 2:4 sparse figures."""


_DENSE = re.compile(r"\bdense\b", re.IGNORECASE)
PAIRED = Fraction(5, 100)  # a sparse alternative / 2 within 5 % of the peak pairs with it
HALF = Fraction(2, 100)  # a dense alternative within 2 % of half the peak betrays a sparse one


def _sparse_vendors(catalog: Catalog) -> set[str]:
    out = set()
    for device in catalog.devices.values():
        for peak in device.peaks.values():
            alts = peak.figure.alternatives
            if peak.sparsity == "2:4" or any(a.sparsity == "2:4" for a in alts):
                out.add(device.vendor.casefold())
    return out


def sparsity(ctx: LintContext) -> list[Diagnostic]:
    """A tensor peak of a vendor that prints sparse figures, not stated sparse or dense.

    A vendor prints sparse figures when any peak or alternative of any of its devices
    carries `sparsity: "2:4"` (NVIDIA, AMD). For such a vendor, a tf32/bf16/fp8/int8/fp6/
    fp4 peak on the matrix pipe without the flag must show that it is dense: a sparse
    alternative that pairs with it (A100: 312 with 624 at 2:4), or a note saying "dense".
    Whatever the note says, an alternative printing the same value with sparsity, or a
    dense alternative at half the value, means the flag was dropped. The flag on fp64 or
    fp32 (no structured-sparsity pipe) is a slip too.
    """
    out = []
    vendors = _sparse_vendors(ctx.catalog)
    for device in ctx.devices:
        for trail in ctx.trails[device.id]:
            if trail.kind != "peak":
                continue
            if trail.sparsity == "2:4":
                if trail.key not in TENSOR_PRECISIONS:
                    out.append(
                        _at(
                            trail,
                            "lint-sparsity",
                            f"{_what(trail)} is marked 2:4 sparse, but {trail.key} runs on"
                            " no structured-sparsity pipe: remove the flag",
                        )
                    )
                continue
            if (
                trail.key not in TENSOR_PRECISIONS
                or trail.pipe == "vector"
                or device.vendor.casefold() not in vendors
            ):
                continue
            message = _sparsity_problem(device, trail)
            if message:
                out.append(_at(trail, "lint-sparsity", message))
    return out


def _sparsity_problem(device: Device, trail: FigureTrail) -> str | None:
    alts = [a for a in trail.alternatives if comparable_pipes(a.pipe, trail.pipe)]
    same_sparse = [
        a
        for a in alts
        if a.sparsity == "2:4" and abs(relative(a.value, trail.value)) <= Fraction(1, 100)
    ]
    half_dense = [
        a for a in alts if a.sparsity is None and abs(relative(a.value, trail.value / 2)) <= HALF
    ]
    if same_sparse or half_dense:
        evidence = [f"{a.printed} at 2:4 sparsity (line {a.location.line})" for a in same_sparse]
        evidence += [f"{a.printed} dense (line {a.location.line})" for a in half_dense]
        return (
            f"{_what(trail)} is given as dense, but its alternatives say it was printed with"
            f' sparsity: {"; ".join(evidence)}. Add `sparsity: "2:4"` (the dense rate is'
            f" {_si(trail.value / 2, trail.unit)})"
        )
    paired = any(
        a.sparsity == "2:4" and abs(relative(a.dense, trail.value)) <= PAIRED for a in alts
    )
    if paired or (trail.note and _DENSE.search(trail.note)):
        return None
    return (
        f"{_what(trail)}: {device.vendor} prints tensor figures with 2:4 sparsity, and this"
        ' one states neither sparsity nor that it is dense. Add `sparsity: "2:4"` if it was'
        " printed with sparsity; otherwise give the sparse figure as an alternative or say"
        ' "dense" in the figure\'s note'
    )
