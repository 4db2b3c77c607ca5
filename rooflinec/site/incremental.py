"""Dirty rebuilds (`rooflinec serve`, `mkdocs serve --dirty`): render only what changed.

mkdocs re-renders only files whose `is_modified()` is true, and a generated file always
says it is. Here every generated file is a `TrackedFile` with a fingerprint of
everything its output depends on (the Markdown with its trusted fragments put in, the
title; the text of a static file), and says it is modified only when its output is
missing or the previous successful build into the same site folder wrote another
fingerprint. Whatever every page shows (the navigation, the page date, the set of
files, the options) is the build's site key: when it changes, every page is modified.
A clean build never asks, so its output is unchanged.

The record lives in the plugin's `Session` (`rooflinec.site.session`), which mkdocs keeps
across the rebuilds of one `serve`: one site folder at a time.
"""

from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING, Any

from mkdocs.structure.files import File, Files, InclusionLevel

from rooflinec.site.mkdocs_compat import mark_modified, search_entries, stop_material_merge
from rooflinec.site.svg_renders import PendingSvg

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig

    from rooflinec.site.pages.common import GeneratedPage
    from rooflinec.site.session import Session

__all__ = ["Rebuild", "TrackedFile", "fingerprint"]


def fingerprint(*parts: str) -> str:
    """A digest of `parts` (kept apart, so `("ab", "c")` and `("a", "bc")` differ)."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()


def page_fingerprint(page: GeneratedPage) -> str:
    """What a generated page's output depends on: its title and its filled-in Markdown."""
    return fingerprint(page.title, page.slots.fill(page.markdown))


class TrackedFile(File):
    """A generated file that is modified (for a dirty rebuild) only when its output would
    differ from what the previous build into the same folder wrote."""

    fingerprint: str = ""
    previous: dict[str, str] | None = None

    def is_modified(self) -> bool:
        if self.previous is None or not os.path.isfile(self.abs_dest_path):
            return True
        return self.previous.get(self.abs_dest_path) != self.fingerprint


class Rebuild:
    """One build's generated files, each compared with the previous build into the same
    site folder; `finish` records them for the next, in `session`."""

    def __init__(self, session: Session, site_dir: str, site_key: str) -> None:
        self.session = session
        self.site_dir = site_dir
        self.site_key = site_key
        built = session.built
        same = built is not None and built[0] == site_dir and built[1] == site_key
        self.previous = built[2] if built is not None and same else None
        self.tracked: list[TrackedFile] = []
        self.home: tuple[str, str] | None = None  # (record key, fingerprint)
        self.files: Files | None = None

    def add_page(
        self, files: Files, config: MkDocsConfig, page: GeneratedPage, inclusion: InclusionLevel
    ) -> None:
        """A generated page, replacing the docs folder's own file of that name."""
        file = TrackedFile.generated(config, page.path, content=page.markdown, inclusion=inclusion)
        self._add(files, file, page_fingerprint(page))

    def add_files(self, files: Files, config: MkDocsConfig, assets: dict[str, str]) -> None:
        """Static generated files (charts, downloads), replacing any of the same name; a
        chart's rendering left to the background is the one made since, or is deferred
        again (`rooflinec.site.svg_renders`)."""
        renders = self.session.renders
        for path, content in sorted(assets.items()):
            if renders is not None and isinstance(content, PendingSvg):
                content = assets[path] = renders.resolve(content, path)
            existing = files.get_file_from_path(path)
            if existing is not None:
                files.remove(existing)
            file = TrackedFile.generated(config, path, content=content)
            # A placeholder is written again for another rendering: what the folder holds
            # (the last one, rendered since) is not this build's chart.
            key = [content.key] if isinstance(content, PendingSvg) else []
            self._add(files, file, fingerprint(content, *key))

    def _add(self, files: Files, file: File, digest: str) -> None:
        assert isinstance(file, TrackedFile)
        file.fingerprint = digest
        file.previous = self.previous
        files.append(file)
        self.tracked.append(file)

    def track_hand_written(
        self, files: Files, home_file: File | None, home: GeneratedPage | None
    ) -> None:
        """A dirty rebuild re-renders a hand-written page when its source is newer than its
        output (mkdocs' rule); also every one when the site key changed, and the home page
        when its generated section did."""
        self.files = files
        self.home = None
        if home_file is not None and home is not None:
            self.home = (f"{home_file.abs_dest_path}#home", page_fingerprint(home))
        for file in files.documentation_pages():
            if isinstance(file, TrackedFile) or file.abs_src_path is None:
                continue
            if self.previous is None:
                mark_modified(file)
            elif file is home_file and self.home is not None:
                key, digest = self.home
                if self.previous.get(key) != digest:
                    mark_modified(file)

    def finish(self, config: MkDocsConfig) -> None:
        """Record what this build wrote, and complete the search index of a dirty one."""
        record = {f.abs_dest_path: f.fingerprint for f in self.tracked}
        if self.home is not None:
            record[self.home[0]] = self.home[1]
        self.session.built = (self.site_dir, self.site_key, record)  # serve's one folder
        self._complete_search_index(config)

    def _complete_search_index(self, config: MkDocsConfig) -> None:
        """A dirty rebuild indexes only the pages it renders: put in the entries of the
        others from the previous build, in the order a clean build gives them (and stop
        material's own merge, which keeps one changed page only)."""
        found = search_entries(config)
        if found is None or self.files is None:
            return
        index, attribute = found
        current: dict[str, list[Any]] = {}
        for entry in getattr(index, attribute):
            location = entry.get("location", "") if isinstance(entry, dict) else ""
            current.setdefault(str(location).split("#")[0], []).append(entry)
        order = [f.url for f in self.files.documentation_pages()]
        by_page = current
        if self.previous is not None:  # a rebuild: what was not rendered is as it was
            search = self.session.search
            kept = search[1] if search is not None and search[0] == self.site_dir else {}
            by_page = {**kept, **current}
            merged = [e for url in order for e in by_page.get(url, [])]
            merged += [e for url, entries in current.items() if url not in order for e in entries]
            setattr(index, attribute, merged)
        stop_material_merge(config)  # the index is whole either way
        self.session.search = (
            self.site_dir,
            {url: by_page[url] for url in order if url in by_page},
        )
