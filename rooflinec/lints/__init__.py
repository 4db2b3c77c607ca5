"""Catalog lints: provenance and plausibility checks, warnings unless `check --strict`.

Each lint is a function of a `LintContext` (the catalog, the date, every figure's trail)
returning diagnostics that point at the figure's own file:line:col, each with a stable
`code`:

| code | catches |
| --- | --- |
| lint-quote | a peak, bandwidth or capacity with no verbatim quote to trace to |
| lint-quote-number | a quote that does not contain the number it is said to back |
| lint-third-party | a figure citing a third party while the vendor's own source prints it |
| lint-source-kind | a source that does not say whether it is the vendor's or a third party's |
| lint-stale | a source read more than 18 months ago |
| lint-dates | a read date in the future, not a calendar date, or before the publication |
| lint-kind | a device with no kind, so plausibility falls back to the widest ranges |
| lint-plausibility | a bandwidth, peak or ridge point outside the range for the device's kind |
| lint-sparsity | a tensor peak of a sparse-printing vendor that does not say it is dense |
| lint-binary-units | a GiB/MiB figure among devices that give the same level in GB/MB |
| lint-alt-scale | an alternative ten or more times away from the main figure (a prefix slip) |
| lint-counts | an integer peak in FLOP/s, or a floating-point peak in OP/s |

Messages start with the code, so the plain-text report shows it. The provenance rules
("traces to a quote", "stale", "vendor's own") are `rooflinec.provenance`'s, shared with
the site and the export.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction

from rooflinec.catalog import Catalog, Device
from rooflinec.errors import Diagnostic, Location, json_path
from rooflinec.formatting import format_number, format_si
from rooflinec.loader import PathKey
from rooflinec.provenance import (
    SAME_VALUE,
    STALE_MONTHS,
    AlternativeTrail,
    FigureTrail,
    comparable_pipes,
    device_trails,
    is_vendor_own,
    relative,
    source_info,
)
from rooflinec.quantities import Dimension, QuantityError, parse_any

__all__ = ["LINTS", "PLAUSIBLE", "TENSOR_PRECISIONS", "Ranges", "current_date", "lint_catalog"]


TENSOR_PRECISIONS = frozenset({"tf32", "bf16", "fp8", "int8", "fp6", "fp4"})
"""Precisions run on matrix (tensor) pipes, where vendors print 2:4 sparse figures."""

G, T, P = 10**9, 10**12, 10**15


def current_date() -> datetime.date:
    """The date ages are measured against when none is given; tests monkeypatch it."""
    return datetime.date.today()


def _warn(location: Location, path: PathKey, code: str, message: str) -> Diagnostic:
    return Diagnostic(location, f"{code}: {message}", json_path(path), "warning", code)


def _at(trail: FigureTrail | AlternativeTrail, code: str, message: str) -> Diagnostic:
    return _warn(trail.location, trail.path, code, message)


def _si(value: Fraction, unit: str) -> str:
    return format_si(value, unit, digits=5)


@dataclass(frozen=True)
class LintContext:
    """What every lint reads: the catalog, the date ages are measured on, each device's trails."""

    catalog: Catalog
    today: datetime.date
    trails: dict[str, tuple[FigureTrail, ...]]

    @classmethod
    def of(cls, catalog: Catalog, today: datetime.date) -> LintContext:
        trails = {d: device_trails(catalog, d, today=today) for d in catalog.devices}
        return cls(catalog, today, trails)

    @property
    def devices(self) -> Iterable[Device]:
        return self.catalog.devices.values()

    def figures(self) -> Iterable[tuple[Device, FigureTrail]]:
        """Every (device, figure trail) pair, devices in catalog order."""
        for device in self.devices:
            for trail in self.trails[device.id]:
                yield device, trail


Lint = Callable[[LintContext], list[Diagnostic]]


def _what(trail: FigureTrail) -> str:
    """`bf16 peak 1979 TFLOP/s`, `dram bandwidth 3.35 TB/s`, `dram capacity 80 GB`."""
    return f"{trail.key} {trail.kind} {trail.printed}"


# --------------------------------------------------------------------------- quotes


def missing_quote(ctx: LintContext) -> list[Diagnostic]:
    """A figure with no verbatim quote from its source cannot be audited.

    A peak or bandwidth also traces to a quote when a same-pipe alternative with the same
    dense value (within 0.1 %) carries one: the method's figures cite documents whose
    wording was not captured, and a same-value alternative quotes another document.
    """
    out = []
    for _, trail in ctx.figures():
        if trail.trace is None:
            where = (
                ""
                if trail.kind == "capacity"
                else (" and no alternative with the same value (within 0.1 %) carries one")
            )
            out.append(
                _at(trail, "lint-quote", f"{_what(trail)} has no quote from its source{where}")
            )
    return out


_QUOTED_NUMBER = re.compile(r"[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")


_DECIMAL_COMMA = re.compile(r"[0-9]+,[0-9]+")


def _numbers(text: str) -> list[Fraction]:
    """Every number in a quote: "1,979" is 1979; "3,7" (a decimal comma) is also 3.7."""
    out = [Fraction(m.group().replace(",", "")) for m in _QUOTED_NUMBER.finditer(text)]
    out += [Fraction(m.group().replace(",", ".")) for m in _DECIMAL_COMMA.finditer(text)]
    return out


def _printed_number(printed: str) -> Fraction | None:
    match = _QUOTED_NUMBER.match(printed.strip())
    return Fraction(match.group().replace(",", "")) if match else None


def quote_backs(printed: str, quote: str) -> bool:
    """True if `quote` contains the number of `printed`, up to a power of 1000.

    `3.35 TB/s` is backed by "3,350 GB/sec", `918 TOPS` by "9.18e14", `1979 TFLOP/s`
    by "1,979 TFLOPS*": the prefix may differ, the digits may not.
    """
    number = _printed_number(printed)
    if number is None or number == 0:
        return True
    for candidate in _numbers(quote):
        if candidate == 0:
            continue
        ratio = candidate / number
        for k in range(-6, 7):
            if ratio == Fraction(1000) ** k:
                return True
    return False


def quote_number(ctx: LintContext) -> list[Diagnostic]:
    """A quote that does not contain its figure's number backs some other figure."""
    out = []
    for _, trail in ctx.figures():
        if trail.kind != "capacity" and trail.quote and not quote_backs(trail.printed, trail.quote):
            out.append(
                _at(
                    trail,
                    "lint-quote-number",
                    f"{_what(trail)}: its quote does not contain the number"
                    f' (quote: "{trail.quote}")',
                )
            )
        for alt in trail.alternatives:
            if alt.quote and not quote_backs(alt.printed, alt.quote):
                out.append(
                    _at(
                        alt,
                        "lint-quote-number",
                        f"alternative {alt.printed} of {trail.field}: its quote does not contain"
                        f' the number (quote: "{alt.quote}")',
                    )
                )
    return out


# --------------------------------------------------------------------------- sources


def third_party(ctx: LintContext) -> list[Diagnostic]:
    """A figure that cites a third party although the vendor's own source prints it.

    A third party here is any source that is not the device vendor's own: a reseller's
    copy, a blog, but also an OEM's product guide or another vendor's paper. The vendor's
    own source (kind `vendor`, published by the device's vendor) must print
    the same dense value (within 0.1 %) for the same figure of the same device: as one of
    the figure's alternatives, or as another figure of the device quoting the same row
    (the same quote text, as FP8 and FP6 share "FP8/FP6 Tensor Core"). A vendor source
    about another device, or another vendor's document quoting this one (AMD's white
    paper quoting an H200 figure), is no reason to prefer it.
    """
    out = []
    for device in ctx.devices:
        trails = ctx.trails[device.id]
        for trail in trails:
            if trail.source is None or is_vendor_own(trail.source, device.vendor):
                continue
            better = [
                (alt.source.id, alt.location)
                for alt in trail.alternatives
                if alt.source is not None
                and is_vendor_own(alt.source, device.vendor)
                and alt.comparable
                and abs(relative(alt.dense, trail.dense)) <= SAME_VALUE
            ]
            better += [
                (other.source.id, other.location)
                for other in trails
                if other is not trail
                and other.source is not None
                and other.quote
                and other.quote == trail.quote
                and is_vendor_own(other.source, device.vendor)
                and abs(relative(other.value, trail.value)) <= SAME_VALUE
            ]
            if better:
                sid, where = better[0]
                kind = "third-party" if trail.source.kind == "third-party" else "non-vendor"
                out.append(
                    _at(
                        trail,
                        "lint-third-party",
                        f"{_what(trail)} cites the {kind} source '{trail.source.id}', but"
                        f" {device.vendor}'s own source '{sid}' prints the same value (line"
                        f" {where.line}): cite '{sid}' with its quote and keep"
                        f" '{trail.source.id}' as an alternative",
                    )
                )
    return out


def source_kind(ctx: LintContext) -> list[Diagnostic]:
    """A source without `kind` cannot be told vendor from third party."""
    return [
        _warn(
            source.location,
            ("sources", sid),
            "lint-source-kind",
            f"source '{sid}' does not say its kind: add `kind: vendor` or `kind: third-party`",
        )
        for device in ctx.devices
        for sid, source in device.sources.items()
        if source.kind is None
    ]


def stale(ctx: LintContext) -> list[Diagnostic]:
    """A source read more than 18 months ago: the vendor may have revised its figures."""
    out = []
    for device in ctx.devices:
        for sid, source in device.sources.items():
            info = source_info(source, ctx.today)
            if info.stale:
                path: PathKey = ("sources", sid, "read")
                out.append(
                    _warn(
                        device.document.locate(path),
                        path,
                        "lint-stale",
                        f"source '{sid}' was read {info.read}, {info.age_months} months ago"
                        f" (more than {STALE_MONTHS}): read it again and update the figures"
                        " that cite it",
                    )
                )
    return out


def dates(ctx: LintContext) -> list[Diagnostic]:
    """Read dates in the future or not on the calendar, publications after their reading."""
    out = []
    for device in ctx.devices:
        for sid, source in device.sources.items():
            age = source_info(source, ctx.today).age_days
            problem = (
                "is not a calendar date" if age is None else "is in the future" if age < 0 else None
            )
            if problem:
                path: PathKey = ("sources", sid, "read")
                message = f"source '{sid}' read date {source.read} {problem}"
                out.append(_warn(device.document.locate(path), path, "lint-dates", message))
            if source.published and source.published > source.read:
                path = ("sources", sid, "published")
                message = f"source '{sid}' is dated {source.published}, after it was read"
                out.append(
                    _warn(
                        device.document.locate(path),
                        path,
                        "lint-dates",
                        f"{message} ({source.read})",
                    )
                )
    return out


# --------------------------------------------------------------------------- plausibility


@dataclass(frozen=True)
class Ranges:
    """Plausible data-sheet figures for one kind of device (SI base units, inclusive).

    `dram` is the off-chip bandwidth per chip; `on_chip` an L2/SRAM/L1 bandwidth; `peak`
    a dense peak at any precision; `ridge_wide` the DRAM ridge point (dense peak / DRAM
    bandwidth) of fp64 and fp32, `ridge_tensor` that of the narrower tensor precisions.
    The bandwidth and ridge ranges of each kind span less than 1000×, so a value shifted
    by one SI prefix from anywhere inside its range lands outside it, in both directions.
    Peak ranges are wider (FP64 on a graphics part to FP4 on a flagship); a peak off by a
    prefix shows in its ridge point instead.
    """

    dram: tuple[Fraction, Fraction]
    on_chip: tuple[Fraction, Fraction]
    peak: tuple[Fraction, Fraction]
    ridge_wide: tuple[Fraction, Fraction]
    ridge_tensor: tuple[Fraction, Fraction]


def _r(low: Fraction | int, high: Fraction | int) -> tuple[Fraction, Fraction]:
    return Fraction(low), Fraction(high)


PLAUSIBLE: dict[str | None, Ranges] = {
    # GPUs: from GDDR workstation cards (L40S: 864 GB/s) to HBM3e parts (8 TB/s) and the
    # announced HBM4 generation (~20 TB/s): 100 GB/s–30 TB/s (300× span). Caches (L2,
    # Infinity Cache, aggregate L1) run 2–500 TB/s: MI300X 17.2 and 34.4 TB/s. Dense
    # peaks run from FP64 on a graphics part (L40S 1.43 TFLOP/s) to dense FP4 (GB200
    # 10 PFLOP/s); 100 GFLOP/s–100 PFLOP/s. Ridges: FP64/FP32 1.6 (L40S FP64) to 106
    # (L40S FP32), so 1–200; tensor precisions 76 (A100 TF32) to 1250 (GB200 FP4), so
    # 10–5000 with room for the next generation.
    "gpu": Ranges(
        _r(100 * G, 30 * T), _r(2 * T, 500 * T), _r(100 * G, 100 * P), _r(1, 200), _r(10, 5000)
    ),
    # TPUs: HBM from v5e's 819 GB/s to Ironwood's 7.4 TB/s: 300 GB/s–20 TB/s (67×). VMEM
    # and CMEM are on-chip SRAM, 1–500 TB/s. Peaks from 10 TFLOP/s (older generations'
    # FP32) to 100 PFLOP/s. Ridges: BF16 166 (v5p) to INT8 1121 (v6e), so 20–5000;
    # Google publishes no FP64 or FP32 peak, 1–500 for any that comes.
    "tpu": Ranges(
        _r(300 * G, 20 * T), _r(1 * T, 500 * T), _r(10 * T, 100 * P), _r(1, 500), _r(20, 5000)
    ),
    # NPUs and AI accelerators: from edge NPUs on LPDDR (30–100 GB/s) to Gaudi 3's
    # 3.7 TB/s HBM2e: 30 GB/s–20 TB/s (667×). On-die SRAM 500 GB/s–400 TB/s (Gaudi 3:
    # 12.8 TB/s; wafer-scale parts are far above and are not chips in this sense).
    # Peaks from 1 TOP/s (edge) to 100 POP/s. Ridges: Gaudi 3 FP32 62, TF32 124, BF16
    # 453; edge NPUs INT8 ~400: 1–500 and 10–5000.
    "npu": Ranges(
        _r(30 * G, 20 * T), _r(500 * G, 400 * T), _r(1 * T, 100 * P), _r(1, 500), _r(10, 5000)
    ),
    # SoCs with unified memory: phone LPDDR (50 GB/s) to Apple's Ultra parts (819 GB/s)
    # and their successors: 50 GB/s–2 TB/s (40×). System-level caches 100 GB/s–50 TB/s.
    # GPU/NPU peaks 100 GFLOP/s–1 PFLOP/s. Ridges: M3 Max FP32 36; phone NPUs INT8
    # ~300: 1–200 and 5–2000.
    "soc": Ranges(
        _r(50 * G, 2 * T), _r(100 * G, 50 * T), _r(100 * G, 1 * P), _r(1, 200), _r(5, 2000)
    ),
    # CPUs: dual-channel desktop DDR5 (~60 GB/s) to 12-channel servers (~460 GB/s) and
    # HBM parts (~1 TB/s): 20 GB/s–2 TB/s (100×). Caches 200 GB/s–150 TB/s. Peaks
    # 10 GFLOP/s–200 TFLOP/s (matrix extensions). Ridges 0.5–100 (FP64 ~10) and 2–1000
    # (matrix extensions at BF16 reach a few hundred).
    "cpu": Ranges(
        _r(20 * G, 2 * T),
        _r(200 * G, 150 * T),
        _r(10 * G, 200 * T),
        _r(Fraction(1, 2), 100),
        _r(2, 1000),
    ),
    # No kind given: the widest ranges that hold for any chip above. They span more than
    # 1000×, so a prefix slip can stay inside them: lint-kind asks for the kind.
    None: Ranges(
        _r(50 * G, 50 * T), _r(50 * G, 1000 * P), _r(100 * G, 100 * P), _r(1, 5000), _r(1, 5000)
    ),
}


def _outside(value: Fraction, bounds: tuple[Fraction, Fraction]) -> bool:
    return not bounds[0] <= value <= bounds[1]


def _range_text(bounds: tuple[Fraction, Fraction], unit: str) -> str:
    if unit.endswith("/B"):
        return f"{format_number(bounds[0])}–{format_number(bounds[1])} {unit}"
    return f"{format_si(bounds[0], unit)}–{format_si(bounds[1], unit)}"


def _slip_hint(value: Fraction, bounds: tuple[Fraction, Fraction]) -> str:
    for factor in (Fraction(1000), Fraction(1, 1000)):
        if not _outside(value * factor, bounds):
            return f" ({'1000× too small' if factor > 1 else '1000× too large'}? check the prefix)"
    return ""


def kinds(ctx: LintContext) -> list[Diagnostic]:
    """A device without `kind` gets only the widest plausibility ranges."""
    return [
        _warn(
            device.document.locate(("id",)),
            ("id",),
            "lint-kind",
            f"device '{device.id}' has no kind (gpu, tpu, npu, soc, cpu): plausibility checks"
            " fall back to the widest ranges",
        )
        for device in ctx.devices
        if device.kind is None
    ]


def plausibility(ctx: LintContext) -> list[Diagnostic]:
    """Bandwidths, peaks and DRAM ridge points outside the range for the device's kind.

    On-chip levels must also be at least as fast as the level outside them (l2 ≥ dram,
    l1 ≥ l2). A ridge is only judged when its peak and bandwidth are each in range, so
    one slipped figure gives one warning.
    """
    out = []
    for device in ctx.devices:
        ranges = PLAUSIBLE.get(device.kind, PLAUSIBLE[None])
        kind = device.kind or "device of unknown kind"
        trails = {t.field: t for t in ctx.trails[device.id]}
        sane: dict[str, bool] = {}
        for field, trail in trails.items():
            if trail.kind == "capacity":
                continue
            if trail.kind == "bandwidth":
                bounds = ranges.dram if trail.key == "dram" else ranges.on_chip
                what = "DRAM bandwidth" if trail.key == "dram" else "on-chip bandwidth"
            else:
                bounds, what = ranges.peak, "dense peak"
            sane[field] = not _outside(trail.dense, bounds)
            if not sane[field]:
                out.append(
                    _at(
                        trail,
                        "lint-plausibility",
                        f"{_what(trail)}: a {what} of {_si(trail.dense, trail.unit)} is outside"
                        f" {_range_text(bounds, trail.unit)}, plausible for a {kind}"
                        f"{_slip_hint(trail.dense, bounds)}",
                    )
                )
        out += _level_order(trails)
        dram = trails.get("memory.dram")
        if dram is None or not sane.get("memory.dram"):
            continue
        for field, trail in trails.items():
            if trail.kind != "peak" or not sane[field]:
                continue
            precision = ctx.catalog.precisions.get(trail.key)
            tensor = trail.key in TENSOR_PRECISIONS or (
                precision is not None and precision.bytes < 4
            )
            bounds = ranges.ridge_tensor if tensor else ranges.ridge_wide
            ridge = trail.dense / dram.dense
            per_byte = trail.unit.removesuffix("/s") + "/B"
            if _outside(ridge, bounds):
                out.append(
                    _at(
                        trail,
                        "lint-plausibility",
                        f"{trail.key} ridge point against DRAM, {_si(trail.dense, trail.unit)}"
                        f" / {_si(dram.dense, 'B/s')} = {format_number(ridge)}"
                        f" {per_byte}, is outside {_range_text(bounds, per_byte)},"
                        f" plausible for a {kind}:"
                        f" is the peak or the DRAM bandwidth (line {dram.location.line}) off"
                        " by a prefix, or the sparsity wrong?",
                    )
                )
    return out


def _level_order(trails: dict[str, FigureTrail]) -> list[Diagnostic]:
    """On-chip levels slower than the level outside them (l2 below dram, l1 below l2)."""
    out = []
    outer = trails.get("memory.dram")
    for role in ("l2", "l1"):
        inner = trails.get(f"memory.{role}")
        if inner is None:
            continue
        if outer is not None and inner.dense < outer.dense:
            out.append(
                _at(
                    inner,
                    "lint-plausibility",
                    f"{_what(inner)} is slower than the {outer.key} bandwidth"
                    f" {outer.printed} (line {outer.location.line}): an on-chip level is"
                    " faster than the level outside it; is it per unit rather than aggregate,"
                    " or off by a prefix?",
                )
            )
        outer = inner
    return out


# --------------------------------------------------------------------------- sparsity

_DENSE = re.compile(r"\bdense\b", re.IGNORECASE)
PAIRED = Fraction(5, 100)  # a sparse alternative / 2 within 5 % of the peak pairs with it
HALF = Fraction(2, 100)  # a dense alternative within 2 % of half the peak betrays a sparse one


def _sparse_vendors(catalog: Catalog) -> set[str]:
    out = set()
    for device in catalog.devices.values():
        for peak in device.peaks.values():
            alts = peak.figure.alternatives
            if peak.sparsity == "2:4" or any(a.sparsity == "2:4" for a in alts):
                out.add(device.vendor.casefold())
    return out


def sparsity(ctx: LintContext) -> list[Diagnostic]:
    """A tensor peak of a vendor that prints sparse figures, not stated sparse or dense.

    A vendor prints sparse figures when any peak or alternative of any of its devices
    carries `sparsity: "2:4"` (NVIDIA, AMD). For such a vendor, a tf32/bf16/fp8/int8/fp6/
    fp4 peak on the matrix pipe without the flag must show that it is dense: a sparse
    alternative that pairs with it (A100: 312 with 624 at 2:4), or a note saying "dense".
    Whatever the note says, an alternative printing the same value with sparsity, or a
    dense alternative at half the value, means the flag was dropped. The flag on fp64 or
    fp32 (no structured-sparsity pipe) is a slip too.
    """
    out = []
    vendors = _sparse_vendors(ctx.catalog)
    for device in ctx.devices:
        for trail in ctx.trails[device.id]:
            if trail.kind != "peak":
                continue
            if trail.sparsity == "2:4":
                if trail.key not in TENSOR_PRECISIONS:
                    out.append(
                        _at(
                            trail,
                            "lint-sparsity",
                            f"{_what(trail)} is marked 2:4 sparse, but {trail.key} runs on"
                            " no structured-sparsity pipe: remove the flag",
                        )
                    )
                continue
            if (
                trail.key not in TENSOR_PRECISIONS
                or trail.pipe == "vector"
                or device.vendor.casefold() not in vendors
            ):
                continue
            message = _sparsity_problem(device, trail)
            if message:
                out.append(_at(trail, "lint-sparsity", message))
    return out


def _sparsity_problem(device: Device, trail: FigureTrail) -> str | None:
    alts = [a for a in trail.alternatives if comparable_pipes(a.pipe, trail.pipe)]
    same_sparse = [
        a
        for a in alts
        if a.sparsity == "2:4" and abs(relative(a.value, trail.value)) <= Fraction(1, 100)
    ]
    half_dense = [
        a for a in alts if a.sparsity is None and abs(relative(a.value, trail.value / 2)) <= HALF
    ]
    if same_sparse or half_dense:
        evidence = [f"{a.printed} at 2:4 sparsity (line {a.location.line})" for a in same_sparse]
        evidence += [f"{a.printed} dense (line {a.location.line})" for a in half_dense]
        return (
            f"{_what(trail)} is given as dense, but its alternatives say it was printed with"
            f' sparsity: {"; ".join(evidence)}. Add `sparsity: "2:4"` (the dense rate is'
            f" {_si(trail.value / 2, trail.unit)})"
        )
    paired = any(
        a.sparsity == "2:4" and abs(relative(a.dense, trail.value)) <= PAIRED for a in alts
    )
    if paired or (trail.note and _DENSE.search(trail.note)):
        return None
    return (
        f"{_what(trail)}: {device.vendor} prints tensor figures with 2:4 sparsity, and this"
        ' one states neither sparsity nor that it is dense. Add `sparsity: "2:4"` if it was'
        " printed with sparsity; otherwise give the sparse figure as an alternative or say"
        ' "dense" in the figure\'s note'
    )


# --------------------------------------------------------------------------- units


_DECIMAL_UNITS = re.compile(
    r"([0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?)\s*([kKMGTP]B(?:/s|ps)?)(?![a-zA-Z/])"
)


def _states_decimal(note: str | None, value: Fraction, dimension: Dimension) -> bool:
    """The note gives `value` in decimal units (within 1 %): "95 GiB is 102.0 GB"."""
    for number, unit in _DECIMAL_UNITS.findall(note or ""):
        try:
            quantity = parse_any(f"{number} {unit}")
        except QuantityError:
            continue
        close = abs(relative(quantity.value, value)) <= Fraction(1, 100)
        if quantity.dimension is dimension and close:
            return True
    return False


def binary_units(ctx: LintContext) -> list[Diagnostic]:
    """A GiB/MiB capacity (or GiB/s bandwidth) where other devices give the level in GB/MB.

    Comparisons across devices then mix units (95 GiB is 102 GB, 7 % more than it reads).
    The figure passes when its note gives the decimal equivalent, which the pages show.
    """
    out = []
    by_field: dict[str, list[FigureTrail]] = {}
    for _, trail in ctx.figures():
        if trail.kind != "peak":
            by_field.setdefault(trail.field, []).append(trail)
    for entries in by_field.values():
        decimal = [t.device for t in entries if not t.binary]
        for trail in entries:
            dimension = Dimension.BYTES if trail.kind == "capacity" else Dimension.BANDWIDTH
            peers = [d for d in decimal if d != trail.device]
            if not trail.binary or not peers or _states_decimal(trail.note, trail.value, dimension):
                continue
            others = ", ".join(peers[:3]) + (" and others" if len(peers) > 3 else "")
            out.append(
                _at(
                    trail,
                    "lint-binary-units",
                    f"{_what(trail)} is in binary units ({_si(trail.value, trail.unit)} in"
                    f" decimal) while {others} give their {trail.key} {trail.kind} in decimal"
                    " units: comparisons mix units. Give the decimal equivalent in the figure's"
                    " note, or the decimal figure the vendor prints",
                )
            )
    return out


def alt_scale(ctx: LintContext) -> list[Diagnostic]:
    """An alternative 10× or more away from its figure: a unit prefix slip, not a conflict."""
    out = []
    for _, trail in ctx.figures():
        for alt in trail.alternatives:
            if not alt.comparable or trail.dense == 0:
                continue
            ratio = alt.dense / trail.dense
            if Fraction(1, 10) < ratio < 10:
                continue
            shown = format_number(ratio) if ratio >= 1 else f"1/{format_number(1 / ratio)}"
            out.append(
                _at(
                    alt,
                    "lint-alt-scale",
                    f"alternative {alt.printed} of {trail.field} is {shown}× the figure"
                    f" {trail.printed}: a prefix slip (GB/s for TB/s?) rather than a"
                    " conflict; correct it, or give it a pipe if it is another pipe's rate",
                )
            )
    return out


def counts(ctx: LintContext) -> list[Diagnostic]:
    """Integer precisions count OP, floating-point ones FLOP: the unit must say which.

    Vendors print "INT8 … TFLOPS"; the value is the same, but the spec should write TOPS
    and keep the vendor's wording in the quote, so tables never call integer work FLOP.
    """
    out = []
    for device in ctx.devices:
        doc = device.document
        for pid, peak in device.peaks.items():
            precision = ctx.catalog.precisions.get(pid)
            if precision is None:
                continue
            written: list[tuple[str | None, PathKey, str]] = [
                (peak.figure.counts, ("compute", pid, "peak"), peak.figure.text)
            ]
            written += [
                (_counts_of(alt.text), ("compute", pid, "alternatives", i, "value"), alt.text)
                for i, alt in enumerate(peak.figure.alternatives)
            ]
            for counted, path, text in written:
                if counted is not None and counted != precision.unit:
                    right = "OP/s (TOPS)" if precision.unit == "OP" else "FLOP/s"
                    out.append(
                        _warn(
                            doc.locate(path),
                            path,
                            "lint-counts",
                            f"{pid} figure {text} counts {counted}, but {precision.label}"
                            f" counts {precision.unit}: write it in {right} and keep the"
                            " vendor's wording in the quote",
                        )
                    )
    return out


def _counts_of(text: str) -> str | None:
    try:
        return parse_any(text).counts
    except QuantityError:
        return None


# --------------------------------------------------------------------------- all lints

LINTS: list[Lint] = [
    missing_quote,
    quote_number,
    third_party,
    source_kind,
    stale,
    dates,
    kinds,
    plausibility,
    sparsity,
    binary_units,
    alt_scale,
    counts,
]


def lint_catalog(catalog: Catalog, *, today: datetime.date | None = None) -> list[Diagnostic]:
    """Every lint's warnings, in file order. `today` defaults to `current_date()`."""
    ctx = LintContext.of(catalog, today if today is not None else current_date())
    out: list[Diagnostic] = []
    for lint in LINTS:
        out.extend(lint(ctx))
    out.sort(key=Diagnostic.sort_key)
    return out
