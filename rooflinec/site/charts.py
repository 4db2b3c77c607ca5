"""Roofline charts as Vega-Lite, their static SVG, and the runtime.

The charts:

- `device_roofline`: one device, log–log; a roof per precision (memory slope then compute
  roof, the ridge point itself a data point so the kink is exact), the other memory levels
  at the chart precision, every kernel case as a numbered marker, measured runs as
  diamonds at their measured intensity (where a profiler counted bytes) with a dashed
  line from the modelled marker to the measured point. Sliders (params bound to range
  inputs) scale the bandwidth, the peak and the sustained shares; the roofs, ridges and
  markers are computed from the sliders by Vega expressions, so they work in a static page.
- `comparison_chart`: every device's DRAM roofline at one precision.
- `kernel_chart`: one kernel's cases, the attainable rate on every device.
- `model_steps_chart`: a model's pass as a stacked bar per device, a segment per step.
- `tokens_chart`: tokens per second of one model's phase per device, picked in the page.
- `frontier_chart`: a model's latency–throughput frontier for one request shape, a line
  per device; a slider sets the per-user target and marks each device's best point there.

A model page also reuses `device_roofline` with its steps as the markers (`labels`).

The specs are plain dicts, written here directly: a device roofline takes a fraction of a
millisecond this way and hundreds of times longer through vega-altair (which deep-copies
layered charts on every operation), and building a site needs no altair.
`rooflinec.integrations.notebook` loads the same specs into altair for notebooks. Each
chart's data is also a table on its page (formatted with `rooflinec.formatting`).
`render_svg` is the no-JavaScript fallback (cached by spec hash); `vega_bundle` is the
Vega runtime, written once per site (cached in memory and on disk, since making it takes
seconds).
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from rooflinec.catalog import LEVELS, Catalog
from rooflinec.engine.cells import DeviceFigures, Result
from rooflinec.engine.compiler import Compiled
from rooflinec.engine.terms import COMPUTE
from rooflinec.formatting import format_percent, format_si

if TYPE_CHECKING:
    from rooflinec.site.bounded import Bounded

__all__ = [
    "DEFAULT_CHART_PRECISION",
    "MAX_MARKERS",
    "Chart",
    "chart_precision",
    "comparison_chart",
    "device_roofline",
    "featured_devices",
    "frontier_chart",
    "kernel_chart",
    "model_steps_chart",
    "render_svg",
    "serving_chart",
    "spec_json",
    "tokens_chart",
    "vega_bundle",
]

WIDTH, HEIGHT = 560, 360
# One colour per precision, by its position in precisions.yaml, the same on every page.
PALETTE = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#ff7f0e",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#bcbd22",
    "#7f7f7f",
)
LEVEL_LABELS = {"dram": "DRAM", "l2": "L2 (last on-chip)", "l1": "L1"}
LEVEL_DASH = {"dram": [1, 0], "l2": [6, 3], "l1": [2, 2]}
SLIDER_MIN, SLIDER_MAX = 0.25, 4.0
# Rooflines the comparison chart draws before a reader picks a vendor.
MAX_LINES = 12
# Device colours of the comparison chart, given to the devices drawn in order.
COMPARISON_PALETTE = (
    *PALETTE,
    "#aec7e8",
    "#ffbb78",
    "#98df8a",
    "#ff9896",
    "#c5b0d5",
    "#c49c94",
    "#f7b6d2",
    "#dbdb8d",
    "#9edae5",
    "#393b79",
)
# Kernel cases marked on a device's roofline: its first declared ones, as on its page.
MAX_MARKERS = 8
# The precision the site's charts are drawn at unless mkdocs.yml sets `chart_precision`.
DEFAULT_CHART_PRECISION = "bf16"


@dataclass(frozen=True)
class Chart:
    """A chart: its Vega-Lite spec and a text alternative (its data is a table on the page)."""

    name: str  # file stem, unique within the page
    title: str
    description: str  # alt text of the static rendering
    # The live view fetches the spec, the downloadable `.vl.json` beside the page: every
    # chart's data grows with the catalog (a point per device or per case), and inlined it
    # would double its page (the table beside it holds the same rows). Where fetching is
    # not possible (a page opened from disk) the static SVG stays.
    spec: dict[str, Any]
    # The caption's hint on what the chart's inputs do; None: the roofline's sliders.
    hint: str | None = None


def chart_precision(catalog: Catalog, wanted: str = DEFAULT_CHART_PRECISION) -> str:
    """The precision a site of `catalog` draws its charts at: `wanted` when the catalog
    has it, else its first precision (a device without it falls back to its own first)."""
    return wanted if wanted in catalog.precisions else next(iter(catalog.precisions))


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
    return result.roof.memory(result.flops, result.bytes)


# --------------------------------------------------------------------------- spec pieces
#
# Vega-Lite as plain dicts, in the shape vega-altair's `to_dict` gives (so a spec loaded
# into altair writes the same JSON back); tests validate them against the schema.

VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v6.4.1.json"
_TYPES = {"N": "nominal", "Q": "quantitative", "O": "ordinal", "T": "temporal"}
# altair's default theme: every top-level spec carries it.
_VIEW_CONFIG = {"continuousWidth": 300, "continuousHeight": 300}
# The charts' text is set in DejaVu Sans, a copy of which ships in `fonts/`: vl-convert
# measures text with the fonts it finds, so under a generic family the SVGs' layout (and
# bytes) would follow whatever fonts the machine has. The generic family is the browser's
# fallback where DejaVu Sans is not installed.
CHART_FONT = "DejaVu Sans, sans-serif"
FONTS = Path(__file__).parent / "fonts"


def _config(**extra: Any) -> dict[str, Any]:
    """A top-level spec's `config`: altair's default view, the charts' font, `extra`."""
    return {"view": dict(_VIEW_CONFIG), "font": CHART_FONT, **extra}


def _field(shorthand: str, **extra: Any) -> dict[str, Any]:
    """`"x:Q"` as an encoding: `{"field": "x", "type": "quantitative"}` plus `extra`."""
    name, _, kind = shorthand.partition(":")
    return {"field": name, "type": _TYPES[kind], **extra}


def _log_field(
    shorthand: str, domain: tuple[float, float], title: str, fmt: str, **axis: Any
) -> dict[str, Any]:
    """A quantitative field on a log scale over `domain`, ticked at its decades."""
    low, high = domain
    return _field(
        shorthand,
        scale={"type": "log", "domain": [low, high], "nice": False},
        axis={"title": title, "format": fmt, **axis, "values": _decades(low, high)},
    )


def _vendor_pick(vendors: Sequence[object], featured: str) -> dict[str, Any]:
    """The `show_vendor` select box: the featured devices (labelled `featured`), or one
    vendor's."""
    return {
        "name": "show_vendor",
        "value": "",
        "bind": {
            "input": "select",
            "options": ["", *vendors],
            "labels": [featured, *vendors],
            "name": "devices ",
        },
    }


def _tooltips(items: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    return [_field(shorthand, title=title) for shorthand, title in items]


def _calculate(**expressions: str) -> list[dict[str, Any]]:
    """Calculate transforms, one per field, in order (each may use the ones before)."""
    return [{"calculate": expr, "as": name} for name, expr in expressions.items()]


def _title(text: str) -> dict[str, Any]:
    return {"text": text, "anchor": "start", "fontSize": 14}


def _fetched_spec(
    dataset: str,
    rows: Sequence[dict[str, Any]],
    title: str,
    height: int | dict[str, int],
    body: dict[str, Any],
) -> dict[str, Any]:
    """The spec of a chart whose rows are fetched, not inlined (the model pages'): `body`
    (its marks, encodings, params) over the rows as one named dataset, as wide as the page
    less its legend."""
    return {
        "$schema": VEGA_LITE_SCHEMA,
        "data": {"name": dataset},
        **body,
        "width": WIDTH - 120,
        "height": height,
        "title": _title(title),
        "background": "white",
        "config": _config(),
        "datasets": {dataset: [dict(row) for row in rows]},
    }


@dataclass(frozen=True)
class Slider:
    """A chart parameter bound to a range input."""

    name: str
    value: float
    low: float
    high: float
    step: float
    label: str

    def spec(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value,
            "bind": {
                "input": "range",
                "min": self.low,
                "max": self.high,
                "step": self.step,
                "name": self.label,
            },
        }


def _sliders(
    compute_share: float | None, memory_share: float | None
) -> tuple[list[Slider], str, str]:
    """Slider params and the expressions that scale a peak and a bandwidth by them."""
    params = [
        Slider("bandwidth_x", 1, SLIDER_MIN, SLIDER_MAX, 0.05, "bandwidth × "),
        Slider("peak_x", 1, SLIDER_MIN, SLIDER_MAX, 0.05, "peak × "),
    ]
    peak_expr = "peak_x"
    bw_expr = "bandwidth_x"
    if compute_share is not None and memory_share is not None:
        params.append(
            Slider(
                "compute_share", round(compute_share, 4), 0.05, 1, 0.01, "sustained compute share "
            )
        )
        params.append(
            Slider("memory_share", round(memory_share, 4), 0.05, 1, 0.01, "sustained memory share ")
        )
        peak_expr += f" * compute_share / {compute_share!r}"
        bw_expr += f" * memory_share / {memory_share!r}"
    return params, peak_expr, bw_expr


def _roof_rows(
    series: str,
    color_key: str,
    level: str,
    peak: Fraction,
    bandwidth: Fraction,
    x0: float,
    x1: float,
    parts: tuple[str, ...] = ("start", "ridge", "end"),
    **extra: Any,
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


@dataclass(frozen=True)
class Scales:
    """The log–log axes of a roofline: domains, tick values (decades) and titles."""

    x_domain: tuple[float, float]
    y_domain: tuple[float, float]
    x_title: str
    y_title: str

    def x(self) -> dict[str, Any]:
        return _log_field("x:Q", self.x_domain, self.x_title, "~r", grid=True)

    def y(self) -> dict[str, Any]:
        return _log_field("y:Q", self.y_domain, self.y_title, "~s", grid=True)


def _scales(
    xs: Sequence[float],
    ys: Sequence[float],
    peaks: Sequence[float],
    x_title: str,
    y_title: str,
) -> Scales:
    x_min = _decade_floor(min(xs) / 3)
    x_max = _decade_ceil(max(xs) * 3)
    y_max = max(peaks) * SLIDER_MAX * 1.2
    y_min = _decade_floor(min([*ys, *peaks]) / 4)
    return Scales((x_min, x_max), (y_min, y_max), x_title, y_title)


def _decades(low: float, high: float) -> list[float]:
    first = math.floor(math.log10(low))
    last = math.floor(math.log10(high))
    return [float(10**e) if e >= 0 else 10.0**e for e in range(first, last + 1)]


@dataclass(frozen=True)
class Roofline:
    """What a roofline chart shows, before it is a spec: `spec()` makes the Vega-Lite.

    The roofs (`datasets["roofs"]`) are one line per `series` through rows of kind start,
    ridge and end whose x and y are computed from the sliders; `kernels` are numbered
    markers whose attainable rate is computed the same way; `measured` are diamonds.
    """

    title: str
    scales: Scales
    color_domain: list[str]
    color_range: list[str]
    color_legend: dict[str, Any]
    # strokeDash by memory level: domain, dash patterns, whether it has a legend.
    dash: tuple[list[str], list[list[int]], bool] | None
    ridge_tooltip: list[tuple[str, str]]  # before the ridge, peak and bandwidth labels
    sliders: list[Slider]
    peak_expr: str
    bw_expr: str
    datasets: dict[str, list[dict[str, Any]]]  # only those with rows
    # Transforms that turn the roofs' data into rows of kind start, ridge and end (the
    # comparison keeps one row per device and picks the devices shown), and params that
    # are not sliders (the comparison's device picker).
    roof_prelude: tuple[dict[str, Any], ...] = ()
    choices: tuple[dict[str, Any], ...] = ()

    def color(self) -> dict[str, Any]:
        """Colour by `key`; without a domain, the colours go to the keys drawn, in order."""
        scale: dict[str, Any] = {"range": list(self.color_range)}
        if self.color_domain:
            scale = {"domain": list(self.color_domain), **scale}
        return _field("key:N", scale=scale, legend=dict(self.color_legend))

    def spec(self) -> dict[str, Any]:
        layers = [self._roofs()]
        if "kernels" in self.datasets:
            layers.append(self._kernels())
        if "moves" in self.datasets:
            layers.append(self._moves())
        if "measured" in self.datasets:
            layers.append(self._measured())
        spec: dict[str, Any] = {"$schema": VEGA_LITE_SCHEMA}
        if len(layers) == 1:
            # One layer: its data moves up to the top level (as altair does).
            spec["data"] = layers[0].pop("data")
        spec.update(
            {
                "layer": layers,
                "encoding": {"x": self.scales.x(), "y": self.scales.y(), "color": self.color()},
                "width": WIDTH,
                "height": HEIGHT,
                "title": _title(self.title),
                "background": "white",
                "padding": {"left": 5, "right": 5, "top": 5, "bottom": 5},
                "config": _config(
                    legend={"labelLimit": 220, "titleLimit": 220, "orient": "right"},
                    axis={"labelFontSize": 11, "titleFontSize": 12},
                ),
                "datasets": self.datasets,
                "params": [
                    *(copy.deepcopy(choice) for choice in self.choices),
                    *(slider.spec() for slider in self.sliders),
                ],
            }
        )
        return spec

    def _roofs(self) -> dict[str, Any]:
        line_encoding: dict[str, Any] = {"detail": _field("series:N"), "order": _field("x:Q")}
        if self.dash is not None:
            domain, dashes, legend = self.dash
            line_encoding["strokeDash"] = _field(
                "level:N",
                scale={"domain": list(domain), "range": [list(d) for d in dashes]},
                legend={"title": "Memory level"} if legend else None,
            )
        lines = {
            "mark": {"type": "line", "clip": True, "strokeWidth": 2},
            "encoding": line_encoding,
        }
        ridges = {
            "mark": {"type": "point", "filled": True, "size": 60, "clip": True, "opacity": 1},
            "encoding": {
                "tooltip": _tooltips(
                    [
                        *self.ridge_tooltip,
                        ("ridge_label:N", "ridge point"),
                        ("peak_label:N", "peak"),
                        ("bw_label:N", "bandwidth"),
                    ]
                ),
            },
            "transform": [
                {"filter": "datum.kind === 'ridge' && datum.marker !== false"},
                *_calculate(
                    ridge_label="format(datum.x, '.4~r') + ' ' + datum.unit + '/B'",
                    peak_label="format(datum.pk, '.4~s') + datum.unit + '/s'",
                    bw_label="format(datum.bwv, '.4~s') + 'B/s'",
                ),
            ],
        }
        return {
            "data": {"name": "roofs"},
            "layer": [lines, ridges],
            "transform": [
                *(copy.deepcopy(t) for t in self.roof_prelude),
                *_calculate(
                    pk=f"datum.peak * {self.peak_expr}",
                    bwv=f"datum.bw * {self.bw_expr}",
                    x="datum.kind === 'ridge' ? datum.pk / datum.bwv : datum.x0",
                    y="min(datum.pk, datum.bwv * datum.x)",
                ),
            ],
        }

    def _kernels(self) -> dict[str, Any]:
        points = {
            "mark": {
                "type": "point",
                "filled": True,
                "size": 70,
                "stroke": "black",
                "strokeWidth": 0.8,
                "opacity": 1,
                "clip": True,
            },
            "encoding": {
                "tooltip": _tooltips(
                    [
                        ("n:N", "#"),
                        ("case:N", "case"),
                        ("key:N", "precision"),
                        ("intensity_label:N", "intensity"),
                        ("attainable_label:N", "attainable"),
                        ("bound:N", "limited by"),
                    ]
                ),
            },
        }
        # Labels take turns around their marker, so neighbours rarely overlap.
        labels = [
            {
                "mark": {
                    "type": "text",
                    "dx": dx,
                    "dy": dy,
                    "fontSize": 11,
                    "clip": True,
                    "align": "left" if dx > 0 else "right",
                },
                "encoding": {"text": _field("n:N"), "color": {"value": "black"}},
                "transform": [{"filter": f"datum.slot === {rest}"}],
            }
            for rest, dx, dy in ((0, 6, -9), (1, 6, 14))
        ]
        return {
            "data": {"name": "kernels"},
            "layer": [points, *labels],
            "transform": _calculate(
                pk=f"datum.peak * {self.peak_expr}",
                mv=f"datum.mem === null ? null : datum.mem * {self.bw_expr}",
                y="datum.mv === null ? datum.pk : min(datum.pk, datum.mv)",
                bound="datum.mv === null || datum.pk <= datum.mv ? 'compute' : datum.mem_level",
                attainable_label="format(datum.y, '.4~s') + datum.unit + '/s'",
                intensity_label="format(datum.x, '.4~r') + ' ' + datum.unit + '/B' + datum.at",
            ),
        }

    def _moves(self) -> dict[str, Any]:
        """A dashed line from each modelled marker to its measured point."""
        return {
            "data": {"name": "moves"},
            "mark": {
                "type": "line",
                "strokeDash": [3, 3],
                "strokeWidth": 1,
                "clip": True,
                "color": "#666666",
            },
            "encoding": {
                "detail": _field("n:N"),
                "order": _field("end:Q"),
                "color": {"value": "#666666"},
            },
        }

    def _measured(self) -> dict[str, Any]:
        return {
            "data": {"name": "measured"},
            "mark": {
                "type": "point",
                "shape": "diamond",
                "filled": False,
                "size": 110,
                "strokeWidth": 2,
                "clip": True,
            },
            "encoding": {
                "tooltip": _tooltips(
                    [
                        ("n:N", "#"),
                        ("case:N", "case (measured)"),
                        ("measured_label:N", "measured"),
                        ("efficiency_label:N", "efficiency"),
                        ("intensity_label:N", "intensity"),
                    ]
                ),
            },
        }


# --------------------------------------------------------------------------- charts


def device_roofline(
    compiled: Compiled,
    device_id: str,
    results: Sequence[Result],
    chart_precision: str,
    labels: Mapping[str, str] | None = None,
) -> Chart:
    """The roofline of one device with `results` (one per case) as numbered markers.

    `labels` names each marker by its result's `case` field (a model page marks its
    steps, which are no catalog cases); by default the case's name."""
    roofline, description = _device_roofline_parts(
        compiled, device_id, results, chart_precision, labels
    )
    return Chart("roofline", roofline.title, description, roofline.spec())


def _device_roofline_parts(
    compiled: Compiled,
    device_id: str,
    results: Sequence[Result],
    chart_precision: str,
    labels: Mapping[str, str] | None = None,
) -> tuple[Roofline, str]:
    """What `device_roofline` draws, and its text alternative."""
    catalog = compiled.catalog
    device = catalog.devices[device_id]
    fig: DeviceFigures = compiled.devices[device_id]
    precisions = [p for p in catalog.precisions if p in fig.peaks]
    levels = [lv for lv in LEVELS if lv in fig.bandwidths]
    main_precision = chart_precision if chart_precision in fig.peaks else precisions[0]

    # Precisions with the same peak share one roof ("FP8 · INT8"), drawn in the colour of
    # the first; each memory level is one slope up to the highest roof.
    groups: dict[Fraction, list[str]] = {}
    for p in precisions:
        groups.setdefault(fig.peaks[p], []).append(p)
    group_label = {
        p: " · ".join(catalog.precisions[q].label for q in members)
        for members in groups.values()
        for p in members
    }

    markers: list[dict[str, Any]] = []
    measured: list[dict[str, Any]] = []
    moves: list[dict[str, Any]] = []
    cases = catalog.cases if labels is None else {}  # a mapping made afresh on every read
    for number, r in enumerate(results, start=1):
        where = _entry_point_x(r)
        if where is None:
            continue
        level, intensity = where
        unit = _unit(catalog, r.precision)
        memory = _memory_ceiling(r)
        name = labels[r.case] if labels is not None else cases[r.case].name
        # A marker takes the colour of its precision's roof.
        key = group_label.get(r.precision, catalog.precisions[r.precision].label)
        markers.append(
            {
                "n": str(number),
                "case": name,
                "key": key,
                "unit": unit,
                "x": _f(intensity),
                "peak": _f(r.peak),
                "mem": _f(memory[1]) if memory else None,
                "mem_level": LEVEL_LABELS[memory[0]] if memory else "",
                "at": "" if level == "dram" else f" ({LEVEL_LABELS[level]})",
            }
        )
        if r.measured is not None:
            # At the measured intensity where the profiler counted this level's bytes.
            counted = r.measured_intensity.get(level)
            at = counted if counted is not None else intensity
            how = "measured" if counted is not None else "modelled"
            measured.append(
                {
                    "n": str(number),
                    "case": name,
                    "key": key,
                    "x": _f(at),
                    "y": _f(r.measured),
                    "measured_label": format_si(r.measured, f"{unit}/s"),
                    "efficiency_label": format_percent(r.efficiency or 0),
                    "intensity_label": f"{format_si(at, unit + '/B')} ({how})",
                }
            )
            moves += [
                {"n": str(number), "end": 0, "x": _f(intensity), "y": _f(r.attainable)},
                {"n": str(number), "end": 1, "x": _f(at), "y": _f(r.measured)},
            ]

    # Label offsets take turns in the order of intensity, so close neighbours differ.
    for rank, m in enumerate(sorted(markers, key=lambda m: (m["x"], int(m["n"])))):
        m["slot"] = rank % 2
    xs = (
        [m["x"] for m in markers]
        + [m["x"] for m in measured]
        + [_f(fig.peaks[p] / fig.bandwidths[lv]) for p in precisions for lv in levels]
    )
    ys = [min(m["peak"], m["mem"] or m["peak"]) for m in markers] + [m["y"] for m in measured]
    ys += [_f(fig.bandwidths[lv]) * min(xs) for lv in levels]
    peaks = [_f(v) for v in fig.peaks.values()]
    scales = _scales(
        xs or [1.0],
        ys or peaks,
        peaks,
        "Arithmetic intensity (FLOP/B, against DRAM)",
        "Attainable rate (FLOP/s; OP/s for integer precisions)",
    )
    x_min, x_max = scales.x_domain

    roof_rows: list[dict[str, Any]] = []
    top = max(fig.peaks.values())
    slope_level = "dram" if "dram" in levels else levels[0]
    for members in groups.values():
        p = members[0]
        label = group_label[p]
        unit = _unit(catalog, p)
        roof_rows += _roof_rows(
            f"roof-{p}",
            label,
            slope_level,
            fig.peaks[p],
            fig.bandwidths[slope_level],
            x_min,
            x_max,
            parts=("ridge", "end"),
            unit=unit,
        )
    for lv in levels:
        # Ridge markers of the other levels at the chart precision only, to stay readable.
        roof_rows += _roof_rows(
            f"slope-{lv}",
            "memory slope",
            lv,
            top,
            fig.bandwidths[lv],
            x_min,
            x_max,
            parts=("start", "ridge"),
            unit=_unit(catalog, main_precision),
            marker=False,
        )
        if lv != slope_level:
            roof_rows += _roof_rows(
                f"ridge-{lv}",
                group_label[main_precision],
                lv,
                fig.peaks[main_precision],
                fig.bandwidths[lv],
                x_min,
                x_max,
                parts=("ridge",),
                unit=_unit(catalog, main_precision),
            )

    sliders, peak_expr, bw_expr = _sliders(_f(device.compute_share), _f(device.memory_share))
    keys = list(dict.fromkeys(group_label[p] for p in precisions))
    precision_labels = [catalog.precisions[p].label for p in precisions]
    datasets = {"roofs": roof_rows, "kernels": markers, "moves": moves, "measured": measured}
    roofline = Roofline(
        title=f"Roofline of {device.name}",
        scales=scales,
        color_domain=[*keys, "memory slope"],
        color_range=[*(_color(catalog, members[0]) for members in groups.values()), "#444444"],
        color_legend={"title": "Precision"},
        dash=(
            [LEVEL_LABELS[lv] for lv in levels],
            [LEVEL_DASH[lv] for lv in levels],
            len(levels) > 1,
        ),
        ridge_tooltip=[("key:N", "precision"), ("level:N", "level")],
        sliders=sliders,
        peak_expr=peak_expr,
        bw_expr=bw_expr,
        datasets={k: v for k, v in datasets.items() if v},
    )
    description = (
        f"Log–log roofline chart of {device.name}: a roof per precision "
        f"({', '.join(precision_labels)}), the ridge points marked, and {len(markers)} "
        f"{'kernel cases' if labels is None else 'steps'} as numbered markers. The same data "
        "is in the table below the chart."
    )
    return roofline, description


def comparison_chart(
    compiled: Compiled,
    device_ids: Sequence[str],
    precision: str,
    featured: Sequence[str] | None = None,
) -> Chart:
    """The DRAM rooflines of `device_ids` at `precision`, one colour per device.

    The chart draws the `featured` devices (default: `featured_devices`) until a reader
    picks a vendor in the select box under it, then that vendor's devices."""
    roofline, description = _comparison_parts(compiled, device_ids, precision, featured)
    return Chart("comparison", roofline.title, description, roofline.spec())


def featured_devices(
    compiled: Compiled, device_ids: Sequence[str], precision: str, limit: int = MAX_LINES
) -> list[str]:
    """At most `limit` of `device_ids`: each vendor's fastest at `precision`, then each
    vendor's second fastest, and so on (vendors in order of first appearance)."""
    by_vendor: dict[str, list[str]] = {}
    for d in device_ids:
        if precision in compiled.devices[d].peaks:
            by_vendor.setdefault(compiled.catalog.devices[d].vendor, []).append(d)
    ranked = [
        sorted(ids, key=lambda d: -compiled.devices[d].peaks[precision])
        for ids in by_vendor.values()
    ]
    picked: list[str] = []
    for rank in range(max((len(ids) for ids in ranked), default=0)):
        for ids in ranked:
            if rank < len(ids) and len(picked) < limit:
                picked.append(ids[rank])
    return picked


def _comparison_parts(
    compiled: Compiled,
    device_ids: Sequence[str],
    precision: str,
    featured: Sequence[str] | None = None,
) -> tuple[Roofline, str]:
    """What `comparison_chart` draws, and its text alternative."""
    catalog = compiled.catalog
    unit = _unit(catalog, precision)
    usable = [
        d
        for d in device_ids
        if precision in compiled.devices[d].peaks and "dram" in compiled.devices[d].bandwidths
    ]
    shown = set(featured_devices(compiled, usable, precision) if featured is None else featured)
    ridges = [_f(compiled.devices[d].ridges[precision]["dram"]) for d in usable]
    peaks = [_f(compiled.devices[d].peaks[precision]) for d in usable]
    bws = [_f(compiled.devices[d].bandwidths["dram"]) for d in usable]
    scales = _scales(
        ridges or [1.0],
        [b * min(ridges or [1.0]) / 3 for b in bws] or [1.0],
        peaks or [1.0],
        "Arithmetic intensity (FLOP/B, against DRAM)",
        f"Attainable rate ({unit}/s)",
    )
    x_min, x_max = scales.x_domain
    # One row per device; the prelude makes its start, ridge and end rows in the browser.
    rows = [
        {
            "series": d,
            "key": catalog.devices[d].name,
            "vendor": catalog.devices[d].vendor,
            "featured": d in shown,
            "peak": _f(compiled.devices[d].peaks[precision]),
            "bw": _f(compiled.devices[d].bandwidths["dram"]),
            "unit": unit,
        }
        for d in usable
    ]
    vendors = list(dict.fromkeys(row["vendor"] for row in rows))
    pick = _vendor_pick(vendors, f"featured ({len(shown)}: the fastest of each vendor)")
    prelude = (
        {"filter": "show_vendor === '' ? datum.featured : datum.vendor === show_vendor"},
        {"calculate": "['start', 'ridge', 'end']", "as": "kind"},
        {"flatten": ["kind"]},
        {"calculate": f"datum.kind === 'start' ? {x_min!r} : {x_max!r}", "as": "x0"},
    )
    sliders, peak_expr, bw_expr = _sliders(None, None)
    label = catalog.precisions[precision].label
    roofline = Roofline(
        title=f"DRAM rooflines at {label}: featured devices, or one vendor's",
        scales=scales,
        color_domain=[],
        color_range=list(COMPARISON_PALETTE),
        color_legend={"title": "Device", "symbolType": "stroke"},
        dash=None,
        ridge_tooltip=[("key:N", "device")],
        sliders=sliders,
        peak_expr=peak_expr,
        bw_expr=bw_expr,
        datasets={"roofs": rows},
        roof_prelude=prelude,
        choices=(pick,),
    )
    description = (
        f"Log–log chart of the DRAM rooflines at {label} of {len(shown)} featured devices "
        f"(the fastest of each vendor) out of {len(usable)}, one line per device, ridge "
        "points marked; a select box picks one vendor's devices instead. The same data is in "
        "the table below the chart."
    )
    return roofline, description


@dataclass(frozen=True)
class KernelDots:
    """What `kernel_chart` draws: one dot per result, a row per device, offset by case."""

    title: str
    rows: list[dict[str, Any]]
    device_names: list[str]
    cases: list[str]
    x_domain: tuple[float, float]
    bounds: list[str]  # what limits the results, compute first

    def bound_colors(self) -> list[str]:
        return [
            "#1f77b4" if b == COMPUTE else PALETTE[(i % 4) + 1] for i, b in enumerate(self.bounds)
        ]

    def spec(self) -> dict[str, Any]:
        return {
            "$schema": VEGA_LITE_SCHEMA,
            "data": {"name": "results"},
            "mark": {"type": "point", "filled": True, "size": 80, "opacity": 0.9},
            "encoding": {
                "x": _log_field(
                    "x:Q",
                    self.x_domain,
                    "Attainable rate (FLOP/s; OP/s for integer precisions)",
                    "~s",
                ),
                "y": _field(
                    "device:N",
                    sort=list(self.device_names),
                    axis={"title": None, "labelLimit": 240},
                ),
                "yOffset": _field("case:N", sort=list(self.cases)),
                "color": _field(
                    "bound:N",
                    scale={"domain": list(self.bounds), "range": self.bound_colors()},
                    legend={"title": "Limited by"},
                ),
                "shape": _field("case:N", sort=list(self.cases), legend={"title": "Case"}),
                "tooltip": _tooltips(
                    [
                        ("case:N", "case"),
                        ("device:N", "device"),
                        ("precision:N", "precision"),
                        ("intensity_label:N", "intensity"),
                        ("attainable_label:N", "attainable"),
                        ("bound:N", "limited by"),
                        ("share_label:N", "share of peak"),
                    ]
                ),
            },
            "transform": _calculate(
                attainable_label="format(datum.x, '.4~s') + datum.unit + '/s'",
                intensity_label="datum.i === null ? '–' : format(datum.i, '.4~r') + ' ' + "
                "datum.unit + '/B'",
                share_label="format(datum.share, '.3~%')",
            ),
            "width": WIDTH - 120,
            "height": {"step": 10 if len(self.cases) > 1 else 22},
            "title": _title(self.title),
            "background": "white",
            "config": _config(
                legend={
                    "labelLimit": 260,
                    "titleLimit": 220,
                    "orient": "bottom",
                    "direction": "vertical",
                }
            ),
            "datasets": {"results": self.rows},
        }


def kernel_chart(compiled: Compiled, kernel_id: str, results: Sequence[Result]) -> Chart:
    """Attainable rate of each case of a kernel on every device (its declared precision)."""
    dots, description = _kernel_parts(compiled, kernel_id, results)
    return Chart("attainable", dots.title, description, dots.spec())


def _kernel_parts(
    compiled: Compiled, kernel_id: str, results: Sequence[Result]
) -> tuple[KernelDots, str]:
    """What `kernel_chart` draws, and its text alternative."""
    catalog = compiled.catalog
    kernel = catalog.kernels[kernel_id]
    rows: list[dict[str, Any]] = []
    case_of = catalog.cases  # a mapping made afresh on every read
    for r in results:
        unit = _unit(catalog, r.precision)
        device = catalog.devices[r.device].name
        case = case_of[r.case].name
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
    dots = KernelDots(
        title=f"{kernel.name}: attainable rate on every device",
        rows=rows,
        device_names=device_names,
        cases=cases,
        x_domain=(low, high),
        bounds=bounds,
    )
    description = (
        f"Dot chart of the attainable rate of the {len(cases)} cases of {kernel.name} on "
        f"{len({row['device'] for row in rows})} devices, on a log scale, coloured by what "
        "limits each. The same data is in the table below the chart."
    )
    return dots, description


def model_steps_chart(
    name: str, title: str, rows: Sequence[dict[str, Any]], devices: Sequence[str]
) -> Chart:
    """A stacked bar per device: the time of each step of a model's pass, end to end.

    `rows` are `{"device", "n", "step", "time", "time_label", "bound"}` (time in s), one per
    step and device; the bars' lengths are the passes' times. Fetched, not inlined: its
    rows grow with the devices and steps (the table beside it holds them too)."""
    steps = list(dict.fromkeys(str(row["step"]) for row in rows))
    body = {
        "mark": {"type": "bar"},
        "encoding": {
            "y": _field("device:N", sort=list(devices), axis={"title": None, "labelLimit": 240}),
            "x": _field(
                "time:Q",
                stack="zero",
                axis={"title": "Time of one pass (s), a lower bound", "format": "~s"},
            ),
            "color": _field(
                "step:N",
                sort=steps,
                scale={"range": list(COMPARISON_PALETTE)},
                legend={"title": "Step", "orient": "bottom", "columns": 3, "labelLimit": 220},
            ),
            "order": _field("n:Q"),
            "tooltip": _tooltips(
                [
                    ("device:N", "device"),
                    ("step:N", "step"),
                    ("time_label:N", "time"),
                    ("bound:N", "limited by"),
                ]
            ),
        },
    }
    spec = _fetched_spec("steps", rows, title, {"step": 22}, body)
    description = (
        f"Stacked bar chart of {title}: one bar per device ({len(devices)}), one segment per "
        f"step ({len(steps)}) in the order of the pass. The same data is in the table below "
        "the chart."
    )
    return Chart(name, title, description, spec)


def tokens_chart(
    rows: Sequence[dict[str, Any]], passes: Sequence[str], vendors: Sequence[str]
) -> Chart:
    """Tokens per second of one model's phase on each device: a dot per device, on a
    log scale (a bar from zero has no length there).

    `rows` are `{"pass", "device", "vendor", "featured", "tps", "label", "bound"}`, one
    per model, phase and device. A select box picks the pass (model and phase, default
    the first), another the devices: the featured ones, or one vendor's. Fetched, not
    inlined: a row per device and pass."""
    values = [float(row["tps"]) for row in rows] or [1.0]
    low, high = _decade_floor(min(values)), _decade_ceil(max(values) * 1.01)
    pick_pass = {
        "name": "show_pass",
        "value": passes[0] if passes else "",
        "bind": {"input": "select", "options": list(passes), "name": "model and phase "},
    }
    pick_vendor = _vendor_pick(vendors, "featured devices")
    body = {
        "transform": [
            {"filter": "datum.pass === show_pass"},
            {"filter": "show_vendor === '' ? datum.featured : datum.vendor === show_vendor"},
        ],
        "mark": {"type": "point", "filled": True, "size": 90, "opacity": 1},
        "encoding": {
            "y": _field("device:N", sort="-x", axis={"title": None, "labelLimit": 240}),
            "x": _log_field("tps:Q", (low, high), "Tokens per second (an upper bound)", "~s"),
            "color": _field(
                "bound:N",
                scale={"range": ["#1f77b4", *PALETTE[1:5]]},
                legend={"title": "Most time limited by", "orient": "bottom"},
            ),
            "tooltip": _tooltips(
                [
                    ("pass:N", "model and phase"),
                    ("device:N", "device"),
                    ("label:N", "tokens per second"),
                    ("bound:N", "most time limited by"),
                ]
            ),
        },
        "params": [pick_pass, pick_vendor],
    }
    title = "Tokens per second: one model and phase, featured devices or a vendor's"
    spec = _fetched_spec("passes", rows, title, {"step": 18}, body)
    description = (
        f"Dot chart of the tokens per second of {passes[0] if passes else 'no model'} on the "
        "featured devices, on a log scale, coloured by what limits most of the pass's time; "
        "select boxes pick another model and phase or one vendor's devices. The same data is "
        "in the table below the chart."
    )
    return Chart("tokens", "Tokens per second on each device", description, spec)


#: The per-user target the frontier chart's slider starts at (tokens/s per user).
FRONTIER_TARGET = 20


def frontier_chart(
    name: str, title: str, rows: Sequence[dict[str, Any]], devices: Sequence[str]
) -> Chart:
    """A model's frontier for one request shape: a line per device (`devices`, their
    names in order), x = tokens/s per user, y = tokens/s per chip, both on log scales.

    `rows` are `{"device", "user", "chip", "deployment", "batch", "user_label",
    "chip_label"}`, the frontier's points (rates as floats, labels as the page prints
    them). A slider (`min_user_rate`, a param bound to a range input) sets the per-user
    target: a rule marks it and each device's best point there (the most tokens/s per
    chip among its points at or above the target, as `plan --min-user-rate` answers) is
    drawn large. Fetched, not inlined: its rows grow with the devices (the table beside
    it holds them too)."""
    users = [float(row["user"]) for row in rows] or [1.0]
    chips = [float(row["chip"]) for row in rows] or [1.0]
    x_domain = (_decade_floor(min(users)), _decade_ceil(max(users) * 1.01))
    y_domain = (_decade_floor(min(chips)), _decade_ceil(max(chips) * 1.01))
    top = max(FRONTIER_TARGET + 1, math.ceil(max(users)))
    slider = Slider("min_user_rate", FRONTIER_TARGET, 1, top, 1, "tokens/s per user at least ")
    colour = _field(
        "device:N",
        sort=list(devices),
        scale={"range": list(COMPARISON_PALETTE)},
        legend={"title": "Device", "orient": "bottom", "columns": 2, "labelLimit": 240},
    )
    x = _log_field("user:Q", x_domain, "Tokens/s per user (1/itl), an upper bound", "~s", grid=True)
    y = _log_field("chip:Q", y_domain, "Tokens/s per chip, an upper bound", "~s", grid=True)
    tips = _tooltips(
        [
            ("device:N", "device"),
            ("deployment:N", "chips (split)"),
            ("batch:Q", "batch"),
            ("user_label:N", "tokens/s per user"),
            ("chip_label:N", "tokens/s per chip"),
        ]
    )
    best = [
        {"filter": "datum.user >= min_user_rate"},
        {"joinaggregate": [{"op": "max", "field": "chip", "as": "top"}], "groupby": ["device"]},
        {"filter": "datum.chip === datum.top"},
    ]
    body = {
        "params": [slider.spec()],
        "layer": [
            {
                "mark": {"type": "line", "point": True, "interpolate": "linear"},
                "encoding": {
                    "x": x,
                    "y": y,
                    "color": colour,
                    "order": _field("user:Q"),
                    "tooltip": tips,
                },
            },
            {
                "transform": best,
                "mark": {
                    "type": "point",
                    "shape": "diamond",
                    "filled": True,
                    "size": 160,
                    "opacity": 1,
                    "stroke": "black",
                },
                "encoding": {"x": x, "y": y, "color": colour, "tooltip": tips},
            },
            {
                "transform": [
                    {"aggregate": [{"op": "count", "as": "points"}]},
                    {"calculate": "min_user_rate", "as": "target"},
                ],
                "mark": {"type": "rule", "strokeDash": [4, 3], "color": "#555555"},
                "encoding": {"x": {**x, "field": "target"}},
            },
        ],
    }
    spec = _fetched_spec("frontier", rows, title, HEIGHT - 60, body)
    description = (
        f"Line chart of {title}: tokens per second per chip against tokens per second per "
        f"user, on log scales, one line per device ({len(devices)}); a dashed rule at the "
        f"per-user target ({FRONTIER_TARGET} tokens/s per user unless the slider moves it) and "
        "a diamond on each device's best point at that target. The same data is in the "
        "table below the chart."
    )
    hint = (
        "Hover a point for its values; the slider below the chart moves the per-user target "
        "and the diamonds to each device's best point there (it needs JavaScript)."
    )
    return Chart(name, title, description, spec, hint=hint)


# --------------------------------------------------------------------------- rendering


def spec_json(spec: dict[str, Any]) -> str:
    """The spec as canonical JSON text (sorted keys): the downloadable `.vl.json`.

    One line: with `indent`, json encodes in pure Python, several times slower than its
    C encoder, and a site writes (and keys its SVG cache by) a spec per chart."""
    return json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


_SVG_DISK_FILES = 4000
_PRUNE_EVERY = 256  # writes to the disk cache between two prunings of it, on average
_CLIP_ID = re.compile(r'(?<=id="clip)[0-9]+(?=")|(?<=url\(#clip)[0-9]+(?=\))')


def svg_key(text: str) -> str:
    """The cache key of the rendering of a spec whose canonical JSON is `text`."""
    return hashlib.sha256((_vl_convert_version() + text).encode("utf-8")).hexdigest()


def cached_svg(key: str, memory: Bounded[str, str] | None = None) -> str | None:
    """The kept rendering of `key` (`svg_key`): in `memory`, else on disk, else None."""
    cached = memory.get(key) if memory is not None else None
    if cached is not None:
        return cached
    try:
        svg = normalize_svg((cache_dir() / "svg" / f"{key}.svg").read_text("utf-8"))
    except OSError:
        return None
    return memory.put(key, svg) if memory is not None else svg


def render_svg(
    spec: dict[str, Any], memory: Bounded[str, str] | None = None, *, text: str | None = None
) -> str:
    """The static SVG rendering of a spec, cached by the hash of its canonical JSON
    (`text`, when the caller has `spec_json(spec)` already).

    Rendering costs a few hundred milliseconds a chart, so renderings are kept in
    `memory` (the build's `Session.svgs`: for `serve` rebuilds) and on disk per vl-convert
    version (for later builds).
    """
    key = svg_key(spec_json(spec) if text is None else text)
    cached = cached_svg(key, memory)
    if cached is not None:
        return cached
    folder = cache_dir() / "svg"
    svg = normalize_svg(_converter().vegalite_to_svg(spec))
    _store(folder, folder / f"{key}.svg", svg)
    return memory.put(key, svg) if memory is not None else svg


def normalize_svg(svg: str) -> str:
    """Number the clip paths of a rendering from 1, in order of appearance.

    Vega numbers clip paths with a counter that lives as long as the process, so the same
    spec rendered after others gets `clip14` where it would get `clip1`: the bytes of a
    rendering would depend on what was rendered before it (and on what the cache holds).
    """
    numbers: dict[str, str] = {}

    def renumber(match: re.Match[str]) -> str:
        return numbers.setdefault(match.group(0), str(len(numbers) + 1))

    return _CLIP_ID.sub(renumber, svg)


@lru_cache(maxsize=1)
def _converter() -> ModuleType:
    """vl-convert, with the charts' font registered: the same bytes on every machine, with
    or without fonts of its own."""
    import vl_convert

    vl_convert.register_font_directory(str(FONTS))
    return vl_convert


@lru_cache(maxsize=1)
def _vl_convert_version() -> str:
    import importlib.metadata

    return importlib.metadata.version("vl-convert-python")


def _store(folder: Path, path: Path, text: str) -> None:
    """Write a cache file atomically; keep the folder bounded; never fail the build.

    The folder is pruned after one write in `_PRUNE_EVERY`, not on every write (listing
    thousands of files per chart adds up): after the writes of the files whose name's
    hash falls in that share, so no count is kept between calls."""
    digest = hashlib.sha256(path.name.encode("utf-8")).digest()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if replace_text(path, text) and int.from_bytes(digest[:4], "big") % _PRUNE_EVERY == 0:
            _prune(folder)
    except OSError:
        pass


def replace_text(path: Path, text: str) -> bool:
    """Write `path` in one `replace` (a reader, such as `serve`'s preview, sees the old
    file or the new one); False, and nothing raised, where it cannot be written."""
    try:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, "utf-8")
        tmp.replace(path)
    except OSError:
        return False
    return True


def _prune(folder: Path) -> None:
    """Remove the oldest SVGs beyond `_SVG_DISK_FILES`."""
    entries = []
    with os.scandir(folder) as it:
        for entry in it:
            if entry.name.endswith(".svg"):
                try:
                    entries.append((entry.stat().st_mtime, entry.path))
                except OSError:
                    continue
    entries.sort()
    for _, old in entries[: max(0, len(entries) - _SVG_DISK_FILES)]:
        Path(old).unlink(missing_ok=True)


def cache_dir() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "rooflinec"


@lru_cache(maxsize=1)
def vega_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script that sets `window.vegaEmbed`.

    Making it takes seconds, so it is kept on disk per vl-convert version.
    """
    import vl_convert

    path = cache_dir() / f"vega-bundle-{_vl_convert_version()}.js"
    try:
        return path.read_text("utf-8")
    except OSError:
        pass
    bundle: str = vl_convert.javascript_bundle()  # type: ignore[call-arg]  # stub: snippet=None
    _store(path.parent, path, bundle)
    return bundle


def serving_chart(name: str, title: str, unit: str, rows: Sequence[dict[str, Any]]) -> Chart:
    """Bound against measured for the serving results, log–log, one colour per metric,
    with the diagonal where the two are equal: a time's bound lies on or below it, a
    rate's on or above.

    `rows` are `{"metric", "device", "model", "measured", "bound", "ratio",
    "measured_label", "bound_label"}` (figures in `unit`, floats; labels as the page
    prints them)."""
    values = [float(r[k]) for r in rows for k in ("measured", "bound")] or [1.0]
    domain = (_decade_floor(min(values)), _decade_ceil(max(values) * 1.01))
    x = _log_field("measured:Q", domain, f"Measured ({unit})", "~s", grid=True)
    y = _log_field("bound:Q", domain, f"Bound ({unit})", "~s", grid=True)
    metrics = sorted({str(r["metric"]) for r in rows})
    colour = _field(
        "metric:N",
        sort=metrics,
        scale={"range": list(COMPARISON_PALETTE)},
        legend={"title": "Metric", "orient": "bottom", "columns": 2, "labelLimit": 240},
    )
    tips = _tooltips(
        [
            ("metric:N", "metric"),
            ("model:N", "model"),
            ("device:N", "device"),
            ("measured_label:N", "measured"),
            ("bound_label:N", "bound"),
            ("ratio:Q", "ratio"),
        ]
    )
    diagonal = {
        "data": {"values": [{"measured": domain[0], "bound": domain[0]},
                            {"measured": domain[1], "bound": domain[1]}]},
        "mark": {"type": "line", "strokeDash": [4, 3], "color": "#555555"},
        "encoding": {"x": x, "y": y},
    }  # fmt: skip
    body = {
        "layer": [
            diagonal,
            {
                "mark": {"type": "point", "filled": True, "size": 50, "opacity": 0.8},
                "encoding": {"x": x, "y": y, "color": colour, "tooltip": tips},
            },
        ]
    }
    spec = _fetched_spec(name, rows, title, HEIGHT - 60, body)
    description = (
        f"Scatter chart of {title}: the bound against the measured figure, in {unit}, on log "
        f"scales, {len(rows)} points coloured by metric ({len(metrics)}), with a dashed "
        "diagonal where they are equal. The same data is in the tables of the accuracy pages."
    )
    hint = "Hover a point for its model, device and ratio."
    return Chart(name, title, description, spec, hint=hint)
