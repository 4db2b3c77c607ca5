"""Output files written whole or not at all: `compile --out FILE` and its Parquet folders.

What rooflinec writes is the output the user named, and nothing else:

- never a file `check` reads: nothing inside the specs folder in use, nor the
  `pyproject.toml` beside it, however the name reaches it (`..`, a link, a hard link);
  `read_by_check` says why, and `build --out` refuses by the same rule;
- a regular file, or a name where nothing is yet, is written to a temporary file beside
  it (same folder, so the same filesystem), flushed to disk (`fsync`) and moved onto it
  in one `os.replace`: a reader sees the old file or the new one, never half of one. A
  link is followed and the file it ends at is replaced; the link stays a link;
- a character device or a pipe (`/dev/null` to time a run, `/dev/stdout`, a FIFO) is
  written to as it is, never replaced: renaming over `/dev/null` as root would replace
  the device of every process on the machine with a file. A link through `/proc/*/fd`
  (`/dev/stdout`, `/dev/fd/1`) is such a stream whatever it points at, since replacing
  the file behind it would drop what the shell had written there (`>>`). A block device
  or a socket is refused;
- on any error, Ctrl-C or SIGTERM the temporary file is removed and an existing target
  is left as it was. A write the system refuses (a full disk, a folder rooflinec may not
  write in) is a `WriteError`, `cannot write PATH: REASON`, never a traceback.

A folder (partitioned Parquet) is written to a temporary folder beside its target and
renamed into place. It records what it wrote in `.rooflinec-output.json`; a later write
replaces a folder only when it is empty or holds nothing but what that record lists,
so a folder of someone else's files is never deleted (the spirit of `build --out`'s
manifest, `rooflinec.site.output`). Replacing an existing folder takes two renames
(the old one aside, the new one in) and then removes the old one.
"""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
import shutil
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TypeVar

from rooflinec.errors import PENDING_STOP, UsageError, WriteError

__all__ = [
    "RECORD",
    "FreshEntry",
    "atomic_file",
    "atomic_folder",
    "check_file_target",
    "check_folder_target",
    "read_by_check",
    "same_file",
    "write_error",
]

RECORD = ".rooflinec-output.json"
_RECORD_FORMAT = 1
# A link in one of these folders is one of a process's open files (`/dev/stdout` ends in
# `/proc/self/fd/1`): opening it reaches what that descriptor is open on.
_FD_FOLDER = re.compile(r"/proc/[^/]+(?:/task/[^/]+)?/fd")
# Links followed by hand before giving up (the kernel's own limit is 40).
_MAX_LINKS = 40
# The longest part of the target's name a temporary file's name repeats.
_TEMP_NAME_CHARS = 64


def _shown(path: Path | str) -> str:
    """A path for a one-line message: control characters escaped."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in str(path))


def _reason(exc: OSError) -> str:
    """What the system said, `No space left on device`, without the errno and path
    `str(exc)` repeats (an `OSError` of a library may carry a message only)."""
    if exc.errno:
        return exc.strerror or os.strerror(exc.errno)
    return str(exc) or exc.__class__.__name__


def write_error(target: Path, exc: OSError) -> WriteError:
    """`exc`, raised while writing `target`, as the one line the CLI prints."""
    return WriteError(_shown(target), _reason(exc))


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def same_file(target: Path, stream: object) -> bool:
    """Whether writing `target` writes where `stream` (an open file) goes: the same file,
    or the same terminal (`--out /dev/stdout` on the terminal stderr shows)."""
    try:
        fileno = getattr(stream, "fileno", None)
        if fileno is None:
            return False
        opened, named = os.fstat(fileno()), os.stat(target)
    except (OSError, ValueError):
        return False
    if stat.S_ISCHR(opened.st_mode) and stat.S_ISCHR(named.st_mode):
        return opened.st_rdev == named.st_rdev
    return (opened.st_dev, opened.st_ino) == (named.st_dev, named.st_ino)


def _checked_files(specs: Path) -> set[tuple[int, int]]:
    """(device, inode) of every file under `specs`: a hard link shares them."""
    found: set[tuple[int, int]] = set()
    for folder, _, names in os.walk(specs):
        for name in names:
            identity = _identity(Path(folder) / name)
            if identity is not None:
                found.add(identity)
    return found


def read_by_check(target: Path, specs: Path, *, folder: bool = False) -> str | None:
    """Why `target` may not be written, being (or holding) a file `check` of `specs`
    reads: a file or folder inside the specs folder, the `pyproject.toml` beside it
    (`[tool.rooflinec.disable]`), a hard link to one of them; for an output `folder`,
    also a folder that holds the specs. None when it may be written. Reads, changes
    nothing."""
    resolved = Path(os.path.realpath(target))
    root = Path(os.path.realpath(specs))
    if resolved.is_relative_to(root):
        return f"it is inside the specs folder {_shown(root)}, which check reads"
    if folder and root.is_relative_to(resolved):
        return f"it contains the specs folder {_shown(root)}, which check reads"
    project = root.parent / "pyproject.toml"
    where = _identity(resolved)
    if resolved == Path(os.path.realpath(project)) or (
        where is not None and where == _identity(project)
    ):
        return f"it is {_shown(project)}, whose [tool.rooflinec] table check reads"
    with suppress(OSError):
        st = os.stat(resolved)
        if stat.S_ISREG(st.st_mode) and st.st_nlink > 1 and where in _checked_files(root):
            return f"it is a hard link to a file of the specs folder {_shown(root)}"
    return None


def _refuse_checked(target: Path, specs: Path | None, *, folder: bool = False) -> None:
    if specs is None:
        return
    why = read_by_check(target, specs, folder=folder)
    if why is not None:
        raise UsageError(f"refusing to write {_shown(target)}: {why}")


def _through_fd_link(target: Path) -> bool:
    """Whether following `target`'s links passes through a process's open file
    (`/dev/stdout` -> `/proc/self/fd/1`)."""
    try:
        path = Path(os.getcwd()) / target  # `..` kept: it is resolved link by link below
    except OSError:
        return False
    for _ in range(_MAX_LINKS):
        try:
            if not path.is_symlink():
                return False
            parent = os.path.realpath(path.parent)
            if _FD_FOLDER.fullmatch(parent):
                return True
            path = Path(parent) / os.readlink(path)
        except (OSError, ValueError):
            return False  # the write itself reports what is wrong with the name
    return False


def _parent(target: Path) -> Path:
    parent = target.absolute().parent
    if not parent.is_dir():
        raise UsageError(f"cannot write {_shown(target)}: {_shown(parent)} is not a folder")
    return parent


@dataclass(frozen=True)
class _Plan:
    """How one output file is written: `stream` straight into `path` (a device, a pipe),
    or atomically onto `path` (the file at the end of the target's links)."""

    path: Path
    stream: bool


def _writable_folder(target: Path, folder: Path) -> None:
    """`WriteError` now, before any work, when no file can be made in `folder`."""
    if os.access(folder, os.W_OK | os.X_OK):
        return
    code = errno.EACCES
    with suppress(OSError):
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            code = errno.EROFS
    raise WriteError(_shown(target), os.strerror(code))


def _plan(target: Path, specs: Path | None) -> _Plan:
    """Where and how `target` is written, or the error that stops it (reads, writes
    nothing)."""
    _refuse_checked(target, specs)
    if _through_fd_link(target):
        return _Plan(target, stream=True)
    final = Path(os.path.realpath(target))
    try:
        mode: int | None = os.stat(final).st_mode
    except FileNotFoundError:
        mode = None
    except (OSError, ValueError) as exc:
        if isinstance(exc, OSError):
            raise write_error(target, exc) from exc
        raise UsageError(f"cannot write {_shown(target)}: {exc}") from exc
    if mode is not None and stat.S_ISDIR(mode):
        raise UsageError(f"cannot write {_shown(target)}: it is a folder")
    if mode is not None and (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)):
        return _Plan(target, stream=True)
    if mode is not None and not stat.S_ISREG(mode):
        kind = "a block device" if stat.S_ISBLK(mode) else "a socket"
        raise UsageError(
            f"cannot write {_shown(target)}: it is {kind} (an output is a file, a character "
            "device such as /dev/null, or a pipe)"
        )
    parent = final.parent
    if not parent.is_dir():
        raise UsageError(f"cannot write {_shown(target)}: {_shown(parent)} is not a folder")
    _writable_folder(target, parent)
    return _Plan(final, stream=False)


def check_file_target(target: Path, specs: Path | None = None) -> None:
    """`UsageError` (or `WriteError`) when `target` cannot be written as a file, or is a
    file `check` of `specs` reads; reads, changes nothing."""
    _plan(target, specs)


def _record_files(folder: Path) -> set[str] | None:
    """The files a previous write recorded in `folder`, or None without a valid record."""
    try:
        data = json.loads((folder / RECORD).read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    files = data.get("files") if isinstance(data, dict) else None
    if data.get("rooflinec-output") != _RECORD_FORMAT or not isinstance(files, list):
        return None
    return {f for f in files if isinstance(f, str)}


def _contents(folder: Path) -> set[str]:
    """Every file under `folder`, as a relative POSIX path (folders themselves aside)."""
    return {
        path.relative_to(folder).as_posix()
        for path in folder.rglob("*")
        if path.is_file() or path.is_symlink()
    }


def check_folder_target(target: Path, specs: Path | None = None) -> None:
    """`UsageError` when `target` cannot be (re)written as an output folder: it is a file,
    a folder inside the specs folder or holding it, or a folder that holds anything a
    previous rooflinec write did not record (`WriteError` when its parent folder may not
    be written)."""
    _refuse_checked(target, specs, folder=True)
    _writable_folder(target, _parent(target))
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise UsageError(f"cannot write the folder {_shown(target)}: it is a file")
    if not target.is_dir():
        return
    contents = _contents(target)
    if not contents:
        return
    recorded = _record_files(target)
    if recorded is None:
        raise UsageError(
            f"refusing to write into {_shown(target)}: it holds files no rooflinec compile "
            f"wrote (no {RECORD}); empty it or choose another --out"
        )
    foreign = sorted(contents - recorded - {RECORD})
    if foreign:
        raise UsageError(
            f"refusing to replace {_shown(target)}: {_shown(Path(foreign[0]))} is not a "
            "file a rooflinec compile wrote there; move it or choose another --out"
        )


def _mode(base: int = 0o666) -> int:
    """The permissions a new file (`0o666`) or folder (`0o777`) gets less the umask, as
    `open` and `mkdir` give them (temporary files are made private)."""
    umask = os.umask(0)
    os.umask(umask)
    return base & ~umask


def _temporary_prefix(target: Path) -> str:
    """`.NAME.`, the name cut short enough that `.NAME.XXXXXXXX.tmp` is a valid name."""
    return f".{target.name[:_TEMP_NAME_CHARS]}."


class FreshEntry:
    """A new file or folder in `folder`, named `{prefix}XXXXXXXX{suffix}` as `tempfile`
    names them, but named before it is made: `path` is set before each attempt, so a
    Ctrl-C or SIGTERM that lands while it is made still finds it to remove (`mkstemp` and
    `mkdtemp` return the name only after creating the entry). None until an attempt."""

    def __init__(self, folder: Path, prefix: str, suffix: str) -> None:
        self.folder, self.prefix, self.suffix = folder, prefix, suffix
        self.path: Path | None = None

    def make(self, create: Callable[[Path], _Made]) -> tuple[Path, _Made]:
        """The entry `create` made under a fresh name (another name while it exists)."""
        while True:
            letters = "".join(secrets.choice(_NAME_LETTERS) for _ in range(8))
            path = self.path = self.folder / f"{self.prefix}{letters}{self.suffix}"
            try:
                return path, create(path)
            except FileExistsError:
                continue

    def folder_made(self) -> Path:
        """A new empty folder, readable by its owner alone until the caller says more."""
        return self.make(_new_folder)[0]


def _new_folder(path: Path) -> None:
    os.mkdir(path, 0o700)


_Made = TypeVar("_Made")
_NAME_LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789_"


@contextmanager
def _streamed(target: Path) -> Iterator[BinaryIO]:
    """`target` opened as it is (a device, a pipe): written in order, never replaced,
    never created; appended to, so a file behind `/dev/stdout` keeps what the shell
    wrote there before. A broken pipe stays a `BrokenPipeError`: the reader has gone,
    as with `compile | head`."""
    try:
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_NOCTTY)
    except OSError as exc:
        raise write_error(target, exc) from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise write_error(target, exc) from exc


@contextmanager
def _replaced(target: Path, final: Path) -> Iterator[BinaryIO]:
    """A temporary file beside `final` that replaces it when the block ends without an
    exception; any error, Ctrl-C or SIGTERM removes it."""
    temporary = FreshEntry(final.parent, _temporary_prefix(final), ".tmp")
    try:
        name, fd = temporary.make(lambda p: os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.fchmod(fd, _mode())
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        PENDING_STOP.check()  # a SIGTERM Python dropped: not committed
        os.replace(name, final)
    except BaseException as exc:  # Ctrl-C and SIGTERM included: nothing half-written stays
        if temporary.path is not None:
            with suppress(FileNotFoundError):
                temporary.path.unlink()
        if isinstance(exc, OSError):
            raise write_error(target, exc) from exc
        raise


@contextmanager
def atomic_file(target: Path, specs: Path | None = None) -> Iterator[BinaryIO]:
    """A binary file that becomes `target` when the block ends without an exception, or
    the device or pipe `target` names, written straight (see the module's rules).

    An `OSError` raised in the block or by the write is a `WriteError` naming `target`,
    except a broken pipe (the reader of a stream has gone)."""
    plan = _plan(target, specs)
    with _streamed(plan.path) if plan.stream else _replaced(target, plan.path) as handle:
        yield handle


def _fsync_folder(folder: Path) -> None:
    """Flush every file under `folder` to disk before it is renamed into place."""
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


@contextmanager
def atomic_folder(target: Path, specs: Path | None = None) -> Iterator[Path]:
    """A folder that becomes `target` when the block ends without an exception; an
    existing `target` is replaced only when `check_folder_target` allows it. An `OSError`
    in the block or the write is a `WriteError` naming `target`."""
    check_folder_target(target, specs)
    parent = _parent(target)
    temporary = FreshEntry(parent, _temporary_prefix(target), ".tmp")
    aside = FreshEntry(parent, _temporary_prefix(target), ".old")
    try:
        name = temporary.folder_made()
        os.chmod(name, _mode(0o777))
        yield name
        files = sorted(_contents(name))
        record = {"rooflinec-output": _RECORD_FORMAT, "files": files}
        (name / RECORD).write_text(json.dumps(record, indent=1) + "\n", "utf-8")
        _fsync_folder(name)
        PENDING_STOP.check()  # a SIGTERM Python dropped: not committed
        if target.is_dir():
            os.replace(target, aside.folder_made() / "previous")
        os.replace(name, target)
    except BaseException as exc:  # Ctrl-C and SIGTERM included
        if temporary.path is not None:
            shutil.rmtree(temporary.path, ignore_errors=True)
        old = aside.path
        if old is not None and (old / "previous").is_dir() and not target.exists():
            os.replace(old / "previous", target)  # put the previous folder back
        if isinstance(exc, OSError):
            raise write_error(target, exc) from exc
        raise
    finally:
        if aside.path is not None:
            shutil.rmtree(aside.path, ignore_errors=True)
