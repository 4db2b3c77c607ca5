"""Tests of rooflinec.quantities: exact values, units, dimensions and every error path."""

from __future__ import annotations

import pickle
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rooflinec.errors import RooflinecError
from rooflinec.formatting import format_percent, format_si
from rooflinec.quantities import (
    MAX_LENGTH,
    Dimension,
    Quantity,
    QuantityError,
    parse_any,
    parse_quantity,
)

# --- values --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "dimension", "expected"),
    [
        ("989.5 TFLOP/s", Dimension.RATE, Fraction(989_500_000_000_000)),
        ("1979 TOPS", Dimension.RATE, Fraction(1_979_000_000_000_000)),
        ("1,979 TFLOP/s", Dimension.RATE, Fraction(1_979_000_000_000_000)),
        ("2.5 PFLOPS", Dimension.RATE, Fraction(2_500_000_000_000_000)),
        ("9 POPS", Dimension.RATE, Fraction(9 * 10**15)),
        ("459 TFLOPs", Dimension.RATE, Fraction(459 * 10**12)),
        ("3958 TOPs", Dimension.RATE, Fraction(3958 * 10**12)),
        ("67 TFLOP/sec", Dimension.RATE, Fraction(67 * 10**12)),
        ("3.35 TB/s", Dimension.BANDWIDTH, Fraction(3_350_000_000_000)),
        ("2765 GB/s", Dimension.BANDWIDTH, Fraction(2_765_000_000_000)),
        ("2765 GBps", Dimension.BANDWIDTH, Fraction(2_765_000_000_000)),
        ("3.35 TB/sec", Dimension.BANDWIDTH, Fraction(3_350_000_000_000)),
        ("800 GiBps", Dimension.BANDWIDTH, Fraction(800 * 2**30)),
        ("1.5e3 GB/s", Dimension.BANDWIDTH, Fraction(1_500_000_000_000)),
        ("80 GB", Dimension.BYTES, Fraction(80_000_000_000)),
        ("96 MiB", Dimension.BYTES, Fraction(96 * 2**20)),
        ("1 kB", Dimension.BYTES, Fraction(1000)),
        ("1 KB", Dimension.BYTES, Fraction(1000)),
        ("1 KiB", Dimension.BYTES, Fraction(1024)),
        ("1.4 ms", Dimension.TIME, Fraction(7, 5000)),
        ("12 µs", Dimension.TIME, Fraction(12, 10**6)),
        ("12 μs", Dimension.TIME, Fraction(12, 10**6)),
        ("12 us", Dimension.TIME, Fraction(12, 10**6)),
        ("3 ns", Dimension.TIME, Fraction(3, 10**9)),
        ("250 ps", Dimension.TIME, Fraction(1, 4 * 10**9)),
        ("2 s", Dimension.TIME, Fraction(2)),
        ("92%", Dimension.SHARE, Fraction(23, 25)),
        ("92 %", Dimension.SHARE, Fraction(23, 25)),
        ("100%", Dimension.SHARE, Fraction(1)),
        ("0.5%", Dimension.SHARE, Fraction(1, 200)),
        ("295.373 FLOP/B", Dimension.INTENSITY, Fraction(295_373, 1000)),
        ("2 OP/B", Dimension.INTENSITY, Fraction(2)),
        ("8.6 GFLOP", Dimension.OPS, Fraction(8_600_000_000)),
        ("12 TOP", Dimension.OPS, Fraction(12 * 10**12)),
    ],
)
def test_parse_quantity_values(text: str, dimension: Dimension, expected: Fraction) -> None:
    """Each spelling of the spec language parses to its exact value in SI base units."""
    quantity = parse_quantity(text, dimension)
    assert expected == quantity.value
    assert dimension == quantity.dimension
    assert isinstance(quantity.value, Fraction)


def test_value_is_exact_not_float() -> None:
    """3.35 TB/s is exactly 3.35e12, which float arithmetic (3.35 * 1e12) does not give."""
    assert Fraction(3_350_000_000_000) == parse_quantity("3.35 TB/s", Dimension.BANDWIDTH).value
    assert Fraction(1, 10) == parse_quantity("0.1 s", Dimension.TIME).value


def test_quantity_fields() -> None:
    """A Quantity records the unit as written, what it counts, binary prefixes and the text."""
    expected = Quantity(
        value=Fraction(1_979_000_000_000_000),
        dimension=Dimension.RATE,
        unit="TOPS",
        counts="OP",
        binary=False,
        text="1979 TOPS",
    )
    assert expected == parse_quantity("1979 TOPS", Dimension.RATE)
    assert expected.text == str(parse_any("1979 TOPS"))


@pytest.mark.parametrize(
    ("text", "counts"),
    [
        ("989.5 TFLOP/s", "FLOP"),
        ("459 TFLOPs", "FLOP"),
        ("1979 TOPS", "OP"),
        ("9 POPS", "OP"),
        ("4 OP/s", "OP"),
        ("295 FLOP/B", "FLOP"),
        ("295 OP/B", "OP"),
        ("8.6 GFLOP", "FLOP"),
        ("8.6 GOP", "OP"),
        ("3.35 TB/s", None),
        ("80 GB", None),
        ("1.4 ms", None),
        ("92%", None),
    ],
)
def test_counts(text: str, counts: str | None) -> None:
    """Rates, intensities and counts say whether the text counted FLOP or integer OP."""
    assert counts == parse_any(text).counts


@pytest.mark.parametrize(
    ("text", "binary"),
    [("96 MiB", True), ("800 GiBps", True), ("1 EiB", True), ("96 MB", False), ("3 TB/s", False)],
)
def test_binary_flag(text: str, binary: bool) -> None:
    """The binary flag is set exactly when a Ki/Mi/Gi.. prefix was used."""
    assert binary == parse_any(text).binary


@pytest.mark.parametrize(
    ("text", "dimension", "unit"),
    [
        ("989.5 TFLOP/s", Dimension.RATE, "TFLOP/s"),
        ("3.35 TB/s", Dimension.BANDWIDTH, "TB/s"),
        ("80 GB", Dimension.BYTES, "GB"),
        ("1.4 ms", Dimension.TIME, "ms"),
        ("92%", Dimension.SHARE, "%"),
        ("295 FLOP/B", Dimension.INTENSITY, "FLOP/B"),
        ("8.6 GFLOP", Dimension.OPS, "GFLOP"),
        ("  3.35 TB/s  ", Dimension.BANDWIDTH, "TB/s"),
    ],
)
def test_parse_any_infers_dimension(text: str, dimension: Dimension, unit: str) -> None:
    """parse_any reads the dimension off the unit, and keeps the unit as written."""
    quantity = parse_any(text)
    assert dimension == quantity.dimension
    assert unit == quantity.unit


def test_zero_parses_unless_positive() -> None:
    """Zero is a valid value; positive=True refuses it with 'must be greater than zero'."""
    assert Fraction(0) == parse_quantity("0 TB/s", Dimension.BANDWIDTH).value
    with pytest.raises(QuantityError) as info:
        parse_quantity("0 TB/s", Dimension.BANDWIDTH, positive=True)
    expected = "a bandwidth must be greater than zero, got '0 TB/s'"
    assert expected == info.value.message
    with pytest.raises(QuantityError):
        parse_any("0.0e5 s", positive=True)


def test_exponent_limits() -> None:
    """Exponents up to |30| are accepted, with leading zeros and signs."""
    assert Fraction(10**30) == parse_any("1e30 B").value
    assert Fraction(1, 10**30) == parse_any("1e-30 s").value
    assert Fraction(1000) == parse_any("1E+003 B").value


@pytest.mark.parametrize(
    "text", ["3.35\u00a0TB/s", "3.35\u202fTB/s", "3.35   TB/s", "3.35\tTB/s", " 3.35 TB/s\n"]
)
def test_spaces(text: str) -> None:
    """Several spaces, tabs and the no-break spaces of PDF data sheets separate number and unit."""
    assert Fraction(3_350_000_000_000) == parse_quantity(text, Dimension.BANDWIDTH).value


def test_every_dimension_example_parses() -> None:
    """The examples quoted in error messages are themselves valid quantities of their dimension."""
    for dimension in Dimension:
        assert dimension == parse_quantity(dimension.example, dimension).dimension


# --- errors --------------------------------------------------------------------------------


def _error(text: object, dimension: Dimension | None = None) -> QuantityError:
    """The QuantityError that parsing `text` raises (fails the test if none)."""
    with pytest.raises(QuantityError) as info:
        if dimension is None:
            parse_any(text)
        else:
            parse_quantity(text, dimension)
    return info.value


def test_error_types_and_str() -> None:
    """QuantityError is a ValueError and a RooflinecError; str() is the message plus the hint."""
    error = _error("3.35 Tb/s", Dimension.BANDWIDTH)
    assert isinstance(error, ValueError)
    assert isinstance(error, RooflinecError)
    assert f"{error.message}; hint: {error.hint}" == str(error)
    plain = _error("-1 TB/s")
    assert plain.hint is None
    assert plain.message == str(plain)


def test_error_pickles_with_its_column() -> None:
    """A pickled error (e.g. from a worker process) keeps its column and hint."""
    error = _error("3.35 Tb/s")
    copy = pickle.loads(pickle.dumps(error))
    assert (error.message, error.column, error.hint, error.text) == (
        copy.message,
        copy.column,
        copy.hint,
        copy.text,
    )


def test_mismatch_rate_for_bandwidth() -> None:
    """A bandwidth in TFLOP/s says what was expected (with an example) and what was found."""
    error = _error("3.35 TFLOP/s", Dimension.BANDWIDTH)
    expected = ("expected a bandwidth such as '3.35 TB/s', got a compute rate in 'TFLOP/s'", 5)
    assert expected == (error.message, error.column)


@pytest.mark.parametrize(
    ("text", "dimension", "hint"),
    [
        ("80 GB", Dimension.BANDWIDTH, "did you mean 'GB/s'?"),
        ("2765 GBps", Dimension.BYTES, "did you mean 'GB'?"),
        ("3.35 TB/s", Dimension.BYTES, "did you mean 'TB'?"),
        ("8.6 GFLOP", Dimension.RATE, "did you mean 'GFLOP/s'?"),
        ("989 TFLOP/s", Dimension.OPS, "did you mean 'TFLOP'?"),
        ("2.5 PFLOPS", Dimension.OPS, "did you mean 'PFLOP'?"),
        (
            "8.6 GFLOPs",
            Dimension.OPS,
            "'GFLOPs' is read as a rate (per second); an operation count is written 'GFLOP'",
        ),
    ],
)
def test_mismatch_hints(text: str, dimension: Dimension, hint: str) -> None:
    """A unit of the wrong dimension suggests the nearest unit of the right one."""
    assert hint == _error(text, dimension).hint


def test_mismatch_without_near_unit_lists_accepted_units() -> None:
    """A mismatch with no near spelling lists the units the dimension accepts."""
    error = _error("1.4 ms", Dimension.INTENSITY)
    expected = "expected an arithmetic intensity such as '295.4 FLOP/B', got a time in 'ms'"
    assert expected == error.message
    assert error.hint is not None and "FLOP/B or OP/B" in error.hint


def test_bits_refused() -> None:
    """Lower-case b is bits: refused with a hint, never converted by a factor of 8."""
    error = _error("3.35 Tb/s", Dimension.BANDWIDTH)
    expected = ("unknown unit 'Tb/s'", 5)
    assert expected == (error.message, error.column)
    assert error.hint is not None
    assert error.hint.startswith("bytes are written B; b would be bits")
    assert "'TB/s'" in error.hint
    assert _error("100 Gbps").hint is not None
    assert _error("8 Mb", Dimension.BYTES).hint is not None


@pytest.mark.parametrize(
    ("text", "dimension", "hint"),
    [
        ("3 mB", Dimension.BYTES, "units are case-sensitive: did you mean 'MB'?"),
        ("1.4 Ms", Dimension.TIME, "units are case-sensitive: did you mean 'ms'?"),
        ("989 Tflop/s", Dimension.RATE, "units are case-sensitive: did you mean 'TFLOP/s'?"),
        ("96 MIB", Dimension.BYTES, "units are case-sensitive: did you mean 'MiB'?"),
    ],
)
def test_case_hints(text: str, dimension: Dimension, hint: str) -> None:
    """A unit in the wrong case is refused, and the hint gives the right case."""
    error = _error(text, dimension)
    assert error.message.startswith("unknown unit")
    assert hint == error.hint


def test_unknown_unit_lists_accepted_units() -> None:
    """An unknown unit names itself; the hint lists what the expected dimension accepts."""
    error = _error("3.35 TB/day", Dimension.BANDWIDTH)
    expected = ("unknown unit 'TB/day'", 5)
    assert expected == (error.message, error.column)
    assert error.hint is not None and "B/s or Bps" in error.hint
    assert "accepted units" in str(_error("3.35 furlongs"))


def test_large_time_prefixes_refused() -> None:
    """Ms, Gs and ks are refused: 'Ms' is one shifted key from 'ms' and 10**9 off."""
    for text in ("1 Ms", "1 Gs", "1 ks", "1 Ts"):
        assert _error(text, Dimension.TIME).message.startswith("unknown unit")


def test_binary_prefix_only_on_bytes() -> None:
    """Binary prefixes belong to bytes and bandwidths: 'TiFLOP/s' is unknown."""
    expected = "unknown unit 'TiFLOP/s'"
    assert expected == _error("1 TiFLOP/s", Dimension.RATE).message


def test_spaces_inside_unit() -> None:
    """Spaces inside a unit are refused with the unit written without them."""
    error = _error("3.35 TB / s", Dimension.BANDWIDTH)
    expected = "write the unit without spaces: 'TB/s'"
    assert expected == error.hint


def test_text_after_unit() -> None:
    """Words after the unit are refused, pointing at the first extra word."""
    error = _error("3.35 TB/s peak", Dimension.BANDWIDTH)
    expected = ("unexpected text after the unit: 'peak'", 10)
    assert expected == (error.message, error.column)


@pytest.mark.parametrize(
    ("text", "dimension", "message"),
    [
        ("3.35", Dimension.BANDWIDTH, "missing unit: expected a bandwidth such as '3.35 TB/s'"),
        ("989", Dimension.RATE, "missing unit: expected a compute rate such as '989.5 TFLOP/s'"),
        ("1.4", Dimension.TIME, "missing unit: expected a time such as '1.4 ms'"),
        ("92", Dimension.SHARE, "missing unit: expected a share such as '92%'"),
    ],
)
def test_missing_unit(text: str, dimension: Dimension, message: str) -> None:
    """A bare number is refused: units are never implicit."""
    error = _error(text, dimension)
    assert message == error.message
    assert len(text) == error.column


def test_missing_unit_any() -> None:
    """parse_any refuses a bare number too."""
    assert _error("3.35").message.startswith("missing unit")


@pytest.mark.parametrize("value", [3.35, 80, 0, True, None, Fraction(1, 2), ["3 TB/s"]])
def test_non_string_input(value: object) -> None:
    """A YAML number (or anything not a string) is refused with an example to follow."""
    error = _error(value, Dimension.BANDWIDTH)
    expected = ("expected a string with a unit, like '3.35 TB/s'", 0)
    assert expected == (error.message, error.column)


def test_non_string_hint_names_yaml_number() -> None:
    """A float from YAML gets a hint saying YAML read it as a bare number."""
    expected = "YAML read 3.35 as a bare number; units are never implicit"
    assert expected == _error(3.35).hint


def test_absurd_exponent_refused() -> None:
    """1e999999999 TB/s is refused (before any huge integer is built), pointing at the 'e'."""
    error = _error("1e999999999 TB/s", Dimension.BANDWIDTH)
    assert error.message.startswith("exponent out of range")
    assert error.column == 1  # the 'e'
    assert _error("1e31 B").message.startswith("exponent out of range")
    assert _error("1e-31 s").message.startswith("exponent out of range")
    assert _error("1e-0000000000000000000000000000000000000000000000000099 s").message.startswith(
        "exponent out of range"
    )


@pytest.mark.parametrize("text", ["nan TB/s", "NaN", "inf TB/s", "Infinity B", "-inf s", "+nan %"])
def test_not_finite_refused(text: str) -> None:
    """NaN and infinity are refused as not finite."""
    assert _error(text).message.startswith("expected a finite number")


@pytest.mark.parametrize("text", ["-3.35 TB/s", "\u22123.35 TB/s", "-0 s"])
def test_negative_refused(text: str) -> None:
    """Negative numbers (with either minus sign) are refused."""
    error = _error(text)
    assert error.message.startswith("negative numbers are not accepted")
    assert error.column == 0


@pytest.mark.parametrize("text", ["120%", "100.01 %", "0%", "0.0 %"])
def test_share_range(text: str) -> None:
    """A share must be in (0, 100] %; 0% and more than 100% are refused."""
    error = _error(text, Dimension.SHARE)
    assert error.message.startswith("a sustained share is between 0 and 100 %")
    assert _error(text).message.startswith("a sustained share is between 0 and 100 %")


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        ("", "empty quantity: expected a bandwidth such as '3.35 TB/s'", 0),
        ("   ", "empty quantity: expected a bandwidth such as '3.35 TB/s'", 0),
        ("TB/s", "missing number: expected a number before the unit, as in '3.35 TB/s'", 0),
        ("1.2.3 TB/s", "a number has at most one decimal point", 3),
        ("5. TB/s", "digits must follow the decimal point", 1),
        ("5.e3 TB/s", "digits must follow the decimal point", 1),
        (".5 TB/s", "write a leading zero before the decimal point, as in '0.5'", 0),
        ("1e3.5 TB/s", "the exponent must be a whole number", 3),
        ("1e TB/s", "the exponent needs digits, as in '1.5e3'", 1),
        ("1e+ TB/s", "the exponent needs digits, as in '1.5e3'", 1),
        ("1_000 GB/s", "underscores are not accepted in numbers", 1),
        ("0x10 TB/s", "only decimal numbers are accepted", 0),
        ("+3 TB/s", "write the number without a '+' sign", 0),
        ("3.35TB/s", "missing space between the number and the unit", 4),
        ("3.35 TB/s!", "unknown unit 'TB/s!'", 5),
        ("3.35#TB/s", "unexpected character '#' after the number", 4),
        ("#3 TB/s", "expected a number, got '#'", 0),
        ("٣ TB/s", "expected a number, got '٣'", 0),
    ],
)
def test_number_errors(text: str, message: str, column: int) -> None:
    """Malformed numbers are refused with a precise message and the column of the problem."""
    error = _error(text, Dimension.BANDWIDTH)
    assert message == error.message
    assert column == error.column


def test_glued_unit_hint() -> None:
    """A unit glued to the number gets the corrected text as hint."""
    expected = "write '3.35 TB/s'"
    assert expected == _error("3.35TB/s").hint


@pytest.mark.parametrize(
    ("text", "column"),
    [("1,00 TB/s", 1), ("1,0000 TB/s", 5), ("1234,567 TB/s", 4), ("1, TB/s", 1), ("1.5,000 B", 3)],
)
def test_thousands_separators_must_group_by_three(text: str, column: int) -> None:
    """Commas must group digits by three, as in 1,979."""
    error = _error(text)
    assert error.message.startswith("misplaced thousands separator")
    assert column == error.column


def test_decimal_comma_refused() -> None:
    """'0,500' is a decimal comma, not a thousands separator: refused."""
    error = _error("0,500 TB/s")
    expected = "a number with thousands separators cannot start with 0"
    assert expected == error.message


def test_well_formed_thousands() -> None:
    """Well-formed groups are accepted, with a fraction after them."""
    assert Fraction(1_234_567_500) == parse_any("1,234,567.5 kB").value


def test_length_cap() -> None:
    """Text longer than 64 characters is refused outright."""
    error = _error("1" * 60 + " TB/s")
    assert error.message.startswith("quantity is too long (65 characters; at most 64)")
    assert error.column == MAX_LENGTH
    assert Fraction(10**56) == parse_any("1" + "0" * 56 + " B/s").value


@pytest.mark.parametrize(
    "text",
    [
        "1" * 64,
        "1," * 32,
        "1,000" * 12 + "1,00",
        "9" * 30 + "e" + "9" * 33,
        "1e" + "0" * 61 + "5",
        "." * 64,
        "1 " + "B" * 62,
        "1" + "\u00a0" * 62 + "B",
        "1" + " " * 62 + "%",
    ],
)
def test_hostile_text_refused(text: str) -> None:
    """Pathological 64-character strings are refused, never hang or crash."""
    assert len(text) <= MAX_LENGTH
    _error(text, Dimension.BANDWIDTH)


def test_share_is_fraction() -> None:
    """A share's value is the fraction (0..1), not the per-cent number."""
    assert Fraction(1, 2) == parse_quantity("50%", Dimension.SHARE).value


# --- properties ----------------------------------------------------------------------------

_BASE_UNITS: dict[Dimension, str] = {
    Dimension.RATE: "FLOP/s",
    Dimension.BANDWIDTH: "B/s",
    Dimension.BYTES: "B",
    Dimension.TIME: "s",
    Dimension.INTENSITY: "FLOP/B",
    Dimension.OPS: "FLOP",
}

_decimal_fractions = st.builds(
    lambda mantissa, exponent: Fraction(mantissa) * Fraction(10) ** exponent,
    st.integers(min_value=0, max_value=9999),
    st.integers(min_value=-24, max_value=24),
)


@given(value=_decimal_fractions, dimension=st.sampled_from(sorted(_BASE_UNITS, key=str)))
def test_round_trip_format_si(value: Fraction, dimension: Dimension) -> None:
    """format_si of a decimal value parses back to exactly that value, in every dimension."""
    text = format_si(value, _BASE_UNITS[dimension], digits=4)
    assert value == parse_quantity(text, dimension).value


@given(
    value=st.builds(
        lambda mantissa, exponent: Fraction(mantissa) * Fraction(10) ** exponent,
        st.integers(min_value=1, max_value=9999),
        st.integers(min_value=-12, max_value=-4),
    )
)
def test_round_trip_format_percent(value: Fraction) -> None:
    """format_percent of a share in (0, 1] parses back to exactly that share."""
    text = format_percent(value, digits=4)
    assert value == parse_quantity(text, Dimension.SHARE).value


_PREFIXES = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}


@given(
    whole=st.integers(min_value=0, max_value=10**15),
    frac=st.text(alphabet="0123456789", max_size=6),
    prefix=st.sampled_from(sorted(_PREFIXES)),
    base=st.sampled_from(["FLOP/s", "OPS", "B/s", "Bps", "B", "FLOP"]),
    commas=st.booleans(),
)
def test_constructed_quantities(
    whole: int, frac: str, prefix: str, base: str, commas: bool
) -> None:
    """Any well-formed number (with or without thousands groups) and prefix parses exactly."""
    number = f"{whole:,}" if commas else str(whole)
    if frac:
        number += "." + frac
    expected = Fraction(int(str(whole) + frac), 10 ** len(frac)) * _PREFIXES[prefix]
    assert expected == parse_any(f"{number} {prefix}{base}").value


@given(text=st.text(max_size=80), dimension=st.none() | st.sampled_from(list(Dimension)))
def test_arbitrary_text_raises_only_quantity_error(text: str, dimension: Dimension | None) -> None:
    """Arbitrary text either parses or raises QuantityError, never anything else."""
    try:
        quantity = parse_any(text) if dimension is None else parse_quantity(text, dimension)
    except QuantityError as error:
        assert 0 <= error.column <= MAX_LENGTH
    else:
        assert quantity.value >= 0


@given(
    text=st.from_regex(
        r"[-+ ]?[0-9,._eE+\-]{0,20}[ %]{0,2}[kKMGTPEiumnpµ]{0,2}(FLOP|OP|B|b|s)?(/s|/B|ps|S|s)?",
        fullmatch=True,
    ),
    dimension=st.none() | st.sampled_from(list(Dimension)),
)
def test_near_valid_text_raises_only_quantity_error(text: str, dimension: Dimension | None) -> None:
    """Text near the grammar reaches the deep error paths and still raises only QuantityError."""
    try:
        quantity = parse_any(text) if dimension is None else parse_quantity(text, dimension)
    except QuantityError as error:
        assert error.message
    else:
        assert quantity.value >= 0
