"""Which files of a specs folder are read: links that leave it are refused, spec files
are found whatever the case of `.yaml`, and anything else in a spec folder is named."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from rooflinec.assemble import build_catalog, discover
from rooflinec.cli.main import main
from tests.specfactory import copy_bundled

LINK_ERROR = (
    "1:1: error: a link to {} outside the specs folder: not read (copy the file into the catalog)"
)
SECRET = "gho_SECRET_0123456789"


@pytest.fixture
def specs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the bundled catalog, with the working folder at its parent, and a
    credentials file beside it (outside the catalog)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "credentials.yaml").write_text(f"id: {SECRET}\ntoken: {SECRET}\n", "utf-8")
    return copy_bundled(tmp_path)


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    out = io.StringIO()
    code = main([*args, "--specs", "specs"], out=out)
    return code, [*out.getvalue().splitlines(), *capsys.readouterr().err.splitlines()]


def test_a_link_to_a_file_outside_is_refused_unread(
    specs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One error at the link, the target's values never quoted; compile fails the same way."""
    (specs / "devices" / "x.yaml").symlink_to("../../credentials.yaml")
    code, lines = _check(capsys, "check")
    assert 1 == code
    assert [f"specs/devices/x.yaml:{LINK_ERROR.format('a file')}"] == [
        line for line in lines if ": error: " in line
    ]
    assert not any(SECRET in line for line in lines)
    code, lines = _check(capsys, "compile")
    assert (1, [f"specs/devices/x.yaml:{LINK_ERROR.format('a file')}"]) == (code, lines)


def test_an_absolute_link_and_a_linked_folder_are_refused(
    specs: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """An absolute link, and a whole `kernels/` folder linked elsewhere: one error each."""
    (specs / "devices" / "x.yml").symlink_to(tmp_path / "credentials.yaml")
    outside = tmp_path / "elsewhere"
    shutil.move(specs / "kernels", outside)
    (specs / "kernels").symlink_to(outside)
    code, lines = _check(capsys, "check")
    errors = [line for line in lines if ": error: " in line]
    assert 1 == code
    assert f"specs/devices/x.yml:{LINK_ERROR.format('a file')}" in errors
    assert f"specs/kernels:{LINK_ERROR.format('a folder')}" in errors


def test_a_linked_precisions_file_outside_is_refused(specs: Path, tmp_path: Path) -> None:
    """`precisions.yaml` follows the same rule."""
    shutil.move(specs / "precisions.yaml", tmp_path / "precisions.yaml")
    (specs / "precisions.yaml").symlink_to(tmp_path / "precisions.yaml")
    files = discover(specs)
    assert None is files.precisions
    assert ["specs/precisions.yaml:1:1"] == [str(d.location) for d in files.problems]


def test_links_inside_the_catalog_are_read(specs: Path) -> None:
    """A device file linked to another file of the catalog loads like any spec."""
    shared = specs / "shared"
    shared.mkdir()
    shutil.move(specs / "devices" / "nvidia-l40s.yaml", shared / "l40s.yaml")
    (specs / "devices" / "nvidia-l40s.yaml").symlink_to("../shared/l40s.yaml")
    catalog, diagnostics = build_catalog(specs)
    assert [] == [str(d) for d in diagnostics if d.severity == "error"]
    assert catalog is not None and "nvidia-l40s" in catalog.devices


@pytest.mark.parametrize("suffix", [".YAML", ".Yml", ".yml"])
def test_spec_suffixes_in_any_case_are_read(specs: Path, suffix: str) -> None:
    """`nvidia-l40s.YAML` is a spec like `nvidia-l40s.yaml`, not a file skipped in silence."""
    path = specs / "devices" / "nvidia-l40s.yaml"
    path.rename(path.with_suffix(suffix))
    catalog, diagnostics = build_catalog(specs)
    assert [] == [str(d) for d in diagnostics if d.severity == "error"]
    assert catalog is not None and "nvidia-l40s" in catalog.devices


def test_other_entries_of_a_spec_folder_are_named(
    specs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A `.txt`, a `.yaml.bak` and a subfolder: a warning each; dot files stay quiet."""
    devices = specs / "devices"
    (devices / "notes.txt").write_text("notes\n", "utf-8")
    shutil.copy(devices / "nvidia-l40s.yaml", devices / "old.yaml.bak")
    (devices / "archive").mkdir()
    (devices / ".DS_Store").write_bytes(b"\0")
    code, lines = _check(capsys, "check")
    assert 0 == code
    assert [
        "specs/devices/archive: warning: skipped: not a spec file "
        "(spec files are devices/*.yaml or *.yml)",
        "specs/devices/notes.txt:1:1: warning: skipped: not a spec file "
        "(spec files are devices/*.yaml or *.yml)",
        "specs/devices/old.yaml.bak:1:1: warning: skipped: not a spec file "
        "(spec files are devices/*.yaml or *.yml)",
    ] == [line for line in lines if "skipped" in line]


def test_a_link_to_nothing_is_named(specs: Path) -> None:
    """A dangling link inside the catalog is skipped with a warning, not in silence."""
    (specs / "devices" / "gone.yaml").symlink_to("missing.yaml")
    files = discover(specs)
    assert [
        "specs/devices/gone.yaml:1:1: warning: skipped: not a file (a folder, or a link to nothing)"
    ] == [str(d) for d in files.problems]
