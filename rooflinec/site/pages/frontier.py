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
(`_entries`, the devices a page shows together, kept per device by
`reuse.device_memo`): a `serve` rebuild after an edit of one device's spec works out that
device's frontiers only. Figures are printed from the float path's values where their
text cannot differ from the exact value's (`_shown`), from the exact value elsewhere. The entry
holds the figures as text (and the chart's floats), so nothing of the engine is kept
between builds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from rooflinec.engine.frontier import (
    REL,
    Choice,
    DeviceFrontier,
    Point,
    Targets,
    TermsCache,
    best,
    frontiers,
)
from rooflinec.formatting import format_number, format_si
from rooflinec.outputs.plan import READER, TARGET_NAMES
from rooflinec.site import charts
from rooflinec.site.escape import md, md_row
from rooflinec.site.pages.common import GeneratedPage, frontier_path
from rooflinec.site.pages.model import Page
from rooflinec.site.pages.reuse import device_memo, for_devices, reusing

if TYPE_CHECKING:
    from rooflinec.catalog import Model
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
    chip_rate: float | None = None  # tokens/s per chip (within REL), to rank devices


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


def _shown(fmt: Callable[[float | Fraction], str], value: float, exact: Callable[[], Any]) -> str:
    """`fmt` of a figure known as a float within `REL` of its exact value: the float's
    text where both ends of that interval give the same text (rounding is monotone, so
    the exact value's is that too), else the exact value's, made on demand."""
    low, high = fmt(value * (1 - REL)), fmt(value * (1 + REL))
    if low == high:
        return low
    found = exact()
    return "–" if found is None else fmt(found)


def _rate(value: float, exact: Callable[[], Any]) -> str:
    return _shown(lambda v: format_number(v, 4), value, exact)


def _price_cell(site: Site, device: str, point: Point, price: Fraction | None) -> str:
    """USD per million tokens with where the price comes from: the reader's (labelled),
    or the device's quoted price with its date; "no quoted price" without either. The
    cost is the price per chip-second over the tokens/s per chip, × 10^6."""
    quoted = site.catalog.devices[device].price
    per_hour = price if price is not None else None if quoted is None else quoted.per_hour
    if per_hour is None:
        return NO_PRICE
    value = float(per_hour) / 3600 / point.chip_rate * 10**6
    cost = _rate(value, lambda: point.result.usd_per_million_tokens)
    if price is not None:
        return f"{cost} ({READER})"
    assert quoted is not None
    return f"{cost} (quoted {quoted.date})"


def _best_row(
    site: Site, device: str, target: int, choice: Choice, price: Fraction | None
) -> BestRow:
    point = choice.point
    if point is None:
        if choice.note is not None and choice.binding is None:
            return BestRow(target, (), f"no plan: {choice.note}")
        binding = TARGET_NAMES.get(choice.binding or "", "")
        why = f" (binding: {binding})" if binding else ""
        return BestRow(target, (), f"none meets {target} tokens/s per user{why}")
    d, p = point.deployment, point
    power = site.catalog.devices[device].power
    energy = "–"
    if power is not None:
        energy = _rate(float(power.per_chip) / p.chip_rate, lambda: p.result.joules_per_token)
    cells = (
        f"{d.total:,}",
        f"{d.tp} / {d.pp} / {d.ep}",
        f"{p.batch:,}",
        _rate(p.chip_rate, p.exact_chip),
        _rate(p.user_rate, p.exact_user),
        _shown(lambda v: format_si(v, "s"), p.ttft, lambda: p.result.ttft),
        _shown(lambda v: format_si(v, "s"), 1 / p.user_rate, lambda: p.result.itl),
        _price_cell(site, device, point, price),
        energy,
    )
    deployment = (d.total, d.tp, d.pp, d.ep, p.batch)
    return BestRow(target, cells, "", deployment, p.chip_rate)


def _entry(site: Site, found: DeviceFrontier) -> FrontierEntry:
    """A device's frontier entry from its frontier (`engine.frontier`)."""
    device = found.device
    price = site.prices.get(device)
    points = []
    cells = []
    for p in found.frontier:
        d = p.deployment
        split = split_text(d.total, d.tp, d.pp, d.ep)
        user, chip = _rate(p.user_rate, p.exact_user), _rate(p.chip_rate, p.exact_chip)
        points.append(
            {
                "user": p.user_rate,
                "chip": p.chip_rate,
                "deployment": split,
                "batch": p.batch,
                "user_label": user,
                "chip_label": chip,
            }
        )
        cells.append((user, chip, split, f"{p.batch:,}"))
    rows = tuple(
        _best_row(
            site,
            device,
            target,
            best(found, Targets(min_user_rate=Fraction(target)), "tokens-per-chip"),
            price,
        )
        for target in SHOWN_TARGETS
    )
    return FrontierEntry(device, found.problem, tuple(points), tuple(cells), rows)


def _entries(
    site: Site, model: Model, request: str, devices: list[str]
) -> dict[str, FrontierEntry]:
    """The frontier entries of `devices` (their frontiers worked out together: the
    float path's work is shared), each kept per device (`device_memo`)."""
    shape = model.requests[request]
    out: dict[str, FrontierEntry] = {}
    missing: list[str] = []
    for device in devices:
        hit = device_memo(site, "frontier", device).get(_key(site, model, request, device))
        if hit is None:
            missing.append(device)
        else:
            out[device] = hit
    if missing:
        prices = {d: site.prices[d] for d in missing if d in site.prices}
        engine = site.compiled.model_engine
        # What no device's spec changes (the ledger's terms, the deployments' checks, the
        # float path's work), kept between `serve` rebuilds while the models, kernels and
        # precisions compare equal
        cache = (
            for_devices(site, "frontier work", model.id, (), TermsCache)
            if reusing(site)
            else site.derived.setdefault(f"frontier work {model.id}", TermsCache())
        )
        for found in frontiers(
            engine, model.id, missing, model.precision, shape, prices, cache=cache
        ):
            entry = out[found.device] = _entry(site, found)
            memo = device_memo(site, "frontier", found.device)
            memo[_key(site, model, request, found.device)] = entry
    return out


def _key(site: Site, model: Model, request: str, device: str) -> tuple[object, ...]:
    shape = model.requests[request]
    return (model.id, request, shape, model.precision, site.prices.get(device))


def device_frontier_entry(site: Site, model: Model, request: str, device: str) -> FrontierEntry:
    """The frontier of `model` for its request shape `request` on `device`, worked out
    once per build and kept between `serve` rebuilds while the device's spec (and what
    every device page reads: the models, kernels, precisions) compare equal."""
    return _entries(site, model, request, [device])[device]


def model_frontiers(site: Site, model: Model) -> dict[str, list[FrontierEntry]]:
    """Per named request shape of `model`: the frontier entry of each device its page
    shows, in that order (the one place the site works the frontiers out)."""
    from rooflinec.site.pages.models import shown_devices

    devices = shown_devices(site, model)
    found = {request: _entries(site, model, request, devices) for request in model.requests}
    return {request: [entries[d] for d in devices] for request, entries in found.items()}


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
    """The entry whose best row at target index `i` has the most tokens/s per chip; of
    devices within `REL` of each other (the same printed rate), the first listed."""
    found: tuple[FrontierEntry, BestRow] | None = None
    for e in entries:
        row = e.best[i]
        if row.chip_rate is None:
            continue
        if found is None or row.chip_rate > (found[1].chip_rate or 0) * (1 + REL):
            found = (e, row)
    return found
