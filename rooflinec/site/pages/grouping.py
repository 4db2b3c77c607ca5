"""Devices grouped by vendor across numbered pages, and the links that find each group.

Pages that list many devices (the devices index, the comparison) order them by vendor
(vendors in the catalog's order, devices in the catalog's order within a vendor) and
keep each vendor's devices on one page when they fit on one, so a reader who filters a
page to one vendor sees all of its devices. Without JavaScript, a line of links leads to
each vendor's first row, on whichever page it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markupsafe import Markup

from rooflinec.site.escape import md
from rooflinec.site.pages.common import numbered
from rooflinec.site.pages.model import Page

_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def vendor_slug(vendor: str) -> str:
    """`vendor-amd` for `AMD`: an anchor id made only of `a-z`, `0-9` and `-`."""
    return "vendor-" + (_NOT_SLUG.sub("-", vendor.lower()).strip("-") or "x")


@dataclass(frozen=True)
class VendorGroups:
    """Device ids packed into pages by vendor, and the anchor of each vendor's first row."""

    chunks: list[list[str]]
    vendors: list[tuple[str, int, int, str]]  # vendor, devices, page number, anchor
    anchors: dict[str, str]  # first device id of each vendor -> its anchor

    def links(self, page: Page, first: str) -> Markup:
        """`Vendors: [AMD](#vendor-amd) 11 · [NVIDIA](index-2.md#vendor-nvidia) 23`."""
        if len(self.vendors) < 2:
            return Markup("")
        items = [
            f"[{md(vendor)}]({page.href(numbered(first, n) + '#' + anchor)}) {count}"
            for vendor, count, n, anchor in self.vendors
        ]
        return Markup("Vendors: " + " · ".join(items))


def group_by_vendor(ids: Sequence[str], vendor_of: Callable[[str], str], size: int) -> VendorGroups:
    """`ids` ordered by vendor and packed into runs of at most `size`.

    A vendor's devices start a new run when they would not fit in the current one; a
    vendor with more than `size` devices fills whole runs of its own."""
    groups: dict[str, list[str]] = {}
    for ident in ids:
        groups.setdefault(vendor_of(ident), []).append(ident)
    chunks: list[list[str]] = []
    current: list[str] = []
    vendors: list[tuple[str, int, int, str]] = []
    anchors: dict[str, str] = {}
    used: set[str] = set()
    for vendor, members in groups.items():
        if current and len(current) + len(members) > size:
            chunks.append(current)
            current = []
        anchor = vendor_slug(vendor)
        while anchor in used:  # two vendors that differ only in punctuation or case
            anchor += "-2"
        used.add(anchor)
        anchors[members[0]] = anchor
        vendors.append((vendor, len(members), len(chunks) + 1, anchor))
        for ident in members:
            if len(current) == size:
                chunks.append(current)
                current = []
            current.append(ident)
    if current or not chunks:
        chunks.append(current)
    return VendorGroups(chunks, vendors, anchors)
