"""Formatting numbers for people, at the output edge: SI prefixes, significant figures, per cent.

Values arrive exact (Fraction or int) from the compiler, or as floats from exports. The
rounding is always done on the exact value (a float is converted to the Fraction it exactly
is), with round half to even, so the printed digits never depend on a float's repr and a
figure such as 989.5 TFLOP/s prints as written in the spec. Every output of `format_si` and
`format_percent` is accepted back by `rooflinec.quantities`, which the tests check.
"""

from __future__ import annotations

import math
from fractions import Fraction

__all__ = ["exact_decimal", "format_number", "format_percent", "format_si"]

Real = Fraction | int | float

# Exponent (power of ten) -> SI prefix symbol.
_PREFIXES: dict[int, str] = {
    -12: "p",
    -9: "n",
    -6: "µ",
    -3: "m",
    0: "",
    3: "k",
    6: "M",
    9: "G",
    12: "T",
    15: "P",
    18: "E",
}

# Units that take no prefix at all: intensities and ratios read best as plain numbers
# ("0.9995 FLOP/B", "1500 FLOP/B"), and "kFLOP/B" is not something anyone writes.
_UNPREFIXED = frozenset({"", "%", "x", "×", "FLOP/B", "OP/B", "B/B"})

# Plain decimals outside these leading exponents become long; use 1.234e-7 instead, as
# JavaScript does (its thresholds: below 1e-6, from 1e21).
_PLAIN_MIN_EXP = -6
_PLAIN_MAX_EXP = 20

# log10(2) as an integer ratio, for a first guess of a value's decimal exponent.
_LOG10_2_NUM = 30103
_LOG10_2_DEN = 100000


def format_si(value: Real, unit: str, *, digits: int = 4) -> str:
    """`value` (in the base `unit`) with an engineering SI prefix and `digits` significant figures.

    The prefix is chosen so the mantissa is in [1, 1000): k M G T P E for every unit but
    seconds, which take m µ n p instead (and plain seconds from 1 s up), and intensities or
    ratios (FLOP/B, %, ""), which take none. Trailing zeros are stripped. A value beyond the
    prefixes uses exponent notation in the base unit ("1e-19 s"). `unit` must be a base unit
    (B/s, not GB/s).

    >>> format_si(Fraction(9895, 10) * 10**12, "FLOP/s")
    '989.5 TFLOP/s'
    """
    _check_digits(digits)
    special = _non_finite(value)
    if special is not None:
        return _join(special, "", unit)
    exact = Fraction(value)
    if exact == 0:
        return _join("0", "", unit)
    sign = "-" if exact < 0 else ""
    mantissa, exponent = _round_significant(abs(exact), digits)
    lead = exponent + len(str(mantissa)) - 1  # the value is in [10**lead, 10**(lead + 1))

    if unit in _UNPREFIXED:
        power = 0
    elif unit == "s":
        power = min(max(_floor3(lead), -12), 0)
    else:
        power = min(max(_floor3(lead), 0), 18)
    if not _PLAIN_MIN_EXP <= lead - power <= _PLAIN_MAX_EXP:
        power = 0  # beyond every prefix: exponent notation in the base unit ("1e-19 s")
    return _join(sign + _decimal(mantissa, exponent - power), _PREFIXES[power], unit)


def format_number(value: Real, digits: int = 4) -> str:
    """`value` rounded to `digits` significant figures, as a plain decimal without prefix.

    No thousands separators, trailing zeros stripped: 2730.667 -> '2731', 0.16666 -> '0.1667'.
    Values below 1e-6 or from 1e21 use exponent notation (1.234e-7) to stay short.
    """
    _check_digits(digits)
    special = _non_finite(value)
    if special is not None:
        return special
    exact = Fraction(value)
    if exact == 0:
        return "0"
    sign = "-" if exact < 0 else ""
    mantissa, exponent = _round_significant(abs(exact), digits)
    return sign + _decimal(mantissa, exponent)


def exact_decimal(value: Fraction) -> str | None:
    """`value` as a finite decimal with every digit ('0.21', '1500', '-0.375'), or None when
    it has none (its reduced denominator has a prime factor other than 2 and 5)."""
    den = value.denominator
    twos = fives = 0
    while den % 2 == 0:
        den //= 2
        twos += 1
    while den % 5 == 0:
        den //= 5
        fives += 1
    if den != 1:
        return None
    places = max(twos, fives)
    digits = str(abs((value * 10**places).numerator)).rjust(places + 1, "0")
    whole, frac = (digits[:-places], digits[-places:].rstrip("0")) if places else (digits, "")
    sign = "-" if value < 0 else ""
    return f"{sign}{whole}.{frac}" if frac else f"{sign}{whole}"


def width_text(value: Fraction) -> str:
    """Bytes per value exactly, as a derivation shows a width: every digit of a finite
    decimal ('0.53125' for MXFP4, '1.000244140625' for FP8 with a scale per 128 x 128
    block), else the fraction ('4097/4096'); rounding would hide what a scale adds."""
    return exact_decimal(value) or f"{value.numerator}/{value.denominator}"


def format_percent(fraction: Real, digits: int = 3) -> str:
    """A fraction as a percentage with `digits` significant figures: 1/2 -> '50%'."""
    special = _non_finite(fraction)
    if special is not None:
        return special + "%"
    return format_number(Fraction(fraction) * 100, digits) + "%"


def _check_digits(digits: int) -> None:
    if digits < 1:
        raise ValueError(f"digits must be at least 1, got {digits}")


def _non_finite(value: Real) -> str | None:
    """'nan', 'inf' or '-inf' for a non-finite float (which has no Fraction), else None."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return None


def _join(number: str, prefix: str, unit: str) -> str:
    return f"{number} {prefix}{unit}" if prefix or unit else number


def _floor3(exponent: int) -> int:
    """The largest multiple of 3 not above `exponent` (engineering notation)."""
    return (exponent // 3) * 3


def _decimal_exponent(x: Fraction) -> int:
    """floor(log10(x)) for x > 0, computed exactly (in integers: a page formats thousands
    of figures, and Fraction arithmetic was most of that)."""
    n, d = x.numerator, x.denominator
    # First guess from bit lengths (off by at most a few), then exact correction steps.
    bits = n.bit_length() - d.bit_length()
    guess = bits * _LOG10_2_NUM // _LOG10_2_DEN
    while not _at_least_pow10(n, d, guess):
        guess -= 1
    while _at_least_pow10(n, d, guess + 1):
        guess += 1
    return guess


def _at_least_pow10(n: int, d: int, exponent: int) -> bool:
    """n / d >= 10**exponent, for n, d > 0."""
    scale: int = 10 ** abs(exponent)
    return n >= d * scale if exponent >= 0 else n * scale >= d


def _round_significant(x: Fraction, digits: int) -> tuple[int, int]:
    """Round x > 0 to `digits` significant figures: (m, e) with x ~= m * 10**e, m > 0.

    Rounds half to even on the exact value. Trailing zeros of m are moved into e.
    """
    exponent = _decimal_exponent(x) - digits + 1
    n, d = x.numerator, x.denominator
    if exponent >= 0:
        d *= 10**exponent
    else:
        n *= 10**-exponent
    mantissa, rest = divmod(n, d)  # x / 10**exponent, rounded half to even below
    if 2 * rest > d or (2 * rest == d and mantissa % 2 == 1):
        mantissa += 1
    if mantissa == 10**digits:  # 9.9996 -> 10.00: one more digit than asked for
        mantissa //= 10
        exponent += 1
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    return mantissa, exponent


def _decimal(mantissa: int, exponent: int) -> str:
    """m * 10**e as a plain decimal string, or in exponent notation when very large or small."""
    digits = str(mantissa)
    lead = exponent + len(digits) - 1
    if lead < _PLAIN_MIN_EXP or lead > _PLAIN_MAX_EXP:
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{body}e{lead}"
    if exponent >= 0:
        return digits + "0" * exponent
    shift = -exponent
    padded = digits.rjust(shift + 1, "0")
    return f"{padded[:-shift]}.{padded[-shift:]}"
