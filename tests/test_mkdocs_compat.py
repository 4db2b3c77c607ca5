"""The seam to mkdocs, Python-Markdown and mkdocs-material (`rooflinec.site.mkdocs_compat`):
its tested ranges are the `site` extra's, the pinned versions are inside them, and outside
them (or with `fast_paths: false`) the fast paths are off."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from rooflinec.site import mkdocs_compat
from rooflinec.site.mkdocs_compat import TESTED, fast_paths, fast_paths_line, untested
from tests.specfactory import REPO

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig


def _bounds(requirement: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """(lower bound, upper bound) of `NAME>=A.B,<C[.D]` as (major, minor) pairs."""
    low = re.search(r">=([0-9.]+)", requirement)
    high = re.search(r"<([0-9.]+)", requirement)
    assert low is not None and high is not None, requirement

    def pair(text: str) -> tuple[int, int]:
        numbers = [*map(int, text.split(".")), 0]
        return numbers[0], numbers[1]

    return pair(low.group(1)), pair(high.group(1))


def test_the_site_extra_has_the_tested_ranges() -> None:
    """Each package the seam reaches into is in the `site` extra with a lower and an upper
    bound, the seam's own tested range."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    extra = project["optional-dependencies"]["site"]
    site = {re.split(r"[<>=]", r, maxsplit=1)[0]: r for r in extra}
    assert TESTED == {name: _bounds(site[name]) for name in TESTED}


def test_the_pinned_versions_are_tested_ones() -> None:
    """constraints.txt pins versions inside the tested ranges, and those are installed:
    the fast paths run in CI."""
    pins = dict(
        line.split("==", 1)
        for line in (REPO / "constraints.txt").read_text("utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    )
    for name, (low, high) in TESTED.items():
        assert low <= mkdocs_compat._release(pins[name])[:2] < high, name
    assert () == untested()
    assert fast_paths(True)


@pytest.mark.parametrize(
    ("version", "release"),
    [("1.6.1", (1, 6, 1)), ("9.8.2.post1", (9, 8, 2)), ("10.0rc1", (10, 0)), ("3.11", (3, 11))],
)
def test_release_numbers(version: str, release: tuple[int, ...]) -> None:
    """The leading numbers of a version, as the range check compares them."""
    assert release == mkdocs_compat._release(version)


def test_the_switch_turns_the_fast_paths_off() -> None:
    """`fast_paths: false` turns them off whatever is installed, and the line says so."""
    assert not fast_paths(False)
    assert "fast_paths: false" in fast_paths_line(False)
    assert "\n" not in fast_paths_line(False)


def _theme_config(tmp_path: Path, custom_dir: Path | None = None) -> MkDocsConfig:
    from mkdocs.config import load_config

    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    theme: dict[str, object] = {"name": "material"}
    if custom_dir is not None:
        theme["custom_dir"] = str(custom_dir)
    return load_config(config_file=None, docs_dir=str(docs), site_name="t", theme=theme)


def _theme_files(config: MkDocsConfig) -> list[str]:
    from mkdocs.structure.files import Files

    files = Files([])
    files.add_files_from_theme(config.theme.get_env(), config)
    return sorted(f.src_uri for f in files)


def test_an_installed_themes_files_are_listed_once_a_session(tmp_path: Path) -> None:
    """The theme's static files are the same with the listing kept as without it, and a
    second environment of the session reads the kept list (it is not listed again)."""
    plain = _theme_files(_theme_config(tmp_path))
    kept: dict[tuple[str, ...], list[str]] = {}
    config = _theme_config(tmp_path)
    mkdocs_compat.cache_theme_listing(config, kept)
    assert plain == _theme_files(config)
    assert 1 == len(kept)
    (key,) = kept
    kept[key] = [name for name in kept[key] if not name.endswith(".js")]
    assert [n for n in plain if not n.endswith(".js")] == _theme_files(config)


def test_a_project_theme_folder_is_listed_every_build(tmp_path: Path) -> None:
    """A `custom_dir` may change while `serve` runs: nothing is kept, and a file added to
    it between two builds is among the next build's files."""
    custom = tmp_path / "overrides"
    custom.mkdir()
    config = _theme_config(tmp_path, custom)
    kept: dict[tuple[str, ...], list[str]] = {}
    mkdocs_compat.cache_theme_listing(config, kept)
    assert "extra.css" not in _theme_files(config)
    (custom / "extra.css").write_text("p {}\n", "utf-8")
    assert ({}, True) == (kept, "extra.css" in _theme_files(config))
