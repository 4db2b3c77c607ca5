"""A device's roofline as a vega-altair chart, for Jupyter and other notebooks.

The chart is the Vega-Lite spec the site draws on the device's page (the same builder,
the same markers, the same sliders), loaded into altair and validated, so a notebook can
show it, restyle it or save it. altair is an optional dependency
(`pip install 'rooflinec[notebook]'`); `import rooflinec` does not import it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import altair as alt

from rooflinec.engine.compiler import Compiled
from rooflinec.pipeline import compiled_or_raise, specs_folder
from rooflinec.site import charts

__all__ = ["roofline_chart", "roofline_spec"]


def roofline_chart(
    device: str,
    specs: str | os.PathLike[str] | None = None,
    precision: str | None = None,
) -> alt.LayerChart:
    """The roofline chart of `device` as the site draws it, as an altair chart.

    `specs` is a specs folder (default: `./specs` when present, else the bundled catalog,
    as for the command line); `precision` is the precision of the other memory levels'
    ridge points (default: the site's chart precision). Raises `ValueError` for a device
    or precision the catalog does not have, `UsageError` when `specs` is not a folder and
    `SpecError` when the specs do not build.
    """
    folder = specs_folder(None if specs is None else Path(specs))
    spec = roofline_spec(compiled_or_raise(folder), device, precision)
    return alt.LayerChart.from_dict(spec, validate=True)


def roofline_spec(compiled: Compiled, device: str, precision: str | None = None) -> dict[str, Any]:
    """The Vega-Lite spec of `device`'s roofline on its site page, drawn at `precision`."""
    catalog = compiled.catalog
    if device not in catalog.devices:
        raise ValueError(f"unknown device {device!r}; known devices: {_names(catalog.devices)}")
    if precision is None:
        precision = charts.chart_precision(catalog)
    else:
        peaks = compiled.devices[device].peaks
        if precision not in peaks:
            known = [p for p in catalog.precisions if p in peaks]
            raise ValueError(
                f"device {device!r} has no peak at precision {precision!r}; "
                f"its precisions: {_names(known)}"
            )
    results = compiled.select(devices=[device], declared_only=True)[: charts.MAX_MARKERS]
    return charts.device_roofline(compiled, device, results, precision).spec


def _names(ids: Iterable[str]) -> str:
    return ", ".join(ids)
