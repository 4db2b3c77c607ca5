"""The Calculator page in Chromium: every figure it prints is the engine's, exactly.

The page evaluates the kernels' formula trees with BigInt rationals in the browser. Here
every bundled kernel case is placed on every bundled device at every precision the
device has a peak for, and each printed cell (its exact value, `data-exact`, and its
text) is compared with the engine's `Result` formatted as the site formats it, and with
`rooflinec compile --format json`'s bound. Typed figures are checked against the spec
parser's values and messages; hostile inputs must give the inline message, no console
error and inert markup.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from rooflinec.assemble import catalog_or_raise
from rooflinec.catalog import LEVELS, Experts
from rooflinec.cli.main import main
from rooflinec.engine.cells import Result
from rooflinec.engine.compiler import Compiled, compile_catalog
from rooflinec.engine.models import DeploymentError, RunPoint
from rooflinec.engine.terms import COMPUTE
from rooflinec.formatting import format_number, format_percent, format_si
from rooflinec.formulas import EvaluationError, parse_formula
from rooflinec.formulas.limits import LIMITS
from rooflinec.formulas.tree_json import rational_text, tree_json
from rooflinec.quantities import Dimension, QuantityError, parse_quantity
from rooflinec.site.build import build_site
from rooflinec.site.pages.common import level_name, limit_label
from tests.browser.test_browser import ARTIFACTS, BUNDLED, Browser, _serve, browser

pytestmark = pytest.mark.browser
__all__ = ["browser"]  # the fixture, shared with the site's browser tests


@pytest.fixture(scope="module")
def compiled() -> Compiled:
    return compile_catalog(catalog_or_raise(BUNDLED))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    build_site(BUNDLED, out)
    return out


@pytest.fixture(scope="module")
def calculator(site: Path, browser: Browser) -> Iterator[str]:
    for url in _serve(site):
        yield f"{url}/calculator.html"


_READ = """(() => {
  const cells = (sel) => [...document.querySelectorAll(sel + ' tbody tr')].map(tr =>
    [...tr.children].map(td => [td.getAttribute('data-exact'), td.textContent,
                                td.getAttribute('data-limit')]));
  const out = {};
  for (const [device, rows] of JOBS) {
    window.rooflinecCalculator.fill(device, rows);
    out[device] = {kernels: cells('#calc-kernels'), sweeps: cells('#calc-sweeps'),
                   precisions: cells('#calc-precisions'), compare: cells('#calc-compare')};
  }
  return out;
})()"""


def _rate(r: Result, value: Fraction, unit: str) -> list[Any]:
    return [rational_text(value), format_si(value, f"{unit}/s"), None]


def _expected_kernels(compiled: Compiled, results: list[Result]) -> list[list[Any]]:
    """The kernels table as the page must print it: the engine's values, the site's words."""
    cat = compiled.catalog
    cases = cat.cases
    levels = [lv for lv in LEVELS if any(lv in r.intensity for r in results)]
    figures = compiled.devices[results[0].device]
    rows = []
    for r in results:
        unit = cat.precisions[r.precision].unit
        case = cases[r.case]
        row: list[Any] = [[None, case.name, None], [None, cat.precisions[r.precision].label, None]]
        for lv in levels:
            v = r.intensity.get(lv)
            row.append(
                [None, "–", None]
                if v is None
                else [rational_text(v), format_si(v, f"{unit}/B"), None]
            )
        first = next((lv for lv in LEVELS if lv in r.intensity), None)
        if first is not None and first in figures.bandwidths:
            ridge = figures.peaks[r.precision] / figures.bandwidths[first]
            row.append([rational_text(ridge), format_si(ridge, f"{unit}/B"), None])
        else:
            row.append([None, "–", None])
        row.append(_rate(r, r.attainable, unit))
        limit = r.limited_by
        row.append([None, level_name(limit) if limit != COMPUTE else COMPUTE, limit])
        row.append([rational_text(r.share_of_peak), format_percent(r.share_of_peak), None])
        row.append([rational_text(r.time), format_si(r.time, "s"), None])
        eff = r.efficiency
        row.append(
            [None, "–", None] if eff is None else [rational_text(eff), format_percent(eff), None]
        )
        rows.append(row)
    return rows


def _expected_sweeps(compiled: Compiled, results: list[Result]) -> list[list[Any]]:
    cat = compiled.catalog
    cases = cat.cases
    rows = []
    for r in results:
        unit = cat.precisions[r.precision].unit
        case = cases[r.case]
        values = [*r.bandwidth_sweep.values(), *r.peak_sweep.values()]
        rows.append([[None, case.name, None], *(_rate(r, v, unit) for v in values)])
    return rows


def test_every_case_on_every_device_at_every_precision_matches_the_engine(
    calculator: str, browser: Browser, compiled: Compiled, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every kernel case × device × precision: the page's intensities, ridge points,
    attainable rates, bounds, shares, times, efficiencies and sweeps are the engine's
    exact values, printed with the site's rounding; the bound and the attainable rate are
    `rooflinec compile --format json`'s."""
    cat = compiled.catalog
    cases = [c for k in cat.kernels.values() for c in k.cases if c.grid is None]
    jobs = {d: [[c.id, p] for c in cases for p in compiled.devices[d].peaks] for d in cat.devices}
    script = _READ.replace("JOBS", json.dumps(list(jobs.items())))
    visit = browser.visit(calculator, ARTIFACTS / "calculator.png", script=script)
    assert visit.console_errors == []
    here = calculator.rsplit("/", 1)[0]
    outside = [u for u in visit.requests if not u.startswith(("data:", here))]
    assert outside == []  # the data is inline, the runtime beside the page
    page = visit.script_result
    assert sorted(page) == sorted(cat.devices)

    assert main(["compile", "--specs", str(BUNDLED), "--format", "json"]) == 0
    cli = {
        (r["case"], r["device"], r["precision"]): r
        for r in json.loads(capsys.readouterr().out)["results"]
    }
    compared = 0
    for device, rows in jobs.items():
        results = [compiled.result(case, device, p) for case, p in rows]
        assert all(r is not None for r in results)
        exact = [r for r in results if r is not None]
        assert _expected_kernels(compiled, exact) == page[device]["kernels"], device
        assert _expected_sweeps(compiled, exact) == page[device]["sweeps"], device
        for r, printed in zip(exact, page[device]["kernels"], strict=True):
            from_cli = cli[(r.case, r.device, r.precision)]
            limit = next(cell[2] for cell in printed if cell[2] is not None)
            assert from_cli["limited_by"] == limit
            assert from_cli["attainable"] == float(r.attainable)
        compared += sum(len(row) - 2 for row in page[device]["kernels"])
        compared += sum(len(row) - 1 for row in page[device]["sweeps"])
        figures = compiled.devices[device]
        precision_rows = page[device]["precisions"]
        ordered = [p for p in cat.precisions if p in figures.peaks]  # the catalog's order
        assert [row[0][1] for row in precision_rows] == [cat.precisions[p].label for p in ordered]
        for p, row in zip(ordered, precision_rows, strict=True):
            assert row[1][0] == rational_text(figures.peaks[p])
            ridges = [cell[0] for cell in row[2:]][1::2]
            assert ridges == [rational_text(v) for v in figures.ridges[p].values()]
    assert compared >= 1000


def test_device_comparison_is_the_engine_on_every_device(
    calculator: str, browser: Browser, compiled: Compiled
) -> None:
    """The comparison table places the compared case on every bundled device: each
    printed figure is that device's cell."""
    cat = compiled.catalog
    case = "gemv-decode"
    script = _READ.replace("JOBS", json.dumps([["nvidia-h100-sxm", [[case, "bf16"]]]]))
    visit = browser.visit(calculator, script=script)
    rows = visit.script_result["nvidia-h100-sxm"]["compare"]
    expected = [["your chip"]] + [
        [cat.devices[d].name] for d in cat.devices if "bf16" in compiled.devices[d].peaks
    ]
    assert expected == [[row[0][1]] for row in rows]
    for device, row in zip(
        [None, *(d for d in cat.devices if "bf16" in compiled.devices[d].peaks)], rows, strict=True
    ):
        r = compiled.result(case, device or "nvidia-h100-sxm", "bf16")
        assert r is not None
        assert [c[0] for c in row[1:]] == [
            rational_text(r.attainable),
            None,
            rational_text(r.share_of_peak),
            rational_text(r.time),
        ]
        assert row[2][2] == r.limited_by


_MODELS = """(() => {
  const rows = (sel) => [...document.querySelectorAll(sel + ' tr')].map(tr =>
    [...tr.children].map(td => [td.getAttribute('data-exact'), td.textContent,
                                td.getAttribute('data-limit') || td.getAttribute('data-fits')]));
  const out = [];
  for (const [model, deployment, b, s, L, phase] of JOBS) {
    window.rooflinecCalculator.model(model, deployment, b, s, L, phase);
    const problem = document.querySelector('.rooflinec-calc-results .rooflinec-calc-problem');
    out.push({pass: rows('#calc-model tbody'), split: rows('#calc-model-split tbody'),
              steps: rows('#calc-model-steps tbody'), problem: problem && problem.textContent});
  }
  return out;
})()"""


def _expected_pass(
    compiled: Compiled, model_id: str, name: str, run: dict[str, int], phase: str
) -> Any:
    """The model's pass at `run` on a named deployment, as the page must print it: the
    named phase's (a verify pass of speculation yields its expected tokens), or a run
    point's where no phase is named."""
    cat = compiled.catalog
    model = cat.models[model_id]
    named = model.deployments[name]
    engine = compiled.model_engine
    r = engine.evaluate(
        model,
        phase or RunPoint(run["b"], run["s"], run["L"]),
        compiled.devices[named.device],
        model.precision,
        compiled.counts.latencies.get(named.device),
        deployment=named.deployment,
    )
    fit = engine.memory.fit_at(model, run, model.precision, named.device, named.deployment)
    unit = cat.precisions[model.precision].unit
    tps = r.tokens_per_second
    fits = fit is None or fit.fits is not False
    rate = [rational_text(tps), f"{format_number(tps, 4)} tokens/s"]
    spec = model.speculation.get(phase)
    tokens = f"{int(r.tokens):,}"
    if spec is not None:
        tokens = (
            f"{format_number(r.tokens, 4)} (expected: a verify pass of {spec.k} drafted,"
            f" acceptance {format_percent(spec.acceptance)})"
        )
    if fit is not None and not fits:
        needs, has = format_si(fit.ledger.total, "B"), format_si(fit.ledger.capacity or 0, "B")
        rate = [None, f"does not fit: the ledger needs {needs} of {has} per chip"]
    rows: list[Any] = [
        [["tokens/s", None], rate],
        [["tokens per pass", None], [rational_text(r.tokens), tokens]],
        [["time of the pass", None], [rational_text(r.time), format_si(r.time, "s")]],
        [["attainable", None], [rational_text(r.attainable), format_si(r.attainable, f"{unit}/s")]],
        [["limited by", None], [limit_label(r.limited_by), r.limited_by]],
    ]
    if fit is not None:
        ledger = fit.ledger
        for label, value in (
            ("weights per chip", ledger.weights),
            ("KV cache per chip", ledger.kv_cache),
            ("activations per chip", ledger.activations),
            ("reserve", ledger.reserve),
            ("memory in all per chip", ledger.total),
            ("capacity per chip", ledger.capacity),
        ):
            if value:
                rows.append([[label, None], [rational_text(value), format_si(value, "B")]])
        rows.append([["fits", None], [str(fit.fits).lower(), fit.fits]])
    split = [
        [limit_label(k), rational_text(t), rational_text(t / r.time)]
        for k, t in r.time_by_limit.items()
    ]
    steps = [
        [
            step.step,
            step.kernel,
            rational_text(step.count),
            rational_text(step.time),
            step.limited_by,
        ]
        for step in r.steps
    ]
    return {"pass": rows, "split": split if fits else [], "steps": steps if fits else []}


def _printed_pass(printed: dict[str, Any], model: Any) -> Any:
    names = {s.name: s.id for s in model.steps}
    rows = []
    for row in printed["pass"]:
        head, cell = row
        if head[1] == "limited by":
            rows.append([[head[1], None], [cell[1], cell[2]]])
        elif head[1] == "fits":
            rows.append(
                [[head[1], None], [cell[2], None if cell[2] == "null" else cell[2] == "true"]]
            )
        else:
            rows.append([[head[1], None], [cell[0], cell[1]]])
    return {
        "pass": rows,
        "split": [[row[0][1], row[1][0], row[2][0]] for row in printed["split"]],
        "steps": [
            [names[row[0][1]], row[1][1], row[2][0], row[3][0], row[4][2]]
            for row in printed["steps"]
        ],
    }


def test_every_model_at_its_named_deployments_matches_the_engine(
    calculator: str, browser: Browser, compiled: Compiled
) -> None:
    """Every bundled model at every named deployment, at each of its phases' b, s and L:
    tokens per second, the pass's time, operations rate and limit, the memory ledger and
    its fit (no rate where it does not fit), the time split and every step's count, time
    and limit are the engine's, exactly."""
    cat = compiled.catalog
    jobs = [
        [model.id, name, str(run["b"]), str(run["s"]), str(run["L"]), phase]
        for model in cat.models.values()
        for name, named in model.deployments.items()
        if compiled.model_engine.deployment_problem(model, named.deployment) is None
        for phase, run in model.phases.items()
    ]
    # and each model's first phase at a run point of its own (no phase named)
    jobs += [
        [*job[:3], str(int(job[3]) + 1), str(int(job[4]) + 7), ""]
        for job in {j[0]: j for j in jobs}.values()
    ]
    assert len({j[0] for j in jobs}) >= 10
    visit = browser.visit(calculator, script=_MODELS.replace("JOBS", json.dumps(jobs)))
    assert visit.console_errors == []
    compared = 0
    for job, printed in zip(jobs, visit.script_result, strict=True):
        model_id, name, b, s, L, phase = job
        run = {"b": int(b), "s": int(s), "L": int(L)}
        try:
            expected = _expected_pass(compiled, model_id, name, run, phase)
        except DeploymentError as exc:
            assert printed["problem"], (job, exc.message)
            continue
        assert printed["problem"] is None, (job, printed["problem"])
        assert expected == _printed_pass(printed, cat.models[model_id]), job
        compared += 1
    assert compared >= 100


#: Typed figures, each parsed in the page and by the spec parser: the same exact value or
#: the same message.
TYPED = [
    ("989.5 TFLOP/s", "rate", True),
    ("1,979 TOPS", "rate", True),
    ("3.35 TB/s", "bandwidth", True),
    ("800 GiBps", "bandwidth", True),
    ("2 µs", "time", True),
    ("1.4 us", "time", True),
    ("92%", "share", False),
    ("8.6 GFLOP", "ops", True),
    ("96 MiB", "bytes", True),
    ("1e400 TB/s", "bandwidth", True),
    ("-3.35 TB/s", "bandwidth", True),
    ("−3 TB/s", "bandwidth", True),
    ("", "bandwidth", True),
    ("   ", "rate", True),
    ("3.35", "bandwidth", True),
    ("3.35TB/s", "bandwidth", True),
    ("3.35 Tb/s", "bandwidth", True),
    ("3.35 tb/s", "bandwidth", True),
    ("989.5 TFLOP/s", "bandwidth", True),
    ("3.35 TB", "bandwidth", True),
    ("8.6 GFLOPs", "ops", True),
    ("0 TB/s", "bandwidth", True),
    ("0%", "share", False),
    ("150%", "share", False),
    ("NaN TB/s", "bandwidth", True),
    ("Infinity", "rate", True),
    ("<img src=x onerror=alert(1)>", "rate", True),
    ("1.2.3 TB/s", "bandwidth", True),
    ("1_000 TB/s", "bandwidth", True),
    ("0x10 TB/s", "bandwidth", True),
    ("040 TB/s", "bandwidth", True),
    ("1,00 TB/s", "bandwidth", True),
    ("0,500 TB/s", "bandwidth", True),
    (".5 TB/s", "bandwidth", True),
    ("+3 TB/s", "bandwidth", True),
    ("3 TB / s", "bandwidth", True),
    ("3 TB/s peak", "bandwidth", True),
    ("1.5e TB/s", "bandwidth", True),
    ("1e3.5 TB/s", "bandwidth", True),
    ("3 furlongs", "bandwidth", True),
    ("3 Ms", "time", True),
    ("TB/s", "bandwidth", True),
    ("3 TB/s" + "x" * 70, "bandwidth", True),
    ("3 'TB", "bandwidth", True),
    ("3 tflop/s", "rate", True),
    ("1.5e3 GB/s", "bandwidth", True),
    ("3.35\u00a0TB/s", "bandwidth", True),
]
_DIMENSIONS = {d.value: d for d in Dimension}


def test_typed_figures_parse_as_specs_parse_them(calculator: str, browser: Browser) -> None:
    """Each typed figure gives the spec parser's exact value, or its message word for word."""
    script = (
        "JSON.stringify(" + json.dumps(TYPED) + ".map(([t, d, p]) =>"
        " window.rooflinecCalculator.parse(t, d, p)))"
    )
    visit = browser.visit(calculator, script=script)
    page = json.loads(visit.script_result)
    expected = []
    for text, dim, positive in TYPED:
        try:
            value = parse_quantity(text, _DIMENSIONS[dim], positive=positive).value
            expected.append([rational_text(value)])
        except QuantityError as err:
            expected.append([None, str(err)])
    assert expected == page


_HOSTILE = """(async () => {
  const calc = window.rooflinecCalculator;
  const type = (key, value) => {
    const el = document.querySelector(`[data-key="${key}"]`);
    el.value = value;
    el.dispatchEvent(new Event('input', {bubbles: true}));
    return document.querySelector(`[data-error="${key}"]`).textContent;
  };
  const out = {};
  out.bandwidth = type('chip.memory.dram.bw', '-3 TB/s');
  out.peak = type('chip.peaks.bf16', '1e400 TFLOP/s');
  out.share = type('chip.share', '');
  out.shape = type('rows.0.shape.M', '9'.repeat(10000));
  out.markupShape = type('rows.0.shape.N', '<img src=x onerror=alert(1)>');
  document.querySelector('[data-action="add-raw"]').click();
  const last = calc.state().rows.length - 1;
  type(`rows.${last}.name`, '<img src=x onerror=alert(1)><script>alert(2)</script>');
  out.ops = type(`rows.${last}.ops`, '');
  type(`rows.${last}.ops`, '2 TFLOP');
  type('chip.memory.dram.bw', '3.35 TB/s');
  type('chip.peaks.bf16', '989.5 TFLOP/s');
  type('chip.share', '100%');
  out.images = document.querySelectorAll('.rooflinec-calculator img').length;
  out.scripts = document.querySelectorAll('.rooflinec-calculator script').length;
  const names = document.querySelectorAll('#calc-kernels tbody th');
  out.name = names[names.length - 1].textContent;
  out.text = document.body.innerText;
  await new Promise(r => setTimeout(r, 400));
  out.fragment = location.hash.slice(0, 3);
  return out;
})()"""


def test_hostile_inputs_get_the_inline_message_and_stay_inert(
    calculator: str, browser: Browser
) -> None:
    """A negative bandwidth, 1e400, an empty field, a 10,000-digit shape and markup each
    get the command line's message beside the field; markup stays text; no console error,
    no dialog; the page never prints NaN, Infinity or undefined."""
    visit = browser.visit(calculator, ARTIFACTS / "calculator-hostile.png", script=_HOSTILE)
    out = visit.script_result
    assert visit.console_errors == []
    assert visit.dialogs == []
    assert out["bandwidth"] == (
        "DRAM bandwidth: negative numbers are not accepted: a quantity is never negative"
    )
    assert out["peak"] == (
        "peak at BF16 or FP16: exponent out of range: at most e+30 and at least e-30;"
        " hint: use a unit prefix instead, as in '989.5 TFLOP/s'"
    )
    assert out["share"] == "compute share: empty quantity: expected a share such as '92%'"
    assert out["shape"] == (
        "M '9999999999999999999999999999999999999...' is not a shape value:"
        " a whole number from 1 to 1,000,000,000,000,000"
    )
    assert out["markupShape"].startswith("N '<img src=x onerror=alert(1)>' is not a shape")
    assert out["ops"] == (
        "operations: empty quantity: expected an operation count such as '8.6 GFLOP'"
    )
    assert out["images"] == 0
    assert out["scripts"] == 0
    assert out["name"] == "<img src=x onerror=alert(1)><script>alert(2)</script>"
    for word in ("NaN", "Infinity", "undefined"):
        assert word not in out["text"]
    assert out["fragment"] == "#s="


def test_a_shared_link_reproduces_the_calculation(calculator: str, browser: Browser) -> None:
    """The fragment holds every input: a new tab opened at it prints the same tables; a
    fragment that is not the page's own (markup, wrong types) falls back to the bundled
    figures without an error."""
    edit = (
        "(() => { const c = window.rooflinecCalculator;"
        " c.edit('chip.memory.dram.bw', '2 TB/s'); c.edit('rows.0.shape.M', '1024');"
        " return [location.href, document.querySelector('#calc-kernels').innerText]; })()"
    )
    first = browser.visit(calculator, script=edit).script_result
    again = browser.visit(
        first[0], script="document.querySelector('#calc-kernels').innerText"
    ).script_result
    assert first[1] == again
    assert "1024" in json.dumps(first[0]) or "1024" in first[0]
    hostile = (
        calculator
        + "#s="
        + '{"chip":{"device":"<b>x</b>","peaks":5},"rows":[{"kind":"case","case":"nope"}]}'
    )
    visit = browser.visit(
        hostile, script="document.querySelectorAll('#calc-kernels tbody tr').length"
    )
    assert visit.console_errors == []
    assert visit.script_result == 0
    prefilled = browser.visit(
        calculator + "?device=amd-mi300x&kernel=gemm",
        script="[document.querySelector('[data-key=\"chip.device\"]').value,"
        " document.querySelectorAll('#calc-kernels tbody tr').length]",
    ).script_result
    assert prefilled == ["amd-mi300x", 2]


def test_without_javascript_the_page_says_what_to_run(site: Path) -> None:
    """The page's text (no script run) explains itself and gives the command lines."""
    text = (site / "calculator.html").read_text("utf-8")
    assert "rooflinec compile --device" in text
    assert 'id="rooflinec-calculator" class="rooflinec-calculator" hidden' in text


def test_opened_from_disk_it_computes_and_draws(site: Path, browser: Browser) -> None:
    """From a `file:` address (no server, so nothing can be fetched): the data is inline,
    the tables are filled, the chart is drawn from the runtime beside the page, and an
    edit lands in the fragment."""
    script = """(async () => {
      window.rooflinecCalculator.edit('chip.memory.dram.bw', '2 TB/s');
      const end = performance.now() + 10000;
      while (!document.querySelector('#calc-chart svg.marks') && performance.now() < end) {
        await new Promise(r => setTimeout(r, 50));
      }
      return [document.querySelectorAll('#calc-kernels tbody tr').length,
              !!document.querySelector('#calc-chart svg.marks'), location.hash.slice(0, 3)];
    })()"""
    visit = browser.visit((site / "calculator.html").as_uri(), script=script)
    assert visit.console_errors == []
    assert visit.script_result == [4, True, "#s="]


def test_every_control_is_labelled_and_every_table_captioned(
    calculator: str, browser: Browser
) -> None:
    """Keyboard and screen-reader use: each input and select has a label naming it, each
    message is tied to its field, each results table has a caption, and the chart's
    data is a table as well."""
    script = """(() => {
      const root = document.getElementById('rooflinec-calculator');
      const controls = [...root.querySelectorAll('input, select')];
      const unlabelled = controls.filter(c => !root.querySelector(`label[for="${c.id}"]`)
                                              || !c.id).map(c => c.outerHTML);
      const undescribed = [...root.querySelectorAll('input')].filter(c =>
        !document.getElementById(c.getAttribute('aria-describedby'))).length;
      const tables = [...root.querySelectorAll('.rooflinec-calc-results table')];
      return [controls.length, unlabelled, undescribed,
              tables.filter(t => !t.querySelector('caption')).length,
              !!root.querySelector('.rooflinec-calc-chart-data table'),
              [...root.querySelectorAll('button')].every(b => b.textContent.trim() !== '')];
    })()"""
    count, unlabelled, undescribed, uncaptioned, chart_table, buttons = browser.visit(
        calculator, script=script
    ).script_result
    assert count > 20
    assert unlabelled == []
    assert undescribed == 0
    assert uncaptioned == 0
    assert chart_table
    assert buttons


def test_ties_follow_the_methods_order(calculator: str, browser: Browser) -> None:
    """A kernel exactly at the ridge is compute bound; a level tied with a later one is
    the earlier; a latency floor equal to the roofline's time does not hold the kernel
    (it must be strictly slower): decided on exact rationals, not floats."""
    state = {
        "chip": {
            "device": "",
            "peaks": {"bf16": "989.5 TFLOP/s"},
            "share": "100%",
            "memory": {
                "dram": {"bw": "3.35 TB/s", "share": "100%"},
                "l2": {"bw": "6.7 TB/s", "share": "100%"},
            },
            "latency": "1 ms",
        },
        "rows": [
            {
                "kind": "raw",
                "name": "at the ridge",
                "precision": "bf16",
                "ops": "98.95 TFLOP",
                "bytes": {"dram": "335 GB"},
            },
            {
                "kind": "raw",
                "name": "DRAM and L2 tied",
                "precision": "bf16",
                "ops": "1 GFLOP",
                "bytes": {"dram": "3.35 GB", "l2": "6.7 GB"},
            },
            {
                "kind": "raw",
                "name": "floor tied",
                "precision": "bf16",
                "ops": "989.5 GFLOP",
                "bytes": {"dram": "1 kB"},
            },
            {
                "kind": "raw",
                "name": "floor slower",
                "precision": "bf16",
                "ops": "989.4 GFLOP",
                "bytes": {"dram": "1 kB"},
            },
        ],
    }
    script = (
        f"(() => {{ window.rooflinecCalculator.load({json.dumps(state)});"
        " return [...document.querySelectorAll('#calc-kernels tbody td[data-limit]')]"
        ".map(td => td.getAttribute('data-limit')); })()"
    )
    assert browser.visit(calculator, script=script).script_result == [
        "compute",
        "dram",
        "compute",
        "latency",
    ]


_ROUTING = """(() => {
  const X = window.rooflinecExact(LIMITS);
  return CASES.map(([tree, env]) => {
    if (!X.checkTree(tree, true)) { return ['refused']; }
    const scope = {};
    for (const [k, v] of Object.entries(env)) { scope[k] = X.parseRat(v); }
    try { return [X.ratText(X.evaluate(tree, scope))]; } catch (e) { return [null, e.message]; }
  });
})()"""


def test_uniform_routing_evaluates_as_the_engine_does(calculator: str, browser: Browser) -> None:
    """Uniform routing's experts read (`unpicked`) and chips reached (`unreached`), as a
    model's `experts:` binds them, give in the page the engine's exact value or message."""
    experts = Experts(count=256, active=8, routing="uniform", count_text="E", active_text="k")
    names = ["E", "k", "ep", "b", "s"]
    formulas = [
        parse_formula(text, names, reserved=(), engine=True)
        for text in (experts.ranks, experts.binding("b*s"), "unreached(E, k, ep)")
    ]
    points = [
        {"E": 256, "k": 8, "ep": 8, "b": 32, "s": 1},
        {"E": 256, "k": 8, "ep": 4, "b": 3, "s": 5},
        {"E": 128, "k": 4, "ep": 16, "b": 1, "s": 1},
        {"E": 8, "k": 2, "ep": 1, "b": 7, "s": 1},
        {"E": 8, "k": 7, "ep": 2, "b": 1, "s": 2},
        {"E": 256, "k": 8, "ep": 3, "b": 1, "s": 1},  # E/ep not whole: the message
    ]
    cases = [[tree_json(f), {k: str(v) for k, v in p.items()}] for f in formulas for p in points]
    expected: list[list[str | None]] = []
    for f in formulas:
        for p in points:
            try:
                expected.append([rational_text(f.evaluate(p))])
            except EvaluationError as err:
                expected.append([None, err.message])
    limits = {
        "nodes": LIMITS.nodes,
        "depth": LIMITS.depth,
        "exponent": LIMITS.exponent,
        "result": str(LIMITS.result),
    }
    script = (
        "JSON.stringify("
        + _ROUTING.replace("LIMITS", json.dumps(limits)).replace("CASES", json.dumps(cases))
        + ")"
    )
    visit = browser.visit(calculator, script=script)
    assert expected == json.loads(visit.script_result)
