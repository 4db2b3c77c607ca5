"""The generated part of the home page."""

from __future__ import annotations

from rooflinec.site import charts
from rooflinec.site.pages.base import PageModel
from rooflinec.site.pages.common import MAX_HOME_DEVICES, GeneratedPage, _Page


class HomePages(PageModel):
    """The home page's cross-device comparison."""

    def home_section(self, path: str = "index.md") -> GeneratedPage:
        """The generated part of the home page: the cross-device comparison."""
        devices = [
            d
            for d in self.catalog.devices
            if self.chart_precision in self.compiled.devices[d].peaks
        ][:MAX_HOME_DEVICES]
        page = _Page(path, self)
        chart = charts.comparison_chart(self.compiled, devices, self.chart_precision)
        rows = [self._device_row(page, d) for d in devices]
        text = self._render(
            "home.md.j2",
            page,
            chart=chart,
            rows=rows,
            shown=len(devices),
            total=len(self.catalog.devices),
            precision=self.catalog.precisions[self.chart_precision],
        )
        return GeneratedPage(path, "Home", text, page.slots, page.assets)
