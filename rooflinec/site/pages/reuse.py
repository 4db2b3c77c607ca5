"""Generated pages kept between the builds of one `serve` session, keyed by exact inputs.

A page about one device (its page, its audit pages) is made from that device's spec (its
values and its loaded document, whose lines the audit trails cite) and from what every
such page reads: the site's options and date, the specs folder, the precisions, kernels,
methods and models (names, links, cases, the model rows on the device) and the list of
devices. Nothing of another device goes into it. The key is those values themselves,
compared with `==` (catalog values are frozen dataclasses compared field by field): no
hash, no file time. An edit to one device's spec makes that device's pages again and
reuses the others'; an edit to anything else every device page reads makes them all again.

The kept pages live in the build's `Session` (`site.session.pages`, a `KeptPages`), on only in a
`serve` session (`Session.keep_pages`): a build of a published version (with its changes
page) never reuses, and each build starts a new session. The page limits (`site.limits`)
are among the shared inputs.

Besides whole pages, `device_memo` keeps values worked out from one device's results
(crossover cells, texts of its rows) under the same rule.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from rooflinec.engine.cells import Result
    from rooflinec.engine.compiler import Compiled
    from rooflinec.engine.models import ModelEngine, ModelResult
    from rooflinec.site.pages.model import Site
    from rooflinec.site.session import KeptPages

T = TypeVar("T")

__all__ = [
    "by_precision",
    "declared",
    "device_memo",
    "device_results",
    "for_device",
    "for_devices",
    "model_rows",
    "results_by_kernel",
    "reusing",
]


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
    session.pages.start(site, lambda: _shared_inputs(site))
    return session.pages


def reusing(site: Site) -> bool:
    """Whether the pages of `site` may be kept for later builds (a `serve` session)."""
    return _start(site) is not None


def for_device(site: Site, kind: str, device_id: str, make: Callable[..., T], *args: Any) -> T:
    """`make(*args)`, or what it returned for the same device spec and shared inputs in
    an earlier build of this session (`args` are of this build: the same values)."""
    return for_devices(site, kind, device_id, (device_id,), make, *args)


def for_devices(
    site: Site,
    kind: str,
    ident: str,
    devices: Sequence[str],
    make: Callable[..., T],
    *args: Any,
    extra: tuple[Any, ...] = (),
) -> T:
    """`for_device` of a value made from several devices' specs (a model page from the
    devices it shows): kept under (`kind`, `ident`) while those devices, in that order,
    their specs, `extra` and the shared inputs compare equal."""
    pages = _start(site)
    if pages is None:
        return make(*args)
    key = (kind, ident)
    used = pages.used.get(key)
    if used is not None:  # asked before in this build: the same inputs
        return used[1]  # type: ignore[no-any-return]
    specs = site.catalog.devices
    own = (*((d, specs[d], specs[d].document) for d in devices), extra)
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


def model_rows(site: Site) -> Mapping[tuple[str, str, str], ModelResult]:
    """(model, phase, device) -> the pass at the model's own precision, on every
    device with a peak for it (and for every precision its steps name), in catalog
    order. A device's rows (with what they work out lazily: the steps) are kept
    between `serve` rebuilds while its spec and the models', kernels' and precisions'
    do not change (`reuse.for_device`)."""

    def make() -> dict[tuple[str, str, str], ModelResult]:
        engine = site.compiled.model_engine
        keys = list(engine.keys(declared_only=True))
        per_device: dict[str, list[tuple[str, str, str, str]]] = {}
        for key in keys:
            per_device.setdefault(key[2], []).append(key)
        rows: dict[tuple[str, str, str, str], ModelResult] = {}
        for device, own in per_device.items():
            rows.update(for_device(site, "model rows", device, _rows_of, engine, own))
        return {(m, phase, d): rows[(m, phase, d, p)] for m, phase, d, p in keys}

    return _once(site, "model rows", make)


def _rows_of(
    engine: ModelEngine, keys: list[tuple[str, str, str, str]]
) -> dict[tuple[str, str, str, str], ModelResult]:
    return {key: engine.row(*key) for key in keys}


def device_results(site: Site) -> Mapping[str, tuple[Result, ...]]:
    """Per device: its results, every case at every precision, in catalog order. A
    device's results read its spec and the shared cases and precisions alone, so a
    `serve` rebuild keeps those of the devices its edit did not touch (`for_device`)
    instead of making all of them again."""

    def make() -> dict[str, tuple[Result, ...]]:
        compiled = site.compiled
        return {
            d: for_device(site, "results", d, _results_of, compiled, d)
            for d in site.catalog.devices
        }

    return _once(site, "device results", make)


def declared(site: Site) -> Mapping[str, list[Result]]:
    """Per device: each case at its declared precision, in catalog order."""
    return _once(
        site,
        "declared",
        lambda: {d: [r for r in rs if r.declared] for d, rs in device_results(site).items()},
    )


def by_precision(site: Site) -> Mapping[tuple[str, str], Result]:
    """(case, device) -> result at the chart precision."""
    chart = site.chart_precision
    return _once(
        site,
        "by precision",
        lambda: {
            (r.case, r.device): r
            for rs in device_results(site).values()
            for r in rs
            if r.precision == chart
        },
    )


def results_by_kernel(site: Site) -> Mapping[str, list[Result]]:
    """Per kernel: its results, in the compiled order (case by case, each case's
    devices and precisions in catalog order)."""

    def make() -> dict[str, list[Result]]:
        case_at = {case: i for i, case in enumerate(site.cases)}
        by_case: list[list[Result]] = [[] for _ in case_at]
        for own in device_results(site).values():
            for r in own:
                by_case[case_at[r.case]].append(r)
        out: dict[str, list[Result]] = {k: [] for k in site.catalog.kernels}
        for in_case in by_case:
            for r in in_case:
                out.setdefault(r.kernel, []).append(r)
        return out

    return _once(site, "results by kernel", make)


def _once(site: Site, name: str, make: Callable[[], T]) -> T:
    """`make()` once per site, kept in `site.derived` under `name`."""
    if name not in site.derived:
        site.derived[name] = make()
    return site.derived[name]  # type: ignore[no-any-return]


def _results_of(compiled: Compiled, device: str) -> tuple[Result, ...]:
    return tuple(compiled.select(devices=[device]))
