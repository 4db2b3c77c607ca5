"""The fast paths (`fast_tables`, `fast_search`, through `rooflinec.site.mkdocs_compat`)
write what the plain mkdocs path writes: the bundled site built with every fast path on
and with them all off (the plugin's `fast_paths` switch) is the same, byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from rooflinec.site.build import build_site
from tests.specfactory import BUNDLED

pytest.importorskip("mkdocs")


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_the_fast_paths_write_the_plain_paths_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every file of the bundled site (generated pages, hand-written pages, downloads,
    search index) is the same with the fast paths on and off; `--verbose` says in one
    line that they are off."""
    fast, plain = tmp_path / "fast", tmp_path / "plain"
    build_site(BUNDLED, fast, options={"svg": False})
    capsys.readouterr()
    build_site(BUNDLED, plain, verbose=True, options={"svg": False, "fast_paths": False})
    said = [line for line in capsys.readouterr().err.splitlines() if "fast paths off" in line]
    line = "info: rooflinec: fast paths off (fast_paths: false): the plain mkdocs path builds"
    assert 1 == len(said) and said[0].endswith(line), said
    expected, actual = _files(plain), _files(fast)
    assert {"search/search_index.json", "results.json", "devices/nvidia-h100-sxm.html"} <= set(
        expected
    )
    assert sorted(expected) == sorted(actual)
    assert [] == sorted(name for name in expected if expected[name] != actual[name])
