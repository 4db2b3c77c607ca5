"""Unit lints: binary units among decimal peers, prefix slips, OP counted as FLOP."""

from __future__ import annotations

import re
from fractions import Fraction

from rooflinec.errors import Diagnostic
from rooflinec.formatting import format_number
from rooflinec.lints.context import LintContext, _at, _si, _warn_at, _what
from rooflinec.loader import PathKey
from rooflinec.provenance import FigureTrail, relative
from rooflinec.quantities import Dimension, QuantityError, parse_any

_DECIMAL_UNITS = re.compile(
    r"([0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?)\s*([kKMGTP]B(?:/s|ps)?)(?![a-zA-Z/])"
)


def _states_decimal(note: str | None, value: Fraction, dimension: Dimension) -> bool:
    """The note gives `value` in decimal units (within 1 %): "95 GiB is 102.0 GB"."""
    for number, unit in _DECIMAL_UNITS.findall(note or ""):
        try:
            quantity = parse_any(f"{number} {unit}")
        except QuantityError:
            continue
        close = abs(relative(quantity.value, value)) <= Fraction(1, 100)
        if quantity.dimension is dimension and close:
            return True
    return False


def binary_units(ctx: LintContext) -> list[Diagnostic]:
    """A GiB/MiB capacity (or GiB/s bandwidth) where other devices give the level in GB/MB.

    Comparisons across devices then mix units (95 GiB is 102 GB, 7 % more than it reads).
    The figure passes when its note gives the decimal equivalent, which the pages show.
    """
    out = []
    by_field: dict[str, list[FigureTrail]] = {}
    for _, trail in ctx.figures():
        if trail.kind in ("bandwidth", "capacity", "interconnect"):
            by_field.setdefault(trail.field, []).append(trail)
    for entries in by_field.values():
        decimal = [t.device for t in entries if not t.binary]
        for trail in entries:
            dimension = Dimension.BYTES if trail.kind == "capacity" else Dimension.BANDWIDTH
            peers = [d for d in decimal if d != trail.device]
            if not trail.binary or not peers or _states_decimal(trail.note, trail.value, dimension):
                continue
            others = ", ".join(peers[:3]) + (" and others" if len(peers) > 3 else "")
            out.append(
                _at(
                    trail,
                    "lint-binary-units",
                    f"{_what(trail)} is in binary units ({_si(trail.value, trail.unit)} in"
                    f" decimal) while {others} give their {trail.key} {trail.kind} in decimal"
                    " units: comparisons mix units. Give the decimal equivalent in the figure's"
                    " note, or the decimal figure the vendor prints",
                )
            )
    return out


def alt_scale(ctx: LintContext) -> list[Diagnostic]:
    """An alternative 10× or more away from its figure: a unit prefix slip, not a conflict."""
    out = []
    for _, trail in ctx.figures():
        for alt in trail.alternatives:
            if not alt.comparable or trail.dense == 0:
                continue
            ratio = alt.dense / trail.dense
            if Fraction(1, 10) < ratio < 10:
                continue
            shown = format_number(ratio) if ratio >= 1 else f"1/{format_number(1 / ratio)}"
            out.append(
                _at(
                    alt,
                    "lint-alt-scale",
                    f"alternative {alt.printed} of {trail.field} is {shown}× the figure"
                    f" {trail.printed}: a prefix slip (GB/s for TB/s?) rather than a"
                    " conflict; correct it, or give it a pipe if it is another pipe's rate",
                )
            )
    return out


def counts(ctx: LintContext) -> list[Diagnostic]:
    """Integer precisions count OP, floating-point ones FLOP: the unit must say which.

    Vendors print "INT8 … TFLOPS"; the value is the same, but the spec should write TOPS
    and keep the vendor's wording in the quote, so tables never call integer work FLOP.
    """
    out = []
    for device in ctx.devices:
        doc = device.document
        for pid, peak in device.peaks.items():
            precision = ctx.catalog.precisions.get(pid)
            if precision is None:
                continue
            written: list[tuple[str | None, PathKey, str]] = [
                (peak.figure.counts, ("compute", pid, "peak"), peak.figure.text)
            ]
            written += [
                (_counts_of(alt.text), ("compute", pid, "alternatives", i, "value"), alt.text)
                for i, alt in enumerate(peak.figure.alternatives)
            ]
            for counted, path, text in written:
                if counted is not None and counted != precision.unit:
                    right = "OP/s (TOPS)" if precision.unit == "OP" else "FLOP/s"
                    out.append(
                        _warn_at(
                            doc,
                            path,
                            "lint-counts",
                            f"{pid} figure {text} counts {counted}, but {precision.label}"
                            f" counts {precision.unit}: write it in {right} and keep the"
                            " vendor's wording in the quote",
                        )
                    )
    return out


def _counts_of(text: str) -> str | None:
    try:
        return parse_any(text).counts
    except QuantityError:
        return None
