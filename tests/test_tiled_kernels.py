"""A kernel whose traffic reads a core's shared memory (`smem`): counts per device, exact,
the same on the float path, and no other cell moved by it."""

from __future__ import annotations

import math
import shutil
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rooflinec.assemble import catalog_or_raise
from rooflinec.engine.compiler import Compiled, compile_catalog
from rooflinec.engine.solve import crossover, solve_regions
from rooflinec.engine.solve_case import problem_of
from rooflinec.prose.explain import explain, explain_symbolic
from tests.specfactory import BUNDLED

CASE = "attention-fa2-4096"


@pytest.fixture(scope="module")
def bundled() -> Compiled:
    return compile_catalog(catalog_or_raise(BUNDLED))


def fa2_bytes(s: int, d: int, h: int, w: Fraction, smem: int) -> Fraction:
    """The FlashAttention-2 tiling's DRAM bytes, written out independently of the specs:
    Q once, O once, K and V once per block of B_r = floor(smem / (4 d w)) queries."""
    rows = max(1, math.floor(Fraction(smem) / (4 * d * w)))
    passes = -(-s // rows)
    return w * h * s * d * (2 + 2 * passes)


@pytest.mark.parametrize(
    ("device", "smem", "passes"),
    [
        ("nvidia-h100-sxm", 233_472, 18),
        ("nvidia-h100-pcie", 233_472, 18),
        ("nvidia-b200", 233_472, 18),
        ("nvidia-a100-sxm-80gb", 167_936, 25),
    ],
)
def test_counts_are_the_devices_own(bundled: Compiled, device: str, smem: int, passes: int) -> None:
    """Each quoting device's cell reads its own figure: K and V read `passes` times."""
    assert bundled.catalog.devices[device].core is not None
    assert smem == bundled.catalog.devices[device].core.shared_memory  # type: ignore[union-attr]
    r = bundled.result(CASE, device, "bf16")
    assert r is not None
    expected = Fraction(2 * 4096 * 128 * (2 + 2 * passes))
    assert expected == r.bytes["dram"] == fa2_bytes(4096, 128, 1, Fraction(2), smem)
    assert Fraction(4 * 4096**2 * 128) == r.flops


def test_device_without_the_figure_has_no_dram_ceiling(bundled: Compiled) -> None:
    """On a device that quotes no shared memory the level is no ceiling, and says why."""
    r = bundled.result(CASE, "amd-mi300x", "bf16")
    assert r is not None
    assert "dram" not in r.bytes
    assert "dram" not in r.ceilings
    reasons = dict(r.unmodelled)
    assert "shared memory per core" in reasons["dram"]
    assert "compute" == r.limited_by
    text = explain(bundled.catalog, r)
    assert "not evaluated: the device quotes no smem" in text


def test_reference_figures(bundled: Compiled) -> None:
    """The method's figures: DRAM bound on the H100 at 215.6 FLOP/B, compute bound on the
    A100 at 157.5 FLOP/B, just above its 153.0 ridge."""
    h100 = bundled.result(CASE, "nvidia-h100-sxm", "bf16")
    a100 = bundled.result(CASE, "nvidia-a100-sxm-80gb", "bf16")
    assert h100 is not None and a100 is not None
    assert ("dram", "215.6") == (h100.limited_by, f"{float(h100.intensity['dram']):.1f}")
    assert ("compute", "157.5") == (a100.limited_by, f"{float(a100.intensity['dram']):.1f}")
    assert Fraction(39_845_888, 3_350 * 10**9) == h100.time


def test_float_columns_equal_the_exact_cells(bundled: Compiled) -> None:
    """The columnar path reads each cell's own context: every tiled cell's float outputs
    are the correctly rounded exact ones."""
    columns = bundled.columns
    checked = 0
    for i in bundled.rows(cases=[CASE]):
        r = bundled.result_at(i)
        assert float(r.time) == columns.time[i]
        assert float(r.attainable) == columns.attainable[i]
        checked += 1
    assert checked > 100


def test_no_other_cell_moves(bundled: Compiled, tmp_path: Path) -> None:
    """Without the tiled kernel every other cell is the same, exactly: the contexts that
    split counts by shared memory change nothing else."""
    folder = tmp_path / "specs"
    shutil.copytree(BUNDLED, folder)
    (folder / "kernels" / "attention-fa2.yaml").unlink()
    for path in (folder / "methods").glob("*.yaml"):
        text = path.read_text("utf-8")
        start = text.index("  - id: flashattention2-tiling-h100\n")
        end = text.index("  - id: test-13b-prefill-llm-analysis\n")
        path.write_text(text[:start] + text[end:], "utf-8")
    plain = compile_catalog(catalog_or_raise(folder))
    assert len(plain.counts.widths) < len(bundled.counts.widths)
    kept = [i for i in range(len(bundled.counts)) if bundled.result_at(i).case != CASE]
    assert len(kept) == len(plain.counts)
    for j, i in enumerate(kept):
        a, b = plain.result_at(j), bundled.result_at(i)
        assert (a.case, a.device, a.precision) == (b.case, b.device, b.precision)
        assert (a.flops, a.bytes, a.time) == (b.flops, b.bytes, b.time)


def test_crossovers_and_symbolic_bind_the_figure(bundled: Compiled) -> None:
    """`solve` and `explain --symbolic` read the device's figure: on the H100 the tiled
    attention stays DRAM bound at every length (its intensity tends to 2·B_r/w = 228
    FLOP/B, below the 295.4 ridge)."""
    problem = problem_of(bundled.catalog, CASE, "nvidia-h100-sxm", "bf16", "s")
    assert ("smem", 233_472) in problem.shape
    assert crossover(solve_regions(problem)) is None
    r = bundled.result(CASE, "nvidia-h100-sxm", "bf16")
    assert r is not None
    plain, _ = explain_symbolic(bundled.catalog, r)
    assert "smem" not in plain
    assert "floor(29184/d)" in plain


@settings(max_examples=200, deadline=None)
@given(
    s=st.integers(1, 10**6),
    d=st.integers(1, 1024),
    h=st.integers(1, 256),
    w=st.sampled_from([Fraction(1, 2), Fraction(1), Fraction(2), Fraction(4), Fraction(17, 32)]),
    smem=st.integers(1, 10**7),
)
def test_kernel_and_method_formula_equal_the_law(
    bundled: Compiled, s: int, d: int, h: int, w: Fraction, smem: int
) -> None:
    """The kernel's byte formula and the method note's `fa2_bytes` are the written-out law."""
    kernel = bundled.catalog.kernels["attention-fa2"].bytes["dram"]
    method = {f.name: f.formula for f in bundled.catalog.methods["roofline"].model_formulas}
    expected = fa2_bytes(s, d, h, w, smem)
    assert expected == kernel.evaluate({"s": s, "d": d, "h": h, "w": w, "smem": smem})
    assert expected == method["fa2_bytes"].evaluate({"s": s, "d": d, "hq": h, "w": w, "smem": smem})
