"""Child process of the grid measurement: run one rooflinec command line, report its peak.

`python -m benchmarks.peak REPORT.json ARGS...` runs `rooflinec ARGS...` in this process
and writes its exit code and the process's peak resident memory (VmHWM, see
`benchmarks.memory`) to REPORT.json: the figure belongs to this process alone, whatever
ran before it in the parent.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from benchmarks.memory import _peak_mb


def main(argv: list[str]) -> int:
    from rooflinec.cli.main import main as rooflinec

    report, args = Path(argv[0]), argv[1:]
    code = rooflinec(args)
    report.write_text(json.dumps({"code": code, "peak_rss_mb": _peak_mb()}), "utf-8")
    return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
