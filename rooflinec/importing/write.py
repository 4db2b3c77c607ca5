"""`import --write`: the entries added to the kernel specs in place, or nothing at all.

Each kernel file is edited with ruamel's round trip, which keeps comments, order, quoting
and line ends (CRLF stays CRLF, a missing final newline stays missing); a file whose
plain round trip is not its own text (a layout ruamel would change) is refused. A source
of the same id already in a file is kept when it is the same, else the import is refused:
what the user wrote there (a URL, the tool's version, the command) is never replaced.

The edited files are checked first in a temporary copy of the spec files the loader reads
(never a linked folder copied whole): only when it loads, validates and cross-checks are
the files replaced, all of them or none. The commit is a small transaction:

1. the journal `.rooflinec-import.journal` in the specs folder names the files (phase
   `staging`); each new text is written beside its file (`.NAME.rooflinec-new`) and each
   original copied beside it (`.NAME.rooflinec-old`), all flushed to disk;
2. the journal turns to phase `commit` (an atomic rename) and each new text is renamed
   over its file;
3. the copies of the originals, then the journal, are removed.

Any failure or interruption (an exception, Ctrl-C, SIGTERM turned into an exception)
puts the originals back and removes every file the import made. A run killed outright
(SIGKILL, a power cut) leaves the journal, and the next `import --write` finishes it (all
renamed: only the clean-up was left) or rolls it back, and says which.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from rooflinec.catalog import Catalog
from rooflinec.errors import Diagnostic, Location, RooflinecError, SpecError, one_line
from rooflinec.importing.entries import Entry
from rooflinec.importing.render import entry_map, yaml

JOURNAL = ".rooflinec-import.journal"
_NEW, _OLD = ".rooflinec-new", ".rooflinec-old"


def write_entries(
    catalog: Catalog, folder: Path, entries: list[Entry], source: tuple[str, dict[str, Any]]
) -> list[Path]:
    """Add `entries` and their `source` to the kernel specs of `folder`; the files changed.

    Raises `RooflinecError` (nothing written) when a file cannot be edited in place, a
    different source of the same id is there, or the edited specs would not build.
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
    verify(folder, texts)
    commit(folder, {Path(os.path.realpath(p)): t for p, t in texts.items()})
    return list(texts)


def _dump(data: Any) -> str:
    buffer = io.StringIO()
    yaml().dump(data, buffer)
    return buffer.getvalue()


@dataclasses.dataclass(frozen=True)
class RoundTrip:
    """A spec file read for an edit in place: its data (ruamel's round-trip types) and
    how to write it back as it was, line ends and final newline included."""

    data: Any
    crlf: bool
    final: bool

    def text(self) -> str:
        """The data, dumped, with the file's own line ends and final newline."""
        out = _dump(self.data)
        if not self.final:
            out = out[:-1]
        return out.replace("\n", "\r\n") if self.crlf else out


def round_trip(path: Path) -> RoundTrip:
    """The spec at `path` read for an edit in place; `SpecError` when its line ends are
    mixed or a plain round trip would change its layout (the edit would show as more)."""
    raw = path.read_bytes().decode("utf-8")
    crlf = "\r\n" in raw
    text = raw.replace("\r\n", "\n")
    if "\r" in text or (crlf and "\n" in raw.replace("\r\n", "")):
        raise _refused(
            path,
            1,
            1,
            "mixed line ends: make them all LF or all CRLF (or add the entries by hand; run"
            " without --write to print them)",
        )
    final = text.endswith("\n")
    whole = text if final else text + "\n"  # ruamel always ends with one
    data = yaml().load(whole)
    if _dump(yaml().load(whole)) != whole:
        raise _refused(
            path,
            0,
            0,
            "its layout would change on a round trip (indentation or line width): add the"
            " entries by hand (run without --write to print them)",
        )
    return RoundTrip(data, crlf, final)


def _edited(
    path: Path, entries: list[Entry], source: tuple[str, dict[str, Any]], units: Mapping[str, str]
) -> str:
    read = round_trip(path)
    data = read.data
    sid, fields = source
    sources = data.get("sources")
    if sources is None:
        sources = CommentedMap()
        keys = list(data)
        data.insert(keys.index("cases") if "cases" in keys else len(keys), "sources", sources)
    if sid in sources:
        _same_source(path, sources, sid, fields)
    else:
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
    return read.text()


def _same_source(path: Path, sources: Any, sid: str, fields: dict[str, Any]) -> None:
    """Nothing when the file's source `sid` is this import's; else the clash, refused."""
    existing = sources[sid]
    if isinstance(existing, dict) and {k: existing[k] for k in existing} == fields:
        return
    line, col = sources.lc.key(sid)
    raise _refused(
        path,
        line + 1,
        col + 1,
        f"source '{sid}' is already there and differs from this import's (a hand-edited"
        " source, or another run's): give --source NEW-ID to record this run as its own"
        " source",
    )


def _refused(path: Path | str, line: int, col: int, message: str) -> SpecError:
    """One `FILE:LINE:COL: error:` line (FILE alone at line 0)."""
    return SpecError([Diagnostic(Location(str(path), line, col), message, code="import")])


def verify(folder: Path, texts: dict[Path, str]) -> None:
    """Build a copy of the spec files of `folder` with the edited texts (a path that is no
    spec file yet, such as a new model's, is added at its place in the copy); `SpecError`
    when it does not build. Only the files the loader reads are copied, each as a plain
    file: a linked folder is neither followed whole nor copied as a link."""
    from rooflinec.assemble import build_catalog
    from rooflinec.assemble.files import discover
    from rooflinec.engine.compiler import compile_catalog
    from rooflinec.engine.serving import serving_diagnostics

    found = discover(folder)
    files = [
        *([found.precisions] if found.precisions else []),
        *found.devices,
        *found.kernels,
        *found.methods,
        *found.models,
    ]
    with tempfile.TemporaryDirectory(prefix="rooflinec-import-") as tmp:
        copy = Path(tmp) / "specs"
        where: dict[str, Path] = {}
        for path in files:
            target = copy / path.relative_to(folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            where[os.path.realpath(path)] = target
        for path, text in texts.items():
            edited = where.get(os.path.realpath(path))
            if edited is None and not path.exists() and path.is_relative_to(folder):
                edited = copy / path.relative_to(folder)  # a new file
                edited.parent.mkdir(parents=True, exist_ok=True)
            if edited is None:  # pragma: no cover - every kernel was read from `folder`
                raise RooflinecError(f"{one_line(str(path))}: error: not a spec file of {folder}")
            edited.write_text(text, "utf-8", newline="")
        catalog, diagnostics = build_catalog(copy)
        if catalog is not None:
            compiled = compile_catalog(catalog)
            diagnostics = [
                *diagnostics,
                *compiled.diagnostics,
                *serving_diagnostics(compiled.model_engine),  # a result beating its bound
            ]
        errors = [_moved(d, str(copy), str(folder)) for d in diagnostics if d.severity == "error"]
        if catalog is None or errors:
            raise SpecError(errors)


def _moved(d: Diagnostic, copy: str, folder: str) -> Diagnostic:
    """A diagnostic of the temporary copy, pointing at the file it stands for."""
    if not d.location.file.startswith(copy):
        return d
    where = dataclasses.replace(d.location, file=folder + d.location.file[len(copy) :])
    return dataclasses.replace(d, location=where)


def _beside(target: Path, suffix: str) -> Path:
    return target.with_name(f".{target.name}{suffix}")


def _write(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _journal(folder: Path, phase: str, targets: list[Path]) -> None:
    """Write the journal atomically: a run killed while writing it leaves the old one."""
    root = Path(os.path.realpath(folder))
    body = {"phase": phase, "files": [str(t.relative_to(root)) for t in targets]}
    staged = root / (JOURNAL + _NEW)
    _write(staged, (json.dumps(body, indent=1) + "\n").encode("utf-8"))
    os.replace(staged, root / JOURNAL)


def commit(folder: Path, texts: dict[Path, str]) -> None:
    """Replace every file of `texts` (real paths inside `folder`) by its text, or none.

    On any exception or interruption the originals are back and no file of ours is left.
    """
    root = Path(os.path.realpath(folder))
    targets = list(texts)
    renamed: list[Path] = []
    try:
        _journal(root, "staging", targets)
        for target, text in texts.items():
            _write(_beside(target, _NEW), text.encode("utf-8"))
            shutil.copymode(target, _beside(target, _NEW))
            shutil.copy2(target, _beside(target, _OLD))
        _journal(root, "commit", targets)
        for target in targets:
            os.replace(_beside(target, _NEW), target)
            renamed.append(target)
    except BaseException:
        _roll_back(root, targets, renamed)
        raise
    _clean(root, targets)


def _roll_back(root: Path, targets: list[Path], renamed: list[Path]) -> None:
    for target in renamed:
        os.replace(_beside(target, _OLD), target)
    _clean(root, targets)


def _clean(root: Path, targets: list[Path]) -> None:
    for target in targets:
        _beside(target, _NEW).unlink(missing_ok=True)
        _beside(target, _OLD).unlink(missing_ok=True)
    (root / (JOURNAL + _NEW)).unlink(missing_ok=True)
    (root / JOURNAL).unlink(missing_ok=True)


_SAFE = re.compile(r"[^/\\]+(?:/[^/\\]+)*")


def recover(folder: Path) -> str | None:
    """Finish or roll back the import a killed run left in `folder`; what was done, as a
    line to show, or None when there was nothing to do."""
    root = Path(os.path.realpath(folder))
    journal = root / JOURNAL
    if not journal.is_file():
        (root / (JOURNAL + _NEW)).unlink(missing_ok=True)
        return None
    try:
        body = json.loads(journal.read_text("utf-8"))
        phase, names = body["phase"], body["files"]
        if phase not in ("staging", "commit") or not isinstance(names, list):
            raise ValueError(phase)
        targets = [root / _checked(name) for name in names]
        if not all(Path(os.path.realpath(t)).is_relative_to(root) for t in targets):
            raise ValueError("a file outside the folder")
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise _refused(
            journal,
            1,
            1,
            f"an import journal rooflinec cannot read ({type(exc).__name__}): check the"
            " kernel files, then remove it",
        ) from None
    where = one_line(str(journal))
    if phase == "commit" and not any(_beside(t, _NEW).exists() for t in targets):
        _clean(root, targets)
        return (
            f"{where}: note: finished the import a killed run had written"
            f" ({len(targets)} file(s) replaced)"
        )
    renamed = [t for t in targets if phase == "commit" and not _beside(t, _NEW).exists()]
    renamed = [t for t in renamed if _beside(t, _OLD).is_file()]
    _roll_back(root, targets, renamed)
    return (
        f"{where}: note: rolled back the import a killed run left half written"
        f" ({len(renamed)} file(s) restored)"
    )


def _checked(name: object) -> str:
    """A journal's file name: relative, inside the folder, no `..`."""
    if not isinstance(name, str) or not _SAFE.fullmatch(name) or ".." in name.split("/"):
        raise ValueError(name)
    return name
