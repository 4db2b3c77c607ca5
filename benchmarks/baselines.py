"""Baselines that rooflinec's compile engine is measured against, in the same run.

- `numpy_roofline`: the synthetic kernels' formulas written out by hand as numpy
  expressions over float64 shape arrays, and the roofline over the case × (device,
  precision) product by broadcasting: what a careful analyst would write for one known
  set of kernels, with no parsing, no exact arithmetic and no tie handling.
- `sympy_per_cell`: the textbook symbolic route, `expr.subs(shape)` per cell with
  exact sympy numbers for every output.

Both read their inputs from the same built `Catalog` (shapes, sustained peaks and
bandwidths), prepared outside the timed region.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from rooflinec.catalog import Catalog

if TYPE_CHECKING:
    from numpy.typing import NDArray

    Floats = NDArray[np.float64]

Array = Any  # a float64 array, or a scalar broadcast against one
_Fn = Callable[..., Array]

# The synthetic kernels' formulas (benchmarks/synth.py FAMILIES), by hand: flops, dram, l2.
NUMPY_FORMULAS: dict[str, tuple[_Fn, _Fn, _Fn]] = {
    "syn-gemm": (
        lambda M, N, K: 2 * M * N * K,
        lambda w, M, N, K: w * (M * K + K * N + M * N),
        lambda w, M, N, K: w * (M * K * np.ceil(N / 128) + K * N * np.ceil(M / 128) + M * N),
    ),
    "syn-gemv": (
        lambda M, K, B: 2 * M * K * B,
        lambda w, M, K, B: w * (M * K + K * B + M * B),
        lambda w, M, K, B: w * (M * K + K * B * np.ceil(M / 64) + M * B),
    ),
    "syn-attention": (
        lambda s, d, h: 4 * s**2 * d * h,
        lambda w, s, d, h: w * 4 * s * d * h,
        lambda w, s, d, h: w * h * (4 * s * d + 2 * s * d * np.ceil(s / np.maximum(d, 64))),
    ),
    "syn-attention-unfused": (
        lambda s, d, h: 4 * s**2 * d * h,
        lambda w, s, d, h: w * h * (4 * s * d + 4 * s * s),
        lambda w, s, d, h: w * h * (4 * s * d + 2 * s * s),
    ),
    "syn-conv2d": (
        lambda Nb, H, W, C, F, R, S: 2 * Nb * H * W * C * F * R * S,
        lambda w, Nb, H, W, C, F, R, S: w * (Nb * H * W * C + R * S * C * F + Nb * H * W * F),
        lambda w, Nb, H, W, C, F, R, S: (
            w
            * (
                Nb * H * W * C * np.minimum(R * S, 9)
                + R * S * C * F * np.ceil(Nb * H * W / 4096)
                + Nb * H * W * F
            )
        ),
    ),
    "syn-elementwise": (
        lambda n: n,
        lambda w, n: w * 3 * n,
        lambda w, n: w * 3 * n,
    ),
}

_SWEEP = np.array([0.5, 1.0, 2.0, 4.0])


@dataclass(frozen=True)
class NumpyInputs:
    """Float64 inputs: shape columns per kernel, and the (device, precision) pairs."""

    kernels: list[tuple[str, dict[str, Floats]]]  # kernel id, symbol -> (cases,) column
    widths: Floats  # (W,) bytes per value
    width_of: NDArray[np.intp]  # (DP,) index into widths
    peak: Floats  # (DP,) sustained dense peak
    dram: Floats  # (DP,) sustained bandwidth of the pair's device
    l2: Floats
    measured: Floats  # (cases, DP), NaN where no run was measured

    @property
    def cells(self) -> int:
        return int(self.measured.size)


def numpy_inputs(catalog: Catalog) -> NumpyInputs:
    """Everything `numpy_roofline` needs, from a synthetic catalog (not timed)."""
    widths: list[Fraction] = []
    width_of: list[int] = []
    peak: list[float] = []
    dram: list[float] = []
    l2: list[float] = []
    pairs: dict[tuple[str, str], int] = {}
    for device in catalog.devices.values():
        for pid in device.peaks:
            width = catalog.precisions[pid].bytes
            if width not in widths:
                widths.append(width)
            pairs[(device.id, pid)] = len(peak)
            width_of.append(widths.index(width))
            peak.append(float(device.peak(pid)))
            dram.append(float(device.bandwidth("dram")))
            l2.append(float(device.bandwidth("l2")))
    kernels = []
    cases = [c for k in catalog.kernels.values() for c in k.cases]
    measured = np.full((len(cases), len(peak)), np.nan)
    for kernel in catalog.kernels.values():
        columns = {
            name: np.array([c.shape[name] for c in kernel.cases], dtype=np.float64)
            for name in kernel.symbols
        }
        kernels.append((kernel.id, columns))
    for i, case in enumerate(cases):
        for m in case.measured:
            if m.rate is not None:
                measured[i, pairs[(m.device, m.precision)]] = float(m.rate)
    return NumpyInputs(
        kernels,
        np.array([float(w) for w in widths]),
        np.array(width_of, dtype=np.intp),
        np.array(peak),
        np.array(dram),
        np.array(l2),
        measured,
    )


def numpy_roofline(inp: NumpyInputs) -> dict[str, Floats]:
    """The roofline of every cell by hand-written numpy: the baseline of measurement (b)."""
    w = inp.widths[None, :]
    flops_parts, dram_parts, l2_parts = [], [], []
    for kernel_id, shape in inp.kernels:
        flops_fn, dram_fn, l2_fn = NUMPY_FORMULAS[kernel_id]
        args = [column[:, None] for column in shape.values()]
        flops_parts.append(flops_fn(*(column for column in shape.values())))
        dram_parts.append(dram_fn(w, *args))
        l2_parts.append(l2_fn(w, *args))
    flops = np.concatenate(flops_parts)  # (C,)
    intensity_dram = flops[:, None] / np.concatenate(dram_parts)  # (C, W)
    intensity_l2 = flops[:, None] / np.concatenate(l2_parts)
    dram = intensity_dram[:, inp.width_of] * inp.dram[None, :]  # (C, DP)
    l2 = intensity_l2[:, inp.width_of] * inp.l2[None, :]
    peak = inp.peak[None, :]
    memory = np.minimum(dram, l2)
    attainable = np.minimum(peak, memory)
    limited_by = np.where(peak <= memory, 0, np.where(dram <= l2, 1, 2)).astype(np.int8)
    return {
        "attainable": attainable.ravel(),
        "limited_by": limited_by.ravel(),
        "share_of_peak": (attainable / peak).ravel(),
        "time": (flops[:, None] / attainable).ravel(),
        "bandwidth_sweep": np.minimum(peak[..., None], memory[..., None] * _SWEEP).reshape(-1, 4),
        "peak_sweep": np.minimum(peak[..., None] * _SWEEP, memory[..., None]).reshape(-1, 4),
        "efficiency": (inp.measured / attainable).ravel(),
    }


# --------------------------------------------------------------------------- sympy


def sympy_per_cell(catalog: Catalog, cells: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """Each (case, device, precision) cell by sympy `subs`, exactly: the classic slow path.

    Expressions are built once per kernel (from the validated formula trees, as
    `Formula.expr` does); per cell, every formula is substituted and every output
    computed with sympy numbers. Returns the outputs so the work cannot be skipped.
    """
    import sympy

    by_case = {c.id: (k, c) for k in catalog.kernels.values() for c in k.cases}
    exprs = {
        k.id: (k.flops.expr, {lv: f.expr for lv, f in k.bytes.items()})
        for k in catalog.kernels.values()
    }
    out = []
    for case_id, device_id, precision_id in cells:
        kernel, case = by_case[case_id]
        flops_expr, bytes_exprs = exprs[kernel.id]
        device = catalog.devices[device_id]
        width = catalog.precisions[precision_id].bytes
        symbols = {s.name: s for e in (flops_expr, *bytes_exprs.values()) for s in e.free_symbols}
        values = {symbols[n]: sympy.Integer(v) for n, v in case.shape.items() if n in symbols}
        if "w" in symbols:
            values[symbols["w"]] = sympy.Rational(width.numerator, width.denominator)
        flops = flops_expr.subs(values)
        peak = sympy.Rational(*_ratio(device.peak(precision_id)))
        lines = {}
        for level, expr in bytes_exprs.items():
            if level in device.memory:
                bw = sympy.Rational(*_ratio(device.bandwidth(level)))
                lines[level] = flops / expr.subs(values) * bw
        attainable = sympy.Min(peak, *lines.values())
        limited_by = "compute" if attainable == peak else min(lines, key=lambda lv: lines[lv])
        out.append(
            {
                "attainable": attainable,
                "limited_by": limited_by,
                "share_of_peak": attainable / peak,
                "time": flops / attainable,
                "bandwidth_sweep": [
                    sympy.Min(peak, *(f * v for v in lines.values()))
                    for f in (sympy.Rational(1, 2), 1, 2, 4)
                ],
                "peak_sweep": [
                    sympy.Min(f * peak, *lines.values()) for f in (sympy.Rational(1, 2), 1, 2, 4)
                ],
            }
        )
    return out


def _ratio(value: Fraction) -> tuple[int, int]:
    return value.numerator, value.denominator
