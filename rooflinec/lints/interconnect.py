"""Interconnect lints: a link's direction, its measured share and its domain."""

from __future__ import annotations

import re

from rooflinec.catalog import INTERCONNECT_NAMES
from rooflinec.errors import Diagnostic
from rooflinec.formatting import format_percent
from rooflinec.lints.context import LintContext, _warn_at

# How sources say a figure sums both directions.
BOTH_WAYS = re.compile(r"\bbi-?directional\b|\bboth directions\b|\bfull[- ]duplex\b", re.I)


def direction(ctx: LintContext) -> list[Diagnostic]:
    """A `per-direction` link figure whose quote says it is bidirectional: the figure sums
    both directions, and taking it for one doubles every collective's rate."""
    out = []
    for device in ctx.devices:
        for role, fabric in device.interconnect.items():
            quote = fabric.bandwidth.quote
            if fabric.direction != "per-direction" or not quote:
                continue
            match = BOTH_WAYS.search(quote)
            if match is None:
                continue
            out.append(
                _warn_at(
                    device.document,
                    ("interconnect", role, "direction"),
                    "lint-direction",
                    f"{INTERCONNECT_NAMES[role]} {fabric.bandwidth.text} is marked per-direction,"
                    f' but its quote says "{match.group()}": write `direction: bidirectional`'
                    " (halved for one direction), or quote the per-direction figure",
                )
            )
    return out


def link_shares(ctx: LintContext) -> list[Diagnostic]:
    """A link's sustained share above 100 %: a measured collective faster than the wire is
    not a share of it (an in-network reduction's bus bandwidth, or the wrong direction)."""
    out = []
    for device in ctx.devices:
        for role, fabric in device.interconnect.items():
            sustained = fabric.sustained
            if sustained is None or sustained.value <= 1:
                continue
            out.append(
                _warn_at(
                    device.document,
                    ("interconnect", role, "sustained", "share"),
                    "lint-link-share",
                    f"{INTERCONNECT_NAMES[role]} sustains {format_percent(sustained.value, 4)}"
                    " of its per-direction bandwidth, over 100 %: a measured rate above the"
                    " wire's is not a share of it (NVLink SHARP's bus bandwidth, or a"
                    " bidirectional figure taken per direction); use a ring or point-to-point"
                    " measurement",
                )
            )
    return out


def domains(ctx: LintContext) -> list[Diagnostic]:
    """A link with a bandwidth whose domain is one chip: a fabric joins at least two, so
    either the domain or the level is wrong (a part with no fabric leaves the role out)."""
    out = []
    for device in ctx.devices:
        for role, fabric in device.interconnect.items():
            if fabric.domain is None or fabric.domain.value != 1:
                continue
            out.append(
                _warn_at(
                    device.document,
                    ("interconnect", role, "domain"),
                    "lint-domain",
                    f"{INTERCONNECT_NAMES[role]} has a bandwidth ({fabric.bandwidth.text}) but a"
                    " domain of 1 chip: a fabric joins two or more; a part with no fabric of"
                    f" its own leaves `{role}` out",
                )
            )
    return out


__all__ = ["BOTH_WAYS", "direction", "domains", "link_shares"]
