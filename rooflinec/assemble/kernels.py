"""Kernel files typed: symbols, formulas, cases; every formula evaluated for every case.

The evaluation catches a zero or absurd count before any result is computed from it.
"""

from __future__ import annotations

import keyword
from fractions import Fraction

from rooflinec.assemble.builder import Builder
from rooflinec.assemble.cases import build_case
from rooflinec.assemble.typed import TypedFile
from rooflinec.catalog import INTERCONNECT_ROLES, RED, Case, Kernel, Precision
from rooflinec.engine import WIDTH
from rooflinec.engine.evaluate import MAX_COUNT, count_problem, width_values
from rooflinec.errors import short_number
from rooflinec.formulas import (
    FUNCTIONS,
    SHARED_MEMORY,
    EvaluationError,
    Formula,
    FormulaError,
)
from rooflinec.loader import Document, PathKey

RESERVED_SYMBOL = WIDTH


def build_kernel(
    builder: Builder,
    doc: Document,
    precisions: dict[str, Precision],
    shared: tuple[int, ...] = (),
) -> Kernel | None:
    """A kernel with its cases, or None when its file has errors (each one reported).

    `shared` holds the catalog's devices' shared memory per core: a byte formula that
    reads `smem` is evaluated at each of them for every case."""
    data = doc.data
    typed = TypedFile(builder, doc, "kernel")
    symbols: dict[str, str] = data["symbols"]
    widths: dict[str, str] = data.get("widths") or {}
    for section, names in (("symbols", symbols), ("widths", widths)):
        for name in names:
            reason = reserved_reason(name)
            if reason is None and section == "widths" and name in symbols:
                reason = "it is also a shape symbol of this kernel"
            if reason is not None:
                builder.error(
                    doc,
                    (section, name),
                    f"'{name}' is reserved: {reason}; choose another symbol name",
                    key=True,
                    code="formula",
                )
    collective: str | None = data.get("collective")
    _check_collective(builder, doc, collective, symbols)
    reserved = (RESERVED_SYMBOL, *(name for name in widths if name not in symbols))
    device_symbols = (*symbols, SHARED_MEMORY)
    flops = builder.formula(doc, ("flops",), data["flops"], device_symbols, reserved=reserved)
    if flops is not None and SHARED_MEMORY in flops.symbols:
        builder.error(
            doc,
            ("flops",),
            f"the operation count cannot depend on {SHARED_MEMORY} (a core's shared"
            " memory): tiling moves bytes, it adds no operations",
            code="formula",
        )
        flops = None
    elif flops is not None and flops.reserved:
        name = sorted(flops.reserved)[0]
        builder.error(
            doc,
            ("flops",),
            f"the operation count cannot depend on {name} (bytes per value)",
            code="formula",
        )
    byte_formulas: dict[str, Formula] = {}
    for role, text in data["bytes"].items():
        # `red` belongs to a collective's fabric bytes: the engine binds it per level.
        own = (
            (*reserved, RED) if collective is not None and role in INTERCONNECT_ROLES else reserved
        )
        # `smem` is the device's: a tiled kernel's traffic on chip-level memory.
        allowed = tuple(symbols) if collective is not None else device_symbols
        formula = builder.formula(doc, ("bytes", role), text, allowed, reserved=own)
        if formula is not None:
            byte_formulas[role] = formula
    sources = builder.sources(doc)
    cases = tuple(
        c
        for c in (
            build_case(builder, doc, i, entry, data["id"], symbols, precisions, sources, widths)
            for i, entry in enumerate(data["cases"])
        )
        if c is not None
    )
    if flops is not None and typed.clean:
        _evaluate_all(builder, doc, flops, byte_formulas, cases, precisions, widths, shared)
    finished = typed.finish(also=(c["id"] for c in data["cases"]))
    if finished is None or flops is None:  # a formula that did not parse is an error too
        return None
    examples, versions = finished
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
        dict(widths),
        collective,
    )


def _check_collective(
    builder: Builder, doc: Document, collective: str | None, symbols: dict[str, str]
) -> None:
    """A collective kernel moves its bytes over the fabric (`scale_up`), binds its group
    `n` and message `m`, and has no cases; every other kernel has cases and no fabric."""
    data = doc.data
    roles = set(data["bytes"])
    if collective is None:
        for role in sorted(roles & set(INTERCONNECT_ROLES)):
            builder.error(
                doc,
                ("bytes", role),
                f"bytes over '{role}' are a collective's: declare `collective:` or move them"
                " to a memory level",
                key=True,
                code="formula",
            )
        if not data["cases"]:
            builder.error(doc, ("cases",), "a kernel needs one case or more", code="shape")
        return
    for role in sorted(roles - {"scale_up"}):
        builder.error(
            doc,
            ("bytes", role),
            f"a collective kernel ({collective}) moves its bytes over 'scale_up' only,"
            f" not '{role}'",
            key=True,
            code="formula",
        )
    if "scale_up" not in roles:
        builder.error(
            doc, ("bytes",), "a collective kernel gives its bytes under 'scale_up'", code="formula"
        )
    for name, meaning in (("n", "the group size"), ("m", "the values of the whole message")):
        if name not in symbols:
            builder.error(
                doc,
                ("symbols",),
                f"a collective kernel declares '{name}' ({meaning})",
                code="shape",
            )
    if data["cases"]:
        builder.error(
            doc,
            ("cases",),
            "a collective kernel has no cases (`cases: []`): its rows come from model steps",
            code="shape",
        )


def _evaluate_all(
    builder: Builder,
    doc: Document,
    flops: Formula,
    byte_formulas: dict[str, Formula],
    cases: tuple[Case, ...],
    precisions: dict[str, Precision],
    width_symbols: dict[str, str],
    shared: tuple[int, ...] = (),
) -> None:
    """Evaluate every formula for every case and precision (and, where it reads `smem`,
    every device's shared memory per core): catch zero traffic early."""
    widths = sorted({p.bytes for p in precisions.values()}) or [Fraction(1)]
    formulas: list[tuple[PathKey, Formula, str]] = [(("flops",), flops, "operation count")]
    formulas += [(("bytes", role), f, f"{role} byte count") for role, f in byte_formulas.items()]
    for case in cases:
        for path, formula, what in formulas:
            if case.grid is not None and SHARED_MEMORY in formula.symbols:
                builder.error(
                    doc,
                    ("cases", _case_index(doc, case.id), "grid"),
                    f"case '{case.id}': the {what} reads {SHARED_MEMORY} (each device's"
                    " shared memory per core), which a grid of shapes does not take;"
                    " write its shapes as plain cases",
                    code="shape",
                )
                continue
            if case.grid is not None:
                _prove_grid(builder, doc, case, path, formula, what, widths, precisions)
                continue
            for w, shape in _samples(
                case, widths if formula.reserved else widths[:1], formula, shared
            ):
                values = {**shape, **width_values(width_symbols, w, case.widths, precisions)}
                try:
                    result = formula.evaluate(values)
                except (EvaluationError, FormulaError) as exc:
                    builder.error(
                        doc,
                        path,
                        f"{_where(case, shape)}: {exc.message}",
                        offset=exc.column,
                        code="formula",
                    )
                    break
                problem = count_problem(result)
                if problem is not None:
                    builder.error(
                        doc,
                        path,
                        f"{_where(case, shape)}: the {what} {problem}"
                        f" ({short_number(result)} with w={w})",
                        code="formula",
                    )
                    break


def _samples(
    case: Case, widths: list[Fraction], formula: Formula, shared: tuple[int, ...]
) -> list[tuple[Fraction, dict[str, int]]]:
    """The (width, shape) pairs a plain case is checked at: its shape at each width, and
    for a formula that reads `smem`, at each device's shared memory per core."""
    if SHARED_MEMORY not in formula.symbols:
        return [(w, case.shape) for w in widths]
    return [(w, {**case.shape, SHARED_MEMORY: m}) for m in shared for w in widths]


def _prove_grid(
    builder: Builder,
    doc: Document,
    case: Case,
    path: PathKey,
    formula: Formula,
    what: str,
    widths: list[Fraction],
    precisions: dict[str, Precision],
) -> None:
    """A grid's count positive (and plausible) at every shape, or one error naming the
    first shape where it is not: what `compile` and `build` refuse, `check` refuses,
    without evaluating every shape of a large grid (`rooflinec.engine.grid_proof`)."""
    from rooflinec.engine.grid_proof import EXHAUSTIVE_SHAPES, Unproven, first_bad_shape

    assert case.grid is not None
    grid_path: PathKey = ("cases", _case_index(doc, case.id), "grid")
    width_symbols: dict[str, str] = doc.data.get("widths") or {}
    for w in widths if formula.reserved else widths[:1]:
        constants = {
            name: v
            for name, v in width_values(width_symbols, w, case.widths, precisions).items()
            if name in formula.symbols
        }
        found = first_bad_shape(formula, constants, case.grid, MAX_COUNT)
        if found is None:
            continue
        if isinstance(found, Unproven):
            builder.error(
                doc,
                grid_path,
                f"case '{case.id}': cannot prove the {what} positive over the grid's"
                f" {case.grid.size:,} shapes (w={w}): interval bounds and root isolation"
                f" do not settle it, and a grid of more than {EXHAUSTIVE_SHAPES:,} shapes"
                " is not evaluated shape by shape; shrink the grid, or write the formula"
                " so that each symbol appears once",
                code="formula",
            )
            return
        where = f"{_where(case, found.shape)} (shape {found.index + 1:,} of its grid)"
        if found.error is not None:
            builder.error(
                doc,
                path,
                f"{where}: {found.error.message}",
                offset=found.error.column,
                code="formula",
            )
            return
        assert found.value is not None
        problem = count_problem(found.value) or "is not positive"
        builder.error(
            doc,
            grid_path,
            f"{where}: the {what} {problem} ({short_number(found.value)} with w={w})",
            code="formula",
        )
        return


def _case_index(doc: Document, case_id: str) -> int:
    entries = doc.data.get("cases") or []
    return next(i for i, e in enumerate(entries) if isinstance(e, dict) and e.get("id") == case_id)


def _where(case: Case, shape: dict[str, int]) -> str:
    """`case 'x'`, and for a grid the shape: `case 'x' at M=1, N=4096`."""
    if case.grid is None:
        if SHARED_MEMORY in shape:
            return f"case '{case.id}' with {SHARED_MEMORY}={shape[SHARED_MEMORY]} B"
        return f"case '{case.id}'"
    return f"case '{case.id}' at " + ", ".join(f"{k}={v}" for k, v in shape.items())


def reserved_reason(name: str) -> str | None:
    """Why a kernel may not declare the symbol `name`, or None when it may."""
    if name == RESERVED_SYMBOL:
        return "it is the bytes per value of the precision evaluated"
    if name == RED:
        return "it is a collective's traffic factor, bound per interconnect level"
    if name == SHARED_MEMORY:
        return "it is the shared memory of one core of the device evaluated"
    if name in FUNCTIONS:
        return "it is a function formulas may call"
    if keyword.iskeyword(name):
        return "it is a Python keyword, which a formula cannot use as a name"
    return None
