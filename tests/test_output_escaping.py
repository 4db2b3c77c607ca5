"""Every line the CLI prints is one line: a spec file whose name holds a newline and a
GitHub workflow command cannot start a line of its own (and forge an annotation)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from rooflinec.cli.main import main
from rooflinec.errors import Diagnostic, Location, one_line
from tests.specfactory import copy_bundled

FORGED = "x\n::error file=ok.yaml,line=1::forged\r.yaml"
SHOWN = "x\\n::error file=ok.yaml,line=1::forged\\r.yaml"


@pytest.fixture
def specs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The bundled catalog plus a broken device spec under the forged name."""
    monkeypatch.chdir(tmp_path)
    specs = copy_bundled(tmp_path)
    (specs / "devices" / FORGED).write_text("id: [\n", "utf-8")
    return specs


@pytest.mark.parametrize(
    "argv",
    [
        ["compile"],
        ["compile", "--format", "csv"],
        ["export"],
        ["explain", "gemm-large", "--device", "nvidia-h100-sxm"],
        ["build", "--out", "site"],
        ["check"],
        ["check", "--format", "github"],
    ],
    ids=" ".join,
)
def test_a_file_name_with_a_newline_stays_on_its_line(
    specs: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    """The name is printed with `\\n` and `\\r` escaped; no line starts with `::` but the
    reporter's own annotation of the broken file."""
    out = io.StringIO()
    assert 1 == main([*argv, "--specs", "specs"], out=out)
    lines = [*out.getvalue().splitlines(), *capsys.readouterr().err.splitlines()]
    named = [line for line in lines if "forged" in line]
    assert 1 == len(named), lines
    if "github" in argv:
        assert named[0].startswith("::error file=specs/devices/x%0A%3A%3Aerror file=")
    else:
        assert named[0].startswith(f"specs/devices/{SHOWN}:2:1: error: YAML syntax")
    assert [] == [line for line in lines if line.startswith("::") and line != named[0]]
    assert not (specs.parent / "site").exists()


def test_locations_and_diagnostics_print_as_one_line() -> None:
    """`Location` and `Diagnostic` escape control characters, separators and bidi overrides
    in the file name, the message and the field path."""
    location = Location("a\nb.yaml", 3, 4)
    diagnostic = Diagnostic(location, "bad\u2028value\x1b[31m", "$.x\ny")
    assert "a\\nb.yaml:3:4" == str(location)
    assert "a\\nb.yaml:3:4: error: bad\\u2028value\\x1b[31m [$.x\\ny]" == str(diagnostic)
    assert "a\\u202eb" == one_line("a\u202eb")


def test_usage_errors_print_as_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """A usage error quoting a value with a newline: one line on stderr."""
    assert 2 == main(["compile", "--specs", "no\n::error::such"])
    assert ["rooflinec: error: specs folder not found: no\\n::error::such"] == (
        capsys.readouterr().err.splitlines()
    )
