"""Every spec file loaded and schema-checked; what failed is remembered, not built."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rooflinec.assemble.collect import Broken, Collector
from rooflinec.assemble.files import SpecFiles, display_path
from rooflinec.errors import SpecError
from rooflinec.loader import Document, Loader, load_file
from rooflinec.schema import validate


def _record_broken(broken: Broken, kind: str, data: Any) -> None:
    """Remember the ids a failed document declares (its own, its cases', its examples')."""
    if not isinstance(data, dict):
        # Not even loaded: nothing it declares is known, so no reference to its kind
        # (or to the cases and examples it may hold) can be called dangling.
        broken.unknown.update({kind, "case", "example"} if kind == "kernel" else {kind, "example"})
        if kind == "precisions":
            broken.unknown.add("precision")
        return
    ident = data.get("id")
    if isinstance(ident, str):
        broken.ids.add(ident)
    elif kind in ("device", "kernel", "model"):
        broken.unknown.add(kind)
    if kind == "precisions":
        broken.unknown.add("precision")
    for section, what in (("cases", "case"), ("examples", "example")):
        items = data.get(section)
        if not isinstance(items, list):
            continue
        for item in items:
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                broken.ids.add(item["id"])
            else:
                broken.unknown.add(what)


def load_documents(
    files: SpecFiles, out: Collector, broken: Broken | None = None, *, load: Loader = load_file
) -> dict[str, list[Document]]:
    """Load and schema-check every file; return the documents that passed, by kind.

    Files that fail are recorded in `broken` so later checks do not cascade.
    """
    broken = broken if broken is not None else Broken()
    kinds: list[tuple[str, Iterable[Path]]] = [
        ("precisions", [files.precisions] if files.precisions else []),
        ("device", files.devices),
        ("kernel", files.kernels),
        ("method", files.methods),
        ("model", files.models),
    ]
    docs: dict[str, list[Document]] = {kind: [] for kind, _ in kinds}
    for kind, paths in kinds:
        for path in paths:
            try:
                doc = load(path, display_path(path))
            except SpecError as exc:
                out.extend(exc.diagnostics)
                _record_broken(broken, kind, None)
                continue
            problems = validate(doc, kind)
            out.extend(problems)
            if problems:
                _record_broken(broken, kind, doc.data)
            else:
                docs[kind].append(doc)
    return docs
