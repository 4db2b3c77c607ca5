"""(c) The site against plain mkdocs on the same pages, and (d) serve's edit-to-page time.

(c) `rooflinec build` of a catalog, cold process, against `mkdocs build` (cold process) of
a plain mkdocs project holding the same pages as static Markdown: the generated pages of
a rooflinec build (taken from the plugin after the build, with their chart and formula
fragments put in as raw HTML), the hand-written pages, the generated files (chart data,
SVGs, downloads, the site's CSS and script), the same theme, extensions and navigation,
and no rooflinec plugin. The baseline pays for Markdown and the theme; rooflinec also
pays for loading, checking and compiling the catalog and for drawing the charts.

(d) `rooflinec serve` on a temporary copy of a catalog: change one device's DRAM
bandwidth in its spec and poll the device's page over HTTP until the new figure shows.
The page shows the live chart from its inline spec; the static SVGs of the charts the edit
changed are rendered by `serve` once no build has started for a second
(`rooflinec.site.svg_renders`), so they are in this time only where they overlap it.
"""

from __future__ import annotations

import contextlib
import cProfile
import json
import logging
import os
import pstats
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from benchmarks.common import Row, info, rooflinec_argv, run_timed, skipped

PAGE_LIMIT_KB = 50
# Files of the theme and of mkdocs itself: the baseline project gets its own copies.
_THEME_FILES = ("assets/javascripts/", "assets/stylesheets/", "assets/images/", "search/")
_ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def site_available() -> str | None:
    """Why the site cannot be measured, or None when `rooflinec build` is there."""
    try:
        from rooflinec.site.build import build_site, site_config  # noqa: F401
    except ImportError as exc:
        return f"rooflinec build is not available yet ({exc})"
    argv = [*rooflinec_argv(), "build", "--help"]
    if subprocess.run(argv, capture_output=True).returncode != 0:
        return "rooflinec build is not available yet (no build command)"
    return None


def export_static(specs: Path, work: Path) -> tuple[Path, float, float]:
    """Write a plain mkdocs project with the pages of a rooflinec build; return its config
    and the shares of that (profiled) build spent solving the crossover tables and
    working out the models' frontiers."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    from rooflinec.resources import site_dir
    from rooflinec.site.build import site_config
    from rooflinec.site.pages.common import HOME_MARKER

    built = work / "export-build"
    config_file = work / "export.yml"
    config_file.write_text(json.dumps(site_config(site_dir(), built, specs.resolve())), "utf-8")
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    logger = logging.getLogger("mkdocs")
    level = logger.level
    logger.setLevel(logging.ERROR)  # the build's warnings belong to the site's own tests
    profile = cProfile.Profile()
    try:
        config = load_config(str(config_file))
        profile.runcall(build, config)
    finally:
        logger.setLevel(level)
    info(f"where a rooflinec build spends its time (cProfile, cumulative): {_phases(profile)}")
    # The cells of the kernel pages and the devices' batch tables, and the model pages'
    # step tables (the two never call each other, so the shares add up).
    crossovers = _share(
        profile, "rooflinec/site/pages/crossover_cell.py", ("crossover_cell",)
    ) + _share(profile, "rooflinec/site/pages/models.py", ("_crossover_table",))
    # Every (model, request shape, device) frontier the site shows, worked out once per
    # build in `frontier._entries` (the pages and the comparison read it from there).
    frontier = _share(profile, "rooflinec/site/pages/frontier.py", ("_entries",))
    plugin = config.plugins["rooflinec"]
    generated = getattr(plugin, "generated", None)
    home = getattr(plugin, "home", None)
    if not generated:
        raise RuntimeError("the rooflinec plugin exposes no generated pages to export")

    docs = work / "static-docs"
    shutil.copytree(site_dir(), docs)
    for path, page in generated.items():
        target = docs / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page.slots.fill(page.markdown), "utf-8")
    if home is not None:
        index = docs / "index.md"
        text = index.read_text("utf-8")
        section = home.slots.fill(home.markdown)
        text = text.replace(HOME_MARKER, section) if HOME_MARKER in text else f"{text}\n\n{section}"
        index.write_text(text, "utf-8")
    # Every other file the build wrote (charts, downloads, the site's CSS and script),
    # except the theme's and mkdocs' own, which the plain build makes itself.
    for path in sorted(built.rglob("*")):
        rel = path.relative_to(built).as_posix()
        if (
            path.is_dir()
            or path.suffix in (".html", ".gz")
            or rel == "sitemap.xml"
            or rel.startswith(_THEME_FILES)
            or (docs / rel).exists()
        ):
            continue
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, docs / rel)
    plain = site_config(docs, work / "static-site", specs.resolve())
    plain["plugins"] = ["search"]
    plain["extra_css"] = [str(x) for x in config.extra_css]
    plain["extra_javascript"] = [str(x) for x in config.extra_javascript]
    plain_file = work / "static-mkdocs.yml"
    plain_file.write_text(json.dumps(plain, indent=1), "utf-8")
    return plain_file, crossovers, frontier


# Where a build's time goes: (label, file name ending, functions), cumulative time.
_PHASES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("specs: load, validate, compile, check", "rooflinec/cli/commands.py", ("checked",)),
    ("generated pages", "rooflinec/site/plugin.py", ("on_files",)),
    (
        "of which charts",
        "rooflinec/site/charts.py",
        ("device_roofline", "comparison_chart", "kernel_chart", "render_svg"),
    ),
    ("Markdown", "mkdocs/commands/build.py", ("_populate_page",)),
    ("theme", "mkdocs/commands/build.py", ("_build_page",)),
)


def _share(profile: cProfile.Profile, ending: str, functions: tuple[str, ...]) -> float:
    """The cumulative time of `functions` (in a file whose path ends with `ending`) as a
    share of the whole profiled run; 0.0 when none of them ran."""
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    total = max((row[3] for row in stats.values()), default=0.0)
    found = sum(
        cum
        for (filename, _line, name), (_cc, _nc, _own, cum, _callers) in stats.items()
        if name in functions and filename.replace("\\", "/").endswith(ending)
    )
    return found / total if total else 0.0


def _phases(profile: cProfile.Profile) -> str:
    """The cumulative time of the build's main phases, as shares of the profiled build."""
    parts = [
        f"{label} {share:.0%}"
        for label, ending, functions in _PHASES
        if (share := _share(profile, ending, functions))
    ]
    return ", ".join(parts) or "phases not found"


def measure_site(
    specs: Path, work: Path, repeat: int, what: str = "the bundled catalog"
) -> tuple[Row, Row, Row]:
    measurement = f"site of {what}, cold process"
    share_measurement = f"crossover tables' share of the site build of {what}"
    frontier_measurement = f"the models' frontiers' share of the site build of {what}"
    why = site_available()
    if why:
        return (
            skipped("c-site", measurement, "<= 1.2x", why),
            skipped("c-crossovers", share_measurement, "<= 0.2x", why),
            skipped("c-frontier", frontier_measurement, "<= 0.15x", why),
        )
    plain, crossovers, frontier = export_static(specs, work)
    ours_argv = [*rooflinec_argv(), "build", "--specs", str(specs), "--out", str(work / "out")]
    base_argv = [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(plain)]
    ours_runs, base_runs = [], []
    for _ in range(repeat):
        ours_runs.append(run_timed(ours_argv, env=_ENV))
        base_runs.append(run_timed(base_argv, env=_ENV))
    ours = statistics.median(r.cpu for r in ours_runs)
    base = statistics.median(r.cpu for r in base_runs)
    pages = len(list((work / "out").rglob("*.html")))
    info(
        f"site: {pages} HTML pages; CPU time: rooflinec build {ours:.2f} s, plain mkdocs "
        f"{base:.2f} s; wall time: {statistics.median(r.wall for r in ours_runs):.2f} s, "
        f"{statistics.median(r.wall for r in base_runs):.2f} s"
    )
    return (
        Row(
            "c-site",
            measurement,
            f"plain mkdocs build {base:.2f} s",
            f"{ours:.2f} s",
            ours / base,
            "<= 1.2x",
            ours / base <= 1.2,
            f"CPU time, median of {repeat}",
        ),
        Row(
            "c-crossovers",
            share_measurement,
            "the whole build (1.0x)",
            f"{crossovers:.1%} of it",
            crossovers,
            "<= 0.2x",
            crossovers <= 0.2,
            "cumulative time under cProfile: crossover cells of kernel and device pages, "
            "model step tables",
        ),
        Row(
            "c-frontier",
            frontier_measurement,
            "the whole build (1.0x)",
            f"{frontier:.1%} of it",
            frontier,
            "<= 0.15x",
            frontier <= 0.15,
            "cumulative time under cProfile: every model's frontier per request shape on the "
            "devices its page shows, worked out once per build",
        ),
    )


def measure_large_site(specs: Path, work: Path, devices: int) -> tuple[Row, Row]:
    time_key, pages_key = "c-200-time", "c-200-pages"
    what = f"site of a {devices}-device synthetic catalog"
    why = site_available()
    if why:
        return (
            skipped(time_key, what, "< 60 s", why),
            skipped(pages_key, f"largest page, {what}", f"<= {PAGE_LIMIT_KB} KB", why),
        )
    out = work / "out-large"
    timing = run_timed(
        [*rooflinec_argv(), "build", "--specs", str(specs), "--out", str(out)], env=_ENV
    )
    seconds = timing.wall
    # The calculator holds its data inline and has a budget of its own (`g-calc-weight`).
    sizes = [
        (p.stat().st_size, p.relative_to(out).as_posix())
        for p in out.rglob("*.html")
        if p.name != "calculator.html"
    ]
    biggest, where = max(sizes)
    over = sum(1 for size, _ in sizes if size > PAGE_LIMIT_KB * 1024)
    info(
        f"{what}: {len(sizes)} HTML pages in {seconds:.1f} s wall, {timing.cpu:.1f} s CPU; "
        f"largest {where} "
        f"{biggest / 1024:.1f} KB; {over} pages above {PAGE_LIMIT_KB} KB"
    )
    return (
        Row(
            time_key,
            f"build {what}",
            "limit 60 s",
            f"{seconds:.1f} s",
            seconds / 60,
            "< 1.0x (60 s)",
            seconds < 60,
            "wall time",
        ),
        Row(
            pages_key,
            f"largest page, {what}",
            f"limit {PAGE_LIMIT_KB} KB",
            f"{biggest / 1024:.1f} KB ({where})",
            biggest / (PAGE_LIMIT_KB * 1024),
            f"<= 1.0x ({PAGE_LIMIT_KB} KB)",
            biggest <= PAGE_LIMIT_KB * 1024,
            f"{len(sizes)} pages, shared assets and the calculator aside",
        ),
    )


# --------------------------------------------------------------------------- serve


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return str(response.read().decode("utf-8", "replace"))
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return None


@contextlib.contextmanager
def _serving(specs: Path, port: int, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    argv = [*rooflinec_argv(), "serve", "--specs", str(specs), "--dev-addr", f"127.0.0.1:{port}"]
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            argv, stdout=sink, stderr=subprocess.STDOUT, env=_ENV, start_new_session=True
        )
        try:
            yield proc
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)  # the serve process and its children
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


_BANDWIDTH = re.compile(r"(bandwidth:\s*)([0-9.]+)( GB/s| TB/s)")  # the first level listed


def _pick_device(specs: Path) -> tuple[Path, str, float, str, str] | None:
    """A device spec with a DRAM bandwidth to change: (file, the line's text up to the
    number, the number, its unit, the rest of the line's match)."""
    for path in sorted((specs / "devices").glob("*.yaml")):
        text = path.read_text("utf-8")
        if "\nexamples:" in text:
            continue  # its reference examples would fail with another bandwidth
        match = _BANDWIDTH.search(text)
        if match:
            return path, match.group(1), float(match.group(2)), match.group(3), match.group(0)
    return None


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process and its waited-for children, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime stime cutime cstime
    return ticks / os.sysconf("SC_CLK_TCK")


EDITS = 7
_REBUILT = "Reloading browsers"  # what mkdocs' live-reload server logs after a rebuild


def measure_serve(
    specs: Path, work: Path, what: str = "the bundled catalog", timeout: float = 180
) -> Row:
    measurement = (
        f"serve {what}: CPU time of the serve process from an edit of a device spec to its"
        " page showing the new figure"
    )
    why = site_available()
    if why:
        return skipped("d-serve", measurement, "< 2 s", why)
    copy = work / "serve-specs"
    shutil.copytree(specs, copy)
    picked = _pick_device(copy)
    if picked is None:
        return skipped("d-serve", measurement, "< 2 s", "no device spec with a DRAM bandwidth")
    path, head, number, unit, old = picked
    step = 1.0 if unit == " GB/s" else 0.01
    figures = [f"{number + step * (k + 1):g}" for k in range(EDITS)]
    port = _free_port()
    url = f"http://127.0.0.1:{port}/devices/{path.stem}.html"
    log = work / "serve.log"
    cpu: list[float] = []
    wall: list[float] = []
    with _serving(copy, port, log) as proc:
        started = time.perf_counter()
        page = None
        while page is None and time.perf_counter() - started < timeout:
            if proc.poll() is not None:
                break
            time.sleep(0.1)
            page = _get(url)
        if page is None:
            tail = log.read_text("utf-8", "replace")[-600:]
            return Row("d-serve", measurement, "limit 2 s", "-", None, "< 2 s", False,
                       f"the page never came up: {tail!r}")  # fmt: skip
        first = time.perf_counter() - started
        if any(f"{figure}{unit}" in page for figure in figures):
            return skipped("d-serve", measurement, "< 2 s", f"{figures} on the page already")
        time.sleep(1.5)  # let the watcher settle after the first build
        current = old
        for figure in figures:
            text = path.read_text("utf-8")
            edit = head + figure + unit
            builds = log.read_text("utf-8", "replace").count(_REBUILT)
            cpu_before, edited = _cpu_seconds(proc.pid), time.perf_counter()
            path.write_text(text.replace(current, edit, 1), "utf-8")
            current = edit
            seconds: float | None = None
            # The end of the rebuild is read from the server's log (not by polling the
            # page, whose requests the server would spend CPU time on); then the page is
            # read until it shows the figure (at once, unless another rebuild follows).
            while time.perf_counter() - edited < timeout:
                if log.read_text("utf-8", "replace").count(_REBUILT) > builds:
                    page = _get(url)
                    if page is not None and figure + unit in page:
                        seconds = time.perf_counter() - edited
                        break
                time.sleep(0.05)
            if seconds is None:
                return Row("d-serve", measurement, "limit 2 s", f"> {timeout:.0f} s", None,
                           "< 2 s", False, f"{figure}{unit} never showed")  # fmt: skip
            wall.append(seconds)
            cpu.append(_cpu_seconds(proc.pid) - cpu_before)
            time.sleep(0.5)  # the watcher's quiet period before the next edit
    median = statistics.median(cpu)
    info(
        f"serve: first page after {first:.1f} s; {EDITS} edits of {path.name}'s first"
        f" bandwidth ({old.strip()} -> ...): CPU "
        + ", ".join(f"{c:.2f}" for c in cpu)
        + " s; wall "
        + ", ".join(f"{w:.2f}" for w in wall)
        + " s"
    )
    return Row(
        "d-serve",
        measurement,
        "limit 2 s",
        f"{median:.2f} s CPU, median of {EDITS} edits",
        median / 2,
        "< 1.0x (2 s)",
        median < 2,
        f"device {path.stem}; wall time median {statistics.median(wall):.2f} s; the"
        " changed charts' static SVGs are rendered once the preview is quiet (1 s), after"
        " the page: not in this time",
    )
