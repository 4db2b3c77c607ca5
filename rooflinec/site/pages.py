"""The page model: compiled results in, generated Markdown pages (and their assets) out.

`SiteModel` turns a `Compiled` catalog into `GeneratedPage`s. Each page is rendered from
a jinja2 template shipped with the package, with a context of plain values: numbers are
formatted here with `rooflinec.formatting`, spec text stays raw and is escaped by the
template environment (see `escape`), trusted HTML (charts, MathML) goes through the
page's `Slots`. Nothing here touches mkdocs, so the model is tested without a build.

Pages stay small whatever the catalog size: index pages are split into numbered pages
and per-device and per-kernel tables show at most a fixed number of rows, pointing to
the full results download for the rest.
"""

from __future__ import annotations

import datetime
import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Any

from jinja2 import Environment, FileSystemBytecodeCache, PackageLoader, StrictUndefined
from markupsafe import Markup

from rooflinec import catalog_export, export
from rooflinec.catalog import LEVELS, Catalog, Device, Kernel, Method, Source
from rooflinec.compiler import COMPUTE, SWEEP_KEYS, Compiled, Result
from rooflinec.examples import run_example
from rooflinec.formatting import format_number, format_percent, format_si
from rooflinec.site import charts
from rooflinec.site.escape import Slots, attr, external_link, md, script_json
from rooflinec.site.mathml import latex_to_mathml

__all__ = ["GeneratedPage", "SiteModel", "environment"]

LEVEL_NAMES = {"dram": "DRAM", "l2": "L2", "l1": "L1"}
PER_INDEX_PAGE = 100
SOURCES_PAGE_BUDGET = 24_000  # Markdown characters of source entries per page
MAX_CITED = 16  # figures listed for one spec under one source; the rest on the audit trail
PER_CHANGELOG_PAGE = 200
MAX_ROWS = 10  # kernel cases on a device page (table, chart markers)
MAX_SWEEPS = 10  # rows of a device page's sweep table
MAX_CASES = 16  # cases on a kernel page
MAX_ATTAINABLE = 32  # rows of a kernel page's attainable table and chart
MAX_USES = 12  # specs listed under one source on the sources page
MAX_ALTERNATIVES = 16
MAX_MATRIX_DEVICES = 24
MAX_MATRIX_CASES = 12
MAX_HOME_DEVICES = 20
HOME_MARKER = "<!-- rooflinec:home -->"


@dataclass
class GeneratedPage:
    """One generated Markdown page, its trusted fragments, and the files that go with it."""

    path: str  # docs-relative, e.g. "devices/nvidia-h100-sxm.md"
    title: str
    markdown: str
    slots: Slots
    assets: dict[str, str] = field(default_factory=dict)  # docs-relative path -> text


def _bytecode_cache() -> FileSystemBytecodeCache | None:
    """Compiled templates kept beside the chart cache: a cold process skips compiling.

    jinja keys each entry by the template's source, so an edited template recompiles."""
    from rooflinec.site.charts import cache_dir

    folder = cache_dir() / "templates"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return FileSystemBytecodeCache(str(folder))


def environment() -> Environment:
    """The template environment: every `{{ }}` is escaped for Markdown and HTML."""
    env = Environment(
        loader=PackageLoader("rooflinec.site", "templates"),
        bytecode_cache=_bytecode_cache(),
        autoescape=True,
        finalize=md,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["md"] = md
    env.filters["attr"] = attr
    return env


def _level_name(level: str) -> str:
    return LEVEL_NAMES.get(level, level)


def _pages(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)] or [items]


def _pages_by_size(
    items: Sequence[Any], weight: Callable[[Any], int], budget: int
) -> list[Sequence[Any]]:
    """Consecutive runs of `items` whose weights add up to at most `budget` (at least one)."""
    chunks: list[Sequence[Any]] = []
    start, total = 0, 0
    for i, item in enumerate(items):
        w = weight(item)
        if i > start and total + w > budget:
            chunks.append(items[start:i])
            start, total = i, 0
        total += w
    chunks.append(items[start:])
    return chunks


def _numbered(path: str, n: int) -> str:
    """`devices/index.md`, then `devices/index-2.md`, ..."""
    if n == 1:
        return path
    stem, ext = posixpath.splitext(path)
    return f"{stem}-{n}{ext}"


class _Page:
    """Helpers bound to one page: relative links, slots, charts, formulas."""

    def __init__(self, path: str, model: SiteModel) -> None:
        self.path = path
        self.model = model
        self.slots = Slots()
        self.assets: dict[str, str] = {}
        self._charts = 0

    def href(self, target: str) -> str:
        """A relative link from this page to a docs-relative target (`kernels/gemm.md#x`)."""
        path, _, anchor = target.partition("#")
        if path == self.path and anchor:
            return f"#{anchor}"
        here = posixpath.dirname(self.path)
        rel = posixpath.relpath(path, here or ".") if path else ""
        return rel + (f"#{anchor}" if anchor else "")

    def link(self, text: Any, target: str) -> Markup:
        return Markup(f"[{md(text)}]({self.href(target)})")

    def device_link(self, device_id: str) -> Markup:
        return self.link(self.model.catalog.devices[device_id].name, f"devices/{device_id}.md")

    def kernel_link(self, kernel_id: str, text: Any = None) -> Markup:
        kernel = self.model.catalog.kernels[kernel_id]
        return self.link(text if text is not None else kernel.name, f"kernels/{kernel_id}.md")

    def case_link(self, case_id: str, text: Any = None) -> Markup:
        case = self.model.catalog.cases[case_id]
        return self.link(
            text if text is not None else case.name, f"kernels/{case.kernel}.md#case-{case_id}"
        )

    def math(self, formula: Any) -> Markup:
        mathml = latex_to_mathml(formula.latex())
        if mathml is None:
            return Markup(f"<code>{md(formula.text)}</code>")
        return self.slots.add(mathml, block=False)

    def chart(self, chart: charts.Chart) -> Markup:
        stem = posixpath.splitext(posixpath.basename(self.path))[0]
        here = posixpath.dirname(self.path)
        self._charts += 1
        base = f"{stem}.{chart.name}"
        svg = charts.render_svg(chart.spec) if self.model.svg else _placeholder_svg(chart)
        self.assets[posixpath.join(here, f"{base}.svg")] = svg
        self.assets[posixpath.join(here, f"{base}.vl.json")] = charts.spec_json(chart.spec)
        width, height = _svg_size(svg)
        spec_id = f"rooflinec-spec-{chart.name}"
        fragment = (
            f'<figure class="rooflinec-chart" id="chart-{chart.name}">'
            f'<div class="rooflinec-chart-view" data-spec="{spec_id}">'
            f'<img class="rooflinec-chart-static" src="{attr(base)}.svg"'
            f' alt="{attr(chart.description)}"'
            f' width="{width}" height="{height}"></div>'
            f'<script type="application/json" id="{spec_id}">{script_json(chart.spec)}</script>'
            f'<figcaption>{attr(chart.title)}. '
            '<span class="rooflinec-hint">Hover a point for its values; the sliders below the '
            "chart scale the ceilings (they need JavaScript).</span> "
            f'Download: <a href="{attr(base)}.vl.json" download>Vega-Lite JSON</a> · '
            f'<a href="{attr(base)}.svg" download>SVG</a>.</figcaption></figure>'
        )
        return self.slots.add(fragment)


def _svg_size(svg: str) -> tuple[int, int]:
    width = re.search(r'<svg[^>]*\swidth="([0-9.]+)"', svg)
    height = re.search(r'<svg[^>]*\sheight="([0-9.]+)"', svg)
    return (
        round(float(width.group(1))) if width else charts.WIDTH,
        round(float(height.group(1))) if height else charts.HEIGHT,
    )


def _placeholder_svg(chart: charts.Chart) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{charts.WIDTH}" '
        f'height="{charts.HEIGHT}"><text x="10" y="20">{attr(chart.title)}</text></svg>\n'
    )


class SiteModel:
    """Every generated page of the site, from one compiled catalog."""

    def __init__(
        self,
        compiled: Compiled,
        *,
        default_device: str | None = None,
        chart_precision: str = "bf16",
        svg: bool = True,
    ) -> None:
        self.compiled = compiled
        self.catalog: Catalog = compiled.catalog
        devices = list(self.catalog.devices)
        self.default_device = (
            default_device
            if default_device in self.catalog.devices
            else ("nvidia-h100-sxm" if "nvidia-h100-sxm" in self.catalog.devices else None)
        ) or (devices[0] if devices else None)
        precisions = list(self.catalog.precisions)
        self.chart_precision = (
            chart_precision if chart_precision in self.catalog.precisions else precisions[0]
        )
        self.svg = svg
        self.env = environment()
        self.changes: Any = None
        """What the changes page compares (`rooflinec.site.changes.Changes`); set by the
        plugin before `pages()`, None for a build that is not a published version."""

    @cached_property
    def catalog_date(self) -> datetime.date:
        """The newest version date of any spec: the site's "today" (ages of sources, page
        dates), so that two builds of one catalog are identical whenever they run."""
        versions = [v for d in self.catalog.devices.values() for v in d.versions]
        versions += [v for k in self.catalog.kernels.values() for v in k.versions]
        versions += [v for m in self.catalog.methods.values() for v in m.versions]
        dates = [datetime.date.fromisoformat(v.date) for v in versions if _is_date(v.date)]
        return max(dates) if dates else datetime.date.today()

    @cached_property
    def audit(self) -> Any:
        """The audit pages' model (`rooflinec.site.audit.Audit`), shared by the sources page."""
        from rooflinec.site.audit import Audit

        return Audit(self)

    # ----------------------------------------------------------------- shared data

    @cached_property
    def declared(self) -> dict[str, list[Result]]:
        """Per device: each case at its declared precision, in catalog order."""
        out: dict[str, list[Result]] = {d: [] for d in self.catalog.devices}
        for r in self.compiled.results:
            if r.declared:
                out[r.device].append(r)
        return out

    @cached_property
    def by_precision(self) -> dict[tuple[str, str], Result]:
        """(case, device) -> result at the chart precision."""
        return {
            (r.case, r.device): r
            for r in self.compiled.results
            if r.precision == self.chart_precision
        }

    @cached_property
    def citations(self) -> dict[tuple[str, str], list[str]]:
        """(spec id, source id) -> the figures that cite it, as short phrases."""
        out: dict[tuple[str, str], list[str]] = {}

        def cite(owner: str, source: str | None, what: str) -> None:
            if source:
                out.setdefault((owner, source), []).append(what)

        cat = self.catalog
        for d in cat.devices.values():
            for p, peak in d.peaks.items():
                label = cat.precisions[p].label if p in cat.precisions else p
                cite(d.id, peak.figure.source, f"{label} peak")
                for a in peak.figure.alternatives:
                    cite(d.id, a.source, f"{label} peak (alternative {a.text})")
            for lv, mem in d.memory.items():
                cite(d.id, mem.bandwidth.source, f"{_level_name(lv)} bandwidth")
                for a in mem.bandwidth.alternatives:
                    cite(d.id, a.source, f"{_level_name(lv)} bandwidth (alternative {a.text})")
                if mem.capacity is not None:
                    cite(d.id, mem.capacity.source, f"{_level_name(lv)} capacity")
        for k in cat.kernels.values():
            for case in k.cases:
                for m in case.measured:
                    cite(k.id, m.source, f"measured {case.name} on {m.device} at {m.precision}")
        for method in cat.methods.values():
            origin = method.data.get("origin")
            if isinstance(origin, dict) and origin.get("source"):
                cite(method.id, str(origin["source"]), "the method's origin")
        return out

    def _fmt_rate(self, value: Fraction, precision: str, digits: int = 4) -> str:
        return format_si(value, f"{self.catalog.precisions[precision].unit}/s", digits=digits)

    def _fmt_intensity(self, value: Fraction, precision: str, digits: int = 4) -> str:
        return format_si(value, f"{self.catalog.precisions[precision].unit}/B", digits=digits)

    def _render(self, template: str, page: _Page, **context: Any) -> str:
        return self.env.get_template(template).render(
            page=page,
            model=self,
            catalog=self.catalog,
            level_name=_level_name,
            ext=external_link,
            **context,
        )

    def _page(self, path: str, title: str, template: str, **context: Any) -> GeneratedPage:
        page = _Page(path, self)
        text = self._render(template, page, **context)
        return GeneratedPage(path, title, text, page.slots, page.assets)

    # ----------------------------------------------------------------- all pages

    def pages(self) -> list[GeneratedPage]:
        out: list[GeneratedPage] = []
        out += self.device_index()
        out += [self.device_page(d) for d in self.catalog.devices.values()]
        out += self.kernel_index()
        out += [self.kernel_page(k) for k in self.catalog.kernels.values()]
        out.append(self.comparison_page())
        out += [self.method_page(m) for m in self.catalog.methods.values()]
        out += self.audit.pages()
        out += self.sources_pages()
        out.append(self.glossary_page())
        out += self.changelog_pages()
        from rooflinec.site.changes import changes_pages

        out += changes_pages(self, self.changes)
        return out

    def downloads(self) -> dict[str, str]:
        """Whole-catalog files: every result and every device figure (with its provenance)
        as JSON and CSV at the site root, and the JSON Schemas under `schemas/`."""
        from rooflinec.resources import schemas_dir

        results = self.compiled.results
        today = self.catalog_date
        out = {
            **self._results_files(results),
            "catalog.json": catalog_export.catalog_json(self.catalog, today=today),
            "catalog.csv": catalog_export.catalog_csv(self.catalog, today=today),
        }
        for schema in sorted(schemas_dir().glob("*.json")):
            out[f"schemas/{schema.name}"] = schema.read_text("utf-8")
        if self.changes is not None:
            out.update(self.changes.downloads())
        return out

    def _results_files(self, results: Sequence[Any]) -> dict[str, str]:
        """results.json and results.csv; a large catalog takes the columnar path, as
        `rooflinec compile` does, since exact rows cost ~0.2 ms each to write."""
        from rooflinec.cli.commands import BULK_ROWS

        if len(results) < BULK_ROWS:
            return {
                "results.json": export.to_json(self.compiled, results),
                "results.csv": export.to_csv(self.compiled, results),
            }
        import io

        from rooflinec import bulk

        table = bulk.bulk_compile(self.compiled.catalog)
        files = {}
        for name, write in (("results.json", bulk.write_json), ("results.csv", bulk.write_csv)):
            buffer = io.StringIO()
            write(table, buffer)
            files[name] = buffer.getvalue()
        return files

    # ----------------------------------------------------------------- home

    def home_section(self, path: str = "index.md") -> GeneratedPage:
        """The generated part of the home page: the cross-device comparison."""
        devices = [
            d for d in self.catalog.devices
            if self.chart_precision in self.compiled.devices[d].peaks
        ][:MAX_HOME_DEVICES]
        page = _Page(path, self)
        chart = charts.comparison_chart(self.compiled, devices, self.chart_precision)
        rows = [self._device_row(page, d) for d in devices]
        text = self._render(
            "home.md.j2",
            page,
            chart=chart,
            rows=rows,
            shown=len(devices),
            total=len(self.catalog.devices),
            precision=self.catalog.precisions[self.chart_precision],
        )
        return GeneratedPage(path, "Home", text, page.slots, page.assets)

    def _device_row(self, page: _Page, device_id: str) -> dict[str, Any]:
        device = self.catalog.devices[device_id]
        fig = self.compiled.devices[device_id]
        p = self.chart_precision
        dram = device.memory.get("dram")
        bound = [r for r in self.declared[device_id] if r.limited_by != COMPUTE]
        return {
            "link": page.device_link(device_id),
            "vendor": device.vendor,
            "kind": device.kind or "–",
            "peak": self._fmt_rate(fig.peaks[p], p) if p in fig.peaks else "no peak",
            "memory": dram.label if dram else "–",
            "bandwidth": format_si(fig.bandwidths["dram"], "B/s") if "dram" in fig.bandwidths
            else "–",
            "capacity": format_si(dram.capacity.value, "B")
            if dram and dram.capacity is not None else "–",
            "ridge": self._fmt_intensity(fig.ridges[p]["dram"], p)
            if p in fig.peaks and "dram" in fig.bandwidths else "–",
            "memory_bound": f"{len(bound)} of {len(self.declared[device_id])}",
            "precisions": ", ".join(self.catalog.precisions[q].label for q in fig.peaks),
        }

    # ----------------------------------------------------------------- devices

    def device_index(self) -> list[GeneratedPage]:
        ids = list(self.catalog.devices)
        chunks = _pages(ids, PER_INDEX_PAGE)
        out = []
        for n, chunk in enumerate(chunks, start=1):
            path = _numbered("devices/index.md", n)
            page = _Page(path, self)
            text = self._render(
                "devices_index.md.j2",
                page,
                rows=[self._device_row(page, d) for d in chunk],
                pager=self._pager(page, "devices/index.md", n, len(chunks)),
                precision=self.catalog.precisions[self.chart_precision],
                total=len(ids),
            )
            out.append(GeneratedPage(path, "Devices", text, page.slots, page.assets))
        return out

    def _pager(self, page: _Page, first: str, n: int, count: int) -> Markup:
        if count <= 1:
            return Markup("")
        links = []
        for i in range(1, count + 1):
            target = _numbered(first, i)
            links.append(f"**{i}**" if i == n else f"[{i}]({page.href(target)})")
        return Markup("Pages: " + " · ".join(links))

    def device_page(self, device: Device) -> GeneratedPage:
        path = f"devices/{device.id}.md"
        page = _Page(path, self)
        cat = self.catalog
        fig = self.compiled.devices[device.id]
        results = self.declared[device.id]
        shown = results[:MAX_ROWS]
        levels = [lv for lv in LEVELS if lv in fig.bandwidths]
        chart = charts.device_roofline(self.compiled, device.id, shown, self.chart_precision)
        p_glance = self.chart_precision if self.chart_precision in fig.peaks else next(
            iter(fig.peaks)
        )
        peaks = []
        for p, peak in device.peaks.items():
            pr = cat.precisions[p]
            unit = pr.unit
            peaks.append(
                {
                    "precision": pr.label,
                    "printed": peak.figure.text,
                    "sparsity": peak.sparsity or "dense",
                    "pipe": peak.pipe or "–",
                    "dense": format_si(peak.dense, f"{unit}/s"),
                    "share": format_percent(device.compute_share),
                    "sustained": format_si(fig.peaks[p], f"{unit}/s"),
                    "source": page.link(peak.figure.source, f"{path}#source-{peak.figure.source}"),
                    "quote": peak.figure.quote,
                    "note": peak.figure.note,
                    "alternatives": [
                        {
                            "value": a.text,
                            "sparsity": a.sparsity or "dense",
                            "pipe": a.pipe or "–",
                            "dense": format_si(a.dense, f"{unit}/s"),
                            "source": page.link(a.source, f"{path}#source-{a.source}"),
                            "quote": a.quote,
                            "note": a.note,
                        }
                        for a in peak.figure.alternatives
                    ],
                }
            )
        memory = []
        for lv, mem in device.memory.items():
            memory.append(
                {
                    "level": _level_name(lv),
                    "label": mem.label,
                    "printed": mem.bandwidth.text,
                    "share": format_percent(device.share_of(lv)),
                    "sustained": format_si(fig.bandwidths[lv], "B/s"),
                    "capacity": (
                        f"{format_si(mem.capacity.value, 'B')} ({mem.capacity.text})"
                        if mem.capacity is not None and mem.capacity.binary
                        else format_si(mem.capacity.value, "B") if mem.capacity is not None
                        else "–"
                    ),
                    "source": page.link(
                        mem.bandwidth.source, f"{path}#source-{mem.bandwidth.source}"
                    ),
                    "quote": mem.bandwidth.quote,
                    "capacity_quote": mem.capacity.quote if mem.capacity else None,
                    "note": mem.note or mem.bandwidth.note,
                    "alternatives": [
                        {
                            "value": a.text,
                            "source": page.link(a.source, f"{path}#source-{a.source}"),
                            "quote": a.quote,
                            "note": a.note,
                        }
                        for a in mem.bandwidth.alternatives
                    ],
                }
            )
        ridges = [
            {
                "precision": cat.precisions[p].label,
                "cells": [
                    self._fmt_intensity(fig.ridges[p][lv], p) if lv in fig.ridges[p] else "–"
                    for lv in levels
                ],
            }
            for p in fig.peaks
        ]
        case_levels = [lv for lv in LEVELS if any(lv in r.bytes for r in shown)]
        has_measured = any(r.measured is not None for r in shown)
        kernels = []
        for n, r in enumerate(shown, start=1):
            intensity = r.intensity
            kernels.append(
                {
                    "n": n,
                    "case": page.case_link(r.case),
                    "case_id": page.case_link(r.case, r.case),
                    "precision": cat.precisions[r.precision].label,
                    "intensity": [
                        self._fmt_intensity(intensity[lv], r.precision) if lv in intensity
                        else "–" for lv in case_levels
                    ],
                    "ridge": self._fmt_intensity(fig.ridges[r.precision]["dram"], r.precision)
                    if "dram" in fig.ridges[r.precision] else "–",
                    "attainable": self._fmt_rate(r.attainable, r.precision),
                    "limited_by": _level_name(r.limited_by) if r.limited_by != COMPUTE
                    else COMPUTE,
                    "share": format_percent(r.share_of_peak),
                    "time": format_si(r.time, "s"),
                    "measured": self._fmt_rate(r.measured, r.precision)
                    if r.measured is not None else "–",
                    "efficiency": format_percent(r.efficiency)
                    if r.efficiency is not None else "–",
                    "bw_sweep": [self._fmt_rate(v, r.precision)
                                 for f, v in r.bandwidth_sweep.items() if f != "1"],
                    "peak_sweep": [self._fmt_rate(v, r.precision)
                                   for f, v in r.peak_sweep.items() if f != "1"],
                }
            )
        unmodelled: dict[tuple[str, str], list[Markup]] = {}
        for r in shown:
            for lv, why in r.unmodelled:
                unmodelled.setdefault((_level_name(lv), why), []).append(page.case_link(r.case))
        for key, links in unmodelled.items():
            if len(links) == len(shown) > 1:
                unmodelled[key] = [Markup("every case")]
        present = {r.case for r in results}
        missing = [
            {"case": page.case_link(case.id), "precision": cat.precisions[case.precision].label}
            for case in cat.cases.values()
            if case.id not in present
        ][:MAX_CASES]
        sources = self._sources_context(page, device.id, device.sources, f"{path}#source-")
        from rooflinec.site.audit import audit_path

        text = self._render(
            "device.md.j2",
            page,
            device=device,
            audit=page.href(audit_path(device.id)),
            glance={
                "precision": cat.precisions[p_glance].label,
                "peak": self._fmt_rate(fig.peaks[p_glance], p_glance),
                "dram": device.memory.get("dram"),
                "bandwidth": format_si(fig.bandwidths["dram"], "B/s")
                if "dram" in fig.bandwidths else None,
                "ridge": self._fmt_intensity(fig.ridges[p_glance]["dram"], p_glance)
                if "dram" in fig.bandwidths else None,
                "bound": sum(1 for r in results if r.limited_by != COMPUTE),
                "cases": len(results),
            },
            chart=chart,
            peaks=peaks,
            memory=memory,
            levels=[_level_name(lv) for lv in levels],
            ridges=ridges,
            case_levels=[_level_name(lv) for lv in case_levels],
            kernels=kernels,
            mixed=len({k["precision"] for k in kernels}) > 1,
            sweeps=kernels[:MAX_SWEEPS],
            has_measured=has_measured,
            sweep_keys=SWEEP_KEYS,
            unmodelled=sorted(unmodelled.items()),
            missing=missing,
            hidden=len(results) - len(shown),
            max_alternatives=MAX_ALTERNATIVES,
            compute_share=format_percent(device.compute_share),
            memory_share=format_percent(device.memory_share),
            sources=sources,
            versions=sorted(device.versions, key=lambda v: -v.version),
        )
        return GeneratedPage(path, device.name, text, page.slots, page.assets)

    def _sources_context(
        self, page: _Page, owner: str, sources: dict[str, Source], anchor: str
    ) -> list[dict[str, Any]]:
        out = []
        for sid, s in sources.items():
            out.append(
                {
                    "id": sid,
                    "anchor": anchor.rpartition("#")[2] + sid,
                    "title": external_link(s.title, s.url),
                    "url": s.url,
                    "publisher": s.publisher,
                    "kind": s.kind,
                    "read": s.read,
                    "published": s.published,
                    "note": s.note,
                    "cited": self.citations.get((owner, sid), []),
                }
            )
        return out

    # ----------------------------------------------------------------- kernels

    def kernel_index(self) -> list[GeneratedPage]:
        ids = list(self.catalog.kernels)
        chunks = _pages(ids, PER_INDEX_PAGE)
        out = []
        for n, chunk in enumerate(chunks, start=1):
            path = _numbered("kernels/index.md", n)
            page = _Page(path, self)
            rows = []
            for k in chunk:
                kernel = self.catalog.kernels[k]
                rows.append(
                    {
                        "link": page.kernel_link(k),
                        "flops": page.math(kernel.flops),
                        "levels": ", ".join(_level_name(lv) for lv in kernel.bytes),
                        "cases": len(kernel.cases),
                        "description": kernel.description,
                    }
                )
            text = self._render(
                "kernels_index.md.j2",
                page,
                rows=rows,
                pager=self._pager(page, "kernels/index.md", n, len(chunks)),
                total=len(ids),
            )
            out.append(GeneratedPage(path, "Kernels", text, page.slots, page.assets))
        return out

    def kernel_page(self, kernel: Kernel) -> GeneratedPage:
        path = f"kernels/{kernel.id}.md"
        page = _Page(path, self)
        cat = self.catalog
        cases = kernel.cases[:MAX_CASES]
        case_ids = {c.id for c in cases}
        results = [r for r in self.compiled.results if r.kernel == kernel.id and r.case in case_ids]
        declared = [r for r in results if r.declared][:MAX_ATTAINABLE]
        hidden_results = sum(1 for r in results if r.declared) - len(declared)
        chart = charts.kernel_chart(self.compiled, kernel.id, declared)
        formulas = [
            {"name": "operations", "formula": kernel.flops,
             "unit": "FLOP, or OP for integer precisions"}
        ]
        formulas += [
            {"name": f"bytes at {_level_name(lv)}", "formula": f, "unit": "B"}
            for lv, f in kernel.bytes.items()
        ]
        for f in formulas:
            f["math"] = page.math(f["formula"])
        # Intensity per precision: one row per case, one column per precision evaluated.
        precisions = [p for p in cat.precisions if any(r.precision == p for r in results)]
        intensity: dict[str, list[dict[str, Any]]] = {}
        by_case_precision: dict[tuple[str, str], Result] = {}
        for r in results:
            by_case_precision.setdefault((r.case, r.precision), r)
        for lv in kernel.bytes:
            rows = []
            for c in cases:
                cells = []
                for p in precisions:
                    found = by_case_precision.get((c.id, p))
                    cells.append(
                        format_number(found.intensity[lv])
                        if found is not None and lv in found.intensity
                        else "–"
                    )
                rows.append({"case": page.case_link(c.id, c.id), "cells": cells})
            intensity[_level_name(lv)] = rows
        measured = []
        for c in cases:
            for m in c.measured:
                run = self.compiled.result(c.id, m.device, m.precision)
                if run is None or m.device not in cat.devices:
                    continue
                measured.append(
                    {
                        "case": page.case_link(c.id),
                        "device": page.device_link(m.device),
                        "precision": cat.precisions[m.precision].label,
                        "printed": m.text,
                        "rate": self._fmt_rate(run.measured, m.precision)
                        if run.measured is not None else "–",
                        "attainable": self._fmt_rate(run.attainable, m.precision),
                        "efficiency": format_percent(run.efficiency)
                        if run.efficiency is not None else "–",
                        "source": m.source,
                        "note": m.note,
                    }
                )
        case_rows = [
            {
                "id": c.id,
                "name": c.name,
                "precision": cat.precisions[c.precision].label,
                "shape": ", ".join(f"{k} = {v}" for k, v in c.shape.items()),
                "description": c.description,
                "flops": format_si(
                    next((r.flops for r in results if r.case == c.id), Fraction(0)),
                    cat.precisions[c.precision].unit,
                ),
            }
            for c in cases
        ]
        attainable = []
        for r in declared:
            where = next((lv for lv in LEVELS if lv in r.intensity), None)
            attainable.append(
                {
                    "case": page.case_link(r.case, cat.cases[r.case].name),
                    "device": page.device_link(r.device),
                    "precision": cat.precisions[r.precision].label,
                    "intensity": self._fmt_intensity(r.intensity[where], r.precision)
                    if where else "–",
                    "attainable": self._fmt_rate(r.attainable, r.precision),
                    "limited_by": _level_name(r.limited_by) if r.limited_by != COMPUTE
                    else COMPUTE,
                    "share": format_percent(r.share_of_peak),
                    "time": format_si(r.time, "s"),
                }
            )
        no_result = sorted(
            {
                (cat.devices[d].name, cat.precisions[c.precision].label)
                for c in cases
                for d in cat.devices
                if c.precision not in self.compiled.devices[d].peaks
            }
        )
        text = self._render(
            "kernel.md.j2",
            page,
            kernel=kernel,
            formulas=formulas,
            symbols=sorted(kernel.symbols.items()),
            uses_w=any("w" in f.symbols for f in kernel.bytes.values()),
            cases=case_rows,
            hidden=len(kernel.cases) - len(cases),
            precisions=[cat.precisions[p].label for p in precisions],
            intensity=intensity,
            chart=chart,
            attainable=attainable,
            no_result=no_result,
            hidden_results=hidden_results,
            measured=measured,
            sources=self._sources_context(page, kernel.id, kernel.sources, f"{path}#source-"),
            versions=sorted(kernel.versions, key=lambda v: -v.version),
        )
        return GeneratedPage(path, kernel.name, text, page.slots, page.assets)

    # ----------------------------------------------------------------- comparison

    def comparison_page(self) -> GeneratedPage:
        path = "comparison.md"
        page = _Page(path, self)
        cat = self.catalog
        p = self.chart_precision
        devices = [d for d in cat.devices if p in self.compiled.devices[d].peaks]
        shown_devices = devices[:MAX_MATRIX_DEVICES]
        cases = list(cat.cases.values())[:MAX_MATRIX_CASES]
        header = [page.case_link(c.id, c.id) for c in cases]
        matrix = []
        for d in shown_devices:
            cells = []
            for c in cases:
                r = self.by_precision.get((c.id, d))
                if r is None:
                    cells.append(Markup("–"))
                    continue
                rate = self._fmt_rate(r.attainable, p)
                if r.limited_by == COMPUTE:
                    cells.append(Markup(f"**{md(rate)}**"))
                else:
                    cells.append(Markup(f"{md(rate)}, {md(_level_name(r.limited_by))}"))
            matrix.append({"device": page.device_link(d), "cells": cells})
        precisions = [q for q in cat.precisions]
        ridges = []
        other_levels = []
        for d in list(cat.devices)[:MAX_MATRIX_DEVICES]:
            fig = self.compiled.devices[d]
            ridges.append(
                {
                    "device": page.device_link(d),
                    "cells": [
                        format_number(fig.ridges[q]["dram"])
                        if q in fig.ridges and "dram" in fig.ridges[q] else "–"
                        for q in precisions
                    ],
                }
            )
            for lv in ("l2", "l1"):
                if lv in fig.bandwidths:
                    other_levels.append(
                        {
                            "device": page.device_link(d),
                            "level": _level_name(lv),
                            "cells": [
                                format_number(fig.ridges[q][lv]) if q in fig.ridges else "–"
                                for q in precisions
                            ],
                        }
                    )
        text = self._render(
            "comparison.md.j2",
            page,
            precision=cat.precisions[p],
            header=header,
            cases=cases,
            matrix=matrix,
            hidden_devices=len(devices) - len(shown_devices),
            hidden_cases=len(cat.cases) - len(cases),
            without=[page.device_link(d) for d in cat.devices if d not in devices],
            precision_labels=[cat.precisions[q].label for q in precisions],
            ridges=ridges,
            other_levels=other_levels,
            hidden_ridges=max(0, len(cat.devices) - MAX_MATRIX_DEVICES),
        )
        return GeneratedPage(path, "Comparison", text, page.slots, page.assets)

    # ----------------------------------------------------------------- method

    KNOWN_METHOD_KEYS = frozenset(
        {"id", "title", "summary", "symbols", "formulas", "inputs", "outputs", "assumptions",
         "uncertainty", "limits", "origin", "glossary", "examples", "sources", "versions"}
    )

    def method_page(self, method: Method) -> GeneratedPage:
        path = f"method/{method.id}.md"
        page = _Page(path, self)
        formulas = [
            {"name": f.name, "formula": f.formula, "math": page.math(f.formula),
             "meaning": f.meaning}
            for f in method.formulas
        ]
        examples = []
        for ex in method.examples:
            outcomes = run_example(self.compiled, ex)
            rows = []
            for o in outcomes:
                e = o.expectation
                rows.append(
                    {
                        "output": e.output.replace("_", " "),
                        "case": page.case_link(e.case, e.case) if e.case in self.catalog.cases
                        else (e.case or "–"),
                        "level": _level_name(e.level) if e.level else "–",
                        "expected": e.text,
                        "computed": self._computed(e.output, o.actual, ex.precision),
                        "tolerance": "exact" if isinstance(e.value, str)
                        else format_percent(e.tolerance, 2),
                        "passed": o.passed,
                    }
                )
            examples.append(
                {
                    "id": ex.id,
                    "name": ex.name,
                    "description": ex.description,
                    "device": page.device_link(ex.device) if ex.device in self.catalog.devices
                    else ex.device,
                    "precision": self.catalog.precisions[ex.precision].label
                    if ex.precision in self.catalog.precisions else ex.precision,
                    "cases": [page.case_link(c, c) for c in ex.cases if c in self.catalog.cases],
                    "rows": rows,
                    "passed": all(r["passed"] for r in rows),
                }
            )
        data = method.data
        extra = [
            (key.replace("_", " ").capitalize(), _plain(data[key]))
            for key in data
            if key not in self.KNOWN_METHOD_KEYS
        ]
        text = self._render(
            "method.md.j2",
            page,
            method=method,
            formulas=formulas,
            symbols=sorted(method.symbols.items()),
            inputs=_records(data.get("inputs")),
            outputs=_records(data.get("outputs")),
            assumptions=_strings(data.get("assumptions")),
            uncertainty=_strings(data.get("uncertainty")),
            limits=_strings(data.get("limits")),
            origin=data.get("origin") if isinstance(data.get("origin"), dict) else None,
            glossary_count=len(_records(data.get("glossary"))),
            examples=examples,
            extra=extra,
            sources=self._sources_context(page, method.id, method.sources, f"{path}#source-"),
            versions=sorted(method.versions, key=lambda v: -v.version),
        )
        return GeneratedPage(path, method.title, text, page.slots, page.assets)

    def _computed(self, output: str, actual: Fraction | int | str | None, precision: str) -> str:
        if actual is None:
            return "none"
        if isinstance(actual, str):
            return actual
        unit = self.catalog.precisions[precision].unit if precision in self.catalog.precisions \
            else "FLOP"
        units = {
            "peak": f"{unit}/s", "attainable": f"{unit}/s", "bandwidth": "B/s",
            "ridge": f"{unit}/B", "intensity": f"{unit}/B", "flops": unit, "bytes": "B",
            "time": "s",
        }
        if output in units:
            return format_si(actual, units[output], digits=7)
        if output in ("share_of_peak", "efficiency"):
            return format_percent(actual, 6)
        return format_number(actual, 7)

    # ----------------------------------------------------------------- sources

    def _specs(self) -> list[tuple[str, str, str, dict[str, Source]]]:
        """(kind, id, name, sources) of every spec, devices then kernels then methods."""
        cat = self.catalog
        out: list[tuple[str, str, str, dict[str, Source]]] = []
        out += [("device", d.id, d.name, d.sources) for d in cat.devices.values()]
        out += [("kernel", k.id, k.name, k.sources) for k in cat.kernels.values()]
        out += [("method", m.id, m.title, m.sources) for m in cat.methods.values()]
        return out

    def _spec_target(self, kind: str, ident: str) -> str:
        folder = {"device": "devices", "kernel": "kernels", "method": "method"}[kind]
        return f"{folder}/{ident}.md"

    def sources_pages(self) -> list[GeneratedPage]:
        """Every distinct source (same address and title) once, with every spec citing it,
        when each read it and how old that reading is, and the figures that lean on it."""
        from rooflinec.provenance import STALE_MONTHS, source_info
        from rooflinec.site.audit import read_text

        today = self.catalog_date
        entries: dict[tuple[str, str], dict[str, Any]] = {}
        for kind, ident, name, sources in self._specs():
            for sid, src in sources.items():
                entry = entries.setdefault(
                    (src.url, src.title),
                    {"title": src.title, "url": src.url, "publisher": src.publisher,
                     "kind": src.kind, "published": src.published, "notes": [], "uses": []},
                )
                if src.note and src.note not in entry["notes"]:
                    entry["notes"].append(src.note)
                info = source_info(src, today)
                entry["uses"].append(
                    (kind, ident, name, sid, read_text(info, today, relative_to=False), info.stale)
                )
        ordered = sorted(entries.values(), key=lambda e: (e["title"].lower(), e["url"]))
        stale = sum(1 for e in ordered if any(u[5] for u in e["uses"]))
        # Every sources page is at the site's root: an entry's links are the same on each, so
        # each entry is rendered once and the pages are cut by the entries' real size.
        first = _Page("sources.md", self)
        rendered = [Markup(self._render("source_entry.md.j2", first, s=self._source_entry(
            first, e))) for e in ordered]
        chunks = _pages_by_size(rendered, len, SOURCES_PAGE_BUDGET)
        out = []
        for n, chunk in enumerate(chunks, start=1):
            path = _numbered("sources.md", n)
            page = _Page(path, self)
            text = self._render(
                "sources.md.j2",
                page,
                entries=chunk,
                pager=self._pager(page, "sources.md", n, len(chunks)),
                total=len(ordered),
                specs=sum(1 for spec in self._specs() if spec[3]),
                today=today.isoformat(),
                stale_months=STALE_MONTHS,
                stale=stale,
            )
            out.append(GeneratedPage(path, "Sources", text, page.slots, page.assets))
        return out

    def _source_entry(self, page: _Page, e: dict[str, Any]) -> dict[str, Any]:
        uses = []
        for kind, ident, name, sid, read, is_stale in e["uses"][:MAX_USES]:
            cited = self._cited(page, kind, ident, sid)
            if len(cited) > MAX_CITED:
                more = len(cited) - MAX_CITED
                target = f"{self._spec_target(kind, ident)}#source-{sid}"
                if kind == "device":
                    from rooflinec.site.audit import audit_path

                    target = audit_path(ident)
                cited = [*cited[:MAX_CITED], page.link(f"{more} more", target)]
            uses.append(
                {
                    "spec": page.link(name, f"{self._spec_target(kind, ident)}#source-{sid}"),
                    "kind": kind,
                    "read": read,
                    "stale": is_stale,
                    "cited": cited,
                }
            )
        return {**e, "link": external_link(e["title"], e["url"]), "uses": uses,
                "more_uses": max(0, len(e["uses"]) - MAX_USES)}

    def _cited(self, page: _Page, kind: str, ident: str, sid: str) -> list[Markup]:
        """What a spec cites a source for: a device's figures link to their audit trail."""
        if kind != "device":
            return [md(c) for c in self.citations.get((ident, sid), [])]
        return [
            page.link(name, target) + (Markup(" ") + md(suffix) if suffix else Markup(""))
            for name, target, suffix in self.audit.uses.get((ident, sid), [])
        ]

    # ----------------------------------------------------------------- glossary, changelog

    def glossary_page(self) -> GeneratedPage:
        path = "glossary.md"
        page = _Page(path, self)
        terms = []
        for m in self.catalog.methods.values():
            for t in _records(m.data.get("glossary")):
                terms.append({**t, "method": page.link(m.title, f"method/{m.id}.md")})
        terms.sort(key=lambda t: str(t.get("term", "")).lower())
        text = self._render("glossary.md.j2", page, terms=terms)
        return GeneratedPage(path, "Glossary", text, page.slots, page.assets)

    def changelog_pages(self) -> list[GeneratedPage]:
        entries: list[tuple[str, str, str, str, Any]] = []
        for kind, ident, name, _ in self._specs():
            specs: dict[str, dict[str, Any]] = {
                "device": dict(self.catalog.devices), "kernel": dict(self.catalog.kernels),
                "method": dict(self.catalog.methods),
            }
            spec = specs[kind][ident]
            for v in spec.versions:
                entries.append((v.date, kind, name, ident, v))
        entries.sort(key=lambda e: (e[0], e[1], e[3], e[4].version), reverse=True)
        chunks = _pages(entries, PER_CHANGELOG_PAGE)
        out = []
        for n, chunk in enumerate(chunks, start=1):
            path = _numbered("changelog.md", n)
            page = _Page(path, self)
            rows = [
                {
                    "date": date,
                    "kind": kind,
                    "spec": page.link(name, self._spec_target(kind, ident)),
                    "version": v.version,
                    "change": v.change,
                }
                for date, kind, name, ident, v in chunk
            ]
            text = self._render(
                "changelog.md.j2",
                page,
                rows=rows,
                pager=self._pager(page, "changelog.md", n, len(chunks)),
            )
            out.append(GeneratedPage(path, "Changelog", text, page.slots, page.assets))
        return out


def _is_date(text: str) -> bool:
    try:
        datetime.date.fromisoformat(text)
    except (TypeError, ValueError):
        return False
    return True


def _strings(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    if value is None:
        return []
    return [str(value)]


def _records(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, list):
        return [v for v in value if isinstance(v, dict)]
    return []


def _plain(value: Any) -> dict[str, Any]:
    """An unknown method section as something a template can show: text, list or table."""
    if isinstance(value, list) and all(isinstance(v, dict) for v in value):
        keys = list(dict.fromkeys(k for v in value for k in v))
        rows = [[v.get(k, "") for k in keys] for v in value]
        return {"kind": "table", "keys": keys, "rows": rows}
    if isinstance(value, list):
        return {"kind": "list", "items": [str(v) for v in value]}
    if isinstance(value, dict):
        return {"kind": "table", "keys": ["key", "value"],
                "rows": [[k, str(v)] for k, v in value.items()]}
    return {"kind": "text", "text": str(value)}
