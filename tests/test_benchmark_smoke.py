"""The benchmark runs end to end at its tiny size and prints every ratio (CI smoke test).

It does not check that targets are met: at the tiny size the figures mean little, and
timings on a shared machine are not a test.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from benchmarks.common import KEYS

REPO = Path(__file__).resolve().parents[1]


def test_tiny_benchmark_prints_every_ratio() -> None:
    """`python -m benchmarks --size tiny` exits 0 and prints one ratio line per measurement."""
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--size", "tiny"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    for key in KEYS:
        pattern = rf"^ratio {re.escape(key)}: .* (PASS|FAIL|SKIP)\b"
        assert re.search(pattern, proc.stdout, re.M), (key, proc.stdout[-3000:])
    assert "== summary" in proc.stdout
    assert "| measurement | baseline | ours | ratio | target | result |" in proc.stdout
