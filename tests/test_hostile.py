"""Hostile input: a mutated spec file never crashes, hangs or writes where it should not.

Each example copies a small catalog (`tests/cases/base` and a model) into a temporary
folder, mutates one of its spec files the way a careless or hostile user would
(truncated at a byte, a line deleted, a key line written twice, a value replaced by
hostile text), then runs every command of `COMMANDS` in-process through
`rooflinec.cli.main.main` and asserts the invariants every command keeps:

- the exit code is 0, 1 or 2, never 3 (an internal error);
- no traceback on stderr;
- every error line starts with its location (`FILE:LINE[:COL]: ` or `rooflinec: `) and
  is under 400 characters once the file's path is taken out;
- nothing outside the output the command names (`--out`) is created, changed or
  removed, spec files included;
- it finishes: each run is bounded by an alarm (a bound on a hang, not a speed test).

The profile is fixed for CI: derandomized, `MAX_EXAMPLES` examples per command. A new
command joins the suite with one line in `COMMANDS`.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import shutil
import signal
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rooflinec.cli.main import main

BASE = Path(__file__).parent / "cases" / "base"

MODEL = """\
id: test-m
name: Test model
description: A test model.
precision: bf16
parameters: {layers: 2, h: 5120, f: 20480}
phases:
  prefill: {b: 1, s: 512}
  decode: {b: 8, s: 1}
tokens: b*s
steps:
  - {id: up, kernel: gemm, shape: {M: b*s, N: f, K: h}, count: layers}
  - {id: down, name: Down projection, kernel: gemm, shape: {M: b*s, N: h, K: f}, count: 2}
  - {id: head, kernel: linear, shape: {M: b*s, N: 50272, K: h}, widths: {wb: fp8}}
measured:
  - {device: nvidia-h100-sxm, phase: decode, precision: bf16, time: 2.5 ms, source: run}
sources:
  run: {title: A run, publisher: Test, read: 2026-01-15, kind: measurement, tool: Nsight Systems}
versions:
  - {version: 1, date: 2026-01-15, change: First.}
"""

# A kernel with a width bound to a precision, used by a model step: a failed
# precisions.yaml must not crash what binds its widths.
LINEAR = """\
id: linear
name: Linear
description: A linear layer with its weights at their own width.
symbols:
  M: tokens
  N: output features
  K: input features
widths:
  wb: bytes per weight value
flops: 2*M*N*K
bytes:
  dram: w*M*K + w*M*N + wb*K*N
cases:
  - id: linear-w8
    name: Weights at FP8
    precision: bf16
    shape: {M: 16, N: 4096, K: 4096}
    widths: {wb: fp8}
versions:
  - {version: 1, date: 2026-01-15, change: First.}
"""

SPEC_FILES = (
    "precisions.yaml",
    "devices/nvidia-h100-sxm.yaml",
    "kernels/gemm.yaml",
    "kernels/linear.yaml",
    "models/m.yaml",
)

# Values a user (or an attacker) may type where a figure, an id or a formula goes.
HOSTILE_TEXT = (
    "1e99999999",
    "<script>alert(1)</script>",
    "0",
    "-1",
    "__import__('os').system('true')",
    "9" * 10_000,
    "x" * 20_000,
    "",
    "~",
    "[",
    "{a: [}",
    "*alias",
    "!!python/object/apply:os.system ['true']",
    "\u202e",
    ".nan",
    "1 TB/s",
    "2 µs",
    "M*N*K*10**99",
    "index",
    "tokens",
)

# Per command: the suite's CI cost stays under a minute. A deeper local hunt sets
# ROOFLINEC_HOSTILE_EXAMPLES (still derandomized: the same examples on every run).
MAX_EXAMPLES = int(os.environ.get("ROOFLINEC_HOSTILE_EXAMPLES", "6"))
TIME_BOUND = 120  # seconds one command may take before it counts as hung
MAX_LINE = 400
LOCATION = re.compile(r"^(?:\S+:\d+(?::\d+)?: |rooflinec: )")

CI = settings(
    derandomize=True,
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)


@dataclass(frozen=True)
class Command:
    """One command line over a specs folder; `out` names the file or folder it may write."""

    argv: Callable[[Path, Path], list[str]]
    out: str | None = None  # the name of its output under the example's folder
    examples: int = MAX_EXAMPLES


def _specs(argv: list[str]) -> Callable[[Path, Path], list[str]]:
    return lambda specs, out: [*argv, "--specs", str(specs)]


def _to(argv: list[str]) -> Callable[[Path, Path], list[str]]:
    return lambda specs, out: [*argv, "--specs", str(specs), "--out", str(out)]


H100 = ["--device", "nvidia-h100-sxm"]

# Every command that reads specs, in the forms users run it. A new command joins here.
COMMANDS: dict[str, Command] = {
    "check": Command(_specs(["check"])),
    "check-json": Command(_specs(["check", "--format", "json"])),
    "compile-table": Command(_specs(["compile"])),
    "compile-json": Command(_to(["compile", "--format", "json"]), "out.json"),
    "compile-jsonl": Command(_to(["compile", "--format", "jsonl"]), "out.jsonl"),
    "compile-csv": Command(_to(["compile", "--format", "csv"]), "out.csv"),
    "compile-parquet": Command(_to(["compile", "--format", "parquet"]), "out.parquet"),
    "compile-model": Command(_to(["compile", "--model", "test-m", "--format", "csv"]), "m.csv"),
    "explain": Command(_specs(["explain", "gemm-large", *H100])),
    "explain-model": Command(_specs(["explain", "--model", "test-m", "--phase", "decode", *H100])),
    "report": Command(_specs(["report", "gemm-fp32-skinny", *H100])),
    "solve": Command(_specs(["solve", "gemm-large", *H100, "--vary", "M"])),
    "export-csv": Command(_specs(["export"])),
    "export-json": Command(_specs(["export", "--format", "json"])),
    "build": Command(_to(["build"]), "site", examples=max(2, MAX_EXAMPLES // 3)),
}


def _catalog(root: Path) -> Path:
    specs = root / "specs"
    shutil.copytree(BASE, specs)
    (specs / "models").mkdir()
    (specs / "models" / "m.yaml").write_text(MODEL, "utf-8")
    (specs / "kernels" / "linear.yaml").write_text(LINEAR, "utf-8")
    return specs


# ------------------------------------------------------------------------------ mutations


def _truncate(data: bytes, at: int, _: str) -> bytes:
    return data[: at % (len(data) + 1)]


def _delete_line(data: bytes, at: int, _: str) -> bytes:
    lines = data.split(b"\n")
    del lines[at % len(lines)]
    return b"\n".join(lines)


def _duplicate_line(data: bytes, at: int, _: str) -> bytes:
    lines = data.split(b"\n")
    i = at % len(lines)
    return b"\n".join([*lines[: i + 1], lines[i], *lines[i + 1 :]])


SCALAR = re.compile(rb"(?<=: )[^\s{}\[\],#][^,}\]\n#]*")


def _replace_scalar(data: bytes, at: int, text: str) -> bytes:
    found = list(SCALAR.finditer(data))
    if not found:
        return data
    match = found[at % len(found)]
    return data[: match.start()] + text.encode("utf-8") + data[match.end() :]


MUTATIONS = {
    "truncate": _truncate,
    "delete-line": _delete_line,
    "duplicate-line": _duplicate_line,
    "replace-scalar": _replace_scalar,
}


@dataclass(frozen=True)
class Mutation:
    file: str
    kind: str
    at: int
    text: str

    def apply(self, specs: Path) -> None:
        path = specs / self.file
        path.write_bytes(MUTATIONS[self.kind](path.read_bytes(), self.at, self.text))


mutations = st.builds(
    Mutation,
    st.sampled_from(SPEC_FILES),
    st.sampled_from(sorted(MUTATIONS)),
    st.integers(min_value=0, max_value=10**6),
    st.sampled_from(HOSTILE_TEXT),
)


# ----------------------------------------------------------------------------- invariants


def _tree(root: Path, skip: Path | None) -> dict[str, str]:
    """Every file under `root` (but `skip` and what is under it) by its content's hash."""
    out = {}
    for path in sorted(root.rglob("*")):
        if skip is not None and (path == skip or skip in path.parents):
            continue
        if path.is_file() and not path.is_symlink():
            out[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
        elif path.is_dir():
            out[path.relative_to(root).as_posix() + "/"] = ""
    return out


class Hung(Exception):
    """A command ran past `TIME_BOUND`."""


@contextlib.contextmanager
def _bounded(seconds: int) -> Iterator[None]:
    def ring(signum: int, frame: FrameType | None) -> None:
        raise Hung(f"still running after {seconds} s")

    if not hasattr(signal, "SIGALRM"):  # Windows: no alarm, the CI job's timeout bounds it
        yield
        return
    previous = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run(argv: list[str]) -> tuple[int, str, str]:
    """`main(argv)` in-process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), _bounded(TIME_BOUND):
        code = main(argv, out=out)
    return code, out.getvalue(), err.getvalue()


def assert_invariants(name: str, root: Path, specs: Path, mutation: Mutation) -> None:
    command = COMMANDS[name]
    target = root / command.out if command.out else None
    before = _tree(root, target)
    code, out, err = run(command.argv(specs, target or root / "unused"))
    context = f"{name} after {mutation}:\n{err[-3000:]}"
    assert code in (0, 1, 2), context
    assert "Traceback" not in err and "Traceback" not in out, context
    for line in err.splitlines():
        if "error" not in line:
            continue
        assert LOCATION.match(line), f"no location: {line[:500]!r}\n{context}"
        bare = line.replace(str(specs) + "/", "").replace(str(root) + "/", "")
        assert len(bare) < MAX_LINE, f"{len(bare)} characters: {bare[:500]!r}\n{context}"
    assert before == _tree(root, target), f"files outside the output changed\n{context}"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_survives_a_mutated_spec(name: str) -> None:
    """For each command: any mutation of one spec file keeps the invariants above."""

    @settings(CI, max_examples=COMMANDS[name].examples)
    @given(mutation=mutations)
    def survives(mutation: Mutation) -> None:
        with tempfile.TemporaryDirectory(prefix="rooflinec-hostile-") as tmp:
            root = Path(tmp)
            specs = _catalog(root)
            mutation.apply(specs)
            assert_invariants(name, root, specs, mutation)

    survives()


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_runs_on_the_unmutated_catalog(name: str, tmp_path: Path) -> None:
    """The catalog the mutations start from is good: every command exits 0 on it (so a
    mutation's failures are the mutation's)."""
    specs = _catalog(tmp_path)
    command = COMMANDS[name]
    target = tmp_path / command.out if command.out else tmp_path / "unused"
    code, _, err = run(command.argv(specs, target))
    assert 0 == code, err
