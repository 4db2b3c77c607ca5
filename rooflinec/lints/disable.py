"""Lints turned off one by one, each with the reason it does not apply to this catalog.

Two places say so, like ruff's `ignore`: the `[tool.rooflinec.disable]` table of the
`pyproject.toml` beside the specs folder (a project's standing decision, seen in review),

    [tool.rooflinec.disable]
    lint-stale = "a frozen snapshot of the 2024 data sheets; they are not re-read"

and `check --disable 'LINT=REASON'` for one run. A reason is required in both: a lint
switched off without one is a usage error (exit 2), as is a code that is no lint. A
disabled lint's warnings are dropped before `--strict` could make them errors.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from rooflinec.errors import Diagnostic, UsageError

__all__ = [
    "LINT_CODES",
    "Disabled",
    "disabled_lints",
    "from_command_line",
    "from_pyproject",
    "without_disabled",
]

# Every lint's code, as `rooflinec.lints` documents them (a test holds the two together).
LINT_CODES: tuple[str, ...] = (
    "lint-quote",
    "lint-quote-number",
    "lint-third-party",
    "lint-source-kind",
    "lint-stale",
    "lint-dates",
    "lint-kind",
    "lint-plausibility",
    "lint-sparsity",
    "lint-binary-units",
    "lint-alt-scale",
    "lint-counts",
    "lint-tolerance",
    "lint-sustained",
    "lint-accumulate",
    "lint-per-card",
    "lint-measurement",
    "lint-direction",
    "lint-link-share",
    "lint-domain",
)


@dataclass(frozen=True)
class Disabled:
    """A lint turned off: its code, why, and where that was said."""

    code: str
    reason: str
    origin: str


def _known(code: str, origin: str) -> None:
    if code not in LINT_CODES:
        raise UsageError(f"{origin}: '{code}' is not a lint (lints: {', '.join(LINT_CODES)})")


def _reasoned(code: str, reason: object, origin: str, how: str) -> Disabled:
    _known(code, origin)
    if not isinstance(reason, str) or not reason.strip():
        raise UsageError(f"{origin}: {code} is disabled without a reason; write {how}")
    return Disabled(code, reason.strip(), origin)


def from_command_line(values: Iterable[str]) -> list[Disabled]:
    """`--disable 'LINT=REASON'` values, each checked."""
    out = []
    for value in values:
        code, _, reason = value.partition("=")
        code = code.strip()
        out.append(_reasoned(code, reason, "--disable", f"--disable '{code}=REASON'"))
    return out


def from_pyproject(path: Path) -> list[Disabled]:
    """The `[tool.rooflinec.disable]` table of `path`; none when the file or table is
    absent. A file that is not TOML, or a table of the wrong shape, is a usage error."""
    if not path.is_file():
        return []
    origin = str(path)
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{origin}: cannot read it as TOML: {exc}") from exc
    tool = data.get("tool", {}).get("rooflinec", {})
    if not isinstance(tool, Mapping):
        raise UsageError(f"{origin}: [tool.rooflinec] must be a table")
    unknown = sorted(set(tool) - {"disable"})
    if unknown:
        raise UsageError(f"{origin}: [tool.rooflinec] has unknown keys: {', '.join(unknown)}")
    table = tool.get("disable", {})
    if not isinstance(table, Mapping):
        raise UsageError(f'{origin}: [tool.rooflinec.disable] must be a table of LINT = "REASON"')
    return [
        _reasoned(str(code), reason, origin, f'{code} = "REASON" in [tool.rooflinec.disable]')
        for code, reason in table.items()
    ]


def disabled_lints(specs: Path, command_line: Iterable[str] = ()) -> dict[str, Disabled]:
    """The lints disabled for a check of `specs`, by code: the `pyproject.toml` beside the
    specs folder, then the command line (whose reason wins for the same code)."""
    project = specs.resolve().parent / "pyproject.toml"
    found = [*from_pyproject(project), *from_command_line(command_line)]
    return {d.code: d for d in found}


def without_disabled(
    diagnostics: Iterable[Diagnostic], disabled: Mapping[str, Disabled]
) -> list[Diagnostic]:
    """`diagnostics` less those of a disabled lint."""
    return [d for d in diagnostics if d.code not in disabled]
