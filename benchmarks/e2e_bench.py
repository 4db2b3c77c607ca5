"""(f) End to end: YAML in, a file out, as a user waits for it.

- `f-csv`, `f-parquet`: `rooflinec compile --format csv|parquet --out FILE` of the
  synthetic catalog (N devices × M cases × 6 precisions), a cold process each, against
  `benchmarks.e2e_baseline` (ruamel.yaml + numpy + pyarrow, the same rows) run the same
  way, the two alternating; the run checks that both wrote the same rows. Parquet's
  target is to be no slower than rooflinec's own CSV.
- `f-grid-memory`, `f-grid-linear`: a grid case of GEMM shapes (M and N from 1 to 2^20
  doubling, K from 128 in steps of 128) on N devices × 6 precisions, compiled to one
  Parquet file: the process's peak resident memory, and the CPU time per row against a
  grid a tenth the size (K to 512 instead of 5,120).
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
from pathlib import Path

from benchmarks.common import Row, info, rooflinec_argv, run_timed

MEMORY_LIMIT_MB = 2048


def same_rows(ours: Path, baseline: Path) -> str:
    """Check that two CSV files hold the same rows (ids and flags equal, numbers within
    1e-12 relative); a one-line summary, or `RuntimeError`."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    a, b = pacsv.read_csv(baseline), pacsv.read_csv(ours)
    b = b.drop_columns([c for c in b.column_names if c not in a.column_names])  # the shape
    if a.column_names != b.column_names or a.num_rows != b.num_rows:
        raise RuntimeError(f"different tables: {a.shape} vs {b.shape}")
    worst = 0.0
    for name in a.column_names:
        x, y = a[name].combine_chunks(), b[name].combine_chunks()
        numeric = [pa.types.is_floating, pa.types.is_integer, pa.types.is_null]
        if any(t(x.type) for t in numeric):
            xv = x.cast(pa.float64()).to_numpy(zero_copy_only=False)
            yv = y.cast(pa.float64()).to_numpy(zero_copy_only=False)
            both = np.isnan(xv) & np.isnan(yv)
            rel = np.where(both, 0.0, np.abs(xv - yv) / np.maximum(np.abs(yv), 1e-300))
            if not np.all(rel <= 1e-12):
                raise RuntimeError(f"column {name} differs: {np.nanmax(rel):.1e} relative")
            worst = max(worst, float(np.max(rel)))
        elif not pc.all(pc.equal(x, y.cast(x.type))).as_py():
            raise RuntimeError(f"column {name} differs")
    return f"{a.num_rows:,} rows, {a.num_columns} columns, numbers within {worst:.1e} relative"


def measure_files(specs: Path, work: Path, cells: int, repeat: int) -> list[Row]:
    """YAML to CSV and to Parquet, rooflinec against the baseline program."""
    ours_argv = [*rooflinec_argv(), "compile", "--specs", str(specs)]
    base_argv = [sys.executable, "-m", "benchmarks.e2e_baseline", str(specs)]
    out = work / "out"
    out.mkdir(exist_ok=True)
    cpu: dict[str, list[float]] = {}
    wall: dict[str, list[float]] = {}
    runs = {
        "ours-csv": [*ours_argv, "--format", "csv", "--out", str(out / "ours.csv")],
        "base-csv": [*base_argv, str(out / "base.csv")],
        "ours-parquet": [*ours_argv, "--format", "parquet", "--out", str(out / "ours.parquet")],
        "base-parquet": [*base_argv, str(out / "base.parquet")],
    }
    for _ in range(repeat):  # alternate, so that load on the machine falls on all alike
        for key, argv in runs.items():
            timing = run_timed(argv)
            cpu.setdefault(key, []).append(timing.cpu)
            wall.setdefault(key, []).append(timing.wall)
    t = {k: statistics.median(v) for k, v in cpu.items()}
    w = {k: statistics.median(v) for k, v in wall.items()}
    info(f"same rows: {same_rows(out / 'ours.csv', out / 'base.csv')}")
    sizes = {k: (out / f"{k.replace('-', '.')}").stat().st_size / 2**20 for k in runs}
    info(
        f"{cells:,} rows; CPU time (median of {repeat}): rooflinec csv {t['ours-csv']:.2f} s, "
        f"parquet {t['ours-parquet']:.2f} s; baseline csv {t['base-csv']:.2f} s, parquet "
        f"{t['base-parquet']:.2f} s; wall: {w['ours-csv']:.2f}, {w['ours-parquet']:.2f}, "
        f"{w['base-csv']:.2f}, {w['base-parquet']:.2f} s"
    )
    info(
        "file sizes: "
        + ", ".join(f"{k} {v:.0f} MB" for k, v in sizes.items())
        + f"; parquet vs the baseline's parquet {t['ours-parquet'] / t['base-parquet']:.2f}x"
    )
    shutil.rmtree(out)
    csv_ratio = t["ours-csv"] / t["base-csv"]
    parquet_ratio = t["ours-parquet"] / t["ours-csv"]
    return [
        Row(
            "f-csv",
            f"YAML to CSV, {cells:,} rows (cold process)",
            f"ruamel.yaml + numpy + pyarrow {t['base-csv']:.2f} s",
            f"{t['ours-csv']:.2f} s",
            csv_ratio,
            "<= 1.5x",
            csv_ratio <= 1.5,
            f"CPU time, median of {repeat}; same rows checked",
        ),
        Row(
            "f-parquet",
            f"YAML to Parquet, {cells:,} rows, vs YAML to CSV",
            f"rooflinec CSV {t['ours-csv']:.2f} s",
            f"{t['ours-parquet']:.2f} s",
            parquet_ratio,
            "<= 1.0x",
            parquet_ratio <= 1.0,
            f"CPU time, median of {repeat}; the baseline's own Parquet {t['base-parquet']:.2f} s",
        ),
    ]


GRID_KERNEL = """\
id: syn-gemm-grid
name: GEMM (grid)
description: Every GEMM shape of a grid, for the end-to-end benchmark.
symbols:
  M: rows of A and C
  N: columns of B and C
  K: reduction dimension
flops: 2*M*N*K
bytes:
  dram: w*(M*K + K*N + M*N)
  l2: w*(M*K*ceil(N/128) + K*N*ceil(M/128) + M*N)
cases:
  - id: gemm-grid
    name: GEMM shapes
    precision: bf16
    grid:
      M: {{from: 1, to: 1048576, times: 2}}
      N: {{from: 1, to: 1048576, times: 2}}
      K: {{from: 128, to: {k_to}, step: 128}}
versions:
  - {{version: 1, date: 2026-11-30, change: Generated.}}
"""


def grid_catalog(work: Path, name: str, devices: int, k_to: int) -> Path:
    """The synthetic catalog's devices with one kernel: a grid case of GEMM shapes."""
    from benchmarks.synth import write_catalog

    specs = write_catalog(work / name, devices=devices, cases=6)
    for path in (specs / "kernels").iterdir():
        path.unlink()
    (specs / "kernels" / "syn-gemm-grid.yaml").write_text(GRID_KERNEL.format(k_to=k_to), "utf-8")
    return specs


def _grid_run(specs: Path, work: Path) -> tuple[float, float, float]:
    """CPU seconds, wall seconds and peak resident MB of one compile of a grid to Parquet."""
    report = work / "peak.json"
    target = work / "grid.parquet"
    argv = [sys.executable, "-m", "benchmarks.peak", str(report)]
    argv += ["compile", "--specs", str(specs), "--format", "parquet", "--out", str(target)]
    timing = run_timed(argv)
    facts = json.loads(report.read_text("utf-8"))
    target.unlink()
    return timing.cpu, timing.wall, float(facts["peak_rss_mb"])


def measure_grid(work: Path, devices: int, k_to: int, k_small: int) -> list[Row]:
    """The grid to Parquet: peak memory, and time per row against a grid a tenth the size."""
    pairs = devices * 6
    shapes = 21 * 21 * (k_to // 128)
    small_shapes = 21 * 21 * (k_small // 128)
    big = grid_catalog(work, "grid-big", devices, k_to)
    small = grid_catalog(work, "grid-small", devices, k_small)
    rows, small_rows = shapes * pairs, small_shapes * pairs
    s_cpu, s_wall, s_peak = _grid_run(small, work)
    b_cpu, b_wall, b_peak = _grid_run(big, work)
    info(
        f"grid of {shapes:,} GEMM shapes x {pairs} (device, precision) pairs = {rows:,} rows"
        f" to Parquet: {b_cpu:.1f} s CPU, {b_wall:.1f} s wall, peak {b_peak:.0f} MB; "
        f"{small_rows:,} rows: {s_cpu:.1f} s CPU, {s_wall:.1f} s wall, peak {s_peak:.0f} MB"
    )
    per_row, small_per_row = b_cpu / rows, s_cpu / small_rows
    growth = per_row / small_per_row
    return [
        Row(
            "f-grid-memory",
            f"peak memory, grid of {rows:,} rows to Parquet (fresh process)",
            f"limit {MEMORY_LIMIT_MB} MB",
            f"{b_peak:.0f} MB",
            b_peak / MEMORY_LIMIT_MB,
            "<= 1.0x",
            b_peak <= MEMORY_LIMIT_MB,
            "VmHWM of the process, YAML loading included",
        ),
        Row(
            "f-grid-linear",
            f"time per row, grid of {rows:,} vs {small_rows:,} rows to Parquet",
            f"{small_per_row * 1e9:.0f} ns/row",
            f"{per_row * 1e9:.0f} ns/row",
            growth,
            "<= 1.25x (linear)",
            growth <= 1.25,
            "CPU time of a cold process each, one run",
        ),
    ]
