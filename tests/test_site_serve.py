"""Dirty rebuilds (what `rooflinec serve` runs on every edit): an edited device spec
re-renders its page and the pages that list it, leaves every other output file untouched,
and the result equals a clean build of the edited specs. A broken spec keeps the last good
site, with the errors on a banner on every page, until it is fixed."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from rooflinec.site.build import _write_config, site_config
from rooflinec.site.plugin import plugin_of

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / "specs"
BANDWIDTH = re.compile(r"(bandwidth:\s*)([0-9.]+)( GB/s| TB/s)")

pytest.importorskip("mkdocs")


def _build(
    tmp: Path,
    specs: Path,
    out: Path,
    *,
    dirty: bool,
    options: dict[str, Any] | None = None,
    start: str = "serve",
) -> None:
    """A build as mkdocs runs it: the configuration loaded afresh (mkdocs keeps the
    plugin's instance); with `start` (`serve`, `build`) a new session first, as at the
    start of `mkdocs serve` or `build`; "" for a rebuild of the running session."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    from rooflinec.resources import site_dir

    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    config_file = _write_config(tmp, site_config(site_dir(), out, specs, options))
    config = load_config(str(config_file))
    if start:
        config.plugins.on_startup(command=start, dirty=dirty)  # type: ignore[arg-type]
    build(config, dirty=dirty)
    renders = plugin_of(config).session.renders
    if renders is not None:
        renders.wait()  # the charts `serve` renders after the build


def _state(root: Path) -> dict[str, tuple[int, bytes]]:
    return {
        str(p.relative_to(root)): (p.stat().st_mtime_ns, p.read_bytes())
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _edit_a_device(specs: Path) -> tuple[str, str]:
    for path in sorted((specs / "devices").glob("*.yaml")):
        text = path.read_text("utf-8")
        match = BANDWIDTH.search(text)
        if "\nexamples:" in text or match is None:
            continue
        new = f"{float(match.group(2)) + 1:g}" if match.group(3) == " GB/s" else "9.99"
        path.write_text(text.replace(match.group(0), match.group(1) + new + match.group(3), 1))
        return path.stem, new
    raise AssertionError("no device spec with a DRAM bandwidth to edit")


def test_dirty_rebuild_renders_only_what_changed(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    served = tmp_path / "served"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _build(tmp_path / "a", specs, served, dirty=True)
    before = _state(served)

    device, figure = _edit_a_device(specs)
    _build(tmp_path / "a", specs, served, dirty=True, start="")
    after = _state(served)

    page = f"devices/{device}.html"
    assert figure in after[page][1].decode("utf-8")
    assert after[page][0] != before[page][0]
    rewritten = {name for name in after if after[name][0] != before.get(name, (None,))[0]}
    # Pages that neither show the device's figures nor list its results stay as they were.
    for untouched in ("glossary.html", "method/roofline.html", "spec-language.html"):
        assert untouched not in rewritten, untouched
    others = [
        n
        for n in after
        if n.startswith("devices/")
        and n.endswith(".html")
        and device not in n
        and n != "devices/index.html"
    ]
    assert others and not rewritten & set(others)
    # Far fewer files than a full build are written again.
    assert len(rewritten) < len(after) / 4

    # What is served equals a clean build of the edited specs, search index included.
    clean = tmp_path / "clean"
    # From scratch (a new session): no compiled catalog, no loaded document kept.
    _build(tmp_path / "b", specs, clean, dirty=False, start="build")
    expected = _state(clean)
    differ = [
        name
        for name, (_, data) in expected.items()
        if after.get(name, (0, b""))[1].replace(b"/served/", b"/clean/") != data
    ]
    assert differ == []


def test_unchanged_specs_rewrite_no_generated_file(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    served = tmp_path / "served"
    _build(tmp_path, specs, served, dirty=True)
    before = _state(served)
    _build(tmp_path, specs, served, dirty=True, start="")
    after = _state(served)
    rewritten = sorted(n for n in after if after[n][0] != before[n][0])
    # mkdocs always writes the theme's templates (404, sitemap) and the search index.
    assert set(rewritten) <= {
        "404.html",
        "sitemap.xml",
        "sitemap.xml.gz",
        "search/search_index.json",
    }, rewritten


# --------------------------------------------------------------------------- broken specs

SERVE = {"show_errors": True, "svg": False}
BANNER = 'class="rooflinec-errors"'


def _break(specs: Path) -> Path:
    """Give the H100 a bandwidth in FLOP/s; return the file."""
    path = specs / "devices" / "nvidia-h100-sxm.yaml"
    text = path.read_text("utf-8").replace("bandwidth: 3.35 TB/s", "bandwidth: 3.35 TFLOP/s")
    path.write_text(text, "utf-8")
    return path


def _pages(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text("utf-8") for p in sorted(root.rglob("*.html"))
    }


def test_broken_spec_keeps_the_last_good_site_with_a_banner(tmp_path: Path) -> None:
    """While a spec is broken, a serve rebuild succeeds: every page (and the 404 page) of
    the last good site shows the error, file:line:col, escaped; the fix brings the site
    back without the banner."""
    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    served = tmp_path / "served"
    _build(tmp_path, specs, served, dirty=True, options=SERVE)
    good = _pages(served)
    assert not any(BANNER in page for page in good.values())

    original = (specs / "devices" / "nvidia-h100-sxm.yaml").read_text("utf-8")
    broken = _break(specs)
    _build(tmp_path, specs, served, dirty=True, options=SERVE, start="")
    pages = _pages(served)
    assert sorted(good) == sorted(pages)  # the last good site, every page of it
    assert [] == [name for name, page in pages.items() if BANNER not in page]
    line = re.search(r'<pre style="[^"]*">([^<]*)</pre>', pages["glossary.html"])
    assert line is not None
    assert re.match(rf"^{re.escape(str(broken))}:\d+:\d+: error: ", line.group(1)), line.group(1)
    assert "3.35 TB/s" in pages["devices/nvidia-h100-sxm.html"]

    (specs / "devices" / "nvidia-h100-sxm.yaml").write_text(original, "utf-8")
    _build(tmp_path, specs, served, dirty=True, options=SERVE, start="")
    assert good == _pages(served)


def test_specs_broken_from_the_start_serve_the_errors(tmp_path: Path) -> None:
    """With no good build yet, the hand-written pages and the 404 page show the errors;
    once fixed, the next rebuild has every generated page."""
    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    original = (specs / "devices" / "nvidia-h100-sxm.yaml").read_text("utf-8")
    _break(specs)
    served = tmp_path / "served"
    _build(tmp_path, specs, served, dirty=True, options=SERVE)
    pages = _pages(served)
    assert "devices/nvidia-h100-sxm.html" not in pages
    assert "no build has succeeded yet" in pages["index.html"]
    assert BANNER in pages["404.html"] and BANNER in pages["spec-language.html"]

    (specs / "devices" / "nvidia-h100-sxm.yaml").write_text(original, "utf-8")
    _build(tmp_path, specs, served, dirty=True, options=SERVE, start="")
    pages = _pages(served)
    assert "3.35 TB/s" in pages["devices/nvidia-h100-sxm.html"]
    assert [] == [name for name, page in pages.items() if BANNER in page]


def test_a_plain_build_still_fails_on_a_broken_spec(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Without `show_errors` (build, publish, mkdocs build) a broken spec fails the build."""
    from mkdocs.exceptions import Abort

    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    broken = _break(specs)
    with pytest.raises(Abort):
        _build(tmp_path, specs, tmp_path / "site", dirty=False, options={"svg": False})
    assert re.search(rf"{re.escape(str(broken))}:\d+:\d+: error: expected a bandwidth", caplog.text)
    assert not (tmp_path / "site" / "index.html").exists()


def test_banner_text_is_escaped_and_bounded() -> None:
    """Markup and control characters in an error line come out as text; at most
    `MAX_LINES` lines are listed."""
    from rooflinec.site.banner import MAX_LINES, banner_html, with_banner

    banner = banner_html(["a.yaml:1:2: error: <script>alert(1)</script>\x1b[31m"], stale=True)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;\\x1b[31m" in banner
    assert "<script>" not in banner and "\x1b" not in banner
    many = banner_html([f"f.yaml:{n}:1: error: e" for n in range(MAX_LINES + 5)], stale=True)
    assert "... and 5 more" in many and f"f.yaml:{MAX_LINES}:1" not in many
    assert '<body class="x">' + banner + "<p>" == with_banner('<body class="x"><p>', banner)


def _crash(*args: Any, **kwargs: Any) -> Any:
    raise KeyError("int4")


INTERNAL = "rooflinec: internal error: KeyError: &#x27;int4&#x27;"


def test_a_crash_in_the_spec_pipeline_shows_the_banner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exception while loading or compiling the specs (a bug, exit 3 in the CLI) does
    not fail a serve rebuild: every page of the last good site carries the banner with
    the internal-error line; once the pipeline works again the banner is gone."""
    from rooflinec.site import plugin

    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    served = tmp_path / "served"
    _build(tmp_path, specs, served, dirty=True, options=SERVE)
    good = _pages(served)

    with monkeypatch.context() as patch:
        patch.setattr(plugin, "compiled_or_diagnostics", _crash)
        _build(tmp_path, specs, served, dirty=True, options=SERVE, start="")
    pages = _pages(served)
    assert sorted(good) == sorted(pages)
    assert [] == [name for name, page in pages.items() if INTERNAL not in page]
    assert "these pages are from the last build that succeeded" in pages["glossary.html"]

    _build(tmp_path, specs, served, dirty=True, options=SERVE, start="")
    assert good == _pages(served)


def test_a_crash_making_the_pages_shows_the_banner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exception while making the generated pages from a catalog that compiled: the
    hand-written pages and the 404 page carry the internal-error line, the build ends."""
    from rooflinec.site.pages import listing

    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    monkeypatch.setattr(listing, "pages", _crash)
    served = tmp_path / "served"
    _build(tmp_path, specs, served, dirty=True, options=SERVE)
    pages = _pages(served)
    assert "devices/nvidia-h100-sxm.html" not in pages
    for name in ("index.html", "404.html", "spec-language.html"):
        assert INTERNAL in pages[name], name


def test_a_plain_build_still_fails_on_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without `show_errors` the exception is not hidden: the build fails and the CLI
    reports it as an internal error."""
    from rooflinec.site import plugin

    monkeypatch.setattr(plugin, "compiled_or_diagnostics", _crash)
    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    with pytest.raises(KeyError):
        _build(
            tmp_path, specs, tmp_path / "site", dirty=False, options={"svg": False}, start="build"
        )
    assert not (tmp_path / "site" / "index.html").exists()


SERVE_CRASHING = """
import sys
from pathlib import Path
from rooflinec.site import plugin
from rooflinec.site.build import serve_site

def crash(*args, **kwargs):
    raise KeyError("int4")

plugin.compiled_or_diagnostics = crash
serve_site(Path(sys.argv[1]), sys.argv[2])
"""


def test_serve_answers_with_the_banner_when_the_pipeline_crashes(tmp_path: Path) -> None:
    """`rooflinec serve` whose spec pipeline raises still serves: its pages answer, with
    the internal-error banner (a real server in a subprocess, stopped at the end)."""
    import socket
    import subprocess
    import sys
    import time
    import urllib.error
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    server = subprocess.Popen(
        [sys.executable, "-c", SERVE_CRASHING, str(specs), f"127.0.0.1:{port}"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        body = ""
        deadline = time.monotonic() + 120  # a bound on waiting, not a speed requirement
        while time.monotonic() < deadline and server.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as reply:
                    body = reply.read().decode("utf-8")
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.5)
        assert server.poll() is None, server.communicate()[1]
        assert INTERNAL in body
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/devices/nope/", timeout=30)
        except urllib.error.HTTPError as missing:
            assert 404 == missing.code
            assert INTERNAL in missing.read().decode("utf-8")
        else:
            raise AssertionError("a missing page was served")
    finally:
        server.terminate()
        server.communicate(timeout=60)
