"""The cases of a kernel typed: shapes binding every symbol, measured rates and times."""

from __future__ import annotations

from typing import Any

from rooflinec.assemble.builder import Builder
from rooflinec.catalog import Case, Measured, Precision, Source
from rooflinec.loader import Document, PathKey
from rooflinec.quantities import Dimension


def build_case(
    builder: Builder,
    doc: Document,
    index: int,
    entry: dict[str, Any],
    kernel_id: str,
    symbols: dict[str, str],
    precisions: dict[str, Precision],
    sources: dict[str, Source],
) -> Case | None:
    """The case at `index` of a kernel file, or None when it has errors."""
    path: PathKey = ("cases", index)
    errors_before = len(builder.out.errors)
    builder.claim(doc, (*path, "id"), entry["id"], "case")
    builder.precision_ref(doc, (*path, "precision"), entry["precision"], precisions)
    shape: dict[str, int] = entry["shape"]
    for name in symbols:
        if name not in shape:
            builder.out.add(
                doc.error(
                    (*path, "shape"),
                    f"symbol '{name}' is not bound: give it a positive whole number",
                    code="shape",
                )
            )
    for name in shape:
        if name not in symbols:
            builder.out.add(
                doc.error(
                    (*path, "shape", name),
                    f"'{name}' is not a symbol of this kernel (symbols: {', '.join(symbols)})",
                    key=True,
                    code="shape",
                )
            )
    measured: list[Measured] = []
    for j, m in enumerate(entry.get("measured") or []):
        mpath = (*path, "measured", j)
        builder.source_ref(doc, (*mpath, "source"), m.get("source"), sources)
        builder.precision_ref(doc, (*mpath, "precision"), m["precision"], precisions)
        rate = time = None
        key = "rate" if "rate" in m else "time"
        parsed = builder.quantity(
            doc, (*mpath, key), m[key], Dimension.RATE if key == "rate" else Dimension.TIME
        )
        if parsed is None:
            continue
        if key == "rate":
            rate = parsed[0]
        else:
            time = parsed[0]
        measured.append(
            Measured(
                m["device"],
                m["precision"],
                rate,
                time,
                m[key],
                m.get("source"),
                m.get("note"),
                doc.locate(mpath),
            )
        )
    if len(builder.out.errors) > errors_before:
        return None
    return Case(
        entry["id"],
        entry["name"],
        entry.get("description"),
        kernel_id,
        entry["precision"],
        dict(shape),
        tuple(measured),
        doc.locate(path),
    )
