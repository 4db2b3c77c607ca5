"""Every generated page of the site, in one list."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rooflinec.site.pages.accuracy import accuracy_pages
from rooflinec.site.pages.audit import audit_pages
from rooflinec.site.pages.calculator import calculator_page
from rooflinec.site.pages.catalog_pages import changelog_pages, comparison_pages, glossary_page
from rooflinec.site.pages.changes import changes_pages
from rooflinec.site.pages.common import GeneratedPage
from rooflinec.site.pages.deployments import deployments_page
from rooflinec.site.pages.devices import device_index, device_page
from rooflinec.site.pages.frontier import frontier_pages
from rooflinec.site.pages.kernels import kernel_index, kernel_page
from rooflinec.site.pages.methods import method_examples_pages, method_models_page, method_page
from rooflinec.site.pages.models import model_index, model_page, tokens_pages
from rooflinec.site.pages.reuse import for_device
from rooflinec.site.pages.sources import sources_pages

if TYPE_CHECKING:
    from rooflinec.site.pages.model import Site


def pages(site: Site) -> list[GeneratedPage]:
    """Every generated page (the home page's section aside: `home.home_section`)."""
    catalog = site.catalog
    out: list[GeneratedPage] = []
    out += device_index(site)
    # Kept between `serve` rebuilds for each device whose spec did not change.
    out += [for_device(site, "page", d.id, device_page, site, d) for d in catalog.devices.values()]
    out += kernel_index(site)
    out += [kernel_page(site, k) for k in catalog.kernels.values()]
    out += model_index(site)
    out += [p for m in catalog.models.values() for p in model_page(site, m)]
    out += [p for m in catalog.models.values() if (p := deployments_page(site, m))]
    if site.frontier:
        out += [p for m in catalog.models.values() for p in frontier_pages(site, m)]
    out += tokens_pages(site)
    out += accuracy_pages(site)
    out.append(calculator_page(site))
    out += comparison_pages(site)
    out += [method_page(site, m) for m in catalog.methods.values()]
    out += [p for m in catalog.methods.values() if (p := method_models_page(site, m))]
    out += [p for m in catalog.methods.values() for p in method_examples_pages(site, m)]
    out += audit_pages(site)
    out += sources_pages(site)
    out.append(glossary_page(site))
    out += changelog_pages(site)
    out += changes_pages(site)
    return out
