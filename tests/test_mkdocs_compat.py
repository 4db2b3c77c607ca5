"""The seam to mkdocs, Python-Markdown and mkdocs-material (`rooflinec.site.mkdocs_compat`):
its tested ranges are the `site` extra's, the pinned versions are inside them, and outside
them (or with `fast_paths: false`) the fast paths are off."""

from __future__ import annotations

import re
import tomllib

import pytest

from rooflinec.site import mkdocs_compat
from rooflinec.site.mkdocs_compat import TESTED, fast_paths, fast_paths_line, untested
from tests.specfactory import REPO


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
