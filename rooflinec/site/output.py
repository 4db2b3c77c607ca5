"""The output folder of `rooflinec build`: what a build may replace there, and how.

A build replaces only what a previous rooflinec build wrote: each build leaves
`.rooflinec-manifest.json` in the folder, listing every file it wrote with the SHA-256
of its bytes. The next build

- refuses (one line, exit 2, nothing touched) a folder that contains the working folder
  or the specs, or lies inside the specs, the filesystem root and the home folder; a
  folder that holds anything but dot entries (`.git`, `.nojekyll`) and has no manifest;
  and, once the new site is built, a folder where a file of the new site would land on
  a file the manifest does not record with its current bytes (a user's own file, or a
  site file edited since);
- keeps every dot entry and every file the manifest does not record with its current
  bytes (`CNAME`, `notes.txt`, `blog/`);
- moves the new files in (one `os.replace` each), then removes the recorded files the
  new site no longer has, and the folders that leaves empty.

The new site is built in a sibling folder first (`.NAME.building-PID-*`), so a failed
build leaves the previous site as it was; such folders left by a killed build are removed
by the next one (`clean_stale`). They never hold anything but a build's own output.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path, PurePosixPath

from rooflinec.errors import UsageError
from rooflinec.outputs.outfile import FreshEntry, read_by_check

__all__ = [
    "MANIFEST",
    "STALE_SECONDS",
    "check_target",
    "clean_stale",
    "install",
    "read_manifest",
    "staging_entry",
    "temporary_folder",
]

MANIFEST = ".rooflinec-manifest.json"
MANIFEST_FORMAT = 1
# A leftover of a process that still runs (or of a reused process id) is removed once it
# is this old: no build takes a day.
STALE_SECONDS = 24 * 3600
BUILD_TEMP_PREFIX = "rooflinec-build-"
SERVE_TEMP_PREFIX = "rooflinec-serve-"

Manifest = dict[str, list[str]]


def _shown(path: Path | str) -> str:
    """A path for a one-line message: control characters escaped."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in str(path))


def _refuse(out: Path, why: str) -> UsageError:
    return UsageError(f"refusing to build into {_shown(out)}: {why}")


def check_target(out: Path, specs: Path) -> Path:
    """The resolved output folder, or `UsageError` when a build may not write there
    (see the module's rules); reads the folder, changes nothing."""
    resolved = out.resolve()
    existing = resolved
    while not os.path.lexists(existing) and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"cannot build into {_shown(out)}: {_shown(existing)} is not a folder")
    specs = specs.resolve()
    if resolved == Path(resolved.anchor):
        raise _refuse(out, "it is the filesystem root")
    if resolved == Path.home().resolve():
        raise _refuse(out, "it is the home folder")
    if Path.cwd().resolve().is_relative_to(resolved):
        raise _refuse(out, "it contains the working folder")
    why = read_by_check(resolved, specs, folder=True)  # the rule `compile --out` follows
    if why is not None:
        raise _refuse(out, why)
    if resolved.is_dir():
        if (resolved / MANIFEST).is_file():
            read_manifest(resolved, out)
        elif any(not name.startswith(".") for name in os.listdir(resolved)):
            raise _refuse(
                out,
                f"it holds files no rooflinec build wrote (no {MANIFEST}); "
                "empty it or choose another --out",
            )
    return resolved


def _valid_name(name: object) -> bool:
    if not isinstance(name, str) or not name or "\\" in name or "\0" in name:
        return False
    path = PurePosixPath(name)
    return not path.is_absolute() and all(
        part not in ("", ".", "..") and not part.startswith(".") for part in path.parts
    )


def _valid_digests(value: object) -> bool:
    return isinstance(value, list) and all(
        isinstance(d, str) and len(d) == 64 and all(c in "0123456789abcdef" for c in d)
        for d in value
    )


def read_manifest(folder: Path, shown: Path | None = None) -> Manifest:
    """What previous builds wrote into `folder` ({relative path: [sha256, ...]}), empty
    without a manifest; `UsageError` when the manifest is not one rooflinec writes."""
    path = folder / MANIFEST
    if not path.is_file():
        return {}
    bad = _refuse(shown or folder, f"its {MANIFEST} is not one rooflinec writes; remove it")
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise bad from exc
    files = data.get("files") if isinstance(data, dict) else None
    if (
        not isinstance(data, dict)
        or data.get("rooflinec-manifest") != MANIFEST_FORMAT
        or not isinstance(files, dict)
        or not all(_valid_name(k) and _valid_digests(v) for k, v in files.items())
    ):
        raise bad
    return {str(k): list(v) for k, v in files.items()}


def _write_manifest(folder: Path, files: Manifest) -> None:
    """Replace the manifest in one rename, so a killed build leaves a whole one."""
    # One line per file: the manifest diffs well when the site is kept under git.
    lines = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in sorted(files.items()))
    text = f'{{\n "rooflinec-manifest": {MANIFEST_FORMAT},\n "files": {{\n{lines}\n }}\n}}\n'
    temporary = folder / f"{MANIFEST}.{os.getpid()}.tmp"
    temporary.write_text(text, "utf-8")
    os.replace(temporary, folder / MANIFEST)


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _files(root: Path) -> dict[str, str]:
    """{relative path: sha256} of every file under `root`."""
    out: dict[str, str] = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            out[path.relative_to(root).as_posix()] = _digest(path)
    return out


def _real_folders(out: Path, name: str) -> bool:
    """Whether every folder on the way from `out` to `out/name` is absent or a real folder
    (not a link: removing or writing through one would reach outside `out`)."""
    here = out
    for part in PurePosixPath(name).parts[:-1]:
        here = here / part
        if here.is_symlink() or (os.path.lexists(here) and not here.is_dir()):
            return False
    return True


def _recorded(out: Path, name: str, manifest: Manifest) -> bool:
    """Whether `out/name` is a plain file with the bytes a previous build recorded."""
    path = out / name
    if name not in manifest or not _real_folders(out, name):
        return False
    if path.is_symlink() or not path.is_file():
        return False
    return _digest(path) in manifest[name]


def install(staging: Path, out: Path) -> None:
    """Put the site built in `staging` into `out` by the module's rules; `UsageError`
    (`out` untouched) when a new file would replace one no build recorded."""
    new = _files(staging)
    old = read_manifest(out) if out.is_dir() else {}
    for name in sorted(new):
        target = out / name
        if not _real_folders(out, name) or (
            os.path.lexists(target) and not _recorded(out, name, old)
        ):
            raise _refuse(
                out,
                f"{_shown(name)} there is not from a previous rooflinec build; "
                "move it away or choose another --out",
            )
    gone = sorted(n for n in old if n not in new and _recorded(out, n, old))
    out.mkdir(exist_ok=True)
    # While files move, the manifest records both the old and the new bytes of each.
    _write_manifest(
        out, {**{n: old[n] for n in gone}, **{n: [*old.get(n, []), d] for n, d in new.items()}}
    )
    for name in sorted(new):
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging / name, out / name)
    for name in gone:
        (out / name).unlink(missing_ok=True)
    for folder in sorted(
        {p for n in gone for p in PurePosixPath(n).parents if p.parts},
        key=lambda p: -len(p.parts),
    ):
        with_files = out / folder
        if not with_files.is_symlink() and with_files.is_dir() and not any(with_files.iterdir()):
            with_files.rmdir()
    _write_manifest(out, {n: [d] for n, d in new.items()})


def staging_entry(out: Path) -> FreshEntry:
    """A new empty sibling of `out` to build into (same filesystem: files move by rename),
    made by `FreshEntry.folder_made`; its name carries this process's id, for
    `clean_stale`."""
    return FreshEntry(out.parent, f".{out.name}.building-{os.getpid()}-", "")


def temporary_folder(prefix: str) -> tempfile.TemporaryDirectory[str]:
    """A temporary folder named after this process, for `clean_stale`."""
    return tempfile.TemporaryDirectory(prefix=f"{prefix}{os.getpid()}-")


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return pid > 0
    return True


def _stale(path: Path, prefix: str, now: float) -> bool:
    """A leftover of a process that no longer runs, or older than `STALE_SECONDS`."""
    try:
        stat = path.lstat()
    except OSError:
        return False
    owner = os.getuid() if hasattr(os, "getuid") else stat.st_uid
    if path.is_symlink() or not path.is_dir() or stat.st_uid != owner:
        return False
    if now - stat.st_mtime > STALE_SECONDS:
        return True
    pid = path.name[len(prefix) :].split("-", 1)[0]
    return pid.isdigit() and not _running(int(pid))


def clean_stale(out: Path | None, *, now: float | None = None) -> list[Path]:
    """Remove what killed builds and previews left behind: build folders beside `out`
    (when given), temporary folders of `build` and `serve`; return what was removed."""
    moment = time.time() if now is None else now
    places = [
        (Path(tempfile.gettempdir()), BUILD_TEMP_PREFIX),
        (Path(tempfile.gettempdir()), SERVE_TEMP_PREFIX),
    ]
    if out is not None:
        places.insert(0, (out.parent, f".{out.name}.building-"))
    removed: list[Path] = []
    for folder, prefix in places:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in sorted(names):
            path = folder / name
            if name.startswith(prefix) and _stale(path, prefix, moment):
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
    return removed
