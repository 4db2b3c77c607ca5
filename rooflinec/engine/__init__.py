"""The engine: exact roofline arithmetic, and the rounding of its results.

It owns the method's terms (`terms`), the roof of one device at one precision and the one
rule that decides what bounds a count (`roof`), the one evaluation of counts with the
widths bound and their limit (`evaluate`), the cells' exact values (`cells`), the compiler
and its float columns (`compiler`, `columns`), the models (`models`, `step_crossover`),
the grids (`grids`, `grid_proof`), requests and the latency–throughput frontier
(`requests`, `memory`, `frontier`, with their float paths `request_floats` and
`fit_floats`), the solvers (`solve`, `solve_case`, `solve_interval`,
`solve_poly`), the reference examples' runner (`examples`) and the rounding every written
number goes through (`exact`: "an int when integral" and one value's correctly rounded
float, without numpy, which `check` never loads; `rounding`: correctly rounded quotients
on numpy columns). It may import the core values (`catalog`, `grid_values`, `quantities`,
`formatting`, `errors`), the formula engine and numpy; it imports nothing from `outputs`,
`prose`, `site`, `cli` or `integrations`.
"""

from __future__ import annotations

from rooflinec.engine.exact import integral
from rooflinec.engine.roof import WIDTH, Bound, Roof

__all__ = ["WIDTH", "Bound", "Roof", "integral"]
