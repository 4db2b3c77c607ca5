"""Tests of rooflinec.formatting: SI prefixes, significant figures and exact rounding."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rooflinec.formatting import format_number, format_percent, format_si


@pytest.mark.parametrize(
    ("value", "unit", "expected"),
    [
        (Fraction(9895, 10) * 10**12, "FLOP/s", "989.5 TFLOP/s"),
        (Fraction(1002, 100) / 10**6, "s", "10.02 µs"),
        (Fraction(9995, 10000), "FLOP/B", "0.9995 FLOP/B"),
        (0, "s", "0 s"),
        (Fraction(0), "FLOP/s", "0 FLOP/s"),
        (Fraction(7, 5000), "s", "1.4 ms"),
        (Fraction(3, 10**9), "s", "3 ns"),
        (Fraction(250, 10**12), "s", "250 ps"),
        (Fraction(3), "s", "3 s"),
        (3600, "s", "3600 s"),
        (3_350_000_000_000, "B/s", "3.35 TB/s"),
        (80_000_000_000, "B", "80 GB"),
        (96 * 2**20, "B", "100.7 MB"),
        (1_979_000_000_000_000, "OP/s", "1.979 POP/s"),
        (Fraction(8_600_000_000), "FLOP", "8.6 GFLOP"),
        (Fraction(2953731, 10000), "FLOP/B", "295.4 FLOP/B"),
        (1500, "FLOP/B", "1500 FLOP/B"),
        (Fraction(1, 2), "FLOP/s", "0.5 FLOP/s"),
        (Fraction(1234, 10**7), "FLOP/B", "0.0001234 FLOP/B"),
        (10**21, "FLOP/s", "1000 EFLOP/s"),
        (10**40, "FLOP/s", "1e40 FLOP/s"),
        (Fraction(1, 10**19), "s", "1e-19 s"),
        (Fraction(1, 10**15), "s", "0.001 ps"),
        (Fraction(1, 10**8), "FLOP/B", "1e-8 FLOP/B"),
        (-3_350_000_000_000, "B/s", "-3.35 TB/s"),
        (Fraction(5, 2), "", "2.5"),
        (2_500_000, "", "2500000"),
        (2_500_000, "W", "2.5 MW"),
    ],
)
def test_format_si(value: Fraction | int, unit: str, expected: str) -> None:
    """Engineering prefixes keep the mantissa in [1, 1000), by unit family."""
    assert expected == format_si(value, unit)


@pytest.mark.parametrize(
    ("value", "unit", "expected"),
    [
        (Fraction(99996, 100) * 10**12, "FLOP/s", "1 PFLOP/s"),
        (Fraction(99996, 10**8), "s", "1 ms"),
        (Fraction(99996, 100), "s", "1000 s"),
    ],
)
def test_format_si_carry_moves_prefix(value: Fraction, unit: str, expected: str) -> None:
    """Rounding 999.96 T up to 1000 T moves to the next prefix: 1 P, not 1000 T."""
    assert expected == format_si(value, unit)


@pytest.mark.parametrize(
    ("value", "digits", "expected"),
    [
        (Fraction(9895, 10) * 10**12, 6, "989.5 TFLOP/s"),
        (Fraction(9895, 10) * 10**12, 3, "990 TFLOP/s"),
        (Fraction(9885, 10) * 10**12, 3, "988 TFLOP/s"),
        (Fraction(9895, 10) * 10**12, 1, "1 PFLOP/s"),
        (Fraction(10**13, 3), 2, "3.3 TFLOP/s"),
    ],
)
def test_format_si_digits(value: Fraction, digits: int, expected: str) -> None:
    """`digits` sets the significant figures (ties to even); trailing zeros are stripped."""
    assert expected == format_si(value, "FLOP/s", digits=digits)


@pytest.mark.parametrize(
    ("value", "unit", "expected"),
    [
        (989.5e12, "FLOP/s", "989.5 TFLOP/s"),
        (1.4e-3, "s", "1.4 ms"),
        (float("nan"), "s", "nan s"),
        (float("inf"), "FLOP/B", "inf FLOP/B"),
        (float("-inf"), "FLOP/B", "-inf FLOP/B"),
        (-0.0, "s", "0 s"),
    ],
)
def test_format_si_floats(value: float, unit: str, expected: str) -> None:
    """Floats from exports are formatted from their exact value; non-finite ones by name."""
    assert expected == format_si(value, unit)


def test_digits_must_be_positive() -> None:
    """Zero significant figures is a programming error."""
    with pytest.raises(ValueError):
        format_si(1, "s", digits=0)
    with pytest.raises(ValueError):
        format_number(1, digits=0)


@pytest.mark.parametrize(
    ("value", "digits", "expected"),
    [
        (2730.667, 4, "2731"),
        (295.3731, 4, "295.4"),
        (0.16666, 4, "0.1667"),
        (Fraction(8192, 3), 4, "2731"),
        (Fraction(1, 6), 4, "0.1667"),
        (1_234_567, 4, "1235000"),
        (0, 4, "0"),
        (Fraction(-2, 3), 3, "-0.667"),
        (Fraction(1, 10**7), 4, "1e-7"),
        (Fraction(12345, 10**11), 3, "1.23e-7"),
        (10**21, 4, "1e21"),
        (Fraction(99996, 100), 4, "1000"),
        (100.0, 4, "100"),
    ],
)
def test_format_number(value: Fraction | int | float, digits: int, expected: str) -> None:
    """Plain significant figures without prefix or separators; exponent notation at extremes."""
    assert expected == format_number(value, digits)


@pytest.mark.parametrize(
    ("value", "digits", "expected"),
    [
        (Fraction(2345, 1000), 3, "2.34"),
        (Fraction(2355, 1000), 3, "2.36"),
        # 2.675 is stored as 2.67499999999999982236431605997495353221893310546875.
        (2.675, 3, "2.67"),
        (0.125, 2, "0.12"),
    ],
)
def test_format_number_rounds_half_to_even_on_exact_value(
    value: Fraction | float, digits: int, expected: str
) -> None:
    """Ties go to even; a float is rounded as the binary number it is, not as its repr."""
    assert expected == format_number(value, digits)


@pytest.mark.parametrize(
    ("value", "digits", "expected"),
    [
        (Fraction(1, 2), 3, "50%"),
        (0.98765, 3, "98.8%"),
        (1, 3, "100%"),
        (Fraction(1, 3), 3, "33.3%"),
        (Fraction(23, 25), 3, "92%"),
        (0, 3, "0%"),
        (Fraction(1, 3), 5, "33.333%"),
        (float("nan"), 3, "nan%"),
    ],
)
def test_format_percent(value: Fraction | int | float, digits: int, expected: str) -> None:
    """A fraction prints as a percentage with `digits` significant figures."""
    assert expected == format_percent(value, digits)


_decimals = st.builds(
    lambda mantissa, exponent: Fraction(mantissa) * Fraction(10) ** exponent,
    st.integers(min_value=-9999, max_value=9999),
    st.integers(min_value=-40, max_value=40),
)


@given(value=_decimals)
def test_format_number_round_trip(value: Fraction) -> None:
    """A value with at most `digits` significant figures is printed exactly."""
    assert value == Fraction(format_number(value, 4))


@given(
    value=st.fractions(min_value=Fraction(1, 10**6), max_value=10**24),
    digits=st.integers(min_value=1, max_value=8),
)
def test_format_si_mantissa_in_range(value: Fraction, digits: int) -> None:
    """The mantissa is in [1, 1000) when a prefix fits, and off by at most half a last digit."""
    text = format_si(value, "B/s", digits=digits)
    number, unit = text.split(" ")
    scale = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
    prefix = unit.removesuffix("B/s")
    mantissa = Fraction(number)
    if value >= 1:
        assert 1 <= mantissa < 1000 or prefix == "E"
    printed = mantissa * scale[prefix]
    assert len(number.replace(".", "").strip("0")) <= digits
    assert abs(printed - value) <= value / 10 ** (digits - 1) / 2


def test_width_text_shows_every_digit_of_a_width() -> None:
    """A derivation's bytes per value are exact: a block scale's share is not rounded
    away (FP8 with an FP32 scale per 128 x 128 block is not '1 B')."""
    from rooflinec.formatting import width_text

    assert "2" == width_text(Fraction(2))
    assert "0.53125" == width_text(Fraction(17, 32))
    assert "1.000244140625" == width_text(Fraction(4097, 4096))
    assert "4/3" == width_text(Fraction(4, 3))
