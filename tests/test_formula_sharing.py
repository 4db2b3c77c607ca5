"""A formula text shared by several specs is parsed once: the builder's `_parsed` gives
the `Formula` (or the error) that `parse_formula` gives over each spec's own names."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rooflinec.assemble.builder import _parsed
from rooflinec.formulas import Formula, FormulaError, parse_formula


def _outcome(
    parse: object, text: str, symbols: Sequence[str], reserved: Sequence[str]
) -> tuple[object, ...]:
    """What a parse gives, comparable: the formula's fields and positions, or the error's
    message, column and token."""
    try:
        if parse is parse_formula:
            found = parse_formula(text, tuple(symbols), reserved=tuple(reserved))
        else:
            found = _parsed(text, tuple(symbols), tuple(reserved))
    except FormulaError as exc:
        return ("error", exc.message, exc.column, exc.token)
    return ("formula", found.text, found.symbols, found.reserved, dict(found._positions))


def test_a_text_under_other_names_is_one_formula() -> None:
    """`b*s` in two models with other parameters is the same `Formula` object, equal to
    what `parse_formula` gives over either model's names."""
    one = _parsed("b*s", ("layers", "h", "b", "s"), ("w",))
    other = _parsed("b*s", ("s", "b", "V"), ("w",))
    assert one is other
    expected = parse_formula("b*s", ("layers", "h", "b", "s"))
    assert (expected.text, expected.symbols, expected.reserved) == (
        one.text,
        one.symbols,
        one.reserved,
    )
    assert dict(expected._positions) == dict(one._positions)
    assert Fraction(6) == one.evaluate({"b": 2, "s": 3})


def test_an_unknown_name_is_reported_with_the_specs_own_names() -> None:
    """A text that parses under one spec's names but uses a name another spec does not
    declare is that spec's error, in `parse_formula`'s words (its declared names)."""
    assert isinstance(_parsed("h/hq", ("h", "hq"), ("w",)), Formula)
    with pytest.raises(FormulaError) as caught:
        _parsed("h/hq", ("h", "heads"), ("w",))
    with pytest.raises(FormulaError) as expected:
        parse_formula("h/hq", ("h", "heads"))
    assert (expected.value.message, expected.value.column, expected.value.token) == (
        caught.value.message,
        caught.value.column,
        caught.value.token,
    )
    assert "declared: h, heads" in caught.value.message


def test_reserved_names_count_as_reserved_whatever_is_declared() -> None:
    """`w` is reserved in both parses: the shared formula's `reserved` is the same as
    `parse_formula`'s, and a text with `w` under no reserved names is refused as before."""
    shared = _parsed("n*w", ("n",), ("w",))
    assert frozenset({"w"}) == shared.reserved
    assert _outcome(parse_formula, "n*w", ("n",), ()) == _outcome(_parsed, "n*w", ("n",), ())


_NAMES = ("b", "s", "h", "w", "tp", "max", "q1", "e9")
_PIECES = (*_NAMES, "*", "/", "+", "-", "**", "(", ")", ",", " ", "2", "1e9", "0.5", "'")


@settings(max_examples=300, deadline=None)
@given(
    pieces=st.lists(st.sampled_from(_PIECES), min_size=1, max_size=9),
    symbols=st.lists(st.sampled_from(_NAMES), max_size=5, unique=True),
    reserved=st.sampled_from(((), ("w",), ("w", "tp"))),
)
def test_same_outcome_as_parse_formula(
    pieces: list[str], symbols: list[str], reserved: tuple[str, ...]
) -> None:
    """For any text over a few names and operators and any declared names, the builder's
    parse gives what `parse_formula` gives: the same formula or the same error."""
    text = "".join(pieces)
    # The text parsed first under every name, as another spec may have: then under these.
    _outcome(_parsed, text, _NAMES, reserved)
    assert _outcome(parse_formula, text, symbols, reserved) == _outcome(
        _parsed, text, symbols, reserved
    )
