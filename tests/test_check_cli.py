"""Tests of `rooflinec check`: formats, exit codes, ordering and one-line messages."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import pytest

from rooflinec.cli.main import main
from rooflinec.cli.reporters import REPORTERS, one_line
from rooflinec.errors import Diagnostic, Location, Severity

BASE = Path(__file__).parent / "cases" / "base"
ERROR_LINE = re.compile(r"^\S+:\d+:\d+: error: .+")
GITHUB_LINE = re.compile(r"^::(error|warning) file=[^,:]+,line=\d+,col=\d+,title=[^,:]+::[^\r\n]+$")

BAD_DEVICE = """\
id: test-x
name: Test X
vendor: Test
compute:
  bf16: {peak: 1000 TB/s, source: s}
memory:
  dram: {label: HBM3, bandwidth: 3 TB/s, source: nope}
sources:
  s: {title: Sheet, publisher: Test, url: "https://example.com/x", read: 2026-01-15}
versions:
  - {version: 1, date: 2026-01-15, change: First.}
"""
BAD_KERNEL = """\
id: test-k
name: Test kernel
description: A test kernel.
colour: red
symbols: {M: rows}
flops: 2*M
bytes: {dram: w*M}
cases:
  - {id: test-k-1, name: One, precision: bf16, shape: {M: 4}}
versions:
  - {version: 1, date: 2026-01-15, change: First.}
"""


@pytest.fixture
def specs(tmp_path: Path) -> Path:
    """A clean copy of the base spec folder."""
    folder = tmp_path / "specs"
    shutil.copytree(BASE, folder)
    return folder


@pytest.fixture
def bad_specs(specs: Path) -> Path:
    """The base folder with errors in a device, a kernel and precisions.yaml."""
    (specs / "devices" / "x.yaml").write_text(BAD_DEVICE, "utf-8")
    (specs / "kernels" / "k.yaml").write_text(BAD_KERNEL, "utf-8")
    text = (specs / "precisions.yaml").read_text("utf-8")
    (specs / "precisions.yaml").write_text(text.replace("bytes: 8}", "bytes: 8, x: 1}"), "utf-8")
    return specs


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run `rooflinec check ARGS` in process: (exit code, stdout, stderr)."""
    buffer = io.StringIO()
    code = main(["check", *args], out=buffer)
    captured = capsys.readouterr()
    return code, buffer.getvalue() + captured.out, captured.err


# --- exit codes -----------------------------------------------------------------------------


def test_clean_folder_exits_0(specs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The base folder passes: exit 0 and an ok summary."""
    code, out, err = check(capsys, "--specs", str(specs))
    assert code == 0, out + err
    assert "rooflinec check: ok:" in out.splitlines()[-1]


def test_spec_errors_exit_1(bad_specs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Spec errors: exit 1 and a failed summary that counts them."""
    code, out, _ = check(capsys, "--specs", str(bad_specs))
    assert code == 1
    assert re.search(r"rooflinec check: failed: 5 files, 4 errors", out.splitlines()[-1])


def test_unknown_option_exits_2(specs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown option is a usage error: exit 2 and a message on stderr."""
    code, _, err = check(capsys, "--specs", str(specs), "--bogus")
    assert code == 2
    assert "unrecognized arguments: --bogus" in err


def test_unknown_format_exits_2(specs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A format that does not exist is a usage error."""
    code, _, err = check(capsys, "--specs", str(specs), "--format", "xml")
    assert code == 2
    assert "invalid choice" in err


def test_missing_folder_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A --specs folder that does not exist is a usage error, not a spec error."""
    code, out, err = check(capsys, "--specs", str(tmp_path / "absent"))
    assert code == 2
    assert "specs folder not found" in err
    assert "Traceback" not in out + err


def test_strict_turns_warnings_into_errors(specs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--strict fails a folder that has only lint warnings."""
    code, out, _ = check(capsys, "--specs", str(specs))
    assert code == 0
    if ": warning: " not in out:
        pytest.skip("the base folder has no lint warning to promote")
    code, out, _ = check(capsys, "--specs", str(specs), "--strict")
    assert code == 1
    assert ": warning: " not in out


def test_internal_error_is_one_line_and_exits_3(
    specs: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug in rooflinec itself says so in one line (no traceback) and exits 3."""

    def broken(folder: Path) -> None:
        raise KeyError("boom")

    monkeypatch.setattr("rooflinec.assemble.build_catalog", broken)
    code, out, err = check(capsys, "--specs", str(specs))
    assert code == 3
    assert "Traceback" not in out + err
    assert err.startswith("rooflinec: internal error: KeyError")
    assert len(err.strip().splitlines()) == 1


def test_default_folder_is_specs_in_the_working_directory(
    specs: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --specs, ./specs is checked, and paths are shown relative to it."""
    (specs / "kernels" / "k.yaml").write_text(BAD_KERNEL, "utf-8")
    monkeypatch.chdir(specs.parent)
    code, out, _ = check(capsys)
    assert code == 1
    assert out.startswith("specs/kernels/k.yaml:4:1: error: unknown field 'colour'")


# --- formats --------------------------------------------------------------------------------


def test_text_lists_every_error_at_once_sorted(
    bad_specs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """All errors of all files in one run, one line each, sorted by file then line."""
    code, out, _ = check(capsys, "--specs", str(bad_specs), "--format", "text")
    assert code == 1
    errors = [line for line in out.splitlines() if ": error: " in line]
    assert all(ERROR_LINE.match(line) for line in errors), out
    places = [re.match(r"^(.*):(\d+):(\d+): ", line) for line in errors]
    keys = [(m.group(1), int(m.group(2)), int(m.group(3))) for m in places if m]
    assert keys == sorted(keys)
    files = [Path(k[0]).relative_to(bad_specs).as_posix() for k in keys]
    assert files == [
        "devices/x.yaml",
        "devices/x.yaml",
        "kernels/k.yaml",
        "precisions.yaml",
    ]
    assert "x.yaml:5:21: error: expected a compute rate" in errors[0]
    assert "x.yaml:7:50: error: unknown source 'nope'" in errors[1]
    assert "k.yaml:4:1: error: unknown field 'colour'" in errors[2]
    assert "precisions.yaml:3:33: error: unknown field 'x'" in errors[3]


def test_text_messages_end_with_the_field_path(
    bad_specs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each error names its field as a JSON path at the end of the line."""
    _, out, _ = check(capsys, "--specs", str(bad_specs))
    errors = [line for line in out.splitlines() if ": error: " in line]
    assert errors[0].endswith("[$.compute.bf16.peak]")
    assert errors[1].endswith("[$.memory.dram.source]")


def test_github_format_prints_workflow_annotations(
    bad_specs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """github: `::error file=F,line=L,col=C,title=T::message` for each error."""
    code, out, _ = check(capsys, "--specs", str(bad_specs), "--format", "github")
    assert code == 1
    annotations = [line for line in out.splitlines() if line.startswith("::")]
    assert len(annotations) == 4
    for line in annotations:
        assert GITHUB_LINE.match(line), line
    first = annotations[0]
    assert first.startswith(f"::error file={bad_specs / 'devices' / 'x.yaml'},line=5,col=21,")
    assert "title=rooflinec units::expected a compute rate" in first


def test_json_format_parses(bad_specs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """json: one document with every diagnostic and its file, line, column and path."""
    code, out, _ = check(capsys, "--specs", str(bad_specs), "--format", "json")
    assert code == 1
    document = json.loads(out)
    assert document["ok"] is False
    assert document["files"] == 5
    errors = [d for d in document["diagnostics"] if d["severity"] == "error"]
    assert len(errors) == 4
    assert errors[2] == {
        "file": str(bad_specs / "kernels" / "k.yaml"),
        "line": 4,
        "col": 1,
        "severity": "error",
        "code": "schema",
        "message": errors[2]["message"],
        "path": "$.colour",
    }
    assert errors[2]["message"].startswith("unknown field 'colour'")


def test_json_format_on_a_clean_folder(specs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """json on a clean folder: ok is true and there is no error."""
    code, out, _ = check(capsys, "--specs", str(specs), "--format", "json")
    assert code == 0
    document = json.loads(out)
    assert document["ok"] is True
    assert not [d for d in document["diagnostics"] if d["severity"] == "error"]


# --- reporters ------------------------------------------------------------------------------

ODD = Diagnostic(
    Location("specs/a,b:c.yaml", 3, 7), "50% of 'x\ny' and \x1b[31mred\x1b[0m", "$.a", "error"
)


def test_text_reporter_keeps_each_message_on_one_line() -> None:
    """Control characters in a message are shown escaped; one diagnostic, one line."""
    out = io.StringIO()
    REPORTERS["text"]([ODD], 1, out)
    lines = out.getvalue().splitlines()
    assert lines[0] == "specs/a,b:c.yaml:3:7: error: 50% of 'x\\ny' and \\x1b[31mred\\x1b[0m [$.a]"
    assert len(lines) == 2


def test_github_reporter_escapes_properties_and_data() -> None:
    """`,` and `:` in the file and `%` in the message are escaped as GitHub requires."""
    out = io.StringIO()
    REPORTERS["github"]([ODD], 1, out)
    line = out.getvalue().splitlines()[0]
    assert line.startswith("::error file=specs/a%2Cb%3Ac.yaml,line=3,col=7,title=rooflinec spec::")
    assert "50%25 of 'x\\ny'" in line
    assert "\x1b" not in line


def test_json_reporter_keeps_the_text_exact() -> None:
    """json carries the message as it is (JSON escapes it safely)."""
    out = io.StringIO()
    REPORTERS["json"]([ODD], 1, out)
    assert json.loads(out.getvalue())["diagnostics"][0]["message"] == ODD.message


def test_one_line_escapes_bidirectional_overrides() -> None:
    """A right-to-left override cannot reorder the rest of the line."""
    assert one_line("a\u202eb") == "a\\u202eb"
    assert one_line("plain – text é") == "plain – text é"


@pytest.mark.parametrize(
    ("severities", "files", "expected"),
    [
        (["error"], 1, "rooflinec check: failed: 1 file, 1 error, 0 warnings"),
        (["warning"], 2, "rooflinec check: ok: 2 files, 0 errors, 1 warning"),
        (
            ["error", "error", "warning", "warning"],
            3,
            "rooflinec check: failed: 3 files, 2 errors, 2 warnings",
        ),
    ],
)
def test_summary_counts_in_singular_and_plural(
    severities: list[Severity], files: int, expected: str
) -> None:
    """The summary says `1 error`, `1 warning`, `1 file`, and the plural otherwise."""
    diagnostics = [Diagnostic(Location("specs/x.yaml", 1, 1), "m", severity=s) for s in severities]
    for name in ("text", "github"):
        out = io.StringIO()
        REPORTERS[name](diagnostics, files, out)
        assert expected == out.getvalue().splitlines()[-1]
