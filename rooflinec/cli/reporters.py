"""Reporters for diagnostics, chosen by name: `text`, `github`, `json`."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TextIO

from rooflinec.errors import Diagnostic, one_line

__all__ = ["REPORTERS", "Reporter", "as_json", "count", "github", "one_line", "text"]


def _line(d: Diagnostic) -> str:
    return str(d)  # one line: `Diagnostic.__str__` escapes every control character


def count(number: int, noun: str) -> str:
    """`1 error`, `0 errors`, `2 errors`: the number and the noun, plural unless one."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _summary(diagnostics: Sequence[Diagnostic], files: int) -> str:
    errors = sum(1 for d in diagnostics if d.severity == "error")
    warnings = len(diagnostics) - errors
    verdict = "ok" if errors == 0 else "failed"
    counts = ", ".join((count(files, "file"), count(errors, "error"), count(warnings, "warning")))
    return f"rooflinec check: {verdict}: {counts}"


def text(diagnostics: Sequence[Diagnostic], files: int, out: TextIO) -> None:
    """`FILE:LINE:COL: error: MESSAGE [$.path]`, one line each, then a summary."""
    for d in diagnostics:
        out.write(_line(d) + "\n")
    out.write(_summary(diagnostics, files) + "\n")


def _escape_data(value: str) -> str:
    # GitHub workflow commands: %, CR and LF must be encoded in the message.
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def github(diagnostics: Sequence[Diagnostic], files: int, out: TextIO) -> None:
    """GitHub Actions workflow annotations: one `::error file=..,line=..,col=..::msg` each."""
    for d in diagnostics:
        loc = d.location
        props = [f"file={_escape_property(loc.file)}"]
        if loc.line > 0:
            props += [f"line={loc.line}", f"col={max(loc.col, 1)}"]
        props.append(f"title={_escape_property('rooflinec ' + d.code)}")
        message = one_line(d.message + (f" [{d.path}]" if d.path else ""))
        out.write(f"::{d.severity} {','.join(props)}::{_escape_data(message)}\n")
    out.write(_summary(diagnostics, files) + "\n")


def as_json(diagnostics: Sequence[Diagnostic], files: int, out: TextIO) -> None:
    """One JSON document with every diagnostic as an object."""
    document = {
        "ok": not any(d.severity == "error" for d in diagnostics),
        "files": files,
        "diagnostics": [
            {
                "file": d.location.file,
                "line": d.location.line,
                "col": d.location.col,
                "severity": d.severity,
                "code": d.code,
                "message": d.message,
                "path": d.path,
            }
            for d in diagnostics
        ],
    }
    out.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")


Reporter = Callable[[Sequence[Diagnostic], int, TextIO], None]
REPORTERS: dict[str, Reporter] = {"text": text, "github": github, "json": as_json}
