"""The schemas as editors read them: a title and description on every property, every enum
value described, and quantity patterns that admit exactly their dimension's units."""

from __future__ import annotations

import io
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rooflinec.cli.main import main
from rooflinec.loader import load_text
from rooflinec.quantities import _UNITS, Dimension
from rooflinec.resources import schemas_dir
from rooflinec.schema import validate

BASE = Path(__file__).parent / "cases" / "base"
SCHEMAS = sorted(schemas_dir().glob("*.schema.json"))
DEFS = json.loads((schemas_dir() / "defs.schema.json").read_text("utf-8"))["definitions"]
# Shared definitions that say what a value looks like, not what a field means: a property
# referring to one of these must carry its own title and description.
GENERIC = frozenset(
    {"id", "text", "name", "date", "url", "rate", "bandwidth", "bytes", "time", "share", "strings"}
)
DIMENSIONS = {
    "rate": Dimension.RATE,
    "bandwidth": Dimension.BANDWIDTH,
    "bytes": Dimension.BYTES,
    "time": Dimension.TIME,
    "share": Dimension.SHARE,
}


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return data


def properties(node: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every (location, subschema) of a named property anywhere in a schema."""
    if isinstance(node, list):
        for i, item in enumerate(node):
            yield from properties(item, f"{where}/{i}")
    elif isinstance(node, dict):
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    yield f"{where}/properties/{name}", sub
            yield from properties(value, f"{where}/{key}")


def enums(node: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every (location, subschema) that has an `enum`."""
    if isinstance(node, list):
        for i, item in enumerate(node):
            yield from enums(item, f"{where}/{i}")
    elif isinstance(node, dict):
        if "enum" in node:
            yield where, node
        for key, value in node.items():
            yield from enums(value, f"{where}/{key}")


def _documented(schema: dict[str, Any], key: str, local: dict[str, Any] | None = None) -> bool:
    """`key` (title or description) is on the property, or on the field-level definition
    it refers to (in defs.schema.json, or in `local`, the file's own definitions); a
    generic shape (an id, a name, a rate) does not count."""
    if schema.get(key):
        return True
    file, _, fragment = str(schema.get("$ref", "")).partition("#/definitions/")
    if file == "defs.schema.json" and fragment not in GENERIC:
        return _documented(DEFS[fragment], key, DEFS)
    if file == "" and local is not None and fragment in local and fragment not in GENERIC:
        return _documented(local[fragment], key, local)
    return False


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_every_property_has_a_title_and_description(path: Path) -> None:
    """Hover text in an editor: each property says its name and what it means."""
    document = _load(path)
    found = list(properties(document, path.name + "#"))
    assert found
    local = document.get("definitions", {})
    missing = [
        f"{where} lacks {key}"
        for where, schema in found
        for key in ("title", "description")
        if not _documented(schema, key, local)
    ]
    assert [] == missing


def test_the_property_walk_sees_nested_properties() -> None:
    """The walker finds properties inside items, definitions and additionalProperties."""
    schema = {
        "definitions": {"a": {"properties": {"x": {}}}},
        "additionalProperties": {"items": {"properties": {"y": {"title": "Y"}}}},
    }
    assert ["#/definitions/a/properties/x", "#/additionalProperties/items/properties/y"] == [
        where for where, _ in properties(schema, "#")
    ]


def test_a_generic_reference_is_not_documentation() -> None:
    """An id reference alone says what an id looks like, not what the field means."""
    assert not _documented({"$ref": "defs.schema.json#/definitions/id"}, "title")
    assert _documented({"$ref": "defs.schema.json#/definitions/note"}, "title")


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_every_enum_value_is_described(path: Path) -> None:
    """Each enum has one `enumDescriptions` entry per value (shown by editors on hover and
    completion) and its description names every value."""
    found = list(enums(_load(path), path.name + "#"))
    for where, schema in found:
        values = [str(v) for v in schema["enum"]]
        descriptions = schema.get("enumDescriptions", [])
        assert len(values) == len(descriptions), where
        assert all(isinstance(d, str) and d for d in descriptions), where
        unnamed = [v for v in values if v not in schema.get("description", "")]
        assert [] == unnamed, where


@pytest.mark.parametrize("name", sorted(DIMENSIONS))
def test_quantity_pattern_admits_exactly_its_dimensions_units(name: str) -> None:
    """`1 UNIT` matches a definition's pattern for every unit of its dimension that
    rooflinec reads, and for no unit of another dimension."""
    pattern = re.compile(DEFS[name]["pattern"])
    dimension = DIMENSIONS[name]
    admitted = sorted(u for u in _UNITS if pattern.search(f"1 {u}"))
    expected = sorted(u for u, unit in _UNITS.items() if unit.dimension is dimension)
    assert expected == admitted


@pytest.mark.parametrize("name", sorted(DIMENSIONS))
def test_quantity_pattern_is_ecma_262_and_agrees(name: str) -> None:
    """Editors read the same patterns as ECMA-262: the same units pass and fail there."""
    regress = pytest.importorskip("regress")
    compiled = regress.Regex(DEFS[name]["pattern"], "u")
    dimension = DIMENSIONS[name]
    for unit, spec in _UNITS.items():
        admitted = compiled.find(f"1 {unit}") is not None
        assert (spec.dimension is dimension) == admitted, unit


DEVICE = """\
id: test-x
name: Test X
vendor: Test
compute:
  bf16: {peak: 1000 TFLOP/s, source: s}
memory:
  dram: {label: HBM3, bandwidth: 3 TB/s, capacity: 80 GB, source: s}
sources:
  s: {title: Sheet, publisher: Test, url: "https://example.com/x", read: 2026-01-15}
versions:
  - {version: 1, date: 2026-01-15, change: First.}
"""


def problems(text: str) -> list[str]:
    """What the schema check alone says of a device."""
    return [str(d) for d in validate(load_text(text, "x.yaml"), "device")]


def check(tmp_path: Path, text: str) -> list[str]:
    """What `rooflinec check` says of the device `text` in the base catalog, in order."""
    specs = tmp_path / "specs"
    shutil.copytree(BASE, specs)
    (specs / "devices" / "x.yaml").write_text(text, "utf-8")
    out = io.StringIO()
    main(["check", "--specs", str(specs)], out=out)
    return [
        line.split("x.yaml:", 1)[1] for line in out.getvalue().splitlines() if "x.yaml:" in line
    ]


def test_wrong_dimension_is_one_error_with_the_unit_hint(tmp_path: Path) -> None:
    """A bandwidth written as a compute rate fails the schema's bandwidth pattern (as editors
    show), and `check` reports it once, in the unit parser's words, at the unit's column."""
    text = DEVICE.replace("bandwidth: 3 TB/s", "bandwidth: 3 TFLOP/s")
    assert [] == problems(text)
    assert [
        "7:36: error: expected a bandwidth such as '3.35 TB/s', got a compute rate in"
        " 'TFLOP/s' (a bandwidth is written B/s or Bps with a decimal prefix k M G T P E or"
        " a binary prefix Ki Mi Gi Ti Pi Ei, as in '3.35 TB/s' or '800 GiBps')"
        " [$.memory.dram.bandwidth]"
    ] == check(tmp_path, text)


def test_wrong_dimension_leaves_the_other_problems_in_view(tmp_path: Path) -> None:
    """A peak in B/s, a capacity in B/s and an unknown source: all three are reported."""
    text = (
        DEVICE.replace("peak: 1000 TFLOP/s", "peak: 1000 TB/s")
        .replace("capacity: 80 GB", "capacity: 80 GB/s")
        .replace("capacity: 80 GB/s, source: s", "capacity: 80 GB/s, source: nope")
    )
    found = check(tmp_path, text)
    assert 3 == len(found), found
    rate = "expected a compute rate such as '989.5 TFLOP/s', got a bandwidth in 'TB/s'"
    assert rate in found[0]
    assert "expected a size in bytes such as '80 GB', got a bandwidth in 'GB/s'" in found[1]
    assert "nope" in found[2]


def test_a_pattern_failure_the_parser_reads_keeps_the_schema_sentence() -> None:
    """A figure whose unit is right but whose spacing the pattern refuses (a tab) is a
    schema problem, said with the definition's description."""
    (message,) = problems(DEVICE.replace("bandwidth: 3 TB/s", 'bandwidth: "3\\tTB/s"'))
    assert "'3\\tTB/s' is not valid: a bandwidth and its unit" in message


def test_bare_number_names_the_dimension() -> None:
    """A bare number where a rate belongs names the dimension and an example."""
    text = DEVICE.replace("peak: 1000 TFLOP/s", "peak: 1000")
    assert [
        "x.yaml:5:16: error: expected a string (a compute rate with its unit, such as"
        " '989.5 TFLOP/s'), got a whole number 1000: units are never implicit, write the"
        " unit after the number [$.compute.bf16.peak]"
    ] == problems(text)


def test_share_in_words_gets_the_unit_hint(tmp_path: Path) -> None:
    """`92 percent` reads as an unknown unit with the share's spelling as the hint."""
    text = DEVICE.replace("versions:", "sustained: {memory: 92 percent}\nversions:")
    (message,) = check(tmp_path, text)
    assert "unknown unit 'percent' (a share is written in per cent, as in '92%')" in message
