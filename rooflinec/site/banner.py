"""The spec-error banner of `rooflinec serve`: while a spec is broken the preview keeps
the last good site and shows the errors at the top of every page, instead of a server
that waits for a build that cannot finish.

The banner is styled inline (it only ever appears in a preview, and the site's stylesheet
stays the same with or without it); every line is escaped text.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

__all__ = ["MAX_LINES", "banner_html", "with_banner"]

MAX_LINES = 40
_BODY = re.compile(r"<body\b[^>]*>", re.IGNORECASE)
_STYLE = (
    "margin:0;padding:0.8em 1.2em;background:#fdecea;color:#611a15;"
    "border-bottom:3px solid #b3261e;font:14px/1.45 system-ui,sans-serif;"
    "position:relative;z-index:10"
)
_PRE = "margin:0.4em 0 0;white-space:pre-wrap;font:13px/1.4 ui-monospace,monospace"


def _printable(line: str) -> str:
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in line)


def banner_html(lines: Sequence[str], *, stale: bool) -> str:
    """The banner for `lines` (one diagnostic each, `FILE:LINE:COL: error: ...`); `stale`
    when the pages are those of the last good build, else the site has no generated pages."""
    shown = [html.escape(_printable(line), quote=True) for line in lines[:MAX_LINES]]
    if len(lines) > MAX_LINES:
        shown.append(f"... and {len(lines) - MAX_LINES} more")
    what = (
        "these pages are from the last build that succeeded"
        if stale
        else "no build has succeeded yet, so the generated pages are missing"
    )
    count = f"{len(lines)} error{'s' if len(lines) != 1 else ''}"
    return (
        f'<div class="rooflinec-errors" role="alert" style="{_STYLE}">'
        f"<strong>rooflinec: the specs have {count}</strong>; {what}. "
        "Fix them and the preview rebuilds."
        f'<pre style="{_PRE}">' + "\n".join(shown) + "</pre></div>"
    )


def with_banner(page: str, banner: str) -> str:
    """`page` with `banner` first in its body (first in the document without a body)."""
    match = _BODY.search(page)
    if match is None:
        return banner + page
    return page[: match.end()] + banner + page[match.end() :]
