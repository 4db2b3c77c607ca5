"""Compare the compiled catalog at a git ref with the working tree.

The catalog at a ref is compiled by `rooflinec.pipeline.compiled_at` (git archive,
extracted safely into a temporary folder); `diff_compiled(old, new)` lists the
specs added and removed and every figure that moved, old → new with the relative
change; `to_markdown` renders it for a pull-request comment or a job summary;
`version_bumps` finds specs whose content changed without a new version entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from rooflinec.catalog import Catalog
from rooflinec.engine.compiler import Compiled
from rooflinec.errors import Diagnostic
from rooflinec.formatting import format_percent, format_si


@dataclass(frozen=True)
class Change:
    """One figure that moved: what it is, where it belongs, old and new values."""

    group: str  # "device nvidia-h100-sxm" or "kernel gemm"
    subject: str  # "bf16 peak", "gemm-large at bf16: attainable"
    unit: str
    old: Fraction | str | None
    new: Fraction | str | None

    @property
    def relative(self) -> Fraction | None:
        if isinstance(self.old, Fraction) and isinstance(self.new, Fraction) and self.old != 0:
            return (self.new - self.old) / abs(self.old)
        return None

    @property
    def magnitude(self) -> Fraction:
        rel = self.relative
        return abs(rel) if rel is not None else Fraction(10**9)  # bounds and appearances first


@dataclass(frozen=True)
class CatalogDiff:
    base: str
    added: dict[str, list[str]] = field(default_factory=dict)  # kind -> ids
    removed: dict[str, list[str]] = field(default_factory=dict)
    changes: list[Change] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (any(self.added.values()) or any(self.removed.values()) or self.changes)

    def summary(self) -> str:
        groups = {c.group for c in self.changes}
        added = sum(len(v) for v in self.added.values())
        removed = sum(len(v) for v in self.removed.values())
        if self.empty:
            return f"No compiled figure differs from {self.base}."
        return (
            f"{len(self.changes)} figures changed in {len(groups)} devices and kernels; "
            f"{added} specs added, {removed} removed (against {self.base})."
        )


# --------------------------------------------------------------------------- comparing


def _ids(catalog: Catalog | None) -> dict[str, set[str]]:
    if catalog is None:
        return {"device": set(), "kernel": set(), "case": set(), "method": set()}
    return {
        "device": set(catalog.devices),
        "kernel": set(catalog.kernels),
        "case": set(catalog.cases),
        "method": set(catalog.methods),
    }


def diff_compiled(old: Compiled | None, new: Compiled, base: str) -> CatalogDiff:
    """Everything that differs between two compiled catalogs."""
    old_ids, new_ids = _ids(old.catalog if old else None), _ids(new.catalog)
    result = CatalogDiff(
        base,
        {k: sorted(new_ids[k] - old_ids[k]) for k in new_ids},
        {k: sorted(old_ids[k] - new_ids[k]) for k in new_ids},
    )
    if old is None:
        return result
    changes = result.changes
    for device_id, fig in new.devices.items():
        before = old.devices.get(device_id)
        if before is None:
            continue
        group = f"device {device_id}"
        unit_of = {p.id: p.unit for p in new.catalog.precisions.values()}
        for p in sorted(set(fig.peaks) | set(before.peaks)):
            _add(
                changes,
                group,
                f"{p} peak",
                f"{unit_of.get(p, 'FLOP')}/s",
                before.peaks.get(p),
                fig.peaks.get(p),
            )
        for lv in sorted(set(fig.bandwidths) | set(before.bandwidths)):
            _add(
                changes,
                group,
                f"{lv} bandwidth",
                "B/s",
                before.bandwidths.get(lv),
                fig.bandwidths.get(lv),
            )
        old_r, new_r = before.ridges, fig.ridges
        for p in sorted(set(new_r) & set(old_r)):
            for lv in sorted(set(new_r[p]) | set(old_r[p])):
                _add(
                    changes,
                    group,
                    f"{p} ridge ({lv})",
                    f"{unit_of.get(p, 'FLOP')}/B",
                    old_r[p].get(lv),
                    new_r[p].get(lv),
                )
    old_rows = {(r.case, r.device, r.precision): r for r in old.results}
    for r in new.results:
        prev = old_rows.get((r.case, r.device, r.precision))
        if prev is None:
            continue
        unit = new.catalog.precisions[r.precision].unit
        group = f"kernel {r.kernel} on {r.device}"
        where = f"{r.case} at {r.precision}"
        old_i, new_i = prev.intensity, r.intensity
        for lv in sorted(set(old_i) | set(new_i)):
            _add(
                changes,
                group,
                f"{where}: intensity ({lv})",
                f"{unit}/B",
                old_i.get(lv),
                new_i.get(lv),
            )
        _add(changes, group, f"{where}: attainable", f"{unit}/s", prev.attainable, r.attainable)
        _add(changes, group, f"{where}: limited by", "", prev.limited_by, r.limited_by)
        _add(changes, group, f"{where}: time", "s", prev.time, r.time)
        if prev.efficiency is not None or r.efficiency is not None:
            _add(changes, group, f"{where}: efficiency", "%", prev.efficiency, r.efficiency)
    changes.sort(key=lambda c: (-c.magnitude, c.group, c.subject))
    return result


def _add(
    changes: list[Change],
    group: str,
    subject: str,
    unit: str,
    old: Fraction | str | None,
    new: Fraction | str | None,
) -> None:
    if old != new:
        changes.append(Change(group, subject, unit, old, new))


# --------------------------------------------------------------------------- rendering


def format_value(value: Fraction | str | None, unit: str) -> str:
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    if unit == "%":
        return format_percent(value)
    return format_si(value, unit)


def format_relative(change: Change) -> str:
    rel = change.relative
    if rel is None:
        return ""
    sign = "+" if rel > 0 else "−" if rel < 0 else ""
    return f"{sign}{format_percent(abs(rel))}"


def _cell(text: str) -> str:
    # Ids are plain, but keep table cells safe anyway.
    return text.replace("|", "\\|")


def to_markdown(d: CatalogDiff, *, limit: int = 300) -> str:
    lines = ["## rooflinec: compiled figures", "", d.summary(), ""]
    for title, table in (("Added", d.added), ("Removed", d.removed)):
        items = [f"{kind} `{i}`" for kind, ids in table.items() for i in ids]
        if items:
            lines += [f"**{title}:** " + ", ".join(items), ""]
    if d.changes:
        by_group: dict[str, list[Change]] = {}
        for change in d.changes:
            by_group.setdefault(change.group, []).append(change)
        shown = 0
        for group, changes in by_group.items():
            lines += [
                f"### {_cell(group)}",
                "",
                "| figure | old | new | change |",
                "| --- | --- | --- | --- |",
            ]
            for c in changes:
                if shown >= limit:
                    break
                lines.append(
                    f"| {_cell(c.subject)} | {format_value(c.old, c.unit)} |"
                    f" {format_value(c.new, c.unit)} | {format_relative(c)} |"
                )
                shown += 1
            lines.append("")
        if len(d.changes) > limit:
            lines.append(f"… and {len(d.changes) - limit} more changes (use --format json).")
    return "\n".join(lines).rstrip() + "\n"


def to_data(d: CatalogDiff) -> dict[str, Any]:
    def num(v: Fraction | str | None) -> float | str | None:
        return float(v) if isinstance(v, Fraction) else v

    return {
        "base": d.base,
        "summary": d.summary(),
        "added": d.added,
        "removed": d.removed,
        "changes": [
            {
                "group": c.group,
                "figure": c.subject,
                "unit": c.unit,
                "old": num(c.old),
                "new": num(c.new),
                "relative": None if c.relative is None else float(c.relative),
            }
            for c in d.changes
        ],
    }


# --------------------------------------------------------------------------- versions


def _content(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "versions"}


def version_bumps(old: Catalog | None, new: Catalog) -> list[Diagnostic]:
    """Specs whose content changed since the base without a new `versions` entry."""
    if old is None:
        return []
    out: list[Diagnostic] = []
    pairs: list[tuple[Any, Any]] = []
    for kind in ("devices", "kernels", "methods"):
        old_items, new_items = getattr(old, kind), getattr(new, kind)
        pairs += [(old_items[i], new_items[i]) for i in new_items if i in old_items]
    for before, after in pairs:
        if _content(before.document.data) == _content(after.document.data):
            continue
        old_top = max(v.version for v in before.versions)
        new_top = max(v.version for v in after.versions)
        if new_top <= old_top:
            out.append(
                after.document.error(
                    ("versions",),
                    f"'{after.id}' changed since the base but its latest version is still "
                    f"{new_top}: add a versions entry (version {old_top + 1}, date, change)",
                    code="versions",
                )
            )
    return out
