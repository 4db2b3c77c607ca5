"""Catalog lints: plausibility and provenance checks, warnings unless `--strict`.

Each lint is a function of the catalog returning diagnostics; `LINTS` lists them.
"""

from __future__ import annotations

from collections.abc import Callable

from rooflinec.catalog import Catalog
from rooflinec.errors import Diagnostic


def _warning(d: Diagnostic) -> Diagnostic:
    return Diagnostic(d.location, d.message, d.path, "warning", d.code)


def missing_quote(catalog: Catalog) -> list[Diagnostic]:
    """A peak or bandwidth with no verbatim quote from its source cannot be audited."""
    out = []
    for device in catalog.devices.values():
        doc = device.document
        for pid, peak in device.peaks.items():
            if not peak.figure.quote:
                out.append(
                    doc.error(
                        ("compute", pid, "peak"),
                        f"{pid} peak has no quote from its source",
                        severity="warning",
                        code="lint-quote",
                    )
                )
        for role, level in device.memory.items():
            if not level.bandwidth.quote:
                out.append(
                    doc.error(
                        ("memory", role, "bandwidth"),
                        f"{role} bandwidth has no quote from its source",
                        severity="warning",
                        code="lint-quote",
                    )
                )
    return out


LINTS: list[Callable[[Catalog], list[Diagnostic]]] = [missing_quote]


def lint_catalog(catalog: Catalog) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for lint in LINTS:
        out.extend(_warning(d) for d in lint(catalog))
    return out
