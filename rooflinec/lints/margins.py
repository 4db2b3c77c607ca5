"""Margins that let a wrong figure through: wide tolerances and tiny sustained shares.

A reference example with `tolerance: 100%` passes a figure off by 2×; a device with
`sustained: {compute: 0.0001%}` runs every kernel a million times below its data sheet.
Either is far more often a slip than a measurement, so each is a warning (an error with
`check --strict`).
"""

from __future__ import annotations

from fractions import Fraction

from rooflinec.errors import Diagnostic
from rooflinec.formatting import format_percent
from rooflinec.lints.context import LintContext, _warn_at
from rooflinec.loader import PathKey

MAX_TOLERANCE = Fraction(10, 100)
"""The widest tolerance a reference example may state: a figure checked to 10 %."""

MIN_SUSTAINED = Fraction(10, 100)
"""The smallest plausible sustained share: a data sheet ten times too optimistic."""


def tolerances(ctx: LintContext) -> list[Diagnostic]:
    """A reference example's stated tolerance over `MAX_TOLERANCE`."""
    out = []
    for example in ctx.catalog.examples:
        for e in example.expect:
            if e.tolerance_at is None or e.tolerance <= MAX_TOLERANCE:
                continue
            out.append(
                Diagnostic(
                    e.tolerance_at,
                    f"lint-tolerance: example '{example.id}' accepts its {e.output} within"
                    f" {format_percent(e.tolerance, 2)}, more than"
                    f" {format_percent(MAX_TOLERANCE, 2)}: a figure that far off is wrong,"
                    " not rounded",
                    e.tolerance_path,
                    "warning",
                    "lint-tolerance",
                )
            )
    return out


def sustained_shares(ctx: LintContext) -> list[Diagnostic]:
    """A device's sustained compute or memory share, or a level's own, under `MIN_SUSTAINED`."""
    out = []
    for device in ctx.devices:
        shares: list[tuple[PathKey, str, Fraction | None]] = [
            (("sustained", "compute"), "compute", device.compute_share),
            (("sustained", "memory"), "memory", device.memory_share),
        ]
        shares += [
            (("memory", level, "sustained"), f"{level} memory", mem.sustained)
            for level, mem in device.memory.items()
        ]
        for path, what, share in shares:
            if share is None or share >= MIN_SUSTAINED:
                continue
            message = (
                f"device '{device.id}' sustains {format_percent(share, 2)} of its {what}"
                f" figures, under {format_percent(MIN_SUSTAINED, 2)}: every result on it is"
                " that much below the data sheet; a share is a per cent, such as 92%"
            )
            out.append(_warn_at(device.document, path, "lint-sustained", message))
    return out


__all__ = ["MAX_TOLERANCE", "MIN_SUSTAINED", "sustained_shares", "tolerances"]
