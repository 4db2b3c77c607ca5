"""`pip install rooflinec` checks and compiles; the site and the symbolic solver are extras.

Without an extra's modules (made unimportable by a `None` in `sys.modules`, which is what
`import` and `importlib.util.find_spec` both honour), a command that needs them stops with
exit 2 and one line naming the extra.
"""

from __future__ import annotations

import io
import subprocess
import sys
import tomllib

import pytest

import rooflinec.engine.solve_case
from rooflinec.cli.main import main
from tests.specfactory import REPO

SITE_MODULES = ("sympy", "jinja2", "mkdocs", "material", "vl_convert", "nh3", "mike", "altair")


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stderr
    sys.stderr = err
    try:
        code = main(argv, out)
    finally:
        sys.stderr = saved
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("command", ["build", "serve", "publish 1.0"])
def test_site_commands_without_the_site_extra(
    command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """build, serve and publish without mkdocs: exit 2, one line, nothing built."""
    monkeypatch.setitem(sys.modules, "mkdocs", None)
    monkeypatch.setitem(sys.modules, "nh3", None)
    code, out, err = run(command.split())
    name = command.split()[0]
    assert 2 == code
    assert "" == out
    assert [
        f"rooflinec: error: rooflinec {name} needs mkdocs, nh3: install rooflinec[site]"
        " (pip install 'rooflinec[site]')"
    ] == err.splitlines()


def test_symbolic_explain_without_sympy(monkeypatch: pytest.MonkeyPatch) -> None:
    """`explain --symbolic` without sympy names the symbolic extra."""
    monkeypatch.setitem(sys.modules, "sympy", None)
    code, _, err = run(["explain", "gemm-large", "--device", "nvidia-h100-sxm", "--symbolic"])
    assert 2 == code
    assert [
        "rooflinec: error: rooflinec explain --symbolic needs sympy: install "
        "rooflinec[symbolic] (pip install 'rooflinec[symbolic]')"
    ] == err.splitlines()


def test_optional_module_missing_midway_names_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """A command that reaches sympy only on some inputs (solve, degree 2) still ends in one
    line naming the extra, not an internal error."""

    def needs_sympy(*args: object, **kwargs: object) -> None:
        raise ModuleNotFoundError("No module named 'sympy'", name="sympy")

    monkeypatch.setattr(rooflinec.engine.solve_case, "solve_case", needs_sympy)
    code, _, err = run(["solve", "gemm-large", "--device", "google-tpu-v5e", "--vary", "M"])
    assert 2 == code
    assert [
        "rooflinec: error: rooflinec solve needs sympy: install rooflinec[symbolic]"
        " (pip install 'rooflinec[symbolic]')"
    ] == err.splitlines()


def test_other_missing_module_is_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A module no extra brings is a bug in rooflinec: exit 3, as any other."""

    def broken(*args: object, **kwargs: object) -> None:
        raise ModuleNotFoundError("No module named 'nowhere'", name="nowhere")

    monkeypatch.setattr(rooflinec.engine.solve_case, "solve_case", broken)
    code, _, err = run(["solve", "gemm-large", "--device", "google-tpu-v5e", "--vary", "M"])
    assert 3 == code
    assert err.startswith("rooflinec: internal error: ModuleNotFoundError")


def test_check_and_compile_need_no_extra() -> None:
    """With every extra's modules unimportable, check --strict and compile run, and import
    none of them."""
    script = (
        "import io, sys\n"
        f"for m in {SITE_MODULES!r}: sys.modules[m] = None\n"
        "from rooflinec.cli.main import main\n"
        "codes = [main(a, io.StringIO()) for a in (['check', '--strict'],"
        " ['compile', '--format', 'json'], ['compile', '--format', 'csv'], ['export'])]\n"
        f"loaded = sorted(m for m in {SITE_MODULES!r} if sys.modules.get(m) is not None)\n"
        "print(codes, loaded)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert "[0, 0, 0, 0] []" == proc.stdout.strip(), proc.stderr


def test_core_dependencies_are_what_checking_needs() -> None:
    """`pip install rooflinec` brings the loader, the schemas and their compiled check,
    numpy and the columnar writers' pyarrow (which `check` never loads), and no site."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    names = sorted(d.split(">")[0].split(";")[0].strip() for d in project["dependencies"])
    expected = [
        "jsonschema",
        "jsonschema-rs",
        "numpy",
        "pyarrow",
        "referencing",
        "ruamel.yaml",
        "ruamel.yaml.clib",
    ]
    assert expected == names
    extras = project["optional-dependencies"]
    assert ["sympy>=1.12"] == extras["symbolic"]
    assert "rooflinec[symbolic]" in extras["site"]
    assert "rooflinec[site]" in extras["test"]
    site = {d.split(">")[0] for d in extras["site"]}
    assert {"mkdocs", "mkdocs-material", "vl-convert-python", "mike", "nh3", "jinja2"} <= site
