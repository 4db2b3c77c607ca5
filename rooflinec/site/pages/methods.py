"""Method pages: formulas, worked examples and their checks, one page per method."""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

from rooflinec.assemble.builder import METHOD_EXAMPLES_SUFFIX, METHOD_MODELS_SUFFIX
from rooflinec.catalog import Example, Method
from rooflinec.engine.examples import run_example
from rooflinec.formatting import format_number, format_percent, format_si
from rooflinec.site.pages.common import GeneratedPage, level_name, newest_versions, records
from rooflinec.site.pages.model import Page
from rooflinec.site.pages.parts import sources_context

if TYPE_CHECKING:
    from rooflinec.site.pages.model import Site

# The sections the method template shows in their own place; any other is shown as it is.
KNOWN_METHOD_KEYS = frozenset(
    {
        "id",
        "title",
        "summary",
        "symbols",
        "formulas",
        "inputs",
        "outputs",
        "assumptions",
        "uncertainty",
        "limits",
        "origin",
        "models",
        "glossary",
        "examples",
        "sources",
        "versions",
    }
)


def method_page(site: Site, method: Method) -> GeneratedPage:
    """`method/<id>.md`: the method's formulas, assumptions, and its worked examples
    checked against the compiled catalog."""
    path = f"method/{method.id}.md"
    page = Page(path, site)
    formulas = [
        {
            "name": f.name,
            "formula": f.formula,
            "math": page.math(f.formula),
            "meaning": f.meaning,
        }
        for f in method.formulas
    ]
    kernel_examples = [ex for ex in method.examples if ex.model is None]
    versions, earlier = newest_versions(method.versions)
    data = method.data
    models = _models_section(page, method)
    if models is not None:
        models["href"] = page.href(models_path(method))
    extra = [
        (key.replace("_", " ").capitalize(), _plain(data[key]))
        for key in data
        if key not in KNOWN_METHOD_KEYS
    ]
    text = site.render(
        "method.md.j2",
        page,
        method=method,
        formulas=formulas,
        symbols=sorted(method.symbols.items()),
        inputs=records(data.get("inputs")),
        outputs=records(data.get("outputs")),
        assumptions=_strings(data.get("assumptions")),
        uncertainty=_strings(data.get("uncertainty")),
        limits=_strings(data.get("limits")),
        origin=data.get("origin") if isinstance(data.get("origin"), dict) else None,
        models=models,
        glossary_count=len(records(data.get("glossary"))),
        examples=[{"name": ex.name, "id": ex.id} for ex in kernel_examples],
        examples_href=page.href(examples_path(method)),
        extra=extra,
        sources=sources_context(site, page, method.id, method.sources, f"{path}#source-"),
        versions=versions,
        earlier=earlier,
        changelog_href=page.href("changelog.md"),
    )
    return GeneratedPage(path, method.title, text, page.slots, page.assets)


def _examples(site: Site, page: Page, chosen: list[Example]) -> list[dict[str, Any]]:
    """The reference examples run against the compiled catalog, as the page shows them."""
    examples = []
    for ex in chosen:
        outcomes = run_example(site.compiled, ex)
        rows = []
        for o in outcomes:
            e = o.expectation
            rows.append(
                {
                    "output": e.output.replace("_", " ")
                    + (f" in {e.symbol}" if e.symbol is not None else ""),
                    "case": page.case_link(e.case, e.case)
                    if e.case in site.catalog.cases
                    else (e.case or (f"step {e.step}" if e.step else "–")),
                    "level": level_name(e.level).replace("_", "-") if e.level else "–",
                    "expected": e.text,
                    "computed": _computed(site, e.output, o.actual, ex.precision),
                    "tolerance": "exact"
                    if isinstance(e.value, str)
                    else format_percent(e.tolerance, 2),
                    "passed": o.passed,
                }
            )
        examples.append(
            {
                "id": ex.id,
                "name": ex.name,
                "description": ex.description,
                "device": page.device_link(ex.device)
                if ex.device in site.catalog.devices
                else (ex.figures.name if ex.figures is not None else ex.device),
                "precision": site.catalog.precisions[ex.precision].label
                if ex.precision in site.catalog.precisions
                else ex.precision,
                "cases": [page.case_link(c, c) for c in ex.cases if c in site.catalog.cases],
                "deployment": _deployment_text(ex),
                "rows": rows,
                "passed": all(r["passed"] for r in rows),
            }
        )
    return examples


def _deployment_text(ex: Example) -> str:
    """An example's split over chips and the fabric it states, as the page says them; ""
    for an example on one chip."""
    if ex.deployment is None:
        return ""
    d = ex.deployment
    degrees = ", ".join(f"{k} = {v:,}" for k, v in d.variables().items())
    text = f"Deployment {degrees} ({d.total:,} chips)"
    figures = ex.figures
    for role, f in ({} if figures is None else figures.interconnect).items():
        parts = [f"{format_si(f.per_direction, 'B/s', digits=6)} per chip and direction"]
        if f.domain is not None:
            parts.append(f"domain {f.domain:,} chips")
        if f.topology is not None:
            parts.append(f.topology)
        if f.in_network:
            parts.append("in-network reduction")
        if f.latency is not None:
            parts.append(f"{format_si(f.latency, 's', digits=6)} per collective at least")
        text += f"; {role.replace('_', '-')} {', '.join(parts)}"
    return text + "."


def models_path(method: Method) -> str:
    return f"method/{method.id}{METHOD_MODELS_SUFFIX}.md"


def examples_path(method: Method) -> str:
    return f"method/{method.id}{METHOD_EXAMPLES_SUFFIX}.md"


def model_examples_path(method: Method) -> str:
    # In the method's own folder: no other method's page can take the name
    return f"method/{method.id}/model-examples.md"


def method_examples_pages(site: Site, method: Method) -> list[GeneratedPage]:
    """`method/<id>-examples.md`, the method's reference examples about kernel cases, and
    `method/<id>/model-examples.md`, those about models, each run against the compiled
    catalog (no page for none). Pages of their own: each example is a table of expected
    and computed values, and beside the method's formulas, inputs and outputs (or its
    models section) they outgrow one page; together they outgrow one too."""
    out = []
    for path, chosen, about in (
        (examples_path(method), [ex for ex in method.examples if ex.model is None], "cases"),
        (
            model_examples_path(method),
            [ex for ex in method.examples if ex.model is not None],
            "models",
        ),
    ):
        if not chosen:
            continue
        page = Page(path, site)
        text = site.render(
            "method-examples-page.md.j2",
            page,
            method=method,
            about=about,
            examples=_examples(site, page, chosen),
            method_href=page.href(f"method/{method.id}.md"),
        )
        title = f"{method.title}: reference examples" + (
            " about models" if about == "models" else ""
        )
        out.append(GeneratedPage(path, title, text, page.slots, page.assets))
    return out


def method_models_page(site: Site, method: Method) -> GeneratedPage | None:
    """`method/<id>-models.md`: the method's models section (formulas, assumptions,
    limits, departures from other tools), or None when the method has none. A page of
    its own: beside the method's kernels and reference examples it would double the
    method page."""
    path = models_path(method)
    page = Page(path, site)
    models = _models_section(page, method)
    if models is None:
        return None
    about_models = [ex for ex in method.examples if ex.model is not None]
    text = site.render(
        "method-models.md.j2",
        page,
        method=method,
        models=models,
        examples=[{"name": ex.name, "id": ex.id} for ex in about_models],
        examples_href=page.href(model_examples_path(method)),
        method_href=page.href(f"method/{method.id}.md"),
    )
    return GeneratedPage(path, f"{method.title}: models", text, page.slots, page.assets)


def _computed(site: Site, output: str, actual: Fraction | int | str | None, precision: str) -> str:
    if actual is None:
        return "none"
    if isinstance(actual, str):
        return actual
    unit = (
        site.catalog.precisions[precision].unit if precision in site.catalog.precisions else "FLOP"
    )
    units = {
        "peak": f"{unit}/s",
        "attainable": f"{unit}/s",
        "bandwidth": "B/s",
        "ridge": f"{unit}/B",
        "intensity": f"{unit}/B",
        "flops": unit,
        "bytes": "B",
        "time": "s",
        "time_by_limit": "s",
        "collective_time": "s",
        "time_overlapped": "s",
    }
    if output in units:
        return format_si(actual, units[output], digits=7)
    if output in ("share_of_peak", "efficiency"):
        return format_percent(actual, 6)
    return format_number(actual, 7)


def _models_section(page: Page, method: Method) -> dict[str, Any] | None:
    """The models section's prose and formulas, or None when the method has none."""
    section = method.data.get("models")
    if not isinstance(section, dict):
        return None
    return {
        "summary": str(section.get("summary") or ""),
        "formulas": [
            {
                "name": f.name,
                "formula": f.formula,
                "math": page.math(f.formula),
                "meaning": f.meaning,
            }
            for f in method.model_formulas
        ],
        "assumptions": _strings(section.get("assumptions")),
        "limits": _strings(section.get("limits")),
        "departures": records(section.get("departures")),
    }


def _strings(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    if value is None:
        return []
    return [str(value)]


def _plain(value: Any) -> dict[str, Any]:
    """An unknown method section as something a template can show: text, list or table."""
    if isinstance(value, list) and all(isinstance(v, dict) for v in value):
        keys = list(dict.fromkeys(k for v in value for k in v))
        rows = [[v.get(k, "") for k in keys] for v in value]
        return {"kind": "table", "keys": keys, "rows": rows}
    if isinstance(value, list):
        return {"kind": "list", "items": [str(v) for v in value]}
    if isinstance(value, dict):
        return {
            "kind": "table",
            "keys": ["key", "value"],
            "rows": [[k, str(v)] for k, v in value.items()],
        }
    return {"kind": "text", "text": str(value)}
