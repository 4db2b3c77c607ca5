"""Slips of reading a data-sheet table: the wrong accumulate column, a per-card figure.

- `accumulate`: GeForce tables print the tensor rate with FP16 accumulate beside the
  one with FP32 accumulate, and on GeForce cards the second is half the first. A BF16
  roofline wants the FP32-accumulate rate, and a GeForce card's dense BF16 tensor rate
  is twice its FP32 vector rate; a BF16 peak at three times the FP32 rate or more
  (four, give or take the rounding of printed rates) is the FP16-accumulate column
  (some public tables shift it into "BF16"). Professional and data-centre cards
  accumulate in FP32 at full rate, so the rule stops at GeForce.
- `per_card`: a device describes one chip; a figure whose quote prints it per card,
  board, module, node or system, on a device that is not itself that card or module,
  must say how many chips it covers (`chips: N`) or the device takes a whole card's
  figure as one chip's.
"""

from __future__ import annotations

import re
from fractions import Fraction

from rooflinec.errors import Diagnostic
from rooflinec.lints.context import LintContext, _at, _si, _what

GEFORCE = re.compile(r"\bgeforce\b", re.IGNORECASE)
FP16_ACCUMULATE_RATIO = Fraction(3)  # BF16 dense / FP32 vector: 2 is right, 4 is FP16 accumulate

PER_UNIT = re.compile(
    r"\bper (card|board|module|node|server|system|instance|machine|rack|pod)\b", re.IGNORECASE
)
WHOLE_FORMS = frozenset({"card", "module"})  # devices described as the whole card or module
# Figures a device gives per chip (a domain is per pod or system by nature, a share has none).
PER_CHIP = frozenset({"peak", "bandwidth", "capacity", "interconnect", "power"})


def accumulate(ctx: LintContext) -> list[Diagnostic]:
    """A GeForce card's BF16 peak at 3x its FP32 rate or more: the FP16-accumulate column."""
    out = []
    for device in ctx.devices:
        if not GEFORCE.search(device.name):
            continue
        bf16, fp32 = device.peaks.get("bf16"), device.peaks.get("fp32")
        if bf16 is None or fp32 is None or bf16.pipe == "vector":
            continue
        if bf16.dense < FP16_ACCUMULATE_RATIO * fp32.dense:
            continue
        trail = next(t for t in ctx.trails[device.id] if t.field == "compute.bf16")
        out.append(
            _at(
                trail,
                "lint-accumulate",
                f"{_what(trail)} is {float(bf16.dense / fp32.dense):.3g}x the FP32 rate"
                f" {_si(fp32.dense, trail.unit)}: on a GeForce card the BF16 tensor rate"
                " with FP32 accumulate is twice the FP32 rate, so this looks like the"
                " FP16-accumulate column; use the FP32-accumulate figure",
            )
        )
    return out


def per_card(ctx: LintContext) -> list[Diagnostic]:
    """A figure quoted per card, board or system on a per-chip device, without `chips`."""
    out = []
    for device, trail in ctx.figures():
        if device.form in WHOLE_FORMS or trail.trace is None or trail.kind not in PER_CHIP:
            continue
        match = PER_UNIT.search(trail.trace.quote)
        if match is None or any(step.operation == "chips" for step in trail.steps):
            continue
        out.append(
            _at(
                trail,
                "lint-per-card",
                f"{_what(trail)}: its quote prints it per {match.group(1).lower()}, and"
                f" {device.id} describes one chip: give `chips: N` (the chips the figure"
                " covers) so it is divided per chip",
            )
        )
    return out
