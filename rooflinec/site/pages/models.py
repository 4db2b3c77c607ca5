"""Model pages: the models index, one page per model, the tokens-per-second comparison,
and the short table of models on each device page.

A model page shows its passes on a selection of devices (`shown_devices`: the featured
device, every device a measurement names, then the fastest of each vendor), so it stays
small whatever the catalog size; its CSV downloads hold every device.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from rooflinec.catalog import LEVELS, Model, ModelStep, Source, Speculation
from rooflinec.engine.memory import evaluate_fit
from rooflinec.engine.step_crossover import BATCH, decode_phases, step_crossover
from rooflinec.engine.terms import LIMITED_BY
from rooflinec.formatting import format_number, format_percent, format_si
from rooflinec.outputs.model_rows import (
    dominant_limit,
    model_csv_header,
    model_csv_lines,
)
from rooflinec.prose.model_explain import step_instance
from rooflinec.site import charts
from rooflinec.site.escape import md, md_row
from rooflinec.site.pages.calculator import calculator_deployments, calculator_link
from rooflinec.site.pages.common import (
    GeneratedPage,
    chunks_of,
    focus_phase,
    frontier_path,
    limit_label,
    tokens_text,
)
from rooflinec.site.pages.deployments import deployment_rows
from rooflinec.site.pages.model import Page, split_pages
from rooflinec.site.pages.parts import sources_context
from rooflinec.site.pages.reuse import device_memo, for_devices, model_rows

if TYPE_CHECKING:
    from rooflinec.engine.models import ModelResult, StepResult
    from rooflinec.site.pages.model import Site

#: Devices a model page's tables and charts show; the downloads hold every device.
MODEL_DEVICES = 5
#: Rows of one tokens-per-second comparison page.
PER_TOKENS_PAGE = 80
#: Rows of a device page's table of models.
MAX_DEVICE_MODEL_ROWS = 3
TOKENS_PAGE = "models/tokens.md"


# --------------------------------------------------------------------------- selection


def eligible_devices(site: Site, model: Model) -> list[str]:
    """Devices with a peak for the model's precision and every precision a step names:
    those its passes are evaluated on, in catalog order."""
    own = {model.precision, *(s.precision for s in model.steps if s.precision is not None)}
    return [d for d, fig in site.compiled.devices.items() if own <= fig.peaks.keys()]


def shown_devices(site: Site, model: Model, limit: int = MODEL_DEVICES) -> list[str]:
    """The devices a model page shows, at most `limit`: the site's featured device, the
    devices a measurement names, then the fastest of each vendor; in catalog order."""
    eligible = eligible_devices(site, model)
    wanted = [d for d in (site.default_device,) if d in eligible]
    wanted += [m.device for m in model.measured if m.device in eligible]
    wanted += charts.featured_devices(site.compiled, eligible, model.precision, limit)
    chosen = set(list(dict.fromkeys(wanted))[:limit])
    return [d for d in eligible if d in chosen]


def roofline_device(site: Site, model: Model) -> str | None:
    """The device whose roofline carries the steps: the featured one if the model runs
    there, else the first that it runs on."""
    eligible = eligible_devices(site, model)
    if site.default_device in eligible:
        return site.default_device
    return eligible[0] if eligible else None


# --------------------------------------------------------------------------- formatting


def limit_shares(r: ModelResult) -> str:
    """`DRAM 97.1%, compute 2.9%`: the share of the pass's time each limit holds, largest
    first (ties in the method's order); limits that hold no time are left out."""
    found = [(name, t) for name, t in r.time_by_limit.items() if t > 0]
    found.sort(key=lambda item: (-item[1], LIMITED_BY.index(item[0])))
    return ", ".join(f"{limit_label(name)} {format_percent(t / r.time)}" for name, t in found)


def most_time(r: ModelResult) -> str:
    """`DRAM (97.1%)`: what holds the most of the pass's time."""
    limit = dominant_limit(r)
    return f"{limit_label(limit)} ({format_percent(r.time_by_limit[limit] / r.time)})"


def time_text(r: ModelResult | StepResult) -> str:
    return format_si(r.time, "s")


def crossover_text(regions_solved: bool, at: int | None) -> str:
    if not regions_solved:
        return "not solved"
    return "never" if at is None else f"{at:,}"


# --------------------------------------------------------------------------- index


def model_index(site: Site) -> list[GeneratedPage]:
    """`models/index.md`: every model with its size, phases and a link."""
    path = "models/index.md"
    page = Page(path, site)
    cat = site.catalog
    rows = []
    for model in cat.models.values():
        rows.append(
            {
                "link": page.link(model.name, f"models/{model.id}.md"),
                "id": model.id,
                "precision": cat.precisions[model.precision].label,
                "parameters": ", ".join(f"{k} = {v:,}" for k, v in model.parameters.items()),
                "phases": ", ".join(model.phases),
                "steps": len(model.steps),
                "devices": len(eligible_devices(site, model)),
            }
        )
    text = site.render(
        "models_index.md.j2",
        page,
        rows=rows,
        tokens=page.href(TOKENS_PAGE),
    )
    return [GeneratedPage(path, "Models", text, page.slots, page.assets)]


# --------------------------------------------------------------------------- a model


#: A model of more than this many steps on one chip has its per-step sections (each
#: step's time, the steps on a roofline, the decode batch crossovers) on a page of their
#: own, `models/ID/steps.md`: with them its page would pass the 50 KB a page may take.
STEPS_ON_PAGE = 20


def steps_path(model_id: str) -> str:
    """Where a long model's per-step sections are (`STEPS_ON_PAGE`)."""
    return f"models/{model_id}/steps.md"


def model_page(site: Site, model: Model) -> list[GeneratedPage]:
    """`models/<id>.md`: parameters, phases, steps, passes per phase on the shown
    devices, the steps' times and their roofline, the decode crossovers, sources.

    The page reads the specs of the devices it shows, of those its measurements name and
    of the roofline's device, and the number of devices it runs on; a `serve` rebuild
    keeps it while those compare equal (`reuse.for_devices`). Its CSV, every pass on
    every device, is made each build (from lines kept per device). A model of more than
    `STEPS_ON_PAGE` steps on one chip has a second page, its per-step sections."""
    cat = site.catalog
    devices = shown_devices(site, model)
    eligible = len(eligible_devices(site, model))
    measured = [m.device for m in model.measured if m.device in cat.devices]
    read = dict.fromkeys([*devices, *measured, *filter(None, [roofline_device(site, model)])])
    made = for_devices(
        site,
        "model page",
        model.id,
        tuple(read),
        _model_page,
        site,
        model,
        devices,
        eligible,
        extra=(tuple(devices), eligible),
    )
    csv = {f"models/{model.id}.csv": model_csv(site, model)}
    return [replace(made[0], assets={**made[0].assets, **csv}), *made[1:]]


def _experts_line(model: Model) -> dict[str, object] | None:
    """What the model page says of its routed experts, or None without any."""
    experts = model.experts
    if experts is None:
        return None
    e, k = experts.names
    law = (
        f"{e}/ep × (1 − (({e} − {k})/{e})^tokens)"
        if experts.routing == "uniform"
        else f"min({e}/ep, tokens × {k})"
    )
    ranks = (
        f"ep × (1 − C({e} − {e}/ep, {k})/C({e}, {k}))"
        if experts.routing == "uniform"
        else f"min({k}, ep)"
    )
    return {
        "count": f"{experts.count:,}",
        "active": f"{experts.active:,}",
        "shared": experts.shared,
        "routing": experts.routing,
        "law": law,
        # Only where a step reads it (dispatch and combine): the steps show `ranks`
        "ranks": ranks if any(step.written for step in model.steps) else None,
    }


def _model_page(site: Site, model: Model, devices: list[str], eligible: int) -> list[GeneratedPage]:
    path = f"models/{model.id}.md"
    page = Page(path, site)
    cat = site.catalog
    source_links = [page.link(sid, f"{path}#source-{sid}") for sid in own_sources(model)]
    parameters = [
        {"name": name, "value": f"{value:,}", "sources": source_links}
        for name, value in model.parameters.items()
    ]
    phases = [
        {
            "name": phase,
            "variables": ", ".join(f"{k} = {v:,}" for k, v in values.items())
            + _speculation_text(model.speculation.get(phase)),
            "tokens": _tokens_text(model.tokens_by_phase[phase]),
        }
        for phase, values in model.phases.items()
    ]
    steps = []
    collectives = []
    for step in model.steps:
        if cat.kernels[step.kernel].collective is None:
            continue
        # Plain text, not MathML: they are not evaluated on one chip, and the page stays small.
        collectives.append(
            {
                "id": step.id,
                "name": step.name,
                "kernel": page.kernel_link(step.kernel, step.kernel),
                "group": step.shape["n"].text,
            }
        )
    for n, (_, step) in enumerate(on_one_chip(site, model), start=1):
        bound = [f"{k}: {cat.precisions[v].label}" for k, v in step.widths.items()]
        steps.append(
            {
                "n": n,
                "id": step.id,
                "name": step.name,
                "kernel": page.kernel_link(step.kernel),
                # As the spec writes them: `ranks` by name (the experts line binds it)
                "written": ", ".join(
                    f"{k}: {step.written.get(k, f.text)}" for k, f in step.shape.items()
                ),
                "count": step.count.text,
                "precision": ", ".join(
                    [cat.precisions[step.precision or model.precision].label, *bound]
                ),
            }
        )
    passes = []
    for phase in model.phases:
        rows = [model_rows(site).get((model.id, phase, d)) for d in devices]
        passes.append({"phase": phase, "cells": [_pass_cell(site, r) for r in rows]})
    deployments = deployment_rows(site, page, model, devices)
    # The per-step sections: on this page, or on their own for a long model
    apart = len(steps) > STEPS_ON_PAGE
    detail = Page(steps_path(model.id), site) if apart else page
    sections = {
        "steps": steps,
        "step_chart": _step_chart(site, detail, model, focus_phase(model), devices),
        "roofline": _roofline(site, detail, model),
        "crossovers": _crossover_table(site, detail, model, devices),
    }
    measured = []
    for m in model.measured:
        r = model_rows(site).get((model.id, m.phase, m.device))
        if r is None or r.precision != m.precision or m.device not in cat.devices:
            continue
        measured.append(
            {
                "device": page.device_link(m.device),
                "phase": m.phase,
                "precision": cat.precisions[m.precision].label,
                "printed": m.text,
                "roofline": time_text(r),
                "efficiency": format_percent(r.efficiency) if r.efficiency is not None else "–",
                "source": page.link(m.source, f"{path}#source-{m.source}"),
                "note": m.note,
            }
        )
    memory = _memory_table(site, model)
    text = site.render(
        "model.md.j2",
        page,
        model=model,
        precision=cat.precisions[model.precision],
        parameters=parameters,
        phases=phases,
        experts=_experts_line(model),
        collectives=collectives,
        passes=passes,
        devices=[page.device_link(d) for d in devices],
        shown=len(devices),
        eligible=eligible,
        measured=measured,
        serving=len(model.serving),
        serving_devices=len({r.device for r in model.serving}),
        serving_link=page.href("accuracy/" + model.id + ".md"),
        calculator=calculator_link(page, model=model.id)
        if calculator_deployments(site, model)
        else None,
        memory=memory,
        details=page.href(steps_path(model.id)),
        # A long model's page keeps its steps table and links the sections' own page
        **(sections if not apart else {**sections, "step_chart": None}),
        deployments=deployments,
        frontiers=[page.link(r, frontier_path(model.id, r)) for r in model.requests]
        if site.frontier
        else [],
        csv=f"{model.id}.csv",
        tokens=page.href(TOKENS_PAGE),
        sources=sources_context(site, page, model.id, own_sources(model), f"{path}#source-"),
        versions=sorted(model.versions, key=lambda v: -v.version),
    )
    made = GeneratedPage(path, model.name, text, page.slots, page.assets)
    if not apart:
        return [made]
    text = site.render(
        "model_steps.md.j2",
        detail,
        model=model,
        back=detail.href(path),
        # The sections link the deployments page: from the page they are on
        deployments=deployment_rows(site, detail, model, devices),
        **sections,
    )
    steps_page = GeneratedPage(
        detail.path, f"{model.name}: each step", text, detail.slots, detail.assets
    )
    return [made, steps_page]


def _memory_table(site: Site, model: Model) -> dict[str, Any] | None:
    """The memory ledger as written, with the value of each size that does not depend on
    the phase, on one chip at the model's precision (the reserve and the fit depend on
    the device: the passes show them; explain and the downloads give every term)."""
    ledger = model.memory
    if ledger is None:
        return None
    cat = site.catalog
    first = next(iter(model.phases))
    fit = evaluate_fit(cat, model, first, model.precision, None)
    run = model.phases[first]
    per_token = None
    if fit is not None and ledger.kv is None and ledger.kv_per_token is not None:
        per_token = fit.ledger.kv_cache / (run.get("b", 1) * run.get("L", 1))
    written = [
        {
            "name": "weights",
            "text": ledger.weights.text,
            "value": format_si(fit.ledger.weights, "B") if fit is not None else None,
        }
    ]
    if ledger.kv_per_token is not None:
        value = format_si(per_token, "B") if per_token is not None else None
        written.append({"name": "KV per token", "text": ledger.kv_per_token.text, "value": value})
    if ledger.kv is not None:
        written.append({"name": "KV cache", "text": ledger.kv.text, "value": None})
    written += [
        {"name": md(f"width {n}"), "text": cat.precisions[p].label, "value": None}
        for n, p in ledger.widths.items()
    ]
    act = ledger.activations
    if act is None:
        activations = "the method note's rule"
    elif act.value is not None:
        activations = f"{act.text} per sequence"
    else:
        activations = act.text
    return {
        "written": written,
        "activations": md(activations),
        "reserve": format_percent(ledger.reserve),
    }


def _pass_cell(site: Site, r: ModelResult | None) -> Markup:
    """One pass in a phase × device cell: tokens per second (bold), time, attainable,
    the shares of the time by limit, and the measured time and efficiency if any."""
    if r is None:
        return Markup("–")
    rate = Markup("**{}**") if r.fits is False else Markup("**{}** tokens/s")
    lines = [
        rate.format(md(tokens_text(r))),
        md(time_text(r)),
        md(site.rate(r.attainable, r.precision)),
        md(limit_shares(r)),
    ]
    if r.measured_time is not None and r.efficiency is not None:
        measured = format_si(r.measured_time, "s")
        lines.append(md(f"measured {measured}, efficiency {format_percent(r.efficiency)}"))
    return Markup("<br>").join(lines)


def on_one_chip(site: Site, model: Model) -> list[tuple[int, ModelStep]]:
    """The steps a one-chip pass evaluates, with their places among the model's: the
    pages show one chip, where a collective's group is one chip and moves nothing."""
    kernels = site.catalog.kernels
    return [(i, s) for i, s in enumerate(model.steps) if kernels[s.kernel].collective is None]


def step_chart_rows(
    site: Site, model: Model, phase: str, devices: Sequence[str]
) -> list[dict[str, Any]]:
    """The stacked bar's data: a row per device and step of `phase`, time in seconds."""
    rows: list[dict[str, Any]] = []
    names = {step.id: step.name for step in model.steps}
    for d in devices:
        r = model_rows(site).get((model.id, phase, d))
        if r is None:
            continue
        for n, s in enumerate(r.steps, start=1):
            rows.append(
                {
                    "device": site.catalog.devices[d].name,
                    "n": n,
                    "step": f"{n}. {names[s.step]}",
                    "time": float(s.time),
                    "time_label": time_text(s),
                    "bound": limit_label(s.limited_by),
                }
            )
    return rows


def _step_chart(
    site: Site, page: Page, model: Model, phase: str, devices: Sequence[str]
) -> dict[str, Any]:
    """One phase's stacked bar of step times per device, and its table."""
    found = [r for d in devices if (r := model_rows(site).get((model.id, phase, d))) is not None]
    names = [site.catalog.devices[r.device].name for r in found]
    chart = charts.model_steps_chart(
        f"steps-{phase}",
        f"{model.name}, {phase}: time of each step per device",
        step_chart_rows(site, model, phase, [r.device for r in found]),
        names,
    )
    return {
        "phase": phase,
        "chart": chart,
        "steps": [step.id for _, step in on_one_chip(site, model)],
        "rows": [
            {
                "device": site.catalog.devices[r.device].name,
                "cells": [time_text(s) for s in r.steps],
                "total": time_text(r),
            }
            for r in found
        ],
    }


def _roofline(site: Site, page: Page, model: Model) -> dict[str, Any] | None:
    """The steps of the charted phases as markers on one device's roofline."""
    device = roofline_device(site, model)
    if device is None:
        return None
    engine = site.compiled.model_engine
    results = []
    labels: dict[str, str] = {}
    rows = []
    phase = focus_phase(model)
    r = model_rows(site).get((model.id, phase, device))
    if r is not None:
        for (index, step), s in zip(on_one_chip(site, model), r.steps, strict=True):
            one = step_instance(engine, model, phase, index, device, s.precision)
            key = f"{phase}/{step.id}"
            results.append(replace(one, case=key))
            labels[key] = step.name
            where = next((lv for lv in LEVELS if lv in s.intensity), None)
            rows.append(
                {
                    "n": len(results),
                    "step": step.name,
                    "intensity": site.intensity(s.intensity[where], s.precision) if where else "–",
                    "attainable": site.rate(s.attainable, s.precision),
                    "limited_by": limit_label(s.limited_by),
                    "time": time_text(s),
                }
            )
    if not results:
        return None
    chart = charts.device_roofline(site.compiled, device, results, model.precision, labels)
    return {"device": page.device_link(device), "phase": phase, "chart": chart, "rows": rows}


def _crossover_table(
    site: Site, page: Page, model: Model, devices: Sequence[str]
) -> dict[str, Any] | None:
    """Per step of the first decode phase and shown device: the batch from which on the
    step is compute bound."""
    decode = decode_phases(model)
    if not decode or BATCH not in model.phases[decode[0]]:
        return None
    phase = decode[0]
    held = ", ".join(f"{k} = {v:,}" for k, v in model.phases[phase].items() if k != BATCH)
    rows = []
    never = []
    for index, step in on_one_chip(site, model):
        cells = []
        for d in devices:
            x = step_crossover(site.catalog, model, index, phase, site.compiled.devices[d])
            cells.append(crossover_text(x.regions is not None, x.crossover))
        if cells and all(c == "never" for c in cells):
            never.append(step.name)  # one line for them all keeps the page small
        else:
            rows.append({"step": step.name, "id": step.id, "cells": cells})
    return {
        "phase": phase,
        "held": held,
        "devices": [page.device_link(d) for d in devices],
        "rows": rows,
        "never": never,
    }


# --------------------------------------------------------------------------- downloads


def model_csv(site: Site, model: Model) -> str:
    """Every pass of the model at its precision on every device, as `compile` writes it."""
    rows = [r for (m, _, _), r in model_rows(site).items() if m == model.id]
    # A row's line is kept per device (`reuse.device_memo`), as the row is: an edit to
    # one device writes that device's lines again, not the whole file.
    memos = [device_memo(site, "model csv lines", r.device) for r in rows]
    missing = [n for n, r in enumerate(rows) if (r.model, r.phase) not in memos[n]]
    made = model_csv_lines([rows[n] for n in missing])
    for n, line in zip(missing, made, strict=True):
        memos[n][rows[n].model, rows[n].phase] = line
    lines = [model_csv_header()]
    lines.extend(memo[r.model, r.phase] for r, memo in zip(rows, memos, strict=True))
    return "".join(lines)


def tokens_pages(site: Site) -> list[GeneratedPage]:
    """`models/tokens.md` (and `tokens-2.md`, ...): every model's every phase on every
    device at the model's precision, by model then tokens per second; the chart (on the
    first page) draws one model and phase on the featured devices or one vendor's."""
    cat = site.catalog
    order = {m: i for i, m in enumerate(cat.models)}
    rows = sorted(
        model_rows(site).values(),
        key=lambda r: (order[r.model], r.fits is False, -r.tokens_per_second, r.phase),
    )
    featured: dict[str, set[str]] = {}
    for model in cat.models.values():
        featured[model.id] = set(
            charts.featured_devices(site.compiled, eligible_devices(site, model), model.precision)
        )
    passes = [f"{m.name} · {phase}" for m in cat.models.values() for phase in m.phases]

    def texts(r: ModelResult) -> tuple[str, str, str, str]:
        """(tokens/s, time, what holds most of it, its limit) of a pass: kept per device
        (`reuse.device_memo`), as its model rows are."""
        memo = device_memo(site, "tokens texts", r.device)
        key = (r.model, r.phase, r.precision)
        hit = memo.get(key)
        if hit is None:
            bound = limit_label(dominant_limit(r))
            hit = memo[key] = (tokens_text(r), time_text(r), most_time(r), bound)
        return hit

    data = [
        {
            "pass": f"{cat.models[r.model].name} · {r.phase}",
            "device": cat.devices[r.device].name,
            "vendor": cat.devices[r.device].vendor,
            "featured": r.device in featured[r.model],
            "tps": float(r.tokens_per_second),
            "label": f"{texts(r)[0]} tokens/s",
            "bound": texts(r)[3],
        }
        for r in rows
        if r.fits is not False  # the chart draws rates: a pass that does not fit has none
    ]
    vendors = list(dict.fromkeys(d.vendor for d in cat.devices.values()))
    chart = charts.tokens_chart(data, passes, vendors) if data else None

    def line(page: Page, r: ModelResult) -> Markup:
        """A pass's row of the table, kept per device as its texts are (its links are
        relative to the page's folder, part of the key)."""
        memo = device_memo(site, "tokens rows", r.device)
        key = (posixpath.dirname(page.path), r.model, r.phase, r.precision)
        hit = memo.get(key)
        if hit is None:
            tokens, time, most, _ = texts(r)
            cells = [
                page.link(cat.models[r.model].name, f"models/{r.model}.md"),
                r.phase,
                page.device_link(r.device),
                cat.devices[r.device].vendor,
                cat.precisions[r.precision].label,
                tokens,
                time,
                most,
            ]
            hit = memo[key] = md_row(cells, strong=5)
        return hit

    def text(page: Page, n: int, chunk: Sequence[ModelResult], pager: Markup) -> str:
        return site.render(
            "model_tokens.md.j2",
            page,
            chart=chart if n == 1 else None,
            lines=[line(page, r) for r in chunk],
            total=len(rows),
            models=len(cat.models),
            pager=pager,
        )

    return split_pages(
        site, TOKENS_PAGE, chunks_of(rows, PER_TOKENS_PAGE), lambda n: "Tokens per second", text
    )


# --------------------------------------------------------------------------- device pages


def device_models(site: Site, page: Page, device_id: str) -> dict[str, Any]:
    """A device page's table of models: each model's first decode phase (else its first
    phase) at its precision here, for the first `MAX_DEVICE_MODEL_ROWS` models that run
    here (device pages are near their size limit; the comparison has every pass)."""
    cat = site.catalog
    found = [
        r
        for model in cat.models.values()
        if (r := model_rows(site).get((model.id, focus_phase(model), device_id))) is not None
    ]
    shown = found[:MAX_DEVICE_MODEL_ROWS]
    return {
        "rows": [
            {
                "model": page.link(r.model, f"models/{r.model}.md"),
                "phase": r.phase,
                "time": time_text(r),
                "tokens": tokens_text(r),
                "limited_by": limit_label(dominant_limit(r)),
            }
            for r in shown
        ],
        "hidden": len(found) - len(shown),
        "tokens": page.href(TOKENS_PAGE),
    }


def _speculation_text(spec: Speculation | None) -> str:
    """A phase's speculation after its variables: none, or its k and acceptance."""
    if spec is None:
        return ""
    return (
        f", a verify pass of k = {spec.k} drafts at acceptance {format_number(spec.acceptance, 6)}"
    )


def _tokens_text(value: int | Fraction) -> str:
    """Tokens per pass: a whole number, or to four digits for a verify pass."""
    return f"{value:,}" if isinstance(value, int) else format_number(value, 4)


def serving_sources(model: Model) -> dict[str, Source]:
    """The sources only the model's measured serving results cite: listed on its page of
    them (`accuracy/<id>.md`), where the results are, not on the model's page."""
    cited = {r.source for r in model.serving}
    others = {m.source for m in model.measured}
    return {sid: s for sid, s in model.sources.items() if sid in cited and sid not in others}


def own_sources(model: Model) -> dict[str, Source]:
    """The sources the model's page lists: all but `serving_sources`."""
    serving = serving_sources(model)
    return {sid: s for sid, s in model.sources.items() if sid not in serving}
