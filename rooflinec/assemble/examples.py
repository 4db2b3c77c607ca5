"""Worked examples typed: the outputs they expect, compared at their printed precision."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from rooflinec.assemble.builder import Builder
from rooflinec.assemble.reserve import reserve_share
from rooflinec.catalog import Example, ExampleFigures, ExampleMemory, Expectation
from rooflinec.engine.terms import LIMITED_BY
from rooflinec.errors import json_path
from rooflinec.loader import Document, PathKey
from rooflinec.quantities import Dimension

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
    "weights": Dimension.BYTES,
    "kv_cache": Dimension.BYTES,
}
_MEMORY_OUTPUTS = ("weights", "kv_cache", "max_batch", "max_context")


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
        about_model = "model" in ex
        if about_model != ("phase" in ex):
            builder.error(
                doc, path, "an example about a model names both model and phase", code="examples"
            )
        expects: list[Expectation] = []
        for j, e in enumerate(ex["expect"]):
            epath = (*path, "expect", j)
            exp = _expectation(builder, doc, epath, e, about_model=about_model)
            if exp is not None:
                expects.append(exp)
        out.append(
            Example(
                ex["id"],
                ex["name"],
                ex.get("description"),
                ex.get("device", ""),
                ex["precision"],
                tuple(ex.get("cases") or ()),
                tuple(expects),
                owner,
                doc.locate(path),
                ex.get("model"),
                ex.get("phase"),
                _figures(builder, doc, (*path, "figures"), ex.get("figures")),
                _memory(builder, doc, (*path, "memory"), ex.get("memory")),
            )
        )
    examples = tuple(out)
    builder.example_owners.append((doc, examples))
    return examples


def _figures(
    builder: Builder, doc: Document, path: PathKey, raw: dict[str, Any] | None
) -> ExampleFigures | None:
    """An example's own ceilings (another tool's figures), parsed exactly."""
    if raw is None:
        return None
    peak = builder.quantity(doc, (*path, "peak"), raw["peak"], Dimension.RATE)
    bandwidths = {
        level: builder.quantity(doc, (*path, "bandwidth", level), text, Dimension.BANDWIDTH)
        for level, text in raw["bandwidth"].items()
    }
    latency = (
        builder.quantity(doc, (*path, "latency"), raw["latency"], Dimension.TIME)
        if "latency" in raw
        else None
    )
    if peak is None or None in bandwidths.values() or ("latency" in raw and latency is None):
        return None
    return ExampleFigures(
        raw["name"],
        peak[0],
        {level: q[0] for level, q in bandwidths.items() if q is not None},
        latency[0] if latency is not None else None,
    )


def _memory(
    builder: Builder, doc: Document, path: PathKey, raw: dict[str, Any] | None
) -> ExampleMemory | None:
    """An example's memory settings, each parsed exactly."""
    if raw is None:
        return None
    if "model" not in doc.data["examples"][path[1]]:
        builder.error(
            doc, path, "memory settings belong to an example about a model", code="examples"
        )
        return None
    capacity = activations = reserve = None
    if "capacity" in raw:
        parsed = builder.quantity(doc, (*path, "capacity"), raw["capacity"], Dimension.BYTES)
        capacity = None if parsed is None else parsed[0]
    if "activations" in raw:
        parsed = builder.quantity(doc, (*path, "activations"), raw["activations"], Dimension.BYTES)
        activations = None if parsed is None else parsed[0]
    if "reserve" in raw:
        reserve = reserve_share(builder, doc, (*path, "reserve"), raw["reserve"])
    return ExampleMemory(
        capacity, activations, raw.get("activations"), reserve, dict(raw.get("variables") or {})
    )


def _expectation(
    builder: Builder, doc: Document, path: PathKey, e: dict[str, Any], *, about_model: bool = False
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
    if output in ("memory_bound_count", "max_batch", "max_context"):
        if not isinstance(raw, int):
            builder.error(doc, (*path, "value"), "expected a whole number", code="examples")
            return None
        value = raw
        tolerance = tolerance or Fraction(0)
    elif output == "limited_by":
        if raw not in LIMITED_BY:
            builder.error(
                doc, (*path, "value"), f"expected one of: {', '.join(LIMITED_BY)}", code="examples"
            )
            return None
        value = raw
        tolerance = Fraction(0)
    else:
        if not isinstance(raw, str):
            builder.error(
                doc, (*path, "value"), "expected a quantity with its unit", code="examples"
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
    if about_model:
        problem = None
        if e.get("case"):
            problem = "an example about a model names steps, not cases"
        elif output in ("peak", "bandwidth", "ridge", "memory_bound_count", "share_of_peak"):
            problem = f"{output} is not an output of a model or its steps"
        elif output in _MEMORY_OUTPUTS and e.get("step"):
            problem = f"{output} is the whole pass's memory ledger's, not a step's"
        elif output in ("intensity", "limited_by") and not e.get("step"):
            problem = f"an expected {output} names the step it is for"
        elif output == "efficiency" and e.get("step"):
            problem = "efficiency is the whole pass's, not a step's"
        if problem is not None:
            builder.error(doc, path, problem, code="examples")
            return None
    elif e.get("step"):
        builder.error(
            doc, (*path, "step"), "a step belongs to an example about a model", code="examples"
        )
        return None
    elif output in _MEMORY_OUTPUTS:
        builder.error(doc, path, f"{output} belongs to an example about a model", code="examples")
        return None
    elif needs_case and not e.get("case"):
        builder.error(doc, path, f"an expected {output} names the case it is for", code="examples")
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
        e.get("step"),
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
