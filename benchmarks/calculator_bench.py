"""(g) The Calculator page in Chromium: re-render time of an edit, and the page's weight.

`g-calc-render`: the bundled site is built, served on 127.0.0.1, and opened in headless
Chromium (the browser tests' launcher); the page is filled with 50 kernel rows (the
bundled cases in turn, at BF16, on the default device), then 20 edits are made in turn
(the DRAM bandwidth, a shape, the compute share), each through the page's own `edit`,
which parses the inputs, evaluates every row exactly, and writes every table and the
fragment. The time of each is `performance.now()` around that work in the page; the
chart is redrawn once the edits pause (it is not in this time, and is printed beside
it). `g-calc-weight`: the page with its inline data and its script, in bytes, the Vega
runtime the site already ships aside.
"""

from __future__ import annotations

import json
import statistics
import tempfile
from pathlib import Path

from benchmarks.common import Row, info, skipped

RENDER_TARGET_MS = 50.0
WEIGHT_TARGET_KB = 300.0
ROWS = 50
EDITS = 20

_EDITS = [
    ["chip.memory.dram.bw", "{} TB/s"],
    ["rows.0.shape.M", "{}"],
    ["chip.share", "{}%"],
]


def measure(work: Path) -> list[Row]:
    render = "calculator: one edit with 50 kernel rows, in Chromium"
    weight = "calculator page with its data and script"
    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        why = "Chromium is not installed (apt-get install chromium)"
        return [
            skipped("g-calc-render", render, "<= 1.0x", why),
            skipped("g-calc-weight", weight, "<= 1.0x", why),
        ]
    from rooflinec.assemble import catalog_or_raise
    from rooflinec.resources import bundled_specs_dir
    from rooflinec.site.build import build_site
    from tests.browser.test_browser import _serve, launch

    site = work / "calculator-site"
    build_site(bundled_specs_dir(), site)
    from rooflinec.site.pages.calculator import SCRIPTS

    size = sum((site / name).stat().st_size for name in ("calculator.html", *SCRIPTS))
    catalog = catalog_or_raise(bundled_specs_dir())
    cases = [c.id for k in catalog.kernels.values() for c in k.cases if c.grid is None]
    cases.remove("gemm-large")  # the first row, whose M is edited
    rows = [["gemm-large", "bf16"]] + [[cases[i % len(cases)], "bf16"] for i in range(ROWS - 1)]
    edits = [
        [key, form.format(value)]
        for i in range(EDITS)
        for key, form in [_EDITS[i % len(_EDITS)]]
        for value in [(2, 4096, 70)[i % 3] + i]
    ]
    script = (
        "(async () => { const c = window.rooflinecCalculator;"
        f" c.fill('nvidia-h100-sxm', {json.dumps(rows)});"
        f" const times = {json.dumps(edits)}.map(([k, v]) => c.edit(k, v));"
        " const start = performance.now();"
        " const end = start + 10000; await new Promise(r => { const t = () =>"
        " document.querySelector('#calc-chart svg.marks') || performance.now() > end"
        " ? r() : setTimeout(t, 10); t(); });"
        " return [times, performance.now() - start,"
        " document.querySelectorAll('#calc-kernels tbody tr').length]; })()"
    )
    profile = Path(tempfile.mkdtemp(prefix="chromium-", dir=work))
    with launch(profile) as browser:
        for url in _serve(site):
            visit = browser.visit(f"{url}/calculator.html", script=script)
    times, chart_ms, shown = visit.script_result
    if shown != ROWS or visit.console_errors:
        raise RuntimeError(f"calculator benchmark: {shown} rows, {visit.console_errors}")
    median = statistics.median(times)
    info(
        f"calculator: {ROWS} rows, {EDITS} edits: median {median:.1f} ms, slowest "
        f"{max(times):.1f} ms; the chart drawn {chart_ms:.0f} ms after the last edit"
    )
    kb = size / 1000
    return [
        Row(
            "g-calc-render",
            render,
            f"{RENDER_TARGET_MS:.0f} ms",
            f"{median:.1f} ms",
            median / RENDER_TARGET_MS,
            "<= 1.0x",
            median <= RENDER_TARGET_MS,
        ),
        Row(
            "g-calc-weight",
            weight,
            f"{WEIGHT_TARGET_KB:.0f} KB",
            f"{kb:.0f} KB",
            kb / WEIGHT_TARGET_KB,
            "<= 1.0x",
            kb <= WEIGHT_TARGET_KB,
        ),
    ]
