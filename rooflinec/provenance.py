"""Provenance: where every figure of every device comes from, and what was done to it.

For each device figure (a peak, a bandwidth, a capacity; an interconnect level's
bandwidth and the domain, latency and sustained share it quotes; the power and the price)
`device_trails` gives a frozen
`FigureTrail`: the figure as printed, its source (kind, date read, age), the verbatim quote
that backs it, the pipe, each transformation applied in order with its exact factor and
result (÷ 2 for a figure printed with 2:4 sparsity, × the sustained share), the final value
the compiler uses, and the alternatives (other printed values for the same figure) with
their dense values and relative difference from the main figure.

`conflicts` lists the figures whose alternatives disagree by more than 1 %, and
`source_usage` lists every source with the figures that lean on it. The site renders
these; the lints and the CSV/JSON export read them too, so there is one definition of
"traces to a quote", "spread", "conflict" and "stale".

Everything is exact (`Fraction`, SI base units); formatting happens at the edges.
"""

from __future__ import annotations

import calendar
import datetime
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from rooflinec.catalog import (
    Alternative,
    Catalog,
    Core,
    Device,
    Fabric,
    Figure,
    MemoryLevel,
    Power,
    Price,
    Quoted,
    Source,
)
from rooflinec.errors import Location
from rooflinec.formatting import format_percent, format_si
from rooflinec.loader import PathKey

__all__ = [
    "CONFLICT_THRESHOLD",
    "RATE_KINDS",
    "SAME_VALUE",
    "STALE_MONTHS",
    "AlternativeTrail",
    "FigureKind",
    "FigureTrail",
    "QuoteTrace",
    "SourceInfo",
    "SourceUsage",
    "SourceUse",
    "Step",
    "comparable_pipes",
    "conflicts",
    "device_trails",
    "is_vendor_own",
    "months_before",
    "relative",
    "source_info",
    "source_usage",
    "trails",
]

STALE_MONTHS = 18
"""A source read more than this many months ago is stale: vendors revise data sheets."""

SAME_VALUE = Fraction(1, 1000)
"""Two dense values within 0.1 % are the same figure (1678 and 1677 TFLOP/s are)."""

CONFLICT_THRESHOLD = Fraction(1, 100)
"""An alternative more than 1 % away from the main figure is a conflict to show."""

FigureKind = Literal[
    "peak", "bandwidth", "capacity", "interconnect", "domain", "latency", "share", "power", "price"
]
RATE_KINDS: frozenset[str] = frozenset({"peak", "bandwidth", "interconnect"})
"""The kinds of trail that are rates with a sustained value (a peak, a memory or link bandwidth)."""


# --------------------------------------------------------------------------- sources


def months_before(day: datetime.date, months: int) -> datetime.date:
    """The same day `months` calendar months earlier (the month's last day if it has fewer);
    the first day there is for a day too close to year 1 (a catalog dated 0001-01-01)."""
    year, month = divmod(day.year * 12 + day.month - 1 - months, 12)
    month += 1
    if year < datetime.MINYEAR:
        return datetime.date.min
    return datetime.date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def _parse_date(text: str | None) -> datetime.date | None:
    if not text:
        return None
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        return None


@dataclass(frozen=True)
class SourceInfo:
    """A source as a figure's audit trail shows it, with its age on `today`."""

    id: str
    title: str
    publisher: str
    url: str
    kind: Literal["vendor", "third-party", "measurement"] | None
    read: str  # ISO date, as written in the spec
    published: str | None
    note: str | None
    age_days: int | None  # days from `read` to today; None if `read` is not a calendar date
    stale: bool  # read more than STALE_MONTHS months before today
    location: Location  # the source's key in its spec file

    @property
    def age_months(self) -> int | None:
        """Whole months since the source was read (30.44-day months)."""
        return None if self.age_days is None else int(self.age_days / 30.436875)


def source_info(source: Source, today: datetime.date) -> SourceInfo:
    """`source` with its age and staleness on `today`."""
    read = _parse_date(source.read)
    return SourceInfo(
        source.id,
        source.title,
        source.publisher,
        source.url,
        source.kind,
        source.read,
        source.published,
        source.note,
        None if read is None else (today - read).days,
        read is not None and read < months_before(today, STALE_MONTHS),
        source.location,
    )


def is_vendor_own(source: SourceInfo | Source | None, vendor: str) -> bool:
    """True if `source` is the device vendor's own document.

    Its kind is `vendor` and its publisher names the device's vendor: NVIDIA's blog is
    NVIDIA's own for an H100, but AMD's white paper quoting an H200 figure is not, and
    neither is an OEM's product guide.
    """
    return (
        source is not None
        and source.kind == "vendor"
        and vendor.casefold() in source.publisher.casefold()
    )


# --------------------------------------------------------------------------- trails


@dataclass(frozen=True)
class Step:
    """One step from the printed figure to the value the compiler uses.

    `operation` is `printed` (the start, factor 1), `chips` (÷ N for a figure printed per
    card, package or system of N chips), `sparsity` (÷ 2 for a figure printed with 2:4
    structured sparsity), `direction` (÷ 2 for a link bandwidth printed as both directions
    summed) or `sustained` (× the sustained share). `result` is the exact value after the
    step, in `unit` (SI base units).
    """

    operation: Literal["printed", "chips", "sparsity", "direction", "sustained"]
    label: str  # "printed 1979 TFLOP/s", "÷ 2 (printed with 2:4 sparsity)", "× 100% sustained"
    factor: Fraction
    result: Fraction
    unit: str

    @property
    def text(self) -> str:
        """The step for people: `÷ 2 (printed with 2:4 sparsity) → 989.5 TFLOP/s`."""
        if self.operation == "printed":
            return self.label
        return f"{self.label} → {format_si(self.result, self.unit, digits=6)}"


@dataclass(frozen=True)
class AlternativeTrail:
    """Another printed value for the same figure, compared with the main one."""

    printed: str  # as written, "1835 TFLOP/s"
    value: Fraction  # as printed, SI
    dense: Fraction  # halved if printed with 2:4 sparsity
    sparsity: str | None
    pipe: str | None
    source: SourceInfo | None
    quote: str | None
    note: str | None
    relative: Fraction  # (dense - main dense) / main dense
    comparable: bool  # same pipe as the main figure (or either unstated)
    location: Location
    path: PathKey

    @property
    def conflicting(self) -> bool:
        """Comparable and more than 1 % away from the main figure."""
        return self.comparable and abs(self.relative) > CONFLICT_THRESHOLD


@dataclass(frozen=True)
class QuoteTrace:
    """The verbatim quote a figure traces to: its own, or a same-value alternative's."""

    quote: str
    source: str  # the source id the quote comes from
    alternative: int | None  # index into the trail's alternatives; None for the figure's own


@dataclass(frozen=True)
class FigureTrail:
    """A device figure's audit trail: printed → each transformation → final, with sources.

    `field` is `compute.bf16`, `memory.dram` (a bandwidth) or `memory.dram.capacity`;
    `key` is the precision id or the memory role. `steps` start with the printed figure
    and end with the value the compiler uses (`final`). `spread` is the (min, max)
    relative difference of the comparable alternatives from the main dense value.
    """

    device: str
    device_name: str
    vendor: str
    field: str
    kind: FigureKind
    key: str
    label: str  # the precision's label or the memory level's technology
    printed: str
    unit: str  # SI base unit of every value here: FLOP/s, OP/s, B/s or B
    value: Fraction  # as printed, SI
    binary: bool  # printed with a binary prefix (GiB, MiB/s)
    dense: Fraction  # the data-sheet dense value (the printed one unless sparse)
    sparsity: str | None
    pipe: str | None
    source: SourceInfo | None
    quote: str | None
    note: str | None
    trace: QuoteTrace | None
    steps: tuple[Step, ...]
    alternatives: tuple[AlternativeTrail, ...]
    location: Location
    path: PathKey
    direction: str | None = None  # a link bandwidth's: bidirectional, per-direction, unstated
    detail: str | None = None  # a power's kind (TDP, TBP, TGP, max), a price's date

    @property
    def final(self) -> Fraction:
        """The value the compiler uses (sustained, dense), or the capacity as printed."""
        return self.steps[-1].result

    @property
    def spread(self) -> tuple[Fraction, Fraction] | None:
        """(min, max) relative difference of the comparable alternatives; None if none."""
        rel = [a.relative for a in self.alternatives if a.comparable]
        return (min(rel), max(rel)) if rel else None

    @property
    def conflict(self) -> bool:
        """Some comparable alternative differs from the main figure by more than 1 %."""
        return any(a.conflicting for a in self.alternatives)


def relative(value: Fraction, reference: Fraction) -> Fraction:
    """(value - reference) / reference; 0 when the reference is 0."""
    return (value - reference) / reference if reference else Fraction(0)


def comparable_pipes(a: str | None, b: str | None) -> bool:
    """Figures of two pipes compare unless both are stated and differ (vector vs matrix)."""
    return a is None or b is None or a == b


def _dense(value: Fraction, sparsity: str | None, chips: int = 1) -> Fraction:
    per_chip = value / chips
    return per_chip / 2 if sparsity == "2:4" else per_chip


def _trace(
    figure: Figure, dense: Fraction, alternatives: tuple[AlternativeTrail, ...]
) -> QuoteTrace | None:
    """The figure's own quote, else the first same-pipe alternative within 0.1 % that has one."""
    if figure.quote:
        return QuoteTrace(figure.quote, figure.source, None)
    for index, alt in enumerate(alternatives):
        if alt.quote and alt.comparable and abs(relative(alt.dense, dense)) <= SAME_VALUE:
            return QuoteTrace(alt.quote, alt.source.id if alt.source else "", index)
    return None


class _DeviceTrails:
    """Builds one device's trails; sources are resolved once."""

    def __init__(self, catalog: Catalog, device: Device, today: datetime.date) -> None:
        self.catalog = catalog
        self.device = device
        self.sources = {sid: source_info(s, today) for sid, s in device.sources.items()}

    def source(self, sid: str | None) -> SourceInfo | None:
        return self.sources.get(sid) if sid else None

    def alternatives(
        self, base: PathKey, alts: tuple[Alternative, ...], main_dense: Fraction, pipe: str | None
    ) -> tuple[AlternativeTrail, ...]:
        doc = self.device.document
        out = []
        for i, alt in enumerate(alts):
            path: PathKey = (*base, "alternatives", i, "value")
            dense = _dense(alt.value, alt.sparsity, alt.chips)
            out.append(
                AlternativeTrail(
                    alt.text,
                    alt.value,
                    dense,
                    alt.sparsity,
                    alt.pipe,
                    self.source(alt.source),
                    alt.quote,
                    alt.note,
                    relative(dense, main_dense),
                    comparable_pipes(alt.pipe, pipe),
                    doc.locate(path),
                    path,
                )
            )
        return tuple(out)

    def trail(
        self,
        *,
        field: str,
        kind: FigureKind,
        key: str,
        label: str,
        unit: str,
        figure: Figure,
        path: PathKey,
        sparsity: str | None = None,
        pipe: str | None = None,
        share: Fraction | None = None,
        direction: str | None = None,
        detail: str | None = None,
    ) -> FigureTrail:
        dense = _dense(figure.value, sparsity, figure.chips)
        if direction == "bidirectional":
            dense /= 2
        steps = [Step("printed", f"printed {figure.text}", Fraction(1), figure.value, unit)]
        if figure.chips != 1:
            steps.append(
                Step(
                    "chips",
                    f"÷ {figure.chips} (printed for {figure.chips} chips; this device is one)",
                    Fraction(1, figure.chips),
                    figure.per_chip,
                    unit,
                )
            )
        if sparsity == "2:4":
            steps.append(
                Step("sparsity", "÷ 2 (printed with 2:4 sparsity)", Fraction(1, 2), dense, unit)
            )
        if direction == "bidirectional":
            steps.append(
                Step("direction", "÷ 2 (printed for both directions)", Fraction(1, 2), dense, unit)
            )
        if share is not None:
            sustained = f"× {format_percent(share)} sustained"
            steps.append(Step("sustained", sustained, share, dense * share, unit))
        alternatives = self.alternatives(path[:-1], figure.alternatives, dense, pipe)
        device = self.device
        return FigureTrail(
            device.id,
            device.name,
            device.vendor,
            field,
            kind,
            key,
            label,
            figure.text,
            unit,
            figure.value,
            figure.binary,
            dense,
            sparsity,
            pipe,
            self.source(figure.source),
            figure.quote,
            figure.note,
            _trace(figure, dense, alternatives),
            tuple(steps),
            alternatives,
            device.document.locate(path),
            path,
            direction,
            detail,
        )

    def all(self) -> tuple[FigureTrail, ...]:
        device = self.device
        out: list[FigureTrail] = []
        for pid, peak in device.peaks.items():
            precision = self.catalog.precisions.get(pid)
            out.append(
                self.trail(
                    field=f"compute.{pid}",
                    kind="peak",
                    key=pid,
                    label=precision.label if precision else pid,
                    unit=f"{precision.unit if precision else 'FLOP'}/s",
                    figure=peak.figure,
                    path=("compute", pid, "peak"),
                    sparsity=peak.sparsity,
                    pipe=peak.pipe,
                    share=device.compute_share,
                )
            )
        memory = device.memory.items()
        out += [self._memory_trail(role, level, "bandwidth") for role, level in memory]
        out += [
            self._memory_trail(role, level, "capacity")
            for role, level in memory
            if level.capacity is not None
        ]
        for role, fabric in device.interconnect.items():
            out += self.fabric(role, fabric)
        if device.core is not None:
            out.append(self.core(device.core))
        out += self.power_and_price()
        return tuple(out)

    def core(self, core: Core) -> FigureTrail:
        """One compute core's shared memory: what a tiled kernel's traffic reads."""
        return self.trail(
            field="core",
            kind="capacity",
            key="core",
            label=f"shared memory per {core.label}",
            unit="B",
            figure=Figure(
                Fraction(core.shared_memory),
                core.text,
                core.source,
                core.quote,
                core.note,
                (),
                core.location,
            ),
            path=("core", "shared_memory"),
        )

    def _memory_trail(
        self, role: str, level: MemoryLevel, kind: Literal["bandwidth", "capacity"]
    ) -> FigureTrail:
        """A memory level's bandwidth (with its share of the device) or its capacity."""
        path: PathKey = ("memory", role, kind)
        share: Fraction | None = None
        if kind == "bandwidth":
            field, unit, figure = f"memory.{role}", "B/s", level.bandwidth
            share = self.device.share_of(role)
        else:
            assert level.capacity is not None
            field, unit, figure = f"memory.{role}.capacity", "B", level.capacity
            # A capacity written as a mapping (value, note, ...) has its number at `value`.
            if isinstance(self.device.document.data["memory"][role]["capacity"], dict):
                path = (*path, "value")
        return self.trail(
            field=field,
            kind=kind,
            key=role,
            label=level.label,
            unit=unit,
            figure=figure,
            path=path,
            share=share,
        )

    def fabric(self, role: str, fabric: Fabric) -> list[FigureTrail]:
        """A link's bandwidth (per direction, then sustained), and the figures that quote
        their own source: its domain, its latency and its measured share."""
        base: PathKey = ("interconnect", role)
        out = [
            self.trail(
                field=f"interconnect.{role}",
                kind="interconnect",
                key=role,
                label=fabric.label,
                unit="B/s",
                figure=fabric.bandwidth,
                path=(*base, "bandwidth"),
                share=fabric.share,
                direction=fabric.direction,
            )
        ]
        quoted: tuple[tuple[str, FigureKind, Quoted | None, str], ...] = (
            ("domain", "domain", fabric.domain, "chips"),
            ("latency", "latency", fabric.latency, "s"),
            ("sustained", "share", fabric.sustained, ""),
        )
        for name, kind, figure, unit in quoted:
            if figure is None or figure.source is None:
                continue  # a bare figure is the level's own: its bandwidth's trail covers it
            value_key = "share" if name == "sustained" else "value"
            out.append(
                self.trail(
                    field=f"interconnect.{role}.{name}",
                    kind=kind,
                    key=role,
                    label=fabric.label,
                    unit=unit,
                    figure=_as_figure(figure),
                    path=(*base, name, value_key),
                )
            )
        return out

    def power_and_price(self) -> list[FigureTrail]:
        """The board power and the on-demand price, each where the device gives one."""
        power, price = self.device.power, self.device.price
        out = []
        if power is not None:
            out.append(self._priced("power", power, power.kind, "W", power.kind, power.chips))
        if price is not None:
            out.append(self._priced("price", price, "on demand", "USD/s", price.date))
        return out

    def _priced(
        self,
        kind: Literal["power", "price"],
        printed: Power | Price,
        label: str,
        unit: str,
        detail: str,
        chips: int = 1,
    ) -> FigureTrail:
        """A power or a price: the field, kind and key are all its name."""
        return self.trail(
            field=kind,
            kind=kind,
            key=kind,
            label=label,
            unit=unit,
            figure=_priced_figure(printed, chips=chips),
            path=(kind, "value"),
            detail=detail,
        )


def _priced_figure(printed: Power | Price, chips: int = 1) -> Figure:
    """A power or a price as a figure of the trail (no alternatives)."""
    return Figure(
        printed.value,
        printed.text,
        printed.source,
        printed.quote,
        printed.note,
        (),
        printed.location,
        chips=chips,
    )


def _as_figure(quoted: Quoted) -> Figure:
    """A fabric's domain, latency or share as a figure with its own source."""
    return Figure(
        quoted.value,
        quoted.text,
        quoted.source or "",
        quoted.quote,
        quoted.note,
        (),
        quoted.location,
    )


def _today(today: datetime.date | None) -> datetime.date:
    return today if today is not None else datetime.date.today()


class _TrailCache:
    """Each device's trails per day: one build reads them from the lints, the audit and
    sources pages and both catalog downloads. A device's trails read only its spec (its
    values and its document, whose lines the trails cite) and the catalog's precisions,
    so they are kept while those compare equal: `serve` compiles a new catalog per edit
    and works out only the edited device's trails again. Devices no longer in the
    catalog asked about are dropped."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._catalog: Catalog | None = None
        self._trails: dict[tuple[str, datetime.date], tuple[Any, tuple[FigureTrail, ...]]] = {}

    def get(self, catalog: Catalog, device: str, day: datetime.date) -> tuple[FigureTrail, ...]:
        with self._lock:
            if self._catalog is not catalog:
                self._catalog = catalog
                self._trails = {k: v for k, v in self._trails.items() if k[0] in catalog.devices}
            spec = catalog.devices[device]
            inputs = (spec, spec.document, catalog.precisions)
            found = self._trails.get((device, day))
            if found is None or found[0] != inputs:
                found = (inputs, _DeviceTrails(catalog, spec, day).all())
                self._trails[(device, day)] = found
            return found[1]


_CACHE = _TrailCache()


def device_trails(
    catalog: Catalog, device: str, *, today: datetime.date | None = None
) -> tuple[FigureTrail, ...]:
    """Every figure of one device: peaks, then bandwidths, then capacities, in spec order;
    then its interconnect levels (each bandwidth, then the domain, latency and share that
    cite their own source), its power and its price."""
    return _CACHE.get(catalog, device, _today(today))


def trails(catalog: Catalog, *, today: datetime.date | None = None) -> tuple[FigureTrail, ...]:
    """Every figure of every device, devices in catalog order."""
    day = _today(today)
    return tuple(t for d in catalog.devices for t in _CACHE.get(catalog, d, day))


def conflicts(catalog: Catalog, *, today: datetime.date | None = None) -> tuple[FigureTrail, ...]:
    """The figures across the catalog whose alternatives differ from them by more than 1 %."""
    return tuple(t for t in trails(catalog, today=today) if t.conflict)


# --------------------------------------------------------------------------- sources used


@dataclass(frozen=True)
class SourceUse:
    """One figure leaning on a source: as the figure's source or as an alternative's."""

    device: str
    field: str
    printed: str
    role: Literal["figure", "alternative"]
    quoted: bool  # the source's words are quoted for this figure
    location: Location


@dataclass(frozen=True)
class SourceUsage:
    """A source, the devices that declare it, and every figure that leans on it."""

    source: SourceInfo
    devices: tuple[str, ...]
    uses: tuple[SourceUse, ...]


def _uses(trail: FigureTrail) -> Iterable[tuple[str, SourceUse]]:
    cited: list[tuple[FigureTrail | AlternativeTrail, Literal["figure", "alternative"]]]
    cited = [(trail, "figure")]
    cited += [(alt, "alternative") for alt in trail.alternatives]
    for figure, role in cited:
        if figure.source is not None:
            yield (
                figure.source.id,
                SourceUse(
                    trail.device,
                    trail.field,
                    figure.printed,
                    role,
                    bool(figure.quote),
                    figure.location,
                ),
            )


def source_usage(
    catalog: Catalog, *, today: datetime.date | None = None
) -> tuple[SourceUsage, ...]:
    """Every source of every device with the figures that lean on it, oldest read first.

    Device files declare their own sources; entries with the same id, URL and read date
    are one source. A declared source that no figure cites is listed with no uses.
    """
    day = _today(today)
    groups: dict[tuple[str, str, str], tuple[SourceInfo, list[str], list[SourceUse]]] = {}
    for device in catalog.devices.values():
        sources = {sid: source_info(s, day) for sid, s in device.sources.items()}
        for info in sources.values():
            entry = groups.setdefault((info.id, info.url, info.read), (info, [], []))
            entry[1].append(device.id)
        for trail in _CACHE.get(catalog, device.id, day):
            for sid, use in _uses(trail):
                info = sources[sid]
                groups[(info.id, info.url, info.read)][2].append(use)
    out = [SourceUsage(info, tuple(devs), tuple(uses)) for info, devs, uses in groups.values()]
    out.sort(key=lambda u: (u.source.read, u.source.id))
    return tuple(out)
