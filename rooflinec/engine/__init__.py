"""The engine: exact roofline arithmetic, and the rounding of its results.

It owns the roof of one device at one precision and the one rule that decides what
bounds a count (`rooflinec.engine.roof`), the width symbol kernel formulas bind to a
precision's bytes per value, and the rounding every written number goes through
(`rooflinec.engine.exact`: "an int when integral" and one value's correctly rounded
float, without numpy, which `check` never loads; `rooflinec.engine.rounding`: correctly
rounded quotients on numpy columns). It may import the core values (`catalog`, `terms`,
`quantities`, `errors`) and numpy; it imports nothing from the writers, `site` or `cli`.
"""

from __future__ import annotations

from rooflinec.engine.exact import integral
from rooflinec.engine.roof import WIDTH, Bound, Roof

__all__ = ["WIDTH", "Bound", "Roof", "integral"]
