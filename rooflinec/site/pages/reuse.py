"""Generated pages kept between the builds of one `serve` session, keyed by exact inputs.

A page about one device (its page, its audit pages) is made from that device's spec (its
values and its loaded document, whose lines the audit trails cite) and from what every
such page reads: the site's options and date, the specs folder, the precisions, kernels,
methods and models (names, links, cases, the model rows on the device) and the list of
devices. Nothing of another device goes into it. The key is those values themselves,
compared with `==` (catalog values are frozen dataclasses compared field by field): no
hash, no file time. An edit to one device's spec makes that device's pages again and
reuses the others'; an edit to anything else every device page reads makes them all again.

The kept pages live in the build's `Session` (`site.session.pages`), on only in a
`serve` session (`Session.keep_pages`): a build of a published version (with its changes
page) never reuses, and each build starts a new session. The page limits (`site.limits`)
are among the shared inputs.

Besides whole pages, `device_memo` keeps values worked out from one device's results
(crossover cells, texts of its rows) under the same rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from rooflinec.site.pages.model import Site

T = TypeVar("T")

__all__ = ["KeptPages", "device_memo", "for_device", "reusing"]


class KeptPages:
    """Device pages and per-device values kept between the builds of one `serve` session
    (a field of `rooflinec.site.session.Session`): at most one entry per kind and device."""

    def __init__(self) -> None:
        # The shared inputs of the kept pages, and the site they were last checked for.
        self.world: tuple[Any, ...] | None = None
        self.checked: Site | None = None
        # (kind, device id) -> (the device's own inputs, the value made from them), of the
        # builds since the shared inputs last changed; entries a build does not ask for
        # are dropped.
        self.kept: dict[tuple[str, str], tuple[tuple[Any, ...], Any]] = {}
        self.used: dict[tuple[str, str], tuple[tuple[Any, ...], Any]] = {}
        self.reused: set[tuple[str, str]] = set()  # this round's entries from an earlier one

    def last_round(self) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
        """(the (kind, device) entries the last build reused, those it made afresh)."""
        return set(self.reused), set(self.used) - self.reused

    def start(self, site: Site) -> None:
        """Check `site`'s shared inputs against the kept pages' (dropping them all when
        they differ) and start a round, in which only the entries asked for are kept."""
        if self.checked is site:
            return
        world = _shared_inputs(site)
        if self.world == world:
            # A new round: what the last one used is what may be reused now.
            self.kept = dict(self.used) if self.used else dict(self.kept)
        else:
            self.kept = {}
            self.world = world
        self.used = {}
        self.reused = set()
        self.checked = site


def _shared_inputs(site: Site) -> tuple[Any, ...]:
    """What every page about one device reads besides that device's spec."""
    catalog = site.catalog
    return (
        site.default_device,
        site.chart_precision,
        site.svg,
        site.env,
        site.catalog_date,
        site.limits,
        catalog.root,
        catalog.precisions,
        catalog.kernels,
        catalog.methods,
        catalog.models,
        tuple(catalog.devices),
    )


def _start(site: Site) -> KeptPages | None:
    """The session's kept pages when `site` may reuse them (a round started), else None."""
    session = site.session
    if not session.keep_pages or site.changes is not None:
        return None
    session.pages.start(site)
    return session.pages


def reusing(site: Site) -> bool:
    """Whether the pages of `site` may be kept for later builds (a `serve` session)."""
    return _start(site) is not None


def for_device(site: Site, kind: str, device_id: str, make: Callable[..., T], *args: Any) -> T:
    """`make(*args)`, or what it returned for the same device spec and shared inputs in
    an earlier build of this session (`args` are of this build: the same values)."""
    pages = _start(site)
    if pages is None:
        return make(*args)
    key = (kind, device_id)
    used = pages.used.get(key)
    if used is not None:  # asked before in this build: the same inputs
        return used[1]  # type: ignore[no-any-return]
    device = site.catalog.devices[device_id]
    own = (device, device.document)
    hit = pages.kept.get(key)
    if hit is not None and hit[0] == own:
        value: T = hit[1]
        pages.reused.add(key)
    else:
        value = make(*args)
    pages.used[key] = (own, value)
    return value


def device_memo(site: Site, kind: str, device_id: str) -> dict[Any, Any]:
    """A dict for values worked out from one device's results (texts of its rows, say),
    keyed by whatever else they read: kept between `serve` rebuilds like `for_device`,
    else one per site (a build asks for some of them more than once)."""
    if _start(site) is not None:
        return for_device(site, kind, device_id, dict)
    return site.memos.setdefault((kind, device_id), {})
