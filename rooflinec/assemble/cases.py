"""The cases of a kernel typed: shapes (or grids of shapes) binding every symbol, measured
rates and times."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from rooflinec.assemble.builder import Builder
from rooflinec.catalog import Case, Measured, Precision, Source
from rooflinec.grid_values import MAX_GRID_SHAPES, Grid, GridAxis, axis_text
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
    widths: dict[str, str] | None = None,
) -> Case | None:
    """The case at `index` of a kernel file, or None when it has errors."""
    path: PathKey = ("cases", index)
    errors_before = len(builder.out.errors)
    builder.claim(doc, (*path, "id"), entry["id"], "case")
    builder.precision_ref(doc, (*path, "precision"), entry["precision"], precisions)
    grid = None
    if "grid" in entry:
        grid = build_grid(builder, doc, path, entry, symbols)
        if grid is not None and entry.get("measured"):
            builder.error(
                doc,
                (*path, "measured"),
                "a grid case cannot carry measured runs: a run has one shape;"
                " record it on a case with `shape`",
                key=True,
                code="shape",
            )
    shape: dict[str, int] = grid.first if grid is not None else entry.get("shape", {})
    key = "grid" if "grid" in entry else "shape"
    for name in symbols:
        if name not in entry[key]:
            what = "a list or a range" if key == "grid" else "a positive whole number"
            builder.error(
                doc, (*path, key), f"symbol '{name}' is not bound: give it {what}", code="shape"
            )
    for name in entry[key]:
        builder.unknown_symbol(doc, (*path, key, name), name, symbols, "this kernel")
    bound = bind_widths(builder, doc, (*path, "widths"), entry.get("widths"), widths, precisions)
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
        flops = _count(builder, doc, (*mpath, "flops"), m.get("flops"), Dimension.OPS)
        counted = {
            level: _count(builder, doc, (*mpath, "bytes", level), value, Dimension.BYTES)
            for level, value in (m.get("bytes") or {}).items()
        }
        if parsed is None or None in counted.values() or ("flops" in m and flops is None):
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
                flops,
                {level: value for level, value in counted.items() if value is not None},
                m.get("launches"),
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
        entry.get("launches", 1),
        grid,
        bound,
    )


def bind_widths(
    builder: Builder,
    doc: Document,
    path: PathKey,
    binding: dict[str, str] | None,
    widths: dict[str, str] | None,
    precisions: dict[str, Precision],
    *,
    kernel: str = "this kernel",
) -> dict[str, str]:
    """A case's or model step's `widths: {wb: int4}`: each a declared width symbol bound
    to a known precision. Every problem is reported at its own key or value."""
    declared = widths or {}
    for name, pid in (binding or {}).items():
        if name not in declared:
            listing = ", ".join(declared) or "none; it has only w"
            builder.error(
                doc,
                (*path, name),
                f"'{name}' is not a width of {kernel} (widths: {listing})",
                key=True,
                code="widths",
            )
        builder.precision_ref(doc, (*path, name), pid, precisions, compute=False)
    return dict(binding or {})


def build_grid(
    builder: Builder, doc: Document, case: PathKey, entry: dict[str, Any], symbols: dict[str, str]
) -> Grid | None:
    """The grid of the case `entry` (at `case`), its axes in the kernel's symbol order;
    None when it has errors.

    The schema has checked the types (whole numbers from 1 to 10^15, `times` >= 2,
    `step` >= 1, exactly one of them); what is left is order and size, each reported at
    its own value: a range whose `from` is above its `to`, a value listed twice, a
    symbol missing or unknown, and more than `MAX_GRID_SHAPES` shapes (counted from the
    axes, never expanded).
    """
    path: PathKey = (*case, "grid")
    raw: dict[str, Any] = entry["grid"]
    errors_before = len(builder.out.errors)
    axes: list[GridAxis] = []
    for name in symbols:
        if name not in raw:
            continue  # reported with the other unbound symbols
        value = raw[name]
        where = (*path, name)
        if isinstance(value, list):
            seen: dict[int, int] = {}
            for i, item in enumerate(value):
                if item in seen:
                    builder.error(
                        doc,
                        (*where, i),
                        f"{item:,} is listed twice (also item {seen[item] + 1});"
                        " give each value once",
                        code="shape",
                    )
                seen.setdefault(item, i)
            axes.append(GridAxis(name, axis_text(value), values=tuple(sorted(set(value)))))
            continue
        start, stop = value["from"], value["to"]
        if start > stop:
            builder.error(
                doc,
                (*where, "to"),
                f"the range is empty: `to` ({stop:,}) is below `from` ({start:,})",
                code="shape",
            )
            continue
        axes.append(
            GridAxis(
                name,
                axis_text(value),
                start=start,
                stop=stop,
                times=value.get("times"),
                step=value.get("step"),
            )
        )
    if len(builder.out.errors) > errors_before or len(axes) != len(symbols):
        return None
    grid = Grid(tuple(axes))
    if grid.size > MAX_GRID_SHAPES:
        counts = " x ".join(f"{a.count:,}" for a in axes)
        builder.error(
            doc,
            path,
            f"case '{entry['id']}': the grid has {grid.size:,} shapes ({counts}); a grid may"
            f" have at most {MAX_GRID_SHAPES:,}: split it into several cases",
            key=True,
            code="shape",
        )
        return None
    return grid


def _count(
    builder: Builder, doc: Document, path: PathKey, raw: Any, dimension: Dimension
) -> Fraction | None:
    """A profiler's count: a whole number as written, or a quantity with its unit."""
    if raw is None:
        return None
    if isinstance(raw, int):
        return Fraction(raw)
    parsed = builder.quantity(doc, path, raw, dimension)
    return None if parsed is None else parsed[0]
