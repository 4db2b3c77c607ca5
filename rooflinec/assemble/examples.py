"""Worked examples typed: the outputs they expect, compared at their printed precision."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from rooflinec.assemble.builder import Builder
from rooflinec.catalog import Example, Expectation
from rooflinec.errors import json_path
from rooflinec.loader import Document, PathKey
from rooflinec.quantities import Dimension
from rooflinec.terms import LIMITED_BY

_OUTPUT_DIMENSIONS: dict[str, Dimension] = {
    "peak": Dimension.RATE,
    "bandwidth": Dimension.BANDWIDTH,
    "ridge": Dimension.INTENSITY,
    "intensity": Dimension.INTENSITY,
    "attainable": Dimension.RATE,
    "flops": Dimension.OPS,
    "bytes": Dimension.BYTES,
    "time": Dimension.TIME,
    "share_of_peak": Dimension.SHARE,
    "efficiency": Dimension.SHARE,
}


def build_examples(builder: Builder, doc: Document) -> tuple[Example, ...]:
    """The examples of a device, kernel or method file, kept for the cross-file check.

    They are built (and their references checked later) even when the file has other
    errors and is not built itself.
    """
    owner = doc.data["id"]
    out: list[Example] = []
    for i, ex in enumerate(doc.data.get("examples") or []):
        path: PathKey = ("examples", i)
        builder.claim(doc, (*path, "id"), ex["id"], "example")
        expects: list[Expectation] = []
        for j, e in enumerate(ex["expect"]):
            epath = (*path, "expect", j)
            exp = _expectation(builder, doc, epath, e)
            if exp is not None:
                expects.append(exp)
        out.append(
            Example(
                ex["id"],
                ex["name"],
                ex.get("description"),
                ex["device"],
                ex["precision"],
                tuple(ex.get("cases") or ()),
                tuple(expects),
                owner,
                doc.locate(path),
            )
        )
    examples = tuple(out)
    builder.example_owners.append((doc, examples))
    return examples


def _expectation(
    builder: Builder, doc: Document, path: PathKey, e: dict[str, Any]
) -> Expectation | None:
    output = e["output"]
    raw = e["value"]
    tolerance: Fraction | None = None
    if "tolerance" in e:
        parsed = builder.quantity(doc, (*path, "tolerance"), e["tolerance"], Dimension.SHARE)
        if parsed is None:
            return None
        tolerance = parsed[0]
    value: Fraction | int | str
    if output == "memory_bound_count":
        if not isinstance(raw, int):
            builder.out.add(doc.error((*path, "value"), "expected a whole number", code="examples"))
            return None
        value = raw
        tolerance = tolerance or Fraction(0)
    elif output == "limited_by":
        if raw not in LIMITED_BY:
            builder.out.add(
                doc.error(
                    (*path, "value"),
                    f"expected one of: {', '.join(LIMITED_BY)}",
                    code="examples",
                )
            )
            return None
        value = raw
        tolerance = Fraction(0)
    else:
        if not isinstance(raw, str):
            builder.out.add(
                doc.error((*path, "value"), "expected a quantity with its unit", code="examples")
            )
            return None
        parsed = builder.quantity(doc, (*path, "value"), raw, _OUTPUT_DIMENSIONS[output])
        if parsed is None:
            return None
        value = parsed[0]
        if tolerance is None:
            tolerance = printed_tolerance(raw, value)
    needs_case = output in (
        "flops",
        "bytes",
        "intensity",
        "attainable",
        "limited_by",
        "share_of_peak",
        "time",
        "efficiency",
    )
    if needs_case and not e.get("case"):
        builder.out.add(
            doc.error(path, f"an expected {output} names the case it is for", code="examples")
        )
        return None
    explicit = "tolerance" in e
    return Expectation(
        output,
        e.get("case"),
        e.get("level"),
        value,
        str(raw),
        tolerance,
        doc.locate(path),
        doc.locate((*path, "tolerance")) if explicit else None,
        json_path((*path, "tolerance")) if explicit else "",
    )


_NUMBER = re.compile(r"^\s*([0-9][0-9,]*)(?:\.([0-9]+))?(?:[eE]([-+]?[0-9]+))?")


def printed_tolerance(text: str, value: Fraction) -> Fraction:
    """Relative tolerance of a figure compared at the precision it is printed with.

    `295.373 FLOP/B` is good to half a unit in its last place: 0.0005 / 295.373.
    """
    match = _NUMBER.match(text)
    if match is None or value == 0:
        return Fraction(0)
    whole, decimals, exponent = match.groups()
    number = Fraction(whole.replace(",", "") + ("." + decimals if decimals else ""))
    if exponent:
        number *= Fraction(10) ** int(exponent)
    if number == 0:
        return Fraction(0)
    places = len(decimals) if decimals else 0
    half_ulp = Fraction(1, 2 * 10**places)
    if exponent:
        half_ulp *= Fraction(10) ** int(exponent)
    return half_ulp / number
