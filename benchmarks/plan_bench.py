"""(e) `rooflinec plan`: one model over every bundled device.

- `e-plan-time`: the CPU time of a cold `rooflinec plan --model llama-3-70b --input 1024
  --output 1024 --min-user-rate 20 --max-ttft 500ms --format json` (loading the catalog
  included), against 2 s.
- `e-plan-grid`: in process, the plan's search (the frontier of every device and the
  query) against evaluating each configuration of the same grid (every deployment,
  every `dp`, every batch) one by one through the model engine's per-pass evaluation:
  the prefill pass and each of the output − 1 decode passes, each `ModelEngine.evaluate`
  at its own run variables. That baseline takes hours on the whole grid, so it is timed
  on a sample of configurations spread over the grid and extrapolated to all of them.
- `e-frontier-all`: in process, once the catalog is loaded, the CPU time of the frontier
  of every bundled model (at its own precision) on every bundled device, as the site
  computes them once per build, against 1.5 s.
"""

from __future__ import annotations

import statistics
import time
from fractions import Fraction
from pathlib import Path

from benchmarks.common import Row, Timing, info, rooflinec_argv, run_timed

MODEL = "llama-3-70b"
TIME_TARGET = 2.0  # s of CPU
GRID_TARGET = 0.1
ALL_TARGET = 1.5  # s of CPU


def measure_time(specs: Path, repeat: int, shape: tuple[int, int]) -> Row:
    """A cold `rooflinec plan` of one model over every device, median CPU time."""
    argv = [
        *rooflinec_argv(),
        *("plan", "--model", MODEL, "--input", str(shape[0]), "--output", str(shape[1])),
        *("--min-user-rate", "20", "--max-ttft", "500ms", "--format", "json"),
        *("--specs", str(specs)),
    ]
    run_timed(argv)  # warm the file and bytecode caches
    runs: list[Timing] = [run_timed(argv) for _ in range(max(repeat, 1))]
    cpu = statistics.median(r.cpu for r in runs)
    wall = statistics.median(r.wall for r in runs)
    info(f"plan --model {MODEL} over every device: {cpu:.2f} s CPU, {wall:.2f} s wall")
    return Row(
        "e-plan-time",
        f"rooflinec plan --model {MODEL} --input {shape[0]} --output {shape[1]} over every"
        " bundled device, cold process",
        f"{TIME_TARGET:.0f} s",
        f"{cpu:.2f} s",
        cpu / TIME_TARGET,
        "<= 1.0x (2 s)",
        cpu <= TIME_TARGET,
        f"CPU time, median of {max(repeat, 1)}, catalog loading included ({wall:.2f} s wall)",
    )


def measure_grid(specs: Path, shape: tuple[int, int], sample: int) -> Row:
    """The plan's search against the grid evaluated configuration by configuration, pass
    by pass (extrapolated from `sample` configurations)."""
    from rooflinec.engine.frontier import Targets, grid, plan
    from rooflinec.engine.models import RunPoint
    from rooflinec.engine.requests import RequestShape, pass_time
    from rooflinec.pipeline import compiled_or_raise

    request = RequestShape(*shape)
    compiled = compiled_or_raise(specs)
    catalog = compiled.catalog
    model = catalog.models[MODEL]
    devices = list(catalog.devices)
    started = time.process_time()
    answer = plan(
        compiled.model_engine,
        MODEL,
        request,
        devices,
        model.precision,
        Targets(min_user_rate=Fraction(20), max_ttft=Fraction(1, 2)),
        "tokens-per-chip",
    )
    ours = time.process_time() - started
    evaluated = sum(len(f.points) for f in answer.frontiers)

    fresh = compiled_or_raise(specs).model_engine  # nothing kept from the plan's run
    configurations = []
    for device in devices:
        found, _, _ = grid(fresh, model, device, model.precision, request, prune=False)
        configurations += [(device, g.deployment, b) for g in found for b in g.batches]
    step = max(1, len(configurations) // max(sample, 1))
    chosen = configurations[::step][:sample]
    started = time.process_time()
    for device, deployment, batch in chosen:
        figures, latency = fresh.devices[device], fresh.latencies.get(device)
        runs = [RunPoint(batch, request.input, request.input)]
        runs += [RunPoint(batch, 1, request.input + j) for j in range(1, request.output)]
        for run in runs:
            pass_time(
                fresh.evaluate(model, run, figures, model.precision, latency, deployment=deployment)
            )
    each = (time.process_time() - started) / max(len(chosen), 1)
    base = each * len(configurations)
    info(
        f"plan's search: {ours:.2f} s CPU ({evaluated} configurations evaluated); the grid's"
        f" {len(configurations)} configurations pass by pass: {each:.3f} s each"
        f" ({len(chosen)} timed), {base:.0f} s in all"
    )
    return Row(
        "e-plan-grid",
        f"plan's frontier and query over every device ({MODEL}, {shape[0]}/{shape[1]} tokens)",
        f"{len(configurations)} configurations pass by pass, {base:.0f} s",
        f"{ours:.2f} s",
        ours / base,
        f"<= {GRID_TARGET}x",
        ours / base <= GRID_TARGET,
        f"CPU time, in process; the baseline timed on {len(chosen)} configurations spread"
        " over the grid and extrapolated",
    )


def measure_all(
    specs: Path, shape: tuple[int, int], repeat: int, device_limit: int | None = None
) -> Row:
    """The frontiers of every bundled model on every bundled device (the first
    `device_limit` alone, for a smoke run), in process after the catalog is loaded, median
    CPU time of `repeat` runs (each on a fresh engine: nothing kept from the one before)."""
    from rooflinec.engine.frontier import frontiers
    from rooflinec.engine.requests import RequestShape
    from rooflinec.pipeline import compiled_or_raise

    request = RequestShape(*shape)
    times: list[float] = []
    points = 0
    for _ in range(max(repeat, 1)):
        compiled = compiled_or_raise(specs)
        catalog = compiled.catalog
        devices = list(catalog.devices)[:device_limit]
        started = time.process_time()
        found = [
            frontiers(compiled.model_engine, m, devices, model.precision, request)
            for m, model in catalog.models.items()
        ]
        times.append(time.process_time() - started)
        points = sum(len(f.points) for each in found for f in each)
    cpu = statistics.median(times)
    models = len(compiled.catalog.models)
    info(
        f"frontiers of {models} models on {len(devices)} devices: {cpu:.2f} s CPU"
        f" ({points} points evaluated)"
    )
    return Row(
        "e-frontier-all",
        f"the frontier of every bundled model ({models}) on every bundled device"
        f" ({len(devices)}), {shape[0]}/{shape[1]} tokens, in process",
        f"{ALL_TARGET} s",
        f"{cpu:.2f} s",
        cpu / ALL_TARGET,
        "<= 1.0x (1.5 s)",
        cpu <= ALL_TARGET,
        f"CPU time, median of {max(repeat, 1)}, after the catalog is loaded",
    )
