"""Chart specs: the Vega-Lite that `charts` writes as plain dicts is what vega-altair writes.

`rooflinec.site.charts` builds its specs as dicts (altair took ~0.7 s a device chart). The
reference here builds the same charts from the same parts with altair, the way `charts`
did before, and the two must give the same JSON text, number types included (`1` and
`1.0` are different bytes in the downloadable spec). The specs are also checked against
the Vega-Lite schema and compiled to Vega by vl-convert.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rooflinec.cli.commands import checked
from rooflinec.compiler import Compiled
from rooflinec.site import charts

REPO = Path(__file__).resolve().parents[1]
CHART_PRECISION = "bf16"

alt = pytest.importorskip("altair")


# --------------------------------------------------------------------------- altair reference


def _altair_sliders(sliders: list[charts.Slider]) -> list[dict[str, Any]]:
    return [
        alt.param(
            name=s.name,
            value=s.value,
            bind=alt.binding_range(min=s.low, max=s.high, step=s.step, name=s.label),
        ).param.to_dict(validate=False)
        for s in sliders
    ]


def _altair_scale_encodings(scales: charts.Scales) -> tuple[Any, Any]:
    x_min, x_max = scales.x_domain
    y_min, y_max = scales.y_domain
    x = alt.X(
        "x:Q",
        scale=alt.Scale(type="log", domain=[x_min, x_max], nice=False),
        axis=alt.Axis(
            title=scales.x_title, format="~r", grid=True, values=charts._decades(x_min, x_max)
        ),
    )
    y = alt.Y(
        "y:Q",
        scale=alt.Scale(type="log", domain=[y_min, y_max], nice=False),
        axis=alt.Axis(
            title=scales.y_title, format="~s", grid=True, values=charts._decades(y_min, y_max)
        ),
    )
    return x, y


def _altair_roofline(r: charts.Roofline) -> dict[str, Any]:
    """A roofline as `charts` built it with altair (5.x/6.x) until the dicts replaced it."""
    x, y = _altair_scale_encodings(r.scales)
    color = alt.Color(
        "key:N",
        scale=alt.Scale(domain=r.color_domain, range=r.color_range),
        legend=alt.Legend(**r.color_legend),
    )
    base = alt.Chart()
    line_encoding: dict[str, Any] = {"detail": "series:N", "order": "x:Q"}
    if r.dash is not None:
        domain, dashes, legend = r.dash
        line_encoding["strokeDash"] = alt.StrokeDash(
            "level:N",
            scale=alt.Scale(domain=domain, range=dashes),
            legend=alt.Legend(title="Memory level") if legend else None,
        )
    lines = base.mark_line(clip=True, strokeWidth=2).encode(**line_encoding)
    ridges = (
        base.transform_filter("datum.kind === 'ridge' && datum.marker !== false")
        .transform_calculate(
            ridge_label="format(datum.x, '.4~r') + ' ' + datum.unit + '/B'",
            peak_label="format(datum.pk, '.4~s') + datum.unit + '/s'",
            bw_label="format(datum.bwv, '.4~s') + 'B/s'",
        )
        .mark_point(filled=True, size=60, clip=True, opacity=1)
        .encode(
            tooltip=[
                *(alt.Tooltip(field, title=title) for field, title in r.ridge_tooltip),
                alt.Tooltip("ridge_label:N", title="ridge point"),
                alt.Tooltip("peak_label:N", title="peak"),
                alt.Tooltip("bw_label:N", title="bandwidth"),
            ],
        )
    )
    roofs = (
        alt.LayerChart(data=alt.NamedData(name="roofs"), layer=[lines, ridges])
        .transform_calculate(pk=f"datum.peak * {r.peak_expr}", bwv=f"datum.bw * {r.bw_expr}")
        .transform_calculate(x="datum.kind === 'ridge' ? datum.pk / datum.bwv : datum.x0")
        .transform_calculate(y="min(datum.pk, datum.bwv * datum.x)")
    )
    layers = [roofs]
    if "kernels" in r.datasets:
        kernel_base = alt.Chart()
        tooltip = [
            alt.Tooltip("n:N", title="#"),
            alt.Tooltip("case:N", title="case"),
            alt.Tooltip("key:N", title="precision"),
            alt.Tooltip("intensity_label:N", title="intensity"),
            alt.Tooltip("attainable_label:N", title="attainable"),
            alt.Tooltip("bound:N", title="limited by"),
        ]
        kernel_layers = [
            kernel_base.mark_point(
                filled=True, size=70, stroke="black", strokeWidth=0.8, opacity=1, clip=True
            ).encode(tooltip=tooltip)
        ]
        for rest, dx, dy in ((0, 6, -9), (1, 6, 14)):
            kernel_layers.append(
                kernel_base.transform_filter(f"datum.slot === {rest}")
                .mark_text(
                    dx=dx, dy=dy, fontSize=11, clip=True, align="left" if dx > 0 else "right"
                )
                .encode(text="n:N", color=alt.value("black"))
            )
        layers.append(
            alt.LayerChart(data=alt.NamedData(name="kernels"), layer=kernel_layers)
            .transform_calculate(
                pk=f"datum.peak * {r.peak_expr}",
                mv=f"datum.mem === null ? null : datum.mem * {r.bw_expr}",
            )
            .transform_calculate(
                y="datum.mv === null ? datum.pk : min(datum.pk, datum.mv)",
                bound="datum.mv === null || datum.pk <= datum.mv ? 'compute' : datum.mem_level",
            )
            .transform_calculate(
                attainable_label="format(datum.y, '.4~s') + datum.unit + '/s'",
                intensity_label="format(datum.x, '.4~r') + ' ' + datum.unit + '/B' + datum.at",
            )
        )
    if "measured" in r.datasets:
        layers.append(
            alt.Chart(alt.NamedData(name="measured"))
            .mark_point(shape="diamond", filled=False, size=110, strokeWidth=2, clip=True)
            .encode(
                tooltip=[
                    alt.Tooltip("n:N", title="#"),
                    alt.Tooltip("case:N", title="case (measured)"),
                    alt.Tooltip("measured_label:N", title="measured"),
                    alt.Tooltip("efficiency_label:N", title="efficiency"),
                ],
            )
        )
    spec: dict[str, Any] = (
        alt.LayerChart(layer=layers)
        .encode(x=x, y=y, color=color)
        .properties(
            width=charts.WIDTH,
            height=charts.HEIGHT,
            title={"text": r.title, "anchor": "start", "fontSize": 14},
            background="white",
            padding={"left": 5, "right": 5, "top": 5, "bottom": 5},
        )
        .configure_legend(labelLimit=220, titleLimit=220, orient="right")
        .configure_axis(labelFontSize=11, titleFontSize=12)
        .to_dict(validate=False)
    )
    spec["datasets"] = r.datasets
    spec["params"] = _altair_sliders(r.sliders)
    return spec


def _altair_kernel(k: charts.KernelDots) -> dict[str, Any]:
    low, high = k.x_domain
    chart = (
        alt.Chart(alt.NamedData(name="results"))
        .transform_calculate(
            attainable_label="format(datum.x, '.4~s') + datum.unit + '/s'",
            intensity_label="datum.i === null ? '–' : format(datum.i, '.4~r') + ' ' + "
            "datum.unit + '/B'",
            share_label="format(datum.share, '.3~%')",
        )
        .mark_point(filled=True, size=80, opacity=0.9)
        .encode(
            x=alt.X(
                "x:Q",
                scale=alt.Scale(type="log", domain=[low, high], nice=False),
                axis=alt.Axis(
                    title="Attainable rate (FLOP/s; OP/s for integer precisions)",
                    format="~s",
                    values=charts._decades(low, high),
                ),
            ),
            y=alt.Y("device:N", sort=k.device_names, axis=alt.Axis(title=None, labelLimit=240)),
            yOffset=alt.YOffset("case:N", sort=k.cases),
            color=alt.Color(
                "bound:N",
                scale=alt.Scale(domain=k.bounds, range=k.bound_colors()),
                legend=alt.Legend(title="Limited by"),
            ),
            shape=alt.Shape("case:N", sort=k.cases, legend=alt.Legend(title="Case")),
            tooltip=[
                alt.Tooltip("case:N", title="case"),
                alt.Tooltip("device:N", title="device"),
                alt.Tooltip("precision:N", title="precision"),
                alt.Tooltip("intensity_label:N", title="intensity"),
                alt.Tooltip("attainable_label:N", title="attainable"),
                alt.Tooltip("bound:N", title="limited by"),
                alt.Tooltip("share_label:N", title="share of peak"),
            ],
        )
    )
    spec: dict[str, Any] = (
        chart.properties(
            width=charts.WIDTH - 120,
            height={"step": 10 if len(k.cases) > 1 else 22},
            title={"text": k.title, "anchor": "start", "fontSize": 14},
            background="white",
        )
        .configure_legend(labelLimit=260, titleLimit=220, orient="bottom", direction="vertical")
        .to_dict(validate=False)
    )
    spec["datasets"] = {"results": k.rows}
    return spec


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


def _specs(compiled: Compiled) -> list[tuple[str, charts.Chart, dict[str, Any]]]:
    """Every chart of a catalog's site, each with altair's spec of the same parts."""
    out = []
    for device in compiled.catalog.devices:
        results = [r for r in compiled.results if r.device == device and r.declared]
        for shown in (results, []):  # no markers: one layer, its data at the top level
            chart = charts.device_roofline(compiled, device, shown, CHART_PRECISION)
            parts, description = charts.device_roofline_parts(
                compiled, device, shown, CHART_PRECISION
            )
            assert (chart.title, chart.description) == (parts.title, description)
            out.append((f"{device} ({len(shown)})", chart, _altair_roofline(parts)))
    devices = list(compiled.catalog.devices)
    chart = charts.comparison_chart(compiled, devices, CHART_PRECISION)
    parts, _ = charts.comparison_parts(compiled, devices, CHART_PRECISION)
    out.append(("comparison", chart, _altair_roofline(parts)))
    for kernel in compiled.catalog.kernels:
        results = [r for r in compiled.results if r.kernel == kernel and r.declared]
        chart = charts.kernel_chart(compiled, kernel, results)
        dots, _ = charts.kernel_parts(compiled, kernel, results)
        out.append((kernel, chart, _altair_kernel(dots)))
    return out


@pytest.mark.parametrize("catalog", ["bundled", "synthetic"])
def test_specs_are_the_json_altair_writes(catalog: str, request: pytest.FixtureRequest) -> None:
    compiled = request.getfixturevalue(catalog)
    specs = _specs(compiled)
    assert any("measured" in c.spec["datasets"] for _, c, _ in specs) == (catalog == "synthetic")
    for name, chart, reference in specs:
        assert chart.spec["$schema"] == alt.SCHEMA_URL
        assert charts.spec_json(chart.spec) == charts.spec_json(reference), name


def test_specs_are_valid_vega_lite_and_compile(bundled: Compiled, synthetic: Compiled) -> None:
    import vl_convert

    seen: set[str] = set()
    for compiled in (bundled, synthetic):
        for name, chart, _ in _specs(compiled):
            kind = f"{chart.name}-{len(chart.spec['layer']) if 'layer' in chart.spec else 0}"
            if kind in seen:
                continue
            seen.add(kind)
            cls = alt.LayerChart if "layer" in chart.spec else alt.Chart
            cls.from_dict(json.loads(charts.spec_json(chart.spec)), validate=True)
            vega = vl_convert.vegalite_to_vega(chart.spec)
            assert vega["marks"], name
            signals = {signal["name"] for signal in vega.get("signals", [])}
            assert {p["name"] for p in chart.spec.get("params", [])} <= signals, name
    assert {"roofline-1", "roofline-2", "roofline-3", "comparison-1", "attainable-0"} <= seen


def test_svg_of_a_device_is_altairs(bundled: Compiled) -> None:
    """The static rendering is the same bytes whichever way the spec was built."""
    import vl_convert

    device = "nvidia-h100-sxm"
    results = [r for r in bundled.results if r.device == device and r.declared]
    chart = charts.device_roofline(bundled, device, results, CHART_PRECISION)
    parts, _ = charts.device_roofline_parts(bundled, device, results, CHART_PRECISION)
    svg = charts.normalize_svg(vl_convert.vegalite_to_svg(chart.spec))
    assert svg == charts.normalize_svg(vl_convert.vegalite_to_svg(_altair_roofline(parts)))
    assert "<svg" in svg and "Roofline of NVIDIA H100 SXM" in svg


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
        "from rooflinec.cli.commands import checked\n"
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
