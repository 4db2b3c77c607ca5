"""The device catalog as CSV or JSON with provenance columns, for people who keep spreadsheets.

One row per device figure (peak, bandwidth, capacity; an interconnect level's bandwidth
and the domain, latency and share it quotes; power; price), built from `rooflinec.provenance`:
the figure as printed, its dense and sustained values in SI base units, its source, the
verbatim quote it traces to, and how far its alternatives spread. This is an output edge:
exact values become floats here. `rooflinec export [--specs DIR] [--format csv|json]`
writes it.

Text cells of the CSV that a spreadsheet would run as a formula (a vendor `=cmd|…`, a
quote `+SUM(1)`) start with a single quote (`export.spreadsheet_text`); the JSON keeps
every text as written.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from rooflinec import __version__
from rooflinec.catalog import Catalog
from rooflinec.outputs.cells import num, spreadsheet_text
from rooflinec.provenance import RATE_KINDS, FigureTrail, device_trails, trails

__all__ = [
    "COLUMNS",
    "catalog_csv",
    "catalog_json",
    "catalog_rows",
]

COLUMNS: tuple[str, ...] = (
    "device",
    "vendor",
    "field",
    "figure",  # peak, bandwidth, capacity, interconnect, domain, latency, share, power, price
    "key",  # the precision, memory level or interconnect role
    "label",
    "printed",
    "unit",  # SI base unit of `dense` and `sustained`
    "sparsity",
    "pipe",
    "direction",  # an interconnect bandwidth's: bidirectional, per-direction or unstated
    "power_kind",  # TDP, TBP, TGP or max, as printed
    "price_date",  # the day a price was on the provider's page
    "dense",  # per chip: dense (a peak), per direction (an interconnect bandwidth)
    "sustained",
    "source",
    "source_title",
    "publisher",
    "url",
    "source_kind",
    "read",
    "quote",
    "quote_source",  # the source of the quote traced to, when it is an alternative's
    "alternatives",
    "spread_min",
    "spread_max",
    "conflict",
)


def _number(value: Fraction | None) -> float | int | None:
    return None if value is None else num(value)


def _row(trail: FigureTrail) -> dict[str, Any]:
    source = trail.source
    trace = trail.trace
    spread = trail.spread
    sustained = trail.final if trail.kind in RATE_KINDS else None
    return {
        "device": trail.device,
        "vendor": trail.vendor,
        "field": trail.field,
        "figure": trail.kind,
        "key": trail.key,
        "label": trail.label,
        "printed": trail.printed,
        "unit": trail.unit,
        "sparsity": trail.sparsity,
        "pipe": trail.pipe,
        "direction": trail.direction,
        "power_kind": trail.detail if trail.kind == "power" else None,
        "price_date": trail.detail if trail.kind == "price" else None,
        "dense": num(trail.dense),
        "sustained": _number(sustained),
        "source": source.id if source else None,
        "source_title": source.title if source else None,
        "publisher": source.publisher if source else None,
        "url": source.url if source else None,
        "source_kind": source.kind if source else None,
        "read": source.read if source else None,
        "quote": trace.quote if trace else None,
        "quote_source": trace.source if trace and trace.alternative is not None else None,
        "alternatives": len(trail.alternatives),
        "spread_min": _number(spread[0]) if spread else None,
        "spread_max": _number(spread[1]) if spread else None,
        "conflict": trail.conflict,
    }


def catalog_rows(catalog: Catalog, *, today: datetime.date | None = None) -> list[dict[str, Any]]:
    """One flat record per device figure, keyed by `COLUMNS`; numbers as JSON numbers."""
    return [_row(t) for t in trails(catalog, today=today)]


def _detail(trail: FigureTrail) -> dict[str, Any]:
    """A row whose `alternatives` lists each one instead of counting them, plus the steps."""
    record = _row(trail)
    record["steps"] = [
        {"step": s.operation, "label": s.label, "factor": num(s.factor), "result": num(s.result)}
        for s in trail.steps
    ]
    record["alternatives"] = [
        {
            "printed": a.printed,
            "dense": num(a.dense),
            "sparsity": a.sparsity,
            "pipe": a.pipe,
            "source": a.source.id if a.source else None,
            "source_kind": a.source.kind if a.source else None,
            "quote": a.quote,
            "note": a.note,
            "relative": num(a.relative),
            "comparable": a.comparable,
            "conflicting": a.conflicting,
        }
        for a in trail.alternatives
    ]
    return record


def catalog_json(catalog: Catalog, *, today: datetime.date | None = None) -> str:
    """The catalog's figures with their steps and alternatives, as one JSON document."""
    return catalog_json_of(
        figure for d in catalog.devices for figure in device_json(catalog, d, today=today)
    )


def device_json(
    catalog: Catalog, device: str, *, today: datetime.date | None = None
) -> tuple[str, ...]:
    """Each figure of one device as `catalog_json` writes it in its list of figures."""
    return tuple(
        _FIGURE_INDENT
        + json.dumps(_detail(t), indent=2, ensure_ascii=False).replace("\n", "\n" + _FIGURE_INDENT)
        for t in device_trails(catalog, device, today=today)
    )


_FIGURE_INDENT = "    "  # a figure's place in `{"figures": [...]}` written with indent=2


def catalog_json_of(figures: Iterable[str]) -> str:
    """The document `catalog_json` writes, from its figures (`device_json`): byte for byte
    `json.dumps({"rooflinec": ..., "figures": [...]}, indent=2, ensure_ascii=False)`."""
    listed = ",\n".join(figures)
    body = f"[\n{listed}\n  ]" if listed else "[]"
    head = json.dumps(__version__, ensure_ascii=False)
    return f'{{\n  "rooflinec": {head},\n  "figures": {body}\n}}\n'


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, int):
        return str(value)
    return spreadsheet_text(str(value))


def catalog_csv(catalog: Catalog, *, today: datetime.date | None = None) -> str:
    """One row per device figure, `COLUMNS` as the header; empty cells where nothing applies."""
    lines = [device_csv(catalog, d, today=today) for d in catalog.devices]
    return catalog_csv_of(lines)


def device_csv(catalog: Catalog, device: str, *, today: datetime.date | None = None) -> str:
    """The lines of one device's figures in `catalog_csv`."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for trail in device_trails(catalog, device, today=today):
        row = _row(trail)
        writer.writerow([_cell(row[c]) for c in COLUMNS])
    return buffer.getvalue()


def catalog_csv_of(devices: Iterable[str]) -> str:
    """The document `catalog_csv` writes, from each device's lines (`device_csv`)."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(COLUMNS)
    return buffer.getvalue() + "".join(devices)
