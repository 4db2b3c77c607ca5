"""`import --write`: the entries added to the kernel specs in place, or nothing at all.

Each kernel file is edited with ruamel's round trip, which keeps comments, order and
quoting; a file whose plain round trip is not its own text (a layout ruamel would
change) is refused. The edited folder is built in a temporary copy first: only when it
loads, validates and cross-checks are the files replaced, each by an atomic rename.
"""

from __future__ import annotations

import dataclasses
import io
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from rooflinec.catalog import Catalog
from rooflinec.errors import Diagnostic, RooflinecError, SpecError
from rooflinec.importing.entries import Entry
from rooflinec.importing.render import entry_map, yaml


def write_entries(
    catalog: Catalog, folder: Path, entries: list[Entry], source: tuple[str, dict[str, Any]]
) -> list[Path]:
    """Add `entries` and their `source` to the kernel specs of `folder`; the files changed.

    Raises `RooflinecError` (nothing written) when a file cannot be edited in place or the
    edited specs would not build.
    """
    by_kernel: dict[str, list[Entry]] = {}
    for entry in entries:
        by_kernel.setdefault(entry.kernel, []).append(entry)
    texts: dict[Path, str] = {}
    for kernel_id, items in by_kernel.items():
        kernel = catalog.kernels[kernel_id]
        path = Path(kernel.document.file)
        units = {e.case: catalog.precisions[e.precision].unit for e in items}
        texts[path] = _edited(path, items, source, units)
    _verify(folder, texts)
    _replace(texts)
    return list(texts)


def _dump(data: Any) -> str:
    buffer = io.StringIO()
    yaml().dump(data, buffer)
    return buffer.getvalue()


def _edited(
    path: Path, entries: list[Entry], source: tuple[str, dict[str, Any]], units: Mapping[str, str]
) -> str:
    text = path.read_text("utf-8")
    data = yaml().load(text)
    if _dump(yaml().load(text)) != text:
        raise RooflinecError(
            f"{path}: its layout would change on a round trip (indentation or line width):"
            " add the entries by hand (run without --write to print them)"
        )
    sid, fields = source
    sources = data.get("sources")
    if sources is None:
        sources = CommentedMap()
        keys = list(data)
        data.insert(keys.index("cases") if "cases" in keys else len(keys), "sources", sources)
    sources[sid] = CommentedMap(fields)
    for entry in entries:
        case = next(c for c in data["cases"] if c.get("id") == entry.case)
        measured = case.get("measured")
        if measured is None:
            measured = case["measured"] = CommentedSeq()
        item = entry_map(entry, sid, units[entry.case])
        same = [
            i
            for i, m in enumerate(measured)
            if (m.get("device"), m.get("precision"), m.get("source"))
            == (entry.device, entry.precision, sid)
        ]
        if same:  # importing the same export again replaces its entry
            measured[same[0]] = item
        else:
            measured.append(item)
    return _dump(data)


def _verify(folder: Path, texts: dict[Path, str]) -> None:
    """Build a copy of `folder` with the edited texts; `SpecError` when it does not."""
    from rooflinec.assemble import build_catalog
    from rooflinec.compiler import compile_catalog

    with tempfile.TemporaryDirectory(prefix="rooflinec-import-") as tmp:
        copy = Path(tmp) / "specs"
        shutil.copytree(folder, copy)
        root = folder.resolve()
        for path, text in texts.items():
            (copy / path.resolve().relative_to(root)).write_text(text, "utf-8")
        catalog, diagnostics = build_catalog(copy)
        if catalog is not None:
            diagnostics = [*diagnostics, *compile_catalog(catalog).diagnostics]
        errors = [_moved(d, str(copy), str(folder)) for d in diagnostics if d.severity == "error"]
        if catalog is None or errors:
            raise SpecError(errors)


def _moved(d: Diagnostic, copy: str, folder: str) -> Diagnostic:
    """A diagnostic of the temporary copy, pointing at the file it stands for."""
    if not d.location.file.startswith(copy):
        return d
    where = dataclasses.replace(d.location, file=folder + d.location.file[len(copy) :])
    return dataclasses.replace(d, location=where)


def _replace(texts: dict[Path, str]) -> None:
    """Write every file beside its target first, then rename each over its target."""
    staged: list[tuple[Path, Path]] = []
    try:
        for path, text in texts.items():
            fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            staged.append((Path(name), path))
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
            shutil.copymode(path, name)
    except OSError:
        for written, _ in staged:
            written.unlink(missing_ok=True)
        raise
    for written, target in staged:
        os.replace(written, target)
