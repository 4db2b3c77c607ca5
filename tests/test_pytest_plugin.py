"""The pytest plugin: reference examples in specs are collected and run as test items."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.specfactory import copy_bundled


def pytest_in(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "specs", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_examples_are_items_with_spec_ids(tmp_path: Path) -> None:
    """The bundled example is collected as specs/methods/roofline.yaml::h100-worked-example."""
    copy_bundled(tmp_path)
    (tmp_path / "pytest.ini").write_text("[pytest]\n", "utf-8")
    proc = pytest_in(tmp_path, "--collect-only")
    assert "specs/methods/roofline.yaml::h100-worked-example" in proc.stdout, (
        proc.stdout + proc.stderr
    )
    proc = pytest_in(tmp_path)
    assert 0 == proc.returncode, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout


def test_failing_example_names_file_and_line(tmp_path: Path) -> None:
    """A wrong expected value fails the item and points at the spec's file and line."""
    specs = copy_bundled(tmp_path)
    (tmp_path / "pytest.ini").write_text("[pytest]\n", "utf-8")
    method = specs / "methods" / "roofline.yaml"
    text = method.read_text("utf-8")
    method.write_text(text.replace("value: 295.373 FLOP/B", "value: 296.1 FLOP/B"), "utf-8")
    line = next(
        i for i, ln in enumerate(method.read_text("utf-8").splitlines(), 1) if "296.1 FLOP/B" in ln
    )
    proc = pytest_in(tmp_path)
    assert 1 == proc.returncode, proc.stdout + proc.stderr
    assert f"roofline.yaml:{line}:" in proc.stdout
    assert "ridge at dram expected 296.1 FLOP/B" in proc.stdout
