"""The output writers: compiled results as files and streams.

This package owns how compiled rows are written: the field table of each row kind
(kernel cells in `results`, model rows and their steps in `model_rows`), the writers
that lay those tables out (JSON, JSON Lines, CSV, Parquet through `columnar`, and the
terminal table), the registry of formats (`formats`) that the command line and the
README read, and the device catalog's provenance export (`catalog`).

It imports the engine's values (the compiler, models, grids) and the core modules; it
imports nothing from `rooflinec.site` or `rooflinec.cli`, which call it.
"""
