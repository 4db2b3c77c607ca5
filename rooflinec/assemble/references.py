"""References across files: devices and precisions of measurements and examples, cases.

Run once every file is typed; a reference into a file that failed is not reported.
"""

from __future__ import annotations

from typing import Any

from rooflinec.assemble.builder import METHOD_EXAMPLES_SUFFIX, METHOD_MODELS_SUFFIX, Builder
from rooflinec.assemble.ceilings import memory_ceilings
from rooflinec.catalog import Catalog, Example, Model
from rooflinec.loader import Document, PathKey


def cross_check(builder: Builder, catalog: Catalog) -> None:
    """Every reference from one file into another, once all files are typed."""
    for kernel in catalog.kernels.values():
        for index, case in enumerate(kernel.cases):
            for j, m in enumerate(case.measured):
                _device_ref(
                    builder,
                    catalog,
                    kernel.document,
                    ("cases", index, "measured", j),
                    m.device,
                    m.precision,
                    precision_known=m.precision in catalog.precisions,
                )
    for model in catalog.models.values():
        _model_refs(builder, catalog, model)
    _method_page_names(builder, catalog)
    memory_ceilings(builder, catalog)
    # Examples of every typed document, built or not: a file with one error still
    # gets its examples' references checked (their own owner is in `broken`).
    for doc, examples in builder.example_owners:
        _check_examples(builder, catalog, doc, examples)


def _method_page_names(builder: Builder, catalog: Catalog) -> None:
    """No method is named as another method's page of models or of reference examples
    (`method/<id>-models.md`, `method/<id>-examples.md`)."""
    for method in catalog.methods.values():
        for suffix, what in (
            (METHOD_MODELS_SUFFIX, "models"),
            (METHOD_EXAMPLES_SUFFIX, "examples"),
        ):
            owner = method.id.removesuffix(suffix)
            if owner != method.id and owner in catalog.methods:
                builder.out.add(
                    method.document.error(
                        ("id",),
                        f"method id '{method.id}' is reserved: the site names the {what} page"
                        f" of method '{owner}' so; choose another id",
                        code="ids",
                    )
                )


def _device_ref(
    builder: Builder,
    catalog: Catalog,
    doc: Document,
    path: PathKey,
    device_id: str,
    precision: str,
    *,
    precision_known: bool,
) -> None:
    """The device at `path` exists and has a peak for the precision (when that is known)."""
    device = catalog.devices.get(device_id)
    if device is None:
        if not builder.broken.covers("device", device_id):
            builder.error(
                doc,
                (*path, "device"),
                f"unknown device '{device_id}' (devices: {_listing(catalog.devices)})",
                code="refs",
            )
    elif precision not in device.peaks and precision_known:
        builder.error(
            doc,
            (*path, "precision"),
            f"device '{device_id}' has no peak for precision '{precision}'",
            code="refs",
        )


def _model_refs(builder: Builder, catalog: Catalog, model: Model) -> None:
    """A model's precisions are peaks of some device; its measurements name real devices."""
    doc = model.document
    if catalog.devices and not builder.broken.unknown & {"device", "precision"}:
        offered = {p for device in catalog.devices.values() for p in device.peaks}
        wanted: list[tuple[PathKey, str]] = [(("precision",), model.precision)]
        # A model is built only when all its steps are: step i is entry i of the file.
        for index, step in enumerate(model.steps):
            if step.precision is not None:
                wanted.append((("steps", index, "precision"), step.precision))
        for path, pid in wanted:
            if pid in catalog.precisions and pid not in offered:
                builder.error(
                    doc,
                    path,
                    f"no device of the catalog has a peak for precision '{pid}':"
                    " the model would have no result",
                    code="refs",
                )
    for j, m in enumerate(model.measured):
        _device_ref(
            builder,
            catalog,
            doc,
            ("measured", j),
            m.device,
            m.precision,
            precision_known=m.precision in catalog.precisions,
        )
    for r in model.serving:
        _device_ref(
            builder,
            catalog,
            doc,
            ("measured", r.index),
            r.device,
            r.precision,
            precision_known=r.precision in catalog.precisions,
        )
    _named_deployments(builder, catalog, model)


def _named_deployments(builder: Builder, catalog: Catalog, model: Model) -> None:
    """A named deployment's device exists and joins its chips in one scale-up domain: the
    chip count is what the device's `interconnect.scale_up.domain` quotes, or fewer."""
    doc = model.document
    for name, named in model.deployments.items():
        path: PathKey = ("deployments", name, "device")
        device = catalog.devices.get(named.device)
        if device is None:
            if not builder.broken.covers("device", named.device):
                known = ", ".join(sorted(catalog.devices)) or "none"
                builder.error(
                    doc, path, f"unknown device '{named.device}' (devices: {known})", code="refs"
                )
            continue
        chips = named.deployment.total
        fabric = device.interconnect.get("scale_up")
        domain = None if fabric is None else fabric.chips
        if chips > 1 and domain is None:
            builder.error(
                doc,
                path,
                f"deployment '{name}' joins {chips} chips, but device '{device.id}' quotes no"
                " scale-up domain (interconnect.scale_up.domain)",
                code="refs",
            )
        elif domain is not None and chips > domain:
            builder.error(
                doc,
                path,
                f"deployment '{name}' joins {chips} chips, more than the {domain} of device"
                f" '{device.id}''s scale-up domain",
                code="refs",
            )


def _check_examples(
    builder: Builder, catalog: Catalog, doc: Document, examples: tuple[Example, ...]
) -> None:
    cases = catalog.cases
    for i, ex in enumerate(examples):
        path: PathKey = ("examples", i)
        if ex.device:  # else the example gives its own figures
            _device_ref(
                builder,
                catalog,
                doc,
                path,
                ex.device,
                ex.precision,
                precision_known=not builder.broken.covers("precision", ex.precision),
            )
        else:
            builder.precision_ref(doc, (*path, "precision"), ex.precision, catalog.precisions)
        if ex.model is not None:
            _model_example_refs(builder, catalog, doc, path, ex)
        for j, cid in enumerate(ex.cases):
            if cid not in cases and not builder.broken.covers("case", cid):
                builder.error(doc, (*path, "cases", j), f"unknown case '{cid}'", code="refs")
        for e in ex.expect:
            j = e.index  # as written: an expectation that failed to build is not in `expect`
            if (
                e.case is not None
                and e.case not in cases
                and not builder.broken.covers("case", e.case)
            ):
                builder.error(
                    doc, (*path, "expect", j, "case"), f"unknown case '{e.case}'", code="refs"
                )
            elif e.symbol is not None and e.case in cases:
                kernel = catalog.kernels.get(cases[e.case].kernel)
                if kernel is not None and e.symbol not in kernel.symbols:
                    builder.error(
                        doc,
                        (*path, "expect", j, "symbol"),
                        f"kernel '{kernel.id}' of case '{e.case}' has no symbol '{e.symbol}'"
                        f" (it has: {', '.join(kernel.symbols)})",
                        code="refs",
                    )


def _model_example_refs(
    builder: Builder, catalog: Catalog, doc: Document, path: PathKey, ex: Example
) -> None:
    """The example's model, phase and steps exist (a model that failed is not reported)."""
    model = catalog.models.get(ex.model or "")
    if model is None:
        if not builder.broken.covers("model", ex.model or ""):
            builder.error(
                doc,
                (*path, "model"),
                f"unknown model '{ex.model}' (models: {_listing(catalog.models)})",
                code="refs",
            )
        return
    if ex.phase not in model.phases:
        builder.error(
            doc,
            (*path, "phase"),
            f"unknown phase '{ex.phase}' of model '{model.id}' (phases: {', '.join(model.phases)})",
            code="refs",
        )
    if ex.routing is not None and model.experts is None:
        builder.error(
            doc,
            (*path, "routing"),
            f"model '{model.id}' has no routed experts (`experts:`) to route",
            code="refs",
        )
    steps = {s.id for s in model.steps}
    for e in ex.expect:
        if e.step is not None and e.step not in steps:
            builder.error(
                doc,
                (*path, "expect", e.index, "step"),
                f"unknown step '{e.step}' of model '{model.id}'"
                f" (steps: {', '.join(s.id for s in model.steps)})",
                code="refs",
            )


def _listing(items: dict[str, Any]) -> str:
    names = sorted(items)
    return ", ".join(names[:8]) + (", ..." if len(names) > 8 else "") if names else "none"
