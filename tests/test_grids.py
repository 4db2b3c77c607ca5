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
from hypothesis import given, settings
from hypothesis import strategies as st

from rooflinec.assemble import catalog_or_raise
from rooflinec.cli.main import main
from rooflinec.engine.compiler import compile_catalog
from rooflinec.engine.grids import select
from rooflinec.formulas import bulk_evaluate, parse_formula
from rooflinec.formulas.vectorised import evaluate_int64
from rooflinec.grid_values import Grid, GridAxis
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
    it answers (`ceil` and `floor` of a quotient, of either sign, included), and refuses
    (None) any other quotient with a remainder, a division by zero or a fractional
    width."""
    rng = np.random.default_rng(7)
    columns = {s: rng.integers(1, 5000, size=200, dtype=np.int64) for s in "MNK"}
    plain = {s: [int(v) for v in c.tolist()] for s, c in columns.items()}
    for text in (
        "2*M*N*K",
        "w*(M*K + K*N + M*N)",
        "min(M, N)*max(K, 2) - M + ceil(N*2/2)",
        "(M + 1)**3 - floor(K*4/2)",
        "M*N*K*128/128",
        "w*(M*K*ceil(N/128) + K*N*ceil(M/128) + M*N)",
        "floor((M - 2*N)/7) + ceil((K - 3*M)/3) + ceil(K/max(M, 64))",
        "ceil(M*N/K)*floor(K/M)",
    ):
        formula = parse_formula(text, frozenset({"M", "N", "K", "w"}))
        fast = evaluate_int64(formula, columns, {"w": 2})
        exact = bulk_evaluate(formula, {**plain, "w": [2] * 200})
        assert fast is not None, text
        assert [Fraction(v) for v in fast.tolist()] == exact, text
    assert evaluate_int64(parse_formula("M*N/128", frozenset("MN")), columns, {}) is None
    assert evaluate_int64(parse_formula("ceil(M/128*N)", frozenset("MN")), columns, {}) is None
    zero = {**columns, "N": np.zeros(200, dtype=np.int64)}
    assert evaluate_int64(parse_formula("ceil(M/N)", frozenset("MN")), zero, {}) is None
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
    """w·(M-4)² is positive at the grid's corners (M = 1 and 8) and zero at M = 4:
    `compile` names the case and the shape, exits 1, writes nothing."""
    specs = tmp_path / "specs"
    shutil.copytree(Path(__file__).parent / "cases" / "base", specs)
    kernel = HEAD.replace("l2: w*(M*K*N/128 + M*N)", "l2: w*(M-4)**2")
    (specs / "kernels" / "dip.yaml").write_text(
        kernel.replace("test-grid", "dip")
        + "  - {id: dip-g, name: Dip, precision: bf16, grid: {M: {from: 1, to: 8, step: 1},"
        " N: [1], K: [1]}}\n" + VERSIONS,
        "utf-8",
    )
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


# ------------------------------------------------- check proves counts over the whole grid
def _dip_specs(tmp_path: Path, l2: str, grid: str) -> Path:
    specs = tmp_path / "specs"
    shutil.copytree(Path(__file__).parent / "cases" / "base", specs)
    kernel = HEAD.replace("l2: w*(M*K*N/128 + M*N)", f"l2: {l2}")
    (specs / "kernels" / "dip.yaml").write_text(
        kernel.replace("test-grid", "dip")
        + f"  - {{id: dip-g, name: Dip, precision: bf16, grid: {grid}}}\n"
        + VERSIONS,
        "utf-8",
    )
    return specs


def _check(specs: Path, *args: str) -> tuple[int, list[str]]:
    out = io.StringIO()
    code = main(["check", "--specs", str(specs), *args], out=out)
    return code, [line for line in out.getvalue().splitlines() if ": error: " in line]


THOUSAND = "{from: 1, to: 1000, step: 1}"
BILLION = f"{{M: {THOUSAND}, N: {THOUSAND}, K: {THOUSAND}}}"  # 10^9 shapes


def test_check_refuses_what_compile_refuses_inside_a_grid(tmp_path: Path) -> None:
    """The dip at M = 4 of the small grid: `check` (the CI gate) names the same first
    shape as `compile`, at the grid's line and column, with the value and width."""
    specs = _dip_specs(tmp_path, "w*(M-4)**2", "{M: {from: 1, to: 8, step: 1}, N: [1], K: [1]}")
    code, errors = _check(specs)
    assert 1 == code
    assert [
        f"{specs / 'kernels' / 'dip.yaml'}:13:51: error: case 'dip-g' at M=4, N=1, K=1"
        " (shape 4 of its grid): the l2 byte count is not positive (0 with w=1)"
        " [$.cases[0].grid]"
    ] == errors


@pytest.mark.parametrize(
    ("l2", "first"),
    [
        # zero along one axis, the others at their first value: shape 3·10^6 + 1
        ("w*(M-4)**2", "M=4, N=1, K=1 (shape 3,000,001 of its grid)"),
        # zero where K = M·N + 5)/3 first holds in the grid's order: M=1, N=1, K=2
        ("w*(M*N - 3*K + 5)", "M=1, N=1, K=2 (shape 2 of its grid)"),
        # not positive only far inside: M·N + 1000 <= 2·K first at M=1, N=1, K=501
        ("w*(M*N - 2*K + 1000)", "M=1, N=1, K=501 (shape 501 of its grid)"),
        # a root of a cubic in K at 777, for M = 3 and every N
        ("w*(K - 777)**2*(M + N) + w*(M - 3)**2", "M=3, N=1, K=777 (shape 2,000,777 of its grid)"),
    ],
)
def test_check_names_the_first_bad_shape_of_a_billion_shape_grid(
    tmp_path: Path, l2: str, first: str
) -> None:
    """A grid of 10^9 shapes is never evaluated shape by shape: interval bounds and exact
    root isolation along an axis find the first shape (in the grid's order) where the
    count is not positive."""
    code, errors = _check(_dip_specs(tmp_path, l2, BILLION))
    assert 1 == code
    assert 1 == len(errors)
    assert f"error: case 'dip-g' at {first}: the l2 byte count is not positive" in errors[0]


@pytest.mark.parametrize(
    "l2",
    [
        "w*(M*K + K*N + M*N)",  # every term positive: the bounds settle it at once
        "w*(M*M - 2*M*N + N*N + 1)",  # (M − N)² + 1: solved along N at each M
        "w*(max(M, N) - min(M, N) + 1)",  # |M − N| + 1: boxes off the diagonal, then shapes
        "w*(M-4)**2*K + w",  # zero nowhere: the +w holds it up
    ],
)
def test_check_proves_a_positive_billion_shape_grid(tmp_path: Path, l2: str) -> None:
    """Positive counts over 10^9 shapes pass `check` without an error."""
    code, errors = _check(_dip_specs(tmp_path, l2, BILLION))
    assert (0, []) == (code, errors)


def test_check_refuses_a_grid_it_cannot_prove(tmp_path: Path) -> None:
    """ceil(M/2)·2 − M + 1 is positive (1 or 2) at every M, but its bounds only say so
    box by box of two values: over more values of M than it evaluates one by one (here
    a million) `check` says it cannot prove it and how to make it provable, rather than
    accept the grid unproved; up to that many it evaluates every shape, and a grid of
    ten thousand passes."""
    formula = "w*(ceil(M/2)*2 - M + 1)"
    grid = "{M: {from: 1, to: 1000001, step: 1}, N: [1], K: [1]}"
    specs = _dip_specs(tmp_path, formula, grid)
    code, errors = _check(specs)
    assert 1 == code
    assert [
        f"{specs / 'kernels' / 'dip.yaml'}:13:51: error: case 'dip-g': cannot prove the l2 byte"
        " count positive over the grid's 1,000,001 shapes (w=1): interval bounds and root"
        " isolation do not settle it, and a grid of more than 1,000,000 shapes is not evaluated"
        " shape by shape; shrink the grid, or write the formula so that each symbol appears"
        " once [$.cases[0].grid]"
    ] == errors
    grid = "{M: {from: 1, to: 10000, step: 1}, N: [1], K: [1]}"
    assert (0, []) == _check(_dip_specs(tmp_path / "small", formula, grid))


def test_an_evaluation_error_inside_a_grid_is_named_at_the_formula(tmp_path: Path) -> None:
    """A division by zero at an interior shape: the formula's error, with the shape."""
    specs = _dip_specs(tmp_path, "w*M*N*K/(M - 7)**2 + w", BILLION)
    code, errors = _check(specs)
    assert 1 == code
    assert 1 == len(errors)
    assert (
        "error: case 'dip-g' at M=7, N=1, K=1 (shape 6,000,001 of its grid): division by zero"
        in errors[0]
    )


AXIS = st.one_of(
    st.lists(st.integers(1, 40), min_size=1, max_size=6, unique=True).map(
        lambda v: GridAxis("", "", values=tuple(sorted(v)))
    ),
    st.tuples(st.integers(1, 30), st.integers(0, 40), st.integers(1, 7)).map(
        lambda t: GridAxis("", "", start=t[0], stop=t[0] + t[1], step=t[2])
    ),
    st.tuples(st.integers(1, 9), st.integers(2, 3)).map(
        lambda t: GridAxis("", "", start=t[0], stop=t[0] * 200, times=t[1])
    ),
)
TERMS = st.sampled_from(
    ["M", "N", "K", "M*N", "K*K", "M*K", "(M - N)**2", "(K - 9)**2", "max(M, K)", "min(N, 5)"]
)
FORMULA = st.lists(st.tuples(st.integers(-6, 6), TERMS), min_size=1, max_size=4).map(
    lambda ts: " + ".join(f"({c})*{t}" for c, t in ts) + " + 7"
)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.tuples(AXIS, AXIS, AXIS), FORMULA, st.sampled_from([10**40, 3000]))
def test_the_proof_finds_the_first_bad_shape_as_evaluation_does(
    axes: tuple[GridAxis, GridAxis, GridAxis], text: str, limit: int
) -> None:
    """On small grids, with boxes evaluated shape by shape only at size 1 (so bounds,
    splitting and root isolation do the work), the proof's answer is the first shape
    where evaluating every shape finds the count not positive or above the limit (a
    small limit exercises the second condition)."""
    from dataclasses import replace

    from rooflinec.engine import grid_proof

    grid = Grid(tuple(replace(a, symbol=s) for a, s in zip(axes, "MNK", strict=True)))
    formula = parse_formula(text, frozenset("MNK"))
    values = [formula.evaluate(dict(grid.shape_at(i))) for i in range(grid.size)]
    expected = next((i for i, v in enumerate(values) if v <= 0 or v > limit), None)
    proof = grid_proof._Proof(formula, {}, grid, limit)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(grid_proof, "LEAF_SHAPES", 1)
        patch.setattr(grid_proof, "_SMALL", 1)
        found = proof.run(10**6)
    assert not isinstance(found, grid_proof.Unproven)
    assert expected == (found.index if found is not None else None)
    if found is not None:
        assert grid.shape_at(found.index) == found.shape
        assert values[found.index] == found.value
    # And through the entry point, which evaluates a small grid whole when unsettled.
    assert expected == getattr(grid_proof.first_bad_shape(formula, {}, grid, limit), "index", None)
