"""Deployments on the model pages: the fewest chips each shown device needs, and the
model's named deployments with the time their collectives take.

A model page's "Deployments" table has a row per shown device for one phase, the
model's heaviest decode phase (`deployment_phase`): the fewest chips whose memory ledger
fits (`fewest_chips`: 1, 2, 4, ... 1,024 chips, each split tensor parallel within the
scale-up domain first, then over pipeline stages, as the model's shapes allow:
`chip_split`), the pass there and at min(domain, 64) chips. The search reads the ledger
alone (cheap, `MemoryEngine.fit`); passes are compiled only at the two deployments
chosen, by the engine's own per-deployment compile (`ModelEngine.row`), so a row's
figures are those `compile --tp N --pp N` prints.

A device's row is a function of the model, the device's spec and the precision alone:
it is rendered once per device and kept between `serve` rebuilds like the tokens pages'
rows (`reuse.device_memo`).

The named deployments of a model spec (`deployments:`) get a page of their own,
`models/<id>/deployments.md` (the model page is near its size limit): every phase at
every named deployment, and the time of each step of the charted phase there, the
collective steps (limited by `scale_up` or `scale_out`, the level they cross) included.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from rooflinec.catalog import ONE_CHIP, Deployment, Model
from rooflinec.engine.memory import CHIP_DEGREES, evaluate_fit
from rooflinec.engine.solve_model import collective_time
from rooflinec.engine.step_crossover import decode_phases
from rooflinec.formatting import format_number, format_percent, format_si
from rooflinec.site import charts
from rooflinec.site.escape import md, md_row
from rooflinec.site.pages.common import GeneratedPage, focus_phase, limit_label, tokens_text
from rooflinec.site.pages.model import Page
from rooflinec.site.pages.reuse import device_memo, for_devices

if TYPE_CHECKING:
    from rooflinec.engine.models import ModelEngine, ModelResult
    from rooflinec.site.pages.model import Site

__all__ = [
    "DOMAIN_CAP",
    "chip_split",
    "deployment_phase",
    "deployment_rows",
    "deployments_page",
    "deployments_path",
    "fewest_chips",
    "named_results",
]

#: The most chips the "at the domain" column uses: min(the fabric's domain, 64).
DOMAIN_CAP = 64
NO_FABRIC = "no fabric stated"
STEPS_ANCHOR = "steps-at-each-deployment"


def deployments_path(model_id: str) -> str:
    """The page of a model's named deployments, in the model's own folder."""
    return f"models/{model_id}/deployments.md"


# --------------------------------------------------------------------------- choosing


def deployment_phase(site: Site, model: Model) -> str:
    """The phase the Deployments table sizes the chips for: the decode phase (else any
    phase) whose memory ledger on one chip is the largest, the first on ties; the first
    decode phase (else the first phase) for a model without a ledger."""
    phases = decode_phases(model) or list(model.phases)
    if model.memory is None:
        return phases[0]
    best, most = phases[0], Fraction(-1)
    for phase in phases:
        fit = evaluate_fit(site.catalog, model, phase, model.precision, None, needs=False)
        total = fit.ledger.total if fit is not None else Fraction(-1)
        if total > most:
            best, most = phase, total
    return best


def chip_split(engine: ModelEngine, model: Model, device: str, chips: int) -> Deployment | None:
    """`chips` split tensor parallel within the device's scale-up domain first, then over
    pipeline stages: the largest tp (a divisor of `chips`, at most the domain; 1 without a
    scale-up fabric) that the model's shapes allow and whose collectives the device's
    levels carry; None when no split is one."""
    if chips == 1:
        return ONE_CHIP
    up = engine.links(device).get("scale_up")
    most = 1 if up is None else chips if up.domain is None else min(chips, up.domain)
    for tp in range(most, 0, -1):
        if chips % tp:
            continue
        deployment = Deployment(tp=tp, pp=chips // tp)
        if engine.deployment_problem(model, deployment) is not None:
            continue
        if engine.fabric_problem(model, device, deployment) is None:
            return deployment
    return None


@dataclass(frozen=True)
class Fewest:
    """What the search for the fewest chips found: a deployment, or why there is none."""

    deployment: Deployment | None
    reason: str  # shown in place of the chips when there is no deployment


def fewest_chips(engine: ModelEngine, model: Model, phase: str, device: str) -> Fewest:
    """The fewest chips (1, 2, 4, ... 1,024, each split by `chip_split`) on which the
    memory ledger of `phase` fits the device, at the model's precision: the ledger
    alone is evaluated, no pass. Without one, why: no ledger, no capacity, or no fit on
    the most chips with a split (one chip alone when the device has no fabric, or the
    model's shapes allow no split)."""
    tried = 0  # the most chips with a split
    for chips in CHIP_DEGREES:
        deployment = chip_split(engine, model, device, chips)
        if deployment is None:
            continue
        tried = chips
        fit = engine.memory.fit(model, phase, model.precision, device, deployment)
        if fit is None:
            if model.memory is None:
                return Fewest(None, "no memory ledger")
            continue  # the ledger has no whole value at this split
        if fit.fits is None:
            return Fewest(None, "no DRAM capacity stated")
        if fit.fits:
            return Fewest(deployment, "")
    if tried == 1:
        return Fewest(None, "does not fit one chip, and no split over more")
    return Fewest(None, f"does not fit up to {tried:,} chips")


def split_text(d: Deployment) -> str:
    """`16 (tp 8, pp 2)`: the chips and the degrees above 1 (`1` alone on one chip)."""
    degrees = [f"{n} {v}" for n, v in (("tp", d.tp), ("pp", d.pp), ("ep", d.ep)) if v > 1]
    return f"{d.total:,}" + (f" ({', '.join(degrees)})" if degrees else "")


def fabric_text(engine: ModelEngine, device: str) -> str:
    up = engine.links(device).get("scale_up")
    if up is None:
        return NO_FABRIC
    return f"{up.domain:,} chips" if up.domain is not None else "no domain stated"


# --------------------------------------------------------------------------- the table


def deployment_cells(site: Site, model: Model, phase: str, device: str) -> tuple[str, ...]:
    """One device's row of the Deployments table as texts: the fabric's domain, fewest
    chips, tokens/s there, time (time overlapped), limited by, largest batch, tokens/s at
    min(domain, 64) chips. A function of the model, the device's spec and the precision
    alone."""
    engine = site.compiled.model_engine
    fabric = fabric_text(engine, device)
    found = fewest_chips(engine, model, phase, device)
    dash = "–"
    if found.deployment is None:
        head: tuple[str, ...] = (found.reason, dash, dash, dash, dash)
    else:
        r = engine.row(model.id, phase, device, model.precision, found.deployment)
        head = (
            split_text(found.deployment),
            tokens_text(r),
            f"{format_si(r.time, 's')} ({format_si(r.time_overlapped, 's')})",
            limit_label(r.limited_by),
            f"{r.max_batch:,}" if r.max_batch is not None else dash,
        )
    return (fabric, *head, _at_domain(engine, model, phase, device, found))


def _at_domain(engine: ModelEngine, model: Model, phase: str, device: str, found: Fewest) -> str:
    """Tokens per second at min(domain, 64) chips, with the split; a dash without a
    domain or without a deployment that fits somewhere (the row says why)."""
    up = engine.links(device).get("scale_up")
    if up is None or up.domain is None or found.deployment is None:
        return "–"
    chips = min(up.domain, DOMAIN_CAP)
    deployment = chip_split(engine, model, device, chips)
    if deployment is None:
        return f"no split of {chips:,} chips"
    r = engine.row(model.id, phase, device, model.precision, deployment)
    if r.fits is False:  # the fewest chips are more than the domain's
        return f"does not fit at {split_text(deployment)}"
    return f"{format_number(r.tokens_per_second, 4)} at {split_text(deployment)}"


def deployment_rows(site: Site, page: Page, model: Model, devices: list[str]) -> dict[str, Any]:
    """The Deployments table of a model page: a row per shown device, each rendered once
    per device spec (`reuse.device_memo`) with its link (every model page is in
    `models/`, so the link's text is the same on each)."""
    phase = deployment_phase(site, model)
    lines = []
    for device in devices:
        memo = device_memo(site, "deployment rows", device)
        key = (model.id, model.precision, phase, page.path.rpartition("/")[0])
        hit = memo.get(key)
        if hit is None:
            cells = deployment_cells(site, model, phase, device)
            hit = memo[key] = md_row([page.device_link(device), *cells], strong=3)
        lines.append(hit)
    run = model.phases[phase]
    held = ", ".join(f"{k} = {v:,}" for k, v in run.items())
    named = bool(model.deployments)
    return {
        "phase": phase,
        "kind": "the heaviest decode phase" if decode_phases(model) else "the heaviest phase",
        "held": held,
        "lines": lines,
        "cap": DOMAIN_CAP,
        "most": f"{CHIP_DEGREES[-1]:,}",
        "named": page.href(deployments_path(model.id)) if named else None,
        "steps": page.href(f"{deployments_path(model.id)}#{STEPS_ANCHOR}") if named else None,
        "names": ", ".join(model.deployments),
    }


# --------------------------------------------------------------------------- named


def named_results(site: Site, model: Model, name: str) -> list[tuple[str, ModelResult | None, str]]:
    """Each phase at the named deployment `name`: (phase, its row or None, why not)."""
    engine = site.compiled.model_engine
    named = model.deployments[name]
    problem = _named_problem(site, model, named.device, named.deployment)
    out: list[tuple[str, ModelResult | None, str]] = []
    for phase in model.phases:
        if problem is not None:
            out.append((phase, None, problem))
            continue
        row = engine.row(model.id, phase, named.device, model.precision, named.deployment)
        out.append((phase, row, ""))
    return out


def _named_problem(site: Site, model: Model, device: str, deployment: Deployment) -> str | None:
    engine = site.compiled.model_engine
    figures = site.compiled.devices.get(device)
    if figures is None:
        return f"device '{device}' is not in the catalog"
    own = {model.precision, *(s.precision for s in model.steps if s.precision is not None)}
    if not own <= figures.peaks.keys():
        return f"no peak at {', '.join(sorted(own - figures.peaks.keys()))} on this device"
    return engine.deployment_problem(model, deployment) or engine.fabric_problem(
        model, device, deployment
    )


def _named_cell(r: ModelResult | None, why: str) -> Markup:
    """A phase at a named deployment: tokens/s (bold; never for a pass that does not
    fit), time, time overlapped, and the collectives' share of the time."""
    if r is None:
        return md(f"not evaluated: {why}")
    rate = Markup("**{}**") if r.fits is False else Markup("**{}** tokens/s")
    talk = collective_time(r)
    lines = [
        rate.format(md(tokens_text(r))),
        md(f"time {format_si(r.time, 's')}"),
        md(f"overlapped {format_si(r.time_overlapped, 's')}"),
        md(f"interconnect {format_percent(talk / r.time)}"),
    ]
    return Markup("<br>").join(lines)


@dataclass(frozen=True)
class NamedEntry:
    """What the deployments page shows of one named deployment, made from the model, the
    deployment's device spec and the precision alone (kept per device between `serve`
    rebuilds): its row of the table, and its steps in the charted phase."""

    line: Markup
    label: str | None  # the chart's bar; None when the charted phase is not evaluated
    chart_rows: tuple[dict[str, Any], ...]
    cells: dict[str, str]  # step id -> the step's time (and limit, for a collective)
    totals: tuple[str, str, str]  # time, time overlapped, interconnect share


def named_entry(site: Site, page: Page, model: Model, name: str, phase: str) -> NamedEntry:
    """One named deployment's entry (`NamedEntry`), kept per its device's spec."""
    device = model.deployments[name].device
    if device not in site.catalog.devices:
        return _named_entry(site, page, model, name, phase)
    memo = device_memo(site, "named deployments", device)
    key = (model.id, name, model.precision, phase, page.path)
    hit: NamedEntry | None = memo.get(key)
    if hit is None:
        hit = memo[key] = _named_entry(site, page, model, name, phase)
    return hit


def _named_entry(site: Site, page: Page, model: Model, name: str, phase: str) -> NamedEntry:
    cat = site.catalog
    named = model.deployments[name]
    d = named.deployment
    results = named_results(site, model, name)
    device = page.device_link(named.device) if named.device in cat.devices else md(named.device)
    line = md_row(
        [
            Markup(f'<span id="deployment-{md(name)}"></span>') + md(name),
            device,
            f"{d.total:,}",
            f"{d.tp} / {d.pp} / {d.ep}",
            *(_named_cell(r, why) for _, r, why in results),
        ]
    )
    r = next((r for p, r, _ in results if p == phase), None)
    if r is None:
        return NamedEntry(line, None, (), {}, ("", "", ""))
    names = {step.id: step.name for step in model.steps}
    order = {step.id: n for n, step in enumerate(model.steps, start=1)}
    collective = {s.id for s in model.steps if cat.kernels[s.kernel].collective is not None}
    label = f"{name} ({r.chips:,} × {cat.devices[r.device].name})"
    chart_rows = []
    cells = {}
    for s in r.steps:
        n = order[s.step]
        mark = " (collective)" if s.step in collective else ""
        time = format_si(s.time, "s")
        chart_rows.append(
            {
                "device": label,
                "n": n,
                "step": f"{n}. {names[s.step]}{mark}",
                "time": float(s.time),
                "time_label": time,
                "bound": limit_label(s.limited_by),
            }
        )
        cells[s.step] = f"{time} ({limit_label(s.limited_by)})" if mark else time
    totals = (
        format_si(r.time, "s"),
        format_si(r.time_overlapped, "s"),
        format_percent(collective_time(r) / r.time),
    )
    return NamedEntry(line, label, tuple(chart_rows), cells, totals)


def deployments_page(site: Site, model: Model) -> GeneratedPage | None:
    """`models/<id>/deployments.md`: every phase at every named deployment, and the time
    of each step of the charted phase at each, collectives included; None for a model
    that names no deployment."""
    if not model.deployments:
        return None
    # It reads the named deployments' devices alone: a `serve` rebuild keeps it while
    # their specs compare equal.
    known = site.catalog.devices
    devices = dict.fromkeys(d.device for d in model.deployments.values() if d.device in known)
    return for_devices(
        site, "deployments page", model.id, tuple(devices), _deployments_page, site, model
    )


def _deployments_page(site: Site, model: Model) -> GeneratedPage:
    path = deployments_path(model.id)
    page = Page(path, site)
    cat = site.catalog
    phase = focus_phase(model)
    entries = {name: named_entry(site, page, model, name, phase) for name in model.deployments}
    notes = [
        {"name": name, "note": named.note}
        for name, named in model.deployments.items()
        if named.note
    ]
    text = site.render(
        "model_deployments.md.j2",
        page,
        model=model,
        model_link=page.link(model.name, f"models/{model.id}.md"),
        precision=cat.precisions[model.precision],
        phases=list(model.phases),
        rows=[e.line for e in entries.values()],
        notes=notes,
        steps=_named_steps(site, page, model, phase, entries),
    )
    return GeneratedPage(path, f"{model.name}: deployments", text, page.slots, page.assets)


def _named_steps(
    site: Site, page: Page, model: Model, phase: str, entries: dict[str, NamedEntry]
) -> dict[str, Any] | None:
    """The time of each step of `phase` at each named deployment that runs it: a stacked
    bar per deployment (collective steps marked) and its table."""
    found = {name: e for name, e in entries.items() if e.label is not None}
    if not found:
        return None
    kernels = site.catalog.kernels
    collective = {s.id for s in model.steps if kernels[s.kernel].collective is not None}
    ran = {sid for e in found.values() for sid in e.cells}
    columns = [s.id for s in model.steps if s.id in ran]
    lines = [
        md_row(
            [
                page.link(name, f"{page.path}#deployment-{name}"),
                *(e.cells.get(sid, "–") for sid in columns),
                *e.totals,
            ],
            strong=len(columns) + 1,
        )
        for name, e in found.items()
    ]
    chart = charts.model_steps_chart(
        f"deployment-steps-{phase}",
        f"{model.name}, {phase}: time of each step per named deployment",
        [row for e in found.values() for row in e.chart_rows],
        [str(e.label) for e in found.values()],
    )
    return {
        "phase": phase,
        "chart": chart,
        "columns": [(sid, sid in collective) for sid in columns],
        "lines": lines,
    }
