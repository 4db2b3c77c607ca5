"""What every lint reads (`LintContext`), and how a lint words its warnings."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction

from rooflinec.catalog import Catalog, Device, Source
from rooflinec.errors import Diagnostic, Location, json_path
from rooflinec.formatting import format_si
from rooflinec.loader import Document, PathKey
from rooflinec.provenance import AlternativeTrail, FigureTrail, device_trails


def _warn(location: Location, path: PathKey, code: str, message: str) -> Diagnostic:
    return Diagnostic(location, f"{code}: {message}", json_path(path), "warning", code)


def _warn_at(document: Document, path: PathKey, code: str, message: str) -> Diagnostic:
    """A warning at `path` of `document`."""
    return _warn(document.locate(path), path, code, message)


def _at(trail: FigureTrail | AlternativeTrail, code: str, message: str) -> Diagnostic:
    return _warn(trail.location, trail.path, code, message)


def _si(value: Fraction, unit: str) -> str:
    return format_si(value, unit, digits=5)


@dataclass(frozen=True)
class LintContext:
    """What every lint reads: the catalog, the date ages are measured on, each device's trails."""

    catalog: Catalog
    today: datetime.date
    trails: dict[str, tuple[FigureTrail, ...]]

    @classmethod
    def of(cls, catalog: Catalog, today: datetime.date) -> LintContext:
        trails = {d: device_trails(catalog, d, today=today) for d in catalog.devices}
        return cls(catalog, today, trails)

    @property
    def devices(self) -> Iterable[Device]:
        return self.catalog.devices.values()

    def sources(self) -> Iterable[tuple[Device, str, Source]]:
        """Every (device, source id, source) of the devices' files, in catalog order."""
        for device in self.devices:
            for sid, source in device.sources.items():
                yield device, sid, source

    def figures(self) -> Iterable[tuple[Device, FigureTrail]]:
        """Every (device, figure trail) pair, devices in catalog order."""
        for device in self.devices:
            for trail in self.trails[device.id]:
                yield device, trail


Lint = Callable[[LintContext], list[Diagnostic]]


def _what(trail: FigureTrail) -> str:
    """`bf16 peak 1979 TFLOP/s`, `dram bandwidth 3.35 TB/s`, `dram capacity 80 GB`."""
    return f"{trail.key} {trail.kind} {trail.printed}"
