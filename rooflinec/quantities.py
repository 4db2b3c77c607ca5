"""Exact parsing of spec quantities: a decimal number, a space, and a unit with an SI prefix.

Specs write figures the way data sheets print them (`989.5 TFLOP/s`, `3.35 TB/s`, `96 MiB`,
`1.4 ms`, `92%`). This module turns such a string into a `Quantity` whose value is an exact
`Fraction` in SI base units (OP/s, B/s, B, s, OP/B, OP, or a fraction for shares), so that
ridge points and attainable rates computed downstream never inherit binary rounding.

Design choices, each for a reason:

* The number is parsed from its digits straight into a `Fraction`; no float is ever built,
  because `float("3.35") * 1e12` is not 3.35e12.
* Units are never implicit and never guessed: `3.35` alone is an error, and so is a unit of
  the wrong dimension (a bandwidth written in TFLOP/s), each with a hint saying what to write.
* Lower-case `b` (bits) is refused rather than converted: a data sheet in Tb/s is almost
  always a typo for TB/s, and a silent factor of 8 is the worst possible outcome. The one
  exception is a link's bandwidth (`parse_quantity(..., bits=True)`, an interconnect's
  figure), which network vendors print in bits: there `400 Gb/s` is exactly 50 GB/s.
* Large time prefixes (`Ms`, `Gs`) are refused: `1.4 Ms` is one shifted key away from
  `1.4 ms` and would be off by 10**9.
* Input is capped at 64 characters and the exponent at |e| <= 30, checked on the digit string
  before any integer is built, so hostile text is refused in microseconds.
* Every error carries a 0-based column so the caller can point at the offending character
  inside the YAML scalar.
"""

from __future__ import annotations

import enum
import functools
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, NamedTuple

from rooflinec.errors import RooflinecError

__all__ = [
    "MAX_EXPONENT",
    "MAX_LENGTH",
    "Counts",
    "Dimension",
    "Quantity",
    "QuantityError",
    "parse_any",
    "parse_cli_quantity",
    "parse_quantity",
]

MAX_LENGTH = 64
"""Longest quantity text accepted; real figures are far shorter, so longer text is an error."""

MAX_EXPONENT = 30
"""Largest |exponent| in `1.5e3` notation; beyond it the figure cannot be a real spec value."""

Counts = Literal["FLOP", "OP"]


class Dimension(enum.Enum):
    """What a quantity measures; each has one SI base unit that `Quantity.value` is in."""

    RATE = "rate"  # compute rate, OP/s (FLOP/s or integer OP/s)
    BANDWIDTH = "bandwidth"  # B/s
    BYTES = "bytes"  # B: capacities and byte counts
    TIME = "time"  # s
    SHARE = "share"  # dimensionless fraction in (0, 1], written in %
    INTENSITY = "intensity"  # OP/B
    OPS = "ops"  # operation count, OP
    POWER = "power"  # W
    PRICE = "price"  # USD/s (written per hour, USD/h)
    TOKEN_RATE = "token rate"  # tokens/s: a serving result's output or per-user rate
    ENERGY = "energy"  # J per generated token

    @property
    def description(self) -> str:
        """A noun phrase for messages: 'a bandwidth', 'a compute rate'."""
        return _DESCRIPTIONS[self]

    @property
    def example(self) -> str:
        """A realistic quantity of this dimension, shown in messages as what to write."""
        return _EXAMPLES[self]


_DESCRIPTIONS: dict[Dimension, str] = {
    Dimension.RATE: "a compute rate",
    Dimension.BANDWIDTH: "a bandwidth",
    Dimension.BYTES: "a size in bytes",
    Dimension.TIME: "a time",
    Dimension.SHARE: "a share",
    Dimension.INTENSITY: "an arithmetic intensity",
    Dimension.OPS: "an operation count",
    Dimension.POWER: "a power",
    Dimension.PRICE: "a price per hour",
    Dimension.TOKEN_RATE: "a token rate",
    Dimension.ENERGY: "an energy per token",
}

_EXAMPLES: dict[Dimension, str] = {
    Dimension.RATE: "989.5 TFLOP/s",
    Dimension.BANDWIDTH: "3.35 TB/s",
    Dimension.BYTES: "80 GB",
    Dimension.TIME: "1.4 ms",
    Dimension.SHARE: "92%",
    Dimension.INTENSITY: "295.4 FLOP/B",
    Dimension.OPS: "8.6 GFLOP",
    Dimension.POWER: "700 W",
    Dimension.PRICE: "2.99 USD/h",
    Dimension.TOKEN_RATE: "51.67 tokens/s",
    Dimension.ENERGY: "0.45 J/token",
}

# Hints listing what each dimension accepts; shown when a unit is unknown.
_ACCEPTED: dict[Dimension, str] = {
    Dimension.RATE: (
        "a compute rate is written FLOP/s, FLOPS or FLOPs (OP/s, OPS or OPs for integer "
        "work) with a prefix k M G T P E, as in '989.5 TFLOP/s' or '1979 TOPS'"
    ),
    Dimension.BANDWIDTH: (
        "a bandwidth is written B/s or Bps with a decimal prefix k M G T P E or a binary "
        "prefix Ki Mi Gi Ti Pi Ei, as in '3.35 TB/s' or '800 GiBps'"
    ),
    Dimension.BYTES: (
        "a size is written B with a decimal prefix k M G T P E or a binary prefix "
        "Ki Mi Gi Ti Pi Ei, as in '80 GB' or '96 MiB'"
    ),
    Dimension.TIME: "a time is written s, ms, µs (or us), ns or ps, as in '1.4 ms'",
    Dimension.SHARE: "a share is written in per cent, as in '92%'",
    Dimension.INTENSITY: "an arithmetic intensity is written FLOP/B or OP/B, as in '295.4 FLOP/B'",
    Dimension.OPS: "an operation count is written FLOP or OP with a prefix k M G T P E, "
    "as in '8.6 GFLOP'",
    Dimension.POWER: "a power is written W with a prefix k M, as in '700 W' or '1.2 kW'",
    Dimension.PRICE: "a price is written in US dollars per hour, as in '2.99 USD/h'",
    Dimension.TOKEN_RATE: "a token rate is written tokens/s (prefix k M), as in '51.67 tokens/s'",
    Dimension.ENERGY: "an energy per token is written J/token (prefix m k), as in '0.45 J/token'",
}

# What a link's bandwidth accepts, where bits are allowed too.
_ACCEPTED_LINK = (
    "a link's bandwidth is written B/s or Bps (prefix k M G T P E, or Ki Mi Gi Ti Pi Ei), "
    "or in bits b/s or bps (prefix k M G T P E), as in '900 GB/s' or '400 Gb/s'"
)

_ACCEPTED_ANY = (
    "accepted units: rates (TFLOP/s, TOPS), bandwidths (TB/s, GiBps), sizes (GB, MiB), "
    "times (ms, µs), intensities (FLOP/B), operation counts (GFLOP), powers (W), "
    "prices (USD/h), token rates (tokens/s), energies (J/token) and shares (%)"
)


@dataclass(frozen=True)
class Quantity:
    """A parsed quantity.

    `value` is exact and in SI base units (OP/s, B/s, B, s, OP/B, OP; a fraction in (0, 1]
    for shares). `unit` is the unit as written, `counts` says whether the text counted FLOP
    or integer OP (None for dimensions that count no operations), `binary` whether a
    binary prefix (Ki, Mi, ...) was used, and `text` is the original string. `bits` says
    the text was in bits (`400 Gb/s`), which only a link's bandwidth accepts; `value` is
    then in bytes per second all the same.
    """

    value: Fraction
    dimension: Dimension
    unit: str
    counts: Counts | None
    binary: bool
    text: str
    bits: bool = False

    def __str__(self) -> str:
        return self.text


class QuantityError(RooflinecError, ValueError):
    """A quantity string that cannot be read.

    `column` is the 0-based offset into the text where the problem starts, so the loader
    can add it to the scalar's own position. `str(err)` is the message followed by the
    hint, on one line, because diagnostics are rendered one per line.
    """

    def __init__(
        self, message: str, column: int = 0, hint: str | None = None, text: str | None = None
    ) -> None:
        self.message = message
        self.column = column
        self.hint = hint
        self.text = text
        super().__init__(message if hint is None else f"{message}; hint: {hint}")

    def __reduce__(self) -> tuple[type[QuantityError], tuple[str, int, str | None, str | None]]:
        # The default pickling would re-create the error from str(self) alone, losing the column.
        return (type(self), (self.message, self.column, self.hint, self.text))


class _Unit(NamedTuple):
    dimension: Dimension
    factor: Fraction  # multiply the written number by this to get SI base units
    counts: Counts | None
    binary: bool


_DECIMAL: dict[str, int] = {
    "": 1,
    "k": 10**3,
    "K": 10**3,  # "KB" is common on data sheets; K is not otherwise a prefix, so no ambiguity
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
}
_BINARY: dict[str, int] = {
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
}
# Time takes only sub-multiples: large prefixes on seconds are a case typo away from small ones.
_TIME_PREFIXES: dict[str, Fraction] = {
    "": Fraction(1),
    "m": Fraction(1, 10**3),
    "µ": Fraction(1, 10**6),  # U+00B5 MICRO SIGN
    "μ": Fraction(1, 10**6),  # U+03BC GREEK SMALL LETTER MU
    "u": Fraction(1, 10**6),
    "n": Fraction(1, 10**9),
    "p": Fraction(1, 10**12),
}

# Rate spellings. "FLOPs" with a trailing lower-case s is read as a rate, as Google writes
# "459 TFLOPs"; an operation count is written without the s ("8.6 GFLOP"). "/sec" is
# accepted because NVIDIA data sheets print "GB/sec".
_RATE_BASES: dict[str, Counts] = {
    "FLOP/s": "FLOP",
    "FLOPS": "FLOP",
    "FLOPs": "FLOP",
    "FLOP/sec": "FLOP",
    "OP/s": "OP",
    "OPS": "OP",
    "OPs": "OP",
    "OP/sec": "OP",
}
_BANDWIDTH_BASES = ("B/s", "Bps", "B/sec")
_OPS_BASES: dict[str, Counts] = {"FLOP": "FLOP", "OP": "OP"}
_POWER_PREFIXES = ("", "k", "M")  # a chip's or a rack's power; no larger prefix is real
_BIT_BASES = ("b/s", "bps", "bit/s")  # a link's bandwidth only (see `parse_quantity`)
_INTENSITY_BASES: dict[str, Counts] = {"FLOP/B": "FLOP", "OP/B": "OP"}


def _build_units() -> dict[str, _Unit]:
    """Every accepted unit spelling, each mapped to its dimension and exact factor."""
    units: dict[str, _Unit] = {}

    def add(name: str, unit: _Unit) -> None:
        # Two dimensions sharing a spelling would make parse_any ambiguous: fail at import.
        if name in units:
            raise AssertionError(f"unit {name!r} defined twice")
        units[name] = unit

    for prefix, factor in _DECIMAL.items():
        for base, counts in _RATE_BASES.items():
            add(prefix + base, _Unit(Dimension.RATE, Fraction(factor), counts, False))
        for base, counts in _OPS_BASES.items():
            add(prefix + base, _Unit(Dimension.OPS, Fraction(factor), counts, False))
        for base in _BANDWIDTH_BASES:
            add(prefix + base, _Unit(Dimension.BANDWIDTH, Fraction(factor), None, False))
        add(prefix + "B", _Unit(Dimension.BYTES, Fraction(factor), None, False))
    for prefix, factor in _BINARY.items():
        for base in _BANDWIDTH_BASES:
            add(prefix + base, _Unit(Dimension.BANDWIDTH, Fraction(factor), None, True))
        add(prefix + "B", _Unit(Dimension.BYTES, Fraction(factor), None, True))
    for prefix, scale in _TIME_PREFIXES.items():
        add(prefix + "s", _Unit(Dimension.TIME, scale, None, False))
    for base, counts in _INTENSITY_BASES.items():
        add(base, _Unit(Dimension.INTENSITY, Fraction(1), counts, False))
    add("%", _Unit(Dimension.SHARE, Fraction(1, 100), None, False))
    for prefix in _POWER_PREFIXES:
        add(prefix + "W", _Unit(Dimension.POWER, Fraction(_DECIMAL[prefix]), None, False))
    add("USD/h", _Unit(Dimension.PRICE, Fraction(1, 3600), None, False))
    # Serving results: generated tokens per second, and joules per generated token.
    for prefix in ("", "k", "M"):
        scale = Fraction(_DECIMAL[prefix])
        add(prefix + "tokens/s", _Unit(Dimension.TOKEN_RATE, scale, None, False))
    for prefix, scale in (("", Fraction(1)), ("m", Fraction(1, 1000)), ("k", Fraction(1000))):
        add(prefix + "J/token", _Unit(Dimension.ENERGY, scale, None, False))
    return units


_UNITS: dict[str, _Unit] = _build_units()

# Bit rates, exactly an eighth of the byte rate: accepted only where `bits=True` is asked.
_BIT_UNITS: dict[str, _Unit] = {
    prefix + base: _Unit(Dimension.BANDWIDTH, Fraction(factor, 8), None, False)
    for prefix, factor in _DECIMAL.items()
    for base in _BIT_BASES
}

# Upper-cased spelling -> accepted spellings, to suggest the right case for "mB" or "Tflop/s".
_BY_UPPER: dict[str, list[str]] = {}
for _spelling in _UNITS:
    _BY_UPPER.setdefault(_spelling.upper(), []).append(_spelling)
del _spelling

# The number, strictly: ASCII digits only ([0-9], not \d, which matches any Unicode digit),
# thousands groups of three, at most one decimal point with digits on both sides, and an
# optional exponent. The character classes are disjoint, so matching is linear.
_NUMBER = re.compile(
    r"(?P<int>[0-9]+(?:,[0-9]{3})*)(?:\.(?P<frac>[0-9]+))?(?:[eE](?P<exp>[+-]?[0-9]+))?"
)
# Between number and unit: ordinary spaces, and the no-break and thin spaces that text
# copied from a PDF data sheet often carries.
_SPACE = re.compile(r"[ \t\u00a0\u2009\u202f]+")
_SPACE_CHARS = frozenset(" \t\u00a0\u2009\u202f")
_DIGITS = frozenset("0123456789")
_NOT_FINITE = re.compile(r"[+-]?(?:nan|inf(?:inity)?)\b", re.IGNORECASE)
_MINUS_SIGNS = frozenset("-\u2212")  # hyphen-minus and the typographic minus a PDF may contain


def parse_quantity(
    text: object,
    dimension: Dimension,
    *,
    positive: bool = False,
    bits: bool = False,
    measured: bool = False,
) -> Quantity:
    """Parse `text` as a quantity of `dimension`; raise `QuantityError` on any problem.

    Zero parses (value 0) unless `positive` is set; a share must always be in (0, 100] %.
    `bits` (a bandwidth only) also accepts bit rates, `400 Gb/s` being exactly 50 GB/s:
    a link's figure, as network vendors print it; everywhere else bits are refused.
    `measured` (a share only) admits a share above 100 %: a measured collective's rate over
    the wire's (an in-network reduction's bus bandwidth exceeds it), which a lint flags.
    `text` is typed `object` because it comes straight from YAML, where `3.35` is a float.
    """
    link = bits and dimension is Dimension.BANDWIDTH
    if type(text) is str:
        return _parse_text(text, dimension, positive, link, measured)
    return _parse(text, dimension, positive=positive, bits=link, measured=measured)


@functools.lru_cache(maxsize=8192)
def _parse_text(
    text: str, dimension: Dimension, positive: bool, bits: bool, measured: bool
) -> Quantity:
    """`_parse` of spec text, kept: a `Quantity` is immutable, and `serve` rebuilds every
    device from its text on each edit, reading the same few thousand figures again. A
    text that does not parse raises each time (lru_cache keeps no exceptions)."""
    return _parse(text, dimension, positive=positive, bits=bits, measured=measured)


def parse_cli_quantity(text: str, dimension: Dimension) -> Quantity:
    """A quantity typed on the command line, where the space before the unit is optional
    (`500ms`, `2.5USD/h`, as well as `500 ms`); greater than zero. A spec's text keeps the
    space (`parse_quantity`): there it is what tells `1.5 Gb/s` from a typo."""
    body = text.strip()
    if body and len(body) <= MAX_LENGTH:
        try:
            _, pos = _parse_number(body, 0, len(body), dimension.example)
        except QuantityError:
            pos = 0  # `parse_quantity` says what is wrong with the number
        if 0 < pos < len(body) and body[pos] not in _SPACE_CHARS and body[pos] != "%":
            body = f"{body[:pos]} {body[pos:]}"
    return parse_quantity(body, dimension, positive=True)


def parse_any(text: object, *, positive: bool = False) -> Quantity:
    """Parse `text` as a quantity of whatever dimension its unit names."""
    return _parse(text, None, positive=positive)


def _parse(
    text: object,
    expected: Dimension | None,
    *,
    positive: bool,
    bits: bool = False,
    measured: bool = False,
) -> Quantity:
    example = expected.example if expected is not None else _EXAMPLES[Dimension.BANDWIDTH]
    if not isinstance(text, str):
        raise _not_a_string(text, example)
    if len(text) > MAX_LENGTH:
        raise QuantityError(
            f"quantity is too long ({len(text)} characters; at most {MAX_LENGTH})",
            MAX_LENGTH,
            f"write just a number and its unit, as in '{example}'",
            text,
        )
    start = len(text) - len(text.lstrip())
    body = text.strip()
    end = start + len(body)
    if not body:
        raise QuantityError(
            f"empty quantity: expected {_what(expected)} such as '{example}'", 0, None, text
        )

    value, pos = _parse_number(text, start, end, example)

    # The unit: '%' may be attached; anything else needs at least one space before it.
    space = _SPACE.match(text, pos, end)
    if space is not None:
        pos = space.end()
    elif pos == end:
        raise QuantityError(
            f"missing unit: expected {_what(expected)} such as '{example}'",
            pos,
            "units are never implicit: write the unit after the number",
            text,
        )
    elif text[pos] != "%":
        raise _after_number(text, pos, end)

    unit_text = text[pos:end]
    unit = _UNITS.get(unit_text)
    in_bits = bits and unit is None and unit_text in _BIT_UNITS
    if in_bits:
        unit = _BIT_UNITS[unit_text]
    if unit is None:
        raise _unknown_unit(text, pos, unit_text, expected, bits)
    if expected is not None and unit.dimension is not expected:
        raise _mismatch(text, pos, unit_text, unit, expected)

    if unit.dimension is Dimension.SHARE and not (0 < value <= 100 or (measured and value > 0)):
        raise QuantityError(
            f"a sustained share is between 0 and 100 %, got {text[start:end]!r}",
            start,
            "0% would remove the ceiling altogether; leave the figure out instead"
            if value == 0
            else "a device cannot sustain more than its data-sheet figure",
            text,
        )
    if positive and value == 0:
        raise QuantityError(
            f"{unit.dimension.description} must be greater than zero, got {text[start:end]!r}",
            start,
            None,
            text,
        )
    return Quantity(
        value=value * unit.factor,
        dimension=unit.dimension,
        unit=unit_text,
        counts=unit.counts,
        binary=unit.binary,
        text=text,
        bits=in_bits,
    )


def _what(expected: Dimension | None) -> str:
    return expected.description if expected is not None else "a number with a unit"


def _not_a_string(value: object, example: str) -> QuantityError:
    hint: str | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        # YAML reads `3.35` as a float: say so, since the spec author wrote no quotes wrong.
        hint = f"YAML read {value!r} as a bare number; units are never implicit"
    elif value is not None:
        hint = f"got {type(value).__name__}"
    return QuantityError(f"expected a string with a unit, like '{example}'", 0, hint, None)


def _parse_number(text: str, start: int, end: int, example: str) -> tuple[Fraction, int]:
    """Read the number at `start`; return its exact value and the offset just after it."""
    first = text[start]
    if first not in _DIGITS:
        raise _not_a_number(text, start, end, example)
    match = _NUMBER.match(text, start, end)
    if match is None:  # pragma: no cover - a leading digit always matches
        raise QuantityError("expected a number", start, None, text)
    int_part, frac, exp = match.group("int", "frac", "exp")

    if "," in int_part:
        groups = int_part.split(",")
        if len(groups[0]) > 3:
            raise QuantityError(
                "misplaced thousands separator: commas group digits by three, as in '1,979'",
                start + len(groups[0]),
                None,
                text,
            )
        if groups[0].startswith("0"):
            # "0,500" is a decimal comma, not a thousands separator.
            raise QuantityError(
                "a number with thousands separators cannot start with 0",
                start,
                "the decimal point is written '.', as in '0.5'",
                text,
            )

    if len(int_part) > 1 and int_part.startswith("0") and "," not in int_part:
        # As in the loader's integers: `040` is 32 to anyone who reads it as octal.
        raise QuantityError(
            f"the number {int_part!r} has a leading zero",
            start,
            f"write {int_part.lstrip('0') or '0'}, without it",
            text,
        )

    exponent = 0
    if exp is not None:
        exp_digits = exp.lstrip("+-").lstrip("0")
        # Check the digit string before int(): "1e999999999" must cost nothing to refuse.
        if len(exp_digits) > 2 or int(exp_digits or "0") > MAX_EXPONENT:
            raise QuantityError(
                f"exponent out of range: at most e+{MAX_EXPONENT} and at least e-{MAX_EXPONENT}",
                match.start("exp") - 1,
                f"use a unit prefix instead, as in '{example}'",
                text,
            )
        exponent = -int(exp_digits or "0") if exp.startswith("-") else int(exp_digits or "0")

    frac = frac or ""
    mantissa = int(int_part.replace(",", "") + frac)
    scale = exponent - len(frac)
    value = Fraction(mantissa * 10**scale) if scale >= 0 else Fraction(mantissa, 10**-scale)

    pos = match.end()
    if pos < end:
        _check_number_end(text, pos, end, frac != "", exp is not None, int_part)
    return value, pos


def _check_number_end(
    text: str, pos: int, end: int, has_frac: bool, has_exp: bool, int_part: str
) -> None:
    """Diagnose a character glued to the number that cannot start a unit (`1.2.3`, `1_000`)."""
    char = text[pos]
    nxt = text[pos + 1] if pos + 1 < end else ""
    if char in _DIGITS or char == ",":
        raise QuantityError(
            "misplaced thousands separator: commas group digits by three, as in '1,979'",
            pos,
            None,
            text,
        )
    if char == ".":
        if has_exp:
            message = "the exponent must be a whole number"
        elif has_frac:
            message = "a number has at most one decimal point"
        else:
            message = "digits must follow the decimal point"
        raise QuantityError(message, pos, None, text)
    if char == "_":
        raise QuantityError(
            "underscores are not accepted in numbers",
            pos,
            "write 1000 or 1,000",
            text,
        )
    if char in "xXoO" and int_part == "0" and not has_frac and not has_exp:
        raise QuantityError("only decimal numbers are accepted", pos - 1, None, text)
    if char in "eE" and not has_exp and (nxt == "" or nxt in "+-" or nxt in _SPACE_CHARS):
        raise QuantityError(
            "the exponent needs digits, as in '1.5e3'",
            pos,
            None,
            text,
        )


def _not_a_number(text: str, start: int, end: int, example: str) -> QuantityError:
    """The text does not start with a digit: say what it starts with instead."""
    first = text[start]
    if _NOT_FINITE.match(text, start, end):
        return QuantityError(
            "expected a finite number: NaN and infinity are not quantities", start, None, text
        )
    if first in _MINUS_SIGNS:
        return QuantityError(
            "negative numbers are not accepted: a quantity is never negative", start, None, text
        )
    if first == "+":
        return QuantityError(
            "write the number without a '+' sign", start, f"as in '{example}'", text
        )
    if first == "." and start + 1 < end and text[start + 1] in _DIGITS:
        return QuantityError(
            "write a leading zero before the decimal point, as in '0.5'", start, None, text
        )
    if first.isalpha() or first in "%/":
        return QuantityError(
            f"missing number: expected a number before the unit, as in '{example}'",
            start,
            None,
            text,
        )
    return QuantityError(f"expected a number, got {first!r}", start, f"as in '{example}'", text)


def _after_number(text: str, pos: int, end: int) -> QuantityError:
    """A unit glued to the number (`3.35TB/s`) or a stray character after it."""
    char = text[pos]
    if char.isalpha():
        fixed = f"{text[:pos].strip()} {text[pos:end]}"
        return QuantityError(
            "missing space between the number and the unit",
            pos,
            f"write '{fixed}'",
            text,
        )
    return QuantityError(f"unexpected character {char!r} after the number", pos, None, text)


def _unknown_unit(
    text: str, pos: int, unit_text: str, expected: Dimension | None, bits: bool = False
) -> QuantityError:
    """An unknown unit; the hint names the likely intended unit when there is one."""
    # Trailing words ("3.35 TB/s peak") or spaces inside the unit ("TB / s").
    if any(c in _SPACE_CHARS for c in unit_text):
        joined = "".join(c for c in unit_text if c not in _SPACE_CHARS)
        if joined in _UNITS:
            return QuantityError(
                f"unknown unit {unit_text!r}",
                pos,
                f"write the unit without spaces: '{joined}'",
                text,
            )
        head = _SPACE.split(unit_text, maxsplit=1)[0]
        if head in _UNITS:
            extra = pos + len(head)
            space = _SPACE.match(text, extra)
            extra = space.end() if space is not None else extra
            return QuantityError(
                f"unexpected text after the unit: {text[extra:].strip()!r}",
                extra,
                "a quantity is just a number and its unit; put remarks in a 'note'",
                text,
            )
    message = f"unknown unit {unit_text!r}"
    # Bits: refuse, never convert (see the module docstring).
    if "b" in unit_text and unit_text.replace("b", "B") in _UNITS:
        return QuantityError(
            message,
            pos,
            f"bytes are written B; b would be bits, which only an interconnect's bandwidth"
            f" accepts (did you mean '{unit_text.replace('b', 'B')}'?)",
            text,
        )
    candidates = [
        name
        for name in _BY_UPPER.get(unit_text.upper(), [])
        if expected is None or _UNITS[name].dimension is expected
    ]
    if candidates:
        listed = " or ".join(f"'{name}'" for name in candidates)
        return QuantityError(
            message, pos, f"units are case-sensitive: did you mean {listed}?", text
        )
    if bits:
        return QuantityError(message, pos, _ACCEPTED_LINK, text)
    hint = _ACCEPTED[expected] if expected is not None else _ACCEPTED_ANY
    return QuantityError(message, pos, hint, text)


def _mismatch(
    text: str, pos: int, unit_text: str, unit: _Unit, expected: Dimension
) -> QuantityError:
    """A known unit of the wrong dimension; suggest the nearest unit of the right one."""
    message = (
        f"expected {expected.description} such as '{expected.example}', "
        f"got {unit.dimension.description} in '{unit_text}'"
    )
    hint: str | None = None
    if unit_text.endswith("FLOPs") and expected is Dimension.OPS:
        hint = (
            f"'{unit_text}' is read as a rate (per second); "
            f"an operation count is written '{unit_text[:-1]}'"
        )
    else:
        for candidate in (
            unit_text + "/s",
            unit_text.removesuffix("/s"),
            unit_text.removesuffix("ps"),
            unit_text.removesuffix("S"),
        ):
            found = _UNITS.get(candidate)
            if candidate != unit_text and found is not None and found.dimension is expected:
                hint = f"did you mean '{candidate}'?"
                break
        else:
            hint = _ACCEPTED[expected]
    return QuantityError(message, pos, hint, text)
