"""Roofline charts as Vega-Lite (built with vega-altair), their static SVG, and the runtime.

Three charts:

- `device_roofline`: one device, log–log; a roof per precision (memory slope then compute
  roof, the ridge point itself a data point so the kink is exact), the other memory levels
  at the chart precision, every kernel case as a numbered marker, measured runs as
  diamonds. Sliders (`alt.param` bound to `alt.binding_range`) scale the bandwidth, the
  peak and the sustained shares; the roofs, ridges and markers are computed from the
  sliders by Vega expressions, so they work in a static page.
- `comparison_chart`: every device's DRAM roofline at one precision.
- `kernel_chart`: one kernel's cases, the attainable rate on every device.

Each chart comes with its data as table rows (formatted with `rooflinec.formatting`).
`render_svg` is the no-JavaScript fallback (cached by spec hash); `vega_bundle` is the
Vega runtime, written once per site (cached in memory and on disk, since making it takes
seconds).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar, cast

from rooflinec.catalog import LEVELS, Catalog
from rooflinec.compiler import COMPUTE, Compiled, DeviceFigures, Result
from rooflinec.formatting import format_percent, format_si

__all__ = [
    "Chart",
    "comparison_chart",
    "device_roofline",
    "kernel_chart",
    "render_svg",
    "spec_json",
    "vega_bundle",
]

WIDTH, HEIGHT = 560, 360
# One colour per precision, by its position in precisions.yaml, the same on every page.
PALETTE = (
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#bcbd22", "#7f7f7f",
)
LEVEL_LABELS = {"dram": "DRAM", "l2": "L2 (last on-chip)", "l1": "L1"}
LEVEL_DASH = {"dram": [1, 0], "l2": [6, 3], "l1": [2, 2]}
SLIDER_MIN, SLIDER_MAX = 0.25, 4.0


@dataclass(frozen=True)
class Chart:
    """A chart: its Vega-Lite spec and a text alternative (its data is a table on the page)."""

    name: str  # file stem, unique within the page
    title: str
    description: str  # alt text of the static rendering
    spec: dict[str, Any]


def _f(value: Fraction | int | float) -> float:
    """A plotted value: 7 significant figures are more than a chart can show."""
    return float(f"{float(value):.7g}")


def _unit(catalog: Catalog, precision: str) -> str:
    return catalog.precisions[precision].unit


def _color(catalog: Catalog, precision: str) -> str:
    order = list(catalog.precisions)
    return PALETTE[order.index(precision) % len(PALETTE)]


def _decade_floor(value: float) -> float:
    return float(10 ** math.floor(math.log10(value)))


def _decade_ceil(value: float) -> float:
    return float(10 ** math.ceil(math.log10(value)))


def _entry_point_x(result: Result) -> tuple[str, Fraction] | None:
    """The intensity a marker is drawn at: against DRAM, else the first level given."""
    intensity = result.intensity
    for level in LEVELS:
        if level in intensity:
            return level, intensity[level]
    return None


def _memory_ceiling(result: Result) -> tuple[str, Fraction] | None:
    """The lowest memory ceiling and its level, or None when no level is modelled."""
    ceilings = [(level, rate) for level, rate in result.ceilings.items() if level != COMPUTE]
    if not ceilings:
        return None
    return min(ceilings, key=lambda item: (item[1], LEVELS.index(item[0])))


def _sliders(
    alt: Any, compute_share: float | None, memory_share: float | None
) -> tuple[list[Any], str, str]:
    """Slider params and the expressions that scale a peak and a bandwidth by them."""
    bandwidth = alt.param(
        name="bandwidth_x",
        value=1,
        bind=alt.binding_range(min=SLIDER_MIN, max=SLIDER_MAX, step=0.05, name="bandwidth × "),
    )
    peak = alt.param(
        name="peak_x",
        value=1,
        bind=alt.binding_range(min=SLIDER_MIN, max=SLIDER_MAX, step=0.05, name="peak × "),
    )
    params = [bandwidth, peak]
    peak_expr = "peak_x"
    bw_expr = "bandwidth_x"
    if compute_share is not None and memory_share is not None:
        params.append(
            alt.param(
                name="compute_share",
                value=round(compute_share, 4),
                bind=alt.binding_range(min=0.05, max=1, step=0.01, name="sustained compute share "),
            )
        )
        params.append(
            alt.param(
                name="memory_share",
                value=round(memory_share, 4),
                bind=alt.binding_range(min=0.05, max=1, step=0.01, name="sustained memory share "),
            )
        )
        peak_expr += f" * compute_share / {compute_share!r}"
        bw_expr += f" * memory_share / {memory_share!r}"
    return params, peak_expr, bw_expr


def _roof_rows(
    series: str, color_key: str, level: str, peak: Fraction, bandwidth: Fraction, x0: float,
    x1: float, parts: tuple[str, ...] = ("start", "ridge", "end"), **extra: Any,
) -> list[dict[str, Any]]:
    base = {
        "series": series,
        "key": color_key,
        "level": LEVEL_LABELS[level],
        "peak": _f(peak),
        "bw": _f(bandwidth),
        **extra,
    }
    rows = {
        "start": {**base, "kind": "start", "x0": x0},
        "ridge": {**base, "kind": "ridge"},  # x is computed from the sliders
        "end": {**base, "kind": "end", "x0": x1},
    }
    return [rows[part] for part in parts]


def _roof_layers(
    alt: Any, rows: str, peak_expr: str, bw_expr: str, x: Any, y: Any,
    color: Any, tooltip_extra: Sequence[Any], stroke_dash: Any | None,
) -> list[Any]:
    # Data and transforms are given once, on a nested layer; x, y and colour once, on the
    # top-level layer chart; the marks below inherit both.
    base = alt.Chart()
    line_encoding: dict[str, Any] = {"detail": "series:N", "order": "x:Q"}
    if stroke_dash is not None:
        line_encoding["strokeDash"] = stroke_dash
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
                *tooltip_extra,
                alt.Tooltip("ridge_label:N", title="ridge point"),
                alt.Tooltip("peak_label:N", title="peak"),
                alt.Tooltip("bw_label:N", title="bandwidth"),
            ],
        )
    )
    roofs = alt.LayerChart(data=alt.NamedData(name=rows), layer=[lines, ridges])
    roofs = roofs.transform_calculate(
        pk=f"datum.peak * {peak_expr}",
        bwv=f"datum.bw * {bw_expr}",
    ).transform_calculate(
        x="datum.kind === 'ridge' ? datum.pk / datum.bwv : datum.x0",
    ).transform_calculate(
        y="min(datum.pk, datum.bwv * datum.x)",
    )
    return [roofs]


def _scales(
    alt: Any, xs: Sequence[float], ys: Sequence[float], peaks: Sequence[float], x_title: str,
    y_title: str,
) -> tuple[Any, Any, float, float]:
    x_min = _decade_floor(min(xs) / 3)
    x_max = _decade_ceil(max(xs) * 3)
    y_max = max(peaks) * SLIDER_MAX * 1.2
    y_min = _decade_floor(min([*ys, *peaks]) / 4)
    x = alt.X(
        "x:Q",
        scale=alt.Scale(type="log", domain=[x_min, x_max], nice=False),
        axis=alt.Axis(title=x_title, format="~r", grid=True, values=_decades(x_min, x_max)),
    )
    y = alt.Y(
        "y:Q",
        scale=alt.Scale(type="log", domain=[y_min, y_max], nice=False),
        axis=alt.Axis(title=y_title, format="~s", grid=True, values=_decades(y_min, y_max)),
    )
    return x, y, x_min, x_max


def _decades(low: float, high: float) -> list[float]:
    first = math.floor(math.log10(low))
    last = math.floor(math.log10(high))
    return [float(10**e) if e >= 0 else 10.0**e for e in range(first, last + 1)]


def _config(
    chart: Any, title: str, datasets: dict[str, list[dict[str, Any]]], params: Sequence[Any]
) -> dict[str, Any]:
    """The finished spec. Data goes in as top-level named `datasets` after `to_dict`:
    altair deep-copies inline data on every layer, which costs more than everything else."""
    spec: dict[str, Any] = (
        chart.properties(
            width=WIDTH,
            height=HEIGHT,
            title=alt_title(title),
            background="white",
            padding={"left": 5, "right": 5, "top": 5, "bottom": 5},
        )
        .configure_legend(labelLimit=220, titleLimit=220, orient="right")
        .configure_axis(labelFontSize=11, titleFontSize=12)
        .to_dict(validate=False)
    )
    spec["datasets"] = datasets
    # Top-level slider params, added to the dict: altair's add_params on a layer chart
    # copies every layer once per param.
    spec["params"] = [p.param.to_dict(validate=False) for p in params]
    return spec


F = TypeVar("F", bound=Callable[..., Any])


def _quick(fn: F) -> F:
    """Build with altair's construction-time validation off (it costs most of the time);
    the tests validate finished specs against the Vega-Lite schema instead."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from altair.utils.schemapi import debug_mode

        with debug_mode(False):
            return fn(*args, **kwargs)

    return cast(F, wrapper)


def alt_title(text: str) -> dict[str, Any]:
    return {"text": text, "anchor": "start", "fontSize": 14}


@_quick
def device_roofline(
    compiled: Compiled,
    device_id: str,
    results: Sequence[Result],
    chart_precision: str,
) -> Chart:
    """The roofline of one device with `results` (one per case) as numbered markers."""
    import altair as alt

    catalog = compiled.catalog
    device = catalog.devices[device_id]
    fig: DeviceFigures = compiled.devices[device_id]
    precisions = [p for p in catalog.precisions if p in fig.peaks]
    levels = [lv for lv in LEVELS if lv in fig.bandwidths]
    main_precision = chart_precision if chart_precision in fig.peaks else precisions[0]

    markers: list[dict[str, Any]] = []
    measured: list[dict[str, Any]] = []
    for number, r in enumerate(results, start=1):
        where = _entry_point_x(r)
        if where is None:
            continue
        level, intensity = where
        unit = _unit(catalog, r.precision)
        memory = _memory_ceiling(r)
        case = catalog.cases[r.case]
        label = catalog.precisions[r.precision].label
        markers.append(
            {
                "n": str(number),
                "case": case.name,
                "key": label,
                "unit": unit,
                "x": _f(intensity),
                "peak": _f(r.peak),
                "mem": _f(memory[1]) if memory else None,
                "mem_level": LEVEL_LABELS[memory[0]] if memory else "",
                "at": "" if level == "dram" else f" ({LEVEL_LABELS[level]})",
            }
        )
        if r.measured is not None:
            measured.append(
                {
                    "n": str(number),
                    "case": case.name,
                    "key": label,
                    "x": _f(intensity),
                    "y": _f(r.measured),
                    "measured_label": format_si(r.measured, f"{unit}/s"),
                    "efficiency_label": format_percent(r.efficiency or 0),
                }
            )

    # Label offsets take turns in the order of intensity, so close neighbours differ.
    for rank, m in enumerate(sorted(markers, key=lambda m: (m["x"], int(m["n"])))):
        m["slot"] = rank % 2
    xs = [m["x"] for m in markers] + [
        _f(fig.peaks[p] / fig.bandwidths[lv]) for p in precisions for lv in levels
    ]
    ys = [min(m["peak"], m["mem"] or m["peak"]) for m in markers] + [m["y"] for m in measured]
    ys += [_f(fig.bandwidths[lv]) * min(xs) for lv in levels]
    peaks = [_f(v) for v in fig.peaks.values()]
    x, y, x_min, x_max = _scales(
        alt, xs or [1.0], ys or peaks, peaks,
        "Arithmetic intensity (FLOP/B, against DRAM)",
        "Attainable rate (FLOP/s; OP/s for integer precisions)",
    )

    # Precisions with the same peak share one roof ("FP8 · INT8"), drawn in the colour of
    # the first; each memory level is one slope up to the highest roof.
    groups: dict[Fraction, list[str]] = {}
    for p in precisions:
        groups.setdefault(fig.peaks[p], []).append(p)
    group_label = {p: " · ".join(catalog.precisions[q].label for q in members)
                   for members in groups.values() for p in members}
    roof_rows: list[dict[str, Any]] = []
    top = max(fig.peaks.values())
    slope_level = "dram" if "dram" in levels else levels[0]
    for members in groups.values():
        p = members[0]
        label = group_label[p]
        unit = _unit(catalog, p)
        roof_rows += _roof_rows(
            f"roof-{p}", label, slope_level, fig.peaks[p], fig.bandwidths[slope_level], x_min,
            x_max, parts=("ridge", "end"), unit=unit,
        )
    for lv in levels:
        # Ridge markers of the other levels at the chart precision only, to stay readable.
        roof_rows += _roof_rows(
            f"slope-{lv}", "memory slope", lv, top, fig.bandwidths[lv], x_min, x_max,
            parts=("start", "ridge"), unit=_unit(catalog, main_precision), marker=False,
        )
        if lv != slope_level:
            roof_rows += _roof_rows(
                f"ridge-{lv}", group_label[main_precision], lv, fig.peaks[main_precision],
                fig.bandwidths[lv], x_min, x_max, parts=("ridge",),
                unit=_unit(catalog, main_precision),
            )

    params, peak_expr, bw_expr = _sliders(
        alt, _f(device.compute_share), _f(device.memory_share)
    )
    keys = list(dict.fromkeys(group_label[p] for p in precisions))
    labels = [catalog.precisions[p].label for p in precisions]
    color = alt.Color(
        "key:N",
        scale=alt.Scale(
            domain=[*keys, "memory slope"],
            range=[*(_color(catalog, members[0]) for members in groups.values()), "#444444"],
        ),
        legend=alt.Legend(title="Precision"),
    )
    stroke_dash = alt.StrokeDash(
        "level:N",
        scale=alt.Scale(
            domain=[LEVEL_LABELS[lv] for lv in levels], range=[LEVEL_DASH[lv] for lv in levels]
        ),
        legend=alt.Legend(title="Memory level") if len(levels) > 1 else None,
    )
    layers = _roof_layers(
        alt, "roofs", peak_expr, bw_expr, x, y, color,
        [alt.Tooltip("key:N", title="precision"), alt.Tooltip("level:N", title="level")],
        stroke_dash,
    )
    # Marker colours follow the roof of the marker's precision.
    for m in markers:
        m["key"] = group_label.get(_precision_id(catalog, m["key"]), m["key"])
    for m in measured:
        m["key"] = group_label.get(_precision_id(catalog, m["key"]), m["key"])
    if markers:
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
            kernel_base.mark_point(filled=True, size=70, stroke="black", strokeWidth=0.8,
                                   opacity=1, clip=True).encode(tooltip=tooltip)
        ]
        # Labels take turns around their marker, so neighbours rarely overlap.
        for rest, dx, dy in ((0, 6, -9), (1, 6, 14)):
            kernel_layers.append(
                kernel_base.transform_filter(f"datum.slot === {rest}")
                .mark_text(dx=dx, dy=dy, fontSize=11, clip=True,
                           align="left" if dx > 0 else "right")
                .encode(text="n:N", color=alt.value("black"))
            )
        layers.append(
            alt.LayerChart(data=alt.NamedData(name="kernels"), layer=kernel_layers)
            .transform_calculate(
                pk=f"datum.peak * {peak_expr}",
                mv=f"datum.mem === null ? null : datum.mem * {bw_expr}",
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
    if measured:
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
    chart = alt.LayerChart(layer=layers).encode(x=x, y=y, color=color)
    title = f"Roofline of {device.name}"
    datasets = {"roofs": roof_rows, "kernels": markers, "measured": measured}
    spec = _config(chart, title, {k: v for k, v in datasets.items() if v}, params)
    description = (
        f"Log–log roofline chart of {device.name}: a roof per precision "
        f"({', '.join(labels)}), the ridge points marked, and {len(markers)} kernel cases "
        "as numbered markers. The same data is in the table below the chart."
    )
    return Chart(
        "roofline",
        title,
        description,
        spec,
    )


def _precision_id(catalog: Catalog, label: str) -> str:
    for p in catalog.precisions.values():
        if p.label == label:
            return p.id
    return label


@_quick
def comparison_chart(compiled: Compiled, device_ids: Sequence[str], precision: str) -> Chart:
    """Every device's DRAM roofline at `precision`, one colour per device."""
    import altair as alt

    catalog = compiled.catalog
    unit = _unit(catalog, precision)
    usable = [
        d for d in device_ids
        if precision in compiled.devices[d].peaks and "dram" in compiled.devices[d].bandwidths
    ]
    ridges = [_f(compiled.devices[d].ridges[precision]["dram"]) for d in usable]
    peaks = [_f(compiled.devices[d].peaks[precision]) for d in usable]
    bws = [_f(compiled.devices[d].bandwidths["dram"]) for d in usable]
    x, y, x_min, x_max = _scales(
        alt, ridges or [1.0], [b * min(ridges or [1.0]) / 3 for b in bws] or [1.0],
        peaks or [1.0], "Arithmetic intensity (FLOP/B, against DRAM)",
        f"Attainable rate ({unit}/s)",
    )
    rows: list[dict[str, Any]] = []
    names = [catalog.devices[d].name for d in usable]
    for d, name in zip(usable, names, strict=True):
        fig = compiled.devices[d]
        rows += _roof_rows(
            d, name, "dram", fig.peaks[precision], fig.bandwidths["dram"], x_min, x_max,
            unit=unit,
        )
    params, peak_expr, bw_expr = _sliders(alt, None, None)
    palette = [*PALETTE, "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94",
               "#f7b6d2", "#dbdb8d", "#9edae5", "#393b79"]
    color = alt.Color(
        "key:N",
        scale=alt.Scale(domain=names, range=[palette[i % len(palette)] for i in range(len(names))]),
        legend=alt.Legend(title="Device", symbolType="stroke"),
    )
    layers = _roof_layers(
        alt, "roofs", peak_expr, bw_expr, x, y, color,
        [alt.Tooltip("key:N", title="device")], None,
    )
    label = catalog.precisions[precision].label
    title = f"Rooflines of {len(usable)} devices at {label} (DRAM)"
    chart = alt.LayerChart(layer=layers).encode(x=x, y=y, color=color)
    spec = _config(chart, title, {"roofs": rows}, params)
    return Chart(
        "comparison",
        title,
        f"Log–log chart of the DRAM rooflines of {len(usable)} devices at {label}, one line "
        "per device, ridge points marked. The same data is in the table below the chart.",
        spec,
    )


@_quick
def kernel_chart(compiled: Compiled, kernel_id: str, results: Sequence[Result]) -> Chart:
    """Attainable rate of each case of a kernel on every device (its declared precision)."""
    import altair as alt

    catalog = compiled.catalog
    kernel = catalog.kernels[kernel_id]
    rows: list[dict[str, Any]] = []
    for r in results:
        unit = _unit(catalog, r.precision)
        device = catalog.devices[r.device].name
        case = catalog.cases[r.case].name
        where = _entry_point_x(r)
        rows.append(
            {
                "device": device,
                "case": case,
                "x": _f(r.attainable),
                "i": _f(where[1]) if where else None,
                "share": _f(r.share_of_peak),
                "bound": r.limited_by,
                "precision": catalog.precisions[r.precision].label,
                "unit": unit,
            }
        )
    # Only what is plotted goes into the spec (sort orders included).
    device_names = list(dict.fromkeys(row["device"] for row in rows))
    cases = list(dict.fromkeys(row["case"] for row in rows))
    values = [row["x"] for row in rows] or [1.0]
    low, high = _decade_floor(min(values)), _decade_ceil(max(values) * 1.01)
    bounds = sorted({row["bound"] for row in rows}, key=lambda b: (b != COMPUTE, b))
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
                axis=alt.Axis(title="Attainable rate (FLOP/s; OP/s for integer precisions)",
                              format="~s", values=_decades(low, high)),
            ),
            y=alt.Y("device:N", sort=device_names, axis=alt.Axis(title=None, labelLimit=240)),
            yOffset=alt.YOffset("case:N", sort=cases),
            color=alt.Color(
                "bound:N",
                scale=alt.Scale(
                    domain=bounds,
                    range=["#1f77b4" if b == COMPUTE else PALETTE[(i % 4) + 1]
                           for i, b in enumerate(bounds)],
                ),
                legend=alt.Legend(title="Limited by"),
            ),
            shape=alt.Shape("case:N", sort=cases, legend=alt.Legend(title="Case")),
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
    title = f"{kernel.name}: attainable rate on every device"
    spec = (
        chart.properties(
            width=WIDTH - 120,
            height={"step": 10 if len(cases) > 1 else 22},
            title=alt_title(title),
            background="white",
        )
        .configure_legend(labelLimit=260, titleLimit=220, orient="bottom", direction="vertical")
        .to_dict(validate=False)
    )
    spec["datasets"] = {"results": rows}
    return Chart(
        "attainable",
        title,
        f"Dot chart of the attainable rate of the {len(cases)} cases of {kernel.name} on "
        f"{len({row['device'] for row in rows})} devices, on a log scale, coloured by what "
        "limits each. The same data is in the table below the chart.",
        spec,
    )


# --------------------------------------------------------------------------- rendering


def spec_json(spec: dict[str, Any]) -> str:
    """The spec as canonical JSON text (sorted keys): the downloadable `.vl.json`."""
    return json.dumps(spec, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


_SVG_CACHE: OrderedDict[str, str] = OrderedDict()
_SVG_CACHE_SIZE = 1024
_SVG_DISK_FILES = 4000


def render_svg(spec: dict[str, Any]) -> str:
    """The static SVG rendering of a spec, cached by the hash of its canonical JSON.

    Rendering costs a few hundred milliseconds a chart, so renderings are kept in memory
    (for `serve` and repeated builds) and on disk per vl-convert version (for later builds).
    """
    import importlib.metadata

    version = importlib.metadata.version("vl-convert-python")
    key = hashlib.sha256((version + spec_json(spec)).encode("utf-8")).hexdigest()
    cached = _SVG_CACHE.get(key)
    if cached is not None:
        _SVG_CACHE.move_to_end(key)
        return cached
    folder = _cache_dir() / "svg"
    path = folder / f"{key}.svg"
    try:
        svg = path.read_text("utf-8")
    except OSError:
        import vl_convert

        svg = vl_convert.vegalite_to_svg(spec)
        _store(folder, path, svg)
    _SVG_CACHE[key] = svg
    if len(_SVG_CACHE) > _SVG_CACHE_SIZE:
        _SVG_CACHE.popitem(last=False)
    return svg


def _store(folder: Path, path: Path, text: str) -> None:
    """Write a cache file atomically; keep the folder bounded; never fail the build."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, "utf-8")
        tmp.replace(path)
        files = sorted(folder.glob("*.svg"), key=lambda f: f.stat().st_mtime)
        for old in files[: max(0, len(files) - _SVG_DISK_FILES)]:
            old.unlink(missing_ok=True)
    except OSError:
        pass


def _cache_dir() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "rooflinec"


@lru_cache(maxsize=1)
def vega_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script that sets `window.vegaEmbed`.

    Making it takes seconds, so it is kept on disk per vl-convert version.
    """
    import importlib.metadata

    import vl_convert

    version = importlib.metadata.version("vl-convert-python")
    path = _cache_dir() / f"vega-bundle-{version}.js"
    try:
        return path.read_text("utf-8")
    except OSError:
        pass
    bundle: str = vl_convert.javascript_bundle()  # type: ignore[call-arg]  # stub: snippet=None
    _store(path.parent, path, bundle)
    return bundle


