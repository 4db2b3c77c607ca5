"""The audit pages: every device figure traced from its source to the number the results use.

Rendered from `rooflinec.provenance` (one definition of trail, spread, conflict and age):

- `devices/<id>/audit.md` per device (split into `audit-2.md`, ... when long): each figure's
  source with its age, the verbatim quote, the value as printed, each step with its exact
  factor (÷ 2 for 2:4 sparsity, × the sustained share) and the final value, and the other
  printed values with their source, dense value and relative spread, conflicts marked.
- `conflicts.md`: every figure of the catalog whose comparable alternatives differ by more
  than 1 %, largest spread first.

Ages are counted to the catalog's date (the newest spec version date), not the build clock,
so two builds of one catalog are identical; the pages say so.
"""

from __future__ import annotations

import datetime
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from rooflinec.catalog import INTERCONNECT_NAMES
from rooflinec.formatting import exact_decimal, format_percent, format_si
from rooflinec.provenance import (
    CONFLICT_THRESHOLD,
    STALE_MONTHS,
    AlternativeTrail,
    FigureTrail,
    SourceInfo,
    is_vendor_own,
    source_info,
    source_usage,
)
from rooflinec.site.escape import attr, external_link, md
from rooflinec.site.pages.common import (
    AUDIT_PAGE_BUDGET,
    MAX_ALTERNATIVES,
    GeneratedPage,
    chunks_by_size,
    level_name,
    numbered,
)
from rooflinec.site.pages.model import Page, pages_by_size, split_pages

if TYPE_CHECKING:
    from rooflinec.site.pages.model import Site

__all__ = [
    "AUDIT_PAGE_BUDGET",
    "AuditLayout",
    "age_text",
    "audit_layout",
    "audit_pages",
    "audit_path",
    "conflicts_pages",
    "exact_number",
    "figure_anchor",
    "figure_name",
    "read_text",
]

CONFLICTS_PAGE_BUDGET = 24_000
"""Markdown characters of rows per conflicts page (the rows are mostly inline HTML already)."""
MAX_CONFLICTING = 6
"""Conflicting values listed in one row of the conflicts page; the rest are on the audit."""


# --------------------------------------------------------------------------- wording


def figure_name(trail: FigureTrail) -> str:
    """`BF16 or FP16 peak`, `DRAM bandwidth`, `L2 capacity`, `scale-up fabric bandwidth`,
    `scale-up fabric domain`, `power (TDP)`."""
    if trail.kind == "peak":
        return f"{trail.label} peak"
    if trail.kind == "interconnect":
        return f"{INTERCONNECT_NAMES.get(trail.key, trail.key)} bandwidth"
    if trail.kind in ("domain", "latency", "share"):
        what = "sustained share" if trail.kind == "share" else trail.kind
        return f"{INTERCONNECT_NAMES.get(trail.key, trail.key)} {what}"
    if trail.kind in ("power", "price"):
        return f"{trail.kind} ({trail.detail})" if trail.detail else trail.kind
    return f"{level_name(trail.key)} {trail.kind}"


def figure_anchor(trail: FigureTrail) -> str:
    """`compute-bf16`, `memory-dram`, `memory-dram-capacity` (ids are `[a-z0-9-]`)."""
    return re.sub(r"[^a-z0-9-]+", "-", trail.field.lower())


def exact_number(value: Fraction) -> str:
    """An exact factor: a terminating decimal (`0.5`, `0.92`) or a fraction (`2/3`)."""
    text = exact_decimal(value)
    return f"{value.numerator}/{value.denominator}" if text is None else text


def exact_si(value: Fraction, unit: str) -> str:
    """`value` with an SI prefix and every digit it has (up to 12 significant)."""
    return format_si(value, unit, digits=12)


_PRINTED = re.compile(r"^\s*([0-9][0-9,]*(?:\.[0-9]+)?)\s*(\S.*?)\s*$")


def printed_unit(trail: FigureTrail) -> tuple[Fraction, str] | None:
    """(scale, unit text) of the figure as printed: `1979 TFLOP/s` -> (10**12, "TFLOP/s")."""
    match = _PRINTED.match(trail.printed)
    if match is None:
        return None
    number = Fraction(match.group(1).replace(",", ""))
    if number == 0 or trail.value == 0:
        return None
    return trail.value / number, match.group(2)


def in_unit(value: Fraction, unit: tuple[Fraction, str] | None, base_unit: str) -> str:
    """`value` in the unit the figure was printed in (`989.5 TFLOP/s` beside `1979 TFLOP/s`)
    when that is exact in at most 12 digits, else with an SI prefix."""
    if unit is not None:
        scale, text = unit
        number = exact_number(value / scale)
        if "/" not in number and sum(c.isdigit() for c in number.lstrip("-0.")) <= 12:
            return f"{number} {text}"
    return exact_si(value, base_unit)


def signed_percent(value: Fraction, digits: int = 3) -> str:
    """`+9.36%`, `−72.6%`, `0%` (a true minus sign)."""
    if value == 0:
        return "0%"
    sign = "+" if value > 0 else "−"
    return sign + format_percent(abs(value), digits)


def age_text(info: SourceInfo) -> str | None:
    """`36 days`, `7 months`, `2 years 3 months`; None for an undated or future read."""
    days = info.age_days
    if days is None or days < 0:
        return None
    if days < 61:
        return "1 day" if days == 1 else f"{days} days"
    years, months = divmod(info.age_months or 0, 12)
    parts = []
    if years:
        parts.append("1 year" if years == 1 else f"{years} years")
    if months:
        parts.append("1 month" if months == 1 else f"{months} months")
    return " ".join(parts) or "1 year"


def read_text(info: SourceInfo, today: datetime.date, *, relative_to: bool = True) -> str:
    """`read 2026-10-25, 36 days before 2026-11-30` (or `36 days ago` without the date)."""
    age = age_text(info)
    when = f"read {info.read}"
    if age is not None:
        return f"{when}, {age} before {today.isoformat()}" if relative_to else f"{when}, {age} ago"
    if info.age_days is not None:  # read after the catalog's newest version date
        return f"{when}, after {today.isoformat()}"
    return when


def kind_text(info: SourceInfo, vendor: str | None = None) -> str:
    """`vendor`, `another vendor` (a vendor's document about someone else's device, as
    `rooflinec.provenance.is_vendor_own` decides), `third party` or `kind not stated`."""
    if info.kind == "vendor" and vendor is not None and not is_vendor_own(info, vendor):
        return "another vendor"
    kinds = {"vendor": "vendor", "third-party": "third party"}
    return kinds.get(info.kind or "", "kind not stated")


def spread_of(trail: FigureTrail) -> Fraction:
    """The largest distance of a conflicting alternative from the figure (0 if none)."""
    return max((abs(a.relative) for a in trail.alternatives if a.conflicting), default=Fraction(0))


def _source(
    info: SourceInfo | None, vendor: str, today: datetime.date, *, age: bool = True
) -> Markup:
    if info is None:
        return Markup("no source")
    parts = [
        external_link(info.title, info.url),
        md(info.publisher),
        md(kind_text(info, vendor)),
    ]
    read = read_text(info, today) if age else f"read {info.read}"
    text = Markup(", ").join(parts) + Markup("; ") + md(read)
    if info.stale:
        text += Markup(' <span class="rooflinec-stale">stale</span>')
    return text


def _source_short(info: SourceInfo | None, vendor: str) -> Markup:
    """The publisher, linked to the source with its title on hover, and its kind."""
    if info is None:
        return Markup("no source")
    url = info.url
    if url.startswith("https://") and not any(c in url for c in " \t\r\n<>\"'`"):
        who = Markup(
            f'<a href="{attr(url)}" title="{md(info.title)}" rel="noopener noreferrer" '
            f'class="rooflinec-external">{md(info.publisher)}</a>'
        )
    else:
        who = md(info.publisher)
    return who + Markup(" (") + md(kind_text(info, vendor)) + Markup(")")


def _spread(trail: FigureTrail) -> str | None:
    spread = trail.spread
    if spread is None:
        return None
    low, high = spread
    if low == high:
        return signed_percent(low)
    return f"{signed_percent(low)} to {signed_percent(high)}"


def _alternative(
    trail: FigureTrail,
    alt: AlternativeTrail,
    unit: tuple[Fraction, str] | None,
    today: datetime.date,
) -> dict[str, Any]:
    printed = [alt.printed]
    if alt.sparsity:
        printed.append(f"{alt.sparsity} sparse")
    if alt.pipe:
        printed.append(f"{alt.pipe} pipe")
    if not alt.comparable:
        relative = Markup(f'<span class="rooflinec-other">not compared: {md(alt.pipe)} pipe</span>')
    elif alt.conflicting:
        relative = Markup(
            f'<span class="rooflinec-conflict">{md(signed_percent(alt.relative))}</span>'
        )
    else:
        relative = md(signed_percent(alt.relative))
    return {
        "printed": ", ".join(printed),
        "dense": in_unit(alt.dense, unit, trail.unit),
        "relative": relative,
        "source": _source(alt.source, trail.vendor, today, age=False),
        "quote": alt.quote,
        "note": alt.note,
        "conflicting": alt.conflicting,
    }


def _section(site: Site, page: Page, trail: FigureTrail) -> str:
    """One figure's section: source, quote, each step with its factor, alternatives."""
    today = site.catalog_date
    unit = printed_unit(trail)
    steps = []
    for step in trail.steps:
        if step.operation == "printed":
            what = "as printed"
            factor = ""
        elif step.operation == "sparsity":
            what = "÷ 2: printed with 2:4 structured sparsity, halved to the dense rate"
            factor = f"× {exact_number(step.factor)}"
        elif step.operation == "direction":
            what = "÷ 2: printed for both directions summed, halved to one direction"
            factor = f"× {exact_number(step.factor)}"
        elif step.operation == "chips":
            what = f"÷ {step.factor.denominator}: printed for that many chips, divided per chip"
            factor = f"× {exact_number(step.factor)}"
        else:
            share = {"peak": "compute", "interconnect": "measured link"}.get(trail.kind, "memory")
            what = f"× the sustained {share} share, {format_percent(step.factor, 6)}"
            factor = f"× {exact_number(step.factor)}"
        steps.append(
            {"what": what, "factor": factor, "value": in_unit(step.result, unit, trail.unit)}
        )
    trace = trail.trace
    traced_from = None
    if trace is not None and trace.alternative is not None:
        alt = trail.alternatives[trace.alternative]
        traced_from = alt.source.title if alt.source else trace.source
    printed = [trail.printed]
    if trail.binary:
        printed.append(f"= {exact_si(trail.value, trail.unit)} (binary prefix)")
    if trail.sparsity:
        printed.append(f"with {trail.sparsity} structured sparsity")
    if trail.pipe:
        printed.append(f"{trail.pipe} pipe")
    alternatives = [
        _alternative(trail, a, unit, today) for a in trail.alternatives[:MAX_ALTERNATIVES]
    ]
    return site.render(
        "audit_figure.md.j2",
        page,
        trail=trail,
        name=figure_name(trail),
        heading_id=Markup(f"{{#{figure_anchor(trail)}}}"),
        source=_source(trail.source, trail.vendor, today),
        quote=trace.quote if trace else None,
        traced_from=traced_from,
        printed=", ".join(printed),
        steps=steps,
        final=in_unit(trail.final, unit, trail.unit),
        transformed=len(trail.steps) > 1,
        dense=in_unit(trail.dense, unit, trail.unit),
        alternatives=alternatives,
        total_alternatives=len(trail.alternatives),
        conflict=trail.conflict,
        spread=_spread(trail),
    )


# --------------------------------------------------------------------------- layout


@dataclass(frozen=True)
class Section:
    """One figure's rendered section of an audit page."""

    trail: FigureTrail
    markdown: str


@dataclass(frozen=True)
class AuditLayout:
    """Which figure is on which audit page, and where each source is leaned on."""

    pages: Mapping[str, tuple[tuple[Section, ...], ...]]
    """Per device: the figure sections of each of its audit pages."""
    where: Mapping[tuple[str, str], str]
    """(device, field) -> the docs-relative target of the figure's audit section."""
    uses: Mapping[tuple[str, str], list[tuple[str, str, str]]]
    """(device, source id) -> (figure name, audit target, "(alternative 1835 TFLOP/s)")
    for every figure of the device that leans on the source."""

    def target(self, device: str, field: str) -> str:
        return self.where.get((device, field), audit_path(device, 1))


def _cached_section(site: Site, page: Page, trail: FigureTrail) -> str:
    """The section `_section` renders, kept in the session (`Session.sections`) by
    (trail, catalog date, page, template environment), exactly what it reads: a trail is
    a frozen value of everything the figure shows, so a `serve` rebuild renders again
    only the sections of the device that was edited."""
    sections = site.session.sections
    key = (trail, site.catalog_date, page.path, site.env)
    hit = sections.get(key)
    if hit is None:
        hit = sections.put(key, _section(site, page, trail))
    return hit


def audit_layout(site: Site) -> AuditLayout:
    """Which figure is on which audit page (the audit pages and the sources page, which
    links each device figure to its trail, read it): every device's figure sections,
    rendered once per build and cut into pages by size."""
    kept = site.derived.get("audit layout")
    if kept is not None:
        return kept  # type: ignore[no-any-return]
    layout = site.derived["audit layout"] = _layout(site)
    return layout


def _layout(site: Site) -> AuditLayout:
    pages: dict[str, tuple[tuple[Section, ...], ...]] = {}
    where: dict[tuple[str, str], str] = {}
    for device, trails in site.trails.items():
        page = Page(audit_path(device), site)
        sections = [Section(t, _cached_section(site, page, t)) for t in trails]
        chunks = chunks_by_size(sections, lambda s: len(s.markdown), site.limits.audit_page_budget)
        pages[device] = tuple(tuple(c) for c in chunks)
        for n, chunk in enumerate(chunks, start=1):
            for s in chunk:
                where[(device, s.trail.field)] = f"{audit_path(device, n)}#{figure_anchor(s.trail)}"
    by_field = {(t.device, t.field): t for trails in site.trails.values() for t in trails}
    uses: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for usage in source_usage(site.catalog, today=site.catalog_date):
        for use in usage.uses:
            trail = by_field[(use.device, use.field)]
            suffix = "" if use.role == "figure" else f"(alternative {use.printed})"
            target = where.get((use.device, use.field), audit_path(use.device, 1))
            uses.setdefault((use.device, usage.source.id), []).append(
                (figure_name(trail), target, suffix)
            )
    return AuditLayout(pages, where, uses)


# --------------------------------------------------------------------------- pages


def audit_pages(site: Site) -> list[GeneratedPage]:
    """Every device's audit pages, then the conflicts pages."""
    from rooflinec.site.pages.reuse import for_device

    out = []
    for device in site.trails:  # the layout's order; kept between `serve` rebuilds
        out += for_device(site, "audit", device, _device_audit_pages, site, device)
    out += conflicts_pages(site)
    return out


def _device_audit_pages(site: Site, device_id: str) -> list[GeneratedPage]:
    chunks = audit_layout(site).pages[device_id]
    name = site.catalog.devices[device_id].name
    return split_pages(
        site,
        audit_path(device_id),
        chunks,
        lambda n: f"Audit: {name}" + (f" ({n})" if n > 1 else ""),
        lambda page, n, chunk, pager: _audit_text(
            site, page, device_id, n, len(chunks), chunk, pager
        ),
    )


def _audit_text(
    site: Site,
    page: Page,
    device_id: str,
    n: int,
    count: int,
    chunk: Sequence[Section],
    pager: Markup,
) -> str:
    layout = audit_layout(site)
    trails = site.trails[device_id]
    summary = []
    if n == 1:
        for t in trails:
            summary.append(
                {
                    "figure": page.link(figure_name(t), layout.target(device_id, t.field)),
                    "printed": t.printed,
                    "final": in_unit(t.final, printed_unit(t), t.unit),
                    "source": _source_short(t.source, t.vendor)
                    + (
                        Markup(' <span class="rooflinec-stale">stale</span>')
                        if t.source is not None and t.source.stale
                        else Markup("")
                    ),
                    "quote": "yes"
                    if t.trace and t.trace.alternative is None
                    else "via an alternative"
                    if t.trace
                    else Markup('<span class="rooflinec-conflict">no quote</span>'),
                    "alternatives": len(t.alternatives),
                    "spread": Markup(f'<span class="rooflinec-conflict">{md(_spread(t))}</span>')
                    if t.conflict
                    else (_spread(t) or "–"),
                }
            )
    launch, measurements = (None, []) if n != 1 else _runs(site, page, device_id)
    return site.render(
        "audit.md.j2",
        page,
        launch=launch,
        measurements=measurements,
        device=site.catalog.devices[device_id],
        n=n,
        count=count,
        pager=pager,
        sections=[Markup(s.markdown) for s in chunk],
        summary=summary,
        figures=len(trails),
        quoted=sum(1 for t in trails if t.trace is not None),
        conflicts=sum(1 for t in trails if t.conflict),
        today=site.catalog_date.isoformat(),
        stale_months=STALE_MONTHS,
        threshold=format_percent(CONFLICT_THRESHOLD),
    )


def _runs(
    site: Site, page: Page, device_id: str
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The device's latency floor and every measured run on it, each with its source as
    a data-sheet figure is shown: who, when read (the run's date), tool and command."""
    catalog = site.catalog
    device = catalog.devices[device_id]
    launch = None
    if device.launch is not None:
        source = device.sources.get(device.launch.source)
        info = source_info(source, site.catalog_date) if source else None
        launch = {
            "value": device.launch.text,
            "source": _source_short(info, device.vendor),
            "read": read_text(info, site.catalog_date) if info else "–",
            "note": device.launch.note,
        }
    runs = []
    for kernel in catalog.kernels.values():
        for case in kernel.cases:
            for m in case.measured:
                if m.device != device_id:
                    continue
                source = kernel.sources.get(m.source) if m.source else None
                info = source_info(source, site.catalog_date) if source else None
                runs.append(
                    {
                        "case": page.case_link(case.id, case.id),
                        "precision": catalog.precisions[m.precision].label,
                        "given": m.text,
                        "counted": ", ".join(
                            [*(["operations"] if m.flops is not None else []), *m.bytes]
                        )
                        or "–",
                        "source": _source_short(info, device.vendor),
                        "read": read_text(info, site.catalog_date) if info else "–",
                        "tool": source.tool if source and source.tool else "–",
                        "command": source.command if source and source.command else "–",
                    }
                )
    return launch, runs


def conflicts_pages(site: Site) -> list[GeneratedPage]:
    """Every conflicting figure of the catalog, largest spread first; split into
    `conflicts-2.md`, ... by size (every page is in the site's root folder, so the rows'
    links are the same on each)."""
    found = [t for trails in site.trails.values() for t in trails if t.conflict]
    order = {d: i for i, d in enumerate(site.catalog.devices)}
    found.sort(key=lambda t: (-spread_of(t), order[t.device], t.field))
    first = Page("conflicts.md", site)
    rows = [_conflict_row(site, first, n, t) for n, t in enumerate(found, start=1)]
    return pages_by_size(
        site,
        "conflicts.md",
        "Conflicts",
        rows,
        _row_weight,
        CONFLICTS_PAGE_BUDGET,
        "rows",
        total=len(found),
        devices=len({t.device for t in found}),
        figures=sum(len(t) for t in site.trails.values()),
        threshold=format_percent(CONFLICT_THRESHOLD),
    )


def _conflict_row(site: Site, page: Page, n: int, t: FigureTrail) -> dict[str, Any]:
    target = audit_layout(site).target(t.device, t.field)
    others = [
        Markup("{} {} · {}").format(
            md(a.printed),
            Markup(f'<span class="rooflinec-conflict">{md(signed_percent(a.relative))}</span>'),
            _source_short(a.source, t.vendor),
        )
        for a in t.alternatives
        if a.conflicting
    ]
    if len(others) > MAX_CONFLICTING:
        more = len(others) - MAX_CONFLICTING
        others = [*others[:MAX_CONFLICTING], page.link(f"and {more} more", target)]
    used = md(t.printed)
    if t.dense != t.value:
        used += Markup(" ") + md(f"({in_unit(t.dense, printed_unit(t), t.unit)} dense)")
    largest = max((a.relative for a in t.alternatives if a.conflicting), key=abs)
    return {
        "n": n,
        "figure": Markup("{}<br>{}").format(
            page.device_link(t.device), page.link(figure_name(t), target)
        ),
        "used": Markup("{}<br>{}").format(used, _source_short(t.source, t.vendor)),
        "others": Markup("<br>").join(others),
        "spread": signed_percent(largest),
    }


def _row_weight(row: dict[str, Any]) -> int:
    return sum(len(str(v)) for v in row.values()) + 40


def audit_path(device: str, n: int = 1) -> str:
    """`devices/<id>/audit.md`, then `devices/<id>/audit-2.md`, ..."""
    return numbered(posixpath.join("devices", device, "audit.md"), n)
