"""(e) What the bundled models cost: `check` and `compile --format json` of the bundled
catalog, with its `models/` folder, against the same catalog without it; and model rows
over several chips (every bundled model × device × tp ∈ {1, 2, 4, 8} × phase) against as
many rows on one chip.

The baseline is a copy of the bundled catalog with `models/` removed and the method
note's reference examples about a model taken out (they name a model, so they would
fail without one); kernels and devices are the same in both. Both sides run as cold
processes, alternated, so that load on the machine falls on both alike.
"""

from __future__ import annotations

import re
import shutil
import statistics
from pathlib import Path

from benchmarks.common import REPO, Row, Timing, info, rooflinec_argv, run_timed

TARGET = 1.25
TP_TARGET = 1.5
DEGREES = (1, 2, 4, 8)


def without_models(specs: Path, work: Path) -> Path:
    """A copy of `specs` without `models/` and without the examples that name a model."""
    target = work / "specs-without-models"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(specs, target)
    shutil.rmtree(target / "models", ignore_errors=True)
    for path in (target / "methods").glob("*.yaml"):
        path.write_text(_strip_model_examples(path.read_text("utf-8")), "utf-8")
    return target


def _strip_model_examples(text: str) -> str:
    """The text without the list items of `examples:` that carry `model:`."""
    head, sep, rest = text.partition("\nexamples:\n")
    if not sep:
        return text
    end = re.search(r"^\S", rest, re.M)  # the next top-level key ends the list
    block, tail = (rest[: end.start()], rest[end.start() :]) if end else (rest, "")
    items = re.split(r"(?=^  - id: )", block, flags=re.M)
    kept = [item for item in items if not re.search(r"^    model: ", item, re.M)]
    return head + sep + "".join(kept) + tail


def _median_cpu(runs: list[Timing]) -> float:
    return statistics.median(r.cpu for r in runs)


def measure(specs: Path, work: Path, repeat: int) -> list[Row]:
    baseline = without_models(specs, work)
    rows = []
    for key, what, args, ok in (
        ("e-models-check", "check", ["check"], (0,)),
        ("e-models-compile", "compile --format json", ["compile", "--format", "json"], (0,)),
    ):
        ours_argv = [*rooflinec_argv(), *args, "--specs", str(specs)]
        base_argv = [*rooflinec_argv(), *args, "--specs", str(baseline)]
        run_timed(ours_argv, ok=ok)  # warm the file and bytecode caches
        run_timed(base_argv, ok=ok)
        ours_runs: list[Timing] = []
        base_runs: list[Timing] = []
        for _ in range(repeat):
            ours_runs.append(run_timed(ours_argv, ok=ok))
            base_runs.append(run_timed(base_argv, ok=ok))
        ours, base = _median_cpu(ours_runs), _median_cpu(base_runs)
        info(f"{what}: with models {ours:.3f} s CPU, without {base:.3f} s (median of {repeat})")
        rows.append(
            Row(
                key,
                f"{what} of the bundled catalog with its models",
                f"without models {base:.2f} s",
                f"{ours:.2f} s",
                ours / base,
                f"<= {TARGET}x",
                ours / base <= TARGET,
                f"CPU time, median of {repeat}, cold processes",
            )
        )
    return rows


def _rows_cpu(specs: Path, degrees: tuple[int, ...], together: bool) -> tuple[float, int]:
    """CPU seconds to make and write as JSON every model row of `specs` at each tensor
    degree in `degrees`, and how many rows that is: `together`, as one compile of them
    all (one engine, one write); else as one compile per degree. A degree a model cannot
    take or a device without a fabric gives no rows, as in `compile --tp N`."""
    import io
    import time

    from rooflinec.assemble import catalog_or_raise
    from rooflinec.catalog import Deployment
    from rooflinec.engine.compiler import compile_catalog
    from rooflinec.engine.models import ModelEngine
    from rooflinec.outputs.model_rows import write_model_json_rows

    compiled = compile_catalog(catalog_or_raise(specs))

    def engine() -> ModelEngine:
        return ModelEngine(compiled.catalog, compiled.devices, compiled.counts.latencies)

    started = time.process_time()
    rows = 0
    if together:
        shared = engine()
        made = [row for tp in degrees for row in shared.rows(Deployment(tp=tp))]
        write_model_json_rows(made, io.StringIO())
        rows = len(made)
    else:
        for tp in degrees:
            one = engine().rows(Deployment(tp=tp))
            write_model_json_rows(one, io.StringIO())
            rows += len(one)
    return time.process_time() - started, rows


def _rows_in_fresh_process(
    specs: Path, degrees: tuple[int, ...], together: bool
) -> tuple[float, int]:
    """`_rows_cpu` in a process of its own: what the other side ran leaves no warm memo,
    cache or heap behind (in one process the second side reads formulas' evaluators,
    interned texts and the allocator's arenas the first made)."""
    import json
    import subprocess
    import sys

    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from benchmarks.models_bench import _rows_cpu\n"
        "seconds, rows = _rows_cpu(Path(sys.argv[1]), tuple(json.loads(sys.argv[2])),"
        " sys.argv[3] == 'together')\n"
        "print(json.dumps([seconds, rows]))\n"
    )
    argv = [sys.executable, "-c", code, str(specs), json.dumps(list(degrees))]
    argv.append("together" if together else "apart")
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, check=False)
    if proc.returncode != 0:
        raise RuntimeError(
            f"model rows at tp {degrees} exited {proc.returncode}:\n{proc.stderr[-2000:]}"
        )
    seconds, rows = json.loads(proc.stdout)
    return float(seconds), int(rows)


def measure_tp(specs: Path, repeat: int) -> Row:
    """One compile of the rows at tp 1, 2, 4 and 8 against compiles at tp 1 repeated to as
    many rows, CPU time per row, each in a fresh process (the catalog is built outside
    the timing), the two sides alternated."""
    ours_runs: list[float] = []
    base_runs: list[float] = []
    # As many rows on one chip: the tp = 1 compile, repeated.
    count = _rows_in_fresh_process(specs, DEGREES, together=True)[1]
    one = _rows_in_fresh_process(specs, (1,), together=False)[1]
    times = max(1, round(count / max(one, 1)))
    base_count = 0
    for _ in range(max(repeat, 1)):
        seconds, count = _rows_in_fresh_process(specs, DEGREES, together=True)
        ours_runs.append(seconds / count)
        seconds, base_count = _rows_in_fresh_process(specs, (1,) * times, together=False)
        base_runs.append(seconds / base_count)
    ours, base = statistics.median(ours_runs), statistics.median(base_runs)
    info(
        f"model rows at tp {', '.join(map(str, DEGREES))}: {count} rows,"
        f" {ours * 1e6:.1f} µs CPU each; {base_count} rows at tp 1: {base * 1e6:.1f} µs each"
    )
    return Row(
        "e-models-tp",
        f"every bundled model x device x tp in {{1, 2, 4, 8}} x phase ({count} rows), made"
        " and written as JSON",
        f"{base_count} rows at tp 1 {base * 1e6:.1f} µs/row",
        f"{ours * 1e6:.1f} µs/row",
        ours / base,
        f"<= {TP_TARGET}x",
        ours / base <= TP_TARGET,
        f"CPU time per row, median of {max(repeat, 1)}, a fresh process each",
    )
