"""Provenance: each figure's trail from the printed value to the one the compiler uses."""

from __future__ import annotations

import csv
import datetime
from fractions import Fraction
from pathlib import Path

import pytest

from rooflinec.assemble import catalog_or_raise
from rooflinec.catalog import Catalog
from rooflinec.engine.compiler import Compiled, compile_catalog
from rooflinec.provenance import (
    FigureTrail,
    Step,
    conflicts,
    device_trails,
    source_usage,
    trails,
)
from tests.specfactory import BUNDLED, write_specs

T = 10**12
TODAY = datetime.date(2026, 11, 30)


@pytest.fixture(scope="module")
def bundled() -> Catalog:
    return catalog_or_raise(BUNDLED)


@pytest.fixture(scope="module")
def compiled(bundled: Catalog) -> Compiled:
    return compile_catalog(bundled)


def trail(catalog: Catalog, device: str, field: str) -> FigureTrail:
    return next(t for t in device_trails(catalog, device, today=TODAY) if t.field == field)


def test_h100_bf16_is_halved_then_sustained(bundled: Catalog) -> None:
    """H100 BF16: printed 1979 TFLOP/s → ÷ 2 for 2:4 sparsity → × 100 % → 989.5 TFLOP/s."""
    bf16 = trail(bundled, "nvidia-h100-sxm", "compute.bf16")
    expected = (
        Step("printed", "printed 1979 TFLOP/s", Fraction(1), Fraction(1979 * T), "FLOP/s"),
        Step(
            "sparsity",
            "÷ 2 (printed with 2:4 sparsity)",
            Fraction(1, 2),
            Fraction(9895, 10) * T,
            "FLOP/s",
        ),
        Step("sustained", "× 100% sustained", Fraction(1), Fraction(9895, 10) * T, "FLOP/s"),
    )
    assert expected == bf16.steps
    assert Fraction(9895, 10) * T == bf16.final


def test_step_text(bundled: Catalog) -> None:
    """Steps read as the audit page shows them."""
    bf16 = trail(bundled, "nvidia-h100-sxm", "compute.bf16")
    assert [
        "printed 1979 TFLOP/s",
        "÷ 2 (printed with 2:4 sparsity) → 989.5 TFLOP/s",
        "× 100% sustained → 989.5 TFLOP/s",
    ] == [s.text for s in bf16.steps]


def test_h100_bf16_source_and_quote(bundled: Catalog) -> None:
    """The trail carries the vendor source, its read date and age, and the verbatim quote."""
    bf16 = trail(bundled, "nvidia-h100-sxm", "compute.bf16")
    assert bf16.source is not None
    assert ("nvidia-h100", "vendor", "2026-10-25", 36, False) == (
        bf16.source.id,
        bf16.source.kind,
        bf16.source.read,
        bf16.source.age_days,
        bf16.source.stale,
    )
    assert "BFLOAT16 Tensor コア | 1,979 TFLOPS* | 1,513 TFLOPS* |" == bf16.quote
    assert ("2:4", None, "1979 TFLOP/s", "FLOP/s") == (
        bf16.sparsity,
        bf16.pipe,
        bf16.printed,
        bf16.unit,
    )


def test_gaudi3_bf16_is_a_conflict(bundled: Catalog) -> None:
    """Gaudi 3 BF16: the method's 1678 against Intel's 1835 is a conflict, spread ≈ +9.4 %."""
    bf16 = trail(bundled, "intel-gaudi3", "compute.bf16")
    assert bf16.conflict
    assert bf16.spread is not None
    assert Fraction(1835 - 1678, 1678) == bf16.spread[1]
    assert 0.094 == round(float(bf16.spread[1]), 3)
    intel = next(a for a in bf16.alternatives if a.printed == "1835 TFLOP/s")
    assert (True, True, "intel-gaudi3-hotchips") == (
        intel.conflicting,
        intel.comparable,
        intel.source.id if intel.source else None,
    )


def test_gaudi3_vector_rate_is_not_compared(bundled: Catalog) -> None:
    """The 28.7 TFLOP/s vector (TPC) rate is another pipe: listed, not in the spread."""
    bf16 = trail(bundled, "intel-gaudi3", "compute.bf16")
    vector = next(a for a in bf16.alternatives if a.pipe == "vector")
    assert (False, False) == (vector.comparable, vector.conflicting)
    assert bf16.spread is not None
    assert Fraction(459 - 1678, 1678) == bf16.spread[0]  # the third party's FP16 column


def test_gaudi3_1678_traces_to_the_1677_quote(bundled: Catalog) -> None:
    """The method's 1678 has no quote; the 1677 alternative's quote is within 0.1 %."""
    bf16 = trail(bundled, "intel-gaudi3", "compute.bf16")
    assert bf16.quote is None
    assert bf16.trace is not None
    assert ("ml-engineering-accelerators", 1) == (bf16.trace.source, bf16.trace.alternative)
    assert "1677 TFLOP/s" == bf16.alternatives[1].printed


def test_a100_dense_sparse_pair(bundled: Catalog) -> None:
    """A100 BF16: 312 dense, with 624 at 2:4 as an alternative whose dense value agrees."""
    bf16 = trail(bundled, "nvidia-a100-sxm-80gb", "compute.bf16")
    assert [Fraction(1), Fraction(1)] == [s.factor for s in bf16.steps]
    sparse = bf16.alternatives[0]
    assert ("2:4", Fraction(624 * T), Fraction(312 * T), Fraction(0)) == (
        sparse.sparsity,
        sparse.value,
        sparse.dense,
        sparse.relative,
    )
    assert (False, (Fraction(0), Fraction(0))) == (bf16.conflict, bf16.spread)


def test_bandwidth_trail(bundled: Catalog) -> None:
    """A bandwidth has no sparsity step; its field is the memory role."""
    dram = trail(bundled, "nvidia-h100-sxm", "memory.dram")
    assert ("bandwidth", "dram", "HBM3", "B/s") == (dram.kind, dram.key, dram.label, dram.unit)
    assert [("printed", Fraction(335 * 10**10)), ("sustained", Fraction(335 * 10**10))] == [
        (s.operation, s.result) for s in dram.steps
    ]


def test_capacity_trail(bundled: Catalog) -> None:
    """A capacity is listed as printed, with its quote, and nothing applied to it."""
    cap = trail(bundled, "google-tpu-v5p", "memory.dram.capacity")
    assert ("capacity", "95 GiB", Fraction(95 * 2**30), "HBM capacity per chip (GiB) | 95 |") == (
        cap.kind,
        cap.printed,
        cap.final,
        cap.quote,
    )
    lines = (BUNDLED / "devices" / "google-tpu-v5p.yaml").read_text("utf-8").splitlines()
    assert ("$.memory.dram.capacity.value", lines.index("      value: 95 GiB") + 1) == (
        "$." + ".".join(str(p) for p in cap.path),
        cap.location.line,
    )


def test_every_figure_traces_to_a_quote(bundled: Catalog) -> None:
    """Every peak, bandwidth and capacity of the catalog traces to a verbatim quote."""
    assert [] == [(t.device, t.field) for t in trails(bundled, today=TODAY) if t.trace is None]


def test_sustained_shares_are_steps(tmp_path: Path) -> None:
    """Shares below 100 % are steps with their exact factor; a level's own share wins."""
    device = """\
    id: chip
    name: Chip
    vendor: Test
    kind: npu
    compute:
      bf16: {peak: 800 TFLOP/s, source: s, quote: "BF16 800 TFLOPS"}
    memory:
      dram: {label: LPDDR5X, bandwidth: 500 GB/s, source: s, quote: "500 GB/s"}
      l2: {label: SRAM, bandwidth: 8 TB/s, source: s, sustained: 50%, quote: "8 TB/s"}
    sustained: {compute: 80%, memory: 90%}
    """
    catalog = catalog_or_raise(write_specs(tmp_path, {"chip": device}))
    peak, dram, l2 = device_trails(catalog, "chip", today=TODAY)
    assert [
        ("× 80% sustained", Fraction(4, 5), Fraction(640 * T)),
        ("× 90% sustained", Fraction(9, 10), Fraction(450 * 10**9)),
        ("× 50% sustained", Fraction(1, 2), Fraction(4 * T)),
    ] == [(t.steps[-1].label, t.steps[-1].factor, t.final) for t in (peak, dram, l2)]
    assert compile_catalog(catalog).devices["chip"].peaks["bf16"] == peak.final


def test_conflicts_across_the_catalog(bundled: Catalog) -> None:
    """Conflicts include Gaudi 3 BF16 and MI300X's L2 (34.4 vs 51.6 TB/s), not A100 BF16."""
    found = {(t.device, t.field) for t in conflicts(bundled, today=TODAY)}
    assert {("intel-gaudi3", "compute.bf16"), ("amd-mi300x", "memory.l1")} <= found
    assert ("nvidia-a100-sxm-80gb", "compute.bf16") not in found
    assert all(t.conflict for t in conflicts(bundled, today=TODAY))


def test_source_usage(bundled: Catalog) -> None:
    """Each source lists the figures that lean on it, as figure or alternative, and its age."""
    usage = {u.source.id: u for u in source_usage(bundled, today=TODAY)}
    lenovo = usage["lenovo-lp2226"]
    assert (("nvidia-b200",), 36) == (lenovo.devices, lenovo.source.age_days)
    assert [("compute.bf16", "figure", False), ("memory.dram", "figure", False)] == [
        (u.field, u.role, u.quoted) for u in lenovo.uses
    ]
    hopper = usage["nvidia-hopper-in-depth"]
    assert ("nvidia-a100-sxm-80gb", "nvidia-h100-pcie", "nvidia-h100-sxm") == hopper.devices
    assert 100 == hopper.source.age_days
    assert {"figure", "alternative"} == {u.role for u in hopper.uses}


def test_declared_but_unused_source_is_listed(bundled: Catalog) -> None:
    """A source no figure cites is still listed, with no uses (the site can show it)."""
    usage = {u.source.id: u for u in source_usage(bundled, today=TODAY)}
    assert () == usage["reachdog-l40s"].uses


def test_source_usage_is_oldest_first(bundled: Catalog) -> None:
    """Sources come oldest read first: the ones to re-read lead."""
    reads = [u.source.read for u in source_usage(bundled, today=TODAY)]
    assert sorted(reads) == reads
    assert "2026-08-22" == reads[0]


# devices.md reference figures: BF16 dense peak (TFLOP/s) and DRAM bandwidth (TB/s).
REFERENCE = {
    "nvidia-h100-sxm": (Fraction("989.5"), Fraction("3.35")),
    "nvidia-b200": (Fraction(2250), Fraction("7.7")),
    "amd-mi300x": (Fraction("1307.4"), Fraction("5.3")),
    "google-tpu-v5p": (Fraction(459), Fraction("2.765")),
    "intel-gaudi3": (Fraction(1678), Fraction("3.7")),
    "nvidia-h200-sxm": (Fraction("989.5"), Fraction("4.8")),
    "nvidia-a100-sxm-80gb": (Fraction(312), Fraction("2.039")),
    "amd-mi325x": (Fraction("1307.4"), Fraction("6.0")),
    "amd-mi355x": (Fraction(2500), Fraction(8)),
    "google-tpu-v5e": (Fraction(197), Fraction("0.819")),
    "google-tpu-v6e": (Fraction(918), Fraction("1.638")),
    "nvidia-l40s": (Fraction("362.05"), Fraction("0.864")),
    "nvidia-h100-pcie": (Fraction("756.5"), Fraction("2.0")),
    "nvidia-gb200": (Fraction(2500), Fraction(8)),
    "apple-m3-max": (Fraction("14.32"), Fraction("0.4")),  # the FP16 estimate, 400 GB/s
}


def grown_reference_devices() -> set[str]:
    """Devices of the grown references' ridge tables (`tests/ridges/*.csv`, see
    test_reference_ridges.py), the ones devices.md does not cover."""
    devices: set[str] = set()
    for table in (Path(__file__).parent / "ridges").glob("*.csv"):
        with table.open(encoding="utf-8", newline="") as f:
            devices |= {row["device"] for row in csv.DictReader(f)}
    return devices


def test_reference_covers_the_catalog(bundled: Catalog) -> None:
    """Every device of the catalog has a reference ridge (devices.md's below, or the grown
    references' tables), and no reference names a device the catalog lacks."""
    assert sorted(bundled.devices) == sorted(grown_reference_devices() | set(REFERENCE))


@pytest.mark.parametrize("device", sorted(REFERENCE))
def test_ridge_agrees_with_devices_md(compiled: Compiled, device: str) -> None:
    """The BF16/DRAM ridge point agrees with devices.md's figures to 0.5 %."""
    peak, bandwidth = REFERENCE[device]
    expected = peak / bandwidth  # TFLOP/s over TB/s: FLOP/B
    actual = compiled.devices[device].ridges["bf16"]["dram"]
    assert abs(actual / expected - 1) <= Fraction(5, 1000), (float(expected), float(actual))


def test_trails_are_computed_once_per_catalog_and_day(bundled: Catalog) -> None:
    """The lints, the audit pages and both catalog downloads of one build ask for the same
    trails: the second request returns the first answer; another day is another answer."""
    first = device_trails(bundled, "nvidia-h100-sxm", today=TODAY)
    assert first is device_trails(bundled, "nvidia-h100-sxm", today=TODAY)
    same = [t for t in trails(bundled, today=TODAY) if t.device == "nvidia-h100-sxm"]
    assert all(a is b for a, b in zip(first, same, strict=True))
    later = device_trails(bundled, "nvidia-h100-sxm", today=TODAY + datetime.timedelta(days=400))
    assert later is not first
    assert [t.field for t in first] == [t.field for t in later]
    assert (36, 436) == (
        first[0].source.age_days if first[0].source else None,
        later[0].source.age_days if later[0].source else None,
    )


CARD = """\
id: card-of-two
name: A card of two chips
vendor: A vendor
family: Test
form: card
compute:
  bf16: {peak: 400 TFLOP/s, sparsity: "2:4", chips: 2, source: s, quote: "BF16 400 TFLOPS per card"}
memory:
  dram:
    label: GDDR6
    bandwidth: 1 TB/s
    capacity: 48 GB
    chips: 2
    source: s
    quote: "1 TB/s and 48 GB per card"
"""


def test_per_card_figures_are_divided_per_chip_as_an_audit_step(tmp_path: Path) -> None:
    """A figure printed for a card of two chips: the device (one chip) takes half, and the
    trail shows the division between the printed value and the sparsity step."""
    catalog = catalog_or_raise(write_specs(tmp_path, devices={"card-of-two": CARD}))
    device = catalog.devices["card-of-two"]
    assert ("Test", "card") == (device.family, device.form)
    assert Fraction(100 * 10**12) == device.peak("bf16")
    assert Fraction(5 * 10**11) == device.bandwidth("dram")
    figures = compile_catalog(catalog).devices["card-of-two"]
    assert Fraction(200) == figures.ridges["bf16"]["dram"]
    trails = {t.field: t for t in device_trails(catalog, "card-of-two")}
    peak = trails["compute.bf16"]
    assert ["printed", "chips", "sparsity", "sustained"] == [s.operation for s in peak.steps]
    assert "÷ 2 (printed for 2 chips; this device is one) → 200 TFLOP/s" == peak.steps[1].text
    assert Fraction(100 * 10**12) == peak.final
    capacity = trails["memory.dram.capacity"]
    assert Fraction(24 * 10**9) == capacity.final


def test_trails_are_worked_out_again_only_for_a_changed_device(tmp_path: Path) -> None:
    """Across two catalogs of one folder (as `serve` compiles them), a device whose spec
    did not change keeps its trails; an edited device's (a value, or only its lines,
    which the trails cite) are worked out again and read the new spec."""
    import shutil

    from rooflinec.provenance import device_trails

    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    day = datetime.date(2026, 11, 30)
    first = catalog_or_raise(specs)
    kept = device_trails(first, "nvidia-h100-sxm", today=day)
    edited = device_trails(first, "amd-mi100", today=day)
    path = specs / "devices" / "amd-mi100.yaml"
    path.write_text("# a comment moves every line\n" + path.read_text("utf-8"), "utf-8")
    second = catalog_or_raise(specs)
    assert kept is device_trails(second, "nvidia-h100-sxm", today=day)
    moved = device_trails(second, "amd-mi100", today=day)
    assert moved is not edited
    assert [t.location.line + 1 for t in edited] == [t.location.line for t in moved]
