"""Golden corpus: good and bad spec files, discovered and parametrized automatically.

Each file in `tests/cases/good/` and `tests/cases/bad/` is overlaid onto a temporary
copy of `tests/cases/base/` and checked with `rooflinec check`.

A case file is YAML with header comments (they stay in the written file, so the line
numbers of a case file are those of the file `check` reads):

    # place: devices/x.yaml          where the lines that follow go (may replace a base file)
    # expect: 12: unknown field      a bad case: `FILE:12:COL: error: ...unknown field...`
    # expect: kernels/gemm.yaml:21: unknown device     (an error in another file)
    # generate: big                  repeat the section's last line until the file is > 2 MB

A second `# place:` line starts another file; its lines keep their case-file numbers
(the new file begins with blank lines). In a section, `{{repeat N "TEXT"}}` expands to
TEXT N times and `{{canary}}` to a path that must never be created.

A bad case must exit 1, print every expected error and no other error, never a
traceback, and answer within 10 s. A good case must exit 0.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from rooflinec.cli.main import main

CASES = Path(__file__).parent / "cases"
BASE = CASES / "base"
GOOD = sorted((CASES / "good").glob("*.yaml"))
BAD = sorted((CASES / "bad").glob("*.yaml"))
TIME_LIMIT = 10.0
BIG_SIZE = 2_100_000
PWNED = Path("/tmp/pwned")
MAX_LINE = 400  # characters of an error's message and path, after FILE:LINE:COL

# Bad cases also run as a subprocess, as a user or CI runs the checker.
SUBPROCESS_SAMPLE = (
    "yaml-billion-laughs",
    "yaml-python-object-apply",
    "yaml-big-file",
    "yaml-deep-nesting",
    "formula-import-os-system",
    "formula-power-tower",
    "model-formula-code",
    "formula-parentheses-5000",
    "formula-100kb",
    "shape-missing-symbol",
    "unit-bandwidth-in-tflops",
    "url-javascript",
)
# `python -m rooflinec.cli.main` does not call main() (the module has no __main__ block),
# so the subprocess runs the same entry point as the console script through -c.
ENTRY = "import sys; from rooflinec.cli.main import main; sys.exit(main())"

ERROR_LINE = re.compile(r"^\S+:\d+:\d+: error: .+")
PLACE = re.compile(r"^# place: (\S+)\s*$")
EXPECT = re.compile(
    r"^# expect: (?:(?P<file>[^\s:]+\.ya?ml):)?(?P<line>\d+): (?P<fragment>.+?)\s*$"
)
GENERATE = re.compile(r"^# generate: (\S+)\s*$")
REPEAT = re.compile(r'\{\{repeat (\d+) "(.*?)"\}\}')
PLACES = re.compile(r"^(precisions\.yaml|(devices|kernels|methods|models)/[^/]+\.ya?ml)$")


@dataclass(frozen=True)
class Expect:
    """One error a bad case must produce."""

    file: str
    line: int
    fragment: str


@dataclass
class Section:
    """The lines of a case file that go to one place in the spec folder."""

    place: str
    first_line: int
    lines: list[str] = field(default_factory=list)
    generate: str | None = None


@dataclass
class Case:
    """A parsed case file."""

    path: Path
    sections: list[Section]
    expects: list[Expect]

    @property
    def places(self) -> set[str]:
        return {s.place for s in self.sections} | {e.file for e in self.expects}


def parse_case(path: Path) -> Case:
    """Read the header lines of a case file; raise ValueError on a malformed one."""
    # Bytes decoded, not read as text: a case may hold lone CRs, which must reach `check`.
    lines = path.read_bytes().decode("utf-8").split("\n")
    sections: list[Section] = []
    expects: list[tuple[str | None, int, str]] = []
    for number, text in enumerate(lines, start=1):
        place = PLACE.match(text)
        if place:
            if not PLACES.match(place.group(1)):
                raise ValueError(f"{path.name}:{number}: bad place {place.group(1)!r}")
            sections.append(Section(place.group(1), number))
        elif not sections:
            raise ValueError(f"{path.name}:{number}: a case file starts with '# place:'")
        if text.startswith("# expect:"):
            match = EXPECT.match(text)
            if match is None:
                raise ValueError(f"{path.name}:{number}: malformed expect line")
            expects.append((match["file"], int(match["line"]), match["fragment"]))
        generate = GENERATE.match(text)
        if generate:
            if generate.group(1) != "big":
                raise ValueError(f"{path.name}:{number}: unknown generator")
            sections[-1].generate = "big"
        sections[-1].lines.append(text)
    primary = sections[0].place
    return Case(path, sections, [Expect(f or primary, line, frag) for f, line, frag in expects])


def expand(text: str, canary: Path) -> str:
    """Expand `{{repeat N "TEXT"}}` and `{{canary}}` in one line."""
    text = REPEAT.sub(lambda m: m.group(2) * int(m.group(1)), text)
    return text.replace("{{canary}}", str(canary))


def build_folder(case: Case, tmp_path: Path) -> tuple[Path, Path]:
    """Copy the base specs to tmp_path/specs and write the case's sections over it."""
    specs = tmp_path / "specs"
    shutil.copytree(BASE, specs)
    canary = tmp_path / "canary"
    for section in case.sections:
        body = [expand(line, canary) for line in section.lines]
        text = "\n" * (section.first_line - 1) + "\n".join(body)
        if section.generate == "big":
            filler = next(line for line in reversed(body) if line.strip()) + "\n"
            text = text.rstrip("\n") + "\n"
            text += filler * (BIG_SIZE // len(filler.encode("utf-8")) + 1)
        target = specs / section.place
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, "utf-8")
    return specs, canary


def run_in_process(specs: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, float]:
    """`rooflinec check` through main(): exit code, stdout + stderr, seconds taken."""
    buffer = io.StringIO()
    start = time.monotonic()
    code = main(["check", "--specs", str(specs), "--format", "text"], out=buffer)
    elapsed = time.monotonic() - start
    captured = capsys.readouterr()
    return code, buffer.getvalue() + captured.out + captured.err, elapsed


def run_subprocess(specs: Path) -> tuple[int, str]:
    """`rooflinec check` in a fresh interpreter, with a 10 s timeout."""
    done = subprocess.run(
        [sys.executable, "-c", ENTRY, "check", "--specs", str(specs), "--format", "text"],
        capture_output=True,
        text=True,
        timeout=TIME_LIMIT,
        cwd=Path(__file__).parents[1],
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if "error:" in line]


def in_file(line: str, place: str) -> bool:
    """Whether an error line's location is in the spec file `place` of the folder."""
    location = line.split(": error: ", 1)[0]
    file = re.sub(r":\d+:\d+$", "", location)
    return file == place or file.endswith("/" + place)


def assert_bad_output(case: Case, output: str) -> None:
    """Every expected error is there, every error line is well formed, nothing else."""
    assert "Traceback" not in output, output
    assert "internal error" not in output, output
    errors = error_lines(output)
    for line in errors:
        assert ERROR_LINE.match(line), f"malformed error line: {line!r}"
        message = line.split(": error: ", 1)[1]
        assert len(message) < MAX_LINE, f"error message over {MAX_LINE} characters: {line!r}"
    for expect in case.expects:
        wanted = re.compile(
            rf"^(?:\S*/)?{re.escape(expect.file)}:{expect.line}:\d+: error: .*"
            + re.escape(expect.fragment)
        )
        assert any(wanted.match(line) for line in errors), (
            f"expected {expect.file}:{expect.line}: ...{expect.fragment}... in:\n{output}"
        )
    stray = [line for line in errors if not any(in_file(line, p) for p in case.places)]
    assert not stray, f"errors in files the case did not touch (a cascade?):\n{output}"
    assert len(errors) == len(case.expects), (
        f"{len(errors)} errors for {len(case.expects)} expect lines:\n{output}"
    )


@pytest.fixture
def pwned_absent() -> bool:
    """Whether /tmp/pwned was absent before the test (only then can its creation be seen)."""
    return not PWNED.exists()


def test_corpus_is_large_enough() -> None:
    """The bad corpus has at least 60 cases and the good one at least 12."""
    assert len(BAD) >= 60
    assert len(GOOD) >= 12


@pytest.mark.parametrize("path", GOOD + BAD, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_case_headers_are_well_formed(path: Path) -> None:
    """Every case file has a valid place, and bad cases have expect lines, good ones none."""
    case = parse_case(path)
    if path.parent.name == "bad":
        assert case.expects, "a bad case states the errors it must produce"
    else:
        assert not case.expects, "a good case expects no error"


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.name)
def test_good_case_passes(
    path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], pwned_absent: bool
) -> None:
    """A good spec overlaid on the base passes `check` with exit 0."""
    specs, canary = build_folder(parse_case(path), tmp_path)
    code, output, elapsed = run_in_process(specs, capsys)
    assert code == 0, output
    assert not error_lines(output), output
    assert "Traceback" not in output
    assert elapsed < TIME_LIMIT
    assert not canary.exists()


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.name)
def test_bad_case_fails_precisely(
    path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], pwned_absent: bool
) -> None:
    """A bad spec fails `check` with exit 1 and exactly the expected errors, fast."""
    case = parse_case(path)
    specs, canary = build_folder(case, tmp_path)
    code, output, elapsed = run_in_process(specs, capsys)
    assert code == 1, output
    assert_bad_output(case, output)
    assert elapsed < TIME_LIMIT, f"took {elapsed:.1f} s"
    assert not canary.exists(), "a spec ran code"
    if pwned_absent:
        assert not PWNED.exists(), "a spec ran code"


@pytest.mark.parametrize("name", SUBPROCESS_SAMPLE)
def test_bad_case_in_a_subprocess(name: str, tmp_path: Path, pwned_absent: bool) -> None:
    """A sample of bad specs fails the same way in a fresh interpreter, within 10 s."""
    case = parse_case(CASES / "bad" / f"{name}.yaml")
    specs, canary = build_folder(case, tmp_path)
    code, output = run_subprocess(specs)
    assert code == 1, output
    assert_bad_output(case, output)
    assert not canary.exists(), "a spec ran code"
    if pwned_absent:
        assert not PWNED.exists(), "a spec ran code"


def test_good_cases_pass_in_a_subprocess(tmp_path: Path) -> None:
    """One good case passes in a fresh interpreter too (exit 0, no traceback)."""
    specs, _ = build_folder(parse_case(GOOD[0]), tmp_path)
    code, output = run_subprocess(specs)
    assert code == 0, output
    assert "Traceback" not in output


def _check_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], place: str, data: bytes
) -> tuple[int, str]:
    specs = tmp_path / "specs"
    shutil.copytree(BASE, specs)
    (specs / place).write_bytes(data)
    code, output, elapsed = run_in_process(specs, capsys)
    assert elapsed < TIME_LIMIT
    assert "Traceback" not in output
    for line in error_lines(output):
        assert ERROR_LINE.match(line), line
    return code, output


def test_non_utf8_file_is_refused_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Latin-1 device file is refused at the line of the first bad byte."""
    data = b"id: x\nname: Caf\xe9 device\n"
    code, output = _check_bytes(tmp_path, capsys, "devices/latin1.yaml", data)
    assert code == 1
    assert re.search(r"devices/latin1\.yaml:2:10: error: file is not UTF-8", output), output


def test_nul_byte_is_refused_at_its_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A raw NUL byte in a spec is refused at its line and column."""
    data = b"id: x\nname: a\x00b\n"
    code, output = _check_bytes(tmp_path, capsys, "devices/nul.yaml", data)
    assert code == 1
    assert re.search(r"devices/nul\.yaml:2:8: error: character U\+0000", output), output


def test_utf16_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A UTF-16 file (with its byte order mark) is not taken for UTF-8."""
    data = "id: x\n".encode("utf-16")
    code, output = _check_bytes(tmp_path, capsys, "devices/utf16.yaml", data)
    assert code == 1
    assert re.search(r"devices/utf16\.yaml:1:1: error: file is not UTF-8", output), output


def test_crlf_line_endings_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A spec saved with Windows line endings is read like any other."""
    text = (BASE / "devices" / "nvidia-h100-sxm.yaml").read_text("utf-8")
    data = text.replace("\n", "\r\n").encode("utf-8")
    code, output = _check_bytes(tmp_path, capsys, "devices/nvidia-h100-sxm.yaml", data)
    assert code == 0, output


def test_formula_code_never_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pwned_absent: bool
) -> None:
    """`__import__('os').system(...)` in every formula field creates no file."""
    canary = tmp_path / "canary"
    payload = f"__import__('os').system('touch {canary}')"
    text = (BASE / "kernels" / "gemm.yaml").read_text("utf-8")
    text = text.replace("flops: 2*M*N*K", f'flops: "{payload}"')
    text = text.replace("dram: w*(M*K + K*N + M*N)", f'dram: "{payload}"')
    code, output = _check_bytes(tmp_path, capsys, "kernels/gemm.yaml", text.encode())
    assert code == 1
    assert output.count("'__import__' is not allowed") == 2, output
    assert not canary.exists()
    if pwned_absent:
        assert not PWNED.exists()
