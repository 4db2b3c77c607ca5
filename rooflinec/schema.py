"""Validate loaded spec documents against the JSON Schemas in `schemas/`, offline.

Schema errors become diagnostics at the offending field's own position: an unknown
key points at that key, a missing field at the mapping that lacks it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, Any

from rooflinec.errors import Diagnostic
from rooflinec.loader import Document, PathKey
from rooflinec.resources import schemas_dir

if TYPE_CHECKING:
    from jsonschema import ValidationError
    from jsonschema.protocols import Validator

KINDS = ("precisions", "device", "kernel", "method")
BASE_URI = "https://rooflinec.org/schemas/v1/"


@cache
def _schemas() -> dict[str, dict[str, Any]]:
    out = {}
    for path in sorted(schemas_dir().glob("*.schema.json")):
        out[path.name.removesuffix(".schema.json")] = json.loads(path.read_text("utf-8"))
    return out


@cache
def validator(kind: str) -> Validator:
    """A draft 2020-12 validator for one spec kind, with every schema file in its registry."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    schemas = _schemas()
    registry: Registry[Any] = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in schemas.values()
    )
    return Draft202012Validator(schemas[kind], registry=registry)  # type: ignore[return-value]


def validate(doc: Document, kind: str) -> list[Diagnostic]:
    """Every schema problem of `doc` as a diagnostic, one per problem."""
    out: list[Diagnostic] = []
    seen: set[tuple[PathKey, str]] = set()
    for error in validator(kind).iter_errors(doc.data):
        for path, message, on_key in _explain(error):
            path, message, on_key = _onto_key(doc, error, path, message, on_key)
            if (path, message) in seen:
                continue
            seen.add((path, message))
            out.append(doc.error(path, message, key=on_key, code="schema"))
    return out


def _onto_key(
    doc: Document, error: ValidationError, path: PathKey, message: str, on_key: bool
) -> tuple[PathKey, str, bool]:
    """A `propertyNames` failure arrives with the mapping's path: point at the key itself."""
    parent: Any = doc.data
    for part in path:
        try:
            parent = parent[part]
        except (KeyError, IndexError, TypeError):
            return path, message, on_key
    key = error.instance
    if isinstance(parent, dict) and isinstance(key, str) and key in parent and not on_key:
        if parent.get(key) is not key:
            return (*path, key), "key " + message, True
    return path, message, on_key


_TYPE_NAMES = {
    dict: "a mapping",
    list: "a list",
    str: "a string",
    bool: "true or false",
    int: "a whole number",
    type(None): "nothing (null)",
}


def _describe(value: Any) -> str:
    for kind, name in _TYPE_NAMES.items():
        if type(value) is kind:
            return name
    return "a number"


def _short(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else f"'{value}'"
    return text if len(text) <= 60 else text[:57] + "...'"


def _explain(error: ValidationError) -> Iterator[tuple[PathKey, str, bool]]:
    """Turn one jsonschema error into (path, sentence, points-at-key) triples."""
    path: PathKey = tuple(error.absolute_path)
    schema = error.schema if isinstance(error.schema, dict) else {}
    validator_name = error.validator
    instance = error.instance
    if validator_name in ("oneOf", "anyOf") and error.context:
        from jsonschema.exceptions import best_match

        if validator_name == "oneOf" and all(
            sub.validator == "required" for sub in error.context
        ):
            yield path, "give exactly one of: " + ", ".join(
                sorted({str(sub.validator_value[0]) for sub in error.context})
            ), False
            return
        yield from _explain(best_match(error.context))
        return
    if validator_name == "additionalProperties" and isinstance(instance, dict):
        known = set(schema.get("properties", {}))
        for key in instance:
            if key not in known:
                hint = ", ".join(sorted(known))
                yield (*path, key), f"unknown field '{key}' (expected one of: {hint})", True
        return
    if validator_name == "required":
        missing = error.validator_value
        for name in missing:
            if isinstance(instance, dict) and name not in instance:
                yield path, f"missing required field '{name}'", False
        return
    if validator_name == "type":
        expected = error.validator_value
        names = {
            "object": "a mapping",
            "array": "a list",
            "string": "a string",
            "integer": "a whole number",
            "number": "a number",
            "boolean": "true or false",
        }
        if isinstance(expected, list):
            want = " or ".join(names.get(e, e) for e in expected)
        else:
            want = names.get(expected, str(expected))
        yield path, f"expected {want}, got {_describe(instance)}", False
        return
    if validator_name == "enum":
        options = ", ".join(str(v) for v in error.validator_value)
        yield path, f"{_short(instance)} is not one of: {options}", False
        return
    if validator_name == "pattern":
        yield path, f"{_short(instance)} is not {_hint(schema)}", False
        return
    if validator_name in ("minimum", "exclusiveMinimum"):
        yield path, f"{_short(instance)} must be greater than {error.validator_value}" + (
            "" if validator_name == "exclusiveMinimum" else " or equal to it"
        ), False
        return
    if validator_name in ("maximum", "maxLength", "maxItems", "maxProperties"):
        yield path, f"too large: the limit is {error.validator_value}", False
        return
    if validator_name in ("minItems", "minProperties", "minLength"):
        yield path, "must not be empty", False
        return
    yield path, error.message, False


def _hint(schema: Any) -> str:
    """A phrase describing what a pattern-constrained field accepts."""
    if not isinstance(schema, dict):
        return "valid"
    ref = schema.get("$ref", "")
    description = schema.get("description")
    if description:
        first = description[:2]
        lowered = description if first.isupper() else description[0].lower() + description[1:]
        return "valid: " + lowered.rstrip(".")
    if ref.endswith("/id"):
        return "a valid id: lower-case letters, digits and hyphens"
    return "valid"
