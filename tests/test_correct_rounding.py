"""Every number written is exact or correctly rounded: the float of each kernel cell's and
model row's output is `float(Fraction)` of its exact value, and a one-step model row says
what its kernel case says, byte for byte."""

from __future__ import annotations

import io
import json
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from rooflinec.assemble import catalog_or_raise
from rooflinec.catalog import LEVELS
from rooflinec.cli.main import main
from rooflinec.engine.compiler import Compiled, compile_catalog
from rooflinec.engine.terms import LIMITED_BY, SWEEP_KEYS
from tests.specfactory import BUNDLED, copy_bundled


@cache
def bundled() -> Compiled:
    return compile_catalog(catalog_or_raise(BUNDLED))


def _same(exact: Fraction, written: float) -> bool:
    return float(exact) == written


def test_every_bundled_cell_is_correctly_rounded() -> None:
    """time, attainable, share of peak, intensity, both sweeps and efficiency of every
    bundled kernel cell are the correctly rounded float64 of the exact values."""
    compiled = bundled()
    columns = compiled.columns
    wrong: list[tuple[int, str]] = []
    for cell in range(len(columns)):
        r = compiled.result_at(cell)
        checks: list[tuple[str, Fraction | None, float]] = [
            ("time", r.time, float(columns.time[cell])),
            ("attainable", r.attainable, float(columns.attainable[cell])),
            ("share_of_peak", r.share_of_peak, float(columns.share_of_peak[cell])),
            ("efficiency", r.efficiency, float(columns.efficiency[cell])),
        ]
        for k, key in enumerate(SWEEP_KEYS):
            checks.append((f"bw{key}", r.bandwidth_sweep[key], columns.bandwidth_sweep[cell, k]))
            checks.append((f"peak{key}", r.peak_sweep[key], columns.peak_sweep[cell, k]))
        row = int(columns.count_row[cell])
        for level, intensity in r.intensity.items():
            written = columns.intensity[row, LEVELS.index(level)]
            checks.append((f"intensity_{level}", intensity, written))
        for name, exact, written in checks:
            if exact is None:
                if written == written:
                    wrong.append((cell, name))
            elif not _same(exact, float(written)):
                wrong.append((cell, name))
        if LIMITED_BY[int(columns.limited_by[cell])] != r.limited_by:
            wrong.append((cell, "limited_by"))
    assert [] == wrong[:20]


def _compile(specs: Path, *args: str) -> dict[str, Any]:
    out = io.StringIO()
    assert 0 == main(["compile", "--specs", str(specs), "--format", "json", *args], out=out)
    document: dict[str, Any] = json.loads(out.getvalue())
    return document


def test_every_bundled_model_row_is_correctly_rounded() -> None:
    """Each model row's time and attainable rate, and each step's time, attainable rate
    and intensity, as `compile --format json` writes them at every precision, are the
    correctly rounded float64 of the exact values."""
    compiled = bundled()
    precisions = sorted(set(compiled.counts.pair_precision))
    written_rows = _compile(BUNDLED, *[a for p in precisions for a in ("--precision", p)])
    wrong = []
    assert written_rows["models"]
    for written in written_rows["models"]:
        key = (written["model"], written["phase"], written["device"], written["precision"])
        row = compiled.model_result(*key)
        assert row is not None
        if not _same(row.time, written["time"]):
            wrong.append((*key, "time"))
        if not _same(row.flops / row.time, written["attainable"]):
            wrong.append((*key, "attainable"))
        for step, text in zip(row.steps, written["steps"], strict=True):
            step_time = Fraction(step.time)
            if not _same(step_time, text["time"]):
                wrong.append((*key, step.step, "time"))
            if not _same(Fraction(step.flops) / step_time, text["attainable"]):
                wrong.append((*key, step.step, "attainable"))
            for level, intensity in step.intensity.items():
                if not _same(intensity, text["intensity"][level]):
                    wrong.append((*key, step.step, f"intensity_{level}"))
    assert [] == wrong[:20]


PROBE_KERNEL = """\
id: probe-linear
name: Linear (probe)
description: A copy of the bundled linear kernel, with cases at the probe's shapes.
symbols: {M: tokens, N: out, K: in}
widths: {wb: bytes per weight}
flops: 2*M*N*K
bytes:
  dram: w*(M*K + M*N) + wb*K*N
versions:
  - {version: 1, date: 2026-12-01, change: First version.}
cases:
"""

PROBE_MODEL = """\
id: probe
name: One linear step
description: One linear step per phase, at the probe kernel's shapes.
precision: bf16
parameters: {{one: 1}}
tokens: M
phases:
{phases}
steps:
  - {{id: linear, kernel: probe-linear, shape: {{M: M, N: N, K: K}}, count: 1}}
versions:
  - {{version: 1, date: 2026-12-01, change: First version.}}
"""

SHAPES = [(1, 8192, 4096), (1, 4096, 4096), (16, 8192, 4096), (4096, 4096, 4096), (7, 3, 11)]


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    specs = copy_bundled(tmp_path_factory.mktemp("probe"))
    cases = "".join(
        f"  - {{id: p-{m}-{n}-{k}, name: probe, precision: bf16,"
        f" shape: {{M: {m}, N: {n}, K: {k}}}}}\n"
        for m, n, k in SHAPES
    )
    (specs / "kernels" / "probe-linear.yaml").write_text(PROBE_KERNEL + cases, "utf-8")
    phases = "\n".join(f"  p-{m}-{n}-{k}: {{M: {m}, N: {n}, K: {k}}}" for m, n, k in SHAPES)
    (specs / "models" / "probe.yaml").write_text(PROBE_MODEL.format(phases=phases), "utf-8")
    return specs


def test_a_one_step_model_row_is_its_kernel_case(probe: Path) -> None:
    """On every device and precision, a model of one `linear` step writes the time and
    attainable rate its kernel case of the same shape writes, byte for byte."""
    compiled = compile_catalog(catalog_or_raise(probe))
    precisions = sorted({p for p in compiled.counts.pair_precision})
    args = [a for p in precisions for a in ("--precision", p)]
    case_args = [a for m, n, k in SHAPES for a in ("--case", f"p-{m}-{n}-{k}")]
    results = _compile(probe, *case_args, *args)["results"]
    cells = {(r["case"], r["device"], r["precision"]): r for r in results}
    rows = _compile(probe, "--model", "probe", *args)["models"]
    assert len(rows) == len(SHAPES) * len(compiled.counts.pair_device)
    differ = []
    for row in rows:
        cell = cells[(row["phase"], row["device"], row["precision"])]
        for key in ("time", "attainable", "flops", "bytes"):
            if json.dumps(cell[key]) != json.dumps(row[key]):
                differ.append((row["phase"], row["device"], row["precision"], key))
    assert [] == differ
