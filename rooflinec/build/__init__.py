"""Build the catalog from a specs folder: load, validate, type, cross-check.

`build_catalog(folder)` returns the catalog (None when errors stop it) and every
diagnostic found, all at once, so a pull request sees all its mistakes in one run.
"""

from __future__ import annotations

import keyword
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, ClassVar

from rooflinec.catalog import (
    LEVELS,
    Alternative,
    Case,
    Catalog,
    Device,
    Example,
    Expectation,
    Figure,
    Kernel,
    Measured,
    MemoryLevel,
    Method,
    MethodFormula,
    Peak,
    Precision,
    Source,
    Version,
)
from rooflinec.errors import Diagnostic, Location, SpecError
from rooflinec.formulas import FUNCTIONS, EvaluationError, Formula, FormulaError, parse_formula
from rooflinec.loader import Document, PathKey, load_file
from rooflinec.quantities import Dimension, QuantityError, parse_quantity
from rooflinec.schema import validate

RESERVED_SYMBOL = "w"
MAX_COUNT = 10**40  # operations or bytes of one call; more is a typo, not a kernel


@dataclass
class Collector:
    """Diagnostics gathered while building; `ok` until the first error."""

    diagnostics: list[Diagnostic] = field(default_factory=list)

    def add(self, diagnostic: Diagnostic) -> None:
        self.diagnostics.append(diagnostic)

    def extend(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics.extend(diagnostics)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]


@dataclass(frozen=True)
class SpecFiles:
    """The spec files of a folder, by kind."""

    precisions: Path | None
    devices: tuple[Path, ...]
    kernels: tuple[Path, ...]
    methods: tuple[Path, ...]


def discover(folder: Path) -> SpecFiles:
    """Find `precisions.yaml`, `devices/*.yaml`, `kernels/*.yaml`, `methods/*.yaml`."""

    def listing(name: str) -> tuple[Path, ...]:
        sub = folder / name
        if not sub.is_dir():
            return ()
        return tuple(
            sorted(p for p in sub.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
        )

    precisions = folder / "precisions.yaml"
    return SpecFiles(
        precisions if precisions.is_file() else None,
        listing("devices"),
        listing("kernels"),
        listing("methods"),
    )


def display_path(path: Path) -> str:
    """The path as people (and GitHub annotations) want it: relative to the cwd if inside."""
    try:
        if not path.is_absolute():
            return str(path)
        relative = os.path.relpath(path, Path.cwd())
        # Outside the working folder a relative path climbs with ../..: absolute reads better.
        return str(path) if relative.startswith("..") else relative
    except ValueError:
        return str(path)


@dataclass
class Broken:
    """What is known of the documents that failed to load or validate.

    A file that failed is not built further, so references to what it declares would
    all look dangling; the builder skips those errors for the ids recorded here (and
    for every id of a kind when some file of that kind could not even be read).
    """

    ids: set[str] = field(default_factory=set)
    unknown: set[str] = field(default_factory=set)  # kinds with a file whose ids are unknown

    def covers(self, kind: str, ident: str) -> bool:
        return kind in self.unknown or ident in self.ids


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
    elif kind in ("device", "kernel"):
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
    files: SpecFiles, out: Collector, broken: Broken | None = None
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
    ]
    docs: dict[str, list[Document]] = {"precisions": [], "device": [], "kernel": [], "method": []}
    for kind, paths in kinds:
        for path in paths:
            try:
                doc = load_file(path, display_path(path))
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


def build_catalog(folder: Path) -> tuple[Catalog | None, list[Diagnostic]]:
    """Load, validate and cross-check the specs in `folder`."""
    out = Collector()
    if not folder.is_dir():
        out.add(Diagnostic(Location(display_path(folder)), "specs folder not found"))
        return None, out.diagnostics
    files = discover(folder)
    broken = Broken()
    if files.precisions is None:
        out.add(
            Diagnostic(
                Location(display_path(folder / "precisions.yaml"), 1, 1),
                "missing precisions.yaml: every catalog defines its precisions",
            )
        )
        broken.unknown.add("precision")
    docs = load_documents(files, out, broken)
    builder = _Builder(out, broken)
    precisions = builder.precisions(docs["precisions"])
    devices = {d.id: d for d in (builder.device(doc, precisions) for doc in docs["device"]) if d}
    kernels = {k.id: k for k in (builder.kernel(doc, precisions) for doc in docs["kernel"]) if k}
    methods = {m.id: m for m in (builder.method(doc) for doc in docs["method"]) if m}
    catalog = Catalog(precisions, devices, kernels, methods, display_path(folder))
    builder.cross_check(catalog)
    out.diagnostics.sort(key=Diagnostic.sort_key)
    if out.errors:
        return None, out.diagnostics
    return catalog, out.diagnostics


# --------------------------------------------------------------------------- helpers


def _opt(data: dict[str, Any], key: str) -> Any:
    return data.get(key)


class _Builder:
    """Typed objects from validated documents; every problem goes to the collector."""

    def __init__(self, out: Collector, broken: Broken | None = None) -> None:
        self.out = out
        self.ids: dict[str, Location] = {}
        self.broken = broken if broken is not None else Broken()
        self.example_owners: list[tuple[Document, tuple[Example, ...]]] = []

    # ids are unique across the whole catalog: devices, kernels, cases, methods, examples
    def claim(self, doc: Document, path: PathKey, ident: str, what: str) -> None:
        here = doc.locate(path)
        first = self.ids.get(ident)
        if first is not None:
            self.out.add(
                doc.error(path, f"{what} id '{ident}' is already used at {first}", code="ids")
            )
        else:
            self.ids[ident] = here

    def quantity(
        self, doc: Document, path: PathKey, text: str, dimension: Dimension
    ) -> tuple[Fraction, Any] | None:
        try:
            q = parse_quantity(text, dimension, positive=True)
        except QuantityError as exc:
            message = exc.message + (f" ({exc.hint})" if exc.hint else "")
            self.out.add(doc.error(path, message, offset=exc.column, code="units"))
            return None
        return q.value, q

    def versions(self, doc: Document) -> tuple[Version, ...]:
        items = doc.data.get("versions") or []
        out: list[Version] = []
        for i, item in enumerate(items):
            version = Version(item["version"], item["date"], item["change"])
            if out and version.version <= out[-1].version:
                self.out.add(
                    doc.error(
                        ("versions", i, "version"),
                        f"version {version.version} does not follow version {out[-1].version}:"
                        " versions increase down the list",
                        code="versions",
                    )
                )
            if out and version.date < out[-1].date:
                self.out.add(
                    doc.error(
                        ("versions", i, "date"),
                        f"date {version.date} is before the previous version's {out[-1].date}",
                        code="versions",
                    )
                )
            out.append(version)
        return tuple(out)

    def sources(self, doc: Document) -> dict[str, Source]:
        out: dict[str, Source] = {}
        for sid, s in (doc.data.get("sources") or {}).items():
            out[sid] = Source(
                sid,
                s["title"],
                s["publisher"],
                s["url"],
                s["read"],
                s.get("published"),
                s.get("kind"),
                s.get("note"),
                doc.locate(("sources", sid), key=True),
            )
        return out

    def source_ref(
        self, doc: Document, path: PathKey, sid: str | None, known: dict[str, Source]
    ) -> None:
        if sid is not None and sid not in known:
            hint = ", ".join(sorted(known)) or "none declared"
            self.out.add(
                doc.error(
                    path, f"unknown source '{sid}' (this file's sources: {hint})", code="refs"
                )
            )

    # ----------------------------------------------------------------- precisions
    def precisions(self, docs: list[Document]) -> dict[str, Precision]:
        out: dict[str, Precision] = {}
        for doc in docs:
            for pid, p in doc.data["precisions"].items():
                out[pid] = Precision(
                    pid,
                    p["label"],
                    Fraction(p["bytes"]),
                    p.get("unit", "FLOP"),
                    p.get("description"),
                    doc.locate(("precisions", pid), key=True),
                )
        return out

    # ----------------------------------------------------------------- devices
    def figure(
        self,
        doc: Document,
        path: PathKey,
        entry: dict[str, Any],
        value_key: str,
        dimension: Dimension,
        sources: dict[str, Source],
    ) -> Figure | None:
        parsed = self.quantity(doc, (*path, value_key), entry[value_key], dimension)
        self.source_ref(doc, (*path, "source"), entry.get("source"), sources)
        alternatives: list[Alternative] = []
        for i, alt in enumerate(entry.get("alternatives") or []):
            apath = (*path, "alternatives", i)
            aq = self.quantity(doc, (*apath, "value"), alt["value"], dimension)
            self.source_ref(doc, (*apath, "source"), alt.get("source"), sources)
            if aq is not None:
                alternatives.append(
                    Alternative(
                        aq[0],
                        alt["value"],
                        alt.get("sparsity"),
                        alt.get("pipe"),
                        alt["source"],
                        alt.get("quote"),
                        alt.get("note"),
                        doc.locate(apath),
                    )
                )
        if parsed is None:
            return None
        value, q = parsed
        return Figure(
            value,
            entry[value_key],
            entry["source"],
            entry.get("quote"),
            entry.get("note"),
            tuple(alternatives),
            doc.locate((*path, value_key)),
            q.counts,
            q.binary,
        )

    def device(self, doc: Document, precisions: dict[str, Precision]) -> Device | None:
        data = doc.data
        errors_before = len(self.out.errors)
        self.claim(doc, ("id",), data["id"], "device")
        sources = self.sources(doc)
        peaks: dict[str, Peak] = {}
        for pid, entry in data["compute"].items():
            path = ("compute", pid)
            if precisions and pid not in precisions:
                self.out.add(
                    doc.error(
                        path,
                        f"unknown precision '{pid}' (precisions.yaml has: {', '.join(precisions)})",
                        key=True,
                        code="refs",
                    )
                )
            fig = self.figure(doc, path, entry, "peak", Dimension.RATE, sources)
            if fig is not None:
                peaks[pid] = Peak(pid, fig, entry.get("sparsity"), entry.get("pipe"))
        memory: dict[str, MemoryLevel] = {}
        for role in LEVELS:
            entry = data["memory"].get(role)
            if entry is None:
                continue
            path = ("memory", role)
            fig = self.figure(doc, path, entry, "bandwidth", Dimension.BANDWIDTH, sources)
            capacity = self.capacity(doc, (*path, "capacity"), entry.get("capacity"), sources)
            share = None
            if "sustained" in entry:
                parsed = self.quantity(
                    doc, (*path, "sustained"), entry["sustained"], Dimension.SHARE
                )
                share = parsed[0] if parsed else None
            if fig is not None:
                memory[role] = MemoryLevel(
                    role, entry["label"], fig, capacity, share, entry.get("note")
                )
        sustained = data.get("sustained") or {}
        shares: dict[str, Fraction] = {}
        for which in ("compute", "memory"):
            shares[which] = Fraction(1)
            if which in sustained:
                parsed = self.quantity(doc, ("sustained", which), sustained[which], Dimension.SHARE)
                if parsed:
                    shares[which] = parsed[0]
        self.source_ref(doc, ("sustained", "source"), sustained.get("source"), sources)
        examples = self.examples(doc, data["id"])
        self.example_owners.append((doc, examples))
        versions = self.versions(doc)
        if len(self.out.errors) > errors_before:
            self.broken.ids.add(data["id"])
            self.broken.ids.update(ex.id for ex in examples)
            return None
        return Device(
            data["id"],
            data["name"],
            data["vendor"],
            data.get("kind"),
            data.get("form_factor"),
            data.get("description"),
            peaks,
            memory,
            shares["compute"],
            shares["memory"],
            sustained.get("note"),
            sources,
            tuple(data.get("assumptions") or ()),
            versions,
            examples,
            doc,
        )

    def capacity(
        self, doc: Document, path: PathKey, raw: Any, sources: dict[str, Source]
    ) -> Figure | None:
        if raw is None:
            return None
        entry = raw if isinstance(raw, dict) else {"value": raw, "source": None}
        where = (*path, "value") if isinstance(raw, dict) else path
        parsed = self.quantity(doc, where, entry["value"], Dimension.BYTES)
        self.source_ref(doc, (*path, "source"), entry.get("source"), sources)
        if parsed is None:
            return None
        value, q = parsed
        return Figure(
            value,
            entry["value"],
            entry.get("source") or "",
            entry.get("quote"),
            entry.get("note"),
            (),
            doc.locate(path),
            None,
            q.binary,
        )

    # ----------------------------------------------------------------- kernels
    def formula(
        self, doc: Document, path: PathKey, text: str, symbols: Iterable[str]
    ) -> Formula | None:
        try:
            return parse_formula(text, tuple(symbols))
        except FormulaError as exc:
            self.out.add(doc.error(path, exc.message, offset=exc.column, code="formula"))
            return None

    def kernel(self, doc: Document, precisions: dict[str, Precision]) -> Kernel | None:
        data = doc.data
        errors_before = len(self.out.errors)
        self.claim(doc, ("id",), data["id"], "kernel")
        symbols: dict[str, str] = data["symbols"]
        for name in symbols:
            reason = _reserved(name)
            if reason is not None:
                self.out.add(
                    doc.error(
                        ("symbols", name),
                        f"'{name}' is reserved: {reason}; choose another symbol name",
                        key=True,
                        code="formula",
                    )
                )
        flops = self.formula(doc, ("flops",), data["flops"], symbols)
        if flops is not None and RESERVED_SYMBOL in flops.symbols:
            self.out.add(
                doc.error(
                    ("flops",),
                    "the operation count cannot depend on w (bytes per value)",
                    code="formula",
                )
            )
        byte_formulas: dict[str, Formula] = {}
        for role, text in data["bytes"].items():
            formula = self.formula(doc, ("bytes", role), text, symbols)
            if formula is not None:
                byte_formulas[role] = formula
        sources = self.sources(doc)
        cases = tuple(
            c
            for c in (
                self.case(doc, i, entry, data["id"], symbols, precisions, sources)
                for i, entry in enumerate(data["cases"])
            )
            if c is not None
        )
        if flops is not None and len(self.out.errors) == errors_before:
            self.evaluate_all(doc, flops, byte_formulas, cases, precisions)
        examples = self.examples(doc, data["id"])
        self.example_owners.append((doc, examples))
        versions = self.versions(doc)
        if len(self.out.errors) > errors_before or flops is None:
            self.broken.ids.add(data["id"])
            self.broken.ids.update(c["id"] for c in data["cases"])
            self.broken.ids.update(ex.id for ex in examples)
            return None
        return Kernel(
            data["id"],
            data["name"],
            data["description"],
            symbols,
            flops,
            byte_formulas,
            cases,
            sources,
            tuple(data.get("assumptions") or ()),
            versions,
            examples,
            doc,
        )

    def case(
        self,
        doc: Document,
        index: int,
        entry: dict[str, Any],
        kernel_id: str,
        symbols: dict[str, str],
        precisions: dict[str, Precision],
        sources: dict[str, Source],
    ) -> Case | None:
        path: PathKey = ("cases", index)
        errors_before = len(self.out.errors)
        self.claim(doc, (*path, "id"), entry["id"], "case")
        if precisions and entry["precision"] not in precisions:
            self.out.add(
                doc.error(
                    (*path, "precision"),
                    f"unknown precision '{entry['precision']}'"
                    f" (precisions.yaml has: {', '.join(precisions)})",
                    code="refs",
                )
            )
        shape: dict[str, int] = entry["shape"]
        for name in symbols:
            if name not in shape:
                self.out.add(
                    doc.error(
                        (*path, "shape"),
                        f"symbol '{name}' is not bound: give it a positive whole number",
                        code="shape",
                    )
                )
        for name in shape:
            if name not in symbols:
                self.out.add(
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
            self.source_ref(doc, (*mpath, "source"), m.get("source"), sources)
            if precisions and m["precision"] not in precisions:
                self.out.add(
                    doc.error(
                        (*mpath, "precision"),
                        f"unknown precision '{m['precision']}'"
                        f" (precisions.yaml has: {', '.join(precisions)})",
                        code="refs",
                    )
                )
            rate = time = None
            key = "rate" if "rate" in m else "time"
            parsed = self.quantity(
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
        if len(self.out.errors) > errors_before:
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

    def evaluate_all(
        self,
        doc: Document,
        flops: Formula,
        byte_formulas: dict[str, Formula],
        cases: tuple[Case, ...],
        precisions: dict[str, Precision],
    ) -> None:
        """Evaluate every formula for every case and precision: catch zero traffic early."""
        widths = sorted({p.bytes for p in precisions.values()}) or [Fraction(1)]
        formulas: list[tuple[PathKey, Formula, str]] = [(("flops",), flops, "operation count")]
        formulas += [
            (("bytes", role), f, f"{role} byte count") for role, f in byte_formulas.items()
        ]
        for case in cases:
            for path, formula, what in formulas:
                for w in widths if RESERVED_SYMBOL in formula.symbols else widths[:1]:
                    values: dict[str, int | Fraction] = {**case.shape, RESERVED_SYMBOL: w}
                    try:
                        result = formula.evaluate(values)
                    except (EvaluationError, FormulaError) as exc:
                        self.out.add(
                            doc.error(
                                path,
                                f"case '{case.id}': {exc.message}",
                                offset=exc.column,
                                code="formula",
                            )
                        )
                        break
                    if result <= 0 or abs(result) > MAX_COUNT:
                        problem = "is not positive" if result <= 0 else "is implausibly large"
                        self.out.add(
                            doc.error(
                                path,
                                f"case '{case.id}': the {what} {problem}"
                                f" ({_fmt(result)} with w={w})",
                                code="formula",
                            )
                        )
                        break

    # ----------------------------------------------------------------- examples
    _OUTPUT_DIMENSIONS: ClassVar[dict[str, Dimension]] = {
        "peak": Dimension.RATE,
        "bandwidth": Dimension.BANDWIDTH,
        "ridge": Dimension.INTENSITY,
        "intensity": Dimension.INTENSITY,
        "attainable": Dimension.RATE,
        "flops": Dimension.OPS,
        "bytes": Dimension.BYTES,
        "time": Dimension.TIME,
        "share_of_peak": Dimension.SHARE,
        "efficiency": Dimension.SHARE,
    }

    def examples(self, doc: Document, owner: str) -> tuple[Example, ...]:
        out: list[Example] = []
        for i, ex in enumerate(doc.data.get("examples") or []):
            path: PathKey = ("examples", i)
            self.claim(doc, (*path, "id"), ex["id"], "example")
            expects: list[Expectation] = []
            for j, e in enumerate(ex["expect"]):
                epath = (*path, "expect", j)
                exp = self.expectation(doc, epath, e)
                if exp is not None:
                    expects.append(exp)
            out.append(
                Example(
                    ex["id"],
                    ex["name"],
                    ex.get("description"),
                    ex["device"],
                    ex["precision"],
                    tuple(ex.get("cases") or ()),
                    tuple(expects),
                    owner,
                    doc.locate(path),
                )
            )
        return tuple(out)

    def expectation(self, doc: Document, path: PathKey, e: dict[str, Any]) -> Expectation | None:
        output = e["output"]
        raw = e["value"]
        tolerance: Fraction | None = None
        if "tolerance" in e:
            parsed = self.quantity(doc, (*path, "tolerance"), e["tolerance"], Dimension.SHARE)
            if parsed is None:
                return None
            tolerance = parsed[0]
        value: Fraction | int | str
        if output == "memory_bound_count":
            if not isinstance(raw, int):
                self.out.add(
                    doc.error((*path, "value"), "expected a whole number", code="examples")
                )
                return None
            value = raw
            tolerance = tolerance or Fraction(0)
        elif output == "limited_by":
            if raw not in ("compute", *LEVELS):
                self.out.add(
                    doc.error(
                        (*path, "value"), "expected one of: compute, dram, l2, l1", code="examples"
                    )
                )
                return None
            value = raw
            tolerance = Fraction(0)
        else:
            if not isinstance(raw, str):
                self.out.add(
                    doc.error(
                        (*path, "value"), "expected a quantity with its unit", code="examples"
                    )
                )
                return None
            parsed = self.quantity(doc, (*path, "value"), raw, self._OUTPUT_DIMENSIONS[output])
            if parsed is None:
                return None
            value = parsed[0]
            if tolerance is None:
                tolerance = printed_tolerance(raw, value)
        needs_case = output in (
            "flops",
            "bytes",
            "intensity",
            "attainable",
            "limited_by",
            "share_of_peak",
            "time",
            "efficiency",
        )
        if needs_case and not e.get("case"):
            self.out.add(
                doc.error(path, f"an expected {output} names the case it is for", code="examples")
            )
            return None
        return Expectation(
            output, e.get("case"), e.get("level"), value, str(raw), tolerance, doc.locate(path)
        )

    # ----------------------------------------------------------------- methods
    def method(self, doc: Document) -> Method | None:
        data = doc.data
        errors_before = len(self.out.errors)
        self.claim(doc, ("id",), data["id"], "method")
        sources = self.sources(doc)
        self.source_ref(doc, ("origin", "source"), data["origin"]["source"], sources)
        formulas: list[MethodFormula] = []
        for i, f in enumerate(data["formulas"]):
            where: PathKey = ("formulas", i, "expression")
            formula = self.formula(doc, where, f["expression"], data["symbols"])
            if formula is not None:
                formulas.append(MethodFormula(f["name"], formula, f["meaning"]))
        examples = self.examples(doc, data["id"])
        self.example_owners.append((doc, examples))
        versions = self.versions(doc)
        if len(self.out.errors) > errors_before:
            self.broken.ids.add(data["id"])
            self.broken.ids.update(ex.id for ex in examples)
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

    # ----------------------------------------------------------------- across files
    def cross_check(self, catalog: Catalog) -> None:
        for kernel in catalog.kernels.values():
            doc = kernel.document
            for index, case in enumerate(kernel.cases):
                for j, m in enumerate(case.measured):
                    path: PathKey = ("cases", index, "measured", j)
                    device = catalog.devices.get(m.device)
                    if device is None:
                        if self.broken.covers("device", m.device):
                            continue
                        self.out.add(
                            doc.error(
                                (*path, "device"),
                                f"unknown device '{m.device}'"
                                f" (devices: {_listing(catalog.devices)})",
                                code="refs",
                            )
                        )
                    elif m.precision not in device.peaks and m.precision in catalog.precisions:
                        self.out.add(
                            doc.error(
                                (*path, "precision"),
                                f"device '{m.device}' has no peak for precision '{m.precision}'",
                                code="refs",
                            )
                        )
        # Examples of every typed document, built or not: a file with one error still
        # gets its examples' references checked (their own owner is in `broken`).
        for doc, examples in self.example_owners:
            self.check_examples(catalog, doc, examples)

    def check_examples(
        self, catalog: Catalog, doc: Document, examples: tuple[Example, ...]
    ) -> None:
        cases = catalog.cases
        for i, ex in enumerate(examples):
            path: PathKey = ("examples", i)
            device = catalog.devices.get(ex.device)
            if device is None:
                if not self.broken.covers("device", ex.device):
                    self.out.add(
                        doc.error(
                            (*path, "device"),
                            f"unknown device '{ex.device}' (devices: {_listing(catalog.devices)})",
                            code="refs",
                        )
                    )
            elif ex.precision not in device.peaks and not self.broken.covers(
                "precision", ex.precision
            ):
                self.out.add(
                    doc.error(
                        (*path, "precision"),
                        f"device '{ex.device}' has no peak for precision '{ex.precision}'",
                        code="refs",
                    )
                )
            for j, cid in enumerate(ex.cases):
                if cid not in cases and not self.broken.covers("case", cid):
                    self.out.add(
                        doc.error((*path, "cases", j), f"unknown case '{cid}'", code="refs")
                    )
            for j, e in enumerate(ex.expect):
                if (
                    e.case is not None
                    and e.case not in cases
                    and not self.broken.covers("case", e.case)
                ):
                    self.out.add(
                        doc.error(
                            (*path, "expect", j, "case"), f"unknown case '{e.case}'", code="refs"
                        )
                    )


def _reserved(name: str) -> str | None:
    """Why a kernel may not declare the symbol `name`, or None when it may."""
    if name == RESERVED_SYMBOL:
        return "it is the bytes per value of the precision evaluated"
    if name in FUNCTIONS:
        return "it is a function formulas may call"
    if keyword.iskeyword(name):
        return "it is a Python keyword, which a formula cannot use as a name"
    return None


def _listing(items: dict[str, Any]) -> str:
    names = sorted(items)
    return ", ".join(names[:8]) + (", ..." if len(names) > 8 else "") if names else "none"


def _fmt(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else str(value)


_NUMBER = re.compile(r"^\s*([0-9][0-9,]*)(?:\.([0-9]+))?(?:[eE]([-+]?[0-9]+))?")


def printed_tolerance(text: str, value: Fraction) -> Fraction:
    """Relative tolerance of a figure compared at the precision it is printed with.

    `295.373 FLOP/B` is good to half a unit in its last place: 0.0005 / 295.373.
    """
    match = _NUMBER.match(text)
    if match is None or value == 0:
        return Fraction(0)
    whole, decimals, exponent = match.groups()
    number = Fraction(whole.replace(",", "") + ("." + decimals if decimals else ""))
    if exponent:
        number *= Fraction(10) ** int(exponent)
    if number == 0:
        return Fraction(0)
    places = len(decimals) if decimals else 0
    half_ulp = Fraction(1, 2 * 10**places)
    if exponent:
        half_ulp *= Fraction(10) ** int(exponent)
    return half_ulp / number


def catalog_or_raise(folder: Path) -> Catalog:
    """The catalog, or `SpecError` with every error found."""
    catalog, diagnostics = build_catalog(folder)
    if catalog is None:
        raise SpecError([d for d in diagnostics if d.severity == "error"])
    return catalog
