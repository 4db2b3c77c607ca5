"""`rooflinec import --write` never loses what the user wrote: sources are kept or the
import refused, all files change or none (under errors, Ctrl-C and a killed run's
journal), line ends are kept, and linked folders in the specs folder are no crash."""

from __future__ import annotations

import datetime
import io
import json
import os
from fractions import Fraction
from pathlib import Path

import pytest

import rooflinec.importing.write as write
from rooflinec.cli.main import main
from rooflinec.pipeline import compiled_or_raise
from tests.measuredspecs import DEVICE, DEVICE_NO_FLOOR, KERNEL
from tests.specfactory import write_specs

# A second kernel, so that one import edits two files.
KERNEL2 = (
    KERNEL.replace("id: axpy\n", "id: axpy2\n")
    .replace("name: AXPY", "name: AXPY 2")
    .replace("axpy-", "axpy2-")
)
TWO = (
    "case,device,precision,time,launches,bytes.dram\n"
    "axpy-tiny,gpu-a,bf16,30 µs,10,61440\n"
    "axpy2-tiny,gpu-a,bf16,30 µs,10,61440\n"
)


@pytest.fixture(autouse=True)
def today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("rooflinec.lints.current_date", lambda: datetime.date(2026, 12, 1))


@pytest.fixture
def specs(tmp_path: Path) -> Path:
    return write_specs(
        tmp_path, {"gpu-a": DEVICE, "gpu-b": DEVICE_NO_FLOOR}, {"axpy": KERNEL, "axpy2": KERNEL2}
    )


def run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(args), out=out), out.getvalue()


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (links not followed), by path: what must not change."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def export(tmp_path: Path, text: str, name: str = "run.csv") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")
    return path


# -- sources ----------------------------------------------------------------------------


def test_hand_written_source_of_the_same_id_is_refused(
    specs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A source `csv-run` the user wrote (URL, tool version, command) is never replaced:
    one line at the source id's line and column says how to go on; nothing changes."""
    kernel = specs / "kernels" / "axpy.yaml"
    kernel.write_text(kernel.read_text("utf-8").replace("  run1:\n", "  csv-run:\n", 1)
                      .replace("source: run1", "source: csv-run"), "utf-8")  # fmt: skip
    before = snapshot(specs)
    code, text = run("import", "csv", str(export(tmp_path, TWO)), "--specs", str(specs), "--write")
    assert (1, "") == (code, text)
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"{kernel}:9:3: error: source 'csv-run' is already there")
    assert "--source NEW-ID" in line
    assert before == snapshot(specs)


def test_second_day_of_a_file_of_the_same_name_is_refused(
    specs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """day2/report.csv after day1/report.csv, the same day: day 1's source is kept and
    cited by day 1's entries; `--source` records day 2 as its own source."""
    day1 = export(tmp_path, TWO, "day1/report.csv")
    assert 0 == run("import", "csv", str(day1), "--specs", str(specs), "--write")[0]
    day2 = export(tmp_path, TWO.replace("30 µs", "40 µs"), "day2/report.csv")
    before = snapshot(specs)
    assert 1 == run("import", "csv", str(day2), "--specs", str(specs), "--write")[0]
    assert "source 'csv-report' is already there" in capsys.readouterr().err
    assert before == snapshot(specs)
    code, _ = run(
        "import", "csv", str(day2), "--specs", str(specs), "--write", "--source", "day2-run"
    )
    assert 0 == code
    case = compiled_or_raise(specs).catalog.cases["axpy-tiny"]
    assert [("csv-report", Fraction(3, 10**5)), ("day2-run", Fraction(4, 10**5))] == [
        (m.source, m.time) for m in case.measured
    ]


@pytest.mark.parametrize("bad", ["Run1", "-x", "a_b", "x" * 65, ""])
def test_source_must_be_an_id(
    specs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: str
) -> None:
    """--source is validated as the schemas' ids are: exit 2, one usage line."""
    code, _ = run("import", "csv", str(export(tmp_path, TWO)), "--specs", str(specs),
                  "--source", bad)  # fmt: skip
    assert 2 == code
    assert "rooflinec: error: argument --source" in capsys.readouterr().err


def test_source_option_names_the_printed_source(specs: Path, tmp_path: Path) -> None:
    """Without --write, the printed entries cite the --source id."""
    code, text = run("import", "csv", str(export(tmp_path, TWO)), "--specs", str(specs),
                     "--source", "bench-7")  # fmt: skip
    assert 0 == code
    assert "  bench-7:\n" in text
    assert "source: bench-7" in text


# -- all or nothing ---------------------------------------------------------------------


def failing_second_replace(
    monkeypatch: pytest.MonkeyPatch, error: BaseException
) -> list[tuple[str, str]]:
    """os.replace raising `error` on the second kernel file renamed into place."""
    calls: list[tuple[str, str]] = []
    real = os.replace

    def replace(src: object, dst: object) -> None:
        calls.append((str(src), str(dst)))
        renames = [c for c in calls if c[1].endswith(".yaml") and c[0].endswith("-new")]
        if str(dst).endswith(".yaml") and str(src).endswith("-new") and len(renames) == 2:
            raise error
        real(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", replace)
    return calls


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (OSError(28, "No space left on device"), 1),
        (KeyboardInterrupt(), 130),
    ],
)
def test_second_file_failing_leaves_both_as_they_were(
    specs: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    error: BaseException,
    expected: int,
) -> None:
    """The first kernel file was already renamed in when the second fails: it is put back,
    no temporary or backup is left, and the error is one line (or `interrupted`)."""
    before = snapshot(specs)
    calls = failing_second_replace(monkeypatch, error)
    code, _ = run("import", "csv", str(export(tmp_path, TWO)), "--specs", str(specs), "--write")
    assert expected == code
    assert 2 <= len([c for c in calls if c[1].endswith(".yaml")])
    assert before == snapshot(specs)
    err = capsys.readouterr().err.splitlines()
    assert 1 == len(err)
    assert "Traceback" not in err[0] and "internal error" not in err[0]


def plant_journal(specs: Path, renamed: bool) -> tuple[Path, Path, str, str]:
    """The state a run killed mid-commit leaves: journal in phase commit, the first file
    renamed (its original kept beside), the second still staged (or renamed too)."""
    first, second = specs / "kernels" / "axpy.yaml", specs / "kernels" / "axpy2.yaml"
    old1, old2 = first.read_text("utf-8"), second.read_text("utf-8")
    (specs / "kernels" / ".axpy.yaml.rooflinec-old").write_text(old1, "utf-8")
    first.write_text(old1 + "# new\n", "utf-8")
    (specs / "kernels" / ".axpy2.yaml.rooflinec-old").write_text(old2, "utf-8")
    if renamed:
        second.write_text(old2 + "# new\n", "utf-8")
    else:
        (specs / "kernels" / ".axpy2.yaml.rooflinec-new").write_text(old2 + "# new\n", "utf-8")
    body = {"phase": "commit", "files": ["kernels/axpy.yaml", "kernels/axpy2.yaml"]}
    (specs / write.JOURNAL).write_text(json.dumps(body), "utf-8")
    return first, second, old1, old2


def test_journal_of_a_killed_run_is_rolled_back(
    specs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Killed between the two renames: the next --write puts the first file back, says
    so in one line, and then imports; no journal, temporary or backup is left."""
    first, second, _, old2 = plant_journal(specs, renamed=False)
    ok = export(tmp_path, "case,device,precision,time\naxpy-big,gpu-b,bf16,3 ms\n")
    code, _ = run("import", "csv", str(ok), "--specs", str(specs), "--write")
    assert 0 == code
    err = capsys.readouterr().err.splitlines()
    assert [f"{specs.resolve() / write.JOURNAL}: note: rolled back the import a killed run"
            " left half written (1 file(s) restored)"] == err  # fmt: skip
    assert "# new" not in first.read_text("utf-8")
    assert old2 == second.read_text("utf-8")
    assert [] == [p.name for p in specs.rglob(".*")]


def test_journal_of_a_finished_commit_is_finished(
    specs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Killed after the last rename: the new texts stay, the backups and journal go."""
    first, second, _, _ = plant_journal(specs, renamed=True)
    ok = export(tmp_path, "case,device,precision,time\naxpy-big,gpu-b,bf16,3 ms\n")
    assert 0 == run("import", "csv", str(ok), "--specs", str(specs), "--write")[0]
    assert "note: finished the import a killed run had written" in capsys.readouterr().err
    assert first.read_text("utf-8").count("# new") == 1
    assert second.read_text("utf-8").endswith("# new\n")
    assert [] == [p.name for p in specs.rglob(".*")]


@pytest.mark.parametrize(
    "body",
    ["{", '{"phase": "commit", "files": ["../../etc/passwd"]}', '{"phase": "x", "files": []}'],
)
def test_unreadable_journal_is_one_line(
    specs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str
) -> None:
    """A journal that is not ours (or names a file outside the folder) touches nothing."""
    (specs / write.JOURNAL).write_text(body, "utf-8")
    before = snapshot(specs)
    code, _ = run("import", "csv", str(export(tmp_path, TWO)), "--specs", str(specs), "--write")
    assert 1 == code
    (line,) = capsys.readouterr().err.splitlines()
    assert f"{write.JOURNAL}:1:1: error: an import journal rooflinec cannot read" in line
    assert before == snapshot(specs)


def test_commit_rolls_back_on_any_base_exception(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`commit` itself: a SystemExit (what a SIGTERM handler may raise) on the second
    rename restores the first file and removes every file it made."""
    (tmp_path / "a.yaml").write_text("a: 1\n", "utf-8")
    (tmp_path / "b.yaml").write_text("b: 1\n", "utf-8")
    failing_second_replace(monkeypatch, SystemExit(143))
    with pytest.raises(SystemExit):
        write.commit(tmp_path, {tmp_path / "a.yaml": "a: 2\n", tmp_path / "b.yaml": "b: 2\n"})
    assert {"a.yaml": b"a: 1\n", "b.yaml": b"b: 1\n"} == snapshot(tmp_path)


# -- line ends --------------------------------------------------------------------------


@pytest.mark.parametrize("final", ["\r\n", ""])
def test_crlf_file_stays_crlf(specs: Path, tmp_path: Path, final: str) -> None:
    """A CRLF kernel file is written back CRLF, every line; no final newline stays none."""
    kernel = specs / "kernels" / "axpy.yaml"
    lf = kernel.read_text("utf-8")
    kernel.write_bytes((lf.rstrip("\n").replace("\n", "\r\n") + final).encode("utf-8"))
    code, _ = run("import", "csv", str(export(tmp_path, TWO)), "--specs", str(specs), "--write")
    assert 0 == code
    after = kernel.read_bytes().decode("utf-8")
    assert "csv-run" in after
    assert "\n" not in after.replace("\r\n", "")
    assert after.endswith("\r\n") == (final == "\r\n")


# -- folder links -----------------------------------------------------------------------


def test_linked_folders_are_not_copied_whole(
    specs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A link loop and a link to a big folder beside the specs' files: the check before
    writing copies only the spec files, so the import works and the files change."""
    (specs / "loop").symlink_to(specs, target_is_directory=True)
    big = specs / "data"
    big.mkdir()
    (big / "big.bin").write_bytes(b"\0" * 1000)
    (specs / "data-link").symlink_to(big, target_is_directory=True)
    code, text = run("import", "csv", str(export(tmp_path, TWO)), "--specs", str(specs), "--write")
    assert 0 == code, capsys.readouterr().err
    assert 2 == len(text.splitlines())


def test_kernels_folder_as_a_link_is_written_through(specs: Path, tmp_path: Path) -> None:
    """`kernels` a link to a folder inside the specs: the real files are edited and the
    link stays a link."""
    real = specs / "real-kernels"
    (specs / "kernels").rename(real)
    (specs / "kernels").symlink_to(real, target_is_directory=True)
    code, _ = run("import", "csv", str(export(tmp_path, TWO)), "--specs", str(specs), "--write")
    assert 0 == code
    assert (specs / "kernels").is_symlink()
    assert "csv-run" in (real / "axpy.yaml").read_text("utf-8")


def test_link_to_a_kernel_file_stays_a_link(specs: Path, tmp_path: Path) -> None:
    """A kernel file that is a link inside the folder: its target is edited, not replaced
    by a plain file."""
    target = specs / "shared-axpy.yaml"
    (specs / "kernels" / "axpy.yaml").rename(target)
    (specs / "kernels" / "axpy.yaml").symlink_to(target)
    code, _ = run("import", "csv", str(export(tmp_path, TWO)), "--specs", str(specs), "--write")
    assert 0 == code
    assert (specs / "kernels" / "axpy.yaml").is_symlink()
    assert "csv-run" in target.read_text("utf-8")
