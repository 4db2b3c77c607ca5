"""(b) Compiling a million cells with `rooflinec.engine.compiler`, against hand-written
numpy and sympy.

The synthetic catalog (N devices × M cases × 6 precisions, DRAM and L2) is written as
YAML and built once with `build_catalog`, outside the timed region: this measures the
compile, from the catalog to results in memory. Smaller sizes are the first cases of
each kernel of the same catalog.
"""

from __future__ import annotations

import dataclasses
import json
import math
import statistics
import subprocess
import sys
from functools import partial
from pathlib import Path

import numpy as np

from benchmarks.baselines import numpy_inputs, numpy_roofline, sympy_per_cell
from benchmarks.common import Row, cpu_time, info
from rooflinec.catalog import Catalog
from rooflinec.engine.columns import Columns

MEMORY_LIMIT_MB = 2048


def subset(catalog: Catalog, cases: int) -> Catalog:
    """The catalog with its first `cases` cases, taken round-robin over the kernels."""
    kernels = list(catalog.kernels.values())
    per_kernel = [0] * len(kernels)
    for i in range(cases):
        per_kernel[i % len(kernels)] += 1
    return dataclasses.replace(
        catalog,
        kernels={
            k.id: dataclasses.replace(k, cases=k.cases[:n])
            for k, n in zip(kernels, per_kernel, strict=True)
            if n
        },
    )


def cells_of(catalog: Catalog) -> int:
    pairs = sum(len(d.peaks) for d in catalog.devices.values())
    return pairs * sum(len(k.cases) for k in catalog.kernels.values())


def bulk_compile(catalog: Catalog) -> Columns:
    """The engine from a built catalog to every cell's outputs in memory: exact counts,
    then the float columns (which `compile_catalog` leaves until first use)."""
    from rooflinec.engine.compiler import compile_catalog

    return compile_catalog(catalog).columns


def exact_share(table: Columns) -> float:
    """The share of cells whose values came from exact arithmetic: a near tie, or a
    quotient the error-free rounding in numpy could not decide."""
    return float(np.mean(table.exact | table.rounded)) if len(table) else 0.0


def measure_numpy(catalog: Catalog, repeat: int) -> tuple[Row, float]:
    """The engine against the hand-written numpy roofline of the same formulas."""

    bulk_compile(catalog)  # warm: first-use caches of the formula engine
    inputs = numpy_inputs(catalog)
    numpy_roofline(inputs)
    ours_runs, base_runs = [], []
    for _ in range(repeat):  # alternate, so that load on the machine falls on both alike
        seconds, table = cpu_time(lambda: bulk_compile(catalog))
        ours_runs.append(seconds)
        seconds, reference = cpu_time(lambda: numpy_roofline(inputs))
        base_runs.append(seconds)
    ours, base = statistics.median(ours_runs), statistics.median(base_runs)
    cells = len(table)
    worst = float(np.max(np.abs(table.attainable - reference["attainable"]) / table.attainable))
    differ = int(np.sum(table.limited_by != reference["limited_by"]))
    went_exact = exact_share(table)
    info(
        f"{cells:,} cells; bulk {ours * 1e9 / cells:.0f} ns/cell, numpy "
        f"{base * 1e9 / cells:.0f} ns/cell; same results: attainable within {worst:.1e} "
        f"relative, limited_by differs on {differ} cells; {went_exact:.4%} of cells went "
        "exact (near ties and roundings numpy could not decide)"
    )
    row = Row(
        "b-numpy",
        f"compile {cells:,} cells to results in memory",
        f"hand-written numpy {base:.3f} s",
        f"{ours:.3f} s",
        ours / base,
        "<= 3x",
        ours / base <= 3,
        f"CPU time, median of {repeat}; {went_exact:.4%} of cells went exact",
    )
    return row, ours


def measure_sympy(catalog: Catalog, bulk_seconds: float, sample: int) -> Row:
    """Per-cell sympy `subs` on a sample, extrapolated to every cell."""
    from rooflinec.engine.compiler import compile_catalog

    compiled = compile_catalog(catalog)
    counts = compiled.counts
    step = max(1, len(counts) // sample)
    cells = []
    for i in range(0, len(counts), step):
        r = compiled.result_at(i)
        cells.append((r.case, r.device, r.precision))
    cells = cells[:sample]
    table = counts
    sympy_per_cell(catalog, cells[:1])  # import sympy, build the expressions (cached)
    seconds, _ = cpu_time(lambda: sympy_per_cell(catalog, cells))
    per_cell = seconds / len(cells)
    extrapolated = per_cell * len(table)
    speedup = extrapolated / bulk_seconds
    return Row(
        "b-sympy",
        f"compile {len(table):,} cells, per-cell sympy subs extrapolated",
        f"sympy {per_cell * 1e3:.1f} ms/cell x {len(table):,} = {extrapolated:,.0f} s",
        f"{bulk_seconds:.3f} s",
        speedup,
        ">= 1000x faster",
        speedup >= 1000,
        f"sample of {len(cells)} cells; ratio is baseline / ours",
    )


def measure_memory(specs: Path) -> Row:
    """Peak resident memory of a fresh process that builds the catalog and compiles it."""
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.memory", str(specs)],
        capture_output=True,
        text=True,
        check=True,
    )
    facts = json.loads(proc.stdout.strip().splitlines()[-1])
    peak = facts["peak_rss_mb"]
    info(
        f"memory: {facts['cells']:,} cells; catalog built: resident "
        f"{facts['catalog_rss_mb']:.0f} MB, peak {facts['catalog_peak_mb']:.0f} MB (YAML "
        f"loading); after bulk_compile: peak {peak:.0f} MB (result columns "
        f"{facts['table_mb']:.0f} MB)"
    )
    return Row(
        "b-memory",
        f"peak memory, compile {facts['cells']:,} cells (fresh process)",
        f"limit {MEMORY_LIMIT_MB} MB",
        f"{peak:.0f} MB",
        peak / MEMORY_LIMIT_MB,
        "<= 1.0x",
        peak <= MEMORY_LIMIT_MB,
        "VmHWM of the process, YAML loading included",
    )


def measure_scaling(catalog: Catalog, sizes: list[int], repeat: int) -> Row:
    """Time per cell from the smallest size to the largest: linear means it does not grow.

    Each size is timed `repeat` times and the fastest run kept (the one least disturbed by
    other load); the row compares the largest size with the one a tenth of it, or the
    nearest below.
    """
    points: list[tuple[int, float]] = []
    info(f"cells        seconds   ns/cell   (CPU time, fastest of {repeat})")
    for cases in sizes:
        part = subset(catalog, cases)
        bulk_compile(part)
        runs = [cpu_time(partial(bulk_compile, part))[0] for _ in range(repeat)]
        cells = cells_of(part)
        points.append((cells, min(runs)))
        info(f"{cells:>10,}  {min(runs):8.4f}  {min(runs) * 1e9 / cells:8.0f}")
    big_cells, big_t = points[-1]
    small_cells, small_t = min(points[:-1], key=lambda p: abs(math.log(p[0] * 10 / big_cells)))
    growth = (big_t / big_cells) / (small_t / small_cells)
    slope = math.log(big_t / small_t) / math.log(big_cells / small_cells)
    return Row(
        "b-linear",
        f"time per cell, {big_cells:,} vs {small_cells:,} cells",
        f"{small_t * 1e9 / small_cells:.0f} ns/cell",
        f"{big_t * 1e9 / big_cells:.0f} ns/cell",
        growth,
        "<= 1.25x (linear)",
        growth <= 1.25,
        f"log-log slope {slope:.2f}; CPU time, fastest of {repeat}",
    )
