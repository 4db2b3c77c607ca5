"""Run every measurement, print each ratio as it is measured, then a summary table.

    python -m benchmarks                  # full size (several minutes)
    python -m benchmarks --size tiny      # CI smoke run, under a minute
    python -m benchmarks --write-results  # also rewrite benchmarks/RESULTS.md

Each measurement is a ratio against a baseline measured in the same run on the same
machine, so a busy or slow machine moves both sides. Exit status is 0 whatever the
targets say: this is a benchmark, not a timed test (`--strict` makes a FAIL exit 1).
"""

from __future__ import annotations

import argparse
import datetime
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import (
    DESCRIPTIONS,
    KEYS,
    LOG,
    REPO,
    Row,
    emit,
    info,
    machine_facts,
    skipped,
    table,
)


@dataclass(frozen=True)
class Size:
    """How big each measurement is."""

    check_repeat: int
    check_warmup: bool  # one untimed run of each command first
    devices: int  # synthetic catalog of (b)
    cases: int
    compile_repeat: int
    sympy_sample: int
    scaling: tuple[int, ...]  # case counts, smallest first
    site_repeat: int
    site_catalog: tuple[int, int] | None  # (devices, cases) synthetic, None: bundled
    large_site: tuple[int, int]  # (devices, cases) of the "200-device" site
    serve_catalog: tuple[int, int] | None
    e2e_repeat: int  # YAML to a file, each side
    grid: tuple[int, int, int]  # devices, last K of the big grid, of the small one


SIZES = {
    "full": Size(
        check_repeat=7,
        check_warmup=True,
        devices=100,
        cases=1700,
        compile_repeat=5,
        sympy_sample=200,
        scaling=(17, 50, 170, 500, 1700),
        site_repeat=3,
        site_catalog=None,
        large_site=(200, 60),
        serve_catalog=None,
        e2e_repeat=3,
        grid=(100, 5120, 512),
    ),
    # CI smoke size: every line is printed, nothing is big enough to mean much.
    "tiny": Size(
        check_repeat=1,
        check_warmup=False,
        devices=10,
        cases=170,
        compile_repeat=2,
        sympy_sample=10,
        scaling=(17, 170),
        site_repeat=1,
        site_catalog=(2, 6),
        large_site=(3, 6),
        serve_catalog=(2, 6),
        e2e_repeat=1,
        grid=(2, 1280, 128),
    ),
}

SECTIONS = ("a", "b", "c", "d", "e", "f", "g")


def _synthetic(work: Path, name: str, devices: int, cases: int) -> Path:
    from benchmarks.synth import write_catalog

    return write_catalog(work / name, devices=devices, cases=cases)


Record = Callable[[Row], object]


def run_a(size: Size, work: Path, record: Record) -> None:
    from benchmarks import check_bench
    from rooflinec.resources import bundled_specs_dir

    record(check_bench.measure(bundled_specs_dir(), size.check_repeat, size.check_warmup))


def run_b(size: Size, work: Path, record: Record) -> None:
    from benchmarks import compile_bench
    from rooflinec.assemble import catalog_or_raise

    specs = _synthetic(work, "compile", size.devices, size.cases)
    started = time.perf_counter()
    catalog = catalog_or_raise(specs)
    info(
        f"synthetic catalog: {size.devices} devices x {size.cases} cases x 6 precisions, "
        f"DRAM and L2; loaded, validated and built in {time.perf_counter() - started:.1f} s"
    )
    numpy_row, bulk_seconds = compile_bench.measure_numpy(catalog, size.compile_repeat)
    record(numpy_row)
    record(compile_bench.measure_sympy(catalog, bulk_seconds, size.sympy_sample))
    record(compile_bench.measure_memory(specs))
    record(compile_bench.measure_scaling(catalog, list(size.scaling), 5))


def run_c(size: Size, work: Path, record: Record) -> None:
    from benchmarks import site_bench
    from rooflinec.resources import bundled_specs_dir

    specs, what = bundled_specs_dir(), "the bundled catalog"
    if size.site_catalog is not None:
        specs = _synthetic(work, "site", *size.site_catalog)
        what = f"a {size.site_catalog[0]}-device synthetic catalog"
    for row in site_bench.measure_site(specs, work, size.site_repeat, what):
        record(row)
    large = _synthetic(work, "large-site", *size.large_site)
    for row in site_bench.measure_large_site(large, work, size.large_site[0]):
        record(row)


def run_d(size: Size, work: Path, record: Record) -> None:
    from benchmarks import site_bench
    from rooflinec.resources import bundled_specs_dir

    specs, what = bundled_specs_dir(), "the bundled catalog"
    if size.serve_catalog is not None:
        specs = _synthetic(work, "serve", *size.serve_catalog)
        what = f"a {size.serve_catalog[0]}-device synthetic catalog"
    record(site_bench.measure_serve(specs, work, what))


def run_e(size: Size, work: Path, record: Record) -> None:
    from benchmarks import models_bench
    from rooflinec.resources import bundled_specs_dir

    for row in models_bench.measure(bundled_specs_dir(), work, size.check_repeat):
        record(row)
    record(models_bench.measure_tp(bundled_specs_dir(), size.check_repeat))
    from benchmarks import plan_bench

    # The full size plans the request; the smoke size a short one.
    shape = (1024, 1024) if size.check_warmup else (128, 8)
    record(plan_bench.measure_time(bundled_specs_dir(), size.check_repeat, shape))
    record(plan_bench.measure_grid(bundled_specs_dir(), shape, 8 if size.check_warmup else 2))
    # The smoke size on a few devices: the whole catalog takes a while until it is fast.
    repeat, limit = (3, None) if size.check_warmup else (1, 4)
    record(plan_bench.measure_all(bundled_specs_dir(), shape, repeat, limit))


def run_f(size: Size, work: Path, record: Record) -> None:
    from benchmarks import e2e_bench

    specs = _synthetic(work, "files", size.devices, size.cases)
    cells = size.devices * 6 * size.cases
    for row in e2e_bench.measure_files(specs, work, cells, size.e2e_repeat):
        record(row)
    for row in e2e_bench.measure_grid(work, *size.grid):
        record(row)


def run_g(size: Size, work: Path, record: Record) -> None:
    from benchmarks import calculator_bench

    for row in calculator_bench.measure(work):
        record(row)


RUNNERS: dict[str, Callable[[Size, Path, Record], None]] = {
    "a": run_a,
    "b": run_b,
    "c": run_c,
    "d": run_d,
    "e": run_e,
    "f": run_f,
    "g": run_g,
}
SECTION_KEYS = {s: [k for k in KEYS if k.startswith(s + "-")] for s in SECTIONS}


def site_page(results: str) -> str:
    """The site's performance page: RESULTS.md without the raw output of the run."""
    body = results.split("\n## Output of the run")[0].rstrip()
    body = body.replace("# Benchmark results", "# Performance", 1)
    return (
        body + "\n\nThe benchmark lives in `benchmarks/` of the source repository; run it with "
        "`python -m benchmarks` (`--size tiny` for a quick smoke run). Its README says how "
        "each baseline is built.\n"
    )


def results_markdown(size: str, rows: Sequence[Row], facts: dict[str, str], took: float) -> str:
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Benchmark results",
        "",
        f"The latest run of `python -m benchmarks --size {size}` ({stamp}, {took:.0f} s).",
        "Every figure is a ratio against a baseline measured in the same run on the same",
        "machine. Ratios compare CPU time (user + system), which other load on a shared",
        "machine barely moves; the absolute limits (60 s, 2 s) are wall time. How each",
        "baseline is built, and what is still open: `benchmarks/README.md`.",
        "",
        table(rows),
        "",
        "## Machine",
        "",
        *(f"- {name}: {value}" for name, value in facts.items()),
        "",
        "## Notes",
        "",
        *(f"- {r.key}: {r.note}" for r in rows if r.note),
        "",
        "## Output of the run",
        "",
        "```",
        *LOG,
        "```",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--size", choices=sorted(SIZES), default="full")
    parser.add_argument(
        "--only", default=",".join(SECTIONS), help="sections to run, e.g. a,b (default: all)"
    )
    parser.add_argument(
        "--write-results",
        action="store_true",
        help="rewrite benchmarks/RESULTS.md and site/performance.md with this run",
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    size = SIZES[args.size]
    sections = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = [s for s in sections if s not in RUNNERS]
    if unknown:
        parser.error(f"unknown sections: {', '.join(unknown)}")

    facts = machine_facts()
    print(f"rooflinec benchmarks, size {args.size}")
    for name, value in facts.items():
        print(f"  {name}: {value}")
    started = time.perf_counter()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="rooflinec-bench-") as tmp:
        for section in sections:
            print(f"\n== ({section})", flush=True)
            work = Path(tmp) / section
            work.mkdir()
            section_started = time.perf_counter()
            try:
                RUNNERS[section](size, work, lambda row: rows.append(emit(row)))
            except Exception as exc:  # one broken section must not hide the others
                lines = [ln for ln in f"{type(exc).__name__}: {exc}".splitlines() if ln.strip()]
                why = lines[0][:160] + (f" ... {lines[-1][:160]}" if len(lines) > 1 else "")
                done = {r.key for r in rows}
                for key in SECTION_KEYS[section]:
                    if key not in done:
                        what, target = DESCRIPTIONS[key]
                        rows.append(emit(skipped(key, what, target, f"error: {why}")))
            info(f"({section}) took {time.perf_counter() - section_started:.1f} s")
    took = time.perf_counter() - started
    print(f"\n== summary ({took:.0f} s)\n")
    print(table(rows))
    print("\nmachine: " + "; ".join(f"{k} {v}" for k, v in facts.items()))
    if args.write_results:
        results = REPO / "benchmarks" / "RESULTS.md"
        text = results_markdown(args.size, rows, facts, took)
        results.write_text(text, "utf-8")
        page = REPO / "site" / "performance.md"
        page.write_text(site_page(text), "utf-8")
        print(f"\nwrote {results} and {page}")
    failed = any(r.passed is False for r in rows)
    return 1 if args.strict and failed else 0


if __name__ == "__main__":
    sys.exit(main())
