"""The state of one build, and the typing of what every kind of spec file has.

Ids claimed across the catalog, quantities, sources and references to them, versions,
formulas: each problem goes to the collector, never raised.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fractions import Fraction
from functools import lru_cache
from typing import Any

from rooflinec.assemble.collect import Broken, Collector
from rooflinec.catalog import Example, Precision, Source, Version
from rooflinec.errors import Location
from rooflinec.formulas import WIDTH, Formula, FormulaError, parse_formula
from rooflinec.loader import Document, PathKey
from rooflinec.quantities import Dimension, QuantityError, parse_quantity

# The names of the site's generated pages in the folders whose other pages are named by
# ids: the listings `devices/index.md` and their next pages `index-2.md`, ... (devices,
# kernels, models), and the tokens-per-second comparison `models/tokens.md`,
# `tokens-2.md`, ... A spec with such an id would replace the generated page. Every id
# shares the catalog's id space, so each name is refused for every kind of id (the
# site's URLs stay as they are). A page added to an id folder joins this list
# (tests/test_site_page_names.py fails until it does).
GENERATED_PAGE_NAMES = ("index", "tokens")
RESERVED_ID = re.compile(rf"(?:{'|'.join(GENERATED_PAGE_NAMES)})(?:-[0-9]+)?\Z")
# A method's models section has a page of its own, `method/<id>-models.md`: a method
# whose id is another method's id and this suffix would replace it.
METHOD_MODELS_SUFFIX = "-models"
METHOD_EXAMPLES_SUFFIX = "-examples"


#: A kernel at a shape under a width binding: (kernel id, shape items, width items).
KernelCheck = tuple[str, tuple[tuple[str, int], ...], tuple[tuple[str, str], ...]]


class Builder:
    """What the typing of every kind of file shares; every problem goes to the collector.

    Each kind is typed by a function of the builder in its own module (`build_device`,
    `build_kernel`, ...); the builder holds the claimed ids, what is broken, the examples
    waiting for the cross-file check, and the typing of fields all files have.
    """

    def __init__(self, out: Collector, broken: Broken | None = None) -> None:
        self.out = out
        self.ids: dict[str, Location] = {}
        self.broken = broken if broken is not None else Broken()
        self.example_owners: list[tuple[Document, tuple[Example, ...]]] = []
        # Kernels at a shape and width binding whose counts passed in some model's step
        # (`rooflinec.assemble.models`): another model with the same step checks none again.
        self.kernel_checks: set[KernelCheck] = set()

    def error(
        self,
        doc: Document,
        path: PathKey,
        message: str,
        *,
        key: bool = False,
        offset: int = 0,
        code: str = "spec",
    ) -> None:
        """Report an error at `path` of `doc` (`Document.error`) to the collector."""
        self.out.add(doc.error(path, message, key=key, offset=offset, code=code))

    def unknown_symbol(
        self, doc: Document, path: PathKey, name: str, symbols: dict[str, str], kernel: str
    ) -> bool:
        """Whether `name`, a key of a case's or a model step's shape, is no symbol of the
        kernel (`kernel`: how the message names it); if so, reported at the key."""
        if name in symbols:
            return False
        message = f"'{name}' is not a symbol of {kernel} (symbols: {', '.join(symbols)})"
        self.error(doc, path, message, key=True, code="shape")
        return True

    # ids are unique across the whole catalog: devices, kernels, cases, methods, examples
    def claim(self, doc: Document, path: PathKey, ident: str, what: str) -> None:
        here = doc.locate(path)
        first = self.ids.get(ident)
        if RESERVED_ID.match(ident):
            self.error(
                doc,
                path,
                f"{what} id '{ident}' is reserved: the site names its generated pages"
                " index, index-2, ..., tokens, tokens-2, ...; choose another id",
                code="ids",
            )
        elif first is not None:
            self.error(doc, path, f"{what} id '{ident}' is already used at {first}", code="ids")
        else:
            self.ids[ident] = here

    def quantity(
        self,
        doc: Document,
        path: PathKey,
        text: str,
        dimension: Dimension,
        *,
        bits: bool = False,
        measured: bool = False,
    ) -> tuple[Fraction, Any] | None:
        """The exact value and the parsed quantity; `bits` admits b/s (a link's bandwidth),
        `measured` a share above 100 % (a measured collective's, which a lint flags)."""
        try:
            q = parse_quantity(text, dimension, positive=True, bits=bits, measured=measured)
        except QuantityError as exc:
            message = exc.message + (f" ({exc.hint})" if exc.hint else "")
            self.error(doc, path, message, offset=exc.column, code="units")
            return None
        return q.value, q

    def versions(self, doc: Document) -> tuple[Version, ...]:
        items = doc.data.get("versions") or []
        out: list[Version] = []
        for i, item in enumerate(items):
            version = Version(item["version"], item["date"], item["change"])
            if out and version.version <= out[-1].version:
                self.error(
                    doc,
                    ("versions", i, "version"),
                    f"version {version.version} does not follow version {out[-1].version}:"
                    " versions increase down the list",
                    code="versions",
                )
            if out and version.date < out[-1].date:
                self.error(
                    doc,
                    ("versions", i, "date"),
                    f"date {version.date} is before the previous version's {out[-1].date}",
                    code="versions",
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
                s.get("url", ""),  # a measurement may have no page to link
                s["read"],
                s.get("published"),
                s.get("kind"),
                s.get("note"),
                doc.locate(("sources", sid), key=True),
                s.get("tool"),
                s.get("command"),
            )
        return out

    def source_ref(
        self, doc: Document, path: PathKey, sid: str | None, known: dict[str, Source]
    ) -> None:
        if sid is not None and sid not in known:
            hint = ", ".join(sorted(known)) or "none declared"
            self.error(
                doc, path, f"unknown source '{sid}' (this file's sources: {hint})", code="refs"
            )

    def precision_ref(
        self,
        doc: Document,
        path: PathKey,
        pid: str,
        precisions: dict[str, Precision],
        *,
        key: bool = False,
        compute: bool = True,
    ) -> None:
        """A precision named by a peak, case or measurement must be in `precisions.yaml`;
        one computed in (`compute`: anything but a width binding) must not be a width
        only."""
        if precisions and pid not in precisions:
            self.error(
                doc,
                path,
                f"unknown precision '{pid}' (precisions.yaml has: {', '.join(precisions)})",
                key=key,
                code="refs",
            )
            return
        if compute and pid in precisions and precisions[pid].width_only:
            self.error(
                doc,
                path,
                f"precision '{pid}' is a width only (width_only: true in precisions.yaml):"
                " bind it to a width (`widths:`), not as a precision computed in",
                key=key,
                code="refs",
            )

    def formula(
        self,
        doc: Document,
        path: PathKey,
        text: str,
        symbols: Iterable[str],
        *,
        reserved: Iterable[str] = (WIDTH,),
    ) -> Formula | None:
        try:
            return _parsed(text, tuple(symbols), tuple(reserved))
        except FormulaError as exc:
            self.error(doc, path, exc.message, offset=exc.column, code="formula")
            return None

    def refuse(self, ident: str, examples: tuple[Example, ...], also: Iterable[str] = ()) -> None:
        """Record a file that has errors and is not built.

        Its ids (`ident`, `also` and its examples') go to `broken`, so references to them
        are not reported as dangling.
        """
        self.broken.ids.add(ident)
        self.broken.ids.update(also)
        self.broken.ids.update(ex.id for ex in examples)


@lru_cache(maxsize=8192)
def _parsed(text: str, symbols: tuple[str, ...], reserved: tuple[str, ...]) -> Formula:
    """`parse_formula`, remembered: a `Formula` is immutable (its evaluators are built on
    first use and kept), so the formulas of files that did not change are not parsed
    again when `serve` builds the catalog anew. An error is raised again on every call
    (`lru_cache` keeps no exception)."""
    return parse_formula(text, symbols, reserved=reserved)
