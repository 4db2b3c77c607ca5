"""What a published build is and what it is compared with.

`rooflinec publish` (mike) passes the build its context in environment variables
(`rooflinec.site.publish`): the commit it builds, the version, and the commit and name of
the previous published version. `Changes.from_environment` compiles the catalog as it was
at that commit (`rooflinec.pipeline.compiled_at`) and diffs it against the catalog being
built; the changes page (`rooflinec.site.pages.changes`) renders the result.

Without those variables (`rooflinec build`, `mkdocs build`) there is no `Changes`, and the
build stays reproducible.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rooflinec.prose.diff import CatalogDiff
from rooflinec.site.publish import BUILD_INFO, ENV_BASE, ENV_BASE_LABEL, ENV_COMMIT, ENV_VERSION

if TYPE_CHECKING:
    from rooflinec.engine.compiler import Compiled

__all__ = ["Changes"]

log = logging.getLogger("mkdocs.plugins.rooflinec")


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
    from rooflinec.errors import RooflinecError
    from rooflinec.pipeline import compiled_at
    from rooflinec.prose.diff import diff_compiled

    name = f"{label} ({base[:12]})" if label else base[:12]
    try:
        past = compiled_at(specs, base)
    except RooflinecError as exc:
        log.warning(f"rooflinec: changes page: {exc}")
        return None, str(exc)
    if not past.builds:
        problem = f"the specs of {name} do not build with this rooflinec"
        log.warning(f"rooflinec: changes page: {problem}")
        return None, problem
    return diff_compiled(past.compiled, compiled, name), None
