"""Child process of the memory measurement: build a catalog, compile it, report memory.

`python -m benchmarks.memory SPECS` prints one JSON line: the cells compiled, the resident
memory with the catalog built (then and at its peak so far), and the process's peak
resident memory at the end (VmHWM).
"""

from __future__ import annotations

import json
import resource
import sys
from pathlib import Path


def _rss_mb() -> float:
    """Current resident memory in MB (Linux: /proc/self/statm), else the peak so far."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * resource.getpagesize() / 2**20
    except (OSError, IndexError, ValueError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _peak_mb() -> float:
    """Peak resident memory of this process in MB.

    `VmHWM` from /proc/self/status where there is one: `ru_maxrss` survives `exec`, so a
    child started from a big parent reports the parent's peak; VmHWM belongs to this
    process's own address space.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def main(argv: list[str]) -> int:
    from rooflinec.assemble import catalog_or_raise
    from rooflinec.engine.compiler import compile_catalog

    catalog = catalog_or_raise(Path(argv[0]))
    catalog_rss = _rss_mb()
    catalog_peak = _peak_mb()
    table = compile_catalog(catalog).columns
    arrays = sum(
        value.nbytes
        for value in vars(table).values()
        if hasattr(value, "nbytes") and hasattr(value, "dtype")
    )
    peak = _peak_mb()
    facts = {
        "cells": len(table),
        "catalog_rss_mb": catalog_rss,
        "catalog_peak_mb": catalog_peak,
        "peak_rss_mb": peak,
        "table_mb": arrays / 2**20,
    }
    print(json.dumps(facts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
