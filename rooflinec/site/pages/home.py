"""The generated part of the home page."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rooflinec.site import charts
from rooflinec.site.pages.common import MAX_HOME_DEVICES, GeneratedPage
from rooflinec.site.pages.grouping import group_by_vendor
from rooflinec.site.pages.model import Page
from rooflinec.site.pages.parts import device_row

if TYPE_CHECKING:
    from rooflinec.site.pages.model import Site


def home_section(site: Site, path: str = "index.md") -> GeneratedPage:
    """The generated part of the home page: the cross-device comparison.

    The chart draws the featured devices (each vendor's fastest) and offers every vendor's
    devices in a select box; the table lists the same devices, by vendor. At most
    `MAX_HOME_DEVICES` are on the page, featured ones first."""
    p = site.chart_precision
    cat = site.catalog
    with_peak = [d for d in cat.devices if p in site.compiled.devices[d].peaks]
    featured = charts.featured_devices(site.compiled, with_peak, p)
    chosen = set(list(dict.fromkeys([*featured, *with_peak]))[:MAX_HOME_DEVICES])
    groups = group_by_vendor(
        [d for d in with_peak if d in chosen], lambda d: cat.devices[d].vendor, len(chosen) or 1
    )
    devices = [d for chunk in groups.chunks for d in chunk]
    page = Page(path, site)
    chart = charts.comparison_chart(site.compiled, devices, p, featured)
    rows = [device_row(site, page, d) for d in devices]
    text = site.render(
        "home.md.j2",
        page,
        chart=chart,
        rows=rows,
        shown=len(devices),
        featured=len(featured),
        total=len(cat.devices),
        precision=cat.precisions[p],
    )
    return GeneratedPage(path, "Home", text, page.slots, page.assets)
