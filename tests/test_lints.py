"""Catalog lints: the bundled catalog is clean, and each planted slip is caught at its line."""

from __future__ import annotations

import datetime
import io
import re
import shutil
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pytest

from rooflinec import lints
from rooflinec.assemble import catalog_or_raise, display_path
from rooflinec.catalog import Catalog
from rooflinec.cli.main import main
from rooflinec.errors import Diagnostic
from rooflinec.lints import lint_catalog
from rooflinec.lints.quotes import quote_backs
from rooflinec.lints.ranges import PLAUSIBLE
from rooflinec.provenance import months_before
from tests.specfactory import BUNDLED


def version_days(catalog: Catalog) -> list[tuple[str, str, int, datetime.date]]:
    """(kind, spec id, version, date) of every version entry, in the order the lints walk them."""
    days = []
    for kind, specs in (
        ("device", catalog.devices),
        ("kernel", catalog.kernels),
        ("method", catalog.methods),
    ):
        for ident, spec in specs.items():
            for version in spec.versions:
                days.append(
                    (kind, ident, version.version, datetime.date.fromisoformat(version.date))
                )
    return days


def release_date(catalog: Catalog) -> datetime.date:
    """The catalog's release date: its newest version entry."""
    return max(day for *_, day in version_days(catalog))


@pytest.fixture(scope="module")
def bundled() -> Catalog:
    return catalog_or_raise(BUNDLED)


@pytest.fixture(scope="module")
def release(bundled: Catalog) -> datetime.date:
    return release_date(bundled)


def check(specs: Path, *, strict: bool) -> tuple[int, str]:
    buffer = io.StringIO()
    args = ["check", "--specs", str(specs)] + (["--strict"] if strict else [])
    return main(args, out=buffer), buffer.getvalue()


@dataclass(frozen=True)
class Slip:
    """A change planted in a copy of the bundled catalog, and where the lint must point."""

    name: str
    file: str  # under specs/devices/
    replacements: tuple[tuple[str, str], ...]
    anchor: str  # text (after planting) before the flagged value
    marker: str  # the flagged value: the diagnostic points at its first character
    code: str
    breaks_example: bool = False  # the method's reference example fails too (H100 SXM)
    # a bundled serving result then beats its bound: `check` fails on it too, as it should
    breaks_bound: bool = False

    def plant(self, root: Path) -> tuple[Path, str]:
        """Copy the catalog under `root`, plant the slip; return (specs, FILE:LINE:COL)."""
        specs = root / "specs"
        shutil.copytree(BUNDLED, specs)
        path = specs / "devices" / self.file
        text = path.read_text("utf-8")
        for old, new in self.replacements:
            assert 1 == text.count(old), old
            text = text.replace(old, new)
        path.write_text(text, "utf-8")
        start = text.index(self.anchor)
        at = text.index(self.marker, start)
        line = text.count("\n", 0, at) + 1
        col = at - text.rfind("\n", 0, at)
        return specs, f"{display_path(path)}:{line}:{col}"


H100 = "nvidia-h100-sxm.yaml"
SLIPS = [
    Slip(
        "sparse figure given as dense",
        H100,
        (
            (
                '  bf16:\n    peak: 1979 TFLOP/s\n    sparsity: "2:4"\n',
                "  bf16:\n    peak: 1979 TFLOP/s\n",
            ),
        ),
        "  bf16:",
        "1979 TFLOP/s",
        "lint-sparsity",
        breaks_example=True,
    ),
    Slip(
        "bandwidth 1000x off",
        H100,
        (("bandwidth: 3.35 TB/s", "bandwidth: 3.35 GB/s"),),
        "  dram:",
        "3.35 GB/s",
        "lint-plausibility",
        breaks_example=True,
    ),
    Slip(
        "stale source",
        H100,
        (
            (
                "url: https://www.nvidia.com/en-us/data-center/h100/\n    read: 2026-10-25",
                "url: https://www.nvidia.com/en-us/data-center/h100/\n    read: 2020-01-01",
            ),
        ),
        "https://www.nvidia.com/en-us/data-center/h100/",
        "2020-01-01",
        "lint-stale",
    ),
    Slip(
        "sparse figure given as dense, no alternatives to betray it",
        "nvidia-h200-sxm.yaml",
        (
            (
                '  bf16:\n    peak: 1979 TFLOP/s\n    sparsity: "2:4"\n',
                "  bf16:\n    peak: 1979 TFLOP/s\n",
            ),
        ),
        "  bf16:",
        "1979 TFLOP/s",
        "lint-sparsity",
    ),
    Slip(
        "bandwidth 1000x off on a device with no reference example",
        "nvidia-h200-sxm.yaml",
        (("    bandwidth: 4.8 TB/s", "    bandwidth: 4.8 GB/s"),),
        "  dram:",
        "4.8 GB/s",
        "lint-plausibility",
        breaks_bound=True,
    ),
    Slip(
        "A100 dense figure whose sparse alternative is removed",
        "nvidia-a100-sxm-80gb.yaml",
        (
            (
                """      - value: 624 TFLOP/s
        sparsity: "2:4"
        source: nvidia-hopper-in-depth
        quote: "Peak BF16 Tensor TFLOPS with FP32 Accumulate 1 … 312/624 2"
        note: "The with-sparsity figure of the same row."
""",
                "",
            ),
            (
                "  bf16:\n    peak: 312 TFLOP/s\n    source: nvidia-hopper-in-depth\n"
                '    quote: "Peak BF16 Tensor TFLOPS with FP32 Accumulate 1 … 312/624 2"\n'
                "    alternatives:\n",
                "  bf16:\n    peak: 312 TFLOP/s\n"
                "    source: nvidia-hopper-in-depth\n"
                '    quote: "Peak BF16 Tensor TFLOPS with FP32 Accumulate 1 … 312/624 2"\n',
            ),
        ),
        "  bf16:",
        "312 TFLOP/s",
        "lint-sparsity",
    ),
    Slip(
        "sparsity flag on a precision with no sparse pipe",
        H100,
        (
            (
                "  fp64:\n    peak: 67 TFLOP/s\n",
                '  fp64:\n    peak: 67 TFLOP/s\n    sparsity: "2:4"\n',
            ),
        ),
        "  fp64:",
        "67 TFLOP/s",
        "lint-sparsity",
        breaks_example=False,
    ),
    Slip(
        "figure without a quote",
        H100,
        (('    quote: "FP32 | 67 TFLOPS | 51 TFLOPS |"\n', ""),),
        "  fp32:",
        "67 TFLOP/s",
        "lint-quote",
    ),
    Slip(
        "the method's 1678 loses the 1677 quote it traces to",
        "intel-gaudi3.yaml",
        (
            (
                """      - value: 1677 TFLOP/s
        pipe: matrix
        source: ml-engineering-accelerators
        quote: "Intel Gaudi3 | 229.0 | 459.0 | 459 | 1677 | 1677 | V | X …"
        note: "Recomputed at the observed 1,600 MHz MME clock: the origin""",
                """      - value: 1677 TFLOP/s
        pipe: matrix
        source: ml-engineering-accelerators
        note: "Recomputed at the observed 1,600 MHz MME clock: the origin""",
            ),
        ),
        "  bf16:",
        "1678 TFLOP/s",
        "lint-quote",
    ),
    Slip(
        "capacity without a quote",
        "nvidia-gb200.yaml",
        (
            (
                "      value: 186 GB\n      source: zdszero-hardware\n"
                '      quote: "186GB HBM3E | 8TB/s"\n',
                "      value: 186 GB\n      source: zdszero-hardware\n",
            ),
        ),
        "capacity:",
        "186 GB",
        "lint-quote",
    ),
    Slip(
        "quote of another row",
        H100,
        (
            (
                '    quote: "FP32 | 67 TFLOPS | 51 TFLOPS |"',
                '    quote: "FP32 | 60 TFLOPS | 51 TFLOPS |"',
            ),
        ),
        "  fp32:",
        "67 TFLOP/s",
        "lint-quote-number",
    ),
    Slip(
        "third party cited where NVIDIA's own brief prints the figure",
        "nvidia-h100-pcie.yaml",
        (
            (
                '    source: nvidia-h100-pcie-brief\n    quote: "memory bandwidth',
                '    source: hpctech-h100\n    quote: "memory bandwidth',
            ),
            (
                '        source: hpctech-h100\n        quote: "GPU メモリ帯域幅',
                '        source: nvidia-h100-pcie-brief\n        quote: "GPU メモリ帯域幅',
            ),
        ),
        "  dram:",
        "2000 GB/s",
        "lint-third-party",
    ),
    Slip(
        "source without a kind",
        "nvidia-l40s.yaml",
        (
            (
                "product_id=355414\n    read: 2026-10-25\n    kind: third-party\n",
                "product_id=355414\n    read: 2026-10-25\n",
            ),
        ),
        "sources:",
        "mullet-l40s",
        "lint-source-kind",
    ),
    Slip(
        "read date in the future",
        "nvidia-l40s.yaml",
        (("product_id=355414\n    read: 2026-10-25", "product_id=355414\n    read: 2099-10-25"),),
        "product_id=355414",
        "2099-10-25",
        "lint-dates",
    ),
    Slip(
        "version dated far in the future",
        "nvidia-l40s.yaml",
        (("{version: 3, date: 2026-12-01,", "{version: 3, date: 9999-12-31,"),),
        "versions:",
        "9999-12-31",
        "lint-dates",
    ),
    Slip(
        "sustained compute share written as a fraction of a per cent",
        "nvidia-l40s.yaml",
        (("sustained:\n  compute: 100%", "sustained:\n  compute: 0.0001%"),),
        "sustained:",
        "0.0001%",
        "lint-sustained",
        breaks_bound=True,
    ),
    Slip(
        "sustained memory share under 10 %",
        "nvidia-l40s.yaml",
        (("  compute: 100%\n  memory: 100%", "  compute: 100%\n  memory: 9%"),),
        "sustained:",
        "9%",
        "lint-sustained",
        breaks_bound=True,
    ),
    Slip(
        "FP16-accumulate rate in a GeForce BF16 column",
        "nvidia-rtx-4090.yaml",
        (
            (
                "    peak: 165.15 TFLOP/s\n    source: waredb-4090\n"
                "    quote: 'BF16: 165.15 TFLOPS",
                "    peak: 330.3 TFLOP/s\n    source: waredb-4090\n    quote: 'BF16: 330.3 TFLOPS",
            ),
        ),
        "  bf16:",
        "330.3 TFLOP/s",
        "lint-accumulate",
    ),
    Slip(
        "bandwidth 1000x high, as one public roofline table prints the RTX 5090",
        "nvidia-rtx-5090.yaml",
        (("    bandwidth: 1792 GB/s", "    bandwidth: 1792 TB/s"),),
        "  dram:",
        "1792 TB/s",
        "lint-plausibility",
    ),
    Slip(
        "a figure printed per card on a device described per chip",
        "intel-gaudi2.yaml",
        (
            (
                'quote: "Peak HBM BW900 GB/s2.46 TB/s3.67 TB/s"',
                'quote: "Peak HBM BW per card 900 GB/s2.46 TB/s3.67 TB/s"',
            ),
        ),
        "  dram:",
        "2.46 TB/s",
        "lint-per-card",
    ),
    Slip(
        "device without a kind",
        "nvidia-l40s.yaml",
        (("kind: gpu\n", ""),),
        "id:",
        "nvidia-l40s",
        "lint-kind",
    ),
    Slip(
        "peak 1000x low: the ridge point gives it away",
        "nvidia-h200-sxm.yaml",
        (("    peak: 1979 TFLOP/s", "    peak: 1979 GFLOP/s"),),
        "  bf16:",
        "1979 GFLOP/s",
        "lint-plausibility",
    ),
    Slip(
        "on-chip level slower than DRAM",
        "intel-gaudi3.yaml",
        (("    bandwidth: 12.8 TB/s", "    bandwidth: 1.28 TB/s"),),
        "  l2:",
        "1.28 TB/s",
        "lint-plausibility",
    ),
    Slip(
        "binary capacity without its decimal equivalent",
        "google-tpu-v5p.yaml",
        (
            (
                "The newer version of Google's table prints GiB: 95 GiB is 102.0 GB. ",
                "The newer version of Google's table prints GiB. ",
            ),
        ),
        "capacity:",
        "95 GiB",
        "lint-binary-units",
    ),
    Slip(
        "alternative 1000x off",
        "nvidia-a100-sxm-80gb.yaml",
        (("      - value: 2.00 TB/s", "      - value: 2.00 GB/s"),),
        "alternatives:\n      - value: 2.00",
        "2.00 GB/s",
        "lint-alt-scale",
    ),
    Slip(
        "integer peak in FLOP/s",
        H100,
        (("    peak: 3958 TOPS", "    peak: 3958 TFLOP/s"),),
        "  int8:",
        "3958 TFLOP/s",
        "lint-counts",
    ),
    Slip(
        "launch latency in seconds",
        H100,
        (("  latency: 2 µs\n", "  latency: 5 s\n"),),
        "launch:",
        "5 s",
        "lint-plausibility",
        breaks_example=True,
    ),
    Slip(
        "launch latency a prefix off",
        H100,
        (("  latency: 2 µs\n", "  latency: 2 ns\n"),),
        "launch:",
        "2 ns",
        "lint-plausibility",
    ),
]


def test_bundled_catalog_passes_strict() -> None:
    """`rooflinec check --strict` passes on the bundled catalog."""
    code, output = check(BUNDLED, strict=True)
    files = len(list(BUNDLED.rglob("*.yaml")))
    assert (0, f"rooflinec check: ok: {files} files, 0 errors, 0 warnings\n") == (code, output)


def test_bundled_catalog_has_no_lints_on_its_release_date(
    bundled: Catalog, release: datetime.date
) -> None:
    """Injecting today: the bundled catalog has no warnings on its release date."""
    assert [] == lint_catalog(bundled, today=release)


@pytest.mark.parametrize("slip", SLIPS, ids=[s.name for s in SLIPS])
def test_planted_slip_fails_strict_at_its_line(slip: Slip, tmp_path: Path) -> None:
    """With --strict the slip is an error naming file:line:col and the lint's code."""
    specs, where = slip.plant(tmp_path)
    code, output = check(specs, strict=True)
    assert 1 == code
    assert f"{where}: error: {slip.code}: " in output, output


@pytest.mark.parametrize(
    "slip",
    [s for s in SLIPS if not s.breaks_example and not s.breaks_bound],
    ids=[s.name for s in SLIPS if not s.breaks_example and not s.breaks_bound],
)
def test_planted_slip_is_a_warning_without_strict(slip: Slip, tmp_path: Path) -> None:
    """Without --strict the slip is a warning at its line, and check passes."""
    specs, where = slip.plant(tmp_path)
    code, output = check(specs, strict=False)
    assert 0 == code, output
    assert f"{where}: warning: {slip.code}: " in output


def test_sparsity_slip_names_the_alternatives_that_betray_it(
    tmp_path: Path, release: datetime.date
) -> None:
    """The H100 message cites the same-value sparse alternative and the dense half."""
    specs, _ = SLIPS[0].plant(tmp_path)
    catalog = catalog_or_raise(specs)
    messages = [
        d.message for d in lint_catalog(catalog, today=release) if d.code == "lint-sparsity"
    ]
    assert 1 == len(messages)
    lines = (specs / "devices" / H100).read_text("utf-8").splitlines()
    sparse = lines.index("      - value: 1979 TFLOP/s") + 1
    half = lines.index("      - value: 989.4 TFLOP/s") + 1
    assert f"1979 TFLOP/s at 2:4 sparsity (line {sparse})" in messages[0]
    assert f"989.4 TFLOP/s dense (line {half})" in messages[0]
    assert "the dense rate is 989.5 TFLOP/s" in messages[0]


def test_bandwidth_slip_says_1000x(tmp_path: Path, release: datetime.date) -> None:
    """A bandwidth a prefix off says which way."""
    specs, _ = SLIPS[1].plant(tmp_path)
    catalog = catalog_or_raise(specs)
    messages = [
        d.message for d in lint_catalog(catalog, today=release) if d.code == "lint-plausibility"
    ]
    assert [
        "lint-plausibility: dram bandwidth 3.35 GB/s: a DRAM bandwidth of 3.35 GB/s is outside"
        " 100 GB/s–30 TB/s, plausible for a gpu (1000× too small? check the prefix)"
    ] == messages


@pytest.mark.parametrize(
    ("latency", "hint"),
    [
        ("2 ms", " (1000× too large? check the prefix)"),
        ("50 ns", " (1000× too small? check the prefix)"),
        ("5 s", ""),
    ],
)
def test_launch_latency_out_of_range_is_implausible(
    latency: str, hint: str, tmp_path: Path, release: datetime.date
) -> None:
    """A launch latency outside 100 ns–1 ms is one lint-plausibility warning at its value,
    with the prefix hint when a factor of 1000 brings it in range."""
    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    path = specs / "devices" / H100
    path.write_text(
        path.read_text("utf-8").replace("  latency: 2 µs\n", f"  latency: {latency}\n"), "utf-8"
    )
    catalog = catalog_or_raise(specs)
    found = [d for d in lint_catalog(catalog, today=release) if d.code == "lint-plausibility"]
    assert [
        f"lint-plausibility: launch latency {latency}: one kernel launch takes microseconds;"
        f" {latency} is outside 100 ns–1 ms, plausible for any chip{hint}"
    ] == [d.message for d in found]
    assert "$.launch.latency" == found[0].path


@pytest.mark.parametrize("latency", ["100 ns", "2 µs", "1 ms"])
def test_launch_latency_in_range_is_plausible(
    latency: str, tmp_path: Path, release: datetime.date
) -> None:
    """The bounds are inclusive, and the bundled H100's 2 µs draws nothing."""
    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    path = specs / "devices" / H100
    path.write_text(
        path.read_text("utf-8").replace("  latency: 2 µs\n", f"  latency: {latency}\n"), "utf-8"
    )
    found = lint_catalog(catalog_or_raise(specs), today=release)
    assert [] == [d.message for d in found if d.code == "lint-plausibility"]


def codes(diagnostics: list[Diagnostic]) -> list[tuple[str, str]]:
    return [(d.code, d.path) for d in diagnostics]


def test_stale_exactly_18_months_is_fresh(bundled: Catalog) -> None:
    """A source read exactly 18 months ago is not stale; one read a day earlier is."""
    # Most sources were read 2026-10-25; nvidia-hopper-in-depth was read 2026-08-22.
    found = lint_catalog(bundled, today=datetime.date(2028, 4, 25))
    stale = {(d.location.file.rsplit("/", 1)[-1], d.path) for d in found if d.code == "lint-stale"}
    expected = {
        ("nvidia-a100-sxm-80gb.yaml", "$.sources.nvidia-hopper-in-depth.read"),
        ("nvidia-h100-pcie.yaml", "$.sources.nvidia-hopper-in-depth.read"),
        ("nvidia-h100-sxm.yaml", "$.sources.nvidia-hopper-in-depth.read"),
    }
    assert expected == stale
    later = lint_catalog(bundled, today=datetime.date(2028, 4, 26))
    assert ("lint-stale", "$.sources.mullet-l40s.read") in codes(later)


def test_only_staleness_depends_on_the_date(bundled: Catalog) -> None:
    """Two years on, only lint-stale speaks about the bundled catalog."""
    found = lint_catalog(bundled, today=datetime.date(2028, 11, 30))
    assert {"lint-stale"} == {d.code for d in found}


def test_current_date_is_injectable(bundled: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """`lint_catalog` without `today` asks `lints.current_date`."""
    monkeypatch.setattr(lints, "current_date", lambda: datetime.date(2030, 1, 1))
    assert {"lint-stale"} == {d.code for d in lint_catalog(bundled)}


@pytest.mark.parametrize(
    ("day", "months", "expected"),
    [
        (datetime.date(2026, 11, 30), 18, datetime.date(2025, 5, 30)),
        (datetime.date(2026, 8, 31), 18, datetime.date(2025, 2, 28)),
        (datetime.date(2028, 8, 31), 6, datetime.date(2028, 2, 29)),
        (datetime.date(2026, 1, 15), 1, datetime.date(2025, 12, 15)),
    ],
)
def test_months_before(day: datetime.date, months: int, expected: datetime.date) -> None:
    """Calendar months back, clamped to the month's last day."""
    assert expected == months_before(day, months)


@pytest.mark.parametrize(
    ("printed", "quote", "expected"),
    [
        ("1979 TFLOP/s", "BFLOAT16 Tensor コア | 1,979 TFLOPS* | 1,513 TFLOPS* |", True),
        ("3.35 TB/s", "GPU メモリ帯域幅 | 3,350 GB/sec | 2000 GB/sec |", True),
        ("918 TOPS", "int8_ops_per_second=int(9.18e14 // num_chip_cores)", True),
        ("1835 TFLOP/s", "BF16 Matrix TFLOPs1835", True),
        ("3.7 TB/s", "largura de banda máxima de 3,7 TB por segundo", True),
        ("67 TFLOP/s", "FP32 | 60 TFLOPS | 51 TFLOPS |", False),
        ("3.35 TB/s", "up to 3 TB/s", False),
    ],
)
def test_quote_backs(printed: str, quote: str, expected: bool) -> None:
    """The quote must contain the printed number, up to an SI prefix."""
    assert expected == quote_backs(printed, quote)


def test_plausible_ranges_span_less_than_1000x() -> None:
    """Bandwidth and ridge ranges of every kind are narrower than 1000×: a slip leaves them."""
    spans = {
        kind: [high / low < 1000 for low, high in (r.dram, r.on_chip, r.ridge_wide, r.ridge_tensor)]
        for kind, r in PLAUSIBLE.items()
        if kind is not None
    }
    assert {k: [True] * 4 for k in spans} == spans


def test_bundled_ridges_fit_their_kind(bundled: Catalog) -> None:
    """The ranges are not so tight that real parts fall out (L40S FP64: 1.66 FLOP/B)."""
    l40s = bundled.devices["nvidia-l40s"]
    ridge = l40s.peak("fp64") / l40s.bandwidth("dram")
    low, high = PLAUSIBLE["gpu"].ridge_wide
    assert low <= ridge <= high
    assert Fraction(143, 86400) * 1000 == ridge


def test_wide_tolerance_in_the_method_note_is_a_lint(tmp_path: Path) -> None:
    """`tolerance: 100%` lets a peak off by 2x pass: a warning, an error with --strict."""
    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    note = specs / "methods" / "roofline.yaml"
    text = note.read_text("utf-8")
    old = "      - {output: peak, value: 989.5 TFLOP/s}"
    new = "      - {output: peak, value: 1979 TFLOP/s, tolerance: 100%}"
    assert 1 == text.count(old)
    note.write_text(text.replace(old, new), "utf-8")
    line = text[: text.index(old)].count("\n") + 1
    where = f"{display_path(note)}:{line}:{new.index('100%') + 1}"
    message = (
        "lint-tolerance: example 'h100-worked-example' accepts its peak within 100%, more than 10%:"
        " a figure that far off is wrong, not rounded"
    )
    code, output = check(specs, strict=False)
    assert 0 == code, output
    assert f"{where}: warning: {message} [$.examples[0].expect[0].tolerance]" in output
    code, output = check(specs, strict=True)
    assert 1 == code
    assert f"{where}: error: {message}" in output


def test_tolerance_up_to_ten_per_cent_and_printed_precision_are_quiet(
    bundled: Catalog, release: datetime.date
) -> None:
    """Only a stated tolerance over 10 % is flagged; the bundled examples state none."""
    from rooflinec.lints.context import LintContext
    from rooflinec.lints.margins import MAX_TOLERANCE, tolerances

    assert Fraction(1, 10) == MAX_TOLERANCE
    assert [] == tolerances(LintContext.of(bundled, release))


def test_version_date_a_day_ahead_is_allowed(bundled: Catalog, release: datetime.date) -> None:
    """A version dated tomorrow (a time zone ahead) is quiet; two days ahead is not.

    Today is set a day and two days before the catalog's newest version entry; two days
    before, every entry of that date (and none other) is flagged.
    """
    from rooflinec.lints.context import LintContext
    from rooflinec.lints.versions import version_dates

    day = datetime.timedelta(days=1)
    assert [] == version_dates(LintContext.of(bundled, release - day))
    found = version_dates(LintContext.of(bundled, release - 2 * day))
    newest = [entry[:3] for entry in version_days(bundled) if entry[3] == release]
    assert len(newest) == len(found)
    for (kind, ident, version), diagnostic in zip(newest, found, strict=True):
        expected = (
            f"lint-dates: {kind} '{ident}' version {version} is dated {release.isoformat()},"
            f" after today ({(release - 2 * day).isoformat()}): date a change when it is made"
        )
        assert (expected, "lint-dates") == (diagnostic.message, diagnostic.code)


@pytest.mark.parametrize("day", ["0001-01-01", "1969-12-31", "2106-02-08", "9999-12-31"])
def test_any_calendar_date_survives_check_and_compile(day: str, tmp_path: Path) -> None:
    """Read, publication and version dates at the edges of the calendar crash nothing."""
    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    path = specs / "devices" / "nvidia-l40s.yaml"
    text = path.read_text("utf-8").replace("read: 2026-10-25", f"read: {day}")
    # Every version gets the same day, so the dates still run in order down the list.
    text, dated = re.subn(r"(\{version: \d+, date: )\d{4}-\d{2}-\d{2},", rf"\g<1>{day},", text)
    assert 2 <= dated
    path.write_text(text, "utf-8")
    code, output = check(specs, strict=False)
    assert (0, False) == (code, "internal error" in output), output
    buffer = io.StringIO()
    assert 0 == main(["compile", "--specs", str(specs), "--format", "json"], out=buffer)
    assert '"nvidia-l40s"' in buffer.getvalue()


@pytest.mark.parametrize(
    "slip", [s for s in SLIPS if s.breaks_bound], ids=[s.name for s in SLIPS if s.breaks_bound]
)
def test_planted_slip_under_a_serving_result_fails_its_bound(slip: Slip, tmp_path: Path) -> None:
    """A slip that slows a device the bundled serving results ran on makes one of them
    beat its bound: the lint warns, and the measured result turns it into an error."""
    specs, where = slip.plant(tmp_path)
    code, output = check(specs, strict=False)
    assert 1 == code
    assert f"{where}: warning: {slip.code}: " in output
    assert "better than its bound" in output
