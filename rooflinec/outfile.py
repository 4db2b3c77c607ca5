"""Output files written whole or not at all: `compile --out FILE` and its Parquet folders.

A file is written to a temporary file beside its target (same folder, so the same
filesystem), flushed to disk (`fsync`) and moved onto the target in one `os.replace`:
a reader sees the old file or the new one, never half of one. On any error, or Ctrl-C,
the temporary file is removed and an existing target is left as it was.

A folder (partitioned Parquet) is written to a temporary folder beside its target and
renamed into place. It records what it wrote in `.rooflinec-output.json`; a later write
replaces a folder only when it is empty or holds nothing but what that record lists,
so a folder of someone else's files is never deleted (the spirit of `build --out`'s
manifest, `rooflinec.site.output`). Replacing an existing folder takes two renames
(the old one aside, the new one in) and then removes the old one.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO

from rooflinec.errors import UsageError

__all__ = ["RECORD", "atomic_file", "atomic_folder", "check_file_target", "check_folder_target"]

RECORD = ".rooflinec-output.json"
_RECORD_FORMAT = 1


def _shown(path: Path) -> str:
    """A path for a one-line message: control characters escaped."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in str(path))


def _parent(target: Path) -> Path:
    parent = target.absolute().parent
    if not parent.is_dir():
        raise UsageError(f"cannot write {_shown(target)}: {_shown(parent)} is not a folder")
    return parent


def check_file_target(target: Path) -> None:
    """`UsageError` when `target` cannot be written as a file (reads, changes nothing)."""
    _parent(target)
    if target.is_dir():
        raise UsageError(f"cannot write {_shown(target)}: it is a folder")


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


def check_folder_target(target: Path) -> None:
    """`UsageError` when `target` cannot be (re)written as an output folder: it is a file,
    or a folder that holds anything a previous rooflinec write did not record."""
    _parent(target)
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


@contextmanager
def atomic_file(target: Path) -> Iterator[BinaryIO]:
    """A binary file that becomes `target` when the block ends without an exception."""
    check_file_target(target)
    fd, name = tempfile.mkstemp(dir=_parent(target), prefix=f".{target.name}.", suffix=".tmp")
    temporary = Path(name)
    try:
        os.fchmod(fd, _mode())
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:  # Ctrl-C included: nothing half-written is left behind
        with suppress(FileNotFoundError):
            temporary.unlink()
        raise


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
def atomic_folder(target: Path) -> Iterator[Path]:
    """A folder that becomes `target` when the block ends without an exception; an
    existing `target` is replaced only when `check_folder_target` allows it."""
    check_folder_target(target)
    parent = _parent(target)
    temporary = Path(tempfile.mkdtemp(dir=parent, prefix=f".{target.name}.", suffix=".tmp"))
    old: Path | None = None
    try:
        os.chmod(temporary, _mode(0o777))
        yield temporary
        files = sorted(_contents(temporary))
        record = {"rooflinec-output": _RECORD_FORMAT, "files": files}
        (temporary / RECORD).write_text(json.dumps(record, indent=1) + "\n", "utf-8")
        _fsync_folder(temporary)
        if target.is_dir():
            old = Path(tempfile.mkdtemp(dir=parent, prefix=f".{target.name}.", suffix=".old"))
            os.replace(target, old / "previous")
        os.replace(temporary, target)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        if old is not None and (old / "previous").is_dir() and not target.exists():
            os.replace(old / "previous", target)  # put the previous folder back
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
