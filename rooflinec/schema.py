"""Validate loaded spec documents against the JSON Schemas in `schemas/`, offline.

Schema errors become diagnostics at the offending field's own position: an unknown
key points at that key, a missing field at the mapping that lacks it. Every message
is one line and names what was expected; spec text is quoted with its escapes shown.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Iterator
from fractions import Fraction
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

from rooflinec.errors import Diagnostic
from rooflinec.loader import Document, PathKey
from rooflinec.quantities import Dimension, QuantityError, parse_quantity
from rooflinec.resources import schemas_dir

if TYPE_CHECKING:
    from jsonschema import ValidationError  # type: ignore[import-untyped,unused-ignore]
    from jsonschema.protocols import Validator  # type: ignore[import-untyped,unused-ignore]

MAX_ERRORS_PER_FILE = 200
"""More schema errors than this in one file are summarised in one last line."""


@cache
def _schemas() -> dict[str, dict[str, Any]]:
    out = {}
    for path in sorted(schemas_dir().glob("*.schema.json")):
        out[path.name.removesuffix(".schema.json")] = json.loads(path.read_text("utf-8"))
    return out


# The shared definitions whose `pattern` admits one dimension's units: editors and other
# validators flag `bandwidth: 3.35 TFLOP/s` by them. A value the unit parser refuses is
# said in the parser's words (what it found and what to write). When that is all that is
# wrong with a document, it is left to the assembly, which parses every such field and
# reports it once next to the document's other problems (ids, sources) that a failed
# schema check would hide by stopping the document from being built.
_DIMENSION_DEFINITIONS = {
    "rate": Dimension.RATE,
    "bandwidth": Dimension.BANDWIDTH,
    "linkBandwidth": Dimension.BANDWIDTH,
    "bytes": Dimension.BYTES,
    "time": Dimension.TIME,
    "share": Dimension.SHARE,
    "measuredShare": Dimension.SHARE,
    "power": Dimension.POWER,
    "price": Dimension.PRICE,
    "tokenRate": Dimension.TOKEN_RATE,
    "energyPerToken": Dimension.ENERGY,
}
# The one definition whose values may be in bits (an interconnect's bandwidth), and the
# one share that may exceed 100 % (a measured collective's, which a lint flags).
_BIT_DEFINITIONS = frozenset({"linkBandwidth"})
_MEASURED_DEFINITIONS = frozenset({"measuredShare"})


@cache
def _dimension_patterns() -> dict[str, tuple[Dimension, bool, bool]]:
    """Each quantity definition's pattern, mapped to the dimension it admits, whether it
    admits bits and whether a share may exceed 100 %."""
    definitions = _schemas()["defs"]["definitions"]
    return {
        definitions[name]["pattern"]: (
            dim,
            name in _BIT_DEFINITIONS,
            name in _MEASURED_DEFINITIONS,
        )
        for name, dim in _DIMENSION_DEFINITIONS.items()
    }


def _dimension_of(schema: dict[str, Any]) -> tuple[Dimension, bool, bool] | None:
    pattern = schema.get("pattern")
    return _dimension_patterns().get(pattern) if isinstance(pattern, str) else None


def _dimension(schema: dict[str, Any]) -> Dimension | None:
    found = _dimension_of(schema)
    return found[0] if found is not None else None


class _Found(NamedTuple):
    """One problem: where, what, whether it is about the key rather than the value, where
    in the scalar, and whether the assembly reports it too (a unit the parser refuses)."""

    path: PathKey
    message: str
    on_key: bool
    offset: int = 0
    units: bool = False


@cache
def validator(kind: str) -> Validator:
    """A draft 2020-12 validator for one spec kind, with every schema file in its registry.

    The schemas carry no `$id`: a `$ref` such as `defs.schema.json#/definitions/id` resolves
    against the file it is written in, so check-jsonschema and editors find the file beside
    it, offline, wherever the folder is. Here every file is registered under its own name,
    which is what such a reference resolves to from a root without an `$id`.
    """
    from jsonschema import Draft202012Validator, FormatChecker
    from referencing import Registry, Resource

    formats = FormatChecker(formats=())
    formats.checks("date")(_calendar_date)
    schemas = _schemas()
    registry: Registry[Any] = Registry().with_resources(
        (f"{name}.schema.json", Resource.from_contents(schema)) for name, schema in schemas.items()
    )
    remembering = _remembering(Draft202012Validator)
    return remembering(schemas[kind], registry=registry, format_checker=formats)


# The URI the compiled validator knows the schema files by: any base does, as the files'
# references are relative; it is never fetched (every file is in the registry).
_FAST_BASE = "file:///rooflinec/schemas/"


@cache
def _fast_validator(kind: str) -> Any | None:
    """A compiled (jsonschema-rs) validator of the same schemas, or None without it.

    It answers one question, whether a document is valid, some thirty times faster than
    jsonschema; a document it does not find valid goes to `validator` for the messages.
    It may only be stricter: its `date` format is RFC 3339's (a calendar date, as ours),
    and it checks the formats jsonschema is not asked to, so a document it refuses that
    jsonschema accepts is still accepted. It reads JSON's types only: a document holding
    an exact decimal (a `Fraction`) goes to jsonschema too.
    """
    try:
        import jsonschema_rs
    except ImportError:  # a platform without its wheel: jsonschema alone, as correct
        return None
    schemas = _schemas()
    registry = jsonschema_rs.Registry(
        [(f"{_FAST_BASE}{name}.schema.json", schema) for name, schema in schemas.items()]
    )
    return jsonschema_rs.Draft202012Validator(
        schemas[kind],
        registry=registry,
        base_uri=f"{_FAST_BASE}{kind}.schema.json",
        validate_formats=True,
        # The schemas' patterns use look-ahead, as Python's `re` reads them.
        pattern_options=jsonschema_rs.FancyRegexOptions(),
    )


def _quickly_valid(kind: str, data: object) -> bool:
    """Whether the compiled validator finds `data` valid (False: ask jsonschema)."""
    fast = _fast_validator(kind)
    if fast is None:
        return False
    try:
        return bool(fast.is_valid(data))
    except Exception:  # a value of no JSON type (a Fraction), a pattern's backtracking
        return False  # limit: jsonschema decides, as without the compiled validator


# Scalar types whose values a `$ref` remembers as valid (the type is part of the key:
# True == 1, but a boolean is no integer to a schema).
_SCALARS = frozenset({str, int, float, bool, type(None)})
_REMEMBERED = 100_000


def _remembering(base: Any) -> Any:
    """`base` whose `$ref` remembers the scalars it found valid and skips them after.

    Specs repeat their scalars (a model's shape formulas such as 'h' and 'b*s', ids,
    variable names): following a reference and validating the same string against the
    same definition again is most of a model file's check. Whether a scalar is valid
    under a `$ref` depends only on the reference, resolved from the schema object that
    holds it (these schemas have no `$id`, `$dynamicRef` or `unevaluated*`), and on the
    value: so a valid one is valid again. A value that fails is followed every time, so
    its errors are the ones jsonschema gives. The memory lives as long as the validator,
    which holds every schema object it is keyed by.
    """
    from jsonschema import validators

    plain = base.VALIDATORS["$ref"]
    valid: set[tuple[int, type, object]] = set()
    # The target of each `$ref`, by the schema object that holds it: resolved once. The
    # same reasoning (no `$id`, no `$dynamicRef`) makes the target the same every time;
    # following it costs a model file's check more than validating what it points to.
    targets: dict[tuple[int, str], Any] = {}

    def follow(validator: Any, ref: str, instance: Any, schema: dict[str, Any]) -> Iterator[Any]:
        resolver = getattr(validator, "_resolver", None)
        if resolver is None:  # a jsonschema without the referencing resolver
            yield from plain(validator, ref, instance, schema)
            return
        key = (id(schema), ref)
        target = targets.get(key)
        if target is None:
            try:
                target = resolver.lookup(ref)
            except Exception:  # unresolvable: jsonschema says so its own way
                yield from plain(validator, ref, instance, schema)
                return
            targets[key] = target
        yield from validator.descend(instance, target.contents, resolver=target.resolver)

    def ref(validator: Any, ref: str, instance: Any, schema: dict[str, Any]) -> Iterator[Any]:
        kind = type(instance)
        if kind not in _SCALARS:
            yield from follow(validator, ref, instance, schema)
            return
        key = (id(schema), kind, instance)
        if key in valid:
            return
        errors = list(follow(validator, ref, instance, schema))
        if not errors and len(valid) < _REMEMBERED:
            valid.add(key)
        yield from errors

    return validators.extend(base, validators={"$ref": ref})


def _calendar_date(instance: object) -> bool:
    """`format: date`: a YYYY-MM-DD string names a day on the calendar (no 2026-02-30).

    Other strings pass here: the `pattern` beside the format says what is wrong with them.
    """
    if not isinstance(instance, str) or not _DATE_SHAPE.match(instance):
        return True
    try:
        datetime.date.fromisoformat(instance)
    except ValueError:
        return False
    return True


# The shape the schema's `pattern` accepts: a string of another shape is its business.
_DATE_SHAPE = re.compile(r"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])\Z")


# Problems of documents loaded by a `DocumentCache`, by (signature, kind): in `serve`,
# an edit to one spec validates that file alone.
_VALIDATED: dict[tuple[tuple[str, str | None, int, int], str], tuple[Diagnostic, ...]] = {}
_VALIDATED_LIMIT = 4096


def validate(doc: Document, kind: str) -> list[Diagnostic]:
    """Every schema problem of `doc` as a diagnostic, one per problem."""
    if doc.signature is None:
        return _validate(doc, kind)
    key = (doc.signature, kind)
    hit = _VALIDATED.get(key)
    if hit is None:
        if len(_VALIDATED) >= _VALIDATED_LIMIT:
            _VALIDATED.clear()
        hit = _VALIDATED[key] = tuple(_validate(doc, kind))
    return list(hit)


def _validate(doc: Document, kind: str) -> list[Diagnostic]:
    if _quickly_valid(kind, doc.data):
        return []
    out: list[Diagnostic] = []
    seen: set[tuple[PathKey, str]] = set()
    found: list[_Found] = []
    for error in validator(kind).iter_errors(doc.data):
        found.extend(_explain(error))
    if all(f.units for f in found):
        return []  # the assembly parses these quantities and says the same, with the rest
    # A value of the wrong type also breaks its other constraints: say only the type.
    mistyped = {f.path for f in found if not f.on_key and _is_type(f.message)}
    hidden = 0
    for f in found:
        if (f.path, f.message) in seen:
            continue
        if f.path in mistyped and not f.on_key and not _is_type(f.message):
            continue
        seen.add((f.path, f.message))
        if len(out) >= MAX_ERRORS_PER_FILE:
            hidden += 1
            continue
        code = "units" if f.units else "schema"
        out.append(doc.error(f.path, f.message, key=f.on_key, offset=f.offset, code=code))
    if hidden:
        last = out[-1]
        out.append(
            Diagnostic(
                last.location,
                f"{hidden} more schema errors in this file are not shown",
                "",
                "error",
                "schema",
            )
        )
    return out


def _is_type(message: str) -> bool:
    return message.startswith("expected ") and ", got " in message


_TYPE_NAMES = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "null": "nothing (null)",
}


def _describe(value: Any) -> str:
    """What a loaded YAML value is, in words."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int):
        return "a whole number"
    if isinstance(value, (Fraction, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__  # pragma: no cover - the loader makes no other types


def _short(value: Any) -> str:
    """A value as quoted in a message: escapes shown, numbers as written, cut if long."""
    if isinstance(value, Fraction):
        text = str(value.numerator) if value.denominator == 1 else _decimal(value)
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif value is None:
        text = "null"
    elif isinstance(value, (dict, list)):
        text = _describe(value)
    else:
        text = repr(value)
    return text if len(text) <= 60 else text[:56] + "...'"


def _decimal(value: Fraction) -> str:
    return repr(float(value)) if abs(value) < 10**15 else str(value)


def _expected_types(expected: Any) -> str:
    if isinstance(expected, list):
        return " or ".join(_TYPE_NAMES.get(e, str(e)) for e in expected)
    return _TYPE_NAMES.get(expected, str(expected))


# Bounds of numbers, lengths and counts: the sentence for each keyword.
_LIMITS = {
    "minimum": "{value} is too small: the minimum is {limit}",
    "exclusiveMinimum": "{value} must be greater than {limit}",
    "maximum": "{value} is too large: the maximum is {limit}",
    "exclusiveMaximum": "{value} must be less than {limit}",
    "maxLength": "too long: at most {limit} characters",
    "maxItems": "too many items: at most {limit}",
    "maxProperties": "too many entries: at most {limit}",
}


def _explain(error: ValidationError) -> Iterator[_Found]:
    """Turn one jsonschema error into problems: path, sentence, points-at-key, ..."""
    path: PathKey = tuple(error.absolute_path)
    schema = error.schema if isinstance(error.schema, dict) else {}
    name = error.validator
    instance = error.instance
    if "propertyNames" in error.relative_schema_path:
        # jsonschema reports a bad key with the mapping's path; point at the key itself.
        for found in _explain_value(error, path, schema, name, instance):
            if isinstance(instance, str):
                yield _Found((*found.path, instance), f"key {found.message}", True)
            else:  # pragma: no cover - keys are always strings after loading
                yield found
        return
    yield from _explain_value(error, path, schema, name, instance)


def _explain_value(
    error: ValidationError, path: PathKey, schema: dict[str, Any], name: str, instance: Any
) -> Iterator[_Found]:
    if name in ("oneOf", "anyOf"):
        yield from _explain_choice(error, path, schema, instance)
        return
    if name == "additionalProperties" and isinstance(instance, dict):
        known = sorted(schema.get("properties", {}))
        for key in instance:
            if key not in known:
                hint = ", ".join(known)
                yield _Found(
                    (*path, key),
                    f"unknown field {_short(key)} (expected one of: {hint})",
                    True,
                )
        return
    if name == "required":
        for field in error.validator_value:
            if isinstance(instance, dict) and field not in instance:
                yield _Found(path, f"missing required field '{field}'", False)
        return
    if name == "type":
        want = _expected_types(error.validator_value)
        described = schema.get("description")
        dimension = _dimension(schema)
        if error.validator_value == "string" and dimension is not None:
            want += f" ({dimension.description} with its unit, such as '{dimension.example}')"
            described = "unit"
        elif error.validator_value == "string" and "pattern" in schema and described:
            want += f" ({_lower_first(described).rstrip('.')})"
        got = _describe(instance)
        if not isinstance(instance, (dict, list)) and instance is not None:
            got += f" {_short(instance)}" if not isinstance(instance, bool) else ""
        message = f"expected {want}, got {got}"
        number = isinstance(instance, (int, Fraction)) and not isinstance(instance, bool)
        if number and "unit" in str(described or ""):
            message += ": units are never implicit, write the unit after the number"
        yield _Found(path, message, False)
        return
    if name == "enum":
        options = ", ".join(str(v) for v in error.validator_value)
        yield _Found(path, f"{_short(instance)} is not one of: {options}", False)
        return
    if name == "pattern":
        yield _unit_problem(path, schema, instance) or _Found(
            path, f"{_short(instance)} is not {_hint(schema)}", False
        )
        return
    if name == "format" and error.validator_value == "date":
        yield _Found(path, f"{_short(instance)} is not a calendar date (YYYY-MM-DD)", False)
        return
    if name in _LIMITS:
        shown = _short(instance)
        yield _Found(path, _LIMITS[name].format(value=shown, limit=error.validator_value), False)
        return
    if name in ("minItems", "minProperties", "minLength"):
        yield _Found(path, "must not be empty", False)
        return
    yield _Found(path, " ".join(str(error.message).split())[:200], False)


def _explain_choice(
    error: ValidationError, path: PathKey, schema: dict[str, Any], instance: Any
) -> Iterator[_Found]:
    """A `oneOf`/`anyOf` failure: explain the branch the value was evidently meant for."""
    branches: list[Any] = list(error.validator_value)
    if not error.context:
        # oneOf with more than one branch valid: each branch is a `required` alternative.
        fields = [
            str(b["required"][0]) for b in branches if isinstance(b, dict) and "required" in b
        ]
        if fields:
            yield _Found(path, "give exactly one of: " + ", ".join(fields), False)
        else:
            yield _Found(path, "matches more than one of the accepted forms", False)
        return
    if all(sub.validator == "required" for sub in error.context):
        fields = sorted({str(sub.validator_value[0]) for sub in error.context})
        yield _Found(path, "give exactly one of: " + ", ".join(fields), False)
        return
    by_branch: dict[int, list[ValidationError]] = {}
    for sub in error.context:
        by_branch.setdefault(int(sub.relative_schema_path[0]), []).append(sub)
    wrong_type = {
        index
        for index, subs in by_branch.items()
        if any(s.validator == "type" and not s.relative_path for s in subs)
    }
    fitting = [subs for index, subs in sorted(by_branch.items()) if index not in wrong_type]
    if not fitting:
        kinds = []
        for sub_list in by_branch.values():
            for sub in sub_list:
                if sub.validator == "type" and not sub.relative_path:
                    kinds.append(_expected_types(sub.validator_value))
        want = " or ".join(dict.fromkeys(kinds)) or "another form"
        yield _Found(path, f"expected {want}, got {_describe(instance)}", False)
        return
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped,unused-ignore]

    best = best_match(sub for subs in fitting for sub in subs)
    if best is None:  # pragma: no cover - fitting is never empty here
        return
    yield from _explain(best)


def _unit_problem(path: PathKey, schema: dict[str, Any], instance: Any) -> _Found | None:
    """The unit parser's reading of a value that fails a quantity pattern, if it refuses it
    (in the words `Builder.quantity` uses for the same value)."""
    found = _dimension_of(schema)
    if found is None:
        return None
    dimension, bits, measured = found
    try:
        parse_quantity(instance, dimension, positive=True, bits=bits, measured=measured)
    except QuantityError as exc:
        message = exc.message + (f" ({exc.hint})" if exc.hint else "")
        return _Found(path, message, False, exc.column, units=True)
    return None  # the parser reads it: the pattern's own sentence says what is off


def _lower_first(text: str) -> str:
    """`A number` -> `a number`, but `ISO date` stays."""
    words = text.split(" ", 1)
    if len(words[0]) > 1 and words[0].isupper():
        return text
    return text[:1].lower() + text[1:]


def _hint(schema: Any) -> str:
    """A phrase describing what a pattern-constrained field accepts."""
    if not isinstance(schema, dict):
        return "valid"
    description = schema.get("description")
    if isinstance(description, str) and description:
        return "valid: " + _lower_first(description).rstrip(".")
    ref = str(schema.get("$ref", ""))
    if ref.endswith("/id"):
        return "a valid id: lower-case letters, digits and hyphens"
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        return f"valid: it must match the pattern {pattern}"
    return "valid"
