"""The other printed values a device page shows: a few, fairly spread over its figures, and
a link to the audit trail for the rest, so a device with many conflicts keeps a small page."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from rooflinec.catalog import Alternative
from rooflinec.errors import Location
from rooflinec.pipeline import checked
from rooflinec.site.pages.audit import audit_layout
from rooflinec.site.pages.devices import (
    DEVICE_ALTERNATIVES,
    DEVICE_ALTERNATIVES_TEXT,
    shown_alternatives,
)
from rooflinec.site.pages.listing import pages as site_pages
from rooflinec.site.pages.model import Site

REPO = Path(__file__).resolve().parents[1]


def alternative(quote: str) -> Alternative:
    return Alternative(
        value=Fraction(1),
        text=quote,
        sparsity=None,
        pipe=None,
        source="s",
        quote=quote,
        note=None,
        location=Location("spec.yaml"),
    )


def texts(chosen: list[list[Alternative]]) -> list[list[str]]:
    return [[a.text for a in figure] for figure in chosen]


def test_every_figure_shows_one_before_any_shows_two() -> None:
    """Four rows over figures of 3, 1 and 2 alternatives: a first of each, then a second."""
    figures = [
        [alternative("a1"), alternative("a2"), alternative("a3")],
        [alternative("b1")],
        [alternative("c1"), alternative("c2")],
    ]
    assert [["a1", "a2"], ["b1"], ["c1"]] == texts(shown_alternatives(figures, rows=4, text=100))


def test_a_quote_too_long_for_the_text_left_is_skipped() -> None:
    """A long quote that does not fit is left for the audit trail; shorter ones still fit."""
    figures = [[alternative("x" * 30), alternative("y" * 5)], [alternative("z" * 8)]]
    assert [["y" * 5], ["z" * 8]] == texts(shown_alternatives(figures, rows=10, text=20))


def test_no_alternatives_shows_none() -> None:
    """Figures without alternatives (or no figures) show nothing."""
    assert [[], []] == shown_alternatives([[], []])
    assert [] == shown_alternatives([])


@pytest.fixture(scope="module")
def site() -> Site:
    compiled, diagnostics, _ = checked(REPO / "specs")
    assert compiled is not None, diagnostics
    return Site.of(compiled, svg=False)


def _alternatives(device: Any) -> dict[str, int]:
    """Per audit field (`compute.bf16`, `memory.dram`), the device's alternatives."""
    counts = {f"compute.{p}": len(peak.figure.alternatives) for p, peak in device.peaks.items()}
    counts |= {f"memory.{lv}": len(m.bandwidth.alternatives) for lv, m in device.memory.items()}
    return counts


def test_the_device_with_most_alternatives_links_the_rest_to_its_audit(site: Site) -> None:
    """The bundled device with the most other printed values shows at most the page's share
    of them; every figure with values left out links to its section of the audit trail."""
    device = max(site.catalog.devices.values(), key=lambda d: sum(_alternatives(d).values()))
    total = sum(_alternatives(device).values())
    assert DEVICE_ALTERNATIVES < total
    page = {p.path: p for p in site_pages(site)}[f"devices/{device.id}.md"].markdown
    figures = [p.figure for p in device.peaks.values()]
    figures += [m.bandwidth for m in device.memory.values()]
    shown = shown_alternatives([f.alternatives for f in figures])
    rows = sum(len(s) for s in shown)
    assert DEVICE_ALTERNATIVES == rows
    assert DEVICE_ALTERNATIVES_TEXT >= sum(
        len(a.quote or "") + len(a.note or "") for s in shown for a in s
    )
    fields = list(_alternatives(device))
    hidden = {
        field: count - len(s)
        for field, count, s in zip(fields, _alternatives(device).values(), shown, strict=True)
        if count > len(s)
    }
    assert hidden
    for field in hidden:
        target = audit_layout(site).target(device.id, field)
        assert f"({target.removeprefix('devices/')})" in page, field
    compute_hidden = sum(n for f, n in hidden.items() if f.startswith("compute."))
    if compute_hidden:
        assert re.search(rf"\n{compute_hidden} more, with their quotes, on the audit trail: ", page)
    # The summaries still count every value, shown or not.
    compute_total = sum(n for f, n in _alternatives(device).items() if f.startswith("compute."))
    assert f"<summary>Other printed values ({compute_total}), not used in the results" in page


def test_a_device_with_few_alternatives_shows_them_all(site: Site) -> None:
    """A device whose values fit the page's share shows every one and no audit-trail line."""
    device = site.catalog.devices["intel-gaudi3"]
    total = sum(_alternatives(device).values())
    assert 0 < total <= DEVICE_ALTERNATIVES
    page = {p.path: p for p in site_pages(site)}[f"devices/{device.id}.md"].markdown
    assert "with their quotes, on the" not in page
