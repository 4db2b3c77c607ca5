"""Tests of the JSON Schemas and of rooflinec.schema: valid schemas, precise messages."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator, Draft202012Validator

from rooflinec.errors import SpecError
from rooflinec.loader import load_file, load_text
from rooflinec.resources import schemas_dir
from rooflinec.schema import MAX_ERRORS_PER_FILE, validate, validator

SCHEMAS = sorted(schemas_dir().glob("*.schema.json"))
REPO = Path(__file__).parents[1]
BASE = Path(__file__).parent / "cases" / "base"
KINDS = ("precisions", "device", "kernel", "method", "model")

# Keywords of drafts 2019-09 and 2020-12 that draft-7 tools (yaml-language-server in
# editors) do not know: a schema using them would be silently weaker in an editor.
NEWER_KEYWORDS = frozenset(
    {
        "$defs",
        "$anchor",
        "$dynamicRef",
        "$dynamicAnchor",
        "$recursiveRef",
        "$recursiveAnchor",
        "$vocabulary",
        "dependentRequired",
        "dependentSchemas",
        "unevaluatedProperties",
        "unevaluatedItems",
        "prefixItems",
        "minContains",
        "maxContains",
    }
)
# Keywords whose value maps names (not keywords) to subschemas.
NAMED_SUBSCHEMAS = frozenset({"properties", "patternProperties", "definitions", "$defs"})


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return data


def keywords(schema: Any, where: str = "#") -> Iterator[tuple[str, str]]:
    """Every (keyword, location) used in a schema, skipping property and definition names."""
    if isinstance(schema, list):
        for i, item in enumerate(schema):
            yield from keywords(item, f"{where}/{i}")
        return
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        yield key, where
        if key in NAMED_SUBSCHEMAS and isinstance(value, dict):
            for name, sub in value.items():
                yield from keywords(sub, f"{where}/{key}/{name}")
        elif key in ("enum", "const", "required", "examples", "default"):
            continue
        else:
            yield from keywords(value, f"{where}/{key}")


def refs(schema: Any) -> Iterator[str]:
    """Every `$ref` value in a schema."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from refs(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from refs(item)


# --- the schema files -----------------------------------------------------------------------


def test_there_is_a_schema_per_kind() -> None:
    """precisions, device, kernel, method, the shared definitions and the results contract."""
    names = {p.name.removesuffix(".schema.json") for p in SCHEMAS}
    assert names == {*KINDS, "defs", "results"}


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_schema_is_valid_draft_2020_12(path: Path) -> None:
    """Each schema declares draft 2020-12 and passes its metaschema."""
    schema = _load(path)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_schema_is_also_valid_draft_7(path: Path) -> None:
    """Each schema also passes the draft-7 metaschema, as editors read it."""
    Draft7Validator.check_schema(_load(path))


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_schema_has_no_id_and_refers_to_files_beside_it(path: Path) -> None:
    """No `$id`, so references resolve against the file itself (offline, from any folder);
    every `$ref` is a fragment or a schema file of this folder plus a fragment."""
    schema = _load(path)
    assert "$id" not in schema
    names = {p.name for p in SCHEMAS}
    for ref in refs(schema):
        file, _, fragment = ref.partition("#")
        assert file == "" or file in names, ref
        assert fragment.startswith("/definitions/"), ref


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_schema_uses_only_keywords_draft7_editors_know(path: Path) -> None:
    """No $defs, dependentRequired, unevaluatedProperties, prefixItems, $dynamicRef, ..."""
    used = [(key, where) for key, where in keywords(_load(path)) if key in NEWER_KEYWORDS]
    assert used == []


def test_keyword_walk_finds_newer_keywords() -> None:
    """The walker itself sees a newer keyword nested anywhere, and skips property names."""
    schema = {
        "properties": {"prefixItems": {"type": "string"}},
        "items": {"anyOf": [{"unevaluatedProperties": False}]},
    }
    found = {key for key, _ in keywords(schema) if key in NEWER_KEYWORDS}
    assert found == {"unevaluatedProperties"}


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_every_ref_resolves_offline(path: Path) -> None:
    """Every `$ref` resolves through the registry of schema files, with no network."""
    from referencing import Registry, Resource

    schema = _load(path)
    registry: Registry[Any] = Registry().with_resources(
        (p.resolve().as_uri(), Resource.from_contents(_load(p))) for p in SCHEMAS
    )
    resolver = registry.resolver(base_uri=path.resolve().as_uri())
    for ref in refs(schema):
        resolved = resolver.lookup(ref)
        assert isinstance(resolved.contents, dict), ref


def test_every_object_schema_closes_its_properties() -> None:
    """Every object with `properties` refuses unknown fields (additionalProperties: false)."""
    open_objects = []
    for path in SCHEMAS:

        def walk(node: Any, where: str, file: str = path.name) -> None:
            if isinstance(node, dict):
                if "properties" in node and node.get("additionalProperties") is not False:
                    open_objects.append(f"{file}{where}")
                for key, value in node.items():
                    walk(value, f"{where}/{key}")
            elif isinstance(node, list):
                for i, item in enumerate(node):
                    walk(item, f"{where}/{i}")

        walk(_load(path), "#")
    assert open_objects == []


# --- bundled specs validate -----------------------------------------------------------------


def _spec_files(folder: Path) -> Iterator[tuple[Path, str]]:
    yield folder / "precisions.yaml", "precisions"
    for sub, kind in (("devices", "device"), ("kernels", "kernel"), ("methods", "method")):
        for path in sorted((folder / sub).glob("*.yaml")):
            yield path, kind


@pytest.mark.parametrize(
    ("path", "kind"),
    [*_spec_files(REPO / "specs"), *_spec_files(BASE)],
    ids=lambda v: v.name if isinstance(v, Path) else v,
)
def test_bundled_spec_validates(path: Path, kind: str) -> None:
    """Every bundled spec and every base spec of the corpus passes its schema."""
    assert validate(load_file(path), kind) == []


# --- messages and positions -----------------------------------------------------------------

DEVICE = """\
id: test-x
name: Test X
vendor: Test
compute:
  bf16: {peak: 1000 TFLOP/s, source: s}
memory:
  dram: {label: HBM3, bandwidth: 3 TB/s, source: s}
sources:
  s: {title: Sheet, publisher: Test, url: "https://example.com/x", read: 2026-01-15}
versions:
  - {version: 1, date: 2026-01-15, change: First.}
"""


def problems(text: str, kind: str = "device") -> list[str]:
    """The rendered diagnostics of `text` validated as `kind`."""
    return [str(d) for d in validate(load_text(text, "x.yaml"), kind)]


def test_valid_device_has_no_problem() -> None:
    """The template device is valid."""
    assert problems(DEVICE) == []


def test_unknown_field_points_at_the_key() -> None:
    """An unknown key is reported at the key itself, with the fields that are accepted."""
    text = DEVICE.replace("  dram: {label: HBM3,", "  dram: {latency: 1 ns, label: HBM3,")
    (message,) = problems(text)
    assert message.startswith("x.yaml:7:10: error: unknown field 'latency' (expected one of: ")
    assert message.endswith("[$.memory.dram.latency]")


def test_unknown_top_level_field_points_at_the_key() -> None:
    """An unknown top-level key points at its own line, not the top of the file."""
    (message,) = problems(DEVICE + "colour: green\n")
    assert message.startswith("x.yaml:12:1: error: unknown field 'colour'")


def test_bad_key_points_at_the_key() -> None:
    """A key that breaks `propertyNames` (a source id) is reported at the key."""
    text = DEVICE.replace("  s: {title", "  Bad_Id: {title").replace("source: s}", "source: x}")
    (message,) = problems(text)
    assert message.startswith("x.yaml:9:3: error: key 'Bad_Id' is not valid: lower-case")


def test_missing_field_points_at_the_mapping() -> None:
    """A missing field is reported at the mapping that lacks it."""
    text = DEVICE.replace("label: HBM3, ", "")
    assert problems(text) == ["x.yaml:7:9: error: missing required field 'label' [$.memory.dram]"]


def test_missing_top_level_field_points_at_the_first_key() -> None:
    """A missing top-level field points at the first key, after leading comments."""
    text = "# comment\n\n" + DEVICE.replace("vendor: Test\n", "")
    assert problems(text) == ["x.yaml:3:1: error: missing required field 'vendor' [$]"]


def test_wrong_type_names_both_types_and_the_value() -> None:
    """A type error says what was expected and what was found."""
    text = DEVICE.replace("version: 1,", "version: one,")
    assert problems(text) == [
        "x.yaml:11:15: error: expected a whole number, got a string 'one' [$.versions[0].version]"
    ]


def test_bare_number_quantity_explains_units() -> None:
    """A quantity given as a bare YAML number says units are never implicit."""
    (message,) = problems(DEVICE.replace("3 TB/s", "3.35"))
    assert "got a number 3.35: units are never implicit" in message
    assert "Fraction" not in message


def test_wrong_type_hides_the_other_constraints_of_the_same_value() -> None:
    """A decimal shape value reports its type, not also its range."""
    kernel = """\
id: k
name: K
description: D.
symbols: {M: rows}
flops: 2*M
bytes: {dram: w*M}
cases:
  - {id: k-1, name: One, precision: bf16, shape: {M: 1e20}}
versions:
  - {version: 1, date: 2026-01-15, change: First.}
"""
    assert problems(kernel, "kernel") == [
        "x.yaml:8:54: error: expected a whole number, got a number 100000000000000000000"
        " [$.cases[0].shape.M]"
    ]


def test_one_of_with_both_alternatives_asks_for_exactly_one() -> None:
    """A measured entry with a rate and a time asks for exactly one of them."""
    kernel = """\
id: k
name: K
description: D.
symbols: {M: rows}
flops: 2*M
bytes: {dram: w*M}
cases:
  - id: k-1
    name: One
    precision: bf16
    shape: {M: 4}
    measured: [{device: d, precision: bf16, rate: 1 TFLOP/s, time: 1 ms}]
versions:
  - {version: 1, date: 2026-01-15, change: First.}
"""
    (message,) = problems(kernel, "kernel")
    assert "give exactly one of: rate, time" in message
    assert message.startswith("x.yaml:12:16:")


def test_one_of_explains_the_branch_that_fits_the_type() -> None:
    """A capacity mapping without its source says the source is missing."""
    text = DEVICE.replace("bandwidth: 3 TB/s,", "bandwidth: 3 TB/s, capacity: {value: 80 GB},")
    (message,) = problems(text)
    assert "missing required field 'source' [$.memory.dram.capacity]" in message


def test_messages_quote_text_with_escapes() -> None:
    """A value with a newline is quoted with its escape: the message stays one line."""
    (message,) = problems(DEVICE.replace("id: test-x", 'id: "a\\nb"'))
    assert "'a\\nb' is not valid" in message
    assert "\n" not in message


def test_too_many_errors_are_summarised() -> None:
    """More than MAX_ERRORS_PER_FILE errors end with one line saying how many more."""
    extra = "".join(f"unknown{i}: x\n" for i in range(MAX_ERRORS_PER_FILE + 25))
    found = problems(DEVICE + extra)
    assert len(found) == MAX_ERRORS_PER_FILE + 1
    assert "25 more schema errors in this file are not shown" in found[-1]


@pytest.mark.parametrize(
    ("old", "new", "fragment"),
    [
        ("name: Test X", "name: " + "x" * 201, "too long: at most 200 characters"),
        (
            "versions:\n  - {version: 1, date: 2026-01-15, change: First.}",
            "versions: []",
            "must not be empty",
        ),
        (
            'url: "https://example.com/x"',
            'url: "http://example.com/x"',
            "'http://example.com/x' is not valid: an https:// address",
        ),
        ("read: 2026-01-15", "read: 2026-02-30x", "is not valid: ISO date, YYYY-MM-DD"),
        (
            "bf16: {peak: 1000 TFLOP/s, source: s}",
            'bf16: {peak: 1000 TFLOP/s, source: s, sparsity: "1:4"}',
            "'1:4' is not one of: 2:4",
        ),
    ],
)
def test_constraint_messages(old: str, new: str, fragment: str) -> None:
    """Length, emptiness, pattern and enum failures each read as one clear sentence."""
    text = DEVICE.replace(old, new)
    assert text != DEVICE
    (message,) = problems(text)
    assert fragment in message


# --- patterns that cannot end early ----------------------------------------------------------

# One valid value for every pattern in the schemas; a pattern added without an example
# here fails `test_every_pattern_has_an_example`.
# The number and space every quantity pattern starts with.
_NUMBER = "^ *[0-9][0-9.,eE+-]*[ \\u00a0\\u2009\\u202f]*"
PATTERN_EXAMPLES = {
    "^[a-z0-9][a-z0-9-]*$(?![\\s\\S])": "nvidia-h100-sxm",
    "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$(?![\\s\\S])": "2026-02-28",
    "^https://[A-Za-z0-9.-]+(:[0-9]+)?(/[^\\s<>\"'`]*)?$(?![\\s\\S])": "https://example.com/a",
    _NUMBER + "[kKMGTPE]?(FLOP|OP)(/s|/sec|S|s) *$(?![\\s\\S])": "989.5 TFLOP/s",
    _NUMBER + "([kKMGTPE]|[KMGTPE]i)?B(/s|ps|/sec) *$(?![\\s\\S])": "3.35 TB/s",
    _NUMBER + "([kKMGTPE]|[KMGTPE]i)?B *$(?![\\s\\S])": "80 GB",
    _NUMBER + "(([kKMGTPE]|[KMGTPE]i)?B(/s|ps|/sec)|[kKMGTPE]?(b/s|bps|bit/s)) *$(?![\\s\\S])": (
        "400 Gb/s"
    ),
    _NUMBER + "[kM]?W *$(?![\\s\\S])": "700 W",
    _NUMBER + "USD/h *$(?![\\s\\S])": "2.99 USD/h",
    _NUMBER + "[kM]?tokens/s *$(?![\\s\\S])": "51.67 tokens/s",
    _NUMBER + "[mk]?J/token *$(?![\\s\\S])": "0.45 J/token",
    _NUMBER + "[m\\u00b5\\u03bcunp]?s *$(?![\\s\\S])": "1.4 ms",
    _NUMBER + "[kKMGTPE]?(FLOP|OP) *$(?![\\s\\S])": "4.33 TFLOP",
    "^ *[0-9][0-9.]*[ \\u00a0\\u2009\\u202f]*% *$(?![\\s\\S])": "92%",
    "^ *[0-9][0-9.]*[ \\u00a0\\u2009\\u202f]*[%] *$(?![\\s\\S])": "107%",
    "^[A-Za-z][A-Za-z0-9_]{0,15}$(?![\\s\\S])": "M",
    "^[A-Za-z][A-Za-z0-9_]{0,31}$(?![\\s\\S])": "ridge",
    "^[a-z][a-z0-9_]*$(?![\\s\\S])": "attainable",
}


def schema_patterns() -> list[str]:
    """Every `pattern` keyword's value in every schema file."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "pattern" and isinstance(value, str):
                    found.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    for path in SCHEMAS:
        walk(json.loads(path.read_text("utf-8")))
    return sorted(set(found))


def test_every_pattern_has_an_example() -> None:
    """The table below covers every pattern of the schemas, and no stale one."""
    assert sorted(PATTERN_EXAMPLES) == schema_patterns()


@pytest.mark.parametrize("pattern", sorted(PATTERN_EXAMPLES))
@pytest.mark.parametrize("suffix", ["\n", "\r\n", " \n", "\n\n", "\nx"])
def test_pattern_cannot_end_early_in_python(pattern: str, suffix: str) -> None:
    """Python's `re.search` (as jsonschema uses it) refuses a value with a line break after.

    `$` alone matches before a final newline in Python, so `"nvidia-h100-sxm\\n"` would
    pass `^[a-z0-9-]+$`.
    """
    import re

    example = PATTERN_EXAMPLES[pattern]
    assert re.search(pattern, example) is not None
    assert re.search(pattern, example + suffix) is None
    assert re.search(pattern, "\n" + example) is None


@pytest.mark.parametrize("pattern", sorted(PATTERN_EXAMPLES))
def test_pattern_is_ecma_262_and_cannot_end_early_there(pattern: str) -> None:
    """Editors and check-jsonschema read patterns as ECMA-262: same answers there."""
    regress = pytest.importorskip("regress")
    example = PATTERN_EXAMPLES[pattern]
    compiled = regress.Regex(pattern, "u")
    assert compiled.find(example) is not None
    assert compiled.find(example + "\n") is None
    assert compiled.find(example + "\u2028") is None


def test_id_with_a_trailing_newline_is_refused() -> None:
    """A quoted id ending in a newline fails the id pattern at the id's position."""
    text = (BASE / "devices" / "nvidia-h100-sxm.yaml").read_text("utf-8")
    doc = load_text(text.replace("id: nvidia-h100-sxm", 'id: "nvidia-h100-sxm\\n"'), "x.yaml")
    messages = [str(d) for d in validate(doc, "device")]
    assert [
        "x.yaml:2:6: error: 'nvidia-h100-sxm\\n' is not valid: lower-case letters, digits"
        " and hyphens; unique across the catalog [$.id]"
    ] == messages


_FOLDER_KINDS = {
    "devices": "device",
    "kernels": "kernel",
    "methods": "method",
    "models": "model",
    "precisions.yaml": "precisions",
}


def _spec_files() -> Iterator[tuple[str, Path]]:
    """Every bundled spec and every good and bad case file, with its kind."""
    for folder, kind in _FOLDER_KINDS.items():
        for path in sorted((REPO / "specs").glob(f"{folder}/*.yaml")):
            yield kind, path
        if folder == "precisions.yaml":
            yield kind, REPO / "specs" / folder
    for path in sorted((Path(__file__).parent / "cases").glob("*/*.yaml")):
        first = path.read_text("utf-8").partition("\n")[0]
        if first.startswith("# place: "):
            yield _FOLDER_KINDS[first.removeprefix("# place: ").split("/")[0]], path


def _errors(errors: Any) -> list[Any]:
    """What an error says and where, with the errors of each branch it tried."""
    return [
        (e.message, list(e.absolute_path), list(e.schema_path), _errors(e.context or []))
        for e in errors
    ]


def test_remembered_references_give_jsonschemas_own_errors() -> None:
    """A `$ref` remembers the scalars it found valid (a model repeats its formulas): every
    spec and case file, checked twice after all the others, gets exactly the errors, in
    the same order, of a validator that remembers nothing. (Sound because the schemas
    use no `$dynamicRef` or `unevaluated*`, see NEWER_KEYWORDS.)"""
    files = []
    for kind, path in _spec_files():
        try:
            files.append((kind, load_file(path).data))
        except SpecError:
            continue  # not YAML rooflinec reads: never validated
    assert len(files) > 200
    for _ in range(2):
        for kind, data in files:
            remembering = validator(kind)
            plain = Draft202012Validator(
                remembering.schema,
                registry=remembering._registry,
                format_checker=remembering.format_checker,
            )
            assert _errors(plain.iter_errors(data)) == _errors(remembering.iter_errors(data))


def test_a_value_valid_under_one_reference_is_checked_again_under_another() -> None:
    """The model's name, once found valid as a name, is still no id: a `$ref` remembers
    what it found valid under its own definition only."""
    text = (REPO / "specs" / "models" / "test-13b.yaml").read_text("utf-8")
    good = load_text(text, "models/test-13b.yaml")
    assert [] == validate(good, "model")
    name = good.data["name"]
    bad = load_text(text.replace("id: test-13b", f"id: '{name}'", 1), "models/test-13b.yaml")
    errors = validate(bad, "model")
    assert ["$.id"] == [d.path for d in errors]
    assert errors[0].message.endswith(
        "is not valid: lower-case letters, digits and hyphens; unique across the catalog"
    )


# --- the compiled validator -------------------------------------------------------------------

_KIND_OF_FOLDER = {
    "devices": "device",
    "kernels": "kernel",
    "methods": "method",
    "models": "model",
    "results": "results",
}


def _corpus() -> Iterator[tuple[Path, str]]:
    """Every spec file the project holds with its kind: the bundled catalog, the shared
    examples, and the acceptance corpus's good and bad files (their `# place:` line)."""
    for root in (REPO / "specs", REPO.parent / "shared" / "examples" / "specs", BASE):
        for path in sorted(root.rglob("*.yaml")):
            relative = path.relative_to(root)
            kind = "precisions" if relative.name == "precisions.yaml" else None
            kind = kind or _KIND_OF_FOLDER.get(relative.parts[0])
            if kind is not None:
                yield path, kind
    for path in sorted((REPO / "tests" / "cases").glob("*/*.yaml")):
        place = re.search(r"^# place: (\S+)", path.read_text("utf-8"), re.M)
        if place is None:
            continue
        name = place.group(1)
        kind = "precisions" if name.endswith("precisions.yaml") else None
        kind = kind or _KIND_OF_FOLDER.get(name.split("/")[0])
        if kind is not None:
            yield path, kind


def test_the_compiled_validator_accepts_only_what_jsonschema_accepts() -> None:
    """Where the compiled validator (jsonschema-rs) says a file is valid, jsonschema finds
    no error in it: it may be stricter (the file then goes to jsonschema), never looser.
    Over every spec file of the project, good and bad, and it does say valid of most."""
    pytest.importorskip("jsonschema_rs")
    from rooflinec.schema import _quickly_valid

    looser: list[str] = []
    quick = 0
    files = list(_corpus())
    for path, kind in files:
        try:
            doc = load_file(path)
        except SpecError:
            continue
        if not _quickly_valid(kind, doc.data):
            continue
        quick += 1
        errors = list(validator(kind).iter_errors(doc.data))
        if errors:
            looser.append(f"{path.name}: {errors[0].message}")
    assert [] == looser
    assert len(files) > 250
    assert quick > 150
