"""Lints turned off one by one, with a reason: `[tool.rooflinec.disable]` and `--disable`."""

from __future__ import annotations

import ast
import io
import re
import sys
from pathlib import Path

import pytest

import rooflinec.lints
from rooflinec.cli.main import main
from rooflinec.lints.disable import LINT_CODES
from tests.specfactory import copy_bundled

QUOTE_LINE = re.compile(r'^    quote: "FP64 Tensor .*\n', re.MULTILINE)


def check(*argv: str) -> tuple[int, list[str], list[str]]:
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stderr
    sys.stderr = err
    try:
        code = main(["check", *argv], out)
    finally:
        sys.stderr = saved
    return code, out.getvalue().splitlines(), err.getvalue().splitlines()


@pytest.fixture
def unquoted(tmp_path: Path) -> Path:
    """A copy of the catalog whose H100 FP64 tensor peak lost its quote (lint-quote)."""
    specs = copy_bundled(tmp_path)
    device = specs / "devices" / "nvidia-h100-sxm.yaml"
    text, count = QUOTE_LINE.subn("", device.read_text("utf-8"), count=1)
    assert 1 == count
    device.write_text(text, "utf-8")
    return specs


def test_the_slip_fails_a_strict_check(unquoted: Path) -> None:
    """Without a disable, the missing quote fails `check --strict`."""
    code, out, _ = check("--specs", str(unquoted), "--strict")
    assert 1 == code
    assert 1 == sum("error: lint-quote:" in line for line in out)


def test_disable_on_the_command_line(unquoted: Path) -> None:
    """`--disable 'lint-quote=REASON'` drops that lint's findings, strict or not."""
    code, out, err = check(
        "--specs", str(unquoted), "--strict", "--disable", "lint-quote=quotes come later"
    )
    assert (0, []) == (code, err)
    assert not any("lint-quote:" in line for line in out)
    assert out[-1].startswith("rooflinec check: ok:")


def test_disable_in_pyproject_beside_the_specs(unquoted: Path) -> None:
    """`[tool.rooflinec.disable]` in the pyproject.toml beside the specs folder."""
    (unquoted.parent / "pyproject.toml").write_text(
        '[project]\nname = "catalog"\n\n'
        '[tool.rooflinec.disable]\nlint-quote = "quotes are added in a later pass"\n',
        "utf-8",
    )
    code, out, _ = check("--specs", str(unquoted), "--strict")
    assert 0 == code
    assert not any("lint-quote:" in line for line in out)


def test_disabling_one_lint_keeps_the_others(unquoted: Path) -> None:
    """Turning off an unrelated lint leaves the missing quote reported."""
    code, out, _ = check("--specs", str(unquoted), "--strict", "--disable", "lint-stale=frozen")
    assert 1 == code
    assert 1 == sum("error: lint-quote:" in line for line in out)


@pytest.mark.parametrize("value", ["lint-quote", "lint-quote=", "lint-quote=   "])
def test_command_line_disable_needs_a_reason(unquoted: Path, value: str) -> None:
    """No reason, or a blank one: exit 2 and one line saying how to give it."""
    code, out, err = check("--specs", str(unquoted), "--disable", value)
    assert (2, []) == (code, out)
    assert [
        "rooflinec: error: --disable: lint-quote is disabled without a reason; "
        "write --disable 'lint-quote=REASON'"
    ] == err


def test_unknown_lint_is_a_usage_error(unquoted: Path) -> None:
    """A code that is no lint is refused, with the list of lints."""
    code, _, err = check("--specs", str(unquoted), "--disable", "lint-quotes=typo")
    assert 2 == code
    assert 1 == len(err)
    assert err[0].startswith("rooflinec: error: --disable: 'lint-quotes' is not a lint (lints: ")


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            '[tool.rooflinec.disable]\nlint-quote = ""\n',
            'lint-quote is disabled without a reason; write lint-quote = "REASON" in '
            "[tool.rooflinec.disable]",
        ),
        (
            "[tool.rooflinec.disable]\nlint-quote = true\n",
            'lint-quote is disabled without a reason; write lint-quote = "REASON" in '
            "[tool.rooflinec.disable]",
        ),
        (
            '[tool.rooflinec]\ndisable = ["lint-quote"]\n',
            '[tool.rooflinec.disable] must be a table of LINT = "REASON"',
        ),
        (
            '[tool.rooflinec]\nignore = ["lint-quote"]\n',
            "[tool.rooflinec] has unknown keys: ignore",
        ),
        ("[tool.rooflinec\n", "cannot read it as TOML: "),
    ],
)
def test_bad_pyproject_table_is_a_usage_error(unquoted: Path, table: str, message: str) -> None:
    """A disable without a reason, or a table of the wrong shape: exit 2, one line naming
    the file."""
    pyproject = unquoted.parent / "pyproject.toml"
    pyproject.write_text(table, "utf-8")
    code, out, err = check("--specs", str(unquoted))
    assert (2, []) == (code, out)
    assert 1 == len(err)
    assert err[0].startswith(f"rooflinec: error: {pyproject}: {message}")


def test_lint_codes_are_the_documented_and_emitted_ones() -> None:
    """LINT_CODES, the table in `rooflinec.lints`' docstring and the codes the lints'
    source passes are the same twenty."""
    documented = re.findall(r"^\| (lint-[a-z-]+) \|", rooflinec.lints.__doc__ or "", re.M)
    folder = Path(rooflinec.lints.__file__).parent
    emitted = {
        node.value
        for path in folder.glob("*.py")
        if path.name != "disable.py"
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and re.fullmatch(r"lint-[a-z-]+", node.value)
    }
    assert 20 == len(LINT_CODES)
    assert list(LINT_CODES) == documented
    assert set(LINT_CODES) == emitted
