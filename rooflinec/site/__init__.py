"""The static site: an mkdocs plugin, the pages, charts, safe rendering, build commands.

Importing this package is cheap: mkdocs, altair and vl-convert are imported only by the
modules that need them, when they run.

It may import every room below it (the pipeline, `engine`, `outputs`, `prose`,
`assemble`) and the core values; it imports nothing from `cli` or `integrations`.
"""
