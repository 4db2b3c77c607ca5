"""The site's pages: a compiled catalog in, generated Markdown pages (and their files) out.

`model.Site` holds what one build's pages read; each page module holds plain functions
of a `Site`: `home`, `devices`, `kernels`, `models` (model pages, the tokens-per-second
comparison), `methods`, `catalog_pages` (comparison,
glossary, changelog), `sources`, `audit` (audit trails and conflicts), `changes` and
`downloads`; `listing.pages` lists every page. Each page is rendered from a jinja2
template shipped with the package, with a context of plain values: numbers are formatted
with `rooflinec.formatting`, spec text stays raw and is escaped by the template
environment (see `rooflinec.site.escape`), trusted HTML (charts, MathML) goes through
the page's `Slots`. Nothing here touches mkdocs, so the pages are tested without a build.

Pages stay small whatever the catalog size: index pages are split into numbered pages
and per-device and per-kernel tables show at most a fixed number of rows (`common`),
pointing to the full results download for the rest.

This package imports nothing itself, so importing one page module loads only what that
module needs.
"""
