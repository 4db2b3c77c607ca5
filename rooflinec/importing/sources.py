"""The `measurement` source an import adds to a kernel spec."""

from __future__ import annotations

import datetime
import os
import re
from pathlib import Path
from typing import Any

_MAX_SHOWN = 1000

#: The tool each export comes from.
TOOLS = {"csv": "plain CSV", "ncu": "Nsight Compute", "rocprof": "rocprof-compute"}


def source_id(kind: str, path: str) -> str:
    """`ncu-gemm-run` for `ncu` and `gemm_run.csv`: an id the schema accepts."""
    stem = re.sub(r"[^a-z0-9]+", "-", Path(path).stem.lower()).strip("-") or "export"
    return f"{kind}-{stem}"[:60].rstrip("-")


def measurement_source(kind: str, path: str, today: datetime.date) -> tuple[str, dict[str, Any]]:
    """(id, fields) of the source recording an import of `path`."""
    tool = TOOLS[kind]
    return source_id(kind, path), local_source(
        tool,
        f"{tool} export {Path(path).name}",
        path,
        today,
        "add the profiler's version to `tool` and the profiling command as `command`",
    )


def local_source(
    tool: str, title: str, path: str, today: datetime.date, wanted: str
) -> dict[str, Any]:
    """The fields of a `measurement` source recording an import of `path` by `tool`,
    its note asking for what the file does not say (`wanted`).

    The note names the file's path, not just its name: `day1/report.csv` and
    `day2/report.csv` make different sources of one id, which `--write` then refuses to
    merge, instead of one run's entries silently taking the other's place.
    """
    from rooflinec.assemble.files import display_path

    where = display_path(Path(os.path.abspath(path)))
    if len(where) > _MAX_SHOWN:  # a note holds at most 2000 characters
        where = "…" + where[-_MAX_SHOWN:]
    return {
        "title": title,
        "publisher": "local measurement",
        "read": today,
        "kind": "measurement",
        "tool": tool,
        "note": (
            f"Imported by rooflinec from {where} on {today.isoformat()}. Set `read` to the date"
            f" of the run, {wanted}, and add the run's report as `url` where there is one."
        ),
    }
