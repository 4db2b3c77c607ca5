"""The site shows measured runs: traffic against the model on kernel pages, the measured
points on device charts, and each measurement's source and the launch floor in the audit."""

from __future__ import annotations

from pathlib import Path

import pytest

from rooflinec.site.build import build_site
from tests.measuredspecs import write_measured


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("measured-site")
    specs = write_measured(root)
    out = root / "site"
    build_site(specs, out, options={"svg": False})
    return out


def _page(site: Path, name: str) -> str:
    return (site / name).read_text("utf-8")


def test_kernel_page_compares_measured_and_modelled_traffic(site: Path) -> None:
    """One row per counted level: modelled and measured bytes, ratio, bandwidth share."""
    text = _page(site, "kernels/axpy.html")
    assert "Measured against modelled traffic" in text
    assert "<strong>1.2</strong>" in text  # the DRAM traffic ratio
    assert "7.2 GB" in text and "6 GB" in text
    assert "3.6 TB/s (90%)" in text


def test_audit_lists_measurement_sources_and_the_floor(site: Path) -> None:
    """The run's tool and command on the device it ran on; the floor where it is given."""
    measured = _page(site, "devices/gpu-b/audit.html")
    assert "Measured runs on this device" in measured
    assert "Nsight Compute 2025.1" in measured
    assert "ncu --csv --page raw ./axpy" in measured
    floored = _page(site, "devices/gpu-a/audit.html")
    assert "Launch latency floor" in floored and "2 µs per launch" in floored


def test_latency_bound_result_is_named_on_the_kernel_page(site: Path) -> None:
    """The tiny case on the floored device shows `latency` and its 2 µs."""
    text = _page(site, "kernels/axpy.html")
    assert "latency" in text and "2 µs" in text


def test_device_page_states_its_floor(site: Path) -> None:
    """A device with a floor says so on its page; one without says nothing of it."""
    assert "Launch latency floor" in _page(site, "devices/gpu-a.html")
    assert "Launch latency floor" not in _page(site, "devices/gpu-b.html")
