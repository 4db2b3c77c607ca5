"""Method files typed: the roofline formulas a catalog is computed with."""

from __future__ import annotations

from rooflinec.assemble.builder import Builder
from rooflinec.assemble.typed import TypedFile
from rooflinec.catalog import Method, MethodFormula
from rooflinec.loader import Document, PathKey


def build_method(builder: Builder, doc: Document) -> Method | None:
    """A method, or None when its file has errors (each one reported)."""
    data = doc.data
    typed = TypedFile(builder, doc, "method")
    sources = builder.sources(doc)
    builder.source_ref(doc, ("origin", "source"), data["origin"]["source"], sources)
    formulas: list[MethodFormula] = []
    for i, f in enumerate(data["formulas"]):
        where: PathKey = ("formulas", i, "expression")
        formula = builder.formula(doc, where, f["expression"], data["symbols"])
        if formula is not None:
            formulas.append(MethodFormula(f["name"], formula, f["meaning"]))
    model_formulas: list[MethodFormula] = []
    for i, f in enumerate((data.get("models") or {}).get("formulas") or ()):
        where = ("models", "formulas", i, "expression")
        formula = builder.formula(doc, where, f["expression"], data["symbols"])
        if formula is not None:
            model_formulas.append(MethodFormula(f["name"], formula, f["meaning"]))
    finished = typed.finish()
    if finished is None:
        return None
    examples, versions = finished
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
        tuple(model_formulas),
    )
