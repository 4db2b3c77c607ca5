"""Measurement lints: a measured run must say how it can be run again."""

from __future__ import annotations

from typing import Any

from rooflinec.errors import Diagnostic
from rooflinec.lints.context import LintContext, _warn_at


def measurement_sources(ctx: LintContext) -> list[Diagnostic]:
    """A source of kind `measurement` without the `tool` (and its version) or the `command`.

    A measured point is only as good as the run behind it: the profiler version decides
    which counters exist and how they are summed, and the command is what a reviewer
    runs again.
    """
    owners: list[Any] = [*ctx.catalog.devices.values(), *ctx.catalog.kernels.values()]
    out = []
    for owner in owners:
        for sid, source in owner.sources.items():
            if source.kind != "measurement":
                continue
            missing = [name for name in ("tool", "command") if getattr(source, name) is None]
            if missing:
                out.append(
                    _warn_at(
                        owner.document,
                        ("sources", sid),
                        "lint-measurement",
                        f"measurement source '{sid}' does not give its {' or '.join(missing)}:"
                        " add `tool` (the profiler and its version) and `command` (the"
                        " command line that took it)",
                    )
                )
    return out
