"""`rooflinec build --out DIR` replaces only what a previous rooflinec build wrote there:
user files, dot files and folders it must not hold survive, every refusal is one line with
exit 2, and what a killed build left behind is cleaned by the next one."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from rooflinec.cli.main import main
from rooflinec.errors import UsageError
from rooflinec.site import output
from rooflinec.site.output import MANIFEST, check_target, clean_stale, install, read_manifest

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / "specs"


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _site(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, "utf-8")
    return root


def _refused(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    """Run `rooflinec ARGS`; assert it is a usage error of one line; return the line."""
    assert 2 == main(args)
    err = capsys.readouterr().err
    assert 1 == len(err.splitlines()), err
    assert err.startswith("rooflinec: error: ")
    return err.strip()


def _dead_pid() -> int:
    """The id of a process that has exited."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


# --------------------------------------------------------------------------- whole builds


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A gh-pages checkout (`.git`, `.nojekyll`, `CNAME`) after one build into it."""
    out = tmp_path_factory.mktemp("pages") / "web"
    _site(out, {".git/HEAD": "ref: refs/heads/gh-pages\n", ".nojekyll": ""})
    assert 0 == main(["build", "--specs", str(BUNDLED), "--out", str(out)])
    return out


def test_rebuild_keeps_what_no_build_wrote(
    built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A rebuild into a git checkout keeps `.git`, `.nojekyll`, `CNAME` and the user's
    notes and blog, and still refreshes and prunes the site's own files."""
    out = tmp_path / "web"
    os.rename(built, out)
    _site(out, {"CNAME": "roofline.example\n", "notes.txt": "keep", "blog/post.html": "<p>"})
    _site(out, {"devices/my-notes.txt": "mine"})
    (out / "index.html").write_bytes((out / "index.html").read_bytes())  # same bytes: ours
    # A file the previous build recorded and the new one does not write is removed.
    manifest = json.loads((out / MANIFEST).read_text("utf-8"))
    gone = out / "old-page.html"
    gone.write_text("from an older build", "utf-8")
    digest = hashlib.sha256(b"from an older build").hexdigest()
    manifest["files"]["old-page.html"] = [digest]
    (out / MANIFEST).write_text(json.dumps(manifest), "utf-8")

    assert 0 == main(["build", "--specs", str(BUNDLED), "--out", str(out)])
    assert "" == capsys.readouterr().err
    kept = _tree(out)
    assert b"ref: refs/heads/gh-pages\n" == kept[".git/HEAD"]
    assert b"" == kept[".nojekyll"]
    assert b"roofline.example\n" == kept["CNAME"]
    assert b"keep" == kept["notes.txt"]
    assert b"<p>" == kept["blog/post.html"]
    assert b"mine" == kept["devices/my-notes.txt"]
    assert not gone.exists()
    recorded = read_manifest(out)
    assert "index.html" in recorded and "notes.txt" not in recorded
    assert "old-page.html" not in recorded and "CNAME" not in recorded
    assert sorted(recorded) == sorted(n for n in kept if n in recorded)
    assert [] == [p.name for p in tmp_path.iterdir() if ".building-" in p.name]


def test_folder_with_user_files_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--out web` on a folder of notes, or on a site of a build that kept no manifest
    (a `sitemap.xml` is no proof), is refused and nothing changes."""
    web = _site(tmp_path / "web", {"notes.txt": "keep", "blog/post.md": "x", "sitemap.xml": ""})
    before = _tree(web)
    line = _refused(capsys, ["build", "--specs", str(BUNDLED), "--out", str(web)])
    assert f"no {MANIFEST}" in line
    assert before == _tree(web)
    assert ["web"] == sorted(p.name for p in tmp_path.iterdir())


def test_working_folder_and_specs_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--out ..` from inside a project, a folder holding the specs, a folder inside the
    specs, the home folder and the root are refused; the project is untouched."""
    project = _site(tmp_path / "project", {"sitemap.xml": "", "notes.txt": "keep"})
    inner = project / "docs"
    inner.mkdir()
    monkeypatch.chdir(inner)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    before = _tree(tmp_path)
    assert "contains the working folder" in _refused(capsys, ["build", "--out", ".."])
    assert "contains the working folder" in _refused(capsys, ["build", "--out", "."])
    specs = tmp_path / "elsewhere" / "specs"
    specs.mkdir(parents=True)
    for args, fragment in [
        (["--out", str(tmp_path / "elsewhere")], "contains the specs folder"),
        (["--out", str(specs / "site")], "inside the specs folder"),
        (["--out", str(tmp_path / "home")], "is the home folder"),
        (["--out", "/"], "filesystem root"),
    ]:
        line = _refused(capsys, ["build", "--specs", str(specs), *args])
        assert fragment in line, line
    assert before == _tree(tmp_path)


def test_output_under_a_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--out README.md/site` where README.md is a file: one line, exit 2."""
    (tmp_path / "README.md").write_text("# read me\n", "utf-8")
    line = _refused(
        capsys, ["build", "--specs", str(BUNDLED), "--out", str(tmp_path / "README.md" / "site")]
    )
    assert "README.md is not a folder" in line
    assert "internal error" not in line
    assert "# read me\n" == (tmp_path / "README.md").read_text("utf-8")


# --------------------------------------------------------------------------- install


def _staged(root: Path, files: dict[str, str]) -> Path:
    """A freshly built site of `files`, as a build leaves it before `install`."""
    staging = root / ".web.building-1-x"
    shutil.rmtree(staging, ignore_errors=True)
    return _site(staging, files)


def test_install_refuses_to_overwrite_a_file_no_build_recorded(tmp_path: Path) -> None:
    """A user's own `index.html`, or a site file edited since the build, is never
    replaced: `install` refuses before it moves anything."""
    out = tmp_path / "web"
    install(_staged(tmp_path, {"index.html": "v1", "a.html": "v1"}), out)
    (out / "a.html").write_text("edited by hand", "utf-8")
    before = _tree(out)
    with pytest.raises(UsageError, match=r"a\.html there is not from a previous rooflinec build"):
        install(_staged(tmp_path, {"index.html": "v2", "a.html": "v2"}), out)
    assert before == _tree(out)


def test_install_does_not_write_or_delete_through_links(tmp_path: Path) -> None:
    """A site folder replaced by a link to elsewhere is neither written through nor
    emptied through."""
    out = tmp_path / "web"
    install(_staged(tmp_path, {"devices/a.html": "v1", "index.html": "v1"}), out)
    elsewhere = _site(tmp_path / "elsewhere", {"a.html": "v1", "precious.txt": "keep"})
    for path in (out / "devices").iterdir():
        path.unlink()
    (out / "devices").rmdir()
    (out / "devices").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(UsageError, match=r"devices/a\.html"):
        install(_staged(tmp_path, {"devices/a.html": "v2", "index.html": "v2"}), out)
    install(_staged(tmp_path, {"index.html": "v3"}), out)  # devices/a.html is gone
    assert {"a.html": b"v1", "precious.txt": b"keep"} == _tree(elsewhere)


@pytest.mark.parametrize(
    "manifest",
    [
        "not json",
        '{"rooflinec-manifest": 1, "files": {"../outside.txt": []}}',
        '{"rooflinec-manifest": 1, "files": {".git/config": []}}',
        '{"rooflinec-manifest": 1, "files": {"/etc/passwd": []}}',
        '{"rooflinec-manifest": 2, "files": {}}',
    ],
)
def test_a_manifest_rooflinec_did_not_write_is_refused(tmp_path: Path, manifest: str) -> None:
    """A manifest naming paths outside the folder, dot files, or of an unknown format is
    no licence to delete: the build is refused before it starts."""
    out = _site(tmp_path / "web", {MANIFEST: manifest, ".git/config": "x"})
    with pytest.raises(UsageError, match=f"its {MANIFEST} is not one rooflinec writes"):
        check_target(out, BUNDLED)


# --------------------------------------------------------------------------- leftovers


def test_leftovers_of_killed_builds_are_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Build folders and temporary folders of a process that no longer runs, or older
    than a day, go; those of a running build and other folders stay."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    dead, alive = _dead_pid(), os.getpid()
    left = {
        tmp_path / f".site.building-{dead}-abc": True,
        tmp_path / ".site.building-k2j3": False,  # no process id, recent: kept
        tmp_path / ".site.building-old": True,  # no process id, two days old
        tmp_path / f".site.building-{alive}-run": False,
        tmp_path / f".blog.building-{dead}-abc": False,  # another output folder's
        temp / f"rooflinec-build-{dead}-x": True,
        temp / f"rooflinec-serve-{dead}-x": True,
        temp / f"rooflinec-build-{alive}-x": False,
        temp / f"other-{dead}-x": False,
    }
    for folder in left:
        _site(folder, {"index.html": "half written"})
    two_days = time.time() - 2 * output.STALE_SECONDS
    os.utime(tmp_path / ".site.building-old", (two_days, two_days))
    removed = clean_stale(tmp_path / "site")
    assert sorted(str(p) for p, stale in left.items() if stale) == sorted(map(str, removed))
    assert sorted(str(p) for p, stale in left.items() if not stale) == sorted(
        str(p) for p in left if p.exists()
    )


def test_a_build_cleans_a_fake_leftover(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The next build into the same folder removes a SIGKILLed build's folder."""
    leftover = _site(tmp_path / f".site.building-{_dead_pid()}-zz", {"index.html": "half"})
    (tmp_path / "notes.txt").write_text("keep", "utf-8")
    _refused(capsys, ["build", "--specs", str(BUNDLED), "--out", str(tmp_path / "notes.txt")])
    assert leftover.exists()  # a refused build touches nothing
    assert 0 == main(["build", "--specs", str(BUNDLED), "--out", str(tmp_path / "site")])
    assert ["notes.txt", "site"] == sorted(p.name for p in tmp_path.iterdir())
