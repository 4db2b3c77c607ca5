"""Version dates: a change recorded on a day that has not come.

The schema already refuses a date that is not on the calendar; a version dated far
ahead (`9999-12-31`) is a calendar date and a slip all the same. One day of slack
allows for the contributor's time zone being ahead of the checker's.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable

from rooflinec.catalog import Version
from rooflinec.errors import Diagnostic
from rooflinec.lints.context import LintContext, _warn_at
from rooflinec.loader import Document

SLACK = datetime.timedelta(days=1)


def _files(ctx: LintContext) -> Iterable[tuple[str, str, Document, tuple[Version, ...]]]:
    catalog = ctx.catalog
    for device in catalog.devices.values():
        yield "device", device.id, device.document, device.versions
    for kernel in catalog.kernels.values():
        yield "kernel", kernel.id, kernel.document, kernel.versions
    for method in catalog.methods.values():
        yield "method", method.id, method.document, method.versions


def version_dates(ctx: LintContext) -> list[Diagnostic]:
    """A version dated more than a day after today."""
    out = []
    for kind, ident, document, versions in _files(ctx):
        for index, version in enumerate(versions):
            try:
                day = datetime.date.fromisoformat(version.date)
            except ValueError:
                continue  # the schema reports it
            if day > ctx.today + SLACK:
                out.append(
                    _warn_at(
                        document,
                        ("versions", index, "date"),
                        "lint-dates",
                        f"{kind} '{ident}' version {version.version} is dated {version.date},"
                        f" after today ({ctx.today.isoformat()}): date a change when it is made",
                    )
                )
    return out


__all__ = ["version_dates"]
