"""A crossover as a table cell: the value from which a case stays compute bound."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rooflinec.site.pages.model import Site


def crossover_cell(
    site: Site,
    case: str,
    device: str,
    precision: str,
    symbol: str,
    *,
    shape: dict[str, int] | None = None,
) -> str:
    """The least value of `symbol` from which on the case stays compute bound, as shown
    (the others held at `shape`, default the case's own).

    Kept per device (`reuse.device_memo`): the cell reads the case's kernel, the
    precision and that device alone."""
    from rooflinec.site.pages.reuse import device_memo

    memo = device_memo(site, "crossover cells", device)
    key = (case, precision, symbol, None if shape is None else tuple(sorted(shape.items())))
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = _crossover_cell(site, case, device, precision, symbol, shape)
    return hit


def _crossover_cell(
    site: Site, case: str, device: str, precision: str, symbol: str, shape: dict[str, int] | None
) -> str:
    from rooflinec.engine.solve import SolveError, crossover, solve_regions
    from rooflinec.engine.solve_case import problem_of

    try:
        problem = problem_of(site.catalog, case, device, precision, symbol, shape=shape)
        regions = solve_regions(problem)
    except SolveError:
        return "not solved"
    at = crossover(regions)
    if at is None:
        return "never"
    more = f" ({len(regions)} regions)" if len(regions) > 2 else ""
    return f"{at:,}{more}"
