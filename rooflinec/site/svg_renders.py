"""`SvgRenders`: the static chart renderings `serve` makes after a rebuild, not during it.

A chart's static SVG is the page's fallback without JavaScript and a download: the page
shows the live chart, drawn in the browser from the spec inline in the page. Rendering
an SVG costs vl-convert a few hundred milliseconds (most of it measuring text), and an
edit of one device changes its roofline, the comparison chart and every kernel's chart:
rendered during the rebuild, they would hold the edited page back by seconds. So in a
`serve` session a chart whose rendering is not kept yet is written as a placeholder,
and the renderings are made in one background thread once the build has written the
site; each is written over its placeholder, and kept (in `done`, and in the disk cache)
for the next rebuild, which writes it as a clean build does.

The renders start once no build has started for `QUIET` seconds. A new build cancels
what the last one left: a rendering in progress finishes (vl-convert cannot be
interrupted) and is kept, but written to no site, and the rest are dropped.
A page never reads a rendering (no size of it is in the page), so the pages of a
rebuild are those of a clean build from the start, and its files are once `wait` returns.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rooflinec.site.bounded import Bounded
from rooflinec.site.charts import replace_text

__all__ = ["PendingSvg", "SvgRenders"]

log = logging.getLogger("mkdocs.plugins.rooflinec")

QUIET = 1.0
"""Seconds without a new build before the renders start: while specs are being edited,
each build supersedes the last one's charts, and vl-convert holds the interpreter while
it renders (the preview would answer and rebuild late)."""


class PendingSvg(str):
    """A chart's placeholder SVG (its text) that stands for a rendering not made yet: the
    files of a build resolve it (`SvgRenders.resolve`), so that a page kept from an
    earlier rebuild gets the rendering made since."""

    key: str
    spec: dict[str, Any]

    @classmethod
    def of(cls, placeholder: str, key: str, spec: dict[str, Any]) -> PendingSvg:
        pending = cls(placeholder)
        pending.key = key
        pending.spec = spec
        return pending


@dataclass(frozen=True)
class _Job:
    key: str
    spec: dict[str, Any]
    path: str  # the file in the site folder, relative to it


class SvgRenders:
    """Renderings to make after a build (see the module docstring)."""

    def __init__(self, render: Callable[[dict[str, Any]], str], kept: int) -> None:
        self._render = render  # a spec's SVG (`charts.render_svg`: its disk cache too)
        self._lock = threading.Lock()
        self._jobs: dict[str, _Job] = {}  # by path: the last build's placeholders
        self._generation = 0
        self._thread: threading.Thread | None = None
        self._go = threading.Event()  # set: stop waiting for quiet (cancelled, or `wait`)
        self.done: Bounded[str, str] = Bounded(kept)
        """Renderings made in the background, by `charts.svg_key` (read under the lock)."""
        self.deferred: tuple[str, ...] = ()
        """The files the last build left to the background, in the order rendered."""

    def resolve(self, svg: PendingSvg, path: str) -> str:
        """The rendering `svg` stands for if it was made since; else `svg`, to be rendered
        into the site's `path` once the build is written."""
        with self._lock:
            done = self.done.get(svg.key)
            if done is None:
                self._jobs[path] = _Job(svg.key, svg.spec, path)
        return svg if done is None else done

    def cancel(self) -> None:
        """A new build starts: drop what the last one left to render."""
        with self._lock:
            self._generation += 1
            self._jobs = {}
            self._go.set()

    def start(self, site_dir: str) -> None:
        """Render this build's deferred charts into `site_dir`, in the background."""
        with self._lock:
            jobs, self._jobs = list(self._jobs.values()), {}
            generation = self._generation
        self.deferred = tuple(job.path for job in jobs)
        if not jobs:
            return
        log.info(
            f"rooflinec: {len(jobs)} charts' SVGs are rendered once the preview is quiet"
            f" for {QUIET:g} s"
        )
        self._go = threading.Event()
        thread = threading.Thread(
            target=self._run,
            args=(jobs, generation, Path(site_dir), self._go),
            name="rooflinec-svg",
            daemon=True,  # a `serve` stopped mid-render leaves placeholders, as it should
        )
        self._thread = thread
        thread.start()

    def wait(self) -> None:
        """Return once the background renderings of the last build are written."""
        thread = self._thread
        if thread is not None:
            self._go.set()
            thread.join()

    def _run(self, jobs: list[_Job], generation: int, site_dir: Path, go: threading.Event) -> None:
        go.wait(QUIET)
        for job in jobs:
            with self._lock:
                if generation != self._generation:
                    return
            try:
                svg = self._render(job.spec)
            except Exception:  # the placeholder stays; the next clean build says why
                continue
            with self._lock:
                self.done.put(job.key, svg)
                if generation != self._generation:
                    return
                replace_text(site_dir / job.path, svg)
