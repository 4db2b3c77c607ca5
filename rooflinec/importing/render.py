"""Entries as the YAML a kernel spec's `measured` list holds, written exactly."""

from __future__ import annotations

import io
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from rooflinec.formatting import exact_decimal
from rooflinec.importing.entries import Entry

_TIME_UNITS = (("s", 1), ("ms", 10**3), ("µs", 10**6), ("ns", 10**9), ("ps", 10**12))


def time_text(seconds: Fraction) -> str:
    """A time with the unit that puts it in [1, 1000), exactly where a decimal can."""
    unit, scale = next(((u, s) for u, s in _TIME_UNITS if seconds * s >= 1), _TIME_UNITS[-1])
    scaled = seconds * scale
    text = exact_decimal(scaled)
    return f"{text} {unit}" if text is not None else f"{float(scaled):.12g} {unit}"


def count(value: Fraction, unit: str) -> int | str:
    """A whole count as an integer; any other with its unit ('1536.5 B')."""
    if value.denominator == 1:
        return int(value)
    text = exact_decimal(value)
    return f"{text if text is not None else float(value)} {unit}"


def entry_map(entry: Entry, source: str, unit: str) -> CommentedMap:
    """The `measured` item of an entry, in the spec's field order."""
    out = CommentedMap()
    out["device"] = entry.device
    out["precision"] = entry.precision
    out["time"] = time_text(entry.time)
    out["launches"] = entry.launches
    if entry.flops is not None:
        out["flops"] = count(entry.flops, unit)
    if entry.bytes:
        traffic = CommentedMap()
        for level, value in entry.bytes.items():
            traffic[level] = count(value, "B")
        traffic.fa.set_flow_style()
        out["bytes"] = traffic
    out["source"] = source
    if entry.note:
        out["note"] = entry.note
    return out


def yaml() -> YAML:
    """The round-trip writer, in the bundled specs' layout."""
    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 4096
    y.indent(mapping=2, sequence=4, offset=2)
    return y


def render(
    entries: list[Entry], source: tuple[str, dict[str, Any]], units: Mapping[str, str]
) -> str:
    """The entries and their source as YAML, one document per kernel file to edit.

    `units` maps each case to its counting unit (FLOP or OP).
    """
    sid, fields = source
    buffer = io.StringIO()
    kernels: dict[str, list[Entry]] = {}
    for entry in entries:
        kernels.setdefault(entry.kernel, []).append(entry)
    for n, (kernel, items) in enumerate(kernels.items()):
        doc = CommentedMap()
        doc["kernel"] = kernel
        doc["sources"] = CommentedMap({sid: CommentedMap(fields)})
        cases = CommentedMap()
        for entry in items:
            seq = cases.setdefault(entry.case, CommentedSeq())
            seq.append(entry_map(entry, sid, units[entry.case]))
        doc["measured"] = cases
        if n:
            buffer.write("---\n")
        yaml().dump(doc, buffer)
    return buffer.getvalue()
