"""Hostile input, every command: a catalog with a measured run, a launch floor, a grid
and a model is mutated the way a careless or hostile editor would (a file cut short, a
line lost or doubled, a value replaced by markup, code, a huge or a negative number),
and every command of `COMMANDS` runs on it. Whatever the input, each run must:

- exit 0, 1 or 2 (3 is a bug in rooflinec), with no traceback;
- print one line per problem, each starting with its location (`FILE[:LINE[:COL]]:` or
  `rooflinec…:`) and under 400 characters once the file's path is set aside;
- write nothing but the output it was named, and change no file it read;
- finish within a bound (a hang is a failure, not a slow pass).

The profile is fixed for CI (derandomized, a stated number of examples). A new command
joins with one row of `COMMANDS`; a new kind of mutation with one entry of `MUTATIONS`.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rooflinec.cli import main as cli
from rooflinec.cli.main import main
from tests.measuredspecs import write_measured
from tests.specfactory import BUNDLED, REPO

# The fixed CI profile: the same examples every run, and few enough to afford;
# ROOFLINEC_HOSTILE_EXAMPLES=2000 runs deeper by hand.
EXAMPLES = int(os.environ.get("ROOFLINEC_HOSTILE_EXAMPLES", "60"))
PROFILE = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# A command that runs longer than this on a catalog of a few files has hung.
BOUND_SECONDS = 60
LINE_LIMIT = 400

IMPORTS = REPO / "tests" / "fixtures" / "imports"

GRID_KERNEL = """\
id: hostile-grid
name: GEMM on a grid
description: A matrix multiply over a grid of shapes.
symbols: {M: rows, N: columns, K: shared dimension}
flops: 2*M*N*K
bytes:
  dram: w*(M*K + K*N + M*N)
cases:
  - id: hostile-grid-g
    name: Grid
    precision: bf16
    grid:
      M: {from: 1, to: 4096, times: 4}
      N: [64, 4096]
      K: {from: 128, to: 1024, step: 128}
sources:
  s:
    title: A note
    publisher: The benchmark team
    url: https://example.com/gemm
    read: 2026-10-25
    kind: third-party
versions:
  - {version: 1, date: 2026-10-25, change: First version.}
"""


# A measured pass of the model, a measured serving result, and the source they cite.
MEASURED = """
measured:
  - {device: gpu-a, phase: decode, precision: bf16, time: 40 ms, source: run}
  - {device: gpu-a, precision: bf16, input: 64, output: 8, concurrency: 1, engine: test 1.0,
     ttft: 4 s, itl: 60 ms, output_rate: 10 tokens/s, source: run, quote: "| 1 | 4000 | 60 |"}

sources:
  run: {title: A run, publisher: Test, read: 2026-01-15, kind: measurement, tool: Nsight Systems}
"""


@dataclass(frozen=True)
class Run:
    """One command line of the suite; `{specs}` and `{out}` are filled per example.
    `writes` says the command may change spec files (`--write`); `reports` that its
    diagnostics go to standard output (`check`'s reporters) and are held to the same
    rules as standard error."""

    name: str
    argv: tuple[str, ...]
    writes: bool = False
    reports: bool = False
    repository: bool = False  # runs inside a git repository holding the unmutated catalog


def _imports(tool: str, fixture: str, *extra: str) -> tuple[Run, Run]:
    argv = ("import", tool, str(IMPORTS / fixture), "--specs", "{specs}", *extra)
    return Run(f"import-{tool}", argv), Run(f"import-{tool}-write", (*argv, "--write"), True)


COMMANDS: tuple[Run, ...] = (
    Run("check", ("check", "--specs", "{specs}"), reports=True),
    Run("check-github", ("check", "--specs", "{specs}", "--format", "github"), reports=True),
    Run("compile-table", ("compile", "--specs", "{specs}")),
    Run("compile-json", ("compile", "--specs", "{specs}", "--format", "json", "--out", "{out}")),
    Run("compile-jsonl", ("compile", "--specs", "{specs}", "--format", "jsonl", "--out", "{out}")),
    Run("compile-csv", ("compile", "--specs", "{specs}", "--format", "csv", "--out", "{out}")),
    Run(
        "compile-parquet",
        ("compile", "--specs", "{specs}", "--format", "parquet", "--out", "{out}"),
    ),
    Run(
        "compile-model",
        ("compile", "--specs", "{specs}", "--model", "test-13b", "--format", "json"),
    ),
    Run(
        "compile-model-tp",
        ("compile", "--specs", "{specs}", "--model", "test-13b", "--tp", "2", "--pp", "2"),
    ),
    Run(
        "compile-request",
        (
            *("compile", "--specs", "{specs}", "--model", "test-13b", "--input", "64"),
            *("--output", "8", "--batch", "2", "--format", "json", "--out", "{out}"),
        ),
    ),
    Run("explain", ("explain", "axpy-big", "--device", "gpu-a", "--specs", "{specs}")),
    Run(
        "explain-request",
        (
            *("explain", "--model", "test-13b", "--request", "chat-1k"),
            *("--device", "gpu-a", "--specs", "{specs}"),
        ),
    ),
    Run(
        "explain-model",
        (
            *("explain", "--model", "test-13b", "--phase", "decode"),
            *("--device", "gpu-a", "--specs", "{specs}"),
        ),
    ),
    Run("report", ("report", "axpy-big", "--device", "gpu-b", "--specs", "{specs}")),
    Run("solve", ("solve", "axpy-tiny", "--device", "gpu-a", "--vary", "n", "--specs", "{specs}")),
    Run(
        "solve-grid",
        ("solve", "hostile-grid-g", "--device", "gpu-b", "--vary", "M", "--specs", "{specs}"),
    ),
    Run(
        "solve-model-tp",
        (
            *("solve", "--model", "test-13b", "--phase", "decode", "--device", "gpu-a"),
            *("--vary", "tp", "--specs", "{specs}"),
        ),
    ),
    Run(
        "solve-model-b",
        (
            *("solve", "--model", "test-13b", "--phase", "decode", "--device", "gpu-a"),
            *("--vary", "b", "--format", "json", "--specs", "{specs}"),
        ),
    ),
    Run(
        "plan",
        (
            *("plan", "--model", "test-13b", "--input", "64", "--output", "8"),
            *("--min-user-rate", "20", "--max-ttft", "500ms", "--specs", "{specs}"),
        ),
    ),
    Run("validate", ("validate", "--specs", "{specs}", "--format", "json")),
    Run("export", ("export", "--specs", "{specs}", "--format", "json")),
    Run("diff", ("diff", "HEAD", "--specs", "{specs}", "--format", "json"), repository=True),
    *_imports("csv", "plain.csv"),
)

# The site build, costlier than any other command: fewer examples.
SITE_COMMANDS = (Run("build", ("build", "--specs", "{specs}", "--out", "{out}")),)

HOSTILE = (
    "1e99999999",
    "1e400",
    "0",
    "-1",
    "0 s",
    "5 s",
    "1,234",
    "nan",
    "inf",
    "9" * 10_000,
    "x" * 5_000,
    "<script>alert(1)</script>",
    "'[x](javascript:alert(1))'",
    "__import__('os').system('true')",
    "().__class__.__bases__[0].__subclasses__()",
    "2**2**2**2**2**2",
    "M**M**M**M",
    "!!python/object/apply:os.system ['true']",
    "&a [1, 2]",
    "*a",
    "null",
    "[]",
    "{}",
    "'\u202etxt'",
    "'a\\u0000b'",
    "10 TFLOP/s",
    "3.35 TB/s",
    "1 µs",
    "-5 GB",
    "200%",
)


def _replace_value(text: str, at: int, token: str) -> str:
    """The value of the `at`-th `key: value` pair replaced by `token`."""
    pairs = list(re.finditer(r"(?m)(\w[\w.-]*: )([^\n{}\[\],#]+)", text))
    if not pairs:
        return text + token
    match = pairs[at % len(pairs)]
    return text[: match.start(2)] + token + text[match.end(2) :]


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True) or [""]


_KEY = re.compile(r"(?m)^([ -]*)([A-Za-z_][\w.-]*)(:)")


def _typo_key(text: str, at: int, token: str) -> str:
    """The `at`-th key misspelt: a letter dropped, or one of `token`'s added."""
    keys = list(_KEY.finditer(text))
    if not keys:
        return text
    key = keys[at % len(keys)]
    name = key.group(2)
    typo = name[:-1] if at % 2 and len(name) > 1 else name + (token[:1] or "x")
    return text[: key.start(2)] + typo + text[key.end(2) :]


def _add_key(text: str, at: int, token: str) -> str:
    """An unknown key with `token` as its value, beside the `at`-th key (same indent)."""
    keys = list(_KEY.finditer(text))
    if not keys:
        return f"extra: {token}\n{text}"
    key = keys[at % len(keys)]
    indent = " " * len(key.group(1))
    end = text.find("\n", key.end())
    end = len(text) if end < 0 else end + 1
    return text[:end] + f"{indent}extra{at % 7}: {token}\n" + text[end:]


MUTATIONS: dict[str, Callable[[str, int, str], str]] = {
    "truncate": lambda text, at, _: text[: at % (len(text) + 1)],
    "drop-line": lambda text, at, _: "".join(
        line for i, line in enumerate(_lines(text)) if i != at % len(_lines(text))
    ),
    "double-line": lambda text, at, _: "".join(
        line * (2 if i == at % len(_lines(text)) else 1) for i, line in enumerate(_lines(text))
    ),
    "replace-value": _replace_value,
    "typo-key": _typo_key,
    "add-key": _add_key,
    "insert-line": lambda text, at, token: "".join(
        (f"{token}\n" if i == at % len(_lines(text)) else "") + line
        for i, line in enumerate(_lines(text))
    ),
}


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The clean catalog every example starts from: devices gpu-a (2 µs launch floor) and
    gpu-b, kernel axpy with a measured run, a grid kernel, and the model test-13b with a
    measured pass and the kernels its steps name."""
    specs = write_measured(tmp_path_factory.mktemp("hostile"))
    shutil.copy(BUNDLED / "precisions.yaml", specs)  # int4, which `linear` names
    for kernel in ("linear", "attention-mha", "all-reduce", "send"):
        shutil.copy(BUNDLED / "kernels" / f"{kernel}.yaml", specs / "kernels")
    (specs / "kernels" / "hostile-grid.yaml").write_text(GRID_KERNEL, "utf-8")
    (specs / "models").mkdir()
    model = (BUNDLED / "models" / "test-13b.yaml").read_text("utf-8")
    # Its named deployments are on bundled devices this catalog does not have.
    model = re.sub(r"(?ms)^deployments:\n.*?\n\n", "", model)
    (specs / "models" / "test-13b.yaml").write_text(
        model.replace("\nsources:\n", MEASURED), "utf-8"
    )
    return specs


def _files(catalog: Path) -> list[str]:
    return sorted(p.relative_to(catalog).as_posix() for p in catalog.rglob("*.yaml"))


def _snapshot(root: Path) -> dict[str, str]:
    """Every file and link under `root`, with a digest of its bytes."""
    seen = {}
    for path in sorted(root.rglob("*")):
        key = path.relative_to(root).as_posix()
        if key == ".git" or key.startswith(".git/"):  # git's own bookkeeping (its index)
            continue
        if path.is_symlink():
            seen[key] = f"link:{path.readlink()}"
        elif path.is_file():
            seen[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return seen


class Hung(BaseException):
    """Raised in the command by the alarm: it ran past `BOUND_SECONDS`. A BaseException,
    so that no `except Exception` in rooflinec turns it into an exit code."""


@contextlib.contextmanager
def _bounded(seconds: int) -> Iterator[None]:
    def ring(signum: int, frame: FrameType | None) -> None:
        raise Hung(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


_LOCATED = re.compile(
    # FILE:LINE:COL: / FILE:LINE: / FILE: followed by a severity, or rooflinec's own
    r"^(?:(?:::)?(?:error|warning|notice)\b|rooflinec[\w -]*:|.+?:(?:\d+:){0,2} "
    r"(?:error|warning|note|info):)"
)


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str


def run(argv: list[str]) -> Outcome:
    """`main(argv)` in this process, its streams captured, bounded in time."""
    out, err = io.StringIO(), io.StringIO()
    with _bounded(BOUND_SECONDS), contextlib.redirect_stderr(err):
        code = main(argv, out=out)
    return Outcome(code, out.getvalue(), err.getvalue())


def assert_invariants(outcome: Outcome, root: Path, label: str, reports: bool = False) -> None:
    """Exit 0/1/2, no traceback, one located line per message, each short."""
    messages = outcome.stderr + (outcome.stdout if reports else "")
    assert outcome.code in (0, 1, 2), f"{label}: exit {outcome.code}: {messages[-600:]}"
    assert "Traceback" not in messages, f"{label}: {messages[-600:]}"
    for line in messages.splitlines():
        if not line.strip():
            continue
        shown = line.replace(str(root), "")
        assert len(shown) < LINE_LIMIT, f"{label}: a line of {len(shown)} characters: {shown}"
        assert _LOCATED.match(line), f"{label}: a line with no location: {shown[:200]}"


def _commit(work: Path) -> None:
    """`work` as a git repository whose one commit holds what is there now."""
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "x"]):
        subprocess.run([*git, *args], check=True, capture_output=True)


def _argv(command: Run, specs: Path, out: Path) -> list[str]:
    return [a.replace("{specs}", str(specs)).replace("{out}", str(out)) for a in command.argv]


def run_everywhere(
    catalog: Path,
    work: Path,
    file: str,
    mutation: str,
    at: int,
    token: str,
    commands: tuple[Run, ...] = COMMANDS,
) -> None:
    """Mutate `file` of a copy of `catalog` and run each of `commands` on it."""
    specs = work / "specs"
    shutil.copytree(catalog, specs)
    if any(command.repository for command in commands):
        _commit(work)
    target = specs / file
    target.write_text(MUTATIONS[mutation](target.read_text("utf-8"), at, token), "utf-8")
    label = f"{mutation} of {file} at {at} with {token[:40]!r}"
    for command in commands:
        out = work / "out" / f"{command.name}.result"
        out.parent.mkdir(exist_ok=True)
        before = _snapshot(work)
        outcome = run(_argv(command, specs, out))
        assert_invariants(outcome, work, f"{command.name} on {label}", command.reports)
        after = _snapshot(work)
        named = f"out/{out.name}"
        changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
        changed = {k for k in changed if k != named and not k.startswith(f"{named}/")}
        if command.writes and outcome.code == 0:
            # `--write` may change kernel specs, and nothing outside the specs folder
            changed = {k for k in changed if not k.startswith("specs/kernels/")}
        assert set() == changed, f"{command.name} on {label}: changed {sorted(changed)}"
        if outcome.code != 0:
            wrote = [k for k in after if k == named or k.startswith(f"{named}/")]
            assert [] == wrote, f"{command.name} on {label}: exit {outcome.code} but wrote"
        if out.is_dir():
            shutil.rmtree(out)
        out.unlink(missing_ok=True)
        if command.writes:  # the next command reads the catalog as mutated, not as imported
            shutil.rmtree(specs)
            shutil.copytree(catalog, specs)
            target.write_text(
                MUTATIONS[mutation]((catalog / file).read_text("utf-8"), at, token), "utf-8"
            )


def test_the_clean_catalog_passes_every_command(
    catalog: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Unmutated, every command succeeds: the suite's failures are the mutations'."""
    work = tmp_path_factory.mktemp("clean")
    specs = work / "specs"
    shutil.copytree(catalog, specs)
    _commit(work)
    for command in (*COMMANDS, *SITE_COMMANDS):
        outcome = run(_argv(command, specs, work / f"{command.name}.result"))
        assert_invariants(outcome, work, command.name, command.reports)
        assert 0 == outcome.code, f"{command.name}: {outcome.stderr}{outcome.stdout[-600:]}"


# One mutation: which kind, where in the file (taken modulo its size), with which token;
# the file itself is drawn in the test, from the catalog it mutates.
MUTATED = given(
    data=st.data(),
    mutation=st.sampled_from(sorted(MUTATIONS)),
    at=st.integers(min_value=0, max_value=10_000),
    token=st.sampled_from(HOSTILE),
)


@PROFILE
@MUTATED
def test_every_command_holds_under_a_mutated_catalog(
    catalog: Path,
    tmp_path_factory: pytest.TempPathFactory,
    data: st.DataObject,
    mutation: str,
    at: int,
    token: str,
) -> None:
    """Any one mutation of any one spec file: every command keeps the invariants."""
    file = data.draw(st.sampled_from(_files(catalog)), label="file")
    run_everywhere(catalog, tmp_path_factory.mktemp("mutated"), file, mutation, at, token)


# The whole bundled catalog (57 devices, every kernel and model, the method note's
# reference examples that tie them together) is costlier per run: fewer examples, and the
# commands that read all of it.
BUNDLED_COMMANDS = (
    Run("check", ("check", "--specs", "{specs}"), reports=True),
    Run("compile-jsonl", ("compile", "--specs", "{specs}", "--format", "jsonl", "--out", "{out}")),
)


@settings(PROFILE, max_examples=12)
@MUTATED
def test_the_bundled_catalog_holds_under_a_mutation(
    tmp_path_factory: pytest.TempPathFactory,
    data: st.DataObject,
    mutation: str,
    at: int,
    token: str,
) -> None:
    """One mutation of one bundled spec file (the precisions most often, which every other
    file depends on): `check` and `compile` keep the invariants."""
    files = _files(BUNDLED)
    file = data.draw(st.sampled_from(["precisions.yaml"] * len(files) + files), label="file")
    work = tmp_path_factory.mktemp("bundled")
    run_everywhere(BUNDLED, work, file, mutation, at, token, BUNDLED_COMMANDS)


@settings(PROFILE, max_examples=8)
@MUTATED
def test_the_site_build_holds_under_a_mutated_catalog(
    catalog: Path,
    tmp_path_factory: pytest.TempPathFactory,
    data: st.DataObject,
    mutation: str,
    at: int,
    token: str,
) -> None:
    """The site build, costlier than any other command, on fewer examples."""
    file = data.draw(st.sampled_from(_files(catalog)), label="file")
    work = tmp_path_factory.mktemp("site")
    run_everywhere(catalog, work, file, mutation, at, token, SITE_COMMANDS)


@pytest.mark.parametrize("flag", ["--tp", "--pp", "--ep", "--chips"])
@pytest.mark.parametrize("token", [*HOSTILE, "", " 1", "1\n", "08", "²", "1048577"])
@pytest.mark.parametrize("command", ["compile", "explain", "solve-tp", "solve-b"])
def test_a_hostile_degree_is_one_line_exit_2(
    catalog: Path, tmp_path: Path, flag: str, token: str, command: str
) -> None:
    """Any value of a deployment option that is not a whole number from 1 (a formula, a
    unit, a huge or negative number, markup, a control character) is a usage error: one
    line, exit 2, nothing written."""
    out = tmp_path / "out.json"
    argv = ["--specs", str(catalog), flag, token]
    model = ["--model", "test-13b", "--phase", "decode", "--device", "gpu-a"]
    if command == "compile":
        argv = ["compile", *argv, "--model", "test-13b", "--out", str(out)]
    elif command == "explain":
        argv = ["explain", *argv, *model]
    else:  # solve: the degree held (--vary tp) or given (--vary b)
        argv = ["solve", *argv, *model, "--vary", command.removeprefix("solve-")]
    outcome = run(argv)
    assert_invariants(outcome, tmp_path, f"{command} {flag} {token[:20]!r}")
    assert 2 == outcome.code
    assert 1 == len(outcome.stderr.splitlines())
    assert not out.exists()


@pytest.mark.parametrize("token", [*HOSTILE, "", "TP", " tp", "tp\n", "b,tp", "L", "s"])
def test_a_hostile_vary_of_a_model_is_one_line_exit_2(
    catalog: Path, tmp_path: Path, token: str
) -> None:
    """`solve --model` varies tp or b: any other `--vary` (a case's symbol, markup, a
    control character, a huge text) is a usage error: one line, exit 2."""
    argv = ["solve", "--specs", str(catalog), "--model", "test-13b", "--phase", "decode"]
    outcome = run([*argv, "--device", "gpu-a", "--vary", token])
    assert_invariants(outcome, tmp_path, f"solve --vary {token[:20]!r}")
    assert (2, "") == (outcome.code, outcome.stdout)
    assert 1 == len(outcome.stderr.splitlines())


@pytest.mark.parametrize("extra", [(), ("--tp", "2"), ("--device", "gpu-b")])
@pytest.mark.parametrize("token", [*HOSTILE, "", "hgx-h100-8", "../x", "a\nb"])
@pytest.mark.parametrize("command", ["compile", "explain"])
def test_a_hostile_named_deployment_is_one_line_exit_2(
    catalog: Path, tmp_path: Path, token: str, command: str, extra: tuple[str, ...]
) -> None:
    """`--deployment NAME` naming no deployment of the model (this catalog's test-13b names
    none), alone or beside degrees or a device: a usage error, one line, exit 2, nothing
    written."""
    out = tmp_path / "out.json"
    argv = ["--specs", str(catalog), "--model", "test-13b", "--deployment", token, *extra]
    if command == "compile":
        argv = ["compile", *argv, "--out", str(out)]
    else:
        argv = ["explain", *argv, "--phase", "decode"]
    outcome = run(argv)
    assert_invariants(outcome, tmp_path, f"{command} --deployment {token[:20]!r} {extra}")
    assert 2 == outcome.code
    assert 1 == len(outcome.stderr.splitlines())
    assert not out.exists()


PLAN = ("plan", "--model", "test-13b", "--input", "64", "--output", "8")
PLAN_VALID = {
    *((f, t) for f in ("--max-ttft", "--max-latency") for t in ("5 s", "1 µs")),
    ("--min-user-rate", "1.5"),
}
PLAN_TOKENS = (*HOSTILE, "", " ", "1e3", "1.5", "20 tokens/s", "a\nb", "10000000000")


@pytest.mark.parametrize(
    "flag",
    ["--input", "--output", "--min-user-rate", "--max-ttft", "--max-latency", "--max-chips"],
)
@pytest.mark.parametrize("token", PLAN_TOKENS)
def test_a_hostile_plan_option_is_one_line_exit_2(
    catalog: Path, tmp_path: Path, flag: str, token: str
) -> None:
    """`plan`'s token counts, targets and chip limit refuse a bad unit, a negative, zero,
    huge or non-number, markup or a control character: a usage error, one line, exit 2,
    nothing on standard output. (A rate takes no unit; a time needs one.)"""
    if (flag, token) in PLAN_VALID:
        pytest.skip("a valid value")
    argv = [*PLAN, "--specs", str(catalog), f"{flag}={token}"]
    outcome = run(argv)
    assert_invariants(outcome, tmp_path, f"plan {flag} {token[:20]!r}")
    assert (2, "") == (outcome.code, outcome.stdout)
    assert 1 == len(outcome.stderr.splitlines())


@pytest.mark.parametrize(
    "extra",
    [
        ("--price", "gpu-a"),
        ("--price", "gpu-a="),
        ("--price", "=2.5USD/h"),
        ("--price", "gpu-a=2.5"),
        ("--price", "gpu-a=2.5 USD"),
        ("--price", "gpu-a=-1USD/h"),
        ("--price", "gpu-a=0USD/h"),
        ("--price", "gpu-a=1e400USD/h"),
        ("--price", "gpu-a=2.5 GB"),
        ("--price", "nvidia-h100-sxm=2.5USD/h"),
        ("--price", "gpu-a=1USD/h", "--price", "gpu-a=2USD/h"),
        ("--device", "no-such-device"),
        ("--device", "<script>"),
        ("--request", "no-such-request"),
        ("--precision", "fp3"),
    ],
)
def test_a_hostile_plan_price_device_or_request_is_one_line_exit_2(
    catalog: Path, tmp_path: Path, extra: tuple[str, ...]
) -> None:
    """A malformed `--price`, a price of an unknown device or twice, an unknown device,
    request or precision: one line, exit 2, nothing on standard output."""
    base: tuple[str, ...] = PLAN
    if "--request" in extra:
        base = ("plan", "--model", "test-13b")
    outcome = run([*base, "--specs", str(catalog), *extra])
    assert_invariants(outcome, tmp_path, f"plan {extra}")
    assert (2, "") == (outcome.code, outcome.stdout)
    assert 1 == len(outcome.stderr.splitlines())


@pytest.mark.parametrize("model", ["no-such-model", "", "../x", "a\nb", "x" * 5000])
def test_a_hostile_plan_model_is_one_line_exit_2(catalog: Path, tmp_path: Path, model: str) -> None:
    """An unknown `--model`: one line, exit 2, nothing on standard output."""
    argv = ["plan", f"--model={model}", "--input", "8", "--output", "8"]
    outcome = run([*argv, "--specs", str(catalog)])
    assert_invariants(outcome, tmp_path, f"plan --model {model[:20]!r}")
    assert (2, "") == (outcome.code, outcome.stdout)
    assert 1 == len(outcome.stderr.splitlines())


@pytest.mark.parametrize("flag", ["--input", "--output", "--batch", "--request"])
@pytest.mark.parametrize("token", [*HOSTILE, "", "1.5", "1e3", " 1", "1\n", "²", "10000001"])
@pytest.mark.parametrize("command", ["compile", "explain"])
def test_a_hostile_request_is_one_line_exit_2(
    catalog: Path, tmp_path: Path, flag: str, token: str, command: str
) -> None:
    """A request's tokens or batch that is not a whole number in range (zero, negative, a
    fraction, a formula, huge, markup, a control character), or a request shape the model
    does not name: a usage error, one line, exit 2, nothing written."""
    out = tmp_path / "out.json"
    given = {"--input": "64", "--output": "8"}
    if flag == "--request":
        given = {}
    given[flag] = token
    argv = ["--specs", str(catalog), "--model", "test-13b"]
    argv += [x for pair in given.items() for x in pair]
    if command == "compile":
        argv = ["compile", *argv, "--out", str(out)]
    else:
        argv = ["explain", *argv, "--device", "gpu-a"]
    outcome = run(argv)
    assert_invariants(outcome, tmp_path, f"{command} {flag} {token[:20]!r}")
    assert (2, "") == (outcome.code, outcome.stdout)
    assert 1 == len(outcome.stderr.splitlines())
    assert outcome.stderr.startswith("rooflinec: error: ")
    assert not out.exists()


def test_the_bound_stops_a_hang() -> None:
    """The time bound works: a command that never returns is stopped with `Hung`."""
    with pytest.raises(Hung), _bounded(1):
        while True:
            signal.pause()


# Commands the mutated-catalog properties do not run, each with where its own hostile
# tests are. Anything else in the CLI's table must have a row above.
ELSEWHERE = {
    "serve": "a server that runs until stopped: tests/test_site_serve.py gives it broken "
    "and crashing specs and checks every page still answers with the error banner",
    "publish": "commits a build to a git branch with mike: tests/test_publish.py",
}


def test_every_command_joins_the_suite() -> None:
    """Every command of the CLI runs in one of the properties above, or is listed in
    `ELSEWHERE` with the tests that hold it to the same rules."""
    ran = {run.argv[0] for run in (*COMMANDS, *BUNDLED_COMMANDS, *SITE_COMMANDS)}
    assert set() == {c.name for c in cli.COMMANDS} - ran - ELSEWHERE.keys()


def test_every_importer_has_a_corpus_of_bad_exports() -> None:
    """Every `import` kind has its folder of bad exports (tests/cases/imports/KIND), which
    tests/test_import_hostile.py runs with the same invariants, and its mutated exports."""
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    kinds = next(a for a in sub.choices["import"]._actions if a.dest == "kind").choices
    corpus = REPO / "tests" / "cases" / "imports"
    assert [] == [k for k in kinds if not any((corpus / k).glob("*.expect"))]
