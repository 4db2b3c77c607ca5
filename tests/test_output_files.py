"""`compile --out FILE`, Parquet (one file and device partitions), CSV text across batch
boundaries, Ctrl-C, and the progress line."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from benchmarks.synth import write_catalog
from rooflinec import __version__
from rooflinec.cli.main import main
from rooflinec.outputs import columnar
from rooflinec.outputs.outfile import RECORD
from rooflinec.outputs.results import CSV_COLUMNS, FIELDS
from rooflinec.progress import ProgressLine, progress_line
from tests.specfactory import BUNDLED, REPO
from tests.test_cli_compile import run


def compile_to(out: Path, *args: str, specs: Path = BUNDLED) -> int:
    return main(["compile", "--specs", str(specs), "--out", str(out), *args], out=io.StringIO())


def leftovers(folder: Path) -> list[str]:
    """Temporary files or folders a write left beside its target."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@pytest.fixture(scope="module")
def bundled_json() -> dict[str, object]:
    code, text = run("compile", "--specs", str(BUNDLED), "--format", "json")
    assert 0 == code
    document: dict[str, object] = json.loads(text)
    return document


# --------------------------------------------------------------------------- --out


@pytest.mark.parametrize("format", ["csv", "json", "jsonl", "table"])
def test_out_file_holds_what_stdout_gets(tmp_path: Path, format: str) -> None:
    """`--out FILE` writes the bytes stdout would get, and leaves no temporary file."""
    code, text = run("compile", "--specs", str(BUNDLED), "--format", format, "--case", "conv3x3")
    assert 0 == code
    target = tmp_path / f"results.{format}"
    assert 0 == compile_to(target, "--format", format, "--case", "conv3x3")
    assert text == target.read_text("utf-8")
    assert [] == leftovers(tmp_path)


def test_out_file_replaces_an_older_one(tmp_path: Path) -> None:
    """An existing file is replaced whole."""
    target = tmp_path / "r.csv"
    target.write_text("old\n", "utf-8")
    assert 0 == compile_to(target, "--format", "csv", "--case", "gemm-large")
    assert target.read_text("utf-8").startswith("case,kernel,shape,device,precision,declared,")


def test_failed_write_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A full disk after the header was written: one line naming the target and the
    reason, exit 1, the temporary file removed; the older target keeps its bytes."""
    target = tmp_path / "r.csv"
    target.write_text("old\n", "utf-8")

    def failing(arrays: list[object]) -> memoryview:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(columnar, "_csv_rows", failing)
    assert 1 == compile_to(target, "--format", "csv")
    expected = f"rooflinec: error: cannot write {target}: No space left on device\n"
    assert expected == capsys.readouterr().err
    assert "old\n" == target.read_text("utf-8")
    assert [] == leftovers(tmp_path)


def test_out_into_a_missing_folder_is_a_usage_error(tmp_path: Path) -> None:
    """A target whose folder does not exist, or that is a folder, is refused before compiling."""
    assert 2 == compile_to(tmp_path / "no" / "r.csv", "--format", "csv")
    assert 2 == compile_to(tmp_path, "--format", "csv")


# --------------------------------------------------------------------------- Parquet


def test_parquet_needs_out() -> None:
    """Parquet is binary: without --out it is a usage error; --partition needs parquet."""
    assert 2 == run("compile", "--specs", str(BUNDLED), "--format", "parquet")[0]
    assert (
        2 == run("compile", "--specs", str(BUNDLED), "--format", "csv", "--partition", "device")[0]
    )


def test_parquet_schema_has_units_and_version(tmp_path: Path) -> None:
    """One column per CSV column, named without the unit; the unit in the field metadata,
    the rooflinec version in the schema metadata."""
    target = tmp_path / "r.parquet"
    assert 0 == compile_to(target, "--format", "parquet", "--case", "gemm-large")
    schema = pq.read_schema(target)
    assert len(CSV_COLUMNS) == len(schema.names)
    assert "bandwidth_x0_5" in schema.names and "bytes_dram" in schema.names
    assert b"OP/s" == schema.field("attainable").metadata[b"unit"]
    assert b"B" == schema.field("bytes_l2").metadata[b"unit"]
    assert b"s" == schema.field("time").metadata[b"unit"]
    assert schema.field("case").metadata is None
    assert "bool" == str(schema.field("declared").type)
    assert __version__.encode() == schema.metadata[b"rooflinec"]


def test_parquet_rows_are_the_json_rows(tmp_path: Path, bundled_json: dict[str, object]) -> None:
    """Every row of the Parquet file holds the JSON document's values; the H100's BF16
    peak is 989.5 TFLOP/s as the data sheet gives it."""
    target = tmp_path / "r.parquet"
    assert 0 == compile_to(target, "--format", "parquet")
    rows = pq.read_table(target).to_pylist()
    records = bundled_json["results"]
    assert isinstance(records, list)
    assert len(records) == len(rows)
    columns = [c for c in columnar.columns_of(FIELDS) if c.field.json]
    for row, record in zip(rows, records, strict=True):
        for column in columns:
            expected = record.get(column.field.key)
            if column.field.keys:
                expected = (expected or {}).get(column.field.keys[column.key])
            if column.field.mapping:  # a shape: one text, as in CSV
                expected = " ".join(f"{k}={v}" for k, v in expected.items())
            if isinstance(expected, int | float) and not isinstance(expected, bool):
                expected = float(expected)
            assert expected == row[column.name], (column.name, expected, row[column.name])
    key = ("gemm-large", "nvidia-h100-sxm", "bf16")
    (h100,) = [r for r in rows if (r["case"], r["device"], r["precision"]) == key]
    assert 989.5e12 == h100["peak"]


def test_partitioned_parquet_reads_as_one_table(tmp_path: Path) -> None:
    """`--partition device`: one Hive partition per device, read back as one table with the
    device column from the folder names; the folder records its files."""
    target = tmp_path / "out"
    assert 0 == compile_to(
        target, "--format", "parquet", "--partition", "device", "--precision", "bf16"
    )
    table = ds.dataset(target, format="parquet", partitioning="hive").to_table()
    _, text = run("compile", "--specs", str(BUNDLED), "--format", "json", "--precision", "bf16")
    records = json.loads(text)["results"]
    assert len(records) == table.num_rows
    assert {r["device"] for r in records} == set(table.column("device").to_pylist())
    h100 = target / "device=nvidia-h100-sxm" / "part-0.parquet"
    assert "device" not in pq.read_schema(h100).names
    files = json.loads((target / RECORD).read_text("utf-8"))["files"]
    assert "device=nvidia-h100-sxm/part-0.parquet" in files
    assert [] == leftovers(tmp_path)


def test_partitioned_output_replaces_its_own_and_refuses_foreign(tmp_path: Path) -> None:
    """A folder a compile wrote is replaced; one holding anything else is refused (exit 2,
    nothing touched)."""
    target = tmp_path / "out"
    args = ("--format", "parquet", "--partition", "device")
    assert 0 == compile_to(target, *args, "--device", "amd-mi300x")
    assert 0 == compile_to(target, *args, "--device", "nvidia-h100-sxm")
    assert ["device=nvidia-h100-sxm"] == sorted(p.name for p in target.iterdir() if p.is_dir())
    (target / "notes.txt").write_text("mine", "utf-8")
    assert 2 == compile_to(target, *args)
    assert "mine" == (target / "notes.txt").read_text("utf-8")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "data.csv").write_text("x", "utf-8")
    assert 2 == compile_to(foreign, *args)
    assert ["data.csv"] == [p.name for p in foreign.iterdir()]
    assert [] == [n for n in leftovers(tmp_path) if n.endswith((".tmp", ".old"))]


def test_readme_duckdb_query(tmp_path: Path) -> None:
    """The README's DuckDB query over the partitioned folder: the highest attainable rate
    per device, one row per device."""
    duckdb = pytest.importorskip("duckdb")
    target = tmp_path / "out"
    assert 0 == compile_to(target, "--format", "parquet", "--partition", "device")
    readme = (REPO / "README.md").read_text("utf-8")
    query = next(line for line in readme.splitlines() if "read_parquet('out/**" in line)
    query = query.replace("'out/", f"'{target}/")
    rows = dict(duckdb.sql(query).fetchall())
    _, text = run("compile", "--specs", str(BUNDLED), "--format", "json")
    best: dict[str, float] = {}
    for r in json.loads(text)["results"]:
        best[r["device"]] = max(best.get(r["device"], 0.0), r["attainable"])
    assert best == rows


# --------------------------------------------------------------------------- same bytes


def test_csv_text_does_not_depend_on_batch_boundaries(tmp_path: Path) -> None:
    """Same cell, same bytes: batches of 7 rows give the bytes of one batch of all rows."""
    from rooflinec.outputs.results import write_csv
    from rooflinec.pipeline import compiled_or_raise

    specs = write_catalog(tmp_path, devices=2, cases=30)
    whole = run("compile", "--specs", str(specs), "--format", "csv")[1]
    compiled = compiled_or_raise(specs)
    cells = compiled.rows()
    assert 7 < len(cells)
    batched = io.StringIO()
    write_csv(compiled, cells, batched, batch_rows=7)
    assert whole == batched.getvalue()


# --------------------------------------------------------------------------- Ctrl-C


def _interrupt(
    argv: list[str], started: Callable[[], bool], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """Run the command line, send SIGINT once `started()` says the output is being
    written, and wait for it to end."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "rooflinec", *argv],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    deadline = time.monotonic() + 120
    while not started() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, "the command ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


@pytest.mark.parametrize("format", ["csv", "parquet"])
def test_ctrl_c_leaves_no_output(tmp_path: Path, format: str) -> None:
    """Ctrl-C while a big compile writes: exit 130, `interrupted` on stderr, no traceback,
    and neither the target nor a temporary file is left."""
    specs = write_catalog(tmp_path / "catalog", devices=40, cases=1700)  # 408,000 rows
    out = tmp_path / "out"
    out.mkdir()
    target = out / f"r.{format}"
    proc = _interrupt(
        ["compile", "--specs", str(specs), "--format", format, "--out", str(target)],
        lambda: any(p.name.endswith(".tmp") and p.stat().st_size > 0 for p in out.iterdir()),
        tmp_path,
    )
    assert 130 == proc.returncode, proc.stderr
    assert "rooflinec: interrupted\n" == proc.stderr
    assert [] == list(out.iterdir())


def test_ctrl_c_stops_a_build_and_keeps_nothing(tmp_path: Path) -> None:
    """Ctrl-C during `build`: exit 130, and neither the site nor its staging folder is left."""
    pytest.importorskip("mkdocs")
    out = tmp_path / "site"
    proc = _interrupt(
        ["build", "--specs", str(BUNDLED), "--out", str(out)],
        lambda: any(".building-" in p.name for p in tmp_path.iterdir()),
        tmp_path,
    )
    assert 130 == proc.returncode, proc.stderr
    assert proc.stderr.endswith("rooflinec: interrupted\n")
    assert "Traceback" not in proc.stderr
    assert [] == [p.name for p in tmp_path.iterdir()]


# --------------------------------------------------------------------------- progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_waits_then_counts_and_is_erased() -> None:
    """Nothing for the first two seconds; then rows done of the total, the rate and the
    time left; erased at the end."""
    now = [0.0]
    stream = _Terminal()
    line = ProgressLine(1_000_000, "compile", stream, clock=lambda: now[0])
    now[0] = 1.0
    line(100_000)
    assert "" == stream.getvalue()
    now[0] = 4.0
    line(300_000)
    text = stream.getvalue()
    assert "\rcompile: 400,000 / 1,000,000 rows (40%), 100k rows/s, 6 s left" == text
    line.close()
    assert stream.getvalue().endswith("\r" + " " * (len(text) - 1) + "\r")


def test_no_progress_line_off_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """stderr that is no terminal gets nothing, however long the job."""
    with progress_line(10, "compile", io.StringIO()) as progress:
        assert progress is None
    assert 0 == compile_to(tmp_path / "r.csv", "--format", "csv")
    assert "" == capsys.readouterr().err


def test_build_progress_counts_pages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal, a build longer than the delay shows pages written of the total, and
    erases the line at the end."""
    pytest.importorskip("mkdocs")
    from rooflinec.site.build import build_site

    stream = _Terminal()
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setenv("ROOFLINEC_PROGRESS_DELAY", "0")
    build_site(BUNDLED, tmp_path / "site")
    text = stream.getvalue()
    counts = [(int(a), int(b)) for a, b in re.findall(r"\rbuild: (\d+) / (\d+) pages", text)]
    html = len(list((tmp_path / "site").rglob("*.html")))
    assert (1, counts[0][1]) == counts[0]
    assert counts[0][1] == counts[-1][0] == counts[-1][1] > 50
    assert html - 1 <= counts[-1][1] <= html  # every page but 404.html, written by a template
    assert text.endswith("\r")


def test_check_never_loads_pyarrow() -> None:
    """`check` of the bundled catalog runs without importing pyarrow (only the CSV and
    Parquet writers do), so the pre-commit hook pays nothing for it."""
    code = (
        "import io, sys; from rooflinec.cli.main import main; "
        f"main(['check', '--specs', {str(BUNDLED)!r}], out=io.StringIO()); "
        "print('pyarrow' in sys.modules)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert "False" == proc.stdout.strip()
