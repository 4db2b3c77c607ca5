"""Publish a version of the site with mike into a local `gh-pages` branch.

Each published version carries `rooflinec-build.json` (the commit it was built
from), so the next version's "changes" page can list the figures that moved since
the previous published version. Nothing leaves the machine without `--push`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from rooflinec.errors import RooflinecError, UsageError

BUILD_INFO = "rooflinec-build.json"
ENV_BASE = "ROOFLINEC_CHANGES_BASE"
ENV_BASE_LABEL = "ROOFLINEC_CHANGES_LABEL"
ENV_COMMIT = "ROOFLINEC_BUILD_COMMIT"
ENV_VERSION = "ROOFLINEC_BUILD_VERSION"


@dataclass(frozen=True)
class Previous:
    version: str
    commit: str | None


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False
    )


def published_versions(repo: Path, branch: str) -> list[str]:
    """Versions on the branch, newest first (mike's versions.json order)."""
    proc = _git(repo, "show", f"{branch}:versions.json")
    if proc.returncode != 0:
        return []
    try:
        entries = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return []
    return [str(e["version"]) for e in entries if isinstance(e, dict) and "version" in e]


def previous_version(repo: Path, branch: str, version: str) -> Previous | None:
    """The newest published version other than `version`, and the commit it was built from."""
    for candidate in published_versions(repo, branch):
        if candidate == version:
            continue
        proc = _git(repo, "show", f"{branch}:{candidate}/{BUILD_INFO}")
        commit = None
        if proc.returncode == 0:
            try:
                commit = json.loads(proc.stdout).get("commit")
            except json.JSONDecodeError:
                commit = None
        if commit and _git(repo, "cat-file", "-e", f"{commit}^{{commit}}").returncode != 0:
            commit = None
        return Previous(candidate, commit)
    return None


def publish(
    config: Path,
    version: str,
    aliases: list[str],
    *,
    branch: str = "gh-pages",
    push: bool = False,
    title: str | None = None,
) -> Previous | None:
    """Build and commit `version` of the site to `branch` with mike; return the previous one."""
    if not config.is_file():
        raise UsageError(f"mkdocs config not found: {config}")
    repo_proc = _git(config.parent, "rev-parse", "--show-toplevel")
    if repo_proc.returncode != 0:
        raise UsageError(f"{config.parent} is not inside a git repository")
    repo = Path(repo_proc.stdout.strip())
    head = _git(repo, "rev-parse", "HEAD").stdout.strip()
    previous = previous_version(repo, branch, version)
    env = dict(os.environ)
    # mike runs `mkdocs` from PATH: make it the one beside this interpreter.
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env[ENV_COMMIT] = head
    env[ENV_VERSION] = version
    if previous is not None and previous.commit:
        env[ENV_BASE] = previous.commit
        env[ENV_BASE_LABEL] = previous.version
    command = [
        sys.executable,
        "-m",
        "mike",
        "deploy",
        "--config-file",
        str(config),
        "--branch",
        branch,
        "--update-aliases",
    ]
    if title:
        command += ["--title", title]
    if push:
        command.append("--push")
    command += [version, *aliases]
    proc = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["mike failed"])[-1]
        raise RooflinecError(f"mike deploy failed: {last}")
    if aliases and not published_default(repo, branch):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "mike",
                "set-default",
                "--config-file",
                str(config),
                "--branch",
                branch,
                *(["--push"] if push else []),
                aliases[0],
            ],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    return previous


def published_default(repo: Path, branch: str) -> bool:
    return _git(repo, "cat-file", "-e", f"{branch}:index.html").returncode == 0
