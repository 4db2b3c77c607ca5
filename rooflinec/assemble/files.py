"""The spec files of a folder, and paths as people read them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SpecFiles:
    """The spec files of a folder, by kind."""

    precisions: Path | None
    devices: tuple[Path, ...]
    kernels: tuple[Path, ...]
    methods: tuple[Path, ...]


def discover(folder: Path) -> SpecFiles:
    """Find `precisions.yaml`, `devices/*.yaml`, `kernels/*.yaml`, `methods/*.yaml`."""

    def listing(name: str) -> tuple[Path, ...]:
        sub = folder / name
        if not sub.is_dir():
            return ()
        return tuple(
            sorted(p for p in sub.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
        )

    precisions = folder / "precisions.yaml"
    return SpecFiles(
        precisions if precisions.is_file() else None,
        listing("devices"),
        listing("kernels"),
        listing("methods"),
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
