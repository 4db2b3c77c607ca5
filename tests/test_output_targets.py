"""Where `compile --out` may write and how: never over a file `check` reads, atomically over
regular files (through links), straight into devices and pipes, one line for a write the
system refuses, and SIGTERM and a closed pipe handled as Ctrl-C and `| head` are.

No test here writes to a real device node: the devices written are made with `os.mknod`
in a temporary folder (skipped where that is not allowed), and `/dev/null` and friends are
only inspected, so even the old behaviour (renaming over the target) could only replace a
test's own node.
"""

from __future__ import annotations

import errno
import io
import os
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.synth import write_catalog
from rooflinec.cli.main import main
from rooflinec.errors import Terminated
from rooflinec.outputs import outfile
from rooflinec.outputs.outfile import read_by_check
from tests.specfactory import REPO, TOY_DEVICE, write_specs

KERNEL = """\
id: axpy
name: AXPY
description: y = a x + y.
symbols: {n: values}
flops: 2*n
bytes: {dram: 3*n*w}
cases:
  - id: axpy-big
    name: big
    precision: bf16
    shape: {n: 1000000000}
"""


@pytest.fixture
def specs(tmp_path: Path) -> Path:
    """A one-device, one-kernel catalog beside a pyproject.toml, under tmp_path/project."""
    folder = write_specs(tmp_path / "project", {"toy": TOY_DEVICE}, {"axpy": KERNEL})
    (folder.parent / "pyproject.toml").write_text("[tool.rooflinec.disable]\n", "utf-8")
    return folder


@pytest.fixture(autouse=True)
def _real_devices_untouched() -> Iterator[None]:
    """Whatever a test does, /dev/null and /dev/full are still the devices they were."""
    before = [os.lstat(p) for p in ("/dev/null", "/dev/full")]
    yield
    after = [os.lstat(p) for p in ("/dev/null", "/dev/full")]
    assert all(stat.S_ISCHR(s.st_mode) for s in after)
    assert [(s.st_ino, s.st_rdev) for s in before] == [(s.st_ino, s.st_rdev) for s in after]


def compile_out(specs: Path, out: Path | str, *args: str) -> int:
    return main(["compile", "--specs", str(specs), "--out", str(out), *args], out=io.StringIO())


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` with its bytes (links as what they point at)."""
    return {
        p.relative_to(folder).as_posix(): (
            os.readlink(p).encode() if p.is_symlink() else p.read_bytes()
        )
        for p in sorted(folder.rglob("*"))
        if p.is_file() or p.is_symlink()
    }


def stdout_of(specs: Path, *args: str) -> str:
    text = io.StringIO()
    assert 0 == main(["compile", "--specs", str(specs), *args], out=text)
    return text.getvalue()


# --------------------------------------------------------------------------- what check reads


def _targets(specs: Path) -> dict[str, tuple[Path, tuple[str, ...]]]:
    """Targets that are (or reach) a file check reads, with the compile options used."""
    outside = specs.parent.parent
    link = outside / "results.yaml"
    link.symlink_to(specs / "kernels" / "axpy.yaml")
    hard = outside / "hard.yaml"
    os.link(specs / "devices" / "toy.yaml", hard)
    return {
        "a kernel spec": (specs / "kernels" / "axpy.yaml", ("--format", "json")),
        "through ..": (specs / ".." / "specs" / "precisions.yaml", ("--format", "csv")),
        "a new file in the specs": (specs / "kernels" / "new.json", ("--format", "json")),
        "the pyproject.toml beside the specs": (specs.parent / "pyproject.toml", ()),
        "a link to a spec": (link, ("--format", "jsonl")),
        "a hard link to a spec": (hard, ("--format", "csv")),
        "parquet onto a spec": (specs / "devices" / "toy.yaml", ("--format", "parquet")),
        "a partition folder in the specs": (
            specs / "parts",
            ("--format", "parquet", "--partition", "device"),
        ),
        "a partition folder holding the specs": (
            specs.parent,
            ("--format", "parquet", "--partition", "device"),
        ),
    }


@pytest.mark.parametrize(
    "what",
    [
        "a kernel spec",
        "through ..",
        "a new file in the specs",
        "the pyproject.toml beside the specs",
        "a link to a spec",
        "a hard link to a spec",
        "parquet onto a spec",
        "a partition folder in the specs",
        "a partition folder holding the specs",
    ],
)
def test_files_check_reads_are_refused(
    specs: Path, what: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A target that is, reaches or holds a file `check` reads: exit 2, one line, and not a
    byte written anywhere (the specs, the pyproject.toml, the links)."""
    target, args = _targets(specs)[what]
    root = specs.parent.parent
    before = snapshot(root)
    assert 2 == compile_out(specs, target, *args)
    err = capsys.readouterr().err
    assert err.startswith(f"rooflinec: error: refusing to write {target}: it ")
    assert 1 == err.count("\n")
    assert before == snapshot(root)


def test_default_specs_folder_is_guarded_too(
    specs: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --specs, the ./specs folder in use is the one guarded: the tab-completion slip
    `compile --out specs/kernels/axpy.yaml` is refused."""
    monkeypatch.chdir(specs.parent)
    before = snapshot(specs)
    code = main(["compile", "--format", "json", "--out", "specs/kernels/axpy.yaml"])
    assert 2 == code
    assert "inside the specs folder" in capsys.readouterr().err
    assert before == snapshot(specs)


def test_other_files_are_not_refused(specs: Path) -> None:
    """Beside the specs folder (not its pyproject.toml), a name is written as usual."""
    assert None is read_by_check(specs.parent / "results.json", specs)
    assert None is read_by_check(specs.parent / "specs-results", specs, folder=True)
    assert 0 == compile_out(specs, specs.parent / "results.json", "--format", "json")


_PARTS = st.lists(st.sampled_from([".", "..", "kernels", "devices", "specs"]), max_size=6)


@settings(max_examples=60, derandomize=True, deadline=None)
@given(parts=_PARTS)
def test_refused_exactly_when_the_name_lands_in_the_specs(parts: list[str]) -> None:
    """However a relative name climbs and descends, `read_by_check` refuses it exactly
    when the path it resolves to is the specs folder or inside it."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        specs = root / "a" / "specs"
        for sub in ("kernels", "devices"):
            (specs / sub).mkdir(parents=True)
        target = specs.joinpath(*parts, "out.json")
        inside = Path(os.path.realpath(target)).is_relative_to(specs)
        assert inside == (read_by_check(target, specs) is not None)


# --------------------------------------------------------------------------- what is replaced


def test_link_stays_a_link(specs: Path, tmp_path: Path) -> None:
    """`--out LINK`: the file the link ends at is replaced, the link stays a link; a link
    to nothing yet makes the file it names."""
    final = tmp_path / "data" / "r.csv"
    final.parent.mkdir()
    final.write_text("old\n", "utf-8")
    link = tmp_path / "latest.csv"
    link.symlink_to(final)
    assert 0 == compile_out(specs, link, "--format", "csv")
    assert link.is_symlink() and final == link.resolve()
    assert stdout_of(specs, "--format", "csv") == final.read_text("utf-8")
    dangling = tmp_path / "next.csv"
    dangling.symlink_to(tmp_path / "data" / "new.csv")
    assert 0 == compile_out(specs, dangling, "--format", "csv")
    assert dangling.is_symlink()
    assert stdout_of(specs, "--format", "csv") == (tmp_path / "data" / "new.csv").read_text()
    assert [] == [p.name for p in (tmp_path / "data").iterdir() if p.name.startswith(".")]


def test_real_devices_are_streamed_never_replaced() -> None:
    """`/dev/null`, `/dev/full`, `/dev/stdout` and `/dev/fd/1` are written to as they are
    (planned only: nothing is written here)."""
    for name in ("/dev/null", "/dev/full", "/dev/stdout", "/dev/fd/1"):
        plan = outfile._plan(Path(name), None)
        assert (Path(name), True) == (plan.path, plan.stream), name


def _device(folder: Path, name: str, minor: int) -> Path:
    """A character device with the numbers of /dev/null (minor 3) or /dev/full (minor 7),
    made in `folder`; the test is skipped where the system does not allow it."""
    path = folder / name
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
        with open(path, "wb") as handle:  # a filesystem mounted nodev refuses this
            handle.write(b"")
    except (OSError, AttributeError) as exc:
        pytest.skip(f"cannot make a character device here: {exc}")
    return path


@pytest.mark.parametrize("format", ["csv", "json", "table", "parquet"])
def test_a_null_device_stays_a_device(specs: Path, tmp_path: Path, format: str) -> None:
    """`--out` a character device such as /dev/null (here a copy in a temporary folder):
    exit 0, and the device is still the same device, no temporary file beside it."""
    dev = tmp_path / "devs"
    dev.mkdir()
    null = _device(dev, "null", 3)
    before = os.lstat(null)
    assert 0 == compile_out(specs, null, "--format", format)
    after = os.lstat(null)
    assert stat.S_ISCHR(after.st_mode)
    assert (before.st_ino, before.st_rdev) == (after.st_ino, after.st_rdev)
    assert ["null"] == [p.name for p in dev.iterdir()]


@pytest.mark.parametrize(
    "args", [("--format", "csv"), ("--format", "json"), ("--format", "parquet")]
)
def test_a_full_device_is_one_line(
    specs: Path, tmp_path: Path, args: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    """`--out` a device like /dev/full: `cannot write PATH: No space left on device`,
    exit 1, no traceback, the device left a device."""
    full = _device(tmp_path, "full", 7)
    assert 1 == compile_out(specs, full, *args)
    assert f"rooflinec: error: cannot write {full}: No space left on device\n" == (
        capsys.readouterr().err
    )
    assert stat.S_ISCHR(os.lstat(full).st_mode)


def test_a_fifo_is_streamed(specs: Path, tmp_path: Path) -> None:
    """`--out FIFO`: the reader gets exactly what stdout would, and the FIFO stays one."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as handle:
            got.append(handle.read())

    reader = threading.Thread(target=read)
    reader.start()
    try:
        assert 0 == compile_out(specs, fifo, "--format", "jsonl")
    finally:
        reader.join(timeout=60)
    assert [stdout_of(specs, "--format", "jsonl").encode()] == got
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert ["pipe"] == [p.name for p in tmp_path.iterdir() if p.name != "project"]


def test_dev_stdout_appends_to_the_file_behind_it(specs: Path, tmp_path: Path) -> None:
    """`--out /dev/stdout >> log`: the rows are added after what the log held; the log
    is not replaced by a file holding the rows alone."""
    log = tmp_path / "log.txt"
    log.write_text("earlier\n", "utf-8")
    command = [sys.executable, "-m", "rooflinec", "compile", "--specs", str(specs)]
    with open(log, "ab") as handle:
        proc = subprocess.run(
            [*command, "--format", "csv", "--out", "/dev/stdout"],
            stdout=handle,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            timeout=120,
        )
    assert (0, "") == (proc.returncode, proc.stderr)
    assert "earlier\n" + stdout_of(specs, "--format", "csv") == log.read_text("utf-8")


def test_a_socket_is_refused(
    specs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A socket is neither a file nor a stream rooflinec opens: exit 2, one line."""
    path = Path(tempfile.mkdtemp(dir="/tmp")) / "s"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        assert 2 == compile_out(specs, path, "--format", "csv")
    finally:
        server.close()
        path.unlink()
        path.parent.rmdir()
    assert "it is a socket" in capsys.readouterr().err


# --------------------------------------------------------------------------- write failures


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith((".tmp", ".old")))


@pytest.mark.parametrize(
    "args",
    [
        ("--format", "csv"),
        ("--format", "json"),
        ("--format", "jsonl"),
        ("--format", "table"),
        ("--format", "parquet"),
        ("--format", "parquet", "--partition", "device"),
    ],
)
def test_full_disk_is_one_line_and_keeps_the_old_output(
    specs: Path,
    tmp_path: Path,
    args: tuple[str, ...],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """ENOSPC when the output is flushed to disk, in every format: exit 1, `cannot write
    PATH: No space left on device`, the previous output as it was, no temporary left."""
    out = tmp_path / "out"
    out.mkdir()
    target = out / "results"
    assert 0 == compile_out(specs, target, *args)
    before = snapshot(out)

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(outfile.os, "fsync", full)
    assert 1 == compile_out(specs, target, *args)
    expected = f"rooflinec: error: cannot write {target}: No space left on device\n"
    assert expected == capsys.readouterr().err
    assert before == snapshot(out)
    assert [] == _leftovers(out)


@pytest.mark.parametrize("partition", [False, True])
def test_unwritable_folder_fails_before_the_work(
    specs: Path,
    tmp_path: Path,
    partition: bool,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A folder rooflinec may not write in (root passes permission bits, so the check is
    told so): exit 1, `Permission denied`, before anything is compiled."""
    monkeypatch.setattr(outfile.os, "access", lambda path, mode: False)
    target = tmp_path / "results.parquet"
    args = ("--format", "parquet", *(("--partition", "device") if partition else ()))
    assert 1 == compile_out(specs, target, *args)
    assert f"rooflinec: error: cannot write {target}: Permission denied\n" == (
        capsys.readouterr().err
    )
    assert not os.path.lexists(target)


def test_refused_temporary_file_is_one_line(
    specs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The system refuses the temporary file itself (EACCES, EROFS): one line, exit 1."""

    made = os.open

    def refuse(path: str, flags: int, *args: int) -> int:
        if flags & os.O_EXCL:  # the temporary file, made new beside the target
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(tmp_path))
        return made(path, flags, *args)

    monkeypatch.setattr(outfile.os, "open", refuse)
    target = tmp_path / "r.csv"
    assert 1 == compile_out(specs, target, "--format", "csv")
    assert f"rooflinec: error: cannot write {target}: Permission denied\n" == (
        capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("name", "code", "reason"),
    [
        (".", 2, "it is a folder"),
        ("missing/r.csv", 2, "is not a folder"),
        ("x" * 300, 1, "File name too long"),
        ("y" * 250, 0, ""),  # a long name that fits: its temporary file's name fits too
    ],
)
def test_bad_names(
    specs: Path,
    tmp_path: Path,
    name: str,
    code: int,
    reason: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A folder given for a file and a missing folder are usage errors (exit 2), a name
    the filesystem refuses is a write error (exit 1); each one line, nothing written."""
    monkeypatch.chdir(tmp_path)
    assert code == compile_out(specs, name, "--format", "csv")
    err = capsys.readouterr().err
    assert reason in err and err.count("\n") == (1 if code else 0)
    assert "internal error" not in err
    leftover = [p.name for p in tmp_path.iterdir() if p.name not in ("project", "y" * 250)]
    assert [] == leftover


def test_build_staging_refused_is_one_line(
    specs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`build --out` into a folder where the staging folder cannot be made: one line,
    exit 1, never an internal error."""
    pytest.importorskip("mkdocs")
    from rooflinec.site import build

    made = os.mkdir

    def refuse(path: Path, *args: int) -> None:
        if ".building-" in str(path):  # the staging folder, beside the target
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        made(path, *args)

    monkeypatch.setattr(build.os, "mkdir", refuse)
    out = tmp_path / "site"
    assert 1 == main(["build", "--specs", str(specs), "--out", str(out)], out=io.StringIO())
    assert f"rooflinec: error: cannot write {out.resolve()}: Permission denied\n" == (
        capsys.readouterr().err
    )


# --------------------------------------------------------------------------- signals


def _signal_when(
    argv: list[str], started: Callable[[], bool], cwd: Path, signum: int
) -> subprocess.CompletedProcess[str]:
    """Run `python -m rooflinec ARGV` (the console entry point), send `signum` once
    `started()` says the output is being written, and wait for it to end."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "rooflinec", *argv],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    deadline = time.monotonic() + 120
    while not started() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, "the command ended before the signal could be sent"
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


@pytest.mark.parametrize(
    "args", [("--format", "csv"), ("--format", "parquet", "--partition", "device")]
)
def test_sigterm_cleans_up_as_ctrl_c(tmp_path: Path, args: tuple[str, ...]) -> None:
    """SIGTERM while a big compile writes: exit 143, `rooflinec: terminated` alone on
    stderr, no temporary file or folder left, the previous output intact."""
    specs = write_catalog(tmp_path / "catalog", devices=40, cases=1700)  # 408,000 rows
    out = tmp_path / "out"
    out.mkdir()
    target = out / "results"
    small = ["compile", "--specs", str(specs), *args, "--out", str(target), "--device"]
    assert 0 == main([*small, "syn-device-0000"], out=io.StringIO())
    before = snapshot(out)
    proc = _signal_when(
        ["compile", "--specs", str(specs), *args, "--out", str(target)],
        lambda: any(p.name.endswith(".tmp") for p in out.iterdir()),
        tmp_path,
        signal.SIGTERM,
    )
    assert (143, "rooflinec: terminated\n") == (proc.returncode, proc.stderr)
    assert before == snapshot(out)
    assert [] == _leftovers(out)


_DROPPED_STOP = """
import sys, weakref
from rooflinec.cli.main import _unraisable, main
from rooflinec.errors import Terminated

sys.unraisablehook = _unraisable  # as `console` installs it


class Loaded:
    pass


def callback(ref):
    raise Terminated  # SIGTERM inside a callback whose exceptions Python drops


module = Loaded()
ref = weakref.ref(module, callback)
del module
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("args", [("--format", "csv"), ("--format", "json")])
def test_a_sigterm_python_dropped_still_stops_the_write(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    """A SIGTERM that lands in a callback Python runs and whose exception it drops (a
    weak reference's, as importlib runs while a module loads) is recorded: the output is
    not committed, the exit is 143 with `rooflinec: terminated` alone, nothing is left."""
    target = tmp_path / "out" / "results"
    target.parent.mkdir()
    command = [sys.executable, "-c", _DROPPED_STOP, "compile", "--specs", str(REPO / "specs")]
    proc = subprocess.run(
        [*command, *args, "--out", str(target)], capture_output=True, text=True, check=False
    )
    assert (143, "rooflinec: terminated\n") == (proc.returncode, proc.stderr)
    assert [] == list(target.parent.iterdir())


class _Stopped(io.StringIO):
    """A stream whose first write is where the process is told to stop."""

    def write(self, text: str) -> int:
        raise Terminated


def test_terminated_is_reported_as_such(capsys: pytest.CaptureFixture[str]) -> None:
    """`Terminated` raised inside a command (here, as it writes): exit 143 and one line."""
    assert 143 == main(["export"], out=_Stopped())
    assert "rooflinec: terminated\n" == capsys.readouterr().err


class _StoppedWhileDefining(io.StringIO):
    """A stream whose first write is stopped by SIGTERM while Python defines a class:
    the `Terminated` raised in `__set_name__` reaches the command as a `RuntimeError`."""

    def write(self, text: str) -> int:
        class Descriptor:
            def __set_name__(self, owner: type, name: str) -> None:
                raise Terminated

        type("Owner", (), {"field": Descriptor()})
        raise AssertionError("unreachable: defining the class raises")


@pytest.mark.parametrize("stop", [Terminated, KeyboardInterrupt])
def test_a_wrapped_stop_is_reported_as_such(
    stop: type[BaseException], capsys: pytest.CaptureFixture[str]
) -> None:
    """A stop raised inside a library and wrapped in another exception (the `RuntimeError`
    Python raises from a failing `__set_name__`, or any `raise ... from`) is still a stop:
    exit 143 or 130 and one line, not an internal error."""

    class Wrapping(io.StringIO):
        def write(self, text: str) -> int:
            try:
                raise stop
            except BaseException as exc:
                raise RuntimeError("while writing") from exc

    expected = (
        (143, "rooflinec: terminated\n")
        if stop is Terminated
        else (
            130,
            "rooflinec: interrupted\n",
        )
    )
    code = main(["export"], out=Wrapping())
    assert expected == (code, capsys.readouterr().err)


def test_a_stop_while_a_class_is_defined_is_reported_as_such(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """SIGTERM while a module defines a class (Python wraps it in `RuntimeError`): 143."""
    assert 143 == main(["export"], out=_StoppedWhileDefining())
    assert "rooflinec: terminated\n" == capsys.readouterr().err


def test_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    """`compile | head -1` and `compile --out /dev/stdout | head -1`: the reader goes
    away after one line; exit 0 and nothing on stderr."""
    specs = write_catalog(tmp_path / "catalog", devices=4, cases=200)
    command = [sys.executable, "-m", "rooflinec", "compile", "--specs", str(specs)]
    for extra in ([], ["--out", "/dev/stdout"]):
        with subprocess.Popen(
            [*command, "--format", "csv", *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        ) as proc:
            assert proc.stdout is not None and proc.stderr is not None
            assert proc.stdout.readline().startswith(b"case,kernel,")
            proc.stdout.close()
            stderr = proc.stderr.read()
            assert (0, b"") == (proc.wait(timeout=120), stderr), extra


def test_sigterm_stops_a_build_and_keeps_nothing(tmp_path: Path) -> None:
    """SIGTERM during `build`: exit 143, and neither the site nor its staging folder is
    left."""
    pytest.importorskip("mkdocs")
    out = tmp_path / "site"
    specs = REPO / "specs"
    proc = _signal_when(
        ["build", "--specs", str(specs), "--out", str(out)],
        lambda: any(".building-" in p.name for p in tmp_path.iterdir()),
        tmp_path,
        signal.SIGTERM,
    )
    assert 143 == proc.returncode, proc.stderr
    assert proc.stderr.endswith("rooflinec: terminated\n")
    assert "Traceback" not in proc.stderr
    assert [] == [p.name for p in tmp_path.iterdir()]


def test_same_file_finds_the_terminal_and_the_file(tmp_path: Path) -> None:
    """`same_file` (no progress line over rows going to stderr's terminal): the terminal
    behind an open descriptor by its name, a file by its name, and nothing else."""
    master, slave = os.openpty()
    try:
        with open(slave, "w", closefd=False) as terminal:
            assert outfile.same_file(Path(os.ttyname(slave)), terminal)
            assert not outfile.same_file(tmp_path / "r.csv", terminal)
    finally:
        os.close(master)
        os.close(slave)
    target = tmp_path / "r.csv"
    target.write_text("", "utf-8")
    with open(target, "a", encoding="utf-8") as handle:
        assert outfile.same_file(target, handle)
    assert not outfile.same_file(target, io.StringIO())


@pytest.mark.parametrize("argv", [["export"], ["compile", "--format", "csv"], ["compile"]])
def test_full_standard_output_is_one_line(argv: list[str]) -> None:
    """`rooflinec ... > /dev/full` (opened, never replaced): `cannot write standard output:
    No space left on device`, exit 1, nothing else on stderr."""
    with open("/dev/full", "wb") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "rooflinec", *argv, "--specs", str(REPO / "specs")],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            timeout=300,
        )
    expected = "rooflinec: error: cannot write standard output: No space left on device\n"
    assert (1, expected) == (proc.returncode, proc.stderr)
