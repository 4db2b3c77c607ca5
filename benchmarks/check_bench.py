"""(a) `rooflinec check` against `check-jsonschema` on the same files, both as cold processes.

check-jsonschema validates a set of files against one schema per invocation, so
validating a catalog takes one invocation per spec kind (precisions, devices, kernels,
methods), each with `--base-uri file://.../schemas/KIND.schema.json` so the schemas'
relative `$ref`s resolve offline. The baseline is the sum of those invocations; `rooflinec
check` does strictly more in its one process (YAML with positions, schema validation,
units, cross-references, every formula for every case, the compile, the reference
examples and the lints).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks.common import Row, Timing, info, rooflinec_argv, run_timed, skipped, tool

HEAVY = ("sympy", "altair", "vl_convert", "mkdocs", "material", "numpy", "pyarrow", "jinja2", "nh3")


def baseline_commands(specs: Path) -> list[list[str]]:
    """One check-jsonschema command per spec kind present in `specs`."""
    from rooflinec.resources import schemas_dir

    exe = tool("check-jsonschema")
    assert exe is not None
    kinds = {  # the layout of a catalog (DESIGN.md): one schema per kind of file
        "precisions": [specs / "precisions.yaml"],
        "device": sorted((specs / "devices").glob("*.yaml")),
        "kernel": sorted((specs / "kernels").glob("*.yaml")),
        "method": sorted((specs / "methods").glob("*.yaml")),
        "model": sorted((specs / "models").glob("*.yaml")),
    }
    commands = []
    for kind, paths in kinds.items():
        paths = [path for path in paths if path.is_file()]
        if not paths:
            continue
        schema = (schemas_dir() / f"{kind}.schema.json").resolve()
        commands.append(
            [exe, "--schemafile", str(schema), "--base-uri", schema.as_uri(), *map(str, paths)]
        )
    return commands


def heavy_imports(specs: Path) -> list[str]:
    """The heavy modules a `check` run imports (it should import none of them)."""
    code = (
        "import io, sys\n"
        "from rooflinec.cli.main import main\n"
        f"main(['check', '--specs', {str(specs)!r}], out=io.StringIO())\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return [m for m in proc.stdout.strip().split(",") if m]


def import_seconds(specs: Path) -> float:
    """Seconds spent importing modules in a `check` run (`python -X importtime`)."""
    code = (
        "import io\nfrom rooflinec.cli.main import main\n"
        f"main(['check', '--specs', {str(specs)!r}], out=io.StringIO())\n"
    )
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True
    )
    total = 0
    for line in proc.stderr.splitlines():
        # "import time: SELF | CUMULATIVE | NAME", NAME indented by depth: sum the top level.
        parts = line.split("|")
        if len(parts) == 3 and parts[2].startswith(" ") and not parts[2].startswith("  "):
            try:
                total += int(parts[1])
            except ValueError:  # the header line
                continue
    return total / 1e6


def measure(specs: Path, repeat: int, warmup: bool = True) -> Row:
    measurement = "check, bundled catalog, cold process"
    if tool("check-jsonschema") is None:
        return skipped("a-check", measurement, "<= 1.0x", "check-jsonschema is not installed")
    baseline = baseline_commands(specs)
    ours_argv = [*rooflinec_argv(), "check", "--specs", str(specs)]
    # Warm the file cache and the bytecode caches once, then alternate the two so that
    # machine noise falls on both alike.
    if warmup:
        run_timed(ours_argv, ok=(0, 1))
        for argv in baseline:
            run_timed(argv, ok=(0, 1))
    ours_runs: list[Timing] = []
    base_runs: list[Timing] = []
    per_call: list[float] = []
    for _ in range(repeat):
        ours_runs.append(run_timed(ours_argv, ok=(0, 1)))
        calls = [run_timed(argv, ok=(0, 1)) for argv in baseline]
        per_call.extend(call.cpu for call in calls)
        base_runs.append(Timing(sum(c.wall for c in calls), sum(c.cpu for c in calls)))
    ours = statistics.median(r.cpu for r in ours_runs)
    base = statistics.median(r.cpu for r in base_runs)
    heavy = heavy_imports(specs)
    info(
        f"check-jsonschema: {len(baseline)} invocations (one per spec kind), median "
        f"{statistics.median(per_call):.2f} s CPU each; rooflinec check: one process"
    )
    info(
        f"wall time (median): rooflinec check {statistics.median(r.wall for r in ours_runs):.2f}"
        f" s, check-jsonschema x{len(baseline)} "
        f"{statistics.median(r.wall for r in base_runs):.2f} s"
    )
    info(
        f"modules the check path imports from {', '.join(HEAVY)}: "
        f"{', '.join(heavy) or 'none'}; import time {import_seconds(specs):.2f} s"
    )
    return Row(
        "a-check",
        measurement,
        f"check-jsonschema x{len(baseline)} {base:.2f} s",
        f"{ours:.2f} s",
        ours / base,
        "<= 1.0x",
        ours / base <= 1.0,
        f"CPU time, median of {repeat}; heavy imports: {', '.join(heavy) or 'none'}",
    )
