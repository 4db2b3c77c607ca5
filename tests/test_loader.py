"""Tests of rooflinec.loader: plain data, 1-based positions, and every refusal at its place."""

from __future__ import annotations

import json
import time
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rooflinec.errors import SpecError
from rooflinec.loader import (
    MAX_BYTES,
    MAX_DEPTH,
    MAX_NODES,
    Document,
    load_file,
    load_text,
)


def refused(text: str) -> tuple[int, int, str]:
    """(line, col, message) of the one diagnostic `load_text` raises for `text`."""
    with pytest.raises(SpecError) as info:
        load_text(text, "f.yaml")
    (diagnostic,) = info.value.diagnostics
    assert diagnostic.location.file == "f.yaml"
    assert "\n" not in diagnostic.message
    return diagnostic.location.line, diagnostic.location.col, diagnostic.message


# --- values ---------------------------------------------------------------------------------


def test_scalars_resolve_by_yaml_core_rules() -> None:
    """Integers, booleans and nulls resolve; everything else stays a string."""
    doc = load_text("a: 12\nb: -3\nc: true\nd: False\ne: ~\nf:\ng: null\nh: yes\ni: 0x10\n", "f")
    assert doc.data == {
        "a": 12,
        "b": -3,
        "c": True,
        "d": False,
        "e": None,
        "f": None,
        "g": None,
        "h": "yes",
        "i": "0x10",
    }


def test_decimals_become_exact_fractions() -> None:
    """`0.5`, `3.35` and `1e3` are Fractions, never floats."""
    doc = load_text("a: 0.5\nb: 3.35\nc: 1e3\nd: .25\ne: -1.5\n", "f")
    assert doc.data == {
        "a": Fraction(1, 2),
        "b": Fraction(335, 100),
        "c": Fraction(1000),
        "d": Fraction(1, 4),
        "e": Fraction(-3, 2),
    }
    assert all(type(v) is Fraction for v in doc.data.values())


def test_dates_stay_iso_strings() -> None:
    """A date is the string as written, not a datetime.date; so is a timestamp."""
    doc = load_text("read: 2026-10-25\nat: 2026-10-25T10:00:00Z\n", "f")
    assert doc.data == {"read": "2026-10-25", "at": "2026-10-25T10:00:00Z"}
    assert type(doc.data["read"]) is str


def test_quoted_scalars_are_always_strings() -> None:
    """Quoting keeps numbers, booleans and nulls as text."""
    doc = load_text("a: '12'\nb: \"true\"\nc: 'null'\nd: \"3.35\"\n", "f")
    assert doc.data == {"a": "12", "b": "true", "c": "null", "d": "3.35"}


def test_block_scalars_are_strings() -> None:
    """Literal and folded blocks are text, even when they look like numbers."""
    doc = load_text("a: |\n  12\nb: >-\n  two\n  lines\n", "f")
    assert doc.data == {"a": "12\n", "b": "two lines"}


def test_keys_are_strings() -> None:
    """A numeric or quoted key is its text."""
    doc = load_text("1: one\n'two': 2\n", "f")
    assert doc.data == {"1": "one", "two": 2}


def test_nested_structures() -> None:
    """Mappings and lists nest, in block and flow style."""
    doc = load_text("a:\n  b: [1, {c: d}]\n  e:\n    - f\n", "f")
    assert doc.data == {"a": {"b": [1, {"c": "d"}], "e": ["f"]}}


def test_every_value_has_a_position() -> None:
    """The root, then every key and item path, depth first, has a recorded position."""
    doc = load_text("a: [1, 2]\nb: {c: 3}\n", "f")
    assert [(), ("a",), ("a", 0), ("a", 1), ("b",), ("b", "c")] == list(doc.values)


# --- positions ------------------------------------------------------------------------------

POSITIONS = """\
# a comment
id: gemm
name: 'GEMM'
shape: {M: 8192, "N": 1}
cases:
  - first
  - "second"
  - key: value
"""


def test_value_positions_are_one_based() -> None:
    """Values, flow values and list items have 1-based (line, column)."""
    doc = load_text(POSITIONS, "f")
    assert doc.values[("id",)] == (2, 5)
    assert doc.values[("shape", "M")] == (4, 12)
    assert doc.values[("cases",)] == (6, 3)
    assert doc.values[("cases", 0)] == (6, 5)
    assert doc.values[("cases", 2, "key")] == (8, 10)


def test_key_positions_are_one_based() -> None:
    """Keys have their own positions, at their first character."""
    doc = load_text(POSITIONS, "f")
    assert doc.keys[("id",)] == (2, 1)
    assert doc.keys[("shape", "M")] == (4, 9)
    assert doc.keys[("cases", 2, "key")] == (8, 5)


def test_quoted_scalars_point_inside_the_quote() -> None:
    """A quoted value or key points at its first character, not at the quote."""
    doc = load_text(POSITIONS, "f")
    assert doc.values[("name",)] == (3, 8)
    assert doc.values[("cases", 1)] == (7, 6)
    assert doc.keys[("shape", "N")] == (4, 19)


def test_root_points_at_the_first_key_after_comments() -> None:
    """The top-level mapping starts at its first key, not at the comments above it."""
    doc = load_text(POSITIONS, "f")
    assert doc.locate(()).line == 2
    assert doc.values[()] == (2, 1)


def test_empty_value_points_at_its_key() -> None:
    """`key:` with nothing after it is located at the key, not at the next line."""
    doc = load_text("a:\n  b:\n  # comment\nc: 1\n", "f")
    assert doc.data == {"a": {"b": None}, "c": 1}
    assert doc.values[("a", "b")] == (2, 3)


def test_block_scalar_points_at_its_first_line_of_text() -> None:
    """A `|` or `>` block is located at its text, not at the indicator above it."""
    doc = load_text("flops: >-\n\n  2*M\n  *N\nnote: |\n    text\n", "f")
    assert doc.values[("flops",)] == (3, 3)
    assert doc.values[("note",)] == (6, 5)


def test_columns_count_characters_not_bytes() -> None:
    """Columns after non-ASCII text count code points."""
    doc = load_text("name: é€🚀\nx: {é: 1, y: 2}\n", "f")
    assert doc.values[("x", "y")] == (2, 14)


def test_crlf_line_endings_keep_positions() -> None:
    """Windows line endings give the same data and positions."""
    doc = load_text("a: 1\r\nb:\r\n  c: x\r\n", "f")
    assert doc.data == {"a": 1, "b": {"c": "x"}}
    assert doc.values[("b", "c")] == (3, 6)


def test_cr_line_endings_keep_positions() -> None:
    """Old Mac line endings (a lone CR) count lines as editors and the parser do."""
    doc = load_text("a: 1\rb:\r  c: x\rd: |\r  one\r  two\r", "f")
    assert {"a": 1, "b": {"c": "x"}, "d": "one\ntwo\n"} == doc.data
    assert (3, 6) == doc.values[("b", "c")]
    assert (5, 3) == doc.values[("d",)]


def test_integers_without_leading_zeros_load() -> None:
    """Zero itself, signs and decimals with a leading zero are not octal to anyone."""
    assert {"a": 0, "b": -5, "c": Fraction(1, 2), "d": "0x1F"} == load_text(
        "a: 0\nb: -5\nc: 0.5\nd: 0x1F\n", "f"
    ).data


def test_locate_finds_an_offset_on_a_later_line_of_a_block() -> None:
    """A character on the second line of a `|` formula is found on that line."""
    doc = load_text("x: 1\nflops: |\n  (2*M\n    * N *  X)\n", "f")
    value = doc.data["flops"]
    location = doc.locate(("flops",), offset=value.index("X"))
    assert (4, 12) == (location.line, location.col)
    location = doc.locate(("flops",), offset=value.index("M"))
    assert (3, 6) == (location.line, location.col)


def test_locate_finds_an_offset_in_a_folded_block_and_a_plain_scalar() -> None:
    """Folding and plain-scalar line joining change only white space."""
    doc = load_text("f: >-\n  2*M\n\n  *N*X\ng: 2*M\n   *N*X\n", "f")
    for path in ("f", "g"):
        value = doc.data[path]
        location = doc.locate((path,), offset=value.index("X"))
        assert ((4, 6) if path == "f" else (6, 7)) == (location.line, location.col)


def test_locate_falls_back_to_the_nearest_ancestor() -> None:
    """A path that is not in the file (a missing field) points at its parent."""
    doc = load_text("a:\n  b: 1\n", "f")
    location = doc.locate(("a", "missing", "deeper"))
    assert (location.line, location.col) == (2, 3)


def test_locate_adds_the_offset_to_the_column() -> None:
    """An offset (a character inside a formula) is added to the value's column."""
    doc = load_text("flops: '2*M*X'\n", "f")
    location = doc.locate(("flops",), offset=4)
    assert (location.line, location.col) == (1, 13)


def test_error_renders_file_line_col_and_path() -> None:
    """Document.error makes a diagnostic with the field's JSON path."""
    doc = load_text("a:\n  - {b: 1}\n", "specs/x.yaml")
    diagnostic = doc.error(("a", 0, "b"), "bad b")
    assert str(diagnostic) == "specs/x.yaml:2:9: error: bad b [$.a[0].b]"
    assert isinstance(doc, Document)


# --- refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "where", "fragment"),
    [
        ("a: 1\nb: [1, 2\nc: 3\n", (3, 2), "YAML syntax"),
        ("a:\n  b: 1\n c: 2\n", (3, 2), "YAML syntax"),
        ("a: 1\nb:\n\tc: 1\n", (3, 1), "tab character"),
        ("a: x\tb\n", (1, 5), "tab character"),
        ("a: 1\nb: 2\na: 3\n", (3, 1), "duplicate key 'a' (first defined at line 1, column 1)"),
        ("a:\n  b: 1\n  c: {d: 1, d: 2}\n", (3, 13), "duplicate key 'd'"),
        ("a: 1\n'a': 2\n", (2, 2), "duplicate key 'a'"),
        ("a: !!python/object/apply:os.system [ls]\n", (1, 4), "YAML tags are not allowed"),
        ("a: !!python/name:os.system\n", (1, 4), "tag:yaml.org,2002:python/name:os.system"),
        ("a: !foo x\n", (1, 4), "YAML tags are not allowed in specs: !foo"),
        ("a: !!str 1\n", (1, 4), "YAML tags are not allowed"),
        ("a: ! 1\n", (1, 4), "YAML tags are not allowed"),
        ("!!map\na: 1\n", (1, 1), "YAML tags are not allowed"),
        ("a: &x 1\nb: *x\n", (1, 4), "anchors (&name) are not allowed"),
        ("a: *x\n", (1, 4), "aliases (*name) are not allowed"),
        ("a:\n  <<: {b: 1}\n", (2, 3), "merge keys (<<) are not allowed"),
        ("? [a]\n: 1\n", (1, 3), "mapping keys must be plain names"),
        ("- a\n- b\n", (1, 1), "must be a mapping of fields, not a list"),
        ("just text\n", (1, 1), "must be a mapping of fields, not a single value"),
        ("", (1, 1), "empty file"),
        ("\n\n   \n", (1, 1), "empty file"),
        ("# only\n# comments\n", (1, 1), "empty file"),
        ("a: 1\n---\nb: 2\n", (2, 1), "one YAML document, found another"),
        ("a: .inf\n", (1, 4), "'.inf' is not a finite number"),
        ("a: -.Inf\n", (1, 4), "is not a finite number"),
        ("a: .nan\n", (1, 4), "is not a finite number"),
        ("a: " + "9" * 31 + "\n", (1, 4), "more than 30 digits"),
        ('a: "x\\0y"\n', (1, 5), "invisible character U+0000"),
        ('a: "x\\u202Ey"\n', (1, 5), "invisible character U+202E"),
        ('"a\\nb": 1\n', (1, 2), "key contains the invisible character U+000A"),
        ("a: b\x00c\n", (1, 5), "character U+0000 is not allowed"),
        ("%YAML 1.6\n---\na: 1\n", (1, 1), "YAML directives (%YAML) are not allowed"),
        ("%YAML 1.2\n---\na: 1\n", (1, 1), "YAML directives (%YAML) are not allowed"),
        ("# c\n\n%TAG ! tag:x,2026:\n---\na: 1\n", (3, 1), "YAML directives (%TAG)"),
        ("\ufeff%YAML 1.1\n---\na: 1\n", (1, 2), "YAML directives (%YAML)"),
        ("a: 040\n", (1, 4), "'040' has a leading zero, which YAML 1.1 tools read as an octal"),
        (
            "a: [1, -007]\n",
            (1, 8),
            "'-007' has a leading zero, which YAML 1.1 tools read as an octal number; write -7",
        ),
        ("a:\n  b: 00\n", (2, 6), "'00' has a leading zero"),
        ("a: 'x\u2028y'\nb: [\n", (1, 6), "character U+2028 (LINE SEPARATOR) is a line break"),
        ("a: x\u2029y\n", (1, 5), "character U+2029 (PARAGRAPH SEPARATOR)"),
        ("# c\x85d\na: 1\n", (1, 4), "character U+0085 (NEL) is a line break to YAML"),
        ("a: 1\rb: 2\r  c\x85: 3\r", (3, 4), "U+0085"),
        ("a: 1\rb: 2\rc: x\ty\r", (3, 5), "tab character"),
        ("a: 1\r\nb: 2\r\nc: x\ty\r\n", (3, 5), "tab character"),
        ('a: "x\\u2028y"\n', (1, 5), "invisible character U+2028"),
    ],
)
def test_refusals_have_positions(text: str, where: tuple[int, int], fragment: str) -> None:
    """Every refused construct is reported at its own 1-based line and column."""
    line, col, message = refused(text)
    assert fragment in message
    assert (line, col) == where


def test_billion_laughs_is_refused_at_once() -> None:
    """The classic alias bomb is refused at its first anchor, in milliseconds."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    start = time.monotonic()
    line, col, message = refused("\n".join(lines) + "\n")
    assert time.monotonic() - start < 1
    assert (line, col) == (1, 4)
    assert "anchors" in message


def test_deep_flow_nesting_is_refused() -> None:
    """200 nested flow sequences stop at the depth cap, at the bracket that passes it."""
    line, col, message = refused("a: " + "[" * 200 + "]" * 200 + "\n")
    assert f"nesting deeper than {MAX_DEPTH} levels" in message
    assert (line, col) == (1, 4 + MAX_DEPTH - 1)


def test_deep_block_nesting_is_refused() -> None:
    """Block mappings nested past the cap are refused too."""
    text = "".join(" " * i + f"k{i}:\n" for i in range(MAX_DEPTH + 5)) + " " * 40 + "x: 1\n"
    line, _, message = refused(text)
    assert "nesting deeper" in message
    assert line == MAX_DEPTH


def test_nesting_up_to_the_cap_is_accepted() -> None:
    """Nesting just under the cap loads."""
    depth = MAX_DEPTH - 2
    doc = load_text("a: " + "[" * depth + "1" + "]" * depth + "\n", "f")
    assert doc.data["a"] is not None


def test_a_file_of_many_values_loads() -> None:
    """Values are bounded by the byte cap, not by a count: 300,000 values (about 900 kB,
    near the most a file under MAX_BYTES holds) load, and MAX_NODES is more than a file
    under the byte cap can hold (how fast is the benchmark's `check` row to say)."""
    text = "a: [" + "1, " * 300_000 + "1]\n"
    assert len(text.encode()) < MAX_BYTES
    assert MAX_NODES * 2 >= MAX_BYTES
    doc = load_text(text, "f")
    assert len(doc.data["a"]) == 300_001


def test_a_megabyte_of_cases_loads() -> None:
    """A kernel file of 10,000 cases (850 kB; the old cap of 10,000 values
    refused 700) loads, every case with its positions."""
    case = (
        "  - {{id: c-{0}, name: Case {0}, precision: bf16, shape: {{M: {0}, N: 4096, K: 512}}}}\n"
    )
    text = "id: k\ncases:\n" + "".join(case.format(i) for i in range(10_000))
    assert 800_000 < len(text.encode()) < MAX_BYTES
    doc = load_text(text, "f")
    assert len(doc.data["cases"]) == 10_000
    assert doc.data["cases"][9_999]["shape"] == {"M": 9_999, "N": 4096, "K": 512}
    assert doc.locate(("cases", 9_999, "shape", "K")).line == 10_002


def test_hostile_files_are_still_refused() -> None:
    """Without the value count the other caps hold: an alias, nesting past MAX_DEPTH and
    text over MAX_BYTES are each refused at once."""
    for text, wanted in (
        ("a: &x [1, 2]\nb: *x\n", "anchors (&name) are not allowed"),
        ("a: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n", "nesting deeper"),
        ("a: [" + "1, " * (MAX_BYTES // 3 + 10) + "1]\n", "bytes; specs are limited"),
    ):
        start = time.monotonic()
        _, _, message = refused(text)
        assert time.monotonic() - start < 2
        assert wanted in message


def test_text_over_the_size_limit_is_refused() -> None:
    """Text over MAX_BYTES is refused before parsing."""
    line, col, message = refused("a: " + "x" * MAX_BYTES + "\n")
    assert (line, col) == (1, 1)
    assert f"limited to {MAX_BYTES} bytes" in message


def test_file_over_the_size_limit_is_refused_before_reading(tmp_path: Path) -> None:
    """A 2 MB file is refused from its size alone."""
    path = tmp_path / "big.yaml"
    path.write_text("a: 1\n" + "# padding\n" * 210_000, "utf-8")
    with pytest.raises(SpecError) as info:
        load_file(path, "big.yaml")
    (diagnostic,) = info.value.diagnostics
    assert str(diagnostic).startswith("big.yaml:1:1: error: file is ")


def test_non_utf8_file_is_refused_at_the_bad_byte(tmp_path: Path) -> None:
    """A Latin-1 file is refused at the line and column of its first invalid byte."""
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"a: 1\nname: caf\xe9\n")
    with pytest.raises(SpecError) as info:
        load_file(path, "latin1.yaml")
    (diagnostic,) = info.value.diagnostics
    assert (diagnostic.location.line, diagnostic.location.col) == (2, 10)
    assert "not UTF-8" in diagnostic.message


def test_missing_file_is_one_error(tmp_path: Path) -> None:
    """A file that cannot be read is a diagnostic, not an OSError."""
    with pytest.raises(SpecError) as info:
        load_file(tmp_path / "absent.yaml", "absent.yaml")
    assert "cannot read file" in info.value.diagnostics[0].message


def test_load_file_uses_the_display_name(tmp_path: Path) -> None:
    """Positions of a loaded file carry the name given for display."""
    path = tmp_path / "x.yaml"
    path.write_text("a: [1\n", "utf-8")
    with pytest.raises(SpecError) as info:
        load_file(path, "specs/x.yaml")
    assert info.value.diagnostics[0].location.file == "specs/x.yaml"


def test_byte_order_mark_is_accepted() -> None:
    """A UTF-8 byte order mark at the start is not part of the first key."""
    assert load_text("\ufeffa: 1\n", "f").data == {"a": 1}


def test_document_markers_are_accepted() -> None:
    """One document between `---` and `...` loads."""
    assert load_text("---\na: 1\n...\n", "f").data == {"a": 1}


# --- property ------------------------------------------------------------------------------

_TEXT = st.text(
    alphabet=st.characters(
        min_codepoint=0x20,
        blacklist_categories=("Cs", "Cc", "Cf", "Zl", "Zp"),
    ),
    max_size=20,
)
_LEAF = st.one_of(
    st.integers(min_value=-(10**12), max_value=10**12), st.booleans(), st.none(), _TEXT
)
_KEYS = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
_DATA = st.recursive(
    _LEAF,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=20,
)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(_KEYS, _DATA, min_size=1, max_size=4))
def test_json_documents_load_to_the_same_data(data: dict[str, object]) -> None:
    """Any JSON document (JSON is YAML) loads back to the data it was dumped from."""
    text = json.dumps(data, ensure_ascii=False, indent=1)
    assert load_text(text, "f").data == data
