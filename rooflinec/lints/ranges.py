"""Plausibility lints: figures within the ranges of their kind of device.

A bandwidth, peak or DRAM ridge point far outside the range is most often a unit prefix
slipped by a factor of 1000; a device without a kind gets only the widest ranges.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from rooflinec.errors import Diagnostic
from rooflinec.formatting import format_number, format_si
from rooflinec.lints.context import LintContext, _at, _si, _warn_at, _what
from rooflinec.lints.sparse import TENSOR_PRECISIONS
from rooflinec.provenance import FigureTrail

G, T, P = 10**9, 10**12, 10**15


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


# The least time of one kernel launch, on any kind of chip. Launch latencies are
# microseconds: torchao's roofline tools take 2 µs, measured as the GPU time of a
# one-element Triton kernel on an H100 (`KERNEL_LAUNCH_OVERHEAD_SEC = 0.002 * 0.001`,
# quoted in the bundled H100 spec), and a launch is a command a host sends and a chip's
# front end schedules, a few hundred cycles at the least: nothing launches in under
# 100 ns. A latency of 1 ms or more is a unit slipped (ms for µs, or seconds). The range
# spans 10,000x on purpose: it is there to catch a unit or prefix written wrong (5 s,
# 2 ms, 2 ns for 2 µs), not to judge a measurement.
LAUNCH_LATENCY = _r(Fraction(1, 10**7), Fraction(1, 10**3))


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
        _warn_at(
            device.document,
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
            if trail.kind not in ("peak", "bandwidth"):
                continue  # capacities, and the interconnect, power and price, have no range
            if trail.kind == "bandwidth":
                # An SRAM-only part's main memory (role dram, label SRAM) is on chip.
                off_chip = trail.key == "dram" and trail.label.casefold() != "sram"
                bounds = ranges.dram if off_chip else ranges.on_chip
                what = "DRAM bandwidth" if off_chip else "on-chip bandwidth"
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
        # The DRAM ridge ranges are for off-chip memory; an SRAM-only part's ridge is low.
        if dram is None or not sane.get("memory.dram") or dram.label.casefold() == "sram":
            continue
        for field, trail in trails.items():
            if trail.kind != "peak" or not sane.get(field):
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


def launch_latency(ctx: LintContext) -> list[Diagnostic]:
    """A device's launch latency outside `LAUNCH_LATENCY` (the same for every kind)."""
    out = []
    for device in ctx.devices:
        launch = device.launch
        if launch is None or not _outside(launch.latency, LAUNCH_LATENCY):
            continue
        low, high = (format_si(b, "s") for b in LAUNCH_LATENCY)
        out.append(
            _warn_at(
                device.document,
                ("launch", "latency"),
                "lint-plausibility",
                f"launch latency {launch.text}: one kernel launch takes microseconds;"
                f" {format_si(launch.latency, 's', digits=5)} is outside {low}–{high},"
                f" plausible for any chip{_slip_hint(launch.latency, LAUNCH_LATENCY)}",
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
