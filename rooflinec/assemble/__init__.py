"""Assemble the catalog from a specs folder: load, validate, type, cross-check.

`build_catalog(folder)` returns the catalog (None when errors stop it) and every
diagnostic found, all at once, so a pull request sees all its mistakes in one run.

The stages, in order, one module each: `files` (find the spec files), `load` (read and
schema-check them, remembering what failed in `collect.Broken`), then typing, by kind of
file, with a shared `builder.Builder`: `precisions`, `devices`, `kernels` (with
`cases`), `methods`, each with its `examples`, `models` (whose steps name kernels);
last `references`, across files.

It may import the core values (`catalog`, `quantities`, `errors`, `loader`, `schema`),
the formula engine and the engine's evaluation of counts (`rooflinec.engine.evaluate`),
so that a count the validators accept is one `compile` computes; it imports nothing from
`outputs`, `prose`, `site` or `cli`.
"""

from __future__ import annotations

from pathlib import Path

from rooflinec.assemble.builder import Builder
from rooflinec.assemble.collect import Broken, Collector
from rooflinec.assemble.devices import build_device
from rooflinec.assemble.examples import printed_tolerance
from rooflinec.assemble.files import SpecFiles, discover, display_path
from rooflinec.assemble.kernels import RESERVED_SYMBOL, build_kernel
from rooflinec.assemble.load import load_documents
from rooflinec.assemble.methods import build_method
from rooflinec.assemble.models import build_model
from rooflinec.assemble.precisions import build_precisions
from rooflinec.assemble.references import cross_check
from rooflinec.catalog import Catalog
from rooflinec.errors import Diagnostic, Location, SpecError
from rooflinec.loader import Loader, load_file

__all__ = [
    "RESERVED_SYMBOL",
    "Broken",
    "Collector",
    "SpecFiles",
    "build_catalog",
    "catalog_or_raise",
    "discover",
    "display_path",
    "load_documents",
    "printed_tolerance",
]


def build_catalog(
    folder: Path, *, load: Loader = load_file
) -> tuple[Catalog | None, list[Diagnostic]]:
    """Load, validate and cross-check the specs in `folder` (`load` reads one file)."""
    out = Collector()
    if not folder.is_dir():
        out.add(Diagnostic(Location(display_path(folder)), "specs folder not found"))
        return None, out.diagnostics
    files = discover(folder)
    out.extend(files.problems)  # links refused, entries skipped
    broken = Broken()
    if files.precisions is None:
        out.add(
            Diagnostic(
                Location(display_path(folder / "precisions.yaml"), 1, 1),
                "missing precisions.yaml: every catalog defines its precisions",
            )
        )
        broken.unknown.add("precision")
    docs = load_documents(files, out, broken, load=load)
    builder = Builder(out, broken)
    precisions, precision_sources = build_precisions(builder, docs["precisions"])
    devices = {
        d.id: d for d in (build_device(builder, doc, precisions) for doc in docs["device"]) if d
    }
    shared = tuple(sorted({d.core.shared_memory for d in devices.values() if d.core}))
    kernels = {
        k.id: k
        for k in (build_kernel(builder, doc, precisions, shared) for doc in docs["kernel"])
        if k
    }
    methods = {m.id: m for m in (build_method(builder, doc) for doc in docs["method"]) if m}
    models = {
        m.id: m
        for m in (build_model(builder, doc, kernels, precisions) for doc in docs["model"])
        if m
    }
    catalog = Catalog(
        precisions, devices, kernels, methods, display_path(folder), models, precision_sources
    )
    cross_check(builder, catalog)
    out.diagnostics.sort(key=Diagnostic.sort_key)
    if out.errors:
        return None, out.diagnostics
    return catalog, out.diagnostics


def catalog_or_raise(folder: Path) -> Catalog:
    """The catalog, or `SpecError` with every error found."""
    catalog, diagnostics = build_catalog(folder)
    if catalog is None:
        raise SpecError([d for d in diagnostics if d.severity == "error"])
    return catalog
