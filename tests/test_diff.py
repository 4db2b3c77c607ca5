"""`rooflinec diff`: the figures a change moves, against a git ref."""

from __future__ import annotations

import datetime
import io
import json
import re
import subprocess
from pathlib import Path

import pytest

from rooflinec.cli.main import main
from tests.specfactory import copy_bundled


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository holding a copy of the bundled catalog, committed on main."""
    copy_bundled(tmp_path)
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "catalog")
    return tmp_path


def run(repo: Path, *args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(["diff", *args, "--specs", str(repo / "specs")], out=out)
    return code, out.getvalue()


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text("utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), "utf-8")


def test_no_change_says_so(repo: Path) -> None:
    """Against HEAD with a clean tree nothing moved."""
    code, text = run(repo, "HEAD")
    assert 0 == code
    assert "No compiled figure differs from HEAD" in text


def test_bandwidth_change_lists_exactly_what_moved(repo: Path) -> None:
    """A new MI300X bandwidth moves its bandwidth, ridges and memory-bound rows, nothing else."""
    device = repo / "specs" / "devices" / "amd-mi300x.yaml"
    edit(device, "bandwidth: 5.3 TB/s", "bandwidth: 6.0 TB/s")
    git(repo, "commit", "-qam", "faster")
    code, text = run(repo, "HEAD~1", "--format", "json")
    assert 0 == code
    doc = json.loads(text)
    groups = {c["group"] for c in doc["changes"]}
    assert all("amd-mi300x" in g for g in groups)
    figures = {(c["group"], c["figure"]): c for c in doc["changes"]}
    bw = figures[("device amd-mi300x", "dram bandwidth")]
    assert (5.3e12, 6.0e12) == (bw["old"], bw["new"])
    assert abs(bw["relative"] - 0.7 / 5.3) < 1e-12
    ridge = figures[("device amd-mi300x", "bf16 ridge (dram)")]
    assert abs(ridge["new"] - 1307.4 / 6.0) < 1e-9
    # a compute-bound row does not move; a memory-bound one does
    assert ("kernel gemm on amd-mi300x", "gemm-large at bf16: attainable") not in figures
    gemv = figures[("kernel gemv on amd-mi300x", "gemv-decode at bf16: attainable")]
    assert abs(gemv["new"] / gemv["old"] - 6.0 / 5.3) < 1e-12
    # largest relative changes first
    magnitudes = [abs(c["relative"]) for c in doc["changes"] if c["relative"] is not None]
    assert magnitudes == sorted(magnitudes, reverse=True)


def test_markdown_summary_and_tables(repo: Path) -> None:
    """Markdown has a one-line summary and old → new tables grouped by device and kernel."""
    edit(
        repo / "specs" / "devices" / "amd-mi300x.yaml", "bandwidth: 5.3 TB/s", "bandwidth: 6.0 TB/s"
    )
    code, text = run(repo, "HEAD")
    assert 0 == code
    assert "figures changed in" in text
    assert "### device amd-mi300x" in text
    assert "| dram bandwidth | 5.3 TB/s | 6 TB/s | +13.2% |" in text


def test_require_bump(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--require-bump fails until the changed spec gets a new versions entry."""
    device = repo / "specs" / "devices" / "amd-mi300x.yaml"
    edit(device, "bandwidth: 5.3 TB/s", "bandwidth: 6.0 TB/s")
    code, _ = run(repo, "HEAD", "--require-bump")
    err = capsys.readouterr().err
    assert 1 == code
    assert "amd-mi300x.yaml:" in err and "add a versions entry" in err
    text = device.read_text("utf-8")
    latest = max(int(v) for v in re.findall(r"version: (\d+)", text))
    # The new entry is dated the day after the newest one: versions run forward in time.
    newest = max(map(datetime.date.fromisoformat, re.findall(r"date: (\d{4}-\d{2}-\d{2})", text)))
    day = newest + datetime.timedelta(days=1)
    text = text.rstrip("\n") + (
        f"\n  - {{version: {latest + 1}, date: {day}, change: Bandwidth corrected.}}\n"
    )
    device.write_text(text, "utf-8")
    code, _ = run(repo, "HEAD", "--require-bump")
    assert 0 == code


def test_added_and_removed_specs(repo: Path) -> None:
    """A removed device and an added kernel with its case are listed as such."""
    specs = repo / "specs"
    (specs / "devices" / "nvidia-rtx-4090.yaml").unlink()
    kernel = (specs / "kernels" / "elementwise.yaml").read_text("utf-8")
    kernel = kernel.replace("id: elementwise-binary", "id: elementwise-copy")
    kernel = kernel.replace("id: elementwise-add", "id: elementwise-copy-1g")
    (specs / "kernels" / "copy.yaml").write_text(kernel, "utf-8")
    code, text = run(repo, "HEAD", "--format", "json")
    doc = json.loads(text)
    assert 0 == code
    assert ["nvidia-rtx-4090"] == doc["removed"]["device"]
    assert (["elementwise-copy"], ["elementwise-copy-1g"]) == (
        doc["added"]["kernel"],
        doc["added"]["case"],
    )


def test_unknown_ref_is_a_usage_error(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A ref that does not exist: exit 2 and a sentence naming it."""
    code, _ = run(repo, "no-such-branch")
    assert 2 == code
    assert "git ref 'no-such-branch' does not exist" in capsys.readouterr().err


def test_default_base_is_merge_base_with_main(repo: Path) -> None:
    """On a branch, the default base is where it left main."""
    git(repo, "checkout", "-qb", "feature")
    edit(
        repo / "specs" / "devices" / "amd-mi300x.yaml", "bandwidth: 5.3 TB/s", "bandwidth: 6.0 TB/s"
    )
    git(repo, "commit", "-qam", "faster")
    code, text = run(repo)
    assert 0 == code
    assert "device amd-mi300x" in text


@pytest.mark.parametrize("target", ["../../secret.txt", "../../../../secret.txt", "/abs"])
def test_a_ref_with_a_link_leaving_the_specs_is_refused(
    repo: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    """A spec at the base ref linked outside the specs folder (within the repository,
    above it, absolute): one error naming the link, exit 1, never an internal error, and
    the linked file never read."""
    (repo / "secret.txt").write_text("token: gho_SECRET\n", "utf-8")
    link = repo / "specs" / "devices" / "x.yaml"
    link.symlink_to(repo / "secret.txt" if target == "/abs" else target)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a link")
    link.unlink()
    head = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    code, text = run(repo, "HEAD")
    err = capsys.readouterr().err
    assert (1, "") == (code, text)
    assert [
        f"rooflinec: error: specs/devices/x.yaml at {head} is a link to a file outside the "
        "specs folder: not read (compare with another ref)"
    ] == err.splitlines()
    assert "SECRET" not in err


def test_a_ref_with_a_link_inside_the_specs_is_compared(repo: Path) -> None:
    """A link from one spec folder to another file of the catalog is fine at a ref."""
    devices = repo / "specs" / "devices"
    (repo / "specs" / "shared").mkdir()
    (devices / "nvidia-l40s.yaml").rename(repo / "specs" / "shared" / "l40s.yaml")
    (devices / "nvidia-l40s.yaml").symlink_to("../shared/l40s.yaml")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a link inside")
    code, text = run(repo, "HEAD", "--format", "json")
    assert 0 == code
    assert [] == json.loads(text)["changes"]
