"""Dirty rebuilds (what `rooflinec serve` runs on every edit): an edited device spec
re-renders its page and the pages that list it, leaves every other output file untouched,
and the result equals a clean build of the edited specs."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from rooflinec import pipeline
from rooflinec.loader import DocumentCache
from rooflinec.site.build import _write_config, site_config

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / "specs"
BANDWIDTH = re.compile(r"(bandwidth:\s*)([0-9.]+)( GB/s| TB/s)")

pytest.importorskip("mkdocs")


def _build(tmp: Path, specs: Path, out: Path, *, dirty: bool) -> None:
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    from rooflinec.resources import site_dir

    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    config_file = _write_config(tmp, site_config(site_dir(), out, specs))
    build(load_config(str(config_file)), dirty=dirty)


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


def test_dirty_rebuild_renders_only_what_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    served = tmp_path / "served"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _build(tmp_path / "a", specs, served, dirty=True)
    before = _state(served)

    device, figure = _edit_a_device(specs)
    _build(tmp_path / "a", specs, served, dirty=True)
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
    # From scratch: no compiled catalog, no loaded document kept from the builds above.
    pipeline._COMPILED.clear()
    monkeypatch.setattr(pipeline, "_DOCUMENTS", DocumentCache())
    _build(tmp_path / "b", specs, clean, dirty=False)
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
    _build(tmp_path, specs, served, dirty=True)
    after = _state(served)
    rewritten = sorted(n for n in after if after[n][0] != before[n][0])
    # mkdocs always writes the theme's templates (404, sitemap) and the search index.
    assert set(rewritten) <= {
        "404.html",
        "sitemap.xml",
        "sitemap.xml.gz",
        "search/search_index.json",
    }, rewritten
