"""Worked examples typed: the outputs they expect, compared at their printed precision."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from rooflinec.assemble.builder import Builder
from rooflinec.assemble.reserve import reserve_share
from rooflinec.catalog import (
    INTERCONNECT_ROLES,
    Deployment,
    Example,
    ExampleFabric,
    ExampleFigures,
    ExampleMemory,
    Expectation,
)
from rooflinec.engine.terms import LIMITED_BY, MODEL_LIMITS
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
    "time_by_limit": Dimension.TIME,
    "collective_time": Dimension.TIME,
    "time_overlapped": Dimension.TIME,
}
_MEMORY_OUTPUTS = ("weights", "kv_cache", "max_batch", "max_context")
# Outputs of a model's whole pass over chips, not of a step or a case.
_PASS_OUTPUTS = ("time_by_limit", "collective_time", "time_overlapped")


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
                _deployment(builder, doc, (*path, "deployment"), ex),
                _routing(builder, doc, (*path, "routing"), ex),
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
    interconnect = {
        role: _fabric(builder, doc, (*path, "interconnect", role), entry)
        for role, entry in (raw.get("interconnect") or {}).items()
    }
    if "interconnect" in raw and "deployment" not in doc.data["examples"][path[1]]:
        builder.error(
            doc,
            (*path, "interconnect"),
            "interconnect figures belong to an example with a deployment",
            code="examples",
        )
        return None
    if peak is None or None in bandwidths.values() or ("latency" in raw and latency is None):
        return None
    if None in interconnect.values():
        return None
    return ExampleFigures(
        raw["name"],
        peak[0],
        {level: q[0] for level, q in bandwidths.items() if q is not None},
        latency[0] if latency is not None else None,
        {role: f for role, f in interconnect.items() if f is not None},
    )


def _fabric(
    builder: Builder, doc: Document, path: PathKey, raw: dict[str, Any]
) -> ExampleFabric | None:
    """One interconnect level of an example's figures, per chip and direction, exactly."""
    bandwidth = builder.quantity(
        doc, (*path, "bandwidth"), raw["bandwidth"], Dimension.BANDWIDTH, bits=True
    )
    latency = (
        builder.quantity(doc, (*path, "latency"), raw["latency"], Dimension.TIME)
        if "latency" in raw
        else None
    )
    if bandwidth is None or ("latency" in raw and latency is None):
        return None
    # A bidirectional figure sums both directions: one direction gets half, as for a device.
    per_direction = bandwidth[0] / 2 if raw["direction"] == "bidirectional" else bandwidth[0]
    return ExampleFabric(
        per_direction,
        raw.get("domain"),
        raw.get("topology"),
        raw.get("reduction") == "in-network",
        None if latency is None else latency[0],
    )


def _routing(builder: Builder, doc: Document, path: PathKey, ex: dict[str, Any]) -> str | None:
    """An example's routing of the model's experts: only an example about a model has one
    (whether the model has experts is checked with the catalog)."""
    routing: str | None = ex.get("routing")
    if routing is not None and "model" not in ex:
        builder.error(doc, path, "a routing belongs to an example about a model", code="examples")
        return None
    return routing


def _deployment(
    builder: Builder, doc: Document, path: PathKey, ex: dict[str, Any]
) -> Deployment | None:
    """An example's split over chips: only an example about a model has one."""
    raw = ex.get("deployment")
    if raw is None:
        return None
    if "model" not in ex:
        builder.error(
            doc, path, "a deployment belongs to an example about a model", code="examples"
        )
        return None
    deployment = Deployment(raw.get("tp", 1), raw.get("pp", 1), raw.get("ep", 1), raw.get("chips"))
    problem = deployment.problem()
    if problem is not None:
        builder.error(doc, path, f"not a deployment: {problem}", code="examples")
        return None
    return deployment


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
    if output == "crossover":
        # A whole number, or "none": memory bound all the way to 10^12
        if not (isinstance(raw, int) or raw == "none"):
            builder.error(
                doc, (*path, "value"), "expected a whole number or 'none'", code="examples"
            )
            return None
        value = raw
        tolerance = Fraction(0)
    elif output in ("memory_bound_count", "max_batch", "max_context"):
        if not isinstance(raw, int):
            builder.error(doc, (*path, "value"), "expected a whole number", code="examples")
            return None
        value = raw
        tolerance = tolerance or Fraction(0)
    elif output == "limited_by":
        # A model's pass or collective step can be held by an interconnect level too.
        limits = MODEL_LIMITS if about_model else LIMITED_BY
        if raw not in limits:
            builder.error(
                doc, (*path, "value"), f"expected one of: {', '.join(limits)}", code="examples"
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
    if output == "crossover" and (about_model or not e.get("case") or not e.get("symbol")):
        builder.error(
            doc,
            path,
            "an expected crossover names the case and the symbol varied",
            code="examples",
        )
        return None
    if e.get("symbol") and output != "crossover":
        builder.error(
            doc, (*path, "symbol"), "a symbol belongs to an expected crossover", code="examples"
        )
        return None
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
        elif output == "intensity" and not e.get("step"):
            problem = f"an expected {output} names the step it is for"
        elif output in ("efficiency", *_PASS_OUTPUTS) and e.get("step"):
            problem = f"{output} is the whole pass's, not a step's"
        elif output == "time_by_limit" and not e.get("level"):
            problem = "an expected time_by_limit names the level it is for"
        elif e.get("level") in INTERCONNECT_ROLES and output not in ("bytes", "time_by_limit"):
            problem = f"{output} is not per interconnect level (bytes and time_by_limit are)"
        if problem is not None:
            builder.error(doc, path, problem, code="examples")
            return None
    elif e.get("step"):
        builder.error(
            doc, (*path, "step"), "a step belongs to an example about a model", code="examples"
        )
        return None
    elif output in (*_MEMORY_OUTPUTS, *_PASS_OUTPUTS):
        builder.error(doc, path, f"{output} belongs to an example about a model", code="examples")
        return None
    elif e.get("level") in INTERCONNECT_ROLES:
        builder.error(
            doc,
            (*path, "level"),
            "an interconnect level belongs to an example about a model",
            code="examples",
        )
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
        e.get("symbol"),
        int(path[-1]) if isinstance(path[-1], int) else 0,
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
