"""`rooflinec import`: plain CSV, Nsight Compute and rocprof-compute exports to measured
entries, printed as YAML or written into the kernel specs in place."""

from __future__ import annotations

import datetime
import io
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from rooflinec.cli.main import main
from rooflinec.pipeline import compiled_or_raise
from tests.measuredspecs import write_measured

FIXTURES = Path(__file__).parent / "fixtures" / "imports"
NCU_MATCHES = ("--match", "^axpy_kernel=axpy-big", "--match", "tiny_axpy=axpy-tiny")
# The raw page's values ('2,000', '6,144') carry one comma: say it separates thousands.
THOUSANDS = "--thousands-comma"


@pytest.fixture(autouse=True)
def today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("rooflinec.lints.current_date", lambda: datetime.date(2026, 12, 1))


@pytest.fixture
def specs(tmp_path: Path) -> Path:
    return write_measured(tmp_path)


def run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(args), out=out)
    return code, out.getvalue()


def _load(text: str) -> list[dict[str, object]]:
    return list(YAML(typ="safe").load_all(text))


def _snapshot(specs: Path) -> dict[str, str]:
    return {str(p): p.read_text("utf-8") for p in sorted(specs.rglob("*.yaml"))}


def test_plain_csv_prints_the_entries(specs: Path) -> None:
    """Each line becomes an entry: times with their unit, counted flops and bytes kept."""
    code, text = run("import", "csv", str(FIXTURES / "plain.csv"), "--specs", str(specs))
    assert 0 == code
    (doc,) = _load(text)
    assert "axpy" == doc["kernel"]
    source = doc["sources"]["csv-plain"]  # type: ignore[index]
    assert ("measurement", "plain CSV") == (source["kind"], source["tool"])
    assert {
        "axpy-big": [
            {
                "device": "gpu-b",
                "precision": "bf16",
                "time": "2 ms",
                "launches": 1,
                "flops": 2000000000,
                "bytes": {"dram": 7200000000, "l2": 6000000000},
                "source": "csv-plain",
            }
        ],
        "axpy-tiny": [
            {
                "device": "gpu-a",
                "precision": "bf16",
                "time": "30 µs",
                "launches": 10,
                "bytes": {"dram": 61440},
                "source": "csv-plain",
                "note": "operations: the kernel's formula",
            }
        ],
    } == doc["measured"]


def test_ncu_raw_page_sums_launches_and_prefers_the_formula(specs: Path) -> None:
    """Two launches of one kernel are summed; the tiny kernel and the unmatched memset
    are told apart by --match; operations come from the formula, the count is noted."""
    code, text = run(
        "import", "ncu", str(FIXTURES / "ncu-raw.csv"), "--specs", str(specs),
        "--device", "gpu-b", *NCU_MATCHES, THOUSANDS,
    )  # fmt: skip
    assert 0 == code
    (doc,) = _load(text)
    measured = doc["measured"]
    big = measured["axpy-big"][0]  # type: ignore[index]
    assert "4 ms" == big["time"]
    assert 2 == big["launches"]
    assert {"dram": 14400000000, "l2": 12000000000, "l1": 14000000000} == big["bytes"]
    assert "flops" not in big
    assert big["note"].startswith(
        "operations: the kernel's formula (Nsight Compute counted 2000000000 FLOP on CUDA"
        " cores and 0 tensor-pipe instructions over 2 launch(es)"
    )
    tiny = measured["axpy-tiny"][0]  # type: ignore[index]
    assert ("3.1 µs", {"dram": 6144, "l2": 6144, "l1": 12000}) == (tiny["time"], tiny["bytes"])


def test_ncu_details_page_reads_units_and_cycles(specs: Path) -> None:
    """The long page: metrics pivoted per launch ID; time = cycles / (cycles per second)."""
    code, text = run(
        "import", "ncu", str(FIXTURES / "ncu-details.csv"), "--specs", str(specs),
        "--device", "gpu-b", "--match", "axpy_kernel=axpy-big",
    )  # fmt: skip
    assert 0 == code
    (doc,) = _load(text)
    entry = doc["measured"]["axpy-big"][0]  # type: ignore[index]
    assert ("4 ms", 2) == (entry["time"], entry["launches"])
    assert {"dram": 14400000000, "l2": 12000000000} == entry["bytes"]


def test_rocprof_pmc_perf_applies_its_byte_formulas(specs: Path) -> None:
    """HBM = 64·(RDREQ − RDREQ_32B) + 32·RDREQ_32B + 64·WRREQ_64B + 32·(WRREQ − WRREQ_64B)."""
    code, text = run(
        "import", "rocprof", str(FIXTURES / "pmc_perf.csv"), "--specs", str(specs),
        "--device", "gpu-b", "--match", "axpy_kernel=axpy-big",
    )  # fmt: skip
    assert 0 == code
    (doc,) = _load(text)
    entry = doc["measured"]["axpy-big"][0]  # type: ignore[index]
    assert ("4 ms", 2) == (entry["time"], entry["launches"])
    assert {"dram": 14400000000, "l2": 12000000000, "l1": 12000000000} == entry["bytes"]


def test_write_keeps_every_comment_and_adds_the_source(specs: Path) -> None:
    """--write adds the entries and the source; every original line is still there, in order."""
    kernel = specs / "kernels" / "axpy.yaml"
    before = kernel.read_text("utf-8")
    code, text = run(
        "import", "ncu", str(FIXTURES / "ncu-raw.csv"), "--specs", str(specs),
        "--device", "gpu-b", *NCU_MATCHES, THOUSANDS, "--write",
    )  # fmt: skip
    assert 0 == code
    assert f"{kernel}: measured entries added (source ncu-ncu-raw)\n" == text
    after = kernel.read_text("utf-8")
    kept = iter(after.splitlines())
    assert all(any(line == other for other in kept) for line in before.splitlines())
    assert "# the tiny case is launch bound" in after
    assert "  # read x and y, write y" in after
    compiled = compiled_or_raise(specs)
    result = compiled.result("axpy-big", "gpu-b", "bf16")
    assert result is not None
    assert {"dram": 1.2, "l2": 1.0} == {  # the kernel models no L1 traffic
        k: float(v) for k, v in result.traffic_ratio.items()
    }
    tiny = compiled.catalog.cases["axpy-tiny"].measured[0]
    assert "ncu-ncu-raw" == tiny.source


def test_write_twice_replaces_its_own_entry(specs: Path) -> None:
    """Importing the same export again leaves one entry per device and precision."""
    args = ("import", "csv", str(FIXTURES / "plain.csv"), "--specs", str(specs), "--write")
    assert (0, 0) == (run(*args)[0], run(*args)[0])
    case = compiled_or_raise(specs).catalog.cases["axpy-big"]
    assert ["run1", "csv-plain"] == [m.source for m in case.measured]


HEAD = "case,device,precision,time\n"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("case,device,precision\naxpy-big,gpu-b,bf16\n", ":1: error: missing column 'time'"),
        (HEAD + "axpy-big,gpu-b,bf16,0.21\n", ":2:25: error: time '0.21' has no unit"),
        (HEAD + "axpy-nope,gpu-b,bf16,1 ms\n", ":2: error: unknown case 'axpy-nope'"),
        (HEAD + "axpy-big,gpu-z,bf16,1 ms\n", ":2: error: unknown device 'gpu-z'"),
        (HEAD + "axpy-big,gpu-b,bf16,-1 ms\n", ":2:21: error: time '-1 ms' is negative"),
    ],
)  # fmt: skip
def test_broken_plain_file_changes_nothing(
    specs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, expected: str
) -> None:
    """FILE:LINE: error: ..., exit 1, and no spec touched."""
    bad = tmp_path / "bad.csv"
    bad.write_text(content, "utf-8")
    before = _snapshot(specs)
    code, text = run("import", "csv", str(bad), "--specs", str(specs), "--write")
    assert (1, "") == (code, text)
    assert f"{bad}{expected}" in capsys.readouterr().err
    assert before == _snapshot(specs)


def test_ncu_metric_without_a_unit_changes_nothing(
    specs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A raw page whose time column has no unit: the unit's line and column are named,
    once, and nothing is written."""
    text = (FIXTURES / "ncu-raw.csv").read_text("utf-8").replace('"usecond"', '""')
    bad = tmp_path / "ncu.csv"
    bad.write_text(text, "utf-8")
    before = _snapshot(specs)
    code, _ = run("import", "ncu", str(bad), "--specs", str(specs), "--device", "gpu-b",
                  *NCU_MATCHES, THOUSANDS, "--write")  # fmt: skip
    assert 1 == code
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}:7:58: error: gpu__time_duration.sum has no unit")
    assert 1 == len(err.splitlines())
    assert before == _snapshot(specs)


def test_kernel_names_must_be_cases_without_match(
    specs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --match a kernel name is taken as a case id; a hint says how to map it."""
    code, _ = run("import", "ncu", str(FIXTURES / "ncu-raw.csv"), "--specs", str(specs),
                  "--device", "gpu-b", THOUSANDS)  # fmt: skip
    assert 1 == code
    assert "ncu-raw.csv:8: error: unknown case 'axpy_kernel<__nv_bfloat16>'; map kernel" in (
        capsys.readouterr().err
    )


def test_entry_above_the_ceiling_is_refused(
    specs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An import whose rate would be above the roofline is a spec error: nothing written."""
    bad = tmp_path / "fast.csv"
    bad.write_text("case,device,precision,time\naxpy-big,gpu-b,bf16,1 ms\n", "utf-8")
    before = _snapshot(specs)
    code, _ = run("import", "csv", str(bad), "--specs", str(specs), "--write")
    assert 1 == code
    assert "is 1.5x the roofline ceiling" in capsys.readouterr().err
    assert before == _snapshot(specs)
