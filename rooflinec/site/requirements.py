"""What the generated pages need from a user's mkdocs configuration, set by the plugin.

The pages are written for mkdocs' defaults as much as for the repository's own
`mkdocs.yml`: they give heading ids and classes with `attr_list` (`{#case-x}`), put
Markdown inside HTML blocks with `md_in_html`, and use tables and the `toc` ids. A user's
`mkdocs.yml` that lists only `plugins: [search, rooflinec]` gets those extensions added
(their own options, where they set any, are kept).

Links between generated pages are relative `.md` paths that mkdocs rewrites for either
`use_directory_urls`; a link that does not resolve is mkdocs' warning (`validation.links.
not_found`, `warn` by default), and a missing anchor is raised from mkdocs' default `info`
to `warn` too, so `mkdocs build --strict` fails on either. A user who wants anchors
checked more quietly sets `validation: {links: {anchors: ...}}` to anything but `info`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig

REQUIRED_EXTENSIONS = ("attr_list", "md_in_html", "tables", "toc")
MKDOCS_DEFAULT_ANCHORS_LEVEL = logging.INFO


def add_required_extensions(config: MkDocsConfig) -> list[str]:
    """Append each of `REQUIRED_EXTENSIONS` that `config` lacks; return those added."""
    present = set(config.markdown_extensions)
    added = [name for name in REQUIRED_EXTENSIONS if name not in present]
    config.markdown_extensions.extend(added)
    return added


def warn_on_missing_anchors(config: MkDocsConfig) -> bool:
    """Raise `validation.links.anchors` from mkdocs' default (`info`) to `warn`, so that
    `--strict` fails on a link to a missing anchor; True if it was raised."""
    links = config.validation.links
    if links.anchors != MKDOCS_DEFAULT_ANCHORS_LEVEL:
        return False
    links.anchors = logging.WARNING
    return True
