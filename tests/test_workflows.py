"""The GitHub workflows and pre-commit hooks are valid and call only commands that exist."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from rooflinec.cli.main import build_parser
from tests.specfactory import REPO

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
KNOWN_PROGRAMS = {"rooflinec", "pytest", "python", "git", "echo", "ruff", "mypy"}


def load(path: Path) -> Any:
    return YAML(typ="safe", pure=True).load(path.read_text("utf-8"))


def commands_in(script: str) -> list[list[str]]:
    """Each command line of a run script, with expressions replaced by placeholders."""
    script = re.sub(r"\$\{\{[^}]*\}\}", "X", script)
    script = re.sub(r"\$\([^)]*\)", "X", script)
    script = re.sub(r"\$\{[^}]*\}", "X", script)
    out = []
    for line in script.replace("\\\n", " ").splitlines():
        line = re.split(r"\s(?:>>|>|\|\||\||&&)\s", line)[0].strip()
        if line:
            out.append(shlex.split(line))
    return out


@pytest.mark.parametrize("path", WORKFLOWS, ids=[p.name for p in WORKFLOWS])
def test_workflow_is_well_formed(path: Path) -> None:
    """A workflow has triggers and jobs whose steps each use an action or run a script."""
    doc = load(path)
    assert {"name", "on", "jobs"} <= set(doc)
    for job in doc["jobs"].values():
        assert job["runs-on"]
        for step in job["steps"]:
            assert ("uses" in step) != ("run" in step), step


@pytest.mark.parametrize("path", WORKFLOWS, ids=[p.name for p in WORKFLOWS])
def test_workflow_calls_existing_commands(path: Path) -> None:
    """Every rooflinec call in a workflow parses with the real command line."""
    parser = build_parser()
    for job in load(path)["jobs"].values():
        for step in job["steps"]:
            for argv in commands_in(step.get("run", "")):
                assert argv[0] in KNOWN_PROGRAMS, argv
                if argv[0] == "rooflinec":
                    parser.parse_args(argv[1:])


def test_workflows_cover_pull_requests_and_publishing() -> None:
    """Pull requests run check (github format), the tests and diff; main publishes with mike."""
    text = {p.name: p.read_text("utf-8") for p in WORKFLOWS}
    pr = text["pull-request.yml"]
    assert "rooflinec check --specs specs --strict --format github" in pr
    assert "pytest -q" in pr and "GITHUB_STEP_SUMMARY" in pr and "--require-bump" in pr
    assert "rooflinec publish" in text["publish.yml"]


def test_pre_commit_hooks_call_existing_commands() -> None:
    """The published hook and the project's own hooks run commands that parse."""
    parser = build_parser()
    hooks = load(REPO / ".pre-commit-hooks.yaml")
    assert ["rooflinec-check"] == [h["id"] for h in hooks]
    parser.parse_args(shlex.split(hooks[0]["entry"])[1:])
    config = load(REPO / ".pre-commit-config.yaml")
    local = [h for r in config["repos"] if r["repo"] == "local" for h in r["hooks"]]
    entry = next(h["entry"] for h in local if h["id"] == "rooflinec-check")
    parser.parse_args(shlex.split(entry)[1:])
    assert {"ruff", "ruff-format", "mypy", "rooflinec-check"} <= {
        h["id"] for r in config["repos"] for h in r["hooks"]
    }
