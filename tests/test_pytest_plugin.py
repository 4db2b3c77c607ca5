"""The pytest plugin: reference examples in specs are collected and run as test items."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rooflinec.assemble import catalog_or_raise
from tests.specfactory import copy_bundled


def pytest_in(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "specs", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_examples_are_items_with_spec_ids(tmp_path: Path) -> None:
    """The bundled examples are collected as specs/methods/roofline.yaml::h100-worked-example
    and so on."""
    specs = copy_bundled(tmp_path)
    (tmp_path / "pytest.ini").write_text("[pytest]\n", "utf-8")
    examples = len(catalog_or_raise(specs).examples)
    proc = pytest_in(tmp_path, "--collect-only")
    assert "specs/methods/roofline.yaml::h100-worked-example" in proc.stdout, (
        proc.stdout + proc.stderr
    )
    proc = pytest_in(tmp_path)
    assert 0 == proc.returncode, proc.stdout + proc.stderr
    assert examples >= 7  # the worked example, block-scaled weights, MLA, four about a model
    assert f"{examples} passed" in proc.stdout


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


def test_yaml_error_is_a_one_line_collection_error(tmp_path: Path) -> None:
    """A spec that is not valid YAML is one collection error: the diagnostic's
    FILE:LINE:COL line, named as the node id names the file, and no loader traceback."""
    specs = copy_bundled(tmp_path)
    (tmp_path / "pytest.ini").write_text("[pytest]\n", "utf-8")
    method = specs / "methods" / "roofline.yaml"
    lines = method.read_text("utf-8").splitlines(keepends=True)
    line = next(i for i, ln in enumerate(lines, 1) if ln.startswith("title: "))
    lines[line - 1] = lines[line - 1].replace("title: ", "title: [", 1)
    method.write_text("".join(lines), "utf-8")
    proc = pytest_in(tmp_path)
    assert 2 == proc.returncode, proc.stdout + proc.stderr
    errors = proc.stdout.split("= ERRORS =")[1].split("= short test summary info =")[0]
    body = [ln for ln in errors.splitlines()[1:] if not ln.startswith(("_", "="))]
    assert [
        f"specs/methods/roofline.yaml:{line + 1}:8: error: YAML syntax: did not find"
        " expected ',' or ']'"
    ] == body
    assert "Traceback" not in proc.stdout and "loader.py" not in proc.stdout
    assert "ERROR specs/methods/roofline.yaml\n" in proc.stdout


def test_last_failed_reruns_only_the_failures(tmp_path: Path) -> None:
    """`pytest --lf` after a failing run reruns only the failed example, not the one that
    passed: the cache provider is on."""
    specs = copy_bundled(tmp_path)
    (tmp_path / "pytest.ini").write_text("[pytest]\n", "utf-8")
    method = specs / "methods" / "roofline.yaml"
    text = method.read_text("utf-8")
    # a second example, a copy of the first with its own id, so one passes and one fails
    start = text.index("  - id: h100-worked-example")
    # the example ends where the next item of `examples` or the next field begins
    end = min(text.index("\n  - id: ", start + 1), text.index("\nsources:", start)) + 1
    broken = (
        text[start:end]
        .replace("h100-worked-example", "h100-broken-copy")
        .replace("value: 295.373 FLOP/B", "value: 296.1 FLOP/B")
    )
    assert "296.1 FLOP/B" in broken
    method.write_text(text[:end] + broken + text[end:], "utf-8")
    examples = len(catalog_or_raise(specs).examples)  # the copy among them
    first = pytest_in(tmp_path)
    assert 1 == first.returncode, first.stdout + first.stderr
    assert f"1 failed, {examples - 1} passed" in first.stdout
    again = pytest_in(tmp_path, "--lf")
    assert 1 == again.returncode, again.stdout + again.stderr
    assert "FAILED specs/methods/roofline.yaml::h100-broken-copy" in again.stdout
    assert "1 failed in" in again.stdout and "passed" not in again.stdout
    assert (tmp_path / ".pytest_cache").is_dir()


def test_the_project_keeps_the_cache_provider_and_ignores_its_folder() -> None:
    """The project's pytest settings leave `--lf` working, and git ignores the cache."""
    import tomllib

    from tests.specfactory import REPO

    ini = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["tool"]["pytest"]
    assert "no:cacheprovider" not in str(ini["ini_options"].get("addopts", ""))
    assert ".pytest_cache/" in (REPO / ".gitignore").read_text("utf-8").splitlines()
