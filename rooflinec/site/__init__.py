"""The static site: an mkdocs plugin, the pages, charts, safe rendering, build commands.

Importing this package is cheap: mkdocs, altair and vl-convert are imported only by the
modules that need them, when they run.
"""
