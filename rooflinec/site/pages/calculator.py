"""The Calculator page: a visitor's own chip, kernels and model on the roofline, in the browser.

The build writes what the page needs inline (a page opened from disk cannot fetch): every
device's data-sheet peaks, bandwidths, sustained shares and launch latency; every
kernel's operation and byte formulas as the safe parser's validated trees
(`rooflinec.formulas.tree_json`) with its cases' shapes, widths, launches and measured
rates; every model with a named deployment it can run (parameters, phases, the steps'
shape and count trees, the memory ledger), the kernels its steps run and the devices'
fabrics and capacities; the precisions' widths and units. Every number is an exact
rational as text; the page's scripts beside it (`calculator-exact.js`, the exact core,
then `calculator.js`, the page) evaluate them with BigInt rationals, decide each bound
by the method's tie order and print with the site's rounding.
"""

from __future__ import annotations

from fractions import Fraction
from importlib import resources
from typing import TYPE_CHECKING, Any

from rooflinec.catalog import (
    LEVEL_SHORT_NAMES,
    LEVELS,
    Kernel,
    LedgerTerm,
    MemoryLedger,
    Model,
    NamedDeployment,
)
from rooflinec.engine.memory import device_capacity
from rooflinec.engine.models import Link
from rooflinec.formulas.limits import LIMITS
from rooflinec.formulas.tree_json import rational_text, tree_json
from rooflinec.site.escape import script_json
from rooflinec.site.pages.common import MAX_CASES, GeneratedPage
from rooflinec.site.pages.model import Page

if TYPE_CHECKING:
    from rooflinec.site.pages.model import Site

__all__ = [
    "CALCULATOR_PATH",
    "calculator_data",
    "calculator_deployments",
    "calculator_link",
    "calculator_page",
]

CALCULATOR_PATH = "calculator.md"
#: Beside the page, in this order: the exact core (no DOM), then the page itself.
SCRIPTS = ("calculator-exact.js", "calculator.js")

#: Cases pre-filled when the page opens with no fragment: one of each kind of bound.
DEFAULT_CASES = ("gemm-large", "gemv-decode", "elementwise-add", "attention-fused")
#: The model pre-filled: one people deploy on eight-chip boards.
DEFAULT_MODEL = "llama-3-70b"


def calculator_link(page: Page, **prefill: str) -> str:
    """A link from `page` to the calculator pre-filled by `prefill` (`device=ID`,
    `kernel=ID`, `case=ID`, `model=ID`), as a query: the page reads its query as it reads
    its fragment (`#device=ID`), and a query is no anchor for mkdocs to look for."""
    query = "&".join(f"{k}={v}" for k, v in prefill.items())
    return page.href(CALCULATOR_PATH) + (f"?{query}" if query else "")


def calculator_data(site: Site) -> dict[str, Any]:
    """What the page's script evaluates: exact rationals as text, trees as lists."""
    cat = site.catalog
    devices: dict[str, Any] = {}
    for device in cat.devices.values():
        capacity = device_capacity(device)
        devices[device.id] = {
            "name": device.name,
            "peaks": {p: rational_text(peak.dense) for p, peak in device.peaks.items()},
            "compute_share": rational_text(device.compute_share),
            "memory": {
                lv: [
                    rational_text(device.memory[lv].bandwidth.per_chip),
                    rational_text(device.share_of(lv)),
                ]
                for lv in LEVELS
                if lv in device.memory
            },
            "latency": None if device.launch is None else rational_text(device.launch.latency),
            "smem": None if device.core is None else str(device.core.shared_memory),
            "capacity": None if capacity is None else rational_text(capacity),
            "links": {
                role: {
                    "bandwidth": rational_text(link.bandwidth),
                    "domain": link.domain,
                    "topology": link.topology,
                    "in_network": link.in_network,
                    "latency": None if link.latency is None else rational_text(link.latency),
                }
                for role, link in Link.of(device).items()
            },
        }
    kernels: dict[str, Any] = {}
    for kernel in cat.kernels.values():
        # As a kernel's page shows them: the first `MAX_CASES` (the page's data is inline)
        cases = [c for c in kernel.cases if c.grid is None][:MAX_CASES]
        if not cases:
            continue  # a collective or a grid-only kernel: no cells of its own
        kernels[kernel.id] = {
            "name": kernel.name,
            "symbols": list(kernel.symbols),
            "widths": list(kernel.widths),
            "flops": tree_json(kernel.flops),
            "bytes": {lv: tree_json(f) for lv, f in kernel.bytes.items()},
            "shared": list(kernel.shared_levels),
            "cases": [
                {
                    "id": c.id,
                    "name": c.name,
                    "precision": c.precision,
                    "shape": {k: str(v) for k, v in c.shape.items()},
                    "widths": dict(c.widths),
                    "launches": c.launches,
                    "measured": _measured(
                        site, c.id, [(m.device, m.precision) for m in c.measured]
                    ),
                }
                for c in cases
            ],
        }
    default = site.default_device or next(iter(cat.devices), None)
    models = _models(site)
    used = {step["kernel"] for m in models.values() for step in m["steps"]}
    return {
        "levels": [[lv, LEVEL_SHORT_NAMES[lv]] for lv in LEVELS],
        "precisions": {
            p.id: {"label": p.label, "unit": p.unit, "bytes": rational_text(p.bytes)}
            for p in cat.precisions.values()
        },
        "devices": devices,
        "kernels": kernels,
        "models": models,
        "step_kernels": {k: _step_kernel(cat.kernels[k]) for k in sorted(used)},
        "defaults": {
            "device": default,
            "cases": default_cases(site),
            "model": DEFAULT_MODEL if DEFAULT_MODEL in models else next(iter(models), None),
        },
        "limits": {
            "nodes": LIMITS.nodes,
            "depth": LIMITS.depth,
            "exponent": LIMITS.exponent,
            "result": str(LIMITS.result),
        },
    }


def _models(site: Site) -> dict[str, Any]:
    """Each model with named deployments it can run: its parameters, phases, tokens,
    steps (shape and count trees), memory ledger and deployments."""
    out: dict[str, Any] = {}
    for model in site.catalog.models.values():
        deployments = {
            name: {
                "device": named.device,
                "tp": named.deployment.tp,
                "pp": named.deployment.pp,
                "ep": named.deployment.ep,
                "dp": named.deployment.dp,
                "chips": named.deployment.total,
            }
            for name, named in calculator_deployments(site, model).items()
        }
        if not deployments:
            continue
        out[model.id] = {
            "name": model.name,
            "precision": model.precision,
            "parameters": {k: str(v) for k, v in model.parameters.items()},
            "phases": {p: {k: str(v) for k, v in run.items()} for p, run in model.phases.items()},
            # A verify pass of speculative decoding yields b x its expected tokens per verify
            "speculation": {
                p: {
                    "k": spec.k,
                    "acceptance": rational_text(spec.acceptance),
                    "tokens": rational_text(Fraction(model.tokens_by_phase[p])),
                }
                for p, spec in model.speculation.items()
            },
            "tokens": tree_json(model.tokens),
            "steps": [
                {
                    "id": step.id,
                    "name": step.name,
                    "kernel": step.kernel,
                    "shape": {k: tree_json(f) for k, f in step.shape.items()},
                    "n_symbols": sorted(step.shape["n"].symbols) if "n" in step.shape else [],
                    "count": tree_json(step.count),
                    "precision": step.precision,
                    "widths": dict(step.widths),
                    "fractional": sorted(step.fractional),
                }
                for step in model.steps
            ],
            "memory": None if model.memory is None else _ledger(model.memory),
            "deployments": deployments,
        }
    return out


def calculator_deployments(site: Site, model: Model) -> dict[str, NamedDeployment]:
    """The named deployments of `model` the page runs: on a catalog device, and ones the
    model can take (its model page links to the calculator only where there is one)."""
    engine = site.compiled.model_engine
    return {
        name: named
        for name, named in model.deployments.items()
        if named.device in site.catalog.devices
        and engine.deployment_problem(model, named.deployment) is None
    }


def _term(term: LedgerTerm | None) -> Any:
    if term is None:
        return None
    if term.value is not None:
        return {"value": rational_text(term.value)}
    assert term.formula is not None
    return {"tree": tree_json(term.formula), "symbols": sorted(term.formula.symbols)}


def _ledger(ledger: MemoryLedger) -> dict[str, Any]:
    return {
        "weights": _term(ledger.weights),
        "kv": _term(ledger.kv),
        "kv_per_token": _term(ledger.kv_per_token),
        "activations": _term(ledger.activations),
        "reserve": rational_text(ledger.reserve),
        "widths": dict(ledger.widths),
    }


def _step_kernel(kernel: Kernel) -> dict[str, Any]:
    """A kernel as a model's step runs it (a collective's bytes are `scale_up`'s)."""
    return {
        "flops": tree_json(kernel.flops),
        "bytes": {lv: tree_json(f) for lv, f in kernel.bytes.items()},
        "widths": list(kernel.widths),
        "collective": kernel.collective,
    }


def _measured(site: Site, case: str, runs: list[tuple[str, str]]) -> list[list[str]]:
    """[device, precision, rate] of each measured run of `case` that has a cell."""
    out = []
    for device, precision in runs:
        result = site.compiled.result(case, device, precision)
        if result is not None and result.measured is not None:
            out.append([device, precision, rational_text(result.measured)])
    return out


def calculator_page(site: Site) -> GeneratedPage:
    """`calculator.md`, its data inline and its scripts beside it."""
    page = Page(CALCULATOR_PATH, site)
    assets = resources.files("rooflinec.site").joinpath("assets")
    for name in SCRIPTS:
        page.assets[name] = assets.joinpath(name).read_text("utf-8")
    data = calculator_data(site)
    inline = script_json(data)
    app = page.slots.add(
        '<div id="rooflinec-calculator" class="rooflinec-calculator" hidden></div>'
        f'<script type="application/json" id="rooflinec-calculator-data">{inline}</script>'
        + "".join(f'<script src="{name}"></script>' for name in SCRIPTS)
    )
    model = data["defaults"]["model"]
    text = site.render(
        "calculator.md.j2",
        page,
        app=app,
        device=data["defaults"]["device"],
        method=page.method_link("method"),
        case=next(iter(default_cases(site)), ""),
        model=model,
        deployment=next(iter(data["models"][model]["deployments"])) if model else None,
    )
    return GeneratedPage(CALCULATOR_PATH, "Calculator", text, page.slots, page.assets)


def default_cases(site: Site) -> list[str]:
    """The cases the page opens with: `DEFAULT_CASES` the catalog has, else its first four."""
    known = {c.id: c for k in site.catalog.kernels.values() for c in k.cases if c.grid is None}
    return [c for c in DEFAULT_CASES if c in known] or list(known)[:4]
