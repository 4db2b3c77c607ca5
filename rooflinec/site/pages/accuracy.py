"""The Accuracy pages: how far the bounds sit from measured serving results.

`accuracy.md` holds, for every measured serving result of the models (a `measured` entry
with input and output), the summaries `rooflinec validate` prints: per device, metric and
regime the points, the median ratio and the one farthest from 1; the calibrated
estimate's leave-one-out error beside the bound's own; a chart per metric of the bound
against the measured figure, with the diagonal. `accuracy/<model>.md` lists each model's
points: the bound, the measured figure, their ratio, the regime, the estimate (labelled
as such), the technique and the fields assumed, each with its source and its entry.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from typing import TYPE_CHECKING

from markupsafe import Markup

from rooflinec.engine.serving import ServingPoint, serving_points
from rooflinec.formatting import format_number
from rooflinec.outputs.accuracy import (
    METRIC_NAMES,
    Accuracy,
    accuracy,
    metric_text,
    percent_text,
)
from rooflinec.site import charts
from rooflinec.site.escape import md_row
from rooflinec.site.pages.common import GeneratedPage
from rooflinec.site.pages.model import Page
from rooflinec.site.pages.models import serving_sources
from rooflinec.site.pages.parts import sources_context

if TYPE_CHECKING:
    from rooflinec.engine.calibration import ErrorSummary
    from rooflinec.site.pages.model import Site

__all__ = ["ACCURACY_PATH", "accuracy_pages", "model_accuracy_path"]

ACCURACY_PATH = "accuracy.md"
_UNITS = {"ttft": "ms", "itl": "ms", "output_rate": "tokens/s", "user_rate": "tokens/s"}
_SCALE = {"ttft": 1000.0, "itl": 1000.0, "output_rate": 1.0, "user_rate": 1.0}


#: Figures per model page: a page stays under 50 KB.
ROWS_PER_PAGE = 60


def model_accuracy_path(model_id: str, part: int = 1) -> str:
    """`accuracy/<model>.md`, then `accuracy/<model>-2.md`, … for more figures."""
    return f"accuracy/{model_id}.md" if part == 1 else f"accuracy/{model_id}-{part}.md"


def _error_cells(s: ErrorSummary | None) -> list[str]:
    if s is None:
        return ["-", "-", "0"]
    return [percent_text(s.median_ape), percent_text(s.worst_ape), str(s.points)]


def _load(p: ServingPoint) -> str:
    r = p.result
    if r.batch is not None:
        return f"static batch {r.batch:,}"
    if r.concurrency is not None:
        return f"concurrency {r.concurrency:,}"
    return "offline"


def _split(p: ServingPoint) -> str:
    d = p.result.deployment
    return f"{d.total} (tp {d.tp}, pp {d.pp}, ep {d.ep})"


def _frontier(p: ServingPoint) -> str:
    """An output rate's place on the frontier: its bound's batch, each request's tokens/s
    there and the bound's tokens/s per chip."""
    if p.user_rate_at_batch is None or p.chip_rate is None or p.batch is None:
        return "-"
    user = format_number(float(p.user_rate_at_batch), 3)
    chip = format_number(float(p.chip_rate), 4)
    return f"batch {p.batch:,}: {user} per user, {chip} per chip"


def _chart(site: Site, a: Accuracy) -> charts.Chart | None:
    """Every bounded figure on one log–log chart of bound against measured, a colour per
    metric: times in ms (the bound holds below the diagonal), rates in tokens/s (above)."""
    names = {d: site.catalog.devices[d].name for d in site.catalog.devices}
    rows = []
    for p in a.points:
        if p.bound is None or p.ratio is None or p.metric not in _UNITS:
            continue
        scale = _SCALE[p.metric]
        rows.append(
            {
                "metric": f"{METRIC_NAMES[p.metric]} ({_UNITS[p.metric]})",
                "device": names.get(p.device, p.device),
                "model": p.model,
                "measured": float(p.measured) * scale,
                "bound": float(p.bound) * scale,
                "ratio": round(float(p.ratio), 4),
                "measured_label": metric_text(p.metric, float(p.measured)),
                "bound_label": metric_text(p.metric, float(p.bound)),
            }
        )
    if not rows:
        return None
    title = "Serving results: bound against measured"
    return charts.serving_chart("serving", title, "ms or tokens/s", rows)


def _main_page(site: Site, a: Accuracy, models: Sequence[str]) -> GeneratedPage:
    page = Page(ACCURACY_PATH, site)
    cat = site.catalog
    groups = [
        md_row(
            [
                page.device_link(g.device),
                METRIC_NAMES[g.metric],
                g.regime,
                g.points,
                format_number(g.median_ratio, 3),
                format_number(g.worst_ratio, 3),
            ]
        )
        for g in a.groups
    ]
    errors = [md_row(["all devices", *_error_cells(a.bound_all), *_error_cells(a.estimate_all)])]
    for device in sorted(set(a.bound_by_device) | set(a.estimate_by_device)):
        errors.append(
            md_row(
                [
                    page.device_link(device),
                    *_error_cells(a.bound_by_device.get(device)),
                    *_error_cells(a.estimate_by_device.get(device)),
                ]
            )
        )
    counts: dict[str, int] = {}
    for p in a.points:
        counts[p.model] = counts.get(p.model, 0) + 1
    model_rows = [
        md_row(
            [
                page.link(cat.models[m].name, model_accuracy_path(m)),
                len(cat.models[m].serving),
                counts.get(m, 0),
            ]
        )
        for m in models
    ]
    results = sum(len(cat.models[m].serving) for m in models)
    devices = sorted({p.device for p in a.points})
    text = site.render(
        "accuracy.md.j2",
        page,
        results=results,
        points=len(a.points),
        devices=len(devices),
        bound=a.bound_all,
        estimate=a.estimate_all,
        percent=percent_text,
        chart=None if (found := _chart(site, a)) is None else page.chart(found),
        groups=groups,
        errors=errors,
        models=model_rows,
        method=page.method_link("method note"),
    )
    return GeneratedPage(ACCURACY_PATH, "Accuracy", text, page.slots, page.assets)


def _model_page(
    site: Site, model_id: str, a: Accuracy, indices: Sequence[int], part: int, parts: int
) -> GeneratedPage:
    path = model_accuracy_path(model_id, part)
    page = Page(path, site)
    model = site.catalog.models[model_id]
    model_path = f"models/{model_id}.md"
    first = model_accuracy_path(model_id)
    listed = serving_sources(model)  # on the first page of the results, not the model's
    rows: list[Markup] = []
    for i in indices:
        p, e = a.points[i], a.estimates[i]
        r = p.result
        ratio = p.ratio
        home = first if r.source in listed else model_path
        source = page.link(r.source, f"{home}#source-{r.source}")
        rows.append(
            md_row(
                [
                    page.device_link(r.device),
                    _split(p),
                    r.precision + (f" (KV {r.kv})" if r.kv else ""),
                    f"{r.input:,} / {r.output:,}",
                    _load(p),
                    r.engine,
                    METRIC_NAMES[p.metric],
                    metric_text(p.metric, float(p.measured)),
                    "-" if p.bound is None else metric_text(p.metric, float(p.bound)),
                    "-" if ratio is None else format_number(float(ratio), 3),
                    p.regime or "-",
                    _frontier(p),
                    "-" if e is None else metric_text(p.metric, e.value),
                    r.technique or "-",
                    ", ".join(r.assumed) or "-",
                    source,
                    f"{r.location.line}:{r.location.col}",
                ]
            )
        )
    text = site.render(
        "accuracy_model.md.j2",
        page,
        model=model,
        model_link=page.link(model.name, model_path),
        accuracy=page.link("Accuracy", ACCURACY_PATH),
        file=f"models/{posixpath.basename(model.document.file)}",
        rows=rows,
        sources=sources_context(site, page, model_id, listed, f"{first}#source-")
        if part == 1
        else [],
        parts=[
            page.link(f"part {n}", model_accuracy_path(model_id, n)) if n != part else f"part {n}"
            for n in range(1, parts + 1)
        ]
        if parts > 1
        else [],
    )
    title = f"{model.name}: measured serving results" + (f", part {part}" if part > 1 else "")
    return GeneratedPage(path, title, text, page.slots, page.assets)


def accuracy_pages(site: Site) -> list[GeneratedPage]:
    """`accuracy.md` and `accuracy/<model>.md` per model with serving results; none
    when no model has any."""
    points = serving_points(site.compiled.model_engine)
    if not points:
        return []
    a = accuracy(points)
    by_model: dict[str, list[int]] = {}
    for i, p in enumerate(a.points):
        by_model.setdefault(p.model, []).append(i)
    models = [m for m in site.catalog.models if m in by_model]
    out = [_main_page(site, a, models)]
    for m in models:
        indices = by_model[m]
        chunks = [indices[i : i + ROWS_PER_PAGE] for i in range(0, len(indices), ROWS_PER_PAGE)]
        out += [_model_page(site, m, a, chunk, n, len(chunks)) for n, chunk in enumerate(chunks, 1)]
    return out
