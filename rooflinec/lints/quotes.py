"""Quote lints: every figure traces to a verbatim quote, and the quote prints its number."""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

from rooflinec.errors import Diagnostic
from rooflinec.lints.context import LintContext, _at, _what


def missing_quote(ctx: LintContext) -> list[Diagnostic]:
    """A figure with no verbatim quote from its source cannot be audited.

    A peak or bandwidth also traces to a quote when a same-pipe alternative with the same
    dense value (within 0.1 %) carries one: the method's figures cite documents whose
    wording was not captured, and a same-value alternative quotes another document.
    """
    out = []
    for _, trail in ctx.figures():
        if trail.trace is None:
            where = (
                ""
                if trail.kind == "capacity"
                else (" and no alternative with the same value (within 0.1 %) carries one")
            )
            out.append(
                _at(trail, "lint-quote", f"{_what(trail)} has no quote from its source{where}")
            )
    return out


# Figures whose quote need not print their number: a capacity (often printed in other
# units), a measured share (the measurement over the wire's figure, computed by the spec).
UNQUOTED_NUMBERS = frozenset({"capacity", "share"})

_QUOTED_NUMBER = re.compile(r"[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")


_DECIMAL_COMMA = re.compile(r"[0-9]+,[0-9]+")


# Small counts written as words ("eight NVIDIA H100 Tensor Core GPUs"), as a domain's
# quote often gives them.
_WORDS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
]
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_WORDS) + r")\b", re.IGNORECASE)


def _numbers(text: str) -> list[Fraction]:
    """Every number in a quote: "1,979" is 1979; "3,7" (a decimal comma) is also 3.7;
    "eight" is 8."""
    out = [Fraction(m.group().replace(",", "")) for m in _QUOTED_NUMBER.finditer(text)]
    out += [Fraction(m.group().replace(",", ".")) for m in _DECIMAL_COMMA.finditer(text)]
    out += [Fraction(_WORDS.index(m.group().lower())) for m in _NUMBER_WORD.finditer(text)]
    return out


def _printed_number(printed: str) -> Fraction | None:
    match = _QUOTED_NUMBER.match(printed.strip())
    return Fraction(match.group().replace(",", "")) if match else None


_POWERS = frozenset(1000**k for k in range(7))


@lru_cache(maxsize=1 << 14)  # pure: a serve rebuild asks again for every figure
def quote_backs(printed: str, quote: str) -> bool:
    """True if `quote` contains the number of `printed`, up to a power of 1000.

    `3.35 TB/s` is backed by "3,350 GB/sec", `918 TOPS` by "9.18e14", `1979 TFLOP/s`
    by "1,979 TFLOPS*": the prefix may differ, the digits may not.
    """
    number = _printed_number(printed)
    if number is None or number == 0:
        return True
    for candidate in _numbers(quote):
        if candidate == 0:
            continue
        ratio = candidate / number
        # 1000**k for k in -6..6: a power of 1000 over 1, or 1 over one
        if (ratio.denominator == 1 and ratio.numerator in _POWERS) or (
            ratio.numerator == 1 and ratio.denominator in _POWERS
        ):
            return True
    return False


def quote_number(ctx: LintContext) -> list[Diagnostic]:
    """A quote that does not contain its figure's number backs some other figure."""
    out = []
    for _, trail in ctx.figures():
        if (
            trail.kind not in UNQUOTED_NUMBERS
            and trail.quote
            and not quote_backs(trail.printed, trail.quote)
        ):
            out.append(
                _at(
                    trail,
                    "lint-quote-number",
                    f"{_what(trail)}: its quote does not contain the number"
                    f' (quote: "{trail.quote}")',
                )
            )
        for alt in trail.alternatives:
            if alt.quote and not quote_backs(alt.printed, alt.quote):
                out.append(
                    _at(
                        alt,
                        "lint-quote-number",
                        f"alternative {alt.printed} of {trail.field}: its quote does not contain"
                        f' the number (quote: "{alt.quote}")',
                    )
                )
    return out
