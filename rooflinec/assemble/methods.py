"""Method files typed: the roofline formulas a catalog is computed with."""

from __future__ import annotations

from rooflinec.assemble.builder import Builder
from rooflinec.assemble.examples import build_examples
from rooflinec.catalog import Method, MethodFormula
from rooflinec.loader import Document, PathKey


def build_method(builder: Builder, doc: Document) -> Method | None:
    """A method, or None when its file has errors (each one reported)."""
    data = doc.data
    errors_before = len(builder.out.errors)
    builder.claim(doc, ("id",), data["id"], "method")
    sources = builder.sources(doc)
    builder.source_ref(doc, ("origin", "source"), data["origin"]["source"], sources)
    formulas: list[MethodFormula] = []
    for i, f in enumerate(data["formulas"]):
        where: PathKey = ("formulas", i, "expression")
        formula = builder.formula(doc, where, f["expression"], data["symbols"])
        if formula is not None:
            formulas.append(MethodFormula(f["name"], formula, f["meaning"]))
    examples = build_examples(builder, doc)
    versions = builder.versions(doc)
    if len(builder.out.errors) > errors_before:
        builder.refuse(data["id"], examples)
        return None
    return Method(
        data["id"],
        data["title"],
        data["summary"],
        data["symbols"],
        tuple(formulas),
        data,
        sources,
        versions,
        examples,
        doc,
    )
