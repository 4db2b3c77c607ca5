"""Where the bundled schemas, specs and templates live, installed or in a source checkout."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _bundled(name: str) -> Path:
    # A wheel carries the top-level folders under rooflinec/_bundled/; a source
    # checkout (or an editable install) has them beside the package.
    installed = _PACKAGE / "_bundled" / name
    if installed.is_dir():
        return installed
    return _PACKAGE.parent / name


def schemas_dir() -> Path:
    """The JSON Schemas, one per spec kind plus shared definitions."""
    return _bundled("schemas")


def bundled_specs_dir() -> Path:
    """The bundled catalog."""
    return _bundled("specs")


def default_specs_dir(cwd: Path | None = None) -> Path:
    """`./specs` when present, else the bundled catalog."""
    local = (cwd or Path.cwd()) / "specs"
    return local if local.is_dir() else bundled_specs_dir()


def site_dir() -> Path:
    """The hand-written pages of the site (the mkdocs `docs_dir`)."""
    return _bundled("site")
