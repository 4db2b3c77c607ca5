"""Parts several pages show: a device's summary row, a spec's source list, a paged index."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rooflinec.catalog import Source
from rooflinec.engine.terms import COMPUTE
from rooflinec.formatting import format_si
from rooflinec.site.escape import external_link
from rooflinec.site.pages import reuse
from rooflinec.site.pages.common import GeneratedPage, chunks_of
from rooflinec.site.pages.model import Page, split_pages
from rooflinec.site.pages.reuse import device_memo

if TYPE_CHECKING:
    from rooflinec.site.pages.model import Site


def device_row(site: Site, page: Page, device_id: str, anchor: str | None = None) -> dict[str, Any]:
    """One device's row of the devices index and the home page's table; `anchor`, an id
    made of `a-z0-9-` (see `grouping.vendor_slug`), marks the first row of a vendor.

    Kept per device (`reuse.device_memo`, by the page and the anchor): the row reads the
    device's spec and results, and what every device page reads."""
    memo = device_memo(site, "index rows", device_id)
    key = (page.path, anchor)
    row = memo.get(key)
    if row is None:
        row = memo[key] = _device_row(site, page, device_id, anchor)
    return row


def _device_row(site: Site, page: Page, device_id: str, anchor: str | None) -> dict[str, Any]:
    device = site.catalog.devices[device_id]
    fig = site.compiled.devices[device_id]
    p = site.chart_precision
    dram = device.memory.get("dram")
    declared = reuse.declared(site)[device_id]
    bound = [r for r in declared if r.limited_by != COMPUTE]
    return {
        "link": page.device_link(device_id),
        "anchor": anchor,
        "vendor": device.vendor,
        "family": device.family or "–",
        "form": device.form or "–",
        "kind": device.kind or "–",
        "peak": site.rate(fig.peaks[p], p) if p in fig.peaks else "no peak",
        "memory": dram.label if dram else "–",
        "bandwidth": format_si(fig.bandwidths["dram"], "B/s") if "dram" in fig.bandwidths else "–",
        "capacity": format_si(dram.capacity.per_chip, "B")
        if dram and dram.capacity is not None
        else "–",
        "ridge": site.intensity(fig.ridges[p]["dram"], p)
        if p in fig.peaks and "dram" in fig.bandwidths
        else "–",
        "memory_bound": f"{len(bound)} of {len(declared)}",
        "precisions": ", ".join(site.catalog.precisions[q].label for q in fig.peaks),
    }


def paged_index(
    site: Site,
    ids: list[str],
    first: str,
    title: str,
    template: str,
    rows_of: Callable[[Page, Sequence[str]], list[dict[str, Any]]],
    chunks: Sequence[Sequence[str]] | None = None,
    **context: Any,
) -> list[GeneratedPage]:
    """An index split into numbered pages (`first`, then `-2`, ...), each with a pager:
    `chunks` of `ids` when given, else runs of `site.limits.per_index_page`."""
    return split_pages(
        site,
        first,
        chunks if chunks is not None else chunks_of(ids, site.limits.per_index_page),
        lambda n: title,
        lambda page, n, chunk, pager: site.render(
            template,
            page,
            rows=rows_of(page, chunk),
            pager=pager,
            total=len(ids),
            **context,
        ),
    )


def sources_context(
    site: Site, page: Page, owner: str, sources: dict[str, Source], anchor: str
) -> list[dict[str, Any]]:
    """A spec's sources as its page lists them, each with the figures citing it."""
    out = []
    for sid, s in sources.items():
        out.append(
            {
                "id": sid,
                "anchor": anchor.rpartition("#")[2] + sid,
                "title": external_link(s.title, s.url),
                "url": s.url,
                "publisher": s.publisher,
                "kind": s.kind,
                "read": s.read,
                "published": s.published,
                "note": s.note,
                "cited": site.citations.get((owner, sid), []),
            }
        )
    return out
