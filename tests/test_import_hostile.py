"""`rooflinec import` under hostile exports: bad files refused at their line (and column),
never a crash, never a hang, never a spec touched.

Each `tests/cases/imports/KIND/NAME.csv` is an export of KIND (csv, ncu, rocprof), each
`tests/cases/imports/hf-config/NAME.json` a Hugging Face config.json, and each
`tests/cases/imports/serving/NAME.json|csv` a serving benchmark's results (imported into a
copy of the bundled catalog), that must be refused; its `NAME.expect` holds the command's
extra arguments and the errors:

    args: --device gpu-b --match axpy_kernel=axpy-big
    expect: 3:60: gpu__time_duration.sum '0,2' could be a decimal comma
    exit: 1                                         (the default)

An `expect` line is `LINE[:COL]: FRAGMENT`: stderr must hold `FILE:LINE[:COL]: error: `
followed by text containing FRAGMENT. A new case is a new pair of files.
"""

from __future__ import annotations

import csv
import datetime
import io
import re
import shlex
import tracemalloc
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from rooflinec.assemble import catalog_or_raise
from rooflinec.cli.main import main
from rooflinec.importing import Lines, read_rows, resolve
from rooflinec.importing.rows import NumberError, number
from tests.measuredspecs import write_measured
from tests.specfactory import copy_bundled

CASES = Path(__file__).parent / "cases" / "imports"
FIXTURES = Path(__file__).parent / "fixtures" / "imports"
MAX_LINE = 400
# A line of stderr: a location (`FILE:LINE[:COL]:` or `rooflinec:`) and what it is.
LOCATED = re.compile(r"^(?:.+?:\d+(?::\d+)?|rooflinec|.+?): (?:error|note|warning): \S")


@pytest.fixture(autouse=True)
def today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("rooflinec.lints.current_date", lambda: datetime.date(2026, 12, 1))


@pytest.fixture
def specs(tmp_path: Path) -> Path:
    return write_measured(tmp_path)


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the bundled catalog, whose models serving results are imported into."""
    return copy_bundled(tmp_path_factory.mktemp("bundled"))


def run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(args), out=out), out.getvalue()


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def assert_clean_lines(err: str) -> None:
    """Every line of stderr is located, short, and no traceback."""
    assert "Traceback" not in err
    assert "internal error" not in err
    for line in err.splitlines():
        assert LOCATED.match(line), line
        assert len(line) < MAX_LINE + 200, line  # the message under 400, the path aside


@dataclass(frozen=True)
class Case:
    kind: str
    export: Path
    args: tuple[str, ...]
    expects: tuple[tuple[str, str], ...]  # (LINE[:COL], fragment)
    exit: int


def parse_case(export: Path) -> Case:
    args: list[str] = []
    expects = []
    code = 1
    for line in export.with_suffix(".expect").read_text("utf-8").splitlines():
        key, _, value = line.partition(": ")
        if key == "args":
            args += shlex.split(value)
        elif key == "expect":
            where, _, fragment = value.partition(": ")
            expects.append((where, fragment))
        elif key == "exit":
            code = int(value)
        else:  # pragma: no cover - a typo in a case file
            raise ValueError(f"{export}: unknown line {line!r}")
    return Case(export.parent.name, export, tuple(args), tuple(expects), code)


BAD = sorted(
    [*CASES.glob("*/*.csv"), *CASES.glob("hf-config/*.json"), *CASES.glob("serving/*.json")]
)


def test_every_case_has_its_expectations() -> None:
    """A case file without its `.expect` (or the reverse) is a mistake in the corpus."""
    exports = {p.with_suffix("") for p in BAD}
    expects = {p.with_suffix("") for p in CASES.glob("*/*.expect")}
    assert exports == expects
    assert {"csv", "ncu", "rocprof", "hf-config", "serving"} == {p.parent.name for p in exports}


@pytest.mark.parametrize("export", BAD, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_bad_export_is_refused_at_its_line(
    request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str], export: Path
) -> None:
    """Exit 1 (or the case's), every expected error at its line and column, one located
    line per error, nothing written although --write is given."""
    case = parse_case(export)
    specs = request.getfixturevalue("bundled" if case.kind == "serving" else "specs")
    before = snapshot(specs)
    code, out = run("import", case.kind, str(export), "--specs", str(specs), *case.args,
                    "--write")  # fmt: skip
    err = capsys.readouterr().err
    assert (case.exit, "") == (code, out), err
    for where, fragment in case.expects:
        assert f"{export}:{where}: error: " in err, err
        located = [ln for ln in err.splitlines() if ln.startswith(f"{export}:{where}: error: ")]
        assert any(fragment in ln for ln in located), err
    assert_clean_lines(err)
    assert before == snapshot(specs)


# -- numbers ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "commas", "expected"),
    [
        ("0.2", "ask", Fraction(1, 5)),
        ("1,234.5", "ask", Fraction(2469, 2)),
        ("7,200,000,000", "ask", Fraction(7_200_000_000)),
        ("0,2", "decimal", Fraction(1, 5)),
        ("1.234,5", "decimal", Fraction(2469, 2)),
        ("1,234", "thousands", Fraction(1234)),
        ("1,234", "decimal", Fraction(1234, 1000)),
        ("4.0e-05", "ask", Fraction(4, 100_000)),
        ("1e30", "ask", Fraction(10**30)),
        ("  12 ", "ask", Fraction(12)),
        ("", "ask", None),
    ],
)
def test_numbers_as_profilers_print_them(text: str, commas: str, expected: Fraction | None) -> None:
    """Separators read as the export and the options say; exact values."""
    assert expected == number(text, commas)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "commas", "fragment"),
    [
        ("0,2", "ask", "could be a decimal comma"),
        ("1,234", "ask", "could be a decimal comma"),
        ("1.234,5", "ask", "has a decimal comma"),
        ("1.234,5", "thousands", "separator after its decimal point"),
        ("12,34,567", "ask", "misplaced thousands separator"),
        ("1e99999999", "ask", "too large"),
        ("1e400", "ask", "too large"),
        ("1e-400", "ask", "below e-30"),
        ("9" * 9_000_000, "ask", "too large"),
        ("NaN", "ask", "not a finite number"),
        ("-inf", "ask", "not a finite number"),
        ("Infinity", "ask", "not a finite number"),
        ("-1", "ask", "negative"),
        ("٣", "ask", "not a number"),
        ("0x10", "ask", "not a number"),
        ("1.", "ask", "no digits after its decimal point"),
    ],
)
def test_hostile_numbers_are_refused(text: str, commas: str, fragment: str) -> None:
    """Refused with what is wrong, before any exact arithmetic on their digits."""
    with pytest.raises(NumberError) as info:
        number(text, commas)  # type: ignore[arg-type]
    assert fragment in info.value.message


def test_nine_million_digits_refused_at_their_line(
    specs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 9·10^6-digit count (over the csv module's field limit too) is one line, exit 1."""
    bad = tmp_path / "big.csv"
    bad.write_text("case,device,precision,time,flops\naxpy-big,gpu-b,bf16,2 ms," + "9" * 9_000_000)
    code, _ = run("import", "csv", str(bad), "--specs", str(specs))
    err = capsys.readouterr().err
    assert 1 == code
    assert err.startswith(f"{bad}:2")
    assert_clean_lines(err)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"case,device,precision,time\naxpy-big,gpu-\xff,bf16,2 ms\n", ":2:14: error: not UTF-8"),
        (b"case,device,precision,time\n" + b"x" * (2 << 20), ":2: error: the line is longer"),
        (b"\xef\xbb\xbfcase,device,precision,time\r\naxpy-big,gpu-b,bf16,3 ms\r\n", ""),
    ],
)
def test_bytes_are_read_line_by_line(
    specs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes, expected: str
) -> None:
    """Not UTF-8: refused at its line and column; a line with no end: refused, not read
    whole; a BOM and CRLF line ends: read."""
    export = tmp_path / "bytes.csv"
    export.write_bytes(data)
    code, _ = run("import", "csv", str(export), "--specs", str(specs))
    err = capsys.readouterr().err
    assert (1 if expected else 0) == code, err
    if expected:
        assert err.startswith(f"{export}{expected}")
    assert_clean_lines(err)


def test_decimal_comma_option_reads_the_german_export(specs: Path, tmp_path: Path) -> None:
    """Nsight Compute's `"0,2"` msecond is 0.2 ms with --decimal-comma (it was 2 ms)."""
    export = tmp_path / "de.csv"
    export.write_text(
        '"ID","Kernel Name","dram__bytes.sum","gpu__time_duration.sum"\n'
        '"","","Gbyte","msecond"\n'
        '"0","axpy_kernel","7,2","2,0"\n',
        "utf-8",
    )
    code, text = run("import", "ncu", str(export), "--specs", str(specs), "--device", "gpu-b",
                     "--match", "axpy_kernel=axpy-big", "--decimal-comma")  # fmt: skip
    assert 0 == code
    (doc,) = YAML(typ="safe").load_all(text)
    entry = doc["measured"]["axpy-big"][0]
    assert ("2 ms", {"dram": 7_200_000_000}) == (entry["time"], entry["bytes"])


def test_comma_options_exclude_each_other(specs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Both at once is a usage error."""
    code, _ = run("import", "ncu", str(FIXTURES / "ncu-raw.csv"), "--specs", str(specs),
                  "--decimal-comma", "--thousands-comma")  # fmt: skip
    assert 2 == code
    assert "not allowed with argument" in capsys.readouterr().err


def test_reordered_columns_read_the_same(specs: Path, tmp_path: Path) -> None:
    """Columns are found by name: the raw page reversed gives the same entries."""
    rows = list(csv.reader((FIXTURES / "ncu-raw.csv").read_text("utf-8").splitlines()[5:]))
    reordered = tmp_path / "reversed.csv"
    with open(reordered, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, quoting=csv.QUOTE_ALL).writerows(r[::-1] for r in rows)
    args = ("--specs", str(specs), "--device", "gpu-b", "--thousands-comma",
            "--match", "^axpy_kernel=axpy-big", "--match", "tiny_axpy=axpy-tiny")  # fmt: skip
    expected = run("import", "ncu", str(FIXTURES / "ncu-raw.csv"), *args)
    actual = run("import", "ncu", str(reordered), *args)
    assert (0, 0) == (expected[0], actual[0])
    (before,) = YAML(typ="safe").load_all(expected[1])
    (after,) = YAML(typ="safe").load_all(actual[1])
    assert before["measured"]["axpy-big"][0]["time"] == "4 ms"
    for entries_of_case in after["measured"].values():
        for entry in entries_of_case:
            entry["source"] = "ncu-ncu-raw"
    assert before["measured"] == after["measured"]


# -- --match ----------------------------------------------------------------------------


def test_backtracking_match_is_stopped(
    specs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`(a+)+$` on a long kernel name backtracks for ages: the search is stopped, one line
    names the pattern, exit 2, nothing written."""
    export = tmp_path / "slow.csv"
    name = "a" * 64 + "!"
    export.write_text(
        f'"ID","Kernel Name","gpu__time_duration.sum"\n"","","msecond"\n"0","{name}","2"\n',
        "utf-8",
    )
    before = snapshot(specs)
    code, _ = run("import", "ncu", str(export), "--specs", str(specs), "--device", "gpu-b",
                  "--match", "(a+)+$=axpy-big", "--write")  # fmt: skip
    assert 2 == code
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("rooflinec: error: --match '(a+)+$' took over 1 s on kernel")
    assert before == snapshot(specs)


# -- memory -----------------------------------------------------------------------------


def test_long_export_is_summed_in_bounded_memory(specs: Path, tmp_path: Path) -> None:
    """20 000 launches of three kernels: read and summed as they come, the peak of what is
    allocated stays under 8 MB (holding the launches took about 3.5 kB each, 70 MB)."""
    export = tmp_path / "long.csv"
    with open(export, "w", encoding="utf-8") as handle:
        handle.write('"ID","Kernel Name","dram__bytes.sum","lts__t_bytes.sum",')
        handle.write('"gpu__time_duration.sum"\n"","","byte","byte","nsecond"\n')
        for i in range(20_000):
            handle.write(
                f'"{i}","axpy_kernel_{i % 3}","7,200,000,000","6,000,000,000","2,000,000"\n'
            )
    catalog = catalog_or_raise(specs)
    matches = [(re.compile("axpy_kernel"), "axpy-big")]
    tracemalloc.start()
    try:
        with open(export, "rb") as handle:
            found = resolve(
                read_rows("ncu", str(export), Lines(handle, str(export)), "thousands"),
                catalog,
                str(export),
                tool="Nsight Compute",
                device="gpu-b",
                matches=matches,
            )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    (entry,) = found
    assert (20_000, Fraction(40)) == (entry.launches, entry.time)
    assert peak < 8 * 2**20


# -- the hostile property ---------------------------------------------------------------


def _mutations() -> st.SearchStrategy[tuple[str, str, bytes]]:
    """(kind, fixture name, mutated bytes) from a valid export of each kind."""
    sources = [
        ("csv", "plain.csv"),
        ("ncu", "ncu-raw.csv"),
        ("ncu", "ncu-details.csv"),
        ("rocprof", "pmc_perf.csv"),
    ]
    hostile = st.sampled_from(
        ["1e99999999", "nan", "-inf", "-5", "0", "0,2", "1.234,5", "", '"', "\x00", "é" * 50,
         "9" * 500, "1e-400", "0 ms", "2 GB", "=cmd|' /C calc'!A0"]
    )  # fmt: skip

    @st.composite
    def mutate(draw: st.DrawFn) -> tuple[str, str, bytes]:
        kind, name = draw(st.sampled_from(sources))
        data = (FIXTURES / name).read_bytes()
        how = draw(st.sampled_from(["truncate", "duplicate", "drop", "replace", "swap"]))
        lines = data.decode("utf-8").split("\n")
        if how == "truncate":
            return kind, name, data[: draw(st.integers(0, len(data)))]
        at = draw(st.integers(0, len(lines) - 1))
        cells = next(csv.reader([lines[at]]), [])
        if not cells:
            return kind, name, data
        column = draw(st.integers(0, len(cells) - 1))
        out = []
        for line in lines:
            row = next(csv.reader([line]), [])
            if len(row) == len(cells):
                if how == "duplicate":
                    row = [*row[: column + 1], row[column], *row[column + 1 :]]
                elif how == "drop":
                    row = row[:column] + row[column + 1 :]
                elif how == "swap":
                    row[0], row[column] = row[column], row[0]
                elif line == lines[at]:
                    row[column] = draw(hostile)
                buffer = io.StringIO()
                csv.writer(buffer, quoting=csv.QUOTE_ALL, lineterminator="").writerow(row)
                line = buffer.getvalue()
            out.append(line)
        return kind, name, "\n".join(out).encode("utf-8")

    return mutate()


@settings(
    derandomize=True,
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(mutated=_mutations(), write=st.booleans())
def test_mutated_exports_never_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mutated: tuple[str, str, bytes], write: bool
) -> None:
    """Truncated, with a column doubled, dropped or moved, or a cell replaced by hostile
    text: exit 0, 1 or 2, each stderr line located and short, no traceback, and no spec
    changed unless --write was given and the import succeeded."""
    kind, name, data = mutated
    specs = tmp_path / "hostile" / "specs"
    if not specs.exists():
        write_measured(specs.parent)
    export = tmp_path / "hostile" / name
    export.write_bytes(data)
    before = snapshot(specs)
    args = ["import", kind, str(export), "--specs", str(specs), "--device", "gpu-b",
            "--match", "^axpy_kernel=axpy-big", "--match", "tiny_axpy=axpy-tiny"]  # fmt: skip
    capsys.readouterr()
    code, _ = run(*args, *(["--write"] if write else []))
    err = capsys.readouterr().err
    assert code in (0, 1, 2), err
    assert_clean_lines(err)
    if not (write and code == 0):
        assert before == snapshot(specs)
    assert [] == [p.name for p in specs.rglob(".*")]


def test_skipped_kernels_are_counted_past_twenty(
    specs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Kernels no --match finds are named up to twenty, each name cut short; the rest
    are counted on one line."""
    export = tmp_path / "many.csv"
    rows = [f'"{i}","other_{i}_{"x" * 500}","2"' for i in range(25)]
    export.write_text(
        '"ID","Kernel Name","gpu__time_duration.sum"\n"","","msecond"\n'
        + "\n".join([*rows, '"25","axpy_kernel","2"'])
        + "\n",
        "utf-8",
    )
    code, _ = run("import", "ncu", str(export), "--specs", str(specs), "--device", "gpu-b",
                  "--match", "axpy_kernel=axpy-big")  # fmt: skip
    err = capsys.readouterr().err.splitlines()
    assert 0 == code
    assert 21 == len(err)
    assert "rooflinec: note: and 5 more kernel(s) matching no --match" == err[-1]
    assert all(len(line) < 200 for line in err)
