"""What every measurement shares: timing, machine facts, result rows and their printing."""

from __future__ import annotations

import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

# Every row's key, in the order the rows are printed, with what it measures and its
# target (as printed when the measurement cannot run); the smoke test expects them all.
DESCRIPTIONS: dict[str, tuple[str, str]] = {
    "a-check": ("check of the bundled catalog, cold process", "<= 1.0x"),
    "b-numpy": ("compile 1M cells to results in memory, vs hand-written numpy", "<= 3x"),
    "b-sympy": ("compile 1M cells, vs per-cell sympy subs extrapolated", ">= 1000x faster"),
    "b-memory": ("peak memory, compile 1M cells", "<= 1.0x (2 GB)"),
    "b-linear": ("time per cell, 1M vs 100k cells", "<= 1.25x (linear)"),
    "c-site": ("site of the bundled catalog vs plain mkdocs", "<= 1.2x"),
    "c-crossovers": ("crossover tables' share of the bundled site build", "<= 0.2x"),
    "c-frontier": ("the models' frontiers' share of the bundled site build", "<= 0.15x"),
    "c-200-time": ("build the site of a 200-device synthetic catalog", "< 1.0x (60 s)"),
    "c-200-pages": ("largest page of that site", "<= 1.0x (50 KB)"),
    "d-serve": ("serve: edit a device spec until its page shows it", "< 1.0x (2 s)"),
    "e-models-check": ("check of the bundled catalog with its models vs without", "<= 1.25x"),
    "e-models-compile": ("compile --format json with the models vs without", "<= 1.25x"),
    "e-models-tp": ("model rows at tp 1, 2, 4, 8 vs as many rows at tp 1, per row", "<= 1.5x"),
    "e-plan-time": ("plan of one model over every device, cold process", "<= 1.0x (2 s)"),
    "e-plan-grid": ("plan's search vs the same grid evaluated pass by pass", "<= 0.1x"),
    "e-frontier-all": ("frontiers of every bundled model on every device", "<= 1.0x (1.5 s)"),
    "f-csv": ("YAML to CSV, 1M rows, vs ruamel.yaml + numpy + pyarrow", "<= 1.5x"),
    "f-parquet": ("YAML to Parquet vs YAML to CSV, 1M rows", "<= 1.0x"),
    "f-grid-memory": ("peak memory, grid of 10.6M rows to Parquet", "<= 1.0x (2 GB)"),
    "f-grid-linear": ("time per row, grid of 10.6M vs 1.06M rows", "<= 1.25x (linear)"),
    "g-calc-render": ("calculator: one edit with 50 kernel rows, in Chromium", "<= 1.0x (50 ms)"),
    "g-calc-weight": ("calculator page with its data and script", "<= 1.0x (300 KB)"),
}
KEYS = tuple(DESCRIPTIONS)


@dataclass(frozen=True)
class Row:
    """One measurement: ours against a baseline measured in the same run."""

    key: str
    measurement: str
    baseline: str  # what the baseline is, with its figure
    ours: str
    ratio: float | None  # ours / baseline, or the quantity the target is stated in
    target: str  # e.g. "<= 1.0x"
    passed: bool | None  # None: skipped or not measurable here
    note: str = ""

    @property
    def status(self) -> str:
        return "SKIP" if self.passed is None else "PASS" if self.passed else "FAIL"

    def ratio_text(self) -> str:
        return "-" if self.ratio is None else f"{self.ratio:.3g}x"

    def line(self) -> str:
        """The one line printed as soon as the measurement is done (the smoke test reads it)."""
        note = f" ({self.note})" if self.note else ""
        return (
            f"ratio {self.key}: {self.measurement}: ours {self.ours} vs baseline "
            f"{self.baseline} = {self.ratio_text()} (target {self.target}) {self.status}{note}"
        )


def skipped(key: str, measurement: str, target: str, why: str) -> Row:
    return Row(key, measurement, "-", "-", None, target, None, why)


LOG: list[str] = []  # every line printed by `emit` and `info`, for RESULTS.md


def emit(row: Row) -> Row:
    LOG.append(row.line())
    print(row.line(), flush=True)
    return row


def info(text: str) -> None:
    LOG.append(f"  {text}")
    print(f"  {text}", flush=True)


def cpu_time(fn: Callable[[], Any]) -> tuple[float, Any]:
    """CPU seconds (user + system, all threads) of one call in this process, and its value.

    On a shared machine another process's load stretches wall time but not CPU time: a
    0.3 s run is preempted where a 0.02 s one is not, which would bend a scaling curve.
    """
    started = time.process_time()
    value = fn()
    return time.process_time() - started, value


def median_time(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Median CPU time of `repeat` calls, and the last call's value."""
    times = []
    value = None
    for _ in range(repeat):
        seconds, value = cpu_time(fn)
        times.append(seconds)
    return statistics.median(times), value


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float  # user + system of the child process


def run_timed(
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    ok: Sequence[int] = (0,),
    env: dict[str, str] | None = None,
) -> Timing:
    """Wall and CPU time of one cold process; raise if it exits with an unexpected code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(list(argv), cwd=cwd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in ok:
        raise RuntimeError(
            f"{' '.join(argv[:3])} ... exited {proc.returncode}:\n{proc.stderr[-2000:]}"
        )
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timing(wall, cpu)


def tool(name: str) -> str | None:
    """An executable beside this Python (the venv's), else on PATH."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    return shutil.which(name)


def rooflinec_argv() -> list[str]:
    exe = tool("rooflinec")
    if exe is not None:
        return [exe]
    return [sys.executable, "-c", "from rooflinec.cli.main import console; console()"]


def machine_facts() -> dict[str, str]:
    """CPU model, cores, Python and library versions, for the record."""
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = os.cpu_count() or 0
    facts = {
        "CPU": cpu,
        "cores": f"{os.cpu_count()} logical, {usable} usable",
        "Python": platform.python_version(),
        "platform": platform.platform(),
    }
    try:
        load = os.getloadavg()
        facts["load average at start"] = " ".join(f"{x:.2f}" for x in load)
    except OSError:
        pass
    facts["rooflinec tree"] = _tree()
    from importlib.metadata import PackageNotFoundError, version

    for package in ("rooflinec", "numpy", "mkdocs", "mkdocs-material", "check-jsonschema"):
        try:
            facts[package] = version(package)
        except PackageNotFoundError:
            facts[package] = "not installed"
    return facts


def _tree() -> str:
    """The commit measured, and whether the working tree had changes on top of it."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return "unknown (no git)"
    if not head:
        return "unknown (not a git checkout)"
    return head + (" with uncommitted changes" if dirty else "")


def table(rows: Sequence[Row]) -> str:
    """The summary as a Markdown table."""
    header = ["measurement", "baseline", "ours", "ratio", "target", "result"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        cells = [r.measurement, r.baseline, r.ours, r.ratio_text(), r.target, r.status]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)
