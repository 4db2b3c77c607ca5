"""URLs of a generated page's own files (chart SVGs, Vega-Lite specs) in its built HTML.

A chart's fragment is trusted HTML swapped in after Markdown (see `escape.Slots`), so
mkdocs does not rewrite its `src` and `href`: they name the files beside the page's
Markdown source (`devices/x.roofline.svg` for `devices/x.md` reads `x.roofline.svg`).
With `use_directory_urls` the page is served one folder deeper (`devices/x/`), and those
names must climb back to the source's folder first.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable


def source_folder_from_page(src_uri: str, dest_uri: str) -> str:
    """The relative URL from the built page (`dest_uri`) to its source's folder: `""`
    when they are the same folder, else e.g. `"../"`."""
    source = posixpath.dirname(src_uri) or "."
    built = posixpath.dirname(dest_uri) or "."
    rel = posixpath.relpath(source, built)
    return "" if rel == "." else rel + "/"


def relocate_page_files(page_html: str, src_uri: str, files: Iterable[str], prefix: str) -> str:
    """`page_html` with every `src` or `href` that names one of `files` (docs-relative
    paths of the page's own files, beside its source) by its bare name prefixed with
    `prefix`. Other links (mkdocs' own, already correct) are left alone."""
    if not prefix:
        return page_html
    folder = posixpath.dirname(src_uri)
    names = sorted(posixpath.basename(f) for f in files if posixpath.dirname(f) == folder)
    if not names:
        return page_html
    pattern = re.compile(
        r'(\s(?:src|href)=")(' + "|".join(re.escape(n) for n in names) + r')(["#?])'
    )
    return pattern.sub(lambda m: m.group(1) + prefix + m.group(2) + m.group(3), page_html)
