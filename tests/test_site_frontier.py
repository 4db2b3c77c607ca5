"""The frontier on the site (`rooflinec.site.pages.frontier`): a model's frontier page
answers as `rooflinec plan` does, its chart is Vega-Lite with the per-user slider, spec
text stays inert, the reader's price is labelled, and the comparison page summarises it."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from rooflinec.cli.main import main
from rooflinec.engine.compiler import Compiled
from rooflinec.formatting import format_number
from rooflinec.pipeline import compiled_or_diagnostics
from rooflinec.site.pages.catalog_pages import comparison_pages
from rooflinec.site.pages.common import frontier_path
from rooflinec.site.pages.frontier import (
    SHOWN_TARGETS,
    _frontier_page,
    frontier_pages,
    model_frontiers,
)
from rooflinec.site.pages.model import Site
from rooflinec.site.pages.models import shown_devices

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / "specs"
MODEL = "test-13b"
REQUEST = "chat-1k"
H100 = "nvidia-h100-sxm"


@pytest.fixture(scope="module")
def compiled() -> Compiled:
    found, _ = compiled_or_diagnostics(BUNDLED)
    assert found is not None
    return found


@pytest.fixture(scope="module")
def site(compiled: Compiled) -> Site:
    return Site.of(compiled, svg=False, prices={H100: Fraction(5, 2)}, frontier=True)


def _plan(devices: list[str], target: int, prices: Sequence[str] = ()) -> dict[str, Any]:
    """`rooflinec plan --format json`, run in process through the command line's main."""
    out = io.StringIO()
    argv = ["plan", "--model", MODEL, "--request", REQUEST, "--min-user-rate", str(target)]
    argv += [a for d in devices for a in ("--device", d)]
    argv += [a for p in prices for a in ("--price", p)]
    argv += ["--specs", str(BUNDLED), "--format", "json"]
    assert main(argv, out) == 0
    data: dict[str, Any] = json.loads(out.getvalue())
    return data


def test_best_deployments_equal_plans_answer(site: Site, compiled: Compiled) -> None:
    """At 20 and 50 tokens/s per user, each shown device's best deployment on the page
    (chips, tp, pp, ep, batch, tokens/s per chip, tokens/s per user) is the one `plan
    --min-user-rate R` answers for the same devices and the same reader's price, and the
    frontier's points are plan's frontier."""
    model = compiled.catalog.models[MODEL]
    devices = shown_devices(site, model)
    entries = model_frontiers(site, model)[REQUEST]
    page = frontier_pages(site, model)[list(model.requests).index(REQUEST)]
    assert frontier_path(MODEL, REQUEST) == page.path
    for i, target in enumerate(SHOWN_TARGETS):
        answer = _plan(devices, target, [f"{H100}=2.5USD/h"])
        assert devices == [p["device"] for p in answer["plans"]]
        for entry, plan in zip(entries, answer["plans"], strict=True):
            row = entry.best[i]
            if plan["chips"] is None:
                assert row.deployment is None
                assert f"none meets {target} tokens/s per user" in row.none
                continue
            expected = (plan["chips"], plan["tp"], plan["pp"], plan["ep"], plan["batch"])
            assert expected == row.deployment
            chip = format_number(Fraction(plan["tokens_per_second_per_chip"]), 4)
            user = format_number(Fraction(plan["tokens_per_second_per_user"]), 4)
            assert (chip, user) == (row.cells[3], row.cells[4])
            assert f"| **{chip}** | {user} |" in page.markdown
        frontier = {
            (f["device"], f["chips"], f["tp"], f["pp"], f["ep"], f["batch"])
            for f in answer["frontier"]
        }
        shown = {
            (e.device, *(int(x) for x in _split(p["deployment"])), p["batch"])
            for e in entries
            for p in e.points
        }
        assert frontier == shown


def _split(text: str) -> tuple[int, int, int, int]:
    """`8 (tp 8, pp 2)` -> (8, 8, 2, 1)."""
    chips, _, rest = text.partition(" ")
    degrees = {"tp": 1, "pp": 1, "ep": 1}
    for part in rest.strip("()").split(", "):
        if part:
            name, value = part.split(" ")
            degrees[name] = int(value)
    return int(chips.replace(",", "")), degrees["tp"], degrees["pp"], degrees["ep"]


def test_prices_are_labelled_and_energy_is_a_reference(site: Site, compiled: Compiled) -> None:
    """The reader's price shows as the reader's; a device without one shows "no quoted
    price"; J/token is labelled a reference figure at board power, not a bound."""
    page = frontier_pages(site, compiled.catalog.models[MODEL])[0]
    text = page.markdown
    h100 = next(line for line in text.splitlines() if line.startswith("| [NVIDIA H100 SXM]"))
    assert "(reader&#39;s price)" in h100 or "&#40;reader&#39;s price&#41;" in h100
    assert "no quoted price" in text
    assert "J/token (at board power&#58; a reference figure, not a bound)" in text


def test_chart_is_vega_lite_with_the_per_user_slider(site: Site, compiled: Compiled) -> None:
    """Each request shape's chart is a layered Vega-Lite spec: a line per device with both
    axes titled with their units, a `min_user_rate` param bound to a range input starting
    at 20, the best-point layer filtered by it, and a row per frontier point."""
    model = compiled.catalog.models[MODEL]
    entries = model_frontiers(site, model)
    for request, page in zip(model.requests, frontier_pages(site, model), strict=True):
        spec = json.loads(page.assets[f"models/{MODEL}/frontier-{request}.frontier.vl.json"])
        assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
        [param] = spec["params"]
        assert ("min_user_rate", 20, "range") == (
            param["name"],
            param["value"],
            param["bind"]["input"],
        )
        line, marks, rule = spec["layer"]
        assert "line" == line["mark"]["type"]
        assert "Tokens/s per user" in line["encoding"]["x"]["axis"]["title"]
        assert "Tokens/s per chip" in line["encoding"]["y"]["axis"]["title"]
        assert {"filter": "datum.user >= min_user_rate"} == marks["transform"][0]
        assert "rule" == rule["mark"]["type"]
        rows = spec["datasets"]["frontier"]
        assert sum(len(e.points) for e in entries[request]) == len(rows)
        assert {"device", "user", "chip", "deployment", "batch"} <= rows[0].keys()


def test_spec_text_stays_inert(site: Site, compiled: Compiled) -> None:
    """A model name with Markdown and HTML in it is escaped on the frontier page."""
    model = compiled.catalog.models[MODEL]
    planted = replace(model, name="<script>x</script> [a](javascript:1) | b")
    page = _frontier_page(site, planted, REQUEST)
    assert "<script>" not in page.markdown
    assert "](javascript:" not in page.markdown
    assert "&lt;script&gt;" in page.markdown


def test_comparison_links_each_models_frontier(site: Site, compiled: Compiled) -> None:
    """The comparison page has a row per model and request shape, linking its frontier
    page. (Every bundled model's frontier is worked out here.)"""
    first = comparison_pages(site)[0]
    for model in compiled.catalog.models.values():
        for request in model.requests:
            assert f"(models/{model.id}/frontier-{request}.md)" in first.markdown
            assert f"{model.name}, {request}".replace("(", "&#40;").replace(")", "&#41;") in (
                first.markdown
            )
