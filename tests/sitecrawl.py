"""A link checker for a built static site: every `href` and `src` of every HTML page,
resolved the way a browser resolves it, must name a file of the site, and every
`#fragment` must be an `id` (or `name`) in the page it points to.

Directory URLs (`devices/` or `devices`) map to the folder's `index.html`, as a static
web server serves them. External links (with a scheme or `//host`) are not followed.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

LINK_ATTRIBUTES = {"href", "src"}


class _Links(HTMLParser):
    """The link targets and the fragment ids of one HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name in ("id", "name"):
                self.ids.add(value)
            elif name in LINK_ATTRIBUTES:
                self.links.append(value)


@dataclass(frozen=True)
class Broken:
    """One link that does not resolve: where it is, what it says, and why."""

    page: str
    link: str
    reason: str

    def __str__(self) -> str:
        return f"{self.page}: {self.link} ({self.reason})"


def _parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text("utf-8"))
    return parser


def crawl(site: Path, *, url_prefix: str = "/") -> list[Broken]:
    """Every broken internal link and missing anchor of the site in `site`.

    `url_prefix` is the URL path the site is served under (`/` at a server's root,
    `/1.2/` for a version folder): a root-absolute link must start with it."""
    root = site.resolve()

    @cache
    def page(path: Path) -> _Links:
        return _parse(path)

    def target_file(url_path: str) -> Path | None:
        candidate = root / url_path.lstrip("/") if url_path else root
        if candidate.is_dir():
            candidate = candidate / "index.html"
        return candidate if candidate.is_file() else None

    broken: list[Broken] = []
    for html_file in sorted(root.rglob("*.html")):
        rel = html_file.relative_to(root).as_posix()
        here = posixpath.dirname(rel)
        parsed = page(html_file)
        for link in parsed.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith("//"):
                continue
            path = unquote(parts.path)
            if path.startswith("/"):
                if not (path + "/").startswith(url_prefix) and path != url_prefix.rstrip("/"):
                    broken.append(Broken(rel, link, f"outside {url_prefix}"))
                    continue
                resolved = posixpath.normpath(path[len(url_prefix) :] or ".")
            elif path:
                resolved = posixpath.normpath(posixpath.join(here, path))
            else:
                resolved = rel
            if resolved.startswith(".."):
                broken.append(Broken(rel, link, "leaves the site"))
                continue
            target = target_file("" if resolved == "." else resolved)
            if target is None:
                broken.append(Broken(rel, link, "no such file"))
                continue
            fragment = unquote(parts.fragment)
            if fragment and target.suffix == ".html" and fragment not in page(target).ids:
                broken.append(Broken(rel, link, "no such anchor"))
    return broken
