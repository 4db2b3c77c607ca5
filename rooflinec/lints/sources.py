"""Source lints: the vendor's own source preferred, each source's kind, age and dates."""

from __future__ import annotations

from rooflinec.errors import Diagnostic
from rooflinec.lints.context import LintContext, _at, _warn, _warn_at, _what
from rooflinec.provenance import SAME_VALUE, STALE_MONTHS, is_vendor_own, relative, source_info


def third_party(ctx: LintContext) -> list[Diagnostic]:
    """A figure that cites a third party although the vendor's own source prints it.

    A third party here is any source that is not the device vendor's own: a reseller's
    copy, a blog, but also an OEM's product guide or another vendor's paper. The vendor's
    own source (kind `vendor`, published by the device's vendor) must print
    the same dense value (within 0.1 %) for the same figure of the same device: as one of
    the figure's alternatives, or as another figure of the device quoting the same row
    (the same quote text, as FP8 and FP6 share "FP8/FP6 Tensor Core"). A vendor source
    about another device, or another vendor's document quoting this one (AMD's white
    paper quoting an H200 figure), is no reason to prefer it.
    """
    out = []
    for device in ctx.devices:
        trails = ctx.trails[device.id]
        for trail in trails:
            if trail.source is None or is_vendor_own(trail.source, device.vendor):
                continue
            better = [
                (alt.source.id, alt.location)
                for alt in trail.alternatives
                if alt.source is not None
                and is_vendor_own(alt.source, device.vendor)
                and alt.comparable
                and abs(relative(alt.dense, trail.dense)) <= SAME_VALUE
            ]
            better += [
                (other.source.id, other.location)
                for other in trails
                if other is not trail
                and other.source is not None
                and other.quote
                and other.quote == trail.quote
                and is_vendor_own(other.source, device.vendor)
                and abs(relative(other.value, trail.value)) <= SAME_VALUE
            ]
            if better:
                sid, where = better[0]
                kind = "third-party" if trail.source.kind == "third-party" else "non-vendor"
                out.append(
                    _at(
                        trail,
                        "lint-third-party",
                        f"{_what(trail)} cites the {kind} source '{trail.source.id}', but"
                        f" {device.vendor}'s own source '{sid}' prints the same value (line"
                        f" {where.line}): cite '{sid}' with its quote and keep"
                        f" '{trail.source.id}' as an alternative",
                    )
                )
    return out


def source_kind(ctx: LintContext) -> list[Diagnostic]:
    """A source without `kind` cannot be told vendor from third party."""
    return [
        _warn(
            source.location,
            ("sources", sid),
            "lint-source-kind",
            f"source '{sid}' does not say its kind: add `kind: vendor` or `kind: third-party`",
        )
        for _, sid, source in ctx.sources()
        if source.kind is None
    ]


def stale(ctx: LintContext) -> list[Diagnostic]:
    """A source read more than 18 months ago: the vendor may have revised its figures."""
    out = []
    for device, sid, source in ctx.sources():
        info = source_info(source, ctx.today)
        if info.stale:
            out.append(
                _warn_at(
                    device.document,
                    ("sources", sid, "read"),
                    "lint-stale",
                    f"source '{sid}' was read {info.read}, {info.age_months} months ago"
                    f" (more than {STALE_MONTHS}): read it again and update the figures"
                    " that cite it",
                )
            )
    return out


def dates(ctx: LintContext) -> list[Diagnostic]:
    """Read dates in the future, publications after their reading.

    A date off the calendar (2026-02-30) is the schema's error before any lint runs;
    it is still flagged here for a catalog built without the schema.
    """
    out = []
    for device, sid, source in ctx.sources():
        age = source_info(source, ctx.today).age_days
        problem = (
            "is not a calendar date" if age is None else "is in the future" if age < 0 else None
        )
        if problem:
            message = f"source '{sid}' read date {source.read} {problem}"
            out.append(_warn_at(device.document, ("sources", sid, "read"), "lint-dates", message))
        if source.published and source.published > source.read:
            message = (
                f"source '{sid}' is dated {source.published}, after it was read ({source.read})"
            )
            out.append(
                _warn_at(device.document, ("sources", sid, "published"), "lint-dates", message)
            )
    return out
