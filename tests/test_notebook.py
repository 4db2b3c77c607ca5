"""`rooflinec.roofline_chart`: a device's roofline as an altair chart, for notebooks.

The chart must be the one the site draws: its spec is compared with the site's chart
builder and with the bytes of the site's downloadable `.vl.json`, as recorded in the
site golden.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import rooflinec
from rooflinec.engine.compiler import Compiled
from rooflinec.integrations.notebook import roofline_spec
from rooflinec.pipeline import compiled_or_raise
from rooflinec.site import charts

alt = pytest.importorskip("altair")

REPO = Path(__file__).resolve().parents[1]
SPECS = REPO / "specs"
DEVICE = "nvidia-h100-sxm"


@pytest.fixture(scope="module")
def bundled() -> Compiled:
    compiled: Compiled = compiled_or_raise(SPECS)
    return compiled


def _site_spec(compiled: Compiled, device: str, precision: str) -> dict[str, Any]:
    """The device page's chart: its first declared cases as markers."""
    results = compiled.select(devices=[device], declared_only=True)[: charts.MAX_MARKERS]
    return charts.device_roofline(compiled, device, results, precision).spec


def test_roofline_chart_has_the_sites_layers(bundled: Compiled) -> None:
    """An altair layer chart whose JSON is the site's: the roofs and the kernel markers,
    their data, axes and sliders."""
    chart = rooflinec.roofline_chart(DEVICE, specs=SPECS)
    assert isinstance(chart, alt.LayerChart)
    expected = _site_spec(bundled, DEVICE, "bf16")
    actual = chart.to_dict()
    assert ["roofs", "kernels"] == [layer["data"]["name"] for layer in actual["layer"]]
    assert expected["layer"] == actual["layer"]
    # The rest too, but `$schema`: altair may name its own Vega-Lite version there.
    del expected["$schema"], actual["$schema"]
    assert expected == actual


def test_default_specs_are_the_bundled_catalog(
    bundled: Compiled, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without `specs`, outside a folder with `./specs`, the bundled catalog is drawn."""
    monkeypatch.chdir(tmp_path)
    actual = rooflinec.roofline_chart(DEVICE).to_dict()
    assert _site_spec(bundled, DEVICE, "bf16")["datasets"] == actual["datasets"]


def test_spec_is_the_sites_bytes(bundled: Compiled) -> None:
    """For every device, the spec's JSON text is the site's `.vl.json`, byte for byte."""
    golden = json.loads((REPO / "tests/golden/site-sha256.json").read_text("utf-8"))
    for device in bundled.catalog.devices:
        text = charts.spec_json(roofline_spec(bundled, device))
        expected = golden[f"devices/{device}.roofline.vl.json"]
        assert expected == hashlib.sha256(text.encode("utf-8")).hexdigest(), device


def test_precision_moves_the_other_levels_ridges(bundled: Compiled) -> None:
    """`precision="fp8"` draws the L2 and L1 ridge points at the FP8 roof."""
    device = "amd-mi300x"
    chart = rooflinec.roofline_chart(device, specs=SPECS, precision="fp8")
    actual = chart.to_dict()
    assert _site_spec(bundled, device, "fp8")["datasets"] == actual["datasets"]
    ridges = {row["series"]: row for row in actual["datasets"]["roofs"]}
    peak = float(f"{float(bundled.devices[device].peaks['fp8']):.7g}")
    assert [peak, peak] == [ridges["ridge-l2"]["peak"], ridges["ridge-l1"]["peak"]]
    assert ["FP8 · INT8"] * 2 == [ridges["ridge-l2"]["key"], ridges["ridge-l1"]["key"]]
    default = rooflinec.roofline_chart(device, specs=SPECS).to_dict()
    assert default["datasets"]["roofs"] != actual["datasets"]["roofs"]


def test_h100_at_fp8_is_drawn(bundled: Compiled) -> None:
    """The issue's example: the H100 at FP8 is the site's chart at FP8."""
    actual = rooflinec.roofline_chart(DEVICE, specs=SPECS, precision="fp8").to_dict()
    assert _site_spec(bundled, DEVICE, "fp8")["layer"] == actual["layer"]


def test_unknown_device_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown device 'nvidia-h999'") as raised:
        rooflinec.roofline_chart("nvidia-h999", specs=SPECS)
    assert "nvidia-h100-sxm" in str(raised.value) and "amd-mi300x" in str(raised.value)


def test_precision_the_device_lacks_names_its_precisions(bundled: Compiled) -> None:
    """Apple's M3 Max has no FP8 peak; an unknown precision fails the same way."""
    with pytest.raises(ValueError) as raised:
        roofline_spec(bundled, "apple-m3-max", "fp8")
    expected = "device 'apple-m3-max' has no peak at precision 'fp8'; its precisions: fp32, bf16"
    assert expected == str(raised.value)
    with pytest.raises(ValueError, match="no peak at precision 'fp3'"):
        rooflinec.roofline_chart(DEVICE, specs=SPECS, precision="fp3")


def test_import_rooflinec_does_not_import_altair() -> None:
    """altair is loaded on first use of `roofline_chart`, not by `import rooflinec`."""
    code = (
        "import sys\n"
        "import rooflinec\n"
        "print('altair' in sys.modules, 'rooflinec.integrations.notebook' in sys.modules)\n"
        "rooflinec.roofline_chart\n"
        "print('altair' in sys.modules, 'roofline_chart' in dir(rooflinec))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert ["False False", "True True"] == out.stdout.split("\n")[:2]


def test_other_attributes_are_still_missing() -> None:
    with pytest.raises(AttributeError, match="no attribute 'roofline_charts'"):
        rooflinec.roofline_charts  # noqa: B018
