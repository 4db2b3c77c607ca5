"""Pages that list many devices: grouping by vendor across pages, family and form on each
row, the comparison chart's featured devices and vendor picker, and the table tools."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rooflinec.pipeline import checked
from rooflinec.site import charts
from rooflinec.site.pages.devices import device_index
from rooflinec.site.pages.grouping import group_by_vendor, vendor_slug
from rooflinec.site.pages.home import home_section
from rooflinec.site.pages.listing import pages as site_pages
from rooflinec.site.pages.model import Page, Site

REPO = Path(__file__).resolve().parents[1]
VENDORS = {"a1": "A", "a2": "A", "b1": "B", "c1": "C", "c2": "C", "c3": "C", "d1": "D"}


@pytest.fixture(scope="module")
def compiled() -> Any:
    result, diagnostics, _ = checked(REPO / "specs")
    assert result is not None, diagnostics
    return result


@pytest.fixture(scope="module")
def site(compiled: Any) -> Site:
    return Site.of(compiled, svg=False)


def test_vendor_slug_is_an_inert_anchor() -> None:
    """Only a-z, 0-9 and `-` survive, whatever the vendor's name holds."""
    assert "vendor-amd" == vendor_slug("AMD")
    assert "vendor-script-alert-1-script" == vendor_slug("<script>alert(1)</script>")
    assert "vendor-x" == vendor_slug("!!!")


def test_vendors_stay_whole_on_a_page_when_they_fit() -> None:
    """Runs of at most 4: A+B fill the first page, C (3) would not fit beside them."""
    groups = group_by_vendor(list(VENDORS), VENDORS.__getitem__, 4)
    assert [["a1", "a2", "b1"], ["c1", "c2", "c3", "d1"]] == groups.chunks
    assert [("A", 2, 1, "vendor-a"), ("B", 1, 1, "vendor-b")] == groups.vendors[:2]
    assert ("C", 3, 2, "vendor-c") == groups.vendors[2]
    assert {"a1": "vendor-a", "b1": "vendor-b", "c1": "vendor-c", "d1": "vendor-d"} == (
        groups.anchors
    )


def test_a_vendor_bigger_than_a_page_fills_pages_of_its_own() -> None:
    """Five devices of one vendor in runs of two: three pages, the anchor on the first."""
    ids = ["x1", "x2", "x3", "x4", "x5"]
    groups = group_by_vendor(ids, lambda d: "X", 2)
    assert [["x1", "x2"], ["x3", "x4"], ["x5"]] == groups.chunks
    assert [("X", 5, 1, "vendor-x")] == groups.vendors


def test_vendors_that_slug_alike_get_distinct_anchors() -> None:
    """`A.B` and `A B` both slug to `vendor-a-b`: the second gets a suffix."""
    groups = group_by_vendor(["p", "q"], {"p": "A.B", "q": "A B"}.__getitem__, 10)
    assert ["vendor-a-b", "vendor-a-b-2"] == [v[3] for v in groups.vendors]


def test_vendor_links_point_at_the_page_of_each_vendor(site: Site) -> None:
    """From page 1, a vendor on page 2 links to `x-2.md` and its anchor; escaped names."""
    vendors = {"a": "<b>A</b>", "b": "B"}
    groups = group_by_vendor(["a", "b"], vendors.__getitem__, 1)
    links = groups.links(Page("x.md", site), "x.md")
    assert "Vendors: [&lt;b&gt;A&lt;/b&gt;](#vendor-b-a-b) 1 · [B](x-2.md#vendor-b) 1" == links


def test_devices_index_lists_family_and_form_grouped_by_vendor(site: Site) -> None:
    """Every device once, with its family and form; each vendor's first row anchored."""
    (index,) = device_index(site)
    text = index.markdown
    assert "| device | vendor | family | form | kind |" in text
    assert "[NVIDIA H100 SXM](nvidia-h100-sxm.md) | NVIDIA | Hopper | SXM | gpu |" in text
    assert '<span id="vendor-nvidia"></span>NVIDIA' in text
    assert "[NVIDIA](#vendor-nvidia) 23" in text
    order = [
        text.index(f"[{name}")
        for name in ("AMD Instinct MI100]", "Apple M2 Ultra &#40;", "NVIDIA A10]")
    ]
    assert sorted(order) == order


def test_comparison_splits_between_vendors(site: Site) -> None:
    """Two comparison pages; each vendor's devices, matrix and ridge rows, on one page."""
    made = {page.path: page.markdown for page in site_pages(site) if "comparison" in page.path}
    assert ["comparison-2.md", "comparison.md"] == sorted(made)
    first, second = made["comparison.md"], made["comparison-2.md"]
    assert "AMD Instinct MI300X" in first and "AMD Instinct MI300X" not in second
    assert "NVIDIA H100 SXM" in second and "NVIDIA H100 SXM" not in first
    assert "[NVIDIA](comparison-2.md#vendor-nvidia) 23" in first


def test_featured_devices_take_each_vendors_fastest_first(compiled: Any) -> None:
    """Round by round over vendors, fastest first, at most the limit."""
    devices = list(compiled.catalog.devices)
    featured = charts.featured_devices(compiled, devices, "bf16", limit=30)
    vendors = [compiled.catalog.devices[d].vendor for d in featured]
    first_round = list(dict.fromkeys(vendors))
    assert first_round == vendors[: len(first_round)]
    nvidia = [d for d in featured if compiled.catalog.devices[d].vendor == "NVIDIA"]
    peaks = [compiled.devices[d].peaks["bf16"] for d in nvidia]
    assert sorted(peaks, reverse=True) == peaks
    assert 12 == len(charts.featured_devices(compiled, devices, "bf16"))


def test_comparison_chart_draws_the_featured_and_offers_every_vendor(compiled: Any) -> None:
    """One data row per device; a select of vendors; the filter keeps the featured ones
    until a vendor is picked."""
    devices = list(compiled.catalog.devices)
    spec = charts.comparison_chart(compiled, devices, "bf16").spec
    rows = spec["datasets"]["roofs"]
    assert len({row["series"] for row in rows}) == len(rows)
    assert charts.MAX_LINES == sum(1 for row in rows if row["featured"])
    pick = spec["params"][0]
    assert "show_vendor" == pick["name"] and "" == pick["value"]
    assert ["", "AMD", "Apple"] == pick["bind"]["options"][:3]
    first = spec["layer"][0]["transform"][0]
    assert {"filter": "show_vendor === '' ? datum.featured : datum.vendor === show_vendor"} == (
        first
    )


def test_home_table_has_the_devices_the_chart_can_show(site: Site) -> None:
    """The home table lists every device with a BF16 peak, with its family and form."""
    home = home_section(site)
    assert "| device | vendor | family | form | sustained peak |" in home.markdown
    assert "| NVIDIA | Hopper | SXM |" in home.markdown
    with_peak = [d for d in site.catalog.devices if "bf16" in site.compiled.devices[d].peaks]
    rows = [line for line in home.markdown.splitlines() if line.startswith("| [")]
    assert len(with_peak) == len(rows)
