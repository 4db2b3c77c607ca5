"""The prose: compiled results said in sentences for a terminal or a pull request.

This package owns `explain` (one case, step by step, with the formulas and the exact
arithmetic), `model_explain` (a model's steps and phases), `report` (measured runs beside
their bounds) and `diff` (what moved between two compiled catalogs, as Markdown). It may
import the engine and the core values; it imports nothing from `outputs`, `site` or `cli`.
"""
