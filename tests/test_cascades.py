"""A spec file that fails takes nothing down with it, in every command that loads specs.

The `cascade-*` cases of the bad corpus (tests/cases/bad/) each break one file that
others depend on (precisions.yaml, a device, a kernel) and state the only errors `check`
may print. Here the same folders go through `compile`, `explain` and `export`: each must
print the same errors, exit 1, never an internal error, and write nothing.
"""

from __future__ import annotations

import io
from contextlib import redirect_stderr
from pathlib import Path

import pytest

from rooflinec.cli.main import main
from tests.test_example_specs import BAD, assert_bad_output, build_folder, parse_case

CASCADES = [p for p in BAD if p.name.startswith("cascade-")]


def _commands(specs: Path, out: Path) -> dict[str, list[str]]:
    where = ["--specs", str(specs)]
    return {
        "compile": ["compile", *where, "--format", "json", "--out", str(out)],
        "explain": ["explain", "gemm-large", "--device", "nvidia-h100-sxm", *where],
        "export": ["export", *where],
    }


def test_there_are_cascade_cases() -> None:
    """The corpus holds the precisions, device and kernel cascades this file runs."""
    names = {p.name for p in CASCADES}
    assert {
        "cascade-precisions-unknown-key-widths.yaml",
        "cascade-precisions-typo-in-id.yaml",
        "cascade-broken-kernel-model-example.yaml",
        "cascade-broken-device-model-measured.yaml",
    } <= names


@pytest.mark.parametrize("path", CASCADES, ids=lambda p: p.name)
@pytest.mark.parametrize("command", ["compile", "explain", "export"])
def test_cascade_case_fails_the_same_way_in_every_command(
    path: Path, command: str, tmp_path: Path
) -> None:
    """Exit 1 with exactly the case's expected errors (no crash, no cascade), and the
    output file of `compile --out` is not created."""
    case = parse_case(path)
    specs, _ = build_folder(case, tmp_path)
    target = tmp_path / "out.json"
    err = io.StringIO()
    with redirect_stderr(err):
        code = main(_commands(specs, target)[command], out=io.StringIO())
    assert code == 1, err.getvalue()
    assert_bad_output(case, err.getvalue())
    assert not target.exists()


def test_site_build_of_a_broken_precisions_file_reports_it(tmp_path: Path) -> None:
    """`build` on a catalog whose precisions.yaml fails: its schema error only, exit 1,
    and no site folder."""
    case = parse_case(path_named("cascade-precisions-unknown-key-widths.yaml"))
    specs, _ = build_folder(case, tmp_path)
    site = tmp_path / "site"
    err = io.StringIO()
    with redirect_stderr(err):
        code = main(["build", "--specs", str(specs), "--out", str(site)], out=io.StringIO())
    assert code == 1, err.getvalue()
    assert_bad_output(case, err.getvalue())
    assert not site.exists()


def path_named(name: str) -> Path:
    return next(p for p in CASCADES if p.name == name)
