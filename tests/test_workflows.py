"""The GitHub workflows and pre-commit hooks are valid and call only commands that exist."""

from __future__ import annotations

import importlib.metadata
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from rooflinec.cli.main import build_parser, parse
from tests.specfactory import REPO

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
KNOWN_PROGRAMS = {"rooflinec", "pytest", "python", "git", "echo", "ruff", "mypy", "apt-get"}
# The current major version of every action the workflows use.
CURRENT_ACTIONS = {
    "actions/checkout": "v6",
    "actions/setup-python": "v6",
    "actions/cache": "v6",
}
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]


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
    assert ["python", "-m", "rooflinec"] == shlex.split(entry)[:3]
    parser.parse_args(shlex.split(entry)[3:])
    assert {"ruff", "ruff-format", "mypy", "rooflinec-check"} <= {
        h["id"] for r in config["repos"] for h in r["hooks"]
    }


def steps(path: Path) -> list[dict[str, Any]]:
    return [step for job in load(path)["jobs"].values() for step in job["steps"]]


def workflow(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = load(REPO / ".github" / "workflows" / name)
    return doc


def test_publish_runs_on_release_tags_with_latest() -> None:
    """A `v*` tag publishes its version (the tag without the v) and moves `latest` to it;
    nothing publishes on a plain push to main."""
    doc = workflow("publish.yml")
    assert {"push": {"tags": ["v*"]}} == doc["on"]
    runs = [s["run"] for s in steps(REPO / ".github" / "workflows" / "publish.yml") if "run" in s]
    publish = next(r for r in runs if r.startswith("rooflinec publish"))
    assert 'rooflinec publish "${GITHUB_REF_NAME#v}" --alias latest --push' == publish
    assert not any("date" in r for r in runs)


@pytest.mark.parametrize("path", WORKFLOWS, ids=[p.name for p in WORKFLOWS])
def test_actions_are_current_major_versions(path: Path) -> None:
    """Every action is one of the known ones, at its current major version."""
    used = [s["uses"] for s in steps(path) if "uses" in s]
    assert used
    for uses in used:
        name, _, version = uses.partition("@")
        assert CURRENT_ACTIONS[name] == version, uses


@pytest.mark.parametrize("path", WORKFLOWS, ids=[p.name for p in WORKFLOWS])
def test_every_job_caches_pip(path: Path) -> None:
    """A job that installs with pip keeps pip's cache: setup-python's `cache: pip` keyed
    on the pinned constraints.txt, or actions/cache of ~/.cache/pip where setup-python
    does not run."""
    for job in load(path)["jobs"].values():
        if not any("pip install" in s.get("run", "") for s in job["steps"]):
            continue
        caches = [
            s.get("with", {})
            for s in job["steps"]
            if s.get("uses", "").startswith(("actions/setup-python@", "actions/cache@"))
        ]
        assert any(
            {"cache": "pip", "cache-dependency-path": "constraints.txt"}.items() <= c.items()
            or c.get("path") == "~/.cache/pip"
            for c in caches
        ), job


def test_pull_requests_run_the_browser_tests() -> None:
    """One pull-request job installs Debian's Chromium with apt and runs the browser tests;
    the other runs everything else, so together they run the whole suite."""
    jobs = workflow("pull-request.yml")["jobs"]
    runs = {name: [s.get("run", "") for s in job["steps"]] for name, job in jobs.items()}
    assert "python:3.11-bookworm" == jobs["browser"]["container"]
    assert any("apt-get install -y -qq chromium" in r for r in runs["browser"])
    assert "pytest -q -m browser" in runs["browser"]
    assert 'pytest -q -m "not browser"' in runs["check"]
    assert any(
        r.startswith("python -m pip install -c constraints.txt '.[test]'") for r in runs["browser"]
    )


def test_ci_runs_ruff_and_mypy() -> None:
    """The pull-request workflow lints, checks formatting and types."""
    lint = next(
        s["run"]
        for s in steps(REPO / ".github" / "workflows" / "pull-request.yml")
        if s.get("name") == "Lint, format and types"
    )
    assert ["ruff check .", "ruff format --check .", "mypy"] == lint.split("\n")[:3]


def _check_options(command: str) -> tuple[object, ...]:
    opts = parse(shlex.split(command)[1:])
    return opts.command, opts.specs, opts.strict


def test_hook_and_ci_apply_the_same_gate() -> None:
    """The published hook, the project's own hook, .ci/run and the pull-request workflow
    all run `check --strict` on specs/: a commit the hook passes, CI passes."""
    published = load(REPO / ".pre-commit-hooks.yaml")[0]["entry"]
    config = load(REPO / ".pre-commit-config.yaml")
    own = next(
        h["entry"] for r in config["repos"] for h in r["hooks"] if h["id"] == "rooflinec-check"
    ).removeprefix("python -m ")
    workflow_check = next(
        s["run"]
        for s in steps(REPO / ".github" / "workflows" / "pull-request.yml")
        if s.get("run", "").startswith("rooflinec check")
    )
    ci = next(
        line.removeprefix(".venv/bin/")
        for line in (REPO / ".ci" / "run").read_text("utf-8").splitlines()
        if line.startswith(".venv/bin/rooflinec check")
    )
    expected = ("check", Path("specs"), True)
    assert expected == _check_options(published)
    assert expected == _check_options(own)
    assert expected == _check_options(workflow_check)
    # .ci/run runs from the project's root, where `--specs` defaults to ./specs
    assert ("check", None, True) == _check_options(ci)


@pytest.mark.parametrize(
    ("path", "runs"),
    [
        ("specs/devices/acme-x1.yaml", True),
        ("specs/precisions.yaml", True),
        ("specs/kernels/gemm.yml", True),
        ("schemas/device.schema.json", True),
        ("README.md", False),
        ("site/index.md", False),
    ],
)
def test_published_hook_runs_on_specs_and_schemas(path: str, runs: bool) -> None:
    """The hook's `files` pattern takes every spec and every schema, and nothing else."""
    hook = load(REPO / ".pre-commit-hooks.yaml")[0]
    assert runs == bool(re.search(hook["files"], path))
    assert "python" == hook["language"]


def _local_hooks() -> dict[str, dict[str, Any]]:
    config = load(REPO / ".pre-commit-config.yaml")
    return {h["id"]: h for r in config["repos"] for h in r["hooks"]}


def _bare(requirement: str) -> str:
    return requirement.split(";")[0].strip()


def test_own_hooks_run_from_a_fresh_clone() -> None:
    """Every hook of the project's own config brings its tools (`language: python` with
    pinned dependencies): none needs a venv on PATH, none a git host."""
    config = load(REPO / ".pre-commit-config.yaml")
    assert ["local"] == [r["repo"] for r in config["repos"]]
    for hook in _local_hooks().values():
        assert "python" == hook["language"], hook["id"]
        assert hook["additional_dependencies"], hook["id"]


def test_one_ruff_version_everywhere() -> None:
    """The ruff of the hooks is the ruff of the test extras, and the one installed here."""
    hooks = _local_hooks()
    pinned = next(r for r in PROJECT["optional-dependencies"]["test"] if r.startswith("ruff"))
    assert "ruff==" + importlib.metadata.version("ruff") == pinned
    assert [pinned] == hooks["ruff"]["additional_dependencies"]
    assert [pinned] == hooks["ruff-format"]["additional_dependencies"]


def test_hook_dependencies_match_the_project() -> None:
    """The rooflinec hook brings exactly the core dependencies; the mypy hook brings the
    test extras' mypy and only requirements the project itself declares."""
    hooks = _local_hooks()
    core = [_bare(r) for r in PROJECT["dependencies"]]
    assert core == hooks["rooflinec-check"]["additional_dependencies"]
    declared = {_bare(r) for r in PROJECT["dependencies"]} | {
        _bare(r) for extra in PROJECT["optional-dependencies"].values() for r in extra
    }
    assert set(hooks["mypy"]["additional_dependencies"]) <= declared
