"""Catalog lints: provenance and plausibility checks, warnings unless `check --strict`.

Each lint is a function of a `LintContext` (the catalog, the date, every figure's trail)
returning diagnostics that point at the figure's own file:line:col, each with a stable
`code`:

| code | catches |
| --- | --- |
| lint-quote | a peak, bandwidth or capacity with no verbatim quote to trace to |
| lint-quote-number | a quote that does not contain the number it is said to back |
| lint-third-party | a figure citing a third party while the vendor's own source prints it |
| lint-source-kind | a source that does not say whether it is the vendor's or a third party's |
| lint-stale | a source read more than 18 months ago |
| lint-dates | a read or version date in the future, or a read date before the publication |
| lint-kind | a device with no kind, so plausibility falls back to the widest ranges |
| lint-plausibility | a bandwidth, peak, ridge point or launch latency out of its plausible range |
| lint-sparsity | a tensor peak of a sparse-printing vendor that does not say it is dense |
| lint-binary-units | a GiB/MiB figure among devices that give the same level in GB/MB |
| lint-alt-scale | an alternative ten or more times away from the main figure (a prefix slip) |
| lint-counts | an integer peak in FLOP/s, or a floating-point peak in OP/s |
| lint-tolerance | a reference example that accepts a figure more than 10 % off |
| lint-sustained | a sustained share under 10 % (a share written as a fraction, or a slip) |
| lint-accumulate | a GeForce BF16 peak that is the FP16-accumulate rate (twice the right one) |
| lint-per-card | a figure quoted per card, board or system on a per-chip device, without `chips` |
| lint-measurement | a measurement source that does not give its tool and command |
| lint-direction | a per-direction link figure whose quote says it is bidirectional |
| lint-link-share | a link's measured sustained share above 100 % |
| lint-domain | an interconnect level with a bandwidth and a domain of one chip |

Messages start with the code, so the plain-text report shows it. Any lint can be turned
off, with the reason it does not apply, in the `[tool.rooflinec.disable]` table of the
`pyproject.toml` beside the specs folder or with `check --disable 'LINT=REASON'`
(`rooflinec.lints.disable`). The provenance rules
("traces to a quote", "stale", "vendor's own") are `rooflinec.provenance`'s, shared with
the site and the export.

The lints live by subject: `quotes`, `sources`, `ranges` (plausibility), `sparse`,
`units`, `margins` (tolerances and sustained shares), `tables` (accumulate columns and
per-card figures), `interconnect` (a link's direction, share and domain) and `versions`,
over the
`LintContext` of `context`; this module lists them and runs them.

It may import the core values (`catalog`, `provenance`, `quantities`, `formatting`,
`loader`, `errors`); it imports nothing from the engine, `outputs`, `site` or `cli`.
"""

from __future__ import annotations

import datetime

from rooflinec.catalog import Catalog
from rooflinec.errors import Diagnostic
from rooflinec.lints.context import Lint, LintContext
from rooflinec.lints.interconnect import direction, domains, link_shares
from rooflinec.lints.margins import sustained_shares, tolerances
from rooflinec.lints.measurements import measurement_sources
from rooflinec.lints.quotes import missing_quote, quote_number
from rooflinec.lints.ranges import kinds, launch_latency, plausibility
from rooflinec.lints.sources import dates, source_kind, stale, third_party
from rooflinec.lints.sparse import sparsity
from rooflinec.lints.tables import accumulate, per_card
from rooflinec.lints.units import alt_scale, binary_units, counts
from rooflinec.lints.versions import version_dates

__all__ = ["LINTS", "current_date", "lint_catalog"]


def current_date() -> datetime.date:
    """The date ages are measured against when none is given; tests monkeypatch it."""
    return datetime.date.today()


LINTS: list[Lint] = [
    missing_quote,
    quote_number,
    third_party,
    source_kind,
    stale,
    dates,
    kinds,
    plausibility,
    launch_latency,
    sparsity,
    binary_units,
    alt_scale,
    counts,
    tolerances,
    sustained_shares,
    version_dates,
    accumulate,
    per_card,
    measurement_sources,
    direction,
    link_shares,
    domains,
]


def lint_catalog(catalog: Catalog, *, today: datetime.date | None = None) -> list[Diagnostic]:
    """Every lint's warnings, in file order. `today` defaults to `current_date()`."""
    ctx = LintContext.of(catalog, today if today is not None else current_date())
    out: list[Diagnostic] = []
    for lint in LINTS:
        out.extend(lint(ctx))
    out.sort(key=Diagnostic.sort_key)
    return out
