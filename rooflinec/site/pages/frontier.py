"""The latency–throughput frontier on the site: a page per model and request shape, and
the comparison's summary.

`models/<id>/frontier-<request>.md` (the model page is near its size limit, as for the
named deployments; one page per shape, as a shape's points alone can take half a page)
shows, for a named request shape of the model (`Model.requests`), the frontier
of tokens/s per user against tokens/s per chip on the devices the model page shows
(`models.shown_devices`): a chart with a line per device and a slider for the per-user
target, the frontier's points as a table, and the best deployment per device at 20 and
at 50 tokens/s per user, as `rooflinec plan --min-user-rate R --objective
tokens-per-chip` answers them (`frontier.best`, the same function).

Each (model, request shape, device) is worked out once per build, in one place
(`device_frontier_entry`, kept per device by `reuse.device_memo`): a `serve` rebuild
after an edit of one device's spec works out that device's frontiers only. The entry
holds the figures as text (and the chart's floats), so nothing of the engine is kept
between builds.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from rooflinec.engine.frontier import Choice, Point, Targets, best, device_frontier
from rooflinec.formatting import format_number, format_si
from rooflinec.outputs.plan import READER
from rooflinec.site import charts
from rooflinec.site.escape import md, md_row
from rooflinec.site.pages.common import GeneratedPage, frontier_path
from rooflinec.site.pages.model import Page
from rooflinec.site.pages.reuse import device_memo, for_devices

if TYPE_CHECKING:
    from rooflinec.catalog import Model, RequestShape
    from rooflinec.site.pages.model import Site

__all__ = [
    "SHOWN_TARGETS",
    "BestRow",
    "FrontierEntry",
    "device_frontier_entry",
    "frontier_pages",
    "frontier_summary",
    "model_frontiers",
]

#: The per-user targets (tokens/s per user) the best-deployment tables answer.
SHOWN_TARGETS = (20, 50)
NO_PRICE = "no quoted price"
ENERGY_NOTE = "at board power: a reference figure, not a bound"
TARGET_NAMES = {
    "min-user-rate": "tokens/s per user",
    "max-ttft": "time to first token",
    "max-latency": "request latency",
    "max-chips": "chips",
}


# --------------------------------------------------------------------------- one device


@dataclass(frozen=True)
class BestRow:
    """A device's best deployment at one per-user target, as the page prints it: the
    cells after the device's, or why there is none (`none`)."""

    target: int
    cells: tuple[str, ...]  # chips, tp / pp / ep, batch, tokens/s per chip, per user, ttft,
    # itl, USD per million tokens, J per token; () when `none` says why there is none
    none: str = ""
    # What `plan` answers, for the tests: (chips, tp, pp, ep, batch), None without a plan
    deployment: tuple[int, int, int, int, int] | None = None
    chip_rate: Fraction | None = None  # exact tokens/s per chip, to rank devices


@dataclass(frozen=True)
class FrontierEntry:
    """One device's frontier for one model and request shape, as text and floats: made
    from the model, the request shape, the device's spec, the precision and the price
    alone (kept per device between `serve` rebuilds)."""

    device: str
    problem: str | None  # why the device has no points at all
    points: tuple[dict[str, Any], ...]  # the chart's rows (without the device's name)
    cells: tuple[tuple[str, str, str, str], ...]  # per user, per chip, chips (split), batch
    best: tuple[BestRow, ...]  # one per `SHOWN_TARGETS`


def split_text(chips: int, tp: int, pp: int, ep: int) -> str:
    """`8 (tp 8)`: the chips and the degrees above 1."""
    degrees = [f"{n} {v}" for n, v in (("tp", tp), ("pp", pp), ("ep", ep)) if v > 1]
    return f"{chips:,}" + (f" ({', '.join(degrees)})" if degrees else "")


def _rate(value: Fraction | None) -> str:
    return "–" if value is None else format_number(value, 4)


def _price_cell(site: Site, device: str, point: Point) -> str:
    """USD per million tokens with where the price comes from: the reader's (labelled),
    or the device's quoted price with its date; "no quoted price" without either."""
    r = point.result
    if r.usd_per_million_tokens is None:
        return NO_PRICE
    cost = format_number(r.usd_per_million_tokens, 4)
    if r.price_source == "reader":
        return f"{cost} ({READER})"
    price = site.catalog.devices[device].price
    return f"{cost} (quoted {price.date})" if price is not None else cost


def _best_row(site: Site, device: str, target: int, choice: Choice) -> BestRow:
    point = choice.point
    if point is None:
        if choice.note is not None and choice.binding is None:
            return BestRow(target, (), f"no plan: {choice.note}")
        binding = TARGET_NAMES.get(choice.binding or "", "")
        why = f" (binding: {binding})" if binding else ""
        return BestRow(target, (), f"none meets {target} tokens/s per user{why}")
    r, d = point.result, point.deployment
    cells = (
        f"{d.total:,}",
        f"{d.tp} / {d.pp} / {d.ep}",
        f"{r.batch:,}",
        _rate(r.tokens_per_second_per_chip),
        _rate(r.tokens_per_second_per_user),
        format_si(r.ttft, "s"),
        "–" if r.itl is None else format_si(r.itl, "s"),
        _price_cell(site, device, point),
        "–" if r.joules_per_token is None else format_number(r.joules_per_token, 4),
    )
    deployment = (d.total, d.tp, d.pp, d.ep, r.batch)
    return BestRow(target, cells, "", deployment, r.tokens_per_second_per_chip)


def _entry(site: Site, model: Model, shape: RequestShape, device: str) -> FrontierEntry:
    engine = site.compiled.model_engine
    found = device_frontier(
        engine, model.id, device, model.precision, shape, site.prices.get(device)
    )
    points = []
    cells = []
    for p in found.frontier:
        d, r = p.deployment, p.result
        split = split_text(d.total, d.tp, d.pp, d.ep)
        user, chip = _rate(r.tokens_per_second_per_user), _rate(r.tokens_per_second_per_chip)
        points.append(
            {
                "user": p.user_rate,
                "chip": p.chip_rate,
                "deployment": split,
                "batch": r.batch,
                "user_label": user,
                "chip_label": chip,
            }
        )
        cells.append((user, chip, split, f"{r.batch:,}"))
    rows = tuple(
        _best_row(
            site,
            device,
            target,
            best(found, Targets(min_user_rate=Fraction(target)), "tokens-per-chip"),
        )
        for target in SHOWN_TARGETS
    )
    return FrontierEntry(device, found.problem, tuple(points), tuple(cells), rows)


def device_frontier_entry(site: Site, model: Model, request: str, device: str) -> FrontierEntry:
    """The frontier of `model` for its request shape `request` on `device`, worked out
    once per build and kept between `serve` rebuilds while the device's spec (and what
    every device page reads: the models, kernels, precisions) compare equal."""
    shape = model.requests[request]
    memo = device_memo(site, "frontier", device)
    key = (model.id, request, shape, model.precision, site.prices.get(device))
    hit: FrontierEntry | None = memo.get(key)
    if hit is None:
        hit = memo[key] = _entry(site, model, shape, device)
    return hit


def model_frontiers(site: Site, model: Model) -> dict[str, list[FrontierEntry]]:
    """Per named request shape of `model`: the frontier entry of each device its page
    shows, in that order (the one place the site works the frontiers out)."""
    from rooflinec.site.pages.models import shown_devices

    devices = shown_devices(site, model)
    return {
        request: [device_frontier_entry(site, model, request, d) for d in devices]
        for request in model.requests
    }


def site_frontiers(site: Site) -> dict[str, dict[str, list[FrontierEntry]]]:
    """`model_frontiers` of every model, once per build (`site.derived`)."""
    if "frontiers" not in site.derived:
        site.derived["frontiers"] = {
            m.id: model_frontiers(site, m) for m in site.catalog.models.values()
        }
    found: dict[str, dict[str, list[FrontierEntry]]] = site.derived["frontiers"]
    return found


# --------------------------------------------------------------------------- the page


def _section(
    site: Site, page: Page, model: Model, request: str, entries: list[FrontierEntry]
) -> dict[str, Any]:
    cat = site.catalog
    shape = model.requests[request]
    names = {e.device: cat.devices[e.device].name for e in entries}
    rows = [{"device": names[e.device], **p} for e in entries for p in e.points]
    chart = None
    if rows:
        chart = charts.frontier_chart(
            "frontier",
            f"{model.name}, {request} ({shape.input:,} in, {shape.output:,} out): frontier",
            rows,
            [names[e.device] for e in entries if e.points],
        )
    points = [md_row([names[e.device], *c]) for e in entries for c in e.cells]
    problems = [
        {"device": page.device_link(e.device), "why": e.problem}
        for e in entries
        if e.problem is not None
    ]
    tables = []
    for i, target in enumerate(SHOWN_TARGETS):
        lines = []
        for e in entries:
            row = e.best[i]
            if row.cells:
                lines.append(md_row([page.device_link(e.device), *row.cells], strong=4))
            else:
                lines.append(
                    md_row([page.device_link(e.device), Markup("*") + md(row.none) + Markup("*")])
                    + Markup(" |" * 8)
                )
        tables.append({"target": target, "lines": lines})
    return {
        "id": request,
        "input": f"{shape.input:,}",
        "output": f"{shape.output:,}",
        "chart": chart,
        "points": points,
        "problems": problems,
        "tables": tables,
    }


def frontier_pages(site: Site, model: Model) -> list[GeneratedPage]:
    """`models/<id>/frontier-<request>.md`, one per named request shape of `model`. Each
    reads the shown devices' specs alone: a `serve` rebuild keeps it while they (and the
    reader's prices for them) compare equal."""
    from rooflinec.site.pages.models import shown_devices

    devices = tuple(shown_devices(site, model))
    prices = tuple(site.prices.get(d) for d in devices)
    return [
        for_devices(
            site,
            "frontier page",
            f"{model.id}/{request}",
            devices,
            _frontier_page,
            site,
            model,
            request,
            extra=(devices, prices),
        )
        for request in model.requests
    ]


def _frontier_page(site: Site, model: Model, request: str) -> GeneratedPage:
    path = frontier_path(model.id, request)
    page = Page(path, site)
    found = model_frontiers(site, model)  # kept per device: the same as site_frontiers'
    others = [
        page.link(other, frontier_path(model.id, other))
        for other in model.requests
        if other != request
    ]
    text = site.render(
        "model_frontier.md.j2",
        page,
        model=model,
        model_link=page.link(model.name, f"models/{model.id}.md"),
        precision=site.catalog.precisions[model.precision],
        s=_section(site, page, model, request, found[request]),
        others=others,
        energy=ENERGY_NOTE,
        reader=READER,
        method=page.method_link("method note"),
    )
    title = f"{model.name}: frontier, {request}"
    return GeneratedPage(path, title, text, page.slots, page.assets)


# --------------------------------------------------------------------------- comparison


def frontier_summary(site: Site, page: Page) -> list[Markup]:
    """The comparison page's summary: per model and request shape, the device with the
    most tokens/s per chip at each shown per-user target (among the devices its page
    shows), and a link to the model's frontier page."""
    lines = []
    cat = site.catalog
    for model_id, by_request in site_frontiers(site).items():
        model = cat.models[model_id]
        for request, entries in by_request.items():
            cells: list[Any] = [
                page.link(f"{model.name}, {request}", frontier_path(model_id, request))
            ]
            for i, target in enumerate(SHOWN_TARGETS):
                top = _top(entries, i)
                if top is None:
                    cells.append(f"none meets {target} tokens/s per user")
                    continue
                e, row = top
                chips = row.cells[0] + (" chip" if row.cells[0] == "1" else " chips")
                cells.append(
                    Markup("{} ({} tokens/s per chip, {})").format(
                        page.device_link(e.device), md(row.cells[3]), md(chips)
                    )
                )
            lines.append(md_row(cells))
    return lines


def _top(entries: list[FrontierEntry], i: int) -> tuple[FrontierEntry, BestRow] | None:
    """The entry whose best row at target index `i` has the most tokens/s per chip."""
    found: tuple[FrontierEntry, BestRow] | None = None
    for e in entries:
        row = e.best[i]
        if row.chip_rate is None:
            continue
        if found is None or row.chip_rate > (found[1].chip_rate or 0):
            found = (e, row)
    return found
