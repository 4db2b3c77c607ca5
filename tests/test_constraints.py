"""CI installs pinned versions: constraints.txt pins every dependency the extras bring,
and every place that installs the project (.ci/run, the README, the workflows) uses it."""

from __future__ import annotations

import re
import tomllib

from tests.specfactory import REPO

CONSTRAINTS = (REPO / "constraints.txt").read_text("utf-8")
PINS = dict(
    line.split("==", 1)
    for line in CONSTRAINTS.splitlines()
    if line.strip() and not line.startswith("#")
)


def _name(requirement: str) -> str:
    """A requirement's distribution name, normalised as pip compares them (PEP 503)."""
    name = re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_line_is_an_exact_pin() -> None:
    """Each line is NAME==VERSION: a range would let a new release in."""
    lines = [ln for ln in CONSTRAINTS.splitlines() if ln.strip() and not ln.startswith("#")]
    assert [] == [ln for ln in lines if not re.fullmatch(r"[A-Za-z0-9_.\-]+==[^\s=<>!~]+", ln)]


def test_every_dependency_of_every_extra_is_pinned() -> None:
    """The core dependencies and every extra's resolve to a pinned version."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    wanted = [*project["dependencies"]]
    for requirements in project["optional-dependencies"].values():
        wanted += [r for r in requirements if not r.startswith("rooflinec")]
    pinned = {_name(name) for name in PINS}
    assert [] == sorted({_name(r) for r in wanted} - pinned)


def test_ruff_pin_matches_the_test_extra() -> None:
    """The test extra pins one ruff; constraints.txt pins the same."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    ruff = next(r for r in project["optional-dependencies"]["test"] if r.startswith("ruff"))
    assert ruff.split("==")[1] == PINS["ruff"]


def test_every_install_uses_the_constraints() -> None:
    """.ci/run, the README's commands and the workflows install with -c constraints.txt."""
    texts = {
        ".ci/run": (REPO / ".ci" / "run").read_text("utf-8"),
        "README.md": (REPO / "README.md").read_text("utf-8"),
        **{
            f"workflows/{p.name}": p.read_text("utf-8")
            for p in (REPO / ".github" / "workflows").glob("*.yml")
        },
    }
    unpinned = [
        f"{name}: {line.strip()}"
        for name, text in texts.items()
        for line in text.splitlines()
        if re.search(r"pip install [^`]*'\.\[", line) and "-c constraints.txt" not in line
    ]
    assert [] == unpinned


def test_ci_runs_the_readme_test_command() -> None:
    """CI calls the same test command the README's quick start gives."""
    readme = (REPO / "README.md").read_text("utf-8")
    quick = re.search(r"&& (\.venv/bin/pytest[^\n`]*)", readme)
    assert quick is not None
    ci = (REPO / ".ci" / "run").read_text("utf-8").splitlines()
    assert quick.group(1) in ci
