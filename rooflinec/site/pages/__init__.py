"""The page model: compiled results in, generated Markdown pages (and their assets) out.

`SiteModel` turns a `Compiled` catalog into `GeneratedPage`s. Each page is rendered from
a jinja2 template shipped with the package, with a context of plain values: numbers are
formatted here with `rooflinec.formatting`, spec text stays raw and is escaped by the
template environment (see `escape`), trusted HTML (charts, MathML) goes through the
page's `Slots`. Nothing here touches mkdocs, so the model is tested without a build.

Pages stay small whatever the catalog size: index pages are split into numbered pages
and per-device and per-kernel tables show at most a fixed number of rows, pointing to
the full results download for the rest.

One module per kind of page, each a mixin on `base.PageModel`: `home`, `devices`,
`kernels`, `methods`, `catalog_pages` (comparison, sources, glossary, changelog) and
`downloads`; `common` holds the limits, the page value, the template environment and
the per-page helpers. `SiteModel` combines them.
"""

from __future__ import annotations

from rooflinec.site.pages.catalog_pages import CatalogPages
from rooflinec.site.pages.common import HOME_MARKER as HOME_MARKER
from rooflinec.site.pages.common import GeneratedPage, environment
from rooflinec.site.pages.common import _numbered as _numbered
from rooflinec.site.pages.common import _Page as _Page
from rooflinec.site.pages.common import _pages_by_size as _pages_by_size
from rooflinec.site.pages.devices import DevicePages
from rooflinec.site.pages.downloads import DownloadFiles
from rooflinec.site.pages.home import HomePages
from rooflinec.site.pages.kernels import KernelPages
from rooflinec.site.pages.methods import MethodPages

__all__ = ["GeneratedPage", "SiteModel", "environment"]

PER_INDEX_PAGE = 100  # rows per devices or kernels index page (read through `_index_size`)


class SiteModel(HomePages, DevicePages, KernelPages, MethodPages, CatalogPages, DownloadFiles):
    """Every generated page of the site, from one compiled catalog."""

    def pages(self) -> list[GeneratedPage]:
        out: list[GeneratedPage] = []
        out += self.device_index()
        out += [self.device_page(d) for d in self.catalog.devices.values()]
        out += self.kernel_index()
        out += [self.kernel_page(k) for k in self.catalog.kernels.values()]
        out.append(self.comparison_page())
        out += [self.method_page(m) for m in self.catalog.methods.values()]
        out += self.audit.pages()
        out += self.sources_pages()
        out.append(self.glossary_page())
        out += self.changelog_pages()
        from rooflinec.site.changes import changes_pages

        out += changes_pages(self, self.changes)
        return out
