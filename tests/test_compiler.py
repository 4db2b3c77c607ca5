"""The compiler against the method's published figures and on specs it has not seen."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from rooflinec.assemble import catalog_or_raise
from rooflinec.engine.compiler import Compiled, compile_catalog
from tests.specfactory import BUNDLED, write_specs

T = 10**12


@pytest.fixture(scope="module")
def bundled() -> Compiled:
    return compile_catalog(catalog_or_raise(BUNDLED))


def row(compiled: Compiled, case: str, device: str, precision: str = "bf16"):  # type: ignore[no-untyped-def]
    result = compiled.result(case, device, precision)
    assert result is not None, (case, device, precision)
    return result


# The method's kernel table: intensity against DRAM at BF16, as published.
PUBLISHED_INTENSITY = {
    "gemm-large": ("2731", Fraction(8192, 3)),
    "gemv-decode": ("0.9995", Fraction(2 * 4096 * 4096, 2 * (4096 * 4096 + 2 * 4096))),
    "attention-fused": ("2048", Fraction(2048)),
    "attention-unfused": ("62.06", Fraction(4 * 4096**2 * 128, 2 * (4 * 4096 * 128 + 4 * 4096**2))),
    "conv3x3": (
        "287.2",
        Fraction(2 * 32 * 56 * 56 * 64 * 64 * 9, 2 * (2 * 32 * 56 * 56 * 64 + 9 * 64 * 64)),
    ),
    "elementwise-add": ("0.1667", Fraction(1, 6)),
}


@pytest.mark.parametrize("case", sorted(PUBLISHED_INTENSITY))
def test_intensity_matches_published_table(bundled: Compiled, case: str) -> None:
    """Each reference kernel's DRAM intensity is exact and rounds to the published figure."""
    printed, exact = PUBLISHED_INTENSITY[case]
    actual = row(bundled, case, "nvidia-h100-sxm").intensity["dram"]
    assert exact == actual
    digits = len(printed.split(".")[1]) if "." in printed else 0
    assert printed == f"{float(actual):.{digits}f}"


def test_worked_example(bundled: Compiled) -> None:
    """H100 SXM, BF16: ridge 295.373; GEMM compute bound at 989.5 TFLOP/s; 4 of 6 memory bound."""
    h100 = bundled.devices["nvidia-h100-sxm"]
    assert Fraction(9895, 10) * T == h100.peaks["bf16"]
    assert Fraction(335, 100) * T == h100.bandwidths["dram"]
    assert "295.373" == f"{float(h100.ridges['bf16']['dram']):.3f}"
    gemm = row(bundled, "gemm-large", "nvidia-h100-sxm")
    assert ("compute", Fraction(9895, 10) * T) == (gemm.limited_by, gemm.attainable)
    bounds = {c: row(bundled, c, "nvidia-h100-sxm").limited_by for c in PUBLISHED_INTENSITY}
    assert {"gemv-decode", "attention-unfused", "conv3x3", "elementwise-add"} == {
        c for c, b in bounds.items() if b != "compute"
    }


def test_conv_just_below_ridge_is_memory_bound(bundled: Compiled) -> None:
    """287 FLOP/B on a 295 FLOP/B ridge is memory bound, at intensity × bandwidth."""
    conv = row(bundled, "conv3x3", "nvidia-h100-sxm")
    assert "dram" == conv.limited_by
    assert conv.intensity["dram"] * Fraction(335, 100) * T == conv.attainable


# Ridge points of the method's five devices at BF16 (peak / DRAM bandwidth).
RIDGES = {
    "nvidia-h100-sxm": Fraction(9895, 10) / Fraction(335, 100),
    "nvidia-b200": Fraction(2250) / Fraction(77, 10),
    "amd-mi300x": Fraction(13074, 10) / Fraction(53, 10),
    "google-tpu-v5p": Fraction(459) / Fraction(2765, 1000),
    "intel-gaudi3": Fraction(1678) / Fraction(37, 10),
}


@pytest.mark.parametrize("device", sorted(RIDGES))
def test_cross_device_ridges(bundled: Compiled, device: str) -> None:
    """The cross-device comparison: each method device's BF16 ridge point, exactly."""
    assert RIDGES[device] == bundled.devices[device].ridges["bf16"]["dram"]


def test_precision_table_h100(bundled: Compiled) -> None:
    """The H100 precision table: dense peaks, with sparse-printed tensor figures halved."""
    expected = {
        "fp64": 67 * T,
        "fp32": 67 * T,
        "tf32": Fraction(4945, 10) * T,
        "bf16": Fraction(9895, 10) * T,
        "fp8": 1979 * T,
        "int8": 1979 * T,
    }
    assert expected == bundled.devices["nvidia-h100-sxm"].peaks


def test_sweeps_elementwise_h100(bundled: Compiled) -> None:
    """A memory-bound kernel scales with bandwidth and ignores a higher peak."""
    r = row(bundled, "elementwise-add", "nvidia-h100-sxm")
    base = Fraction(1, 6) * Fraction(335, 100) * T
    assert {"0.5": base / 2, "1": base, "2": 2 * base, "4": 4 * base} == r.bandwidth_sweep
    assert {"0.5": base, "1": base, "2": base, "4": base} == r.peak_sweep


def test_sweeps_gemm_h100(bundled: Compiled) -> None:
    """A compute-bound kernel follows the peak until the memory line caps it."""
    r = row(bundled, "gemm-large", "nvidia-h100-sxm")
    peak = Fraction(9895, 10) * T
    memory_line = Fraction(8192, 3) * Fraction(335, 100) * T
    assert {"0.5": peak / 2, "1": peak, "2": 2 * peak, "4": 4 * peak} == r.peak_sweep
    assert min(4 * peak, memory_line) == r.peak_sweep["4"]
    assert {k: peak for k in ("0.5", "1", "2", "4")} == r.bandwidth_sweep


def test_time_at_roofline(bundled: Compiled) -> None:
    """Time = operations / attainable: the 8192³ GEMM takes 1.111 ms at 989.5 TFLOP/s."""
    r = row(bundled, "gemm-large", "nvidia-h100-sxm")
    assert Fraction(2 * 8192**3) / (Fraction(9895, 10) * T) == r.time
    assert "1.111" == f"{float(r.time) * 1e3:.3f}"


def test_rows_only_where_device_has_peak(bundled: Compiled) -> None:
    """A precision a device has no peak for gives no row (TPU v5p has no FP64)."""
    assert bundled.result("gemm-large", "google-tpu-v5p", "fp64") is None
    assert bundled.result("gemm-large", "google-tpu-v5p", "bf16") is not None


THREE_LEVELS = """\
id: chip-three
name: Three-level chip
vendor: Test
compute:
  bf16: {peak: 800 TFLOP/s, source: s}
  int8: {peak: 1600 TOPS, source: s}
memory:
  dram: {label: LPDDR5X, bandwidth: 500 GB/s, capacity: 64 GiB, source: s}
  l2: {label: SRAM, bandwidth: 8 TB/s, capacity: 128 MiB, source: s, sustained: 50%}
  l1: {label: SRAM, bandwidth: 40 TB/s, source: s}
sustained: {compute: 80%, memory: 90%}
"""

TILED_GEMM = """\
id: tiled-gemm
name: Tiled GEMM
description: GEMM whose L2 and L1 traffic are modelled from tile sizes.
symbols: {M: rows, N: columns, K: depth, T: tile edge}
flops: 2*M*N*K
bytes:
  dram: w*(M*K + K*N + M*N)
  l2: w*(M*N*K/T + M*N*K/T + M*N)
  l1: w*(2*M*N*K/16)
cases:
  - id: tg-4k
    name: tiled 4096
    precision: bf16
    shape: {M: 4096, N: 4096, K: 4096, T: 128}
    measured:
      - {device: chip-three, precision: bf16, time: 1 s}
      - {device: chip-three, precision: int8, rate: 100 TOPS}
"""


def test_unseen_specs_three_levels_and_shares(tmp_path: Path) -> None:
    """Three levels, shares below 100 %, a per-level share, measured time and rate."""
    specs = write_specs(tmp_path, {"chip-three": THREE_LEVELS}, {"tiled-gemm": TILED_GEMM})
    compiled = compile_catalog(catalog_or_raise(specs))
    fig = compiled.devices["chip-three"]
    assert Fraction(640) * T == fig.peaks["bf16"]
    assert {"dram": Fraction(450) * 10**9, "l2": 4 * T, "l1": 36 * T} == fig.bandwidths
    r = compiled.result("tg-4k", "chip-three", "bf16")
    assert r is not None
    n = 4096
    flops = Fraction(2 * n**3)
    byte_counts = {
        "dram": Fraction(2 * 3 * n * n),
        "l2": Fraction(2 * (2 * n**3 // 128 + n * n)),
        "l1": Fraction(2 * 2 * n**3, 16),
    }
    assert byte_counts == r.bytes
    ceilings = {
        "compute": Fraction(640) * T,
        "dram": flops / byte_counts["dram"] * 450 * 10**9,
        "l2": flops / byte_counts["l2"] * 4 * T,
        "l1": flops / byte_counts["l1"] * 36 * T,
    }
    assert ceilings == r.ceilings
    assert min(ceilings.values()) == r.attainable
    assert min(ceilings, key=lambda k: ceilings[k]) == r.limited_by
    assert flops / 1 == r.measured  # a measured time of 1 s
    assert r.measured / r.attainable == r.efficiency
    int8 = compiled.result("tg-4k", "chip-three", "int8")
    assert int8 is not None and 100 * T == int8.measured and not int8.declared


def test_level_given_by_one_side_is_no_ceiling(tmp_path: Path) -> None:
    """An l2 the kernel gives but the device lacks is listed as unmodelled, not a ceiling."""
    device = THREE_LEVELS.replace(
        "  l2: {label: SRAM, bandwidth: 8 TB/s, capacity: 128 MiB, source: s, sustained: 50%}\n", ""
    )
    specs = write_specs(tmp_path, {"chip-three": device}, {"tiled-gemm": TILED_GEMM})
    r = compile_catalog(catalog_or_raise(specs)).result("tg-4k", "chip-three", "bf16")
    assert r is not None
    assert {"compute", "dram", "l1"} == set(r.ceilings)
    assert (("l2", "the device gives no l2 bandwidth"),) == r.unmodelled


def test_measured_above_ceiling_is_reported(tmp_path: Path) -> None:
    """A measured rate above the roofline is an error that names the likely causes."""
    kernel = TILED_GEMM.replace("time: 1 s", "rate: 2000 TFLOP/s")
    specs = write_specs(tmp_path, {"chip-three": THREE_LEVELS}, {"tiled-gemm": kernel})
    compiled = compile_catalog(catalog_or_raise(specs))
    (problem,) = compiled.diagnostics
    assert 16 == problem.location.line
    assert "sparsity" in problem.message and "units" in problem.message


def test_tie_at_ridge_is_compute_bound(tmp_path: Path) -> None:
    """A kernel exactly at the ridge point counts as compute bound."""
    device = """\
    id: chip-tie
    name: Tie chip
    vendor: Test
    compute:
      bf16: {peak: 100 TFLOP/s, source: s}
    memory:
      dram: {label: HBM3, bandwidth: 1 TB/s, source: s}
    """
    kernel = """\
    id: k
    name: k
    description: intensity 100 at bf16
    symbols: {n: values}
    flops: 200*n
    bytes: {dram: w*n}
    cases:
      - {id: k-1, name: k, precision: bf16, shape: {n: 1000}}
    """
    specs = write_specs(tmp_path, {"chip-tie": device}, {"k": kernel})
    r = compile_catalog(catalog_or_raise(specs)).result("k-1", "chip-tie", "bf16")
    assert r is not None
    assert (Fraction(100), "compute") == (r.intensity["dram"], r.limited_by)


def test_many_counts_take_int64_and_equal_the_exact_engine() -> None:
    """From `INT64_ROWS` counts on, a formula is evaluated over int64 columns where it can
    be: every count equals the exact engine's, widths of half a byte and counts past
    int64 included (those are left to the exact engine)."""
    from rooflinec.engine.evaluate import INT64_ROWS, evaluate_counts
    from rooflinec.formulas import bulk_evaluate, parse_formula

    shapes = [{"M": 1 + 37 * i, "N": 1 + (i * 7919) % 5000, "K": 64 + i % 300} for i in range(600)]
    assert len(shapes) * 2 >= INT64_ROWS
    cases = [
        ("w*(M*K*ceil(N/128) + K*N*ceil(M/128) + M*N)", [Fraction(2), Fraction(1)]),
        ("w*(M*K*ceil(N/128) + M*N)", [Fraction(2), Fraction(1, 2)]),
        ("2*M*N*K*floor(K/max(M, 64))", [Fraction(2), Fraction(1)]),
        ("M*N*K*M*N*K*M*N", [Fraction(2), Fraction(1)]),  # past int64
        ("w*M*N/K", [Fraction(2), Fraction(1)]),  # quotients with remainders
    ]
    for text, widths in cases:
        formula = parse_formula(text, frozenset({"M", "N", "K", "w"}))
        got = evaluate_counts(formula, shapes, widths)
        for k, w in enumerate(widths):
            exact = bulk_evaluate(
                formula, {**{s: [row[s] for row in shapes] for s in "MNK"}, "w": [w] * 600}
            )
            assert exact == [row[k] for row in got], text
