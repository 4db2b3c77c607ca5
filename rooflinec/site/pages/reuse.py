"""Generated pages kept between the builds of one `serve` session, keyed by exact inputs.

A page about one device (its page, its audit pages) is made from that device's spec (its
values and its loaded document, whose lines the audit trails cite) and from what every
such page reads: the site's options and date, the specs folder, the precisions, kernels,
methods and models (names, links, cases, the model rows on the device) and the list of
devices. Nothing of another device goes into it. The key is those values themselves,
compared with `==` (catalog values are frozen dataclasses compared field by field): no
hash, no file time. An edit to one device's spec makes that device's pages again and
reuses the others'; an edit to anything else every device page reads makes them all again.

Off unless a session turns it on (`rooflinec serve`, through `keeping_pages`): a build
of a published version (with its changes page) never reuses, and each `rooflinec build`
is its own process anyway. Page limits are module constants that tests lower, so reuse
is on only where they do not move.

Besides whole pages, `device_memo` keeps values worked out from one device's results
(crossover cells, texts of its rows) under the same rule.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from rooflinec.site.pages.model import Site

T = TypeVar("T")

__all__ = ["device_memo", "for_device", "keeping_pages", "last_round", "reusing", "set_enabled"]

_ENABLED: list[bool] = [False]
# The shared inputs of the kept pages, and the site they were last checked for.
_WORLD: list[tuple[Any, ...]] = []
_CHECKED: list[Site] = []
# (kind, device id) -> (the device's own inputs, the value made from them), of the builds
# since the shared inputs last changed; entries a build does not ask for are dropped.
_KEPT: dict[tuple[str, str], tuple[tuple[Any, ...], Any]] = {}
_USED: dict[tuple[str, str], tuple[tuple[Any, ...], Any]] = {}
_REUSED: set[tuple[str, str]] = set()  # the entries of this round taken from an earlier one


def set_enabled(on: bool) -> None:
    """Keep pages between builds of this process (on) or not (off: everything dropped)."""
    _ENABLED[0] = on
    if not on:
        _forget()


@contextlib.contextmanager
def keeping_pages() -> Iterator[None]:
    """Reuse pages while the block runs (tests: the builds of one simulated session)."""
    saved = _ENABLED[0]
    set_enabled(True)
    try:
        yield
    finally:
        set_enabled(saved)


def _forget() -> None:
    _WORLD.clear()
    _CHECKED.clear()
    _KEPT.clear()
    _USED.clear()
    _REUSED.clear()


def _shared_inputs(site: Site) -> tuple[Any, ...]:
    """What every page about one device reads besides that device's spec."""
    catalog = site.catalog
    return (
        site.default_device,
        site.chart_precision,
        site.svg,
        site.env,
        site.catalog_date,
        catalog.root,
        catalog.precisions,
        catalog.kernels,
        catalog.methods,
        catalog.models,
        tuple(catalog.devices),
    )


def _start(site: Site) -> bool:
    """Whether `site` may reuse kept pages; the first call for a new site compares its
    shared inputs with the kept pages' (dropping them all when they differ) and starts a
    round, in which only the entries asked for are kept for the next."""
    if not _ENABLED[0] or site.changes is not None:
        return False
    if _CHECKED and _CHECKED[0] is site:
        return True
    world = _shared_inputs(site)
    if _WORLD and _WORLD[0] == world:
        # A new round: what the last one used is what may be reused now.
        kept = dict(_USED) if _USED else dict(_KEPT)
        _KEPT.clear()
        _KEPT.update(kept)
    else:
        _KEPT.clear()
        _WORLD[:] = [world]
    _USED.clear()
    _REUSED.clear()
    _CHECKED[:] = [site]
    return True


def reusing(site: Site) -> bool:
    """Whether the pages of `site` may be kept for later builds (a `serve` session)."""
    return _start(site)


def for_device(site: Site, kind: str, device_id: str, make: Callable[..., T], *args: Any) -> T:
    """`make(*args)`, or what it returned for the same device spec and shared inputs in
    an earlier build of this session (`args` are of this build: the same values)."""
    if not _start(site):
        return make(*args)
    key = (kind, device_id)
    used = _USED.get(key)
    if used is not None:  # asked before in this build: the same inputs
        return used[1]  # type: ignore[no-any-return]
    device = site.catalog.devices[device_id]
    own = (device, device.document)
    hit = _KEPT.get(key)
    if hit is not None and hit[0] == own:
        value: T = hit[1]
        _REUSED.add(key)
    else:
        value = make(*args)
    _USED[key] = (own, value)
    return value


def device_memo(site: Site, kind: str, device_id: str) -> dict[Any, Any]:
    """A dict for values worked out from one device's results (texts of its rows, say),
    keyed by whatever else they read: kept between `serve` rebuilds like `for_device`,
    else one per site (a build asks for some of them more than once)."""
    if _start(site):
        return for_device(site, kind, device_id, dict)
    return site.memos.setdefault((kind, device_id), {})


def last_round() -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """(the (kind, device) entries the last build reused, those it made afresh)."""
    return set(_REUSED), set(_USED) - _REUSED
