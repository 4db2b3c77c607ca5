"""Publish a version of the site with mike into a local `gh-pages` branch.

`publish` runs `mike deploy` (which runs `mkdocs build` from PATH: the `mkdocs` beside
this interpreter comes first) with the build's context in environment variables, read by
the site plugin:

- `ROOFLINEC_BUILD_COMMIT`, `ROOFLINEC_BUILD_VERSION`: the commit being built and the
  version name; the site gets `rooflinec-build.json` with both.
- `ROOFLINEC_CHANGES_BASE`, `ROOFLINEC_CHANGES_LABEL`: the commit and name of the
  previous published version (the next older one in mike's order, found in the branch's
  `versions.json` and that version's `rooflinec-build.json`); the "changes" page lists the
  figures that moved since then. Without a base the page says no previous version is known
  (or, with only a label, that its commit is not known).

Everything happens in the local repository; nothing leaves the machine without `--push`.

A version, an alias and a branch come from the command line and reach mike's (and git's)
own command lines: each is checked as a name before anything runs (`check_names`), and
the version and aliases go after `--`, so none can ever be read as an option.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from rooflinec.errors import RooflinecError, UsageError, one_line

__all__ = [
    "BUILD_INFO",
    "ENV_BASE",
    "ENV_BASE_LABEL",
    "ENV_COMMIT",
    "ENV_VERSION",
    "MAX_NAME",
    "Previous",
    "check_names",
    "previous_version",
    "publish",
    "published_ref",
    "published_versions",
]

BUILD_INFO = "rooflinec-build.json"
ENV_BASE = "ROOFLINEC_CHANGES_BASE"
ENV_BASE_LABEL = "ROOFLINEC_CHANGES_LABEL"
ENV_COMMIT = "ROOFLINEC_BUILD_COMMIT"
ENV_VERSION = "ROOFLINEC_BUILD_VERSION"

MAX_NAME = 64
# A version or alias is a folder name on the published branch and a word on mike's
# command line: letters, digits, `.`, `-` and `_`, starting with a letter or digit (so
# never an option, `.` or `..`). `\Z`, not `$`: `$` also matches before a final newline.
_NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_NAME - 1}}}\Z")
# A branch may have `/` between such names (`site/gh-pages`), never `..` nor a final `.`.
_BRANCH = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*\Z")

# mike has no `__main__`: run its console entry point with this interpreter.
_MIKE = (
    sys.executable,
    "-c",
    "import sys; from mike.driver import main; sys.argv[0] = 'mike'; sys.exit(main())",
)


@dataclass(frozen=True)
class Previous:
    """The previous published version, and the commit it was built from when known."""

    version: str
    commit: str | None


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False
    )


def _has(repo: Path, ref: str) -> bool:
    return _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").returncode == 0


def published_ref(repo: Path, branch: str, remote: str = "origin") -> str | None:
    """Where the published versions are: the local branch, or the remote's when the local
    one is missing or behind it (mike fast-forwards to it before deploying)."""
    local = _has(repo, branch)
    upstream = f"{remote}/{branch}"
    if _has(repo, upstream) and (
        not local or _git(repo, "merge-base", "--is-ancestor", branch, upstream).returncode == 0
    ):
        return upstream
    return branch if local else None


def published_versions(repo: Path, branch: str) -> list[str]:
    """Versions on the branch, newest first (mike's versions.json order)."""
    ref = published_ref(repo, branch)
    if ref is None:
        return []
    proc = _git(repo, "show", f"{ref}:versions.json")
    if proc.returncode != 0:
        return []
    try:
        entries = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return []
    if not isinstance(entries, list):
        return []
    return [str(e["version"]) for e in entries if isinstance(e, dict) and "version" in e]


def _ordered(versions: list[str], version: str) -> list[str]:
    """`versions` with `version` added, newest first in mike's order."""
    try:
        from mike.versions import Versions  # type: ignore[import-untyped]

        known = Versions()
        for v in [*versions, version]:
            known.add(v)
        return [str(info.version) for info in known]
    except (ImportError, ValueError):
        return [version, *(v for v in versions if v != version)]


def previous_version(repo: Path, branch: str, version: str) -> Previous | None:
    """The published version just older than `version` (in mike's order: 1.0 before 1.1),
    and the commit it was built from when its `rooflinec-build.json` names one that exists
    here; None when there is no older version."""
    versions = published_versions(repo, branch)
    ordered = _ordered(versions, version)
    older = ordered[ordered.index(version) + 1 :]
    if not older:
        return None
    candidate = older[0]
    ref = published_ref(repo, branch) or branch
    proc = _git(repo, "show", f"{ref}:{candidate}/{BUILD_INFO}")
    commit = None
    if proc.returncode == 0:
        try:
            info = json.loads(proc.stdout)
        except json.JSONDecodeError:
            info = None
        if isinstance(info, dict) and isinstance(info.get("commit"), str):
            commit = info["commit"]
    if commit and not _has(repo, commit):
        commit = None  # e.g. a shallow clone: the page says the commit is not known
    return Previous(candidate, commit)


def _name_error(kind: str, value: str, rule: str) -> UsageError:
    return UsageError(f"invalid {kind} '{one_line(value)}': {rule}")


def check_names(version: str, aliases: list[str], branch: str) -> None:
    """Raise `UsageError` unless the version and every alias are names (`_NAME`) and the
    branch is a branch name (`_BRANCH`, at most 100 characters, no `..`)."""
    rule = (
        "a version or alias is letters, digits, '.', '-' and '_', starting with a letter "
        f"or digit, at most {MAX_NAME} characters"
    )
    for kind, value in (("version", version), *(("alias", a) for a in aliases)):
        if not _NAME.match(value):
            raise _name_error(kind, value, rule)
    if (
        not _BRANCH.match(branch)
        or len(branch) > 100
        or ".." in branch
        or branch.endswith((".", ".lock"))
    ):
        raise _name_error(
            "branch",
            branch,
            "a branch is names of letters, digits, '.', '-' and '_' separated by '/', "
            "each starting with a letter or digit, at most 100 characters",
        )


def _tail(text: str, lines: int = 6) -> str:
    """The last lines of mike's output on one line: the CLI prints every error in one."""
    return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:])


def _mike(repo: Path, env: dict[str, str], command: str, *args: str) -> None:
    """Run one mike command in `repo`; raise `RooflinecError` with its last lines on failure."""
    proc = subprocess.run(
        [*_MIKE, command, *args], cwd=repo, env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        detail = _tail(proc.stderr) or _tail(proc.stdout) or "no output"
        raise RooflinecError(f"mike {command} failed: {detail}")


def publish(
    config: Path,
    version: str,
    aliases: list[str],
    *,
    branch: str = "gh-pages",
    push: bool = False,
    title: str | None = None,
) -> Previous | None:
    """Build and commit `version` of the site to `branch` with mike; return the previous one.

    Raises `UsageError` when a name is not one (`check_names`), or the config is missing
    or not in a git repository, and `RooflinecError` (with mike's last lines of output)
    when mike fails.
    """
    check_names(version, aliases, branch)
    config = config.resolve()
    if not config.is_file():
        raise UsageError(f"mkdocs config not found: {config}")
    repo_proc = _git(config.parent, "rev-parse", "--show-toplevel")
    if repo_proc.returncode != 0:
        raise UsageError(f"{config.parent} is not inside a git repository")
    repo = Path(repo_proc.stdout.strip())
    head = _git(repo, "rev-parse", "HEAD")
    if head.returncode != 0:
        raise UsageError(f"{repo} has no commit yet: commit the specs before publishing")
    previous = previous_version(repo, branch, version)
    env = dict(os.environ)
    # mike runs `mkdocs` from PATH: make it the one beside this interpreter.
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.setdefault("NO_MKDOCS_2_WARNING", "1")
    env[ENV_COMMIT] = head.stdout.strip()
    env[ENV_VERSION] = version
    for name in (ENV_BASE, ENV_BASE_LABEL):
        env.pop(name, None)  # never a stale base from the caller's environment
    if previous is not None:
        env[ENV_BASE_LABEL] = previous.version
        if previous.commit:
            env[ENV_BASE] = previous.commit
    common = ["--config-file", str(config), "--branch", branch, *(["--push"] if push else [])]
    title_args = ["--title", title] if title else []
    # Names after `--`: mike reads them as names even if a check above ever lets one by.
    _mike(repo, env, "deploy", *common, "--update-aliases", *title_args, "--", version, *aliases)
    if aliases and not published_default(repo, branch):
        _mike(repo, env, "set-default", *common, "--", aliases[0])
    return previous


def published_default(repo: Path, branch: str) -> bool:
    """True if the branch has a root `index.html` (mike's redirect to the default version)."""
    return _git(repo, "cat-file", "-e", f"{branch}:index.html").returncode == 0
