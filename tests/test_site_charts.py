"""Chart specs: plain Vega-Lite dicts, checked against the Vega-Lite schema their
`$schema` names and compiled to Vega by vl-convert, offline.

The schema is the one vega-altair bundles (altair is a test dependency); every chart of
the bundled and of a synthetic catalog's site is validated, not one of each kind.
"""

from __future__ import annotations

import importlib.resources
import json
import re
from pathlib import Path
from typing import Any

import pytest

from rooflinec.engine.compiler import Compiled
from rooflinec.pipeline import checked
from rooflinec.site import charts

REPO = Path(__file__).resolve().parents[1]
CHART_PRECISION = "bf16"


# --------------------------------------------------------------------------- catalogs


@pytest.fixture(scope="module")
def bundled() -> Compiled:
    result, diagnostics, _ = checked(REPO / "specs")
    assert isinstance(result, Compiled), diagnostics
    return result


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Compiled:
    """Two memory levels on every device, sustained shares and measured runs."""
    from benchmarks.synth import write_catalog

    folder = write_catalog(tmp_path_factory.mktemp("synth"), 6, 24)
    result, diagnostics, _ = checked(folder)
    assert isinstance(result, Compiled), diagnostics
    return result


def _charts(compiled: Compiled) -> list[tuple[str, charts.Chart]]:
    """Every chart of a catalog's site, and device rooflines without markers too."""
    out = []
    for device in compiled.catalog.devices:
        results = compiled.select(devices=[device], declared_only=True)
        for shown in (results, []):  # no markers: one layer, its data at the top level
            chart = charts.device_roofline(compiled, device, shown, CHART_PRECISION)
            out.append((f"{device} ({len(shown)})", chart))
    devices = list(compiled.catalog.devices)
    out.append(("comparison", charts.comparison_chart(compiled, devices, CHART_PRECISION)))
    for kernel in compiled.catalog.kernels:
        results = [r for r in compiled.results if r.kernel == kernel and r.declared]
        out.append((kernel, charts.kernel_chart(compiled, kernel, results)))
    return out


# --------------------------------------------------------------------------- schema

_SCHEMA_URL = re.compile(r"https://vega\.github\.io/schema/vega-lite/(v[0-9]+)\.[0-9.]+\.json")


@pytest.fixture(scope="module")
def vega_lite() -> Any:
    """A validator of the Vega-Lite schema the specs name (its major version), as bundled
    by the installed vega-altair."""
    alt = pytest.importorskip("altair")
    import jsonschema

    match = _SCHEMA_URL.fullmatch(charts.VEGA_LITE_SCHEMA)
    assert match is not None, charts.VEGA_LITE_SCHEMA
    major = match.group(1)
    if not alt.SCHEMA_VERSION.startswith(f"{major}."):
        pytest.skip(f"altair {alt.__version__} bundles Vega-Lite {alt.SCHEMA_VERSION}, not {major}")
    path = importlib.resources.files(f"altair.vegalite.{major}.schema") / "vega-lite-schema.json"
    schema = json.loads(path.read_text("utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


@pytest.mark.parametrize("catalog", ["bundled", "synthetic"])
def test_every_chart_is_valid_vega_lite(
    catalog: str, vega_lite: Any, request: pytest.FixtureRequest
) -> None:
    """Every spec, as written to its `.vl.json`, satisfies the Vega-Lite schema."""
    compiled = request.getfixturevalue(catalog)
    specs = _charts(compiled)
    assert (catalog == "synthetic") == any("measured" in c.spec["datasets"] for _, c in specs)
    for name, chart in specs:
        spec = json.loads(charts.spec_json(chart.spec))
        assert charts.VEGA_LITE_SCHEMA == spec["$schema"]
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in vega_lite.iter_errors(spec)]
        assert [] == errors, name


def test_schema_validation_catches_a_broken_spec(bundled: Compiled, vega_lite: Any) -> None:
    """The validator is not vacuous: a mark Vega-Lite does not know fails it."""
    spec = charts.device_roofline(bundled, "nvidia-h100-sxm", [], CHART_PRECISION).spec
    spec["layer"][0]["layer"][0]["mark"]["type"] = "sparkline"
    assert not vega_lite.is_valid(spec)


def test_specs_compile_to_vega(bundled: Compiled, synthetic: Compiled) -> None:
    """One chart of each shape compiles, with a mark and a signal for every slider."""
    import vl_convert

    seen: set[str] = set()
    for compiled in (bundled, synthetic):
        for name, chart in _charts(compiled):
            kind = f"{chart.name}-{len(chart.spec['layer']) if 'layer' in chart.spec else 0}"
            if kind in seen:
                continue
            seen.add(kind)
            vega = vl_convert.vegalite_to_vega(chart.spec)
            assert vega["marks"], name
            signals = {signal["name"] for signal in vega.get("signals", [])}
            assert {p["name"] for p in chart.spec.get("params", [])} <= signals, name
    assert {"roofline-1", "roofline-2", "roofline-4", "comparison-1", "attainable-0"} <= seen


def test_svg_of_a_device_is_its_roofline(bundled: Compiled) -> None:
    """The static rendering draws the chart with its title, the same bytes every time."""
    import vl_convert

    device = "nvidia-h100-sxm"
    results = bundled.select(devices=[device], declared_only=True)
    chart = charts.device_roofline(bundled, device, results, CHART_PRECISION)
    svg = charts.normalize_svg(vl_convert.vegalite_to_svg(chart.spec))
    assert svg.startswith("<svg")
    assert "Roofline of NVIDIA H100 SXM" in svg
    assert svg == charts.normalize_svg(vl_convert.vegalite_to_svg(chart.spec))


def test_svg_bytes_do_not_depend_on_what_was_rendered_before(bundled: Compiled) -> None:
    """Vega numbers clip paths per process; the rendering numbers them from 1 per chart."""
    import vl_convert

    spec = charts.comparison_chart(bundled, list(bundled.catalog.devices), "bf16").spec
    first, second = (vl_convert.vegalite_to_svg(spec) for _ in range(2))
    assert 'id="clip' in first
    assert charts.normalize_svg(first) == charts.normalize_svg(second)
    normal = charts.normalize_svg(second)
    assert 'id="clip1"' in normal and "url(#clip1)" in normal
    assert charts.normalize_svg(normal) == normal


def test_every_chart_names_the_bundled_font(bundled: Compiled) -> None:
    """vl-convert measures text with the fonts it finds: every chart names DejaVu Sans,
    which rooflinec ships (regular and bold: titles are bold) and registers, so an SVG's
    layout does not follow the fonts of the machine that renders it."""
    family = charts.CHART_FONT.split(",")[0]
    assert "DejaVu Sans" == family
    for name, chart in _charts(bundled):
        assert charts.CHART_FONT == chart.spec["config"]["font"], name
    for face in ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf"):
        data = (charts.FONTS / face).read_bytes()
        assert family.encode("utf-16-be") in data, face  # the family in its name table
    assert "Bitstream Vera" in (charts.FONTS / "LICENSE").read_text("utf-8")
    device = "nvidia-h100-sxm"
    spec = charts.device_roofline(bundled, device, [], CHART_PRECISION).spec
    svg = charts.render_svg(spec)
    assert f'font-family="{charts.CHART_FONT}"' in svg


def test_specs_do_not_share_mutable_parts(bundled: Compiled) -> None:
    """Each call gives a fresh spec: changing one never changes the next."""
    device = "nvidia-h100-sxm"
    first = charts.device_roofline(bundled, device, [], CHART_PRECISION).spec
    text = charts.spec_json(first)
    first["config"]["view"]["continuousWidth"] = 1
    first["encoding"]["x"]["axis"]["values"].append(1)
    first["params"][0]["bind"]["max"] = 9
    again = charts.device_roofline(bundled, device, [], CHART_PRECISION).spec
    assert charts.spec_json(again) == text


def test_building_charts_needs_no_altair() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from rooflinec.pipeline import checked\n"
        "from rooflinec.site import charts\n"
        "from pathlib import Path\n"
        f"compiled = checked(Path({str(REPO / 'specs')!r}))[0]\n"
        "d = next(iter(compiled.catalog.devices))\n"
        "charts.device_roofline(compiled, d, [r for r in compiled.results if r.device == d], "
        "'bf16')\n"
        "charts.comparison_chart(compiled, list(compiled.catalog.devices), 'bf16')\n"
        "print('altair' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
