"""Device files typed: peaks, memory levels, capacities, sustained shares, interconnect
levels, power and price."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from rooflinec.assemble.builder import Builder
from rooflinec.assemble.typed import TypedFile
from rooflinec.catalog import (
    INTERCONNECT_ROLES,
    LEVELS,
    Alternative,
    Core,
    Device,
    Fabric,
    Figure,
    Launch,
    MemoryLevel,
    Peak,
    Power,
    Precision,
    Price,
    Quoted,
    Source,
)
from rooflinec.loader import Document, PathKey
from rooflinec.quantities import Dimension


def build_device(
    builder: Builder, doc: Document, precisions: dict[str, Precision]
) -> Device | None:
    """A device, or None when its file has errors (each one reported)."""
    data = doc.data
    typed = TypedFile(builder, doc, "device")
    sources = builder.sources(doc)
    peaks: dict[str, Peak] = {}
    for pid, entry in data["compute"].items():
        path = ("compute", pid)
        builder.precision_ref(doc, path, pid, precisions, key=True)
        fig = _figure(builder, doc, path, entry, "peak", Dimension.RATE, sources)
        if fig is not None:
            peaks[pid] = Peak(pid, fig, entry.get("sparsity"), entry.get("pipe"))
    memory: dict[str, MemoryLevel] = {}
    for role in LEVELS:
        entry = data["memory"].get(role)
        if entry is None:
            continue
        path = ("memory", role)
        fig = _figure(builder, doc, path, entry, "bandwidth", Dimension.BANDWIDTH, sources)
        capacity = _capacity(
            builder, doc, (*path, "capacity"), entry.get("capacity"), sources, entry.get("chips", 1)
        )
        share = None
        if "sustained" in entry:
            parsed = builder.quantity(
                doc, (*path, "sustained"), entry["sustained"], Dimension.SHARE
            )
            share = parsed[0] if parsed else None
        if fig is not None:
            memory[role] = MemoryLevel(
                role, entry["label"], fig, capacity, share, entry.get("note")
            )
    sustained = data.get("sustained") or {}
    shares: dict[str, Fraction] = {}
    for which in ("compute", "memory"):
        shares[which] = Fraction(1)
        if which in sustained:
            parsed = builder.quantity(doc, ("sustained", which), sustained[which], Dimension.SHARE)
            if parsed:
                shares[which] = parsed[0]
    builder.source_ref(doc, ("sustained", "source"), sustained.get("source"), sources)
    launch = _launch(builder, doc, data.get("launch"), sources)
    interconnect = _interconnect(builder, doc, data.get("interconnect") or {}, sources)
    power = _power(builder, doc, data.get("power"), sources)
    price = _price(builder, doc, data.get("price"), sources)
    core = _core(builder, doc, data.get("core"), sources)
    finished = typed.finish()
    if finished is None:
        return None
    examples, versions = finished
    return Device(
        data["id"],
        data["name"],
        data["vendor"],
        data.get("kind"),
        data.get("form_factor"),
        data.get("description"),
        peaks,
        memory,
        shares["compute"],
        shares["memory"],
        sustained.get("note"),
        sources,
        tuple(data.get("assumptions") or ()),
        versions,
        examples,
        doc,
        data.get("family"),
        data.get("form"),
        launch,
        interconnect,
        power,
        price,
        core,
    )


def _interconnect(
    builder: Builder, doc: Document, data: dict[str, Any], sources: dict[str, Source]
) -> dict[str, Fabric]:
    """The device's interconnect levels by role, each typed like a memory level."""
    out: dict[str, Fabric] = {}
    for role in INTERCONNECT_ROLES:
        entry = data.get(role)
        if entry is None:
            continue
        path: PathKey = ("interconnect", role)
        fig = _figure(
            builder, doc, path, entry, "bandwidth", Dimension.BANDWIDTH, sources, bits=True
        )
        domain = _quoted(builder, doc, (*path, "domain"), entry.get("domain"), None, sources)
        latency = _quoted(
            builder, doc, (*path, "latency"), entry.get("latency"), Dimension.TIME, sources
        )
        sustained = _sustained(builder, doc, (*path, "sustained"), entry.get("sustained"), sources)
        if fig is None:
            continue
        out[role] = Fabric(
            role,
            entry["label"],
            fig,
            entry["direction"],
            domain,
            entry.get("topology"),
            entry.get("reduction"),
            latency,
            sustained,
            entry.get("note"),
        )
    return out


def _quoted(
    builder: Builder,
    doc: Document,
    path: PathKey,
    raw: Any,
    dimension: Dimension | None,
    sources: dict[str, Source],
) -> Quoted | None:
    """A domain (a count, `dimension` None) or a latency: bare, or with its own source."""
    if raw is None:
        return None
    own = isinstance(raw, dict)
    entry = raw if own else {"value": raw}
    where: PathKey = (*path, "value") if own else path
    builder.source_ref(doc, (*path, "source"), entry.get("source"), sources)
    value: Fraction
    if dimension is None:
        value = Fraction(entry["value"])
    else:
        parsed = builder.quantity(doc, where, entry["value"], dimension)
        if parsed is None:
            return None
        value = parsed[0]
    return Quoted(
        value,
        str(entry["value"]),
        entry.get("source"),
        entry.get("quote"),
        entry.get("note"),
        doc.locate(where),
    )


def _sustained(
    builder: Builder,
    doc: Document,
    path: PathKey,
    entry: dict[str, Any] | None,
    sources: dict[str, Source],
) -> Quoted | None:
    """A fabric's measured share, with its own source."""
    if entry is None:
        return None
    builder.source_ref(doc, (*path, "source"), entry.get("source"), sources)
    parsed = builder.quantity(doc, (*path, "share"), entry["share"], Dimension.SHARE, measured=True)
    if parsed is None:
        return None
    return Quoted(
        parsed[0],
        entry["share"],
        entry["source"],
        entry.get("quote"),
        entry.get("note"),
        doc.locate((*path, "share")),
    )


def _power(
    builder: Builder, doc: Document, entry: dict[str, Any] | None, sources: dict[str, Source]
) -> Power | None:
    """The device's printed power, when it gives one."""
    if entry is None:
        return None
    builder.source_ref(doc, ("power", "source"), entry["source"], sources)
    parsed = builder.quantity(doc, ("power", "value"), entry["value"], Dimension.POWER)
    if parsed is None:
        return None
    return Power(
        parsed[0],
        entry["value"],
        entry["kind"],
        entry["source"],
        entry.get("quote"),
        entry.get("note"),
        doc.locate(("power", "value")),
        entry.get("chips", 1),
    )


def _core(
    builder: Builder, doc: Document, entry: dict[str, Any] | None, sources: dict[str, Source]
) -> Core | None:
    """One compute core's shared memory, when the device quotes it."""
    if entry is None:
        return None
    builder.source_ref(doc, ("core", "source"), entry["source"], sources)
    path = ("core", "shared_memory")
    parsed = builder.quantity(doc, path, entry["shared_memory"], Dimension.BYTES)
    if parsed is None:
        return None
    if parsed[0].denominator != 1:
        builder.error(doc, path, "shared memory per core is a whole number of bytes", code="units")
        return None
    return Core(
        entry["label"],
        int(parsed[0]),
        entry["shared_memory"],
        entry["source"],
        entry.get("quote"),
        entry.get("note"),
        doc.locate(path),
    )


def _price(
    builder: Builder, doc: Document, entry: dict[str, Any] | None, sources: dict[str, Source]
) -> Price | None:
    """The device's on-demand price per chip-hour, when it gives one."""
    if entry is None:
        return None
    builder.source_ref(doc, ("price", "source"), entry["source"], sources)
    parsed = builder.quantity(doc, ("price", "value"), entry["value"], Dimension.PRICE)
    if parsed is None:
        return None
    return Price(
        parsed[0],
        entry["value"],
        str(entry["date"]),
        entry["source"],
        entry.get("quote"),
        entry.get("note"),
        doc.locate(("price", "value")),
    )


def _launch(
    builder: Builder, doc: Document, entry: dict[str, Any] | None, sources: dict[str, Source]
) -> Launch | None:
    """The device's latency floor, when it gives one."""
    if entry is None:
        return None
    builder.source_ref(doc, ("launch", "source"), entry["source"], sources)
    parsed = builder.quantity(doc, ("launch", "latency"), entry["latency"], Dimension.TIME)
    if parsed is None:
        return None
    return Launch(
        parsed[0],
        entry["latency"],
        entry["source"],
        entry.get("note"),
        doc.locate(("launch", "latency")),
    )


def _figure(
    builder: Builder,
    doc: Document,
    path: PathKey,
    entry: dict[str, Any],
    value_key: str,
    dimension: Dimension,
    sources: dict[str, Source],
    *,
    bits: bool = False,
) -> Figure | None:
    parsed = builder.quantity(doc, (*path, value_key), entry[value_key], dimension, bits=bits)
    builder.source_ref(doc, (*path, "source"), entry.get("source"), sources)
    alternatives: list[Alternative] = []
    for i, alt in enumerate(entry.get("alternatives") or []):
        apath = (*path, "alternatives", i)
        aq = builder.quantity(doc, (*apath, "value"), alt["value"], dimension)
        builder.source_ref(doc, (*apath, "source"), alt.get("source"), sources)
        if aq is not None:
            alternatives.append(
                Alternative(
                    aq[0],
                    alt["value"],
                    alt.get("sparsity"),
                    alt.get("pipe"),
                    alt["source"],
                    alt.get("quote"),
                    alt.get("note"),
                    doc.locate(apath),
                    alt.get("chips", 1),
                )
            )
    if parsed is None:
        return None
    value, q = parsed
    return Figure(
        value,
        entry[value_key],
        entry["source"],
        entry.get("quote"),
        entry.get("note"),
        tuple(alternatives),
        doc.locate((*path, value_key)),
        q.counts,
        q.binary,
        entry.get("chips", 1),
        q.bits,
    )


def _capacity(
    builder: Builder,
    doc: Document,
    path: PathKey,
    raw: Any,
    sources: dict[str, Source],
    chips: int,
) -> Figure | None:
    if raw is None:
        return None
    entry = raw if isinstance(raw, dict) else {"value": raw, "source": None}
    where = (*path, "value") if isinstance(raw, dict) else path
    parsed = builder.quantity(doc, where, entry["value"], Dimension.BYTES)
    builder.source_ref(doc, (*path, "source"), entry.get("source"), sources)
    if parsed is None:
        return None
    value, q = parsed
    return Figure(
        value,
        entry["value"],
        entry.get("source") or "",
        entry.get("quote"),
        entry.get("note"),
        (),
        doc.locate(path),
        None,
        q.binary,
        chips,
    )
