"""`rooflinec solve`: crossovers of catalog cases, exact, on the command line and the site."""

from __future__ import annotations

import io
import json
from fractions import Fraction
from itertools import pairwise
from pathlib import Path

import pytest

from rooflinec.assemble import catalog_or_raise
from rooflinec.cli.main import main
from rooflinec.engine.solve import Problem, Region, solve_regions
from rooflinec.engine.solve_case import solve_case
from rooflinec.formulas import parse_formula
from tests.specfactory import REPO

SPECS = REPO / "specs"


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main([*argv, "--specs", str(SPECS)], out)
    return code, out.getvalue()


def test_skinny_bf16_gemm_on_tpu_v5e_turns_compute_bound_at_256() -> None:
    """8192 x 8192 weights, M varied, 197 TFLOP/s and 819 GB/s: compute bound from
    M = 256 (the asymptote peak / bandwidth is 240.5), memory bound at 255."""
    catalog = catalog_or_raise(SPECS)
    device = catalog.devices["google-tpu-v5e"]
    assert Fraction(197 * 10**12) == device.peak("bf16")
    assert Fraction(819 * 10**9) == device.bandwidth("dram")
    answer = solve_case(catalog, "gemm-large", "google-tpu-v5e", "bf16", "M")
    assert 256 == answer.crossover
    assert (Region(1, 255, "dram"), Region(256, None, "compute")) == answer.regions


def test_json_has_the_design_names() -> None:
    """`--format json` gives the design's keys, SI floats and integer bounds."""
    code, text = run(
        "solve", "gemm-large", "--device", "google-tpu-v5e", "--vary", "M", "--format", "json"
    )
    data = json.loads(text)
    assert 0 == code
    assert {
        "case": "gemm-large",
        "device": "google-tpu-v5e",
        "precision": "bf16",
        "symbol": "M",
        "regions": [
            {"from": 1, "to": 255, "limited_by": "dram"},
            {"from": 256, "to": None, "limited_by": "compute"},
        ],
        "crossover": 256,
        # peak × bytes / flops at M = N = K = 8192: 197e12 × 3 × 2 × 8192² / (2 × 8192³)
        "bandwidth_to_compute_bound": {"dram": 197e12 * 3 / 8192},
        # the DRAM ceiling at that shape: 8192/3 FLOP/B × 819 GB/s
        "peak_to_memory_bound": 8192 / 3 * 819e9,
    } == data


def test_never_compute_bound_kernel_has_no_crossover() -> None:
    """Elementwise work (1/6 FLOP/B at bf16) is never compute bound: held by the H100's
    launch floor while its 6n bytes take less than the floor at 3.35 TB/s, DRAM bound
    for every larger n."""
    code, text = run(
        "solve", "elementwise-add", "--device", "nvidia-h100-sxm", "--vary", "n", "--format", "json"
    )
    assert 0 == code
    data = json.loads(text)
    assert None is data["crossover"]
    floor = data["latency_floor"]
    last = data["regions"][0]["to"]
    assert [
        {"from": 1, "to": last, "limited_by": "latency"},
        {"from": last + 1, "to": None, "limited_by": "dram"},
    ] == data["regions"]
    assert 6 * last / 3.35e12 < floor <= 6 * (last + 1) / 3.35e12


def test_text_names_the_regions_and_the_crossover() -> None:
    """The text output lists each region and the crossover."""
    code, text = run("solve", "gemm-large", "--device", "google-tpu-v5e", "--vary", "K")
    assert 0 == code
    assert "  K = 1 .. 255: DRAM\n" in text
    assert "Crossover: K = 256 (compute bound from there on)\n" in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["gemm-large", "--device", "google-tpu-v5e", "--vary", "s"], "has no symbol 's'"),
        (["gemm-large", "--device", "google-tpu-v5e", "--vary", "w"], "has no symbol 'w'"),
        (["nope", "--device", "google-tpu-v5e", "--vary", "M"], "unknown case 'nope'"),
        (["gemm-large", "--device", "nope", "--vary", "M"], "unknown device 'nope'"),
        (
            ["gemm-large", "--device", "google-tpu-v5e", "--precision", "fp64", "--vary", "M"],
            "has no peak for precision 'fp64'",
        ),
        (
            ["gemm-large", "--device", "google-tpu-v5e", "--precision", "zz", "--vary", "M"],
            "unknown precision 'zz'",
        ),
    ],
)
def test_usage_errors_exit_2_in_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A symbol the kernel lacks, an unknown case, device or precision: exit 2, one line."""
    code, _ = run("solve", *argv)
    err = capsys.readouterr().err
    assert 2 == code
    assert 1 == len(err.splitlines())
    assert message in err


def test_falling_intensity_ends_memory_bound() -> None:
    """Intensity X / (X² + 100): compute bound only in a middle run, no crossover."""
    symbols = ("X",)
    problem = Problem(
        parse_formula("X", symbols),
        (("dram", parse_formula("w*(X**2 + 100)", symbols)),),
        (("w", 1),),
        "X",
        Fraction(1),
        (("dram", Fraction(20)),),  # ridge 1/20
    )
    # 20X ≥ X² + 100 ⟺ (X − 10)² ≤ 0: only X = 10.
    assert (
        Region(1, 9, "dram"),
        Region(10, 10, "compute"),
        Region(11, None, "dram"),
    ) == solve_regions(problem)


def test_l2_takes_over_in_the_middle() -> None:
    """DRAM bound for small X, then L2 bound, then compute bound."""
    symbols = ("X",)
    problem = Problem(
        parse_formula("X**2", symbols),
        (
            ("dram", parse_formula("w*(X + 1000)", symbols)),
            ("l2", parse_formula("w*X*10", symbols)),
        ),
        (("w", 1),),
        "X",
        Fraction(1000),
        (("dram", Fraction(10)), ("l2", Fraction(20))),
    )
    # L2 ceiling 2X ≥ 1000 from X = 500; DRAM 10X²/(X+1000) beats 2X once X > 250.
    assert (
        Region(1, 250, "dram"),
        Region(251, 499, "l2"),
        Region(500, None, "compute"),
    ) == solve_regions(problem)


def test_explain_names_each_symbols_crossover() -> None:
    """`explain` ends with a crossover per symbol of the case."""
    code, text = run("explain", "gemm-large", "--device", "google-tpu-v5e")
    assert 0 == code
    assert "   M: compute bound from M = 256 on\n" in text


def test_site_pages_show_the_tables(tmp_path: Path) -> None:
    """The kernel page has a crossover table; the device page the GEMM batch per precision."""
    out = tmp_path / "site"
    assert 0 == main(["build", "--specs", str(SPECS), "--out", str(out)], io.StringIO())
    kernel = (out / "kernels" / "gemm.html").read_text("utf-8")
    device = (out / "devices" / "google-tpu-v5e.html").read_text("utf-8")
    assert 'id="crossovers"' in kernel
    assert "Compute-bound GEMM batch (N = 8,192, K = 8,192):" in device
    assert "bf16 256;" in device


def _poly_of_roots(*roots: Fraction) -> tuple[Fraction, ...]:
    """The monic polynomial with these roots, constant term first."""
    poly = [Fraction(1)]
    for r in roots:
        poly = [(poly[i - 1] if i else 0) - r * (poly[i] if i < len(poly) else 0)
                for i in range(len(poly) + 1)]  # fmt: skip
    return tuple(poly)


def test_critical_integers_are_the_neighbours_of_each_real_root(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """(x - 3)(x - 15/2)(x² + 1): roots 3 and 7.5 (x² + 1 has none), so 3, 7 and 8
    are critical, and nothing farther than one from a root; found without sympy."""
    import sys

    monkeypatch.setitem(sys.modules, "sympy", None)  # any import of it fails
    from rooflinec.engine.solve_poly import critical_integers

    quadratic = (Fraction(1), Fraction(0), Fraction(1))
    roots = _poly_of_roots(Fraction(3), Fraction(15, 2))
    poly = tuple(
        sum((roots[i] * quadratic[k - i] for i in range(len(roots)) if 0 <= k - i < 3),
            Fraction(0))
        for k in range(len(roots) + 2)
    )  # fmt: skip
    found = critical_integers(poly, 1, 10**12)
    assert {3, 7, 8} <= found <= {2, 3, 4, 6, 7, 8, 9}


def test_critical_integers_of_a_double_root_and_a_root_near_the_end_of_the_domain() -> None:
    """(x - 5)²(x - (10¹² - 1/2)): the double root 5 (no sign change, still critical)
    and the integers either side of 999,999,999,999.5; a root past the domain's end
    by more than one is dropped."""
    from rooflinec.engine.solve_poly import critical_integers

    poly = _poly_of_roots(Fraction(5), Fraction(5), Fraction(2 * 10**12 - 1, 2))
    found = critical_integers(poly, 1, 10**12)
    assert {5, 10**12 - 1, 10**12} <= found <= {4, 5, 6, 10**12 - 2, 10**12 - 1, 10**12}
    far = _poly_of_roots(Fraction(10**12 + 5), Fraction(-7), Fraction(1, 3))
    assert critical_integers(far, 1, 10**12) == {1}


# ------------------------------------------------------------------ the launch floor
def _solve_floored(tmp_path: Path, *args: str) -> tuple[int, str]:
    from tests.measuredspecs import write_measured

    out = io.StringIO()
    code = main(["solve", *args, "--specs", str(write_measured(tmp_path))], out)
    return code, out.getvalue()


def test_solve_gives_the_latency_bound_region_and_its_exact_boundary(tmp_path: Path) -> None:
    """AXPY at bf16 moves 6n bytes at 4 TB/s against a 2 µs floor: the time at the roofline
    (6n / 4e12 s) is below the floor up to n = 1,333,333 and reaches it at 1,333,334 —
    where `compile` turns from latency to DRAM bound too."""
    code, text = _solve_floored(
        tmp_path, "axpy-tiny", "--device", "gpu-a", "--vary", "n", "--format", "json"
    )
    assert 0 == code
    data = json.loads(text)
    assert [
        {"from": 1, "to": 1_333_333, "limited_by": "latency"},
        {"from": 1_333_334, "to": None, "limited_by": "dram"},
    ] == data["regions"]
    assert 2e-06 == data["latency_floor"]
    assert None is data["crossover"]
    catalog = catalog_or_raise(tmp_path / "specs")
    from rooflinec.engine.grids import grid_result
    from rooflinec.pipeline import compiled_or_raise

    compiled = compiled_or_raise(tmp_path / "specs")
    case = catalog.cases["axpy-tiny"]
    for n, limit in ((1_333_333, "latency"), (1_333_334, "dram")):
        result = grid_result(compiled, case, {"n": n}, "gpu-a", "bf16")
        assert limit == result.limited_by


def test_solve_text_names_the_floor(tmp_path: Path) -> None:
    """The text lists the latency region and says where the roofline takes over."""
    code, text = _solve_floored(tmp_path, "axpy-tiny", "--device", "gpu-a", "--vary", "n")
    assert 0 == code
    lines = text.splitlines()
    assert "  n = 1 .. 1,333,333: latency" in lines
    assert "  n = 1,333,334 .. 1,000,000,000,000: DRAM" in lines
    assert (
        "Latency floor: a run takes at least 2 µs (1 launch × 2 µs); latency bound (the time"
        " at the roofline below it) at n = 1 .. 1,333,333; the roofline holds from"
        " n = 1,333,334 on" in lines
    )


def test_solve_without_a_floor_is_unchanged(tmp_path: Path) -> None:
    """The same case on the device without a floor: DRAM bound throughout, no floor key
    and no floor line."""
    code, text = _solve_floored(
        tmp_path, "axpy-tiny", "--device", "gpu-b", "--vary", "n", "--format", "json"
    )
    assert 0 == code
    data = json.loads(text)
    assert [{"from": 1, "to": None, "limited_by": "dram"}] == data["regions"]
    assert "latency_floor" not in data
    code, text = _solve_floored(tmp_path, "axpy-tiny", "--device", "gpu-b", "--vary", "n")
    assert "Latency floor" not in text


def test_the_floor_scales_with_launches_and_holds_on_the_search_path() -> None:
    """Three launches triple the floor; a formula with `min` (the exact search, not the
    polynomial roots) finds the same boundary."""
    symbols = ("n",)
    for flops in ("2*n", "min(2*n, 10**15)"):
        problem = Problem(
            parse_formula(flops, symbols),
            (("dram", parse_formula("6*n", symbols)),),
            (),
            "n",
            Fraction(10**15),
            (("dram", Fraction(4 * 10**12)),),
            3 * Fraction(2, 10**6),
        )
        solve_regions.cache_clear()
        assert (
            Region(1, 3_999_999, "latency"),  # 6n / 4e12 < 6 µs: n < 4,000,000
            Region(4_000_000, None, "dram"),
        ) == solve_regions(problem)


def test_folded_bounds_contain_every_value() -> None:
    """The held part of a formula worked out once (`folded`) bounds as the whole did: every
    value over the range lies within, a constant subtree is its value, and `unpicked`,
    bounded only by [0, 1], is kept rather than taken for a constant."""
    from rooflinec.engine.solve_interval import bounds_of, folded
    from rooflinec.formulas.parse import parse_formula

    names = ["M", "N", "E", "k", "n"]
    f = parse_formula(
        "min(M, N)*ceil(N/128)*(1 - unpicked(E, k, n)) + N*N", names, reserved=(), engine=True
    )
    held = {"N": 300, "E": 8, "k": 2, "n": 32}
    tree = folded(f, held, "M")
    lo, hi = bounds_of(tree, held, "M", 1, 400)  # type: ignore[misc]
    for m in range(1, 401):
        assert lo <= f.evaluate({**held, "M": m}) <= hi
    # N*N folds to 90,000 and ceil(300/128) to 3; unpicked stays its [0, 1]
    assert (90000, 90000 + 300 * 3) == (lo, hi)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3*X + 7", {1, 1000}),  # a polynomial: no call changes argument
        ("min(X, 40)*N", {1, 40, 1000}),  # at the root of X - 40 (an integer)
        ("max(1, 2*N - X)", {1, 599, 1000}),  # a window tail: the root of 2*300 - X - 1
        ("ceil(X*(X + 1)/2)", {1, 1000}),  # whole at every X: the call is its argument
        ("ceil(X/2)", None),  # a period of 2: left to the interval search
        ("N/X", None),  # a division by the symbol
    ],
)
def test_cuts_are_where_a_call_changes_argument(text: str, expected: set[int] | None) -> None:
    """The piecewise solver cuts the range beside each root of two arguments' difference
    and declines what is not a polynomial between its cuts."""
    from rooflinec.engine.solve_interval import folded
    from rooflinec.engine.solve_piecewise import cuts

    formula = parse_formula(text, ["X", "N"])
    held = {"N": 300}
    assert expected == cuts(folded(formula, held, "X"), held, "X", 1, 1000)


def test_windowed_attention_is_solved_by_roots_over_every_symbol() -> None:
    """The bundled windowed attention (`min` and `max` around s, L and W) is solved by
    roots, not by the interval search, and agrees with the engine beside each boundary."""
    from rooflinec.engine.solve import _root_runs, limited_by
    from rooflinec.engine.solve_case import problem_of

    catalog = catalog_or_raise(SPECS)
    for case in ("attention-kv-window-decode-gemma3-27b", "attention-kv-window-prefill-gpt-oss"):
        for symbol in ("s", "L", "W", "b"):
            problem = problem_of(catalog, case, "nvidia-h100-sxm", "bf16", symbol)
            assert _root_runs(problem, 1, 10**12) is not None
            regions = solve_regions(problem)
            for before, after in pairwise(regions):
                assert before.limited_by == limited_by(problem, after.start - 1)
                assert after.limited_by == limited_by(problem, after.start)
