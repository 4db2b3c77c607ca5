"""Interconnect levels, power and price on device specs: exact values, errors, lints.

Checks the figures of the bundled catalog (H100's NVLink, a bits figure, a bytes
figure per card), the per-direction and sustained arithmetic, that bits are accepted
only in a link's bandwidth (one error line at the field's file:line:col elsewhere), that
every spec error is a located error, and that each new lint fires on a planted slip and
never on the bundled catalog.
"""

from __future__ import annotations

import io
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rooflinec.assemble import build_catalog, catalog_or_raise
from rooflinec.catalog import Catalog
from rooflinec.cli.main import main
from rooflinec.lints import lint_catalog
from rooflinec.provenance import device_trails
from rooflinec.quantities import Dimension, QuantityError, parse_quantity
from tests.specfactory import BUNDLED, TOY_DEVICE, write_specs

GB = 10**9


@pytest.fixture(scope="module")
def bundled() -> Catalog:
    return catalog_or_raise(BUNDLED)


def toy(root: Path, extra: str) -> Path:
    """The toy device with `extra` YAML (interconnect, power, price) added."""
    return write_specs(root, devices={"toy": TOY_DEVICE + extra})


def check(specs: Path) -> tuple[int, list[str]]:
    buffer = io.StringIO()
    code = main(["check", "--specs", str(specs)], out=buffer)
    return code, buffer.getvalue().splitlines()


def located_errors(specs: Path) -> list[str]:
    """Every error line `check` prints for `specs`, without the folder."""
    code, lines = check(specs)
    assert 1 == code
    prefix = str(specs / "devices") + "/"
    return [line.removeprefix(prefix) for line in lines if ": error: " in line]


# --------------------------------------------------------------------------- values


def test_h100_nvlink_is_halved_to_450_gb_s_exactly(bundled: Catalog) -> None:
    """H100 SXM's 900 GB/s NVLink is bidirectional: 450 GB/s per direction, exactly."""
    fabric = bundled.devices["nvidia-h100-sxm"].interconnect["scale_up"]
    assert ("900 GB/s", "bidirectional") == (fabric.bandwidth.text, fabric.direction)
    assert Fraction(900 * GB) == fabric.bandwidth.value
    assert Fraction(450 * GB) == fabric.per_direction
    assert 8 == fabric.chips
    assert ("switched", "in-network") == (fabric.topology, fabric.reduction)


def test_h100_sustained_link_bandwidth(bundled: Catalog) -> None:
    """The measured ring share (82.3 %) applies to one direction: 370.35 GB/s, exactly."""
    device = bundled.devices["nvidia-h100-sxm"]
    assert Fraction(823, 1000) == device.interconnect["scale_up"].share
    assert Fraction(370_350_000_000) == device.link_bandwidth("scale_up")


def test_mi300x_mesh_latency_and_share(bundled: Catalog) -> None:
    """MI300X: 896 GB/s duplex over 7 links is 448 GB/s per direction; the least measured
    all-reduce is 9.92 µs; 70.83 % of one direction is sustained (317.3184 GB/s)."""
    fabric = bundled.devices["amd-mi300x"].interconnect["scale_up"]
    assert ("mesh", 8) == (fabric.topology, fabric.chips)
    assert Fraction(448 * GB) == fabric.per_direction
    assert fabric.latency is not None
    assert Fraction(992, 10**8) == fabric.latency.value
    assert Fraction(317_318_400_000) == fabric.sustained_per_direction


def test_400_gb_s_in_bits_is_50_gb_s_exactly(bundled: Catalog) -> None:
    """A scale-out figure printed in bits, 400 Gb/s, is 50 GB/s; unstated is taken as is."""
    fabric = bundled.devices["amd-mi300x"].interconnect["scale_out"]
    assert ("400 Gb/s", "unstated", True) == (
        fabric.bandwidth.text,
        fabric.direction,
        fabric.bandwidth.bits,
    )
    assert Fraction(50 * GB) == fabric.per_direction == fabric.sustained_per_direction


def test_figure_printed_per_system_is_divided_per_chip(bundled: Catalog) -> None:
    """Trainium2's EFA, 3,200 Gb/s per 16-chip instance, is 25 GB/s per chip."""
    fabric = bundled.devices["aws-trainium2"].interconnect["scale_out"]
    assert (16, Fraction(25 * GB)) == (fabric.bandwidth.chips, fabric.per_direction)


def test_gb200_scale_out_is_3_6_tb_s_per_72_chip_rack(bundled: Catalog) -> None:
    """GB200's scale-out, 3.6 TB/s per 72-GPU rack as a third party prints it, is taken as
    printed (direction unstated): 50 GB/s (400 Gb/s) per GPU and direction, exactly."""
    fabric = bundled.devices["nvidia-gb200"].interconnect["scale_out"]
    assert ("3.6 TB/s", "unstated", 72, "scaling-book-gpus") == (
        fabric.bandwidth.text,
        fabric.direction,
        fabric.bandwidth.chips,
        fabric.bandwidth.source,
    )
    assert Fraction(50 * GB) == fabric.per_direction == fabric.sustained_per_direction


def test_which_devices_have_a_scale_out_level(bundled: Catalog) -> None:
    """15 devices print a scale-out network per chip or per system; GB200 is the latest."""
    expected = [
        "amd-mi300x",
        "aws-trainium",
        "aws-trainium2",
        "google-tpu-v5e",
        "google-tpu-v5p",
        "huawei-ascend-910c",
        "intel-gaudi2",
        "intel-gaudi3",
        "nvidia-a100-sxm-80gb",
        "nvidia-b200",
        "nvidia-b300",
        "nvidia-gb200",
        "nvidia-gh200",
        "nvidia-h100-sxm",
        "nvidia-h200-sxm",
    ]
    assert expected == sorted(
        d.id for d in bundled.devices.values() if "scale_out" in d.interconnect
    )


def test_power_as_printed(bundled: Catalog) -> None:
    """Powers keep their kind; one printed per card is divided among its chips."""
    h100 = bundled.devices["nvidia-h100-sxm"].power
    mi250x = bundled.devices["amd-mi250x"].power
    assert h100 is not None and mi250x is not None
    assert (Fraction(700), "TDP") == (h100.value, h100.kind)
    assert (Fraction(560), 2, Fraction(280)) == (mi250x.value, mi250x.chips, mi250x.per_chip)


def test_coverage_of_the_bundled_catalog(bundled: Catalog) -> None:
    """46 devices give a power; 25 an interconnect level; no device a price (none was
    found on a provider's own pricing page)."""
    devices = bundled.devices.values()
    assert 46 == sum(d.power is not None for d in devices)
    assert 25 == sum(bool(d.interconnect) for d in devices)
    assert [] == [d.id for d in devices if d.price is not None]


def test_trails_of_the_new_figures(bundled: Catalog) -> None:
    """The H100's trails list the link (printed, ÷ 2 per direction, × share), the domain
    and share with their own sources, and the power."""
    trails = {t.field: t for t in device_trails(bundled, "nvidia-h100-sxm")}
    link = trails["interconnect.scale_up"]
    assert ["printed", "direction", "sustained"] == [s.operation for s in link.steps]
    assert Fraction(370_350_000_000) == link.final
    assert "mlperf-v41-nvidia" == trails["interconnect.scale_up.domain"].source.id  # type: ignore[union-attr]
    assert {
        "interconnect.scale_up.sustained",
        "interconnect.scale_out",
        "interconnect.scale_out.sustained",
        "power",
    } <= set(trails)
    assert "TDP" == trails["power"].detail


@given(st.integers(min_value=1, max_value=10**6), st.sampled_from(["k", "M", "G", "T"]))
def test_bits_are_an_eighth_of_bytes(number: int, prefix: str) -> None:
    """N Xb/s is exactly N/8 XB/s, wherever a link's bandwidth is parsed."""
    bits = parse_quantity(f"{number} {prefix}b/s", Dimension.BANDWIDTH, bits=True)
    assert parse_quantity(f"{number} {prefix}B/s", Dimension.BANDWIDTH).value == bits.value * 8


def test_bits_refused_outside_a_link() -> None:
    """Without `bits`, a bit rate is refused with the hint that says where it is allowed."""
    with pytest.raises(QuantityError) as info:
        parse_quantity("400 Gb/s", Dimension.BANDWIDTH)
    assert "only an interconnect's bandwidth accepts" in str(info.value)


# --------------------------------------------------------------------------- errors


def test_bits_in_a_memory_bandwidth_is_an_error_at_its_column(tmp_path: Path) -> None:
    """`3.35 Tb/s` for DRAM is one error at the unit's file:line:col, exit 1."""
    specs = write_specs(tmp_path, devices={"toy": TOY_DEVICE.replace("1 TB/s", "1 Tb/s")})
    errors = located_errors(specs)
    assert 1 == len(errors)
    assert errors[0].startswith("toy.yaml:8:35: error: unknown unit 'Tb/s' (bytes are written B")


def test_a_dangling_source_is_an_error(tmp_path: Path) -> None:
    """A link, domain or power citing an undeclared source is an error at that field."""
    specs = toy(
        tmp_path,
        "interconnect:\n"
        "  scale_up:\n"
        "    label: NVLink\n"
        "    bandwidth: 900 GB/s\n"
        "    direction: bidirectional\n"
        "    domain: {value: 8, source: nowhere}\n"
        "    source: s\n"
        "power: {value: 700 W, kind: TDP, source: elsewhere}\n",
    )
    errors = located_errors(specs)
    assert [
        "toy.yaml:14:32: error: unknown source 'nowhere' (this file's sources: s)"
        " [$.interconnect.scale_up.domain.source]",
        "toy.yaml:16:42: error: unknown source 'elsewhere' (this file's sources: s)"
        " [$.power.source]",
    ] == errors


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (
            "power: {value: 700 GB, kind: TDP, source: s}\n",
            "toy.yaml:9:20: error: expected a power such as '700 W', got a size in bytes in 'GB'",
        ),
        (
            "price: {value: 2.99 USD, date: 2026-11-15, source: s}\n",
            "toy.yaml:9:21: error: unknown unit 'USD'",
        ),
        (
            "interconnect:\n  scale_up: {label: X, bandwidth: 9 GB/s, source: s}\n",
            "toy.yaml:10:13: error: missing required field 'direction'",
        ),
        (
            "interconnect:\n"
            "  scale_up: {label: X, bandwidth: 9 GB/s, direction: both, source: s}\n",
            "toy.yaml:10:54: error: 'both' is not one of",
        ),
        (
            "interconnect:\n"
            "  scale_up: {label: X, bandwidth: 9 GB/s, direction: unstated, source: s,"
            " latency: 5 GB}\n",
            "toy.yaml:10:86: error: expected a time such as '1.4 ms', got a size in bytes in 'GB'",
        ),
        (
            "interconnect:\n"
            "  nvlink: {label: X, bandwidth: 9 GB/s, direction: unstated, source: s}\n",
            "toy.yaml:10:3: error: unknown field 'nvlink'",
        ),
    ],
)
def test_bad_figures_are_located_errors(tmp_path: Path, extra: str, expected: str) -> None:
    """Each bad figure is one error line at its own file:line:col."""
    errors = located_errors(toy(tmp_path, extra))
    assert 1 == len(errors), errors
    assert errors[0].startswith(expected), errors


# --------------------------------------------------------------------------- lints


def lint_codes(specs: Path) -> list[str]:
    catalog, diagnostics = build_catalog(specs)
    assert catalog is not None, diagnostics
    return [f"{d.location.line}:{d.code}" for d in lint_catalog(catalog) if d.code in LINK_LINTS]


LINK_LINTS = {"lint-direction", "lint-link-share", "lint-domain"}


def test_per_direction_quoted_as_bidirectional(tmp_path: Path) -> None:
    """A per-direction figure whose quote says bidirectional is flagged at its direction."""
    specs = toy(
        tmp_path,
        "interconnect:\n"
        "  scale_up:\n"
        "    label: NVLink\n"
        "    bandwidth: 900 GB/s\n"
        "    direction: per-direction\n"
        "    source: s\n"
        '    quote: "900 GB/s bi-directional"\n',
    )
    assert ["13:lint-direction"] == lint_codes(specs)


@pytest.mark.parametrize("words", ["in both directions", "full-duplex", "Bidirectional"])
def test_each_wording_of_both_directions(tmp_path: Path, words: str) -> None:
    """ "both directions", "full-duplex" and "Bidirectional" all say it."""
    specs = toy(
        tmp_path,
        "interconnect:\n"
        "  scale_out: {label: NIC, bandwidth: 400 Gb/s, direction: per-direction, source: s,"
        f' quote: "400 Gb/s {words}"}}\n',
    )
    assert ["10:lint-direction"] == lint_codes(specs)


def test_share_above_100_percent(tmp_path: Path) -> None:
    """A measured share over 100 % parses, and is flagged at the share."""
    specs = toy(
        tmp_path,
        "interconnect:\n"
        "  scale_up:\n"
        "    label: NVLink\n"
        "    bandwidth: 900 GB/s\n"
        "    direction: bidirectional\n"
        "    sustained: {share: 107%, source: s}\n"
        "    source: s\n",
    )
    assert ["14:lint-link-share"] == lint_codes(specs)


def test_domain_of_one_with_a_bandwidth(tmp_path: Path) -> None:
    """A level with a bandwidth over a domain of one chip is flagged at the domain."""
    specs = toy(
        tmp_path,
        "interconnect:\n"
        "  scale_up: {label: PCIe, bandwidth: 64 GB/s, direction: unstated, domain: 1,"
        " source: s}\n",
    )
    assert ["10:lint-domain"] == lint_codes(specs)


def test_a_sound_level_has_no_link_lint(tmp_path: Path) -> None:
    """Bidirectional, 82 %, a domain of 8: none of the three lints fires."""
    specs = toy(
        tmp_path,
        "interconnect:\n"
        "  scale_up:\n"
        "    label: NVLink\n"
        "    bandwidth: 900 GB/s\n"
        "    direction: bidirectional\n"
        "    domain: 8\n"
        "    sustained: {share: 82%, source: s}\n"
        "    source: s\n"
        '    quote: "900 GB/s bidirectional"\n',
    )
    assert [] == lint_codes(specs)


def test_no_link_lint_on_the_bundled_catalog(bundled: Catalog) -> None:
    """The bundled catalog passes the three interconnect lints."""
    assert [] == [d for d in lint_catalog(bundled) if d.code in LINK_LINTS]


def test_quote_number_covers_the_new_figures(tmp_path: Path) -> None:
    """A power whose quote prints another number is flagged like any figure."""
    specs = toy(tmp_path, 'power: {value: 700 W, kind: TDP, source: s, quote: "TDP 650 W"}\n')
    catalog, _ = build_catalog(specs)
    assert catalog is not None
    codes = [(d.location.line, d.code) for d in lint_catalog(catalog)]
    assert (9, "lint-quote-number") in codes


@pytest.mark.parametrize(
    ("device", "measured"),
    [
        ("nvidia-h100-sxm", Fraction(370 * GB)),  # NCCL ring bus bandwidth, 8 GPUs
        ("nvidia-h200-sxm", Fraction(3672 * GB, 10)),  # nccl-tests ring, 16 GiB
        ("nvidia-a100-sxm-80gb", Fraction(23489 * GB, 100)),  # nccl-tests, 16 GiB
        ("nvidia-b200", Fraction(6822 * GB, 10)),  # ring, 8 GiB
        ("nvidia-gb200", Fraction(83457 * GB, 100)),  # 72 GPUs, 8 GiB
        ("amd-mi300x", Fraction(31729 * GB, 100)),  # rccl-tests, 8 GiB
    ],
)
def test_sustained_links_stay_at_or_above_their_measurements(
    bundled: Catalog, device: str, measured: Fraction
) -> None:
    """A share rounded from a measurement never puts the sustained rate below the bus
    bandwidth measured, so a time from it stays a lower bound."""
    assert bundled.devices[device].link_bandwidth("scale_up") >= measured
