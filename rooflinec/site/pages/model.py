"""`Site`: everything the pages of one build read, computed once, frozen.

Every page function takes a `Site` and returns its pages; nothing a page computes is
kept for another page except what is here (the declared results, the citations, the
catalog's date, the provenance trails) and the audit layout, which the sources page
links into.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, Any

from jinja2 import Environment

from rooflinec.catalog import Case, Catalog
from rooflinec.engine.compiler import Compiled, Result
from rooflinec.formatting import format_si
from rooflinec.provenance import FigureTrail, device_trails
from rooflinec.site.escape import external_link
from rooflinec.site.pages.common import (
    GeneratedPage,
    Page,
    PageLimits,
    is_date,
    level_name,
    shared_environment,
)
from rooflinec.site.session import Session

if TYPE_CHECKING:
    from rooflinec.engine.models import ModelEngine, ModelResult
    from rooflinec.site.pages.audit import AuditLayout
    from rooflinec.site.pages.changes import Changes

FEATURED_DEVICE = "nvidia-h100-sxm"


@dataclass(frozen=True)
class Site:
    """One compiled catalog, the build's options, and the data several pages share."""

    compiled: Compiled
    default_device: str | None
    """The device the site features (the option if present, else `FEATURED_DEVICE`,
    else the first)."""
    chart_precision: str
    """The precision of the cross-device chart and the comparison matrix."""
    svg: bool
    """Render each chart to a static SVG; off only for tests (a placeholder instead)."""
    changes: Changes | None
    """What the changes page compares; None for a build that is not a published version."""
    env: Environment
    catalog_date: datetime.date
    """The newest version date of any spec: the site's "today" (ages of sources, page
    dates), so that two builds of one catalog are identical whenever they run."""
    declared: Mapping[str, list[Result]]
    """Per device: each case at its declared precision, in catalog order."""
    by_precision: Mapping[tuple[str, str], Result]
    """(case, device) -> result at the chart precision."""
    citations: Mapping[tuple[str, str], list[str]]
    """(spec id, source id) -> the figures that cite it, as short phrases."""
    trails: Mapping[str, tuple[FigureTrail, ...]]
    """Per device: the provenance trail of each figure, ages counted to `catalog_date`."""
    limits: PageLimits
    """How many rows or bytes a page holds before the next page of its kind starts."""
    session: Session
    """What this build keeps for the next (the mkdocs run's; a new one for a `Site` made
    outside a build, which keeps nothing for anyone)."""

    @classmethod
    def of(
        cls,
        compiled: Compiled,
        *,
        default_device: str | None = None,
        chart_precision: str = "bf16",
        svg: bool = True,
        changes: Changes | None = None,
        env: Environment | None = None,
        limits: PageLimits | None = None,
        session: Session | None = None,
    ) -> Site:
        """The site of `compiled`; unknown device or precision options fall back to the
        catalog's own."""
        catalog = compiled.catalog
        devices = list(catalog.devices)
        featured = (
            default_device
            if default_device in catalog.devices
            else (FEATURED_DEVICE if FEATURED_DEVICE in catalog.devices else None)
        ) or (devices[0] if devices else None)
        if chart_precision not in catalog.precisions:
            chart_precision = next(iter(catalog.precisions))
        today = _catalog_date(catalog)
        declared: dict[str, list[Result]] = {d: [] for d in catalog.devices}
        for r in compiled.results:
            if r.declared:
                declared[r.device].append(r)
        return cls(
            compiled=compiled,
            default_device=featured,
            chart_precision=chart_precision,
            svg=svg,
            changes=changes,
            env=env if env is not None else shared_environment(),
            catalog_date=today,
            declared=declared,
            by_precision={
                (r.case, r.device): r for r in compiled.results if r.precision == chart_precision
            },
            citations=_citations(catalog),
            trails={d: device_trails(catalog, d, today=today) for d in catalog.devices},
            limits=limits if limits is not None else PageLimits(),
            session=session if session is not None else Session(),
        )

    @property
    def catalog(self) -> Catalog:
        return self.compiled.catalog

    @cached_property
    def model_rows(self) -> Mapping[tuple[str, str, str], ModelResult]:
        """(model, phase, device) -> the pass at the model's own precision, on every
        device with a peak for it (and for every precision its steps name), in catalog
        order. A device's rows (with what they work out lazily: the steps) are kept
        between `serve` rebuilds while its spec and the models', kernels' and precisions'
        do not change (`reuse.for_device`)."""
        from rooflinec.site.pages.reuse import for_device

        engine = self.compiled.model_engine
        keys = list(engine.keys(declared_only=True))
        per_device: dict[str, list[tuple[str, str, str, str]]] = {}
        for key in keys:
            per_device.setdefault(key[2], []).append(key)
        rows: dict[tuple[str, str, str, str], ModelResult] = {}
        for device, own in per_device.items():
            rows.update(for_device(self, "model rows", device, _rows_of, engine, own))
        return {(m, phase, d): rows[(m, phase, d, p)] for m, phase, d, p in keys}

    @cached_property
    def cases(self) -> Mapping[str, Case]:
        """Every case by id (`Catalog.cases` makes the mapping afresh on every read)."""
        return self.catalog.cases

    @cached_property
    def results_by_kernel(self) -> Mapping[str, list[Result]]:
        """Per kernel: its results, in the compiled order."""
        out: dict[str, list[Result]] = {k: [] for k in self.catalog.kernels}
        for r in self.compiled.results:
            out.setdefault(r.kernel, []).append(r)
        return out

    @cached_property
    def memos(self) -> dict[tuple[str, str], dict[Any, Any]]:
        """This build's `reuse.device_memo` dicts when nothing is kept between builds."""
        return {}

    @cached_property
    def audit(self) -> AuditLayout:
        """Which figure is on which audit page: the audit pages and the sources page
        (which links each device figure to its trail) read it."""
        from rooflinec.site.pages.audit import audit_layout

        return audit_layout(self)

    # ----------------------------------------------------------------- rendering

    def rate(self, value: Fraction, precision: str, digits: int = 4) -> str:
        """`989.5 TFLOP/s`, in the precision's unit."""
        return format_si(value, f"{self.catalog.precisions[precision].unit}/s", digits=digits)

    def intensity(self, value: Fraction, precision: str, digits: int = 4) -> str:
        """`295.4 FLOP/B`, in the precision's unit."""
        return format_si(value, f"{self.catalog.precisions[precision].unit}/B", digits=digits)

    def render(self, template: str, page: Page, **context: Any) -> str:
        """`template` rendered for `page` with `context`, plus what every template reads."""
        return self.env.get_template(template).render(
            page=page,
            catalog=self.catalog,
            level_name=level_name,
            ext=external_link,
            **context,
        )

    def page(self, path: str, title: str, template: str, **context: Any) -> GeneratedPage:
        """One page at `path` rendered from `template`."""
        page = Page(path, self)
        text = self.render(template, page, **context)
        return GeneratedPage(path, title, text, page.slots, page.assets)


def _rows_of(
    engine: ModelEngine, keys: list[tuple[str, str, str, str]]
) -> dict[tuple[str, str, str, str], ModelResult]:
    return {key: engine.row(*key) for key in keys}


def _catalog_date(catalog: Catalog) -> datetime.date:
    versions = [v for d in catalog.devices.values() for v in d.versions]
    versions += [v for k in catalog.kernels.values() for v in k.versions]
    versions += [v for m in catalog.methods.values() for v in m.versions]
    versions += [v for m in catalog.models.values() for v in m.versions]
    dates = [datetime.date.fromisoformat(v.date) for v in versions if is_date(v.date)]
    return max(dates) if dates else datetime.date.today()


def _citations(catalog: Catalog) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = {}

    def cite(owner: str, source: str | None, what: str) -> None:
        if source:
            out.setdefault((owner, source), []).append(what)

    for d in catalog.devices.values():
        for p, peak in d.peaks.items():
            label = catalog.precisions[p].label if p in catalog.precisions else p
            cite(d.id, peak.figure.source, f"{label} peak")
            for a in peak.figure.alternatives:
                cite(d.id, a.source, f"{label} peak (alternative {a.text})")
        for lv, mem in d.memory.items():
            cite(d.id, mem.bandwidth.source, f"{level_name(lv)} bandwidth")
            for a in mem.bandwidth.alternatives:
                cite(d.id, a.source, f"{level_name(lv)} bandwidth (alternative {a.text})")
            if mem.capacity is not None:
                cite(d.id, mem.capacity.source, f"{level_name(lv)} capacity")
    for k in catalog.kernels.values():
        for case in k.cases:
            for m in case.measured:
                cite(k.id, m.source, f"measured {case.name} on {m.device} at {m.precision}")
    for model in catalog.models.values():
        for sid in model.sources:
            cite(model.id, sid, "the parameters")
        for mm in model.measured:
            cite(model.id, mm.source, f"measured {mm.phase} on {mm.device} at {mm.precision}")
    for method in catalog.methods.values():
        origin = method.data.get("origin")
        if isinstance(origin, dict) and origin.get("source"):
            cite(method.id, str(origin["source"]), "the method's origin")
    return out
