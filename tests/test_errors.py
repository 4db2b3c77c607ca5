"""Diagnostics stay one short line: long exact numbers are rounded, never the place cut."""

from __future__ import annotations

from fractions import Fraction

from rooflinec.errors import MAX_MESSAGE, Diagnostic, Location, short_number


def test_short_numbers_are_shown_exactly() -> None:
    """Up to twelve characters, a value is quoted as it is."""
    assert ["-5/3", "123456789012", "0"] == [
        short_number(Fraction(-5, 3)),
        short_number(123456789012),
        short_number(0),
    ]


def test_long_numbers_are_rounded_to_six_digits() -> None:
    """A long integer or fraction shows six significant digits and an ellipsis."""
    assert "1.23457e+12…" == short_number(1234567890123)
    assert "8.22526e-20…" == short_number(Fraction(1, 3**40))
    assert "-3.33333e-1001…" == short_number(Fraction(-1, 3 * 10**1000))


def test_a_diagnostic_rounds_a_long_number_in_its_message() -> None:
    """A 1,575-digit fraction in any stage's message becomes a short rounded value."""
    fraction = "-" + "2" * 800 + "/" + "3" * 775
    diagnostic = Diagnostic(Location("k.yaml", 7, 8), f"count is {fraction} here", "$.flops")
    assert "k.yaml:7:8: error: count is -6.66667e+24… here [$.flops]" == str(diagnostic)


def test_a_message_too_long_otherwise_is_cut_but_not_its_place() -> None:
    """Without numbers to round, the message is cut; location and path stay whole."""
    diagnostic = Diagnostic(Location("a/b.yaml", 3, 4), "x" * 1000, "$.name")
    assert MAX_MESSAGE == len(diagnostic.message)
    assert diagnostic.message.endswith("…")
    assert str(diagnostic).startswith("a/b.yaml:3:4: error: xxx")
    assert str(diagnostic).endswith("… [$.name]")


def test_short_messages_are_untouched() -> None:
    """A message under the cap is kept exactly, long digit runs and all."""
    message = "peak 12345678901234567890 FLOP/s"
    assert message == Diagnostic(Location("f"), message).message
