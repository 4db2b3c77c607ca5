"""Diagnostics: spec problems as values, each with a location, a field path and a sentence.

Every stage (loader, schema, quantities, formulas, catalog, compiler, lints) reports
problems as `Diagnostic` values; the CLI renders them with a reporter chosen by name.
`SpecError` carries diagnostics across a stage boundary when a stage cannot go on.
A location and a diagnostic print as one line whatever text they hold (`one_line`).
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

Severity = Literal["error", "warning"]

# Control characters, line and paragraph separators and the bidirectional overrides must
# never reach a terminal or a log raw: a file name or a quoted value holding a newline
# would start a line of its own (`::error file=…` in a GitHub job is an annotation).
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def one_line(text: str) -> str:
    """`text` with every control character shown as an escape: always one printable line."""
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def internal_error_line(exc: BaseException) -> str:
    """The one line that reports a bug in rooflinec itself: an exception that no check
    turned into a diagnostic (the CLI's exit 3, `serve`'s banner). Its text is cut to
    `MAX_MESSAGE` characters: whatever it quotes, the line stays short."""
    text = one_line(str(exc))
    if len(text) > MAX_MESSAGE:
        text = text[: MAX_MESSAGE - 1] + "…"
    return (
        f"rooflinec: internal error: {exc.__class__.__name__}: {text}"
        " (please report this with the command you ran)"
    )


MAX_MESSAGE = 300
"""The longest message a diagnostic carries, so its line stays under 400 characters.

What a message quotes is illustration (the value found, the figure computed); a value
long enough to push it over is shown rounded, never the location or the path cut.
"""

ILLUSTRATION_DIGITS = 6
"""Significant digits of a long number shown only as illustration."""

# An exact number long enough to drown a line: 16+ digits, perhaps a fraction of two.
_LONG_NUMBER = re.compile(r"[0-9]{16,}(?:/[0-9]+)?|[0-9]+/[0-9]{16,}")


def short_number(value: Fraction | int) -> str:
    """An exact value as quoted in a message: as is when short, else rounded with `…`.

    `-27006…/3…` (1,575 characters) reads `-2.70063e-13…`: six significant digits say
    which value it is; the exact one is never the point of a message.
    """
    value = Fraction(value)
    exact = str(value.numerator) if value.denominator == 1 else str(value)
    if len(exact) <= 2 * ILLUSTRATION_DIGITS:
        return exact
    return _rounded(str(value.numerator), str(value.denominator))


def _rounded(numerator: str, denominator: str) -> str:
    with decimal.localcontext() as ctx:
        ctx.prec = ILLUSTRATION_DIGITS
        ctx.Emax, ctx.Emin = decimal.MAX_EMAX, decimal.MIN_EMIN
        quotient = decimal.Decimal(numerator) / decimal.Decimal(denominator)
    return f"{quotient:.{ILLUSTRATION_DIGITS - 1}e}…"


def _shortened(message: str) -> str:
    """`message`, its long numbers rounded and, if still too long, cut with `…`."""
    if len(message) <= MAX_MESSAGE:
        return message

    def round_number(match: re.Match[str]) -> str:
        numerator, _, denominator = match.group().partition("/")
        return _rounded(numerator, denominator or "1")

    message = _LONG_NUMBER.sub(round_number, message)
    if len(message) > MAX_MESSAGE:
        message = message[: MAX_MESSAGE - 1] + "…"
    return message


@dataclass(frozen=True, order=True)
class Location:
    """A place in a spec file: 1-based line and column."""

    file: str
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        if self.line <= 0:
            return one_line(self.file)
        return f"{one_line(self.file)}:{self.line}:{self.col}"


@dataclass(frozen=True)
class Diagnostic:
    """One problem found in the specs.

    `path` is the JSON path of the field (`$.compute.bf16.peak`), empty when the
    problem concerns the whole file. `code` names the check for people who filter.
    """

    location: Location
    message: str
    path: str = ""
    severity: Severity = "error"
    code: str = "spec"

    def __post_init__(self) -> None:
        # Every stage makes diagnostics: the length cap holds for all of them here.
        if len(self.message) > MAX_MESSAGE:
            object.__setattr__(self, "message", _shortened(self.message))

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.location.file, self.location.line, self.location.col, self.message)

    def __str__(self) -> str:
        suffix = f" [{one_line(self.path)}]" if self.path else ""
        return f"{self.location}: {self.severity}: {one_line(self.message)}{suffix}"


class RooflinecError(Exception):
    """Base of every error rooflinec raises on purpose; the CLI prints it in one line."""


class SpecError(RooflinecError):
    """Raised by a stage that found problems in the specs; carries them as diagnostics."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics: tuple[Diagnostic, ...] = tuple(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics))


class UsageError(RooflinecError):
    """Raised for a wrong command line (an unknown device id, a missing folder); exit 2."""


class WriteError(RooflinecError):
    """An output the system would not let rooflinec write (a full disk, a folder it may
    not write in, a name too long): `cannot write PATH: REASON`, exit 1. `path` is the
    output as the user named it."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"cannot write {path}: {reason}")


class Terminated(BaseException):
    """SIGTERM (`timeout`, a cancelled CI job, `docker stop`), raised where the program is:
    like `KeyboardInterrupt`, not an `Exception`, so the cleanup that runs on Ctrl-C (every
    `except BaseException` and `finally` on the way out) runs for it too."""


class _PendingStop:
    """A SIGTERM whose `Terminated` Python could not raise: one that arrived inside a
    callback whose exceptions Python reports and drops (a weak reference's, as importlib
    runs them while it loads a module). `console` records it here (`sys.unraisablehook`);
    an output is not committed, and the command not reported a success, while it is
    pending. One per process, as the signal is."""

    def __init__(self) -> None:
        self.pending = False

    def check(self) -> None:
        """Raise the recorded `Terminated`, if any, where the program is now."""
        if self.pending:
            raise Terminated


PENDING_STOP = _PendingStop()


def json_path(parts: Iterable[str | int]) -> str:
    """`('compute', 'bf16', 'peak')` -> `$.compute.bf16.peak`; list items as `[i]`."""
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}"
    return out
