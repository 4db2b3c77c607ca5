"""A progress line on stderr for long jobs: items done of the total, the rate, time left.

Shown only when stderr is a terminal and the job has run longer than `DELAY` seconds
(`ROOFLINEC_PROGRESS_DELAY` in the environment overrides it), so a quick command, a pipe,
a CI log or a test's captured stderr never sees it; redrawn at most `INTERVAL` times a
second and once at its total, and erased when the job ends (or is interrupted), so the
terminal is left as it was.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

__all__ = ["DELAY", "DELAY_VARIABLE", "INTERVAL", "ProgressLine", "progress_line"]

DELAY = 2.0  # seconds before the line first appears
DELAY_VARIABLE = "ROOFLINEC_PROGRESS_DELAY"  # the environment's say on DELAY
INTERVAL = 0.2  # seconds between redraws


def _count(n: float) -> str:
    """`950`, `12.3k`, `1.02M`: three significant figures for a rate or a count."""
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= size:
            return f"{n / size:.3g}{suffix}"
    return f"{n:.0f}"


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds + 0.5))
    minutes, s = divmod(seconds, 60)
    return f"{minutes}:{s:02d}" if minutes else f"{s} s"


class ProgressLine:
    """Call with the number of rows just done; `close()` erases the line if it was shown."""

    def __init__(
        self,
        total: int,
        what: str,
        stream: TextIO,
        *,
        clock: Callable[[], float] = time.monotonic,
        delay: float | None = None,
        unit: str = "rows",
    ) -> None:
        self.total = total  # may be set later, once known (0: unknown)
        self.what = what
        self.unit = unit
        self.stream = stream
        self.clock = clock
        self.delay = DELAY if delay is None else delay
        self.done = 0
        self.started = clock()
        self.drawn = 0.0  # when the line was last drawn; 0: never
        self.width = 0

    def __call__(self, rows: int) -> None:
        self.done += rows
        now = self.clock()
        elapsed = now - self.started
        last = self.done == self.total  # always drawn: the line ends at its total
        if elapsed < self.delay or (now - self.drawn < INTERVAL and not last):
            return
        self.drawn = now
        rate = self.done / elapsed if elapsed > 0 else 0.0
        text = f"{self.what}: {self.done:,} / {self.total:,} {self.unit}"
        if self.total:
            text += f" ({100 * self.done / self.total:.0f}%)"
        text += f", {_count(rate)} {self.unit}/s"
        if rate > 0 and self.done < self.total:
            text += f", {_duration((self.total - self.done) / rate)} left"
        self._write("\r" + text.ljust(self.width))
        self.width = len(text)

    def close(self) -> None:
        if self.width:
            self._write("\r" + " " * self.width + "\r")
            self.width = 0

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken terminal: progress is optional
            self.width = 0


def _delay() -> float:
    """`ROOFLINEC_PROGRESS_DELAY` seconds when set to a number of seconds (0: the line
    shows at once), else `DELAY`."""
    text = os.environ.get(DELAY_VARIABLE, "")
    try:
        value = float(text)
    except ValueError:
        return DELAY
    return value if 0 <= value < float("inf") else DELAY


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


@contextmanager
def progress_line(
    total: int,
    what: str,
    stream: TextIO | None = None,
    *,
    enabled: bool = True,
    unit: str = "rows",
) -> Iterator[ProgressLine | None]:
    """A `ProgressLine` on `stream` (default: stderr) when it is a terminal (and `enabled`),
    else None; erased when the block ends, however it ends."""
    stream = sys.stderr if stream is None else stream
    if not enabled or not _is_terminal(stream):
        yield None
        return
    line = ProgressLine(total, what, stream, unit=unit, delay=_delay())
    try:
        yield line
    finally:
        line.close()
