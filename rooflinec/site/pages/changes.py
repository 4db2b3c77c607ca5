"""The "changes" page: the figures that moved since the previous published version.

`rooflinec publish` (mike) passes the build its context in environment variables
(`rooflinec.site.publish`): the commit it builds, the version, and the commit and name of the
previous published version. `Changes.from_environment` compiles the catalog as it was at
that commit (`rooflinec.prose.diff.specs_at`) and diffs it against the catalog being built;
`changes_pages` renders `rooflinec.prose.diff`'s result through the site's escaping, grouped by
device and kernel, largest changes first, old → new with the relative change.

Without those variables (`rooflinec build`, `mkdocs build`) the page says that no previous
version is known, and the build stays reproducible.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from rooflinec.prose.diff import CatalogDiff, Change, format_relative, format_value
from rooflinec.site.escape import md
from rooflinec.site.pages.common import GeneratedPage, Page, chunks_by_size, split_pages
from rooflinec.site.publish import BUILD_INFO, ENV_BASE, ENV_BASE_LABEL, ENV_COMMIT, ENV_VERSION

if TYPE_CHECKING:
    from rooflinec.engine.compiler import Compiled
    from rooflinec.site.pages.model import Site

__all__ = ["Changes", "changes_pages"]

log = logging.getLogger("mkdocs.plugins.rooflinec")

ROW_WEIGHT = 90


@dataclass(frozen=True)
class Changes:
    """What the build is (version, commit) and what it is compared with."""

    version: str | None = None
    commit: str | None = None
    base: str | None = None  # the previous published version's commit
    label: str | None = None  # the previous published version's name
    diff: CatalogDiff | None = None
    problem: str | None = None  # why the comparison could not be made

    @classmethod
    def from_environment(
        cls, specs: Path, compiled: Compiled, environ: Mapping[str, str] | None = None
    ) -> Changes | None:
        """The context `rooflinec publish` passes; None when none is (a plain build)."""
        env = os.environ if environ is None else environ
        version = env.get(ENV_VERSION) or None
        commit = env.get(ENV_COMMIT) or None
        base = env.get(ENV_BASE) or None
        label = env.get(ENV_BASE_LABEL) or None
        if not (version or commit or base or label):
            return None
        if base is None:
            return cls(version, commit, None, label)
        diff, problem = _compare(specs, compiled, base, label)
        return cls(version, commit, base, label, diff, problem)

    @property
    def build_info(self) -> str | None:
        """`rooflinec-build.json`: the commit and version this site was built from."""
        if not (self.commit or self.version):
            return None
        info = {"commit": self.commit, "version": self.version}
        return json.dumps(info, indent=2, sort_keys=True) + "\n"

    def downloads(self) -> dict[str, str]:
        out = {}
        info = self.build_info
        if info is not None:
            out[BUILD_INFO] = info
        if self.diff is not None:
            from rooflinec.prose.diff import to_data

            data = to_data(self.diff)
            data["version"] = self.version
            data["commit"] = self.commit
            data["base_version"] = self.label
            data["base_commit"] = self.base
            out["changes.json"] = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        return out


def _compare(
    specs: Path, compiled: Compiled, base: str, label: str | None
) -> tuple[CatalogDiff | None, str | None]:
    """The diff of the catalog at commit `base` against `compiled`, or why there is none."""
    from rooflinec.assemble import build_catalog
    from rooflinec.engine.compiler import compile_catalog
    from rooflinec.errors import RooflinecError
    from rooflinec.prose.diff import diff_compiled, specs_at

    name = f"{label} ({base[:12]})" if label else base[:12]
    try:
        with specs_at(specs, base) as old_folder:
            old = None
            if old_folder is not None and old_folder.is_dir():
                old_catalog, _ = build_catalog(old_folder)
                if old_catalog is None:
                    problem = f"the specs of {name} do not build with this rooflinec"
                    log.warning(f"rooflinec: changes page: {problem}")
                    return None, problem
                old = compile_catalog(old_catalog)
            return diff_compiled(old, compiled, name), None
    except RooflinecError as exc:
        log.warning(f"rooflinec: changes page: {exc}")
        return None, str(exc)


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
