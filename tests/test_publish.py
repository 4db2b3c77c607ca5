"""Versioned site: the changes page, build info, and `rooflinec publish` with mike end to end."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from rooflinec.cli.main import main
from rooflinec.errors import UsageError
from rooflinec.pipeline import checked
from rooflinec.prose.diff import diff_compiled
from rooflinec.site import publish as publish_module
from rooflinec.site.pages.changes import changes_pages
from rooflinec.site.pages.common import PageLimits
from rooflinec.site.pages.downloads import downloads
from rooflinec.site.pages.model import Site
from rooflinec.site.publish import (
    BUILD_INFO,
    ENV_BASE,
    ENV_BASE_LABEL,
    ENV_COMMIT,
    ENV_VERSION,
    MAX_NAME,
    _ordered,
    check_names,
    previous_version,
)
from rooflinec.site.versions import Changes

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / "specs"
OLD_BANDWIDTH = "    bandwidth: 864 GB/s"
NEW_BANDWIDTH = "    bandwidth: 900 GB/s"
COMMIT = "c" * 40
BASE = "b" * 40


def _compile(folder: Path) -> Any:
    compiled, diagnostics, _ = checked(folder)
    assert compiled is not None, [str(d) for d in diagnostics]
    return compiled


def _move_l40s_bandwidth(specs: Path) -> None:
    """The L40S's DRAM bandwidth from 864 to 900 GB/s (its quote too, so no lint warns)."""
    path = specs / "devices" / "nvidia-l40s.yaml"
    text = path.read_text("utf-8")
    assert OLD_BANDWIDTH in text and "864GB/s" in text
    path.write_text(text.replace(OLD_BANDWIDTH, NEW_BANDWIDTH).replace("864GB/s", "900GB/s"))


def _page(compiled: Any, changes: Changes | None, name: str = "changes.md") -> str:
    pages = {p.path: p for p in changes_pages(Site.of(compiled, svg=False, changes=changes))}
    return html.unescape(pages[name].markdown)


@pytest.fixture(scope="module")
def compiled() -> Any:
    return _compile(BUNDLED)


@pytest.fixture(scope="module")
def moved(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The bundled catalog with the L40S bandwidth moved, compiled."""
    specs = tmp_path_factory.mktemp("moved") / "specs"
    shutil.copytree(BUNDLED, specs)
    _move_l40s_bandwidth(specs)
    return _compile(specs)


# --------------------------------------------------------------------------- the changes page


def test_a_plain_build_has_no_changes_context(compiled: Any) -> None:
    """No publish variables: no context, no build info, and the page says so."""
    assert Changes.from_environment(BUNDLED, compiled, environ={}) is None
    files = downloads(Site.of(compiled, svg=False))
    assert BUILD_INFO not in files and "changes.json" not in files
    assert "This build is not a published version" in _page(compiled, None)


def test_the_first_version_says_so_and_records_its_commit(compiled: Any) -> None:
    """Version and commit without a base: build info written, nothing compared."""
    changes = Changes.from_environment(
        BUNDLED, compiled, environ={ENV_VERSION: "1.0", ENV_COMMIT: COMMIT}
    )
    assert changes is not None and changes.diff is None
    assert json.loads(changes.downloads()[BUILD_INFO]) == {"commit": COMMIT, "version": "1.0"}
    text = _page(compiled, changes)
    assert "Version **1.0** (built from commit <code>cccccccccccc</code>) is the first" in text


def test_a_previous_version_without_a_commit_is_named(compiled: Any) -> None:
    """A label without a base commit: the page names the version and says why nothing moved."""
    environ = {ENV_VERSION: "1.1", ENV_COMMIT: COMMIT, ENV_BASE_LABEL: "1.0"}
    changes = Changes.from_environment(BUNDLED, compiled, environ=environ)
    text = _page(compiled, changes)
    assert "follows the published version **1.0**" in text and "is not known here" in text


def test_a_base_that_cannot_be_read_is_reported_not_fatal(compiled: Any, tmp_path: Path) -> None:
    """A base commit outside any repository: the build goes on and the page says why."""
    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    environ = {ENV_VERSION: "1.1", ENV_BASE: BASE, ENV_BASE_LABEL: "1.0"}
    changes = Changes.from_environment(specs, compiled, environ=environ)
    assert changes is not None and changes.diff is None and changes.problem
    text = _page(compiled, changes)
    assert "could not be compared with the previous published version **1.0**" in text


def test_the_changes_page_lists_what_moved(compiled: Any, moved: Any) -> None:
    """Grouped by device and kernel, old → new with the relative change, linked, and as JSON."""
    diff = diff_compiled(compiled, moved, f"1.0 ({BASE[:12]})")
    changes = Changes("1.1", COMMIT, BASE, "1.0", diff)
    text = _page(moved, changes)
    assert "Version **1.1** (commit <code>cccccccccccc</code>) against the previous " in text
    assert "### Device [NVIDIA L40S](devices/nvidia-l40s.md)" in text
    assert re.search(r"\| dram bandwidth \| 864 GB/s \| 900 GB/s \| \+4\.17% \|", text)
    assert re.search(r"\| bf16 ridge \(dram\) \| [0-9.]+ FLOP/B \| [0-9.]+ FLOP/B \| −4% \|", text)
    assert "on [NVIDIA L40S](devices/nvidia-l40s.md)" in text  # a kernel group
    assert "nvidia-h100-sxm" not in text
    data = json.loads(downloads(Site.of(moved, svg=False, changes=changes))["changes.json"])
    assert data["base_version"] == "1.0" and data["version"] == "1.1"
    assert len(data["changes"]) == len(diff.changes)


def test_a_long_changes_page_is_split_and_capped(compiled: Any, moved: Any) -> None:
    """Small budgets: changes-2.md follows, and what no page holds is counted, in JSON."""
    diff = diff_compiled(compiled, moved, "1.0")
    changes = Changes("1.1", COMMIT, BASE, "1.0", diff)
    limits = PageLimits(changes_page_budget=900, max_change_pages=3)
    site = Site.of(moved, svg=False, changes=changes, limits=limits)
    pages = {p.path: p.markdown for p in changes_pages(site)}
    assert sorted(pages) == ["changes-2.md", "changes-3.md", "changes.md"]
    assert "Pages: **1** · [2](changes-2.md) · [3](changes-3.md)" in pages["changes.md"]
    shown = sum(len(re.findall(r"^\| (?!figure|---)", p, re.M)) for p in pages.values())
    hidden = len(diff.changes) - shown
    assert hidden > 0
    assert f"{hidden} more changes are not shown here" in pages["changes-3.md"]


def test_spec_text_in_a_change_stays_inert(compiled: Any) -> None:
    """Ids and subjects go through the site's escaping like any spec text."""
    from rooflinec.prose.diff import CatalogDiff, Change

    payload = "<script>alert(1)</script> [x](javascript:alert(1)) | y"
    diff = CatalogDiff("1.0", changes=[Change(f"device {payload}", payload, "B/s", None, None)])
    changes = Changes("1.1", COMMIT, BASE, "1.0", diff)
    text = changes_pages(Site.of(compiled, svg=False, changes=changes))[0].markdown
    assert "<script" not in text and "](javascript" not in text
    assert payload in html.unescape(text)


def test_versions_are_compared_in_mikes_order() -> None:
    """The previous version is the next older one, whatever order they were published in."""
    assert _ordered(["1.1", "1.0"], "1.2") == ["1.2", "1.1", "1.0"]
    assert _ordered(["1.1", "1.0"], "1.0.1") == ["1.1", "1.0.1", "1.0"]
    assert _ordered(["1.1", "1.0"], "1.1") == ["1.1", "1.0"]


def test_no_published_branch_means_no_previous_version(tmp_path: Path) -> None:
    """A repository without gh-pages has nothing to compare with."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path)], check=True)
    assert previous_version(tmp_path, "gh-pages", "1.0") is None


def test_publish_outside_a_repository_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A config that is not in a git repository: exit 2 with a message, no traceback."""
    shutil.copy(REPO / "mkdocs.yml", tmp_path / "mkdocs.yml")
    assert main(["publish", "1.0", "--config", str(tmp_path / "mkdocs.yml")]) == 2
    assert "not inside a git repository" in capsys.readouterr().err


# --------------------------------------------------------------------------- end to end


def _git(repo: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    )
    return proc.stdout


def _visible(page_html: str) -> str:
    article = re.search(r"<article\b.*?</article>", page_html, re.S)
    assert article is not None
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", article.group(0))))


def test_publish_two_versions_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """1.0 then 1.1 into gh-pages with mike; 1.1's changes page lists the moved bandwidth."""
    repo = tmp_path / "catalog"
    repo.mkdir()
    shutil.copy(REPO / "mkdocs.yml", repo / "mkdocs.yml")
    shutil.copytree(REPO / "site", repo / "site")
    shutil.copytree(BUNDLED, repo / "specs")
    (repo / ".gitignore").write_text("/build/\n", "utf-8")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.name", "rooflinec tests")
    _git(repo, "config", "user.email", "tests@example.invalid")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "catalog")
    first = _git(repo, "rev-parse", "HEAD").strip()
    for name in (ENV_BASE, ENV_BASE_LABEL, ENV_COMMIT, ENV_VERSION):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(repo)

    assert main(["publish", "1.0", "--alias", "latest", "--config", "mkdocs.yml"]) == 0
    assert "published 1.0 to gh-pages (first version)" in capsys.readouterr().out
    _move_l40s_bandwidth(repo / "specs")
    _git(repo, "commit", "-q", "-am", "L40S: 900 GB/s")
    second = _git(repo, "rev-parse", "HEAD").strip()
    assert main(["publish", "1.1", "--alias", "latest", "--config", "mkdocs.yml"]) == 0
    assert "published 1.1 to gh-pages (changes since 1.0)" in capsys.readouterr().out

    versions = json.loads(_git(repo, "show", "gh-pages:versions.json"))
    assert [(v["version"], v["aliases"]) for v in versions] == [("1.1", ["latest"]), ("1.0", [])]
    assert _git(repo, "show", "gh-pages:latest") == "1.1"  # mike's alias is a symlink
    assert "1.1" in _git(repo, "show", "gh-pages:index.html") or "latest" in _git(
        repo, "show", "gh-pages:index.html"
    )
    for version, commit in (("1.0", first), ("1.1", second)):
        info = json.loads(_git(repo, "show", f"gh-pages:{version}/{BUILD_INFO}"))
        assert info == {"commit": commit, "version": version}
        _git(repo, "cat-file", "-e", f"gh-pages:{version}/schemas/device.schema.json")

    new = _visible(_git(repo, "show", "gh-pages:1.1/changes.html"))
    assert "Version 1.1" in new and "against the previous published version 1.0" in new
    assert re.search(r"dram bandwidth 864 GB/s 900 GB/s \+4\.17%", new), new[:2000]
    assert "NVIDIA L40S" in new and "NVIDIA H100 SXM" not in new
    old = _visible(_git(repo, "show", "gh-pages:1.0/changes.html"))
    assert "is the first published version" in old
    assert "900 GB/s" not in old and "864 GB/s" not in old
    page = _git(repo, "show", "gh-pages:1.1/index.html")
    assert '"provider":"mike"' in page.replace(" ", "")  # material's version selector
    assert _git(repo, "status", "--porcelain") == ""  # main's working tree is untouched


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    "name", ["1.0", "2026.11", "v1.2.3-rc.1", "latest", "dev_build", "A" * MAX_NAME]
)
def test_version_and_alias_names_that_are_accepted(name: str) -> None:
    """Letters, digits, `.`, `-` and `_`, starting with a letter or digit."""
    assert None is check_names(name, [name], "gh-pages")


@pytest.mark.parametrize(
    "name",
    [
        "",
        ".",
        "..",
        "-h",
        "--push",
        "--config-file=evil/mkdocs.yml",
        ".hidden",
        "a b",
        "1.0/x",
        "1.0\n",
        "1.0\r",
        "é",
        "A" * (MAX_NAME + 1),
    ],
    ids=repr,
)
def test_version_and_alias_names_that_are_refused(name: str) -> None:
    """Options, dot folders, separators, a trailing newline, too long: a usage error each."""
    with pytest.raises(UsageError, match=r"^invalid version "):
        check_names(name, [], "gh-pages")
    with pytest.raises(UsageError, match=r"^invalid alias "):
        check_names("1.0", ["latest", name], "gh-pages")


@pytest.mark.parametrize("branch", ["-f", "--push", "a..b", "x/", "/x", "x.lock", "x\n", "a b"])
def test_branch_names_that_are_refused(branch: str) -> None:
    """The branch reaches mike's and git's command lines too: only branch names pass."""
    with pytest.raises(UsageError, match=r"^invalid branch "):
        check_names("1.0", [], branch)
    assert None is check_names("1.0", [], "site/gh-pages")


@pytest.fixture
def small_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with a minimal mkdocs site, an `origin` to push to, and an `evil/`
    config whose hook writes `hooked.txt`: what each smuggled option would reach."""
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    repo = tmp_path / "catalog"
    (repo / "docs").mkdir(parents=True)
    (repo / "evil").mkdir()
    (repo / "docs" / "index.md").write_text("# Catalog\n", "utf-8")
    (repo / "mkdocs.yml").write_text("site_name: Catalog\n", "utf-8")
    (repo / "evil" / "mkdocs.yml").write_text(
        "site_name: Evil\ndocs_dir: ../docs\nhooks: [hook.py]\n", "utf-8"
    )
    (repo / "evil" / "hook.py").write_text(
        "from pathlib import Path\nPath(__file__).with_name('hooked.txt').write_text('ran')\n",
        "utf-8",
    )
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.name", "rooflinec tests")
    _git(repo, "config", "user.email", "tests@example.invalid")
    _git(repo, "remote", "add", "origin", str(origin))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "catalog")
    for name in (ENV_BASE, ENV_BASE_LABEL, ENV_COMMIT, ENV_VERSION):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(repo)
    return repo


def _branches(repo: Path) -> str:
    return _git(repo, "for-each-ref", "--format=%(refname)", "refs/heads/gh-pages")


@pytest.mark.parametrize(
    ("argv", "kind", "name"),
    [
        (["--", "-h"], "version", "-h"),
        (["--", "--force"], "version", "--force"),
        (["3.1", "--alias=--push"], "alias", "--push"),
        (
            ["3.1", "--alias=--config-file=evil/mkdocs.yml"],
            "alias",
            "--config-file=evil/mkdocs.yml",
        ),
        (["3.1", "--alias", "..", "--push"], "alias", ".."),
        (["3.1\n::error file=x::forged"], "version", "3.1\\n::error file=x::forged"),
    ],
)
def test_options_smuggled_as_names_are_refused_before_anything_runs(
    small_repo: Path, capsys: pytest.CaptureFixture[str], argv: list[str], kind: str, name: str
) -> None:
    """One line, exit 2; no gh-pages branch, nothing pushed, no other config built."""
    assert 2 == main(["publish", *argv])
    captured = capsys.readouterr()
    assert "" == captured.out
    lines = captured.err.splitlines()
    assert 1 == len(lines)
    assert lines[0].startswith(f"rooflinec: error: invalid {kind} '{name}': ")
    assert "" == _branches(small_repo)
    assert "" == _branches(small_repo.parent / "origin.git")
    assert not (small_repo / "evil" / "hooked.txt").exists()


def test_a_valid_version_and_alias_publish_locally(
    small_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A valid version and alias publish locally: nothing pushed, the alias set as default."""
    assert 0 == main(["publish", "1.0", "--alias", "latest"])
    assert "published 1.0 to gh-pages (first version)\n" == capsys.readouterr().out
    versions = json.loads(_git(small_repo, "show", "gh-pages:versions.json"))
    assert [("1.0", ["latest"])] == [(v["version"], v["aliases"]) for v in versions]
    _git(small_repo, "cat-file", "-e", "gh-pages:index.html")
    assert "" == _branches(small_repo.parent / "origin.git")


def test_mike_commands_put_names_after_a_double_dash(
    small_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every name mike receives follows `--`, so mike never reads one as an option."""
    calls: list[tuple[str, ...]] = []
    monkeypatch.setattr(publish_module, "_mike", lambda repo, env, *args: calls.append(args))
    publish_module.publish(small_repo / "mkdocs.yml", "1.0", ["latest"])
    assert ("--", "1.0", "latest") == calls[0][-3:]
    assert ("set-default", "--", "latest") == (calls[1][0], *calls[1][-2:])
