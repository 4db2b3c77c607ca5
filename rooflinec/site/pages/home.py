"""The generated part of the home page."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rooflinec.site import charts
from rooflinec.site.pages.common import MAX_HOME_DEVICES, GeneratedPage, Page
from rooflinec.site.pages.parts import device_row

if TYPE_CHECKING:
    from rooflinec.site.pages.model import Site


def home_section(site: Site, path: str = "index.md") -> GeneratedPage:
    """The generated part of the home page: the cross-device comparison."""
    devices = [
        d for d in site.catalog.devices if site.chart_precision in site.compiled.devices[d].peaks
    ][:MAX_HOME_DEVICES]
    page = Page(path, site)
    chart = charts.comparison_chart(site.compiled, devices, site.chart_precision)
    rows = [device_row(site, page, d) for d in devices]
    text = site.render(
        "home.md.j2",
        page,
        chart=chart,
        rows=rows,
        shown=len(devices),
        total=len(site.catalog.devices),
        precision=site.catalog.precisions[site.chart_precision],
    )
    return GeneratedPage(path, "Home", text, page.slots, page.assets)
