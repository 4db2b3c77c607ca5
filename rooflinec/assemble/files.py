"""The spec files of a folder, and paths as people read them.

Only what lies inside the specs folder is read: a link (to a file or to a whole
`devices/` folder) whose target is elsewhere is refused by name, its target never
opened, so a catalog cannot pull a credentials file into the site or into an error
message. Spec files end in `.yaml` or `.yml` in any case; any other entry of a spec
folder is named in a warning rather than skipped without a word (dot files aside:
editors and the system leave those).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from rooflinec.errors import Diagnostic, Location

__all__ = ["KINDS", "SPEC_SUFFIXES", "SpecFiles", "discover", "display_path", "is_spec_name"]

SPEC_SUFFIXES = (".yaml", ".yml")
KINDS = ("devices", "kernels", "methods", "models")
_OUTSIDE = "a link to {what} outside the specs folder: not read (copy the file into the catalog)"


@dataclass(frozen=True)
class SpecFiles:
    """The spec files of a folder, by kind, and what was refused or skipped on the way."""

    precisions: Path | None
    devices: tuple[Path, ...]
    kernels: tuple[Path, ...]
    methods: tuple[Path, ...]
    problems: tuple[Diagnostic, ...] = ()
    models: tuple[Path, ...] = ()


def is_spec_name(name: str) -> bool:
    """True for `x.yaml`, `x.yml`, `x.YAML`, `x.Yml`: a spec file's name in any case."""
    return name.lower().endswith(SPEC_SUFFIXES)


def inside(path: Path, root: Path) -> bool:
    """True if `path`, every link on the way followed, stays under `root` (resolved)."""
    return Path(os.path.realpath(path)).is_relative_to(root)


def discover(folder: Path) -> SpecFiles:
    """Find `precisions.yaml` and the `devices/`, `kernels/`, `methods/`, `models/` files.

    Links leaving `folder` are refused (an error each, at line 1 of the link); entries
    of a spec folder that are not spec files are named in a warning.
    """
    root = Path(os.path.realpath(folder))
    problems: list[Diagnostic] = []

    def refuse(path: Path, what: str) -> None:
        message = _OUTSIDE.format(what=what)
        problems.append(Diagnostic(Location(display_path(path), 1, 1), message, code="files"))

    def skip(path: Path, why: str) -> None:
        line = 0 if path.is_dir() else 1
        location = Location(display_path(path), line, line)
        problems.append(Diagnostic(location, why, severity="warning", code="files"))

    def listing(name: str) -> tuple[Path, ...]:
        sub = folder / name
        if not inside(sub, root):
            refuse(sub, "a folder")
            return ()
        if not sub.is_dir():
            return ()
        found = []
        for path in sorted(sub.iterdir()):
            if path.name.startswith("."):
                continue
            if not is_spec_name(path.name):
                skip(path, f"skipped: not a spec file (spec files are {name}/*.yaml or *.yml)")
            elif not inside(path, root):
                refuse(path, "a file")
            elif path.is_file():
                found.append(path)
            else:
                skip(path, "skipped: not a file (a folder, or a link to nothing)")
        return tuple(found)

    precisions = folder / "precisions.yaml"
    readable = inside(precisions, root)
    if not readable:
        refuse(precisions, "a file")
    devices, kernels, methods, models = (listing(kind) for kind in KINDS)
    return SpecFiles(
        precisions if readable and precisions.is_file() else None,
        devices,
        kernels,
        methods,
        tuple(problems),
        models,
    )


def display_path(path: Path) -> str:
    """The path as people (and GitHub annotations) want it: relative to the cwd if inside."""
    try:
        if not path.is_absolute():
            return str(path)
        relative = os.path.relpath(path, Path.cwd())
        # Outside the working folder a relative path climbs with ../..: absolute reads better.
        return str(path) if relative.startswith("..") else relative
    except ValueError:
        return str(path)
