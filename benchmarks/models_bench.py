"""(e) What the bundled models cost: `check` and `compile --format json` of the bundled
catalog, with its `models/` folder, against the same catalog without it.

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

from benchmarks.common import Row, Timing, info, rooflinec_argv, run_timed

TARGET = 1.25


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
