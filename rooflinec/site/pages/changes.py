"""The "changes" page: the figures that moved since the previous published version.

What the build compares with is `site.changes` (`rooflinec.site.versions.Changes`);
`changes_pages` renders `rooflinec.prose.diff`'s result through the site's escaping, grouped by
device and kernel, largest changes first, old → new with the relative change.

Without those variables (`rooflinec build`, `mkdocs build`) the page says that no previous
version is known, and the build stays reproducible.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from rooflinec.prose.diff import Change, format_relative, format_value
from rooflinec.site.escape import md
from rooflinec.site.pages.common import GeneratedPage, chunks_by_size
from rooflinec.site.pages.model import Page, split_pages

if TYPE_CHECKING:
    from rooflinec.site.pages.model import Site

__all__ = ["changes_pages"]

log = logging.getLogger("mkdocs.plugins.rooflinec")

ROW_WEIGHT = 90


# --------------------------------------------------------------------------- rendering


def _group_title(page: Page, group: str) -> Markup:
    """`device nvidia-h100-sxm` -> a link to the device; `kernel gemm on d` -> both linked."""
    catalog = page.site.catalog
    kind, _, rest = group.partition(" ")
    if kind == "device" and rest in catalog.devices:
        return Markup("Device {}").format(page.device_link(rest))
    kernel, sep, device = rest.partition(" on ")
    if kind == "kernel" and sep and kernel in catalog.kernels and device in catalog.devices:
        return Markup("{} on {}").format(page.kernel_link(kernel), page.device_link(device))
    return md(group)


def _row(change: Change) -> dict[str, Any]:
    return {
        "figure": change.subject,
        "old": format_value(change.old, change.unit),
        "new": format_value(change.new, change.unit),
        "change": format_relative(change) or "–",
    }


def changes_pages(site: Site) -> list[GeneratedPage]:
    """`changes.md` (and `changes-2.md`, ... when long): the figures that moved."""
    changes = site.changes
    diff = changes.diff if changes is not None else None
    chunks: list[list[Change]] = [[]]
    hidden = 0
    if diff is not None and diff.changes:
        limits = site.limits
        budget = limits.changes_page_budget
        found = list(chunks_by_size(diff.changes, lambda c: ROW_WEIGHT, budget))
        chunks = [list(c) for c in found[: limits.max_change_pages]]
        hidden = sum(len(c) for c in found[limits.max_change_pages :])

    def text(page: Page, n: int, chunk: list[Change], pager: Markup) -> str:
        groups: dict[str, list[dict[str, Any]]] = {}
        for change in chunk:
            groups.setdefault(change.group, []).append(_row(change))
        added = removed = []
        if diff is not None and n == 1:
            added = [(kind, ident) for kind, ids in diff.added.items() for ident in ids]
            removed = [(kind, ident) for kind, ids in diff.removed.items() for ident in ids]
        return site.render(
            "changes.md.j2",
            page,
            changes=changes,
            diff=diff,
            n=n,
            groups=[(_group_title(page, g), rows) for g, rows in groups.items()],
            added=[_spec_link(page, kind, ident) for kind, ident in added],
            removed=[f"{kind} {ident}" for kind, ident in removed],
            hidden=hidden if n == len(chunks) else 0,
            pager=pager,
        )

    return split_pages(site, "changes.md", chunks, lambda n: "Changes", text)


def _spec_link(page: Page, kind: str, ident: str) -> Markup:
    catalog = page.site.catalog
    if kind == "device" and ident in catalog.devices:
        return Markup("device {}").format(page.device_link(ident))
    if kind == "kernel" and ident in catalog.kernels:
        return Markup("kernel {}").format(page.kernel_link(ident))
    if kind == "case" and ident in catalog.cases:
        return Markup("case {}").format(page.case_link(ident))
    return md(f"{kind} {ident}")
