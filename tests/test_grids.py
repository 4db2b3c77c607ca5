"""Grid cases: the values of each range, the order of the shapes, exact and lazy
expansion, same cell same bytes against plain cases, and the refusals."""

from __future__ import annotations

import io
import json
import shutil
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from rooflinec.assemble import catalog_or_raise
from rooflinec.cli.main import main
from rooflinec.compiler import compile_catalog
from rooflinec.formulas import bulk_evaluate, parse_formula
from rooflinec.formulas.vectorised import evaluate_int64
from rooflinec.grid_values import Grid, GridAxis
from rooflinec.grids import select
from tests.specfactory import BUNDLED

HEAD = """id: test-grid
name: GEMM grids
description: Grid and plain cases of the same shapes.
symbols:
  M: rows
  N: columns
  K: shared dimension
flops: 2*M*N*K
bytes:
  dram: w*(M*K + K*N + M*N)
  l2: w*(M*K*N/128 + M*N)
cases:
"""
VERSIONS = "versions:\n  - {version: 1, date: 2026-01-15, change: First.}\n"
# M: 1, 64, 4096; N: 3, 9, 27, 81 (`to` 100 is not hit); K: 128, 256, 384.
GRID = """  - id: test-grid-g
    name: Grid
    precision: bf16
    grid:
      K: {from: 128, to: 400, step: 128}
      M: [4096, 1, 64]
      N: {from: 3, to: 100, times: 3}
"""
SHAPES = [(m, n, k) for m in (1, 64, 4096) for n in (3, 9, 27, 81) for k in (128, 256, 384)]


def plain_cases() -> str:
    return "".join(
        f"  - {{id: test-plain-{i}, name: Plain, precision: bf16,"
        f" shape: {{M: {m}, N: {n}, K: {k}}}}}\n"
        for i, (m, n, k) in enumerate(SHAPES)
    )


@pytest.fixture(scope="module")
def specs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled catalog (57 devices, fp4 among the precisions) with one kernel of a
    grid case and one plain case per shape of the grid."""
    folder = tmp_path_factory.mktemp("grids") / "specs"
    shutil.copytree(BUNDLED, folder)
    (folder / "kernels" / "test-grid.yaml").write_text(
        HEAD + GRID + plain_cases() + VERSIONS, "utf-8"
    )
    return folder


def compile_text(specs: Path, *args: str) -> str:
    out = io.StringIO()
    assert 0 == main(["compile", "--specs", str(specs), *args], out=out)
    return out.getvalue()


def test_ranges_end_at_the_last_value_not_above_to() -> None:
    """`to` is inclusive; when a range does not hit it, the last value is the largest
    not above it: 128 .. 400 by 128 is 128, 256, 384; 3 .. 100 times 3 is 3, 9, 27, 81."""
    step = GridAxis("K", "", start=128, stop=400, step=128)
    times = GridAxis("N", "", start=3, stop=100, times=3)
    doubling = GridAxis("M", "", start=1, stop=2**20, times=2)
    assert [step.value_at(i) for i in range(step.count)] == [128, 256, 384]
    assert [times.value_at(i) for i in range(times.count)] == [3, 9, 27, 81]
    assert (doubling.count, doubling.last) == (21, 2**20)
    assert times.contains(27) and not times.contains(28) and not times.contains(243)
    assert step.contains(384) and not step.contains(512) and not step.contains(200)


def test_order_is_the_kernels_symbols_with_the_last_fastest() -> None:
    """Shape i of a grid is the i-th of nested loops in the kernel's symbol order, values
    ascending, the last symbol fastest; `columns` gives the same as `shape_at`."""
    grid = Grid(
        (
            GridAxis("M", "", values=(1, 2)),
            GridAxis("N", "", start=3, stop=9, times=3),
            GridAxis("K", "", values=(5,)),
        )
    )
    expected = [(1, 3, 5), (1, 9, 5), (2, 3, 5), (2, 9, 5)]
    assert [tuple(grid.shape_at(i).values()) for i in range(grid.size)] == expected
    columns = grid.columns(1, 4)
    assert list(zip(*(columns[s].tolist() for s in "MNK"), strict=True)) == expected[1:]


def test_size_is_counted_without_expanding() -> None:
    """A grid of 1.1 x 10^9 shapes is counted from its axes, and its last shape found by
    division, at once (no array of a billion values is ever made)."""
    axes = tuple(
        GridAxis(s, "", start=1, stop=n, step=1)
        for s, n in zip("MNK", (1000, 1000, 1100), strict=True)
    )
    grid = Grid(axes)
    assert grid.size == 1_100_000_000
    assert grid.shape_at(grid.size - 1) == {"M": 1000, "N": 1000, "K": 1100}
    assert grid.shape_at(1100) == {"M": 1, "N": 2, "K": 1}


def test_catalog_orders_axes_by_the_kernels_symbols(specs: Path) -> None:
    """A grid written K, M, N is expanded M, N, K (the kernel's order); the list
    [4096, 1, 64] is taken ascending; the case's `shape` is the grid's first."""
    case = catalog_or_raise(specs).cases["test-grid-g"]
    assert case.grid is not None
    assert case.grid.symbols == ("M", "N", "K")
    assert case.grid.size == 36
    assert case.shape == {"M": 1, "N": 3, "K": 128}
    assert [tuple(case.grid.shape_at(i).values()) for i in range(36)] == SHAPES


def test_grid_rows_are_the_bytes_of_plain_cases(specs: Path) -> None:
    """Every grid row, in JSON, JSON Lines and CSV, on every device and precision (fp4's
    half-byte width takes the exact path), is the text of the plain case with its shape,
    the case id aside; and the rows come in the grid's order."""
    for fmt in ("json", "jsonl", "csv"):
        grid = compile_text(specs, "--format", fmt, "--case", "test-grid-g")
        plain = compile_text(
            specs, "--format", fmt, *[a for i in range(36) for a in ("--case", f"test-plain-{i}")]
        )
        if fmt == "json":
            grid_rows = [json.dumps(r, indent=2) for r in json.loads(grid)["results"]]
            plain_rows = [json.dumps(r, indent=2) for r in json.loads(plain)["results"]]
        else:
            grid_rows = grid.splitlines()[1 if fmt == "csv" else 0 :]
            plain_rows = plain.splitlines()[1 if fmt == "csv" else 0 :]
        n_pairs = len(grid_rows) // 36
        assert len(grid_rows) == len(plain_rows) == 36 * n_pairs > 36 * 100
        # Plain rows are case-major in case order, which is the grid's order.
        for g, p in zip(grid_rows, plain_rows, strict=True):
            assert g.replace("test-grid-g", "CASE") == _without_plain_id(p), fmt


def _without_plain_id(text: str) -> str:
    import re

    return re.sub(r"test-plain-\d+", "CASE", text)


def test_grid_rows_carry_their_shape_and_exact_counts(specs: Path) -> None:
    """Row values, hand-computed: shape 18 (M=64, N=9, K=384) at bf16 has 2·64·9·384 =
    442,368 FLOP, 2·(64·384 + 384·9 + 64·9) = 57,216 B of DRAM traffic and
    2·(64·384·9/128 + 64·9) = 4,608 B at L2."""
    text = compile_text(
        specs,
        "--format",
        "json",
        "--case",
        "test-grid-g",
        "--device",
        "nvidia-h100-sxm",
        "--precision",
        "bf16",
    )
    rows = json.loads(text)["results"]
    assert len(rows) == 36
    row = rows[17]
    assert row["shape"] == {"M": 64, "N": 9, "K": 384}
    assert row["case"] == "test-grid-g"
    assert row["flops"] == 442_368
    assert row["bytes"] == {"dram": 57_216, "l2": 4_608}
    assert row["intensity"]["dram"] == pytest.approx(442_368 / 57_216, rel=1e-15)


def test_batches_are_bounded_and_in_order(specs: Path) -> None:
    """`Selection.batches(rows)` yields a grid a chunk at a time (at least one shape a
    chunk), every row once, shapes in order; `len()` counts without expanding."""
    compiled = compile_catalog(catalog_or_raise(specs))
    selection = select(compiled, cases=["test-grid-g"], precisions=["bf16"])
    n_pairs = len(selection.grids[0].pairs)
    batches = list(selection.batches(rows=5 * n_pairs))
    assert [len(b) for b in batches] == [5 * n_pairs] * 7 + [n_pairs]
    assert sum(len(b) for b in batches) == len(selection) == 36 * n_pairs
    starts = [b.grid.start for b in batches if b.grid is not None]
    assert starts == list(range(0, 36, 5))
    last = batches[-1]
    assert last.grid is not None
    assert {s: v.tolist() for s, v in last.grid.shapes.items()} == {
        "M": [4096],
        "N": [81],
        "K": [384],
    }
    assert last.compiled.result_at(0).flops == 2 * 4096 * 81 * 384


def test_vectorised_evaluation_equals_the_exact_engine() -> None:
    """Over int64 columns the vectorised evaluator gives the exact engine's values where
    it answers, and refuses (None) a quotient with a remainder or a fractional width."""
    rng = np.random.default_rng(7)
    columns = {s: rng.integers(1, 5000, size=200, dtype=np.int64) for s in "MNK"}
    plain = {s: [int(v) for v in c.tolist()] for s, c in columns.items()}
    for text in (
        "2*M*N*K",
        "w*(M*K + K*N + M*N)",
        "min(M, N)*max(K, 2) - M + ceil(N*2/2)",
        "(M + 1)**3 - floor(K*4/2)",
        "M*N*K*128/128",
    ):
        formula = parse_formula(text, frozenset({"M", "N", "K", "w"}))
        fast = evaluate_int64(formula, columns, {"w": 2})
        exact = bulk_evaluate(formula, {**plain, "w": [2] * 200})
        assert fast is not None, text
        assert [Fraction(v) for v in fast.tolist()] == exact, text
    assert evaluate_int64(parse_formula("M*N/128", frozenset("MN")), columns, {}) is None
    width = parse_formula("w*M", frozenset({"M", "w"}))
    assert evaluate_int64(width, columns, {"w": Fraction(1, 2)}) is None


def test_int64_overflow_is_never_wrapped(tmp_path: Path) -> None:
    """Counts past int64 (2·10^7·10^7·10^7 = 2·10^21 FLOP) are refused by the vectorised
    path before any arithmetic and computed exactly instead: nothing wraps."""
    big = {s: np.array([10**7, 3], dtype=np.int64) for s in "MNK"}
    formula = parse_formula("2*M*N*K", frozenset("MNK"))
    assert evaluate_int64(formula, big, {}) is None
    just_fits = {s: np.array([2**20], dtype=np.int64) for s in "MN"} | {
        "K": np.array([5120], dtype=np.int64)
    }
    fits = evaluate_int64(formula, just_fits, {})
    assert fits is not None and fits.tolist() == [2 * 2**40 * 5120]
    specs = tmp_path / "specs"
    shutil.copytree(Path(__file__).parent / "cases" / "base", specs)
    (specs / "kernels" / "big.yaml").write_text(
        HEAD.replace("test-grid", "big")
        + "  - {id: big-g, name: Big, precision: bf16, grid: {M: [3, 10000000],"
        " N: [10000000], K: [10000000]}}\n" + VERSIONS,
        "utf-8",
    )
    text = compile_text(specs, "--format", "json", "--precision", "bf16", "--case", "big-g")
    rows = json.loads(text)["results"]
    assert [r["flops"] for r in rows] == [2 * 3 * 10**14, 2 * 10**21]
    assert rows[1]["bytes"] == {"dram": 6 * 10**14, "l2": 15_625_200_000_000_000_000}


def test_a_bad_count_inside_a_grid_stops_the_compile_before_output(tmp_path: Path) -> None:
    """w·(M-4)² is positive at the grid's corners (M = 1 and 8), which `check` tries,
    and zero at M = 4: `compile` names the case and the shape, exits 1, writes nothing."""
    specs = tmp_path / "specs"
    shutil.copytree(Path(__file__).parent / "cases" / "base", specs)
    kernel = HEAD.replace("l2: w*(M*K*N/128 + M*N)", "l2: w*(M-4)**2")
    (specs / "kernels" / "dip.yaml").write_text(
        kernel.replace("test-grid", "dip")
        + "  - {id: dip-g, name: Dip, precision: bf16, grid: {M: {from: 1, to: 8, step: 1},"
        " N: [1], K: [1]}}\n" + VERSIONS,
        "utf-8",
    )
    check = io.StringIO()
    assert 0 == main(["check", "--specs", str(specs)], out=check)
    out, err = io.StringIO(), io.StringIO()
    import contextlib

    with contextlib.redirect_stderr(err):
        code = main(["compile", "--specs", str(specs), "--format", "csv"], out=out)
    assert code == 1
    assert out.getvalue() == ""
    assert (
        "case 'dip-g' at M=4, N=1, K=1 (shape 4 of its grid): the l2 byte count is not positive"
        in err.getvalue()
    )


def test_explain_a_grid_case_asks_for_a_shape(
    specs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`explain` on a grid case without `--shape` is a usage error naming how to pick
    one; with a shape of the grid it derives that shape; a value outside is refused."""
    base = ["explain", "test-grid-g", "--specs", str(specs), "--device", "nvidia-h100-sxm"]
    assert main(base, out=io.StringIO()) == 2
    assert "pick one with --shape M=1,N=3,K=128" in capsys.readouterr().err
    out = io.StringIO()
    assert main([*base, "--shape", "M=64,N=9,K=384"], out=out) == 0
    assert "M = 64" in out.getvalue() and "442,368 FLOP" in out.getvalue()
    assert main([*base, "--shape", "M=64,N=10,K=384"], out=io.StringIO()) == 2
    assert "N=10 is not a value of the grid" in capsys.readouterr().err


def test_solve_a_grid_case_holds_its_first_shape(specs: Path) -> None:
    """`solve` on a grid case holds the other symbols at the grid's first shape unless
    `--shape` names another."""
    args = ["solve", "test-grid-g", "--specs", str(specs), "--device", "nvidia-h100-sxm"]
    first = io.StringIO()
    assert main([*args, "--vary", "M"], out=first) == 0
    assert "held: N = 3, K = 128" in first.getvalue()
    other = io.StringIO()
    assert main([*args, "--vary", "M", "--shape", "M=64,N=81,K=384"], out=other) == 0
    assert "held: N = 81, K = 384" in other.getvalue()


def test_site_shows_a_grid_as_a_summary_with_a_download(tmp_path: Path) -> None:
    """A grid case's kernel page gives its ranges as written, its count, its intensity
    range and crossovers, and links its results as a CSV download; it has no row per
    shape and the grid is not plotted."""
    from rooflinec.site.build import build_site

    specs = tmp_path / "specs"
    shutil.copytree(Path(__file__).parent / "cases" / "base", specs)
    (specs / "kernels" / "test-grid.yaml").write_text(HEAD + GRID + VERSIONS, "utf-8")
    out = tmp_path / "site"
    build_site(specs, out)
    page = next((out / "kernels").glob("test-grid*.html")).read_text("utf-8")
    if (out / "kernels" / "test-grid").is_dir():
        page = (out / "kernels" / "test-grid" / "index.html").read_text("utf-8")
    assert "Grid: Grid" in page
    assert "128 to 400, +128" in page and "[4,096, 1, 64]" in page and "3 to 100, ×3" in page
    assert "36 shapes" in page
    # bf16 intensity at DRAM from M=1, N=3, K=128 (768/(2·(128+384+3)) = 0.7456...) up.
    assert "0.7456 FLOP/B" in page
    assert "others largest" in page
    assert "test-grid-g.csv" in page
    assert "M=64 N=9 K=384" not in page  # no row per shape on the page
    csv_rows = (out / "results" / "test-grid-g.csv").read_text("utf-8").splitlines()
    assert len(csv_rows) == 1 + 36 * 6  # one device of six precisions in the base catalog
    assert csv_rows[1].startswith("test-grid-g,test-grid,M=1 N=3 K=128,nvidia-h100-sxm,")
    chart = out / "kernels" / "test-grid.attainable.vl.json"
    assert not chart.exists() or "test-grid-g" not in chart.read_text("utf-8")
