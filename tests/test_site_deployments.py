"""Deployments on the model pages: the fewest chips per shown device (the Deployments
table), the page of a model's named deployments with the time of its collectives, the
rule that no pass that does not fit shows a rate, and the rows kept between `serve`
rebuilds."""

from __future__ import annotations

import json
import re
import shutil
from fractions import Fraction
from html import unescape
from pathlib import Path

import pytest

from rooflinec.catalog import ONE_CHIP, Deployment
from rooflinec.cli.main import main
from rooflinec.engine.compiler import Compiled
from rooflinec.engine.solve_model import collective_time
from rooflinec.formatting import format_number, format_si
from rooflinec.pipeline import compiled_or_diagnostics
from rooflinec.site.build import build_site
from rooflinec.site.pages import reuse
from rooflinec.site.pages.deployments import (
    chip_split,
    deployment_cells,
    deployment_phase,
    fewest_chips,
)
from rooflinec.site.pages.model import Site
from rooflinec.site.pages.models import shown_devices
from rooflinec.site.session import Session

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / "specs"
H100 = "nvidia-h100-sxm"
MODEL = "llama-3-70b"
PAYLOAD = "<script>alert(1)</script> [x](javascript:alert(1)) {{ 7*7 }} | pipe"
NOTE = "One HGX H100 board: 8 H100 SXM joined by NVLink through NVSwitch."


@pytest.fixture(scope="module")
def compiled() -> Compiled:
    found, _ = compiled_or_diagnostics(BUNDLED)
    assert found is not None
    return found


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled site, with markup planted in one named deployment's note."""
    root = tmp_path_factory.mktemp("deployments-site")
    specs = root / "specs"
    shutil.copytree(BUNDLED, specs)
    path = specs / "models" / f"{MODEL}.yaml"
    text = path.read_text("utf-8")
    assert NOTE in text
    path.write_text(text.replace(NOTE, PAYLOAD.replace('"', "'")), "utf-8")
    out = root / "site"
    build_site(specs, out, options={"svg": False})
    return out


def _text(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", html))


def _rows(html: str, section: str) -> list[list[str]]:
    """The cells (visible text, `<br>` as a newline) of the first table after the
    element with id `section`."""
    start = html.index(f'id="{section}"')
    table = html[start : html.index("</table>", start)]
    rows = []
    for row in re.findall(r"<tr>(.*?)</tr>", table, re.S):
        cells = re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S)
        rows.append([_text(c.replace("<br>", "\n")).strip() for c in cells])
    return rows


# --------------------------------------------------------------------------- engine


@pytest.mark.parametrize(
    ("phase", "chips"),
    [("decode-b1-l2048", 2), ("decode-b32-l8192", 4), ("prefill-s8192", 4)],
)
def test_fewest_chips_of_llama_3_70b_on_the_h100(
    compiled: Compiled, phase: str, chips: int
) -> None:
    """Llama 3 70B on 80 GB H100s: decode at b = 1, L = 2,048 fits two chips (tp 2) and
    not one; decode at b = 32, L = 8,192 needs four. The fit is the engine's ledger, and
    the chips before it do not fit."""
    engine = compiled.model_engine
    model = compiled.catalog.models[MODEL]
    found = fewest_chips(engine, model, phase, H100)
    assert Deployment(tp=chips) == found.deployment
    fit = engine.memory.fit(model, phase, "bf16", H100, Deployment(tp=chips))
    below = engine.memory.fit(model, phase, "bf16", H100, chip_split(engine, model, H100, 1))
    assert fit is not None and below is not None
    assert (True, False) == (fit.fits, below.fits)


def test_split_is_tensor_parallel_within_the_domain_then_pipeline(compiled: Compiled) -> None:
    """Beyond the H100's 8-chip NVLink domain the chips go to pipeline stages (16 = tp 8 ×
    pp 2); test-13b's 40 heads split over 8 chips, not 16 (tp 8, pp 2 on a 16-chip
    domain); a device without a fabric has no split beyond one chip."""
    engine = compiled.model_engine
    llama = compiled.catalog.models[MODEL]
    test13 = compiled.catalog.models["test-13b"]
    assert Deployment(tp=8, pp=2) == chip_split(engine, llama, H100, 16)
    assert Deployment(tp=8, pp=2) == chip_split(engine, test13, "aws-trainium2", 16)
    assert ONE_CHIP == chip_split(engine, llama, "apple-m3-max", 1)
    assert chip_split(engine, llama, "apple-m3-max", 2) is None


def test_heaviest_decode_phase(compiled: Compiled) -> None:
    """The table's phase is the decode phase with the largest ledger on one chip: for
    Llama 3 70B b = 64, L = 4,096 (the same cache as b = 32, L = 8,192, more
    activations)."""
    site = Site.of(compiled, svg=False)
    assert "decode-b64-l4096" == deployment_phase(site, compiled.catalog.models[MODEL])
    assert "decode" == deployment_phase(site, compiled.catalog.models["test-13b"])


def test_row_matches_compile_at_the_same_deployment(
    compiled: Compiled, capsys: pytest.CaptureFixture[str]
) -> None:
    """The H100 row of Llama 3 70B's table is `compile --tp 4`'s row: 4 chips, the same
    tokens/s, time, time overlapped, limit and largest batch; the last cell is
    `compile --tp 8`'s tokens/s at the 8-chip domain."""
    site = Site.of(compiled, svg=False)
    model = compiled.catalog.models[MODEL]
    phase = deployment_phase(site, model)
    cells = deployment_cells(site, model, phase, H100)
    rows = {}
    for tp in (4, 8):
        code = main(
            [
                *("compile", "--specs", str(BUNDLED), "--model", MODEL, "--device", H100),
                *("--phase", phase, "--tp", str(tp), "--format", "json"),
            ]
        )
        assert 0 == code
        (rows[tp],) = json.loads(capsys.readouterr().out)["models"]
    row = rows[4]
    assert (4, 4, True) == (row["chips"], row["tp"], row["fits"])
    time = format_si(Fraction(row["time"]), "s")
    overlapped = format_si(Fraction(row["time_overlapped"]), "s")
    expected = (
        "8 chips",
        "4 (tp 4)",
        format_number(Fraction(row["tokens_per_second"]), 4),
        f"{time} ({overlapped})",
        "DRAM",
        f"{row['max_batch']:,}",
        f"{format_number(Fraction(rows[8]['tokens_per_second']), 4)} at 8 (tp 8)",
    )
    assert expected == cells
    assert ("3475", "109") == (cells[2], cells[5])


def test_interconnect_time_is_the_collective_steps(compiled: Compiled) -> None:
    """The interconnect's time of a pass (`collective_time`, which the deployments
    pages show) is the sum of its collective steps' times, and
    `time_overlapped` is the longer of it and the other steps'."""
    engine = compiled.model_engine
    r = engine.row(MODEL, "decode-b32-l8192", H100, "bf16", Deployment(tp=8))
    kernels = compiled.catalog.kernels
    collective = [s for s in r.steps if kernels[s.kernel].collective is not None]
    assert {"embed-allreduce", "attn-allreduce", "mlp-allreduce", "logits-allgather"} == {
        s.step for s in collective
    }
    talk = sum((s.time for s in collective), Fraction(0))
    assert talk == collective_time(r)
    assert max(r.time - talk, talk) == r.time_overlapped
    assert Fraction(0) == collective_time(engine.row(MODEL, "decode-b32-l8192", H100, "bf16"))


# --------------------------------------------------------------------------- pages


def test_model_page_has_a_deployments_row_per_shown_device(site: Path, compiled: Compiled) -> None:
    """The Deployments table has a row per device the Passes table shows; a device with
    no fabric and too little memory says so in place of every figure."""
    html = (site / "models" / f"{MODEL}.html").read_text("utf-8")
    rows = _rows(html, "deployments")
    shown = shown_devices(Site.of(compiled, svg=False), compiled.catalog.models[MODEL])
    names = [compiled.catalog.devices[d].name for d in shown]
    assert names == [r[0] for r in rows[1:]]
    h100 = next(r for r in rows if r[0] == "NVIDIA H100 SXM")
    assert ["8 chips", "4 (tp 4)", "3475"] == h100[1:4]
    m3 = next(r for r in rows if r[0].startswith("Apple M3 Max"))
    assert "no fabric stated" == m3[1]
    assert m3[2].startswith("does not fit")
    assert ["–"] * 5 == m3[3:]
    link = 'href="llama-3-70b/deployments.html#steps-at-each-deployment"'
    assert link in html


def test_named_deployments_page(site: Path, compiled: Compiled) -> None:
    """Every named deployment has its row: device, chips and degrees, and per phase the
    engine's tokens/s, time, time overlapped and interconnect share at that deployment;
    a pass that does not fit shows the chips it needs and no rate."""
    html = (site / "models" / MODEL / "deployments.html").read_text("utf-8")
    model = compiled.catalog.models[MODEL]
    rows = _rows(html, "named-deployments")
    assert list(model.deployments) == [r[0] for r in rows[1:]]
    engine = compiled.model_engine
    phases = list(model.phases)
    assert phases == rows[0][4:]
    for row in rows[1:]:
        named = model.deployments[row[0]]
        d = named.deployment
        assert [f"{d.total:,}", f"{d.tp} / {d.pp} / {d.ep}"] == row[2:4]
        for phase, cell in zip(phases, row[4:], strict=True):
            r = engine.row(MODEL, phase, named.device, "bf16", d)
            lines = cell.split("\n")
            if r.fits is False:
                assert f"does not fit (needs {r.needs_chips} chips)" == lines[0]
                assert "tokens/s" not in cell
            else:
                assert f"{format_number(r.tokens_per_second, 4)} tokens/s" == lines[0]
            assert f"time {format_si(r.time, 's')}" == lines[1]
            assert f"overlapped {format_si(r.time_overlapped, 's')}" == lines[2]
    tpu = next(r for r in rows if r[0] == "tpu-v5e-4x4")
    assert tpu[4 + phases.index("decode-b32-l8192")].startswith("does not fit (needs 64 chips)")


def test_named_step_times_mark_the_collectives(site: Path, compiled: Compiled) -> None:
    """The step table of the charted phase has a row per named deployment; the collective
    steps' cells carry the limit that holds them (`scale_up` on the H200's NVLink), and
    the chart's segments of each bar add up to that deployment's time."""
    html = (site / "models" / MODEL / "deployments.html").read_text("utf-8")
    rows = _rows(html, "steps-at-each-deployment")
    header = rows[0]
    assert "attn-allreduce (collective)" in header
    h200 = next(r for r in rows if r[0] == "hgx-h200-8")
    cell = h200[header.index("attn-allreduce (collective)")]
    assert cell.endswith("(scale_up)")
    spec = json.loads(
        (
            site / "models" / MODEL / "deployments.deployment-steps-decode-b1-l8192.vl.json"
        ).read_text("utf-8")
    )
    sums: dict[str, float] = {}
    for row in spec["datasets"]["steps"]:
        sums[row["device"]] = sums.get(row["device"], 0.0) + row["time"]
    named = compiled.catalog.models[MODEL].deployments["hgx-h200-8"]
    r = compiled.model_engine.row(MODEL, "decode-b1-l8192", named.device, "bf16", named.deployment)
    assert sums["hgx-h200-8 (8 × NVIDIA H200 SXM)"] == pytest.approx(float(r.time), rel=1e-9)


def test_named_deployment_note_comes_out_inert(site: Path) -> None:
    """Markup planted in a named deployment's note is shown as text."""
    html = (site / "models" / MODEL / "deployments.html").read_text("utf-8")
    assert "<script>alert" not in html
    assert not re.search(r"href=[\"']?\s*javascript:", html, re.I)
    assert PAYLOAD.replace('"', "'") in _text(html)


def test_no_page_shows_a_rate_for_a_pass_that_does_not_fit(site: Path) -> None:
    """On every model page and deployments page, no table cell that says a pass does not
    fit also carries a tokens/s figure."""
    pages = [*(site / "models").glob("*.html"), *(site / "models").glob("*/deployments.html")]
    assert pages
    for page in pages:
        for cell in re.findall(r"<td[^>]*>(.*?)</td>", page.read_text("utf-8"), re.S):
            if "does not fit" in cell:
                assert "tokens/s" not in cell, (page.name, cell)


# --------------------------------------------------------------------------- serve


def test_deployment_rows_are_kept_per_device_between_serve_rebuilds(
    compiled: Compiled,
) -> None:
    """In a `serve` session a second site of the same catalog reuses the model page
    (with its Deployments rows) and the deployments page (with its named-deployment
    entries), and renders the same pages."""
    from rooflinec.site.pages.deployments import deployments_page
    from rooflinec.site.pages.models import model_page

    serving = Session(keep_pages=True)
    texts = []
    for _ in range(2):
        site = Site.of(compiled, svg=False, session=serving)
        model = compiled.catalog.models[MODEL]
        page = deployments_page(site, model)
        assert page is not None
        texts.append((model_page(site, model)[0].markdown, page.markdown))
    reused, made = serving.pages.last_round()
    kinds = {k for k, _ in reused}
    assert {"model page", "deployments page"} <= kinds
    assert not {(k, d) for k, d in made if k in ("model page", "deployments page")}
    assert texts[0] == texts[1]
    assert reuse.reusing(site)


def test_fewest_chips_is_the_least_that_fits_for_every_model_and_device(
    compiled: Compiled,
) -> None:
    """For every bundled model's table phase on every device it runs on, the deployment
    found fits, and no smaller chip count in the search (with a split) does."""
    engine = compiled.model_engine
    site = Site.of(compiled, svg=False)
    checked = 0
    for model in compiled.catalog.models.values():
        phase = deployment_phase(site, model)
        for device in {k[2] for k in engine.keys(models=[model.id], declared_only=True)}:
            found = fewest_chips(engine, model, phase, device)
            if found.deployment is None:
                continue
            fit = engine.memory.fit(model, phase, model.precision, device, found.deployment)
            assert fit is not None and fit.fits, (model.id, device)
            chips = found.deployment.total
            for fewer in (n for n in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512) if n < chips):
                split = chip_split(engine, model, device, fewer)
                if split is None:
                    continue
                below = engine.memory.fit(model, phase, model.precision, device, split)
                assert below is None or not below.fits, (model.id, device, fewer)
            checked += 1
    assert checked > 50
