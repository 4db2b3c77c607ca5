"""The `rooflinec` mkdocs plugin: compile the catalog once per build, add the generated pages.

Hooks, in build order:

- `on_config`: resolve the specs folder, compile the catalog (a spec error fails the build
  with the one-line diagnostics), build the page model, add the site's CSS and script, and
  keep material's mike version selector only in a build of a published version.
- `on_files`: add every generated page, its chart files, the Vega runtime, the downloads
  (results, catalog with provenance, JSON Schemas under `schemas/`) and, for a version
  built by `rooflinec publish`, `rooflinec-build.json` and the changes against the previous
  published version, as virtual files (`File.generated`); nothing is written into
  `docs_dir`.
- `on_page_markdown`: pin each page's date to the catalog's newest version date (no build
  clock in the output), and put the generated comparison into the home page.
- `on_page_content`: sanitise the HTML of every generated page with nh3, then put the
  trusted fragments (charts, formulas) in.
- `on_serve`: watch the specs folder, so `mkdocs serve` rebuilds on every spec edit.
- `on_post_build` / `on_build_error`: remember (or forget) what each generated file held.

Dirty rebuilds (`rooflinec serve`, `mkdocs serve --dirty`): mkdocs re-renders only files
whose `is_modified()` is true, and a generated file always says it is. Here every
generated file is a `_TrackedFile` with a fingerprint of everything its output depends
on (the Markdown with its trusted fragments put in, the title; the text of a static
file), and says it is modified only when its output is missing or the previous
successful build into the same site folder wrote another fingerprint. The record lives
at module level: `mkdocs serve` loads a new configuration (and new plugin instances) for
every rebuild, in one process. Whatever every page shows (the navigation, the page date,
the set of files, the options) is a key of its own: when it changes, every page is
modified. A clean build never asks, so its output is unchanged.
"""

from __future__ import annotations

import hashlib
import html
import logging
import os
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import File, Files, InclusionLevel

from rooflinec.errors import Diagnostic
from rooflinec.pipeline import compiled_or_diagnostics
from rooflinec.site.escape import compact_html, sanitize

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.livereload import LiveReloadServer
    from mkdocs.structure.pages import Page

    from rooflinec.site.pages import GeneratedPage, SiteModel

log = logging.getLogger("mkdocs.plugins.rooflinec")

ASSET_DIR = "assets/rooflinec"
SPECS_POLL_SECONDS = 0.1
NAV_PAGES = frozenset(
    {
        "index.md",
        "devices/index.md",
        "kernels/index.md",
        "comparison.md",
        "sources.md",
        "conflicts.md",
        "glossary.md",
        "changelog.md",
        "changes.md",
    }
)


class RooflinecConfig(base.Config):  # type: ignore[no-untyped-call]
    """Plugin options (`plugins: - rooflinec: {specs: ..., ...}` in mkdocs.yml)."""

    specs = c.Optional(c.Dir(exists=True))
    """The specs folder, relative to mkdocs.yml. Default: `specs` beside mkdocs.yml when it
    exists, else the catalog bundled with rooflinec."""
    default_device = c.Optional(c.Type(str))
    """The device the site features; default `nvidia-h100-sxm` when present."""
    chart_precision = c.Type(str, default="bf16")
    """The precision of the cross-device chart and the comparison matrix."""
    svg = c.Type(bool, default=True)
    """Render each chart to a static SVG (the page without JavaScript); off only for tests."""


def specs_dir_for(config: MkDocsConfig, option: str | None) -> Path:
    """The specs folder: the option, else `specs` beside the config file, else bundled."""
    if option:
        return Path(option)
    config_file = config.config_file_path
    if config_file:
        beside = Path(config_file).resolve().parent / "specs"
        if beside.is_dir():
            return beside
    from rooflinec.resources import bundled_specs_dir

    return bundled_specs_dir()


class SpecPluginError(PluginError):
    """Raised by the plugin when the specs do not compile; carries the diagnostics."""

    def __init__(self, diagnostics: Sequence[Diagnostic], folder: Path) -> None:
        self.diagnostics = tuple(diagnostics)
        lines = "\n".join(str(d) for d in diagnostics) or f"{folder}: the catalog did not compile"
        super().__init__(f"rooflinec: spec errors\n{lines}")


def compile_specs(folder: Path) -> Any:
    """The compiled catalog, or `SpecPluginError` with one diagnostic per line."""
    compiled, diagnostics = compiled_or_diagnostics(folder)
    errors = [d for d in diagnostics if d.severity == "error"]
    if compiled is None or errors:
        raise SpecPluginError(errors, folder)
    for warning in diagnostics:
        log.warning(str(warning))
    return compiled


# site folder -> (whole-site key, {output path: fingerprint}) of the last successful build
_BUILT: dict[str, tuple[str, dict[str, str]]] = {}
# site folder -> {page url: its search index entries} of the last successful build
_SEARCH: dict[str, dict[str, list[Any]]] = {}


def _search_entries(config: MkDocsConfig) -> tuple[Any, str] | None:
    """The search plugin's index and the name of its list of entries (material's or
    mkdocs' own), or None."""
    for name in ("material/search", "search"):
        plugin = config.plugins.get(name)
        index = getattr(plugin, "search_index", None)
        for attribute in ("entries", "_entries"):
            if isinstance(getattr(index, attribute, None), list):
                return index, attribute
    return None


def _fingerprint(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()


class _TrackedFile(File):
    """A generated file that is modified (for a dirty rebuild) only when its output would
    differ from what the previous build into the same folder wrote."""

    fingerprint: str = ""
    previous: dict[str, str] | None = None

    def is_modified(self) -> bool:
        if self.previous is None or not os.path.isfile(self.abs_dest_path):
            return True
        return self.previous.get(self.abs_dest_path) != self.fingerprint


_TEMPLATES: list[Any] = []  # the page templates' environment, compiled once per process


def _templates() -> Any:
    """The page model's template environment, kept across builds: a rebuild in `serve`
    (or a second build in one process) does not compile every template again."""
    from rooflinec.site.pages import environment

    if not _TEMPLATES:
        _TEMPLATES.append(environment())
    return _TEMPLATES[0]


def _always() -> bool:
    return True


def _asset(name: str) -> str:
    return resources.files("rooflinec.site").joinpath("assets").joinpath(name).read_text("utf-8")


def _version_selector_only_when_versioned(config: MkDocsConfig) -> None:
    """Drop material's mike version selector (`extra.version.provider: mike`) unless this
    build is a published version (mike sets MIKE_DOCS_VERSION, `rooflinec publish` sets
    ROOFLINEC_BUILD_VERSION): elsewhere its request for `../versions.json` fails."""
    from rooflinec.publish import ENV_VERSION

    extra = config.extra
    version = extra.get("version") if extra is not None else None
    if not isinstance(version, dict) or version.get("provider") != "mike":
        return
    if os.environ.get("MIKE_DOCS_VERSION") or os.environ.get(ENV_VERSION):
        return
    del extra["version"]


class RooflinecPlugin(BasePlugin[RooflinecConfig]):  # type: ignore[no-untyped-call]
    """Adds the roofline pages of a spec catalog to an mkdocs site."""

    supports_multiple_instances = False

    def __init__(self) -> None:
        self.specs_dir: Path | None = None
        self.model: SiteModel | None = None
        self.generated: dict[str, GeneratedPage] = {}
        self.home: GeneratedPage | None = None
        self.page_date: str | None = None
        self.site_key = ""
        self.previous: dict[str, str] | None = None
        self.tracked: list[_TrackedFile] = []
        self.home_fingerprint: tuple[str, str] | None = None
        self.files: Files | None = None

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig | None:
        from rooflinec.site.pages import SiteModel

        self.specs_dir = specs_dir_for(config, self.config.specs)
        compiled = compile_specs(self.specs_dir)
        self.model = SiteModel(
            compiled,
            default_device=self.config.default_device,
            chart_precision=self.config.chart_precision,
            svg=self.config.svg,
        )
        self.model.env = _templates()
        dates = [
            v.date
            for spec in (
                *compiled.catalog.devices.values(),
                *compiled.catalog.kernels.values(),
                *compiled.catalog.methods.values(),
            )
            for v in spec.versions
        ]
        self.page_date = max(dates) if dates else None
        _version_selector_only_when_versioned(config)
        for css in (f"{ASSET_DIR}/rooflinec.css",):
            if css not in config.extra_css:
                config.extra_css.append(css)
        script = f"{ASSET_DIR}/rooflinec.js"
        if script not in [str(s) for s in config.extra_javascript]:
            config.extra_javascript.append(script)
        return config

    def on_files(self, files: Files, /, *, config: MkDocsConfig) -> Files | None:
        from rooflinec.site.changes import Changes
        from rooflinec.site.charts import vega_bundle

        assert self.model is not None and self.specs_dir is not None
        # Only `rooflinec publish` sets the variables; a plain build has no changes context.
        self.model.changes = Changes.from_environment(self.specs_dir, self.model.compiled)
        pages = self.model.pages()
        self.generated = {}
        self.home = None
        self.tracked = []
        self.site_key = _fingerprint(
            repr(self.page_date),
            repr(config.nav),
            repr(sorted(self.config.items())),
            repr(sorted(f.src_uri for f in files)),
            "\n".join(sorted(page.path for page in pages)),
            # the navigation shows these pages' titles on every page
            repr([(page.path, page.title) for page in pages if page.path in NAV_PAGES]),
        )
        built = _BUILT.get(config.site_dir)
        self.previous = built[1] if built is not None and built[0] == self.site_key else None
        home_file = files.get_file_from_path("index.md")
        if home_file is not None:
            self.home = self.model.home_section("index.md")
            self._add_assets(files, config, self.home.assets)
        for page in pages:
            if files.get_file_from_path(page.path) is not None:
                log.warning(f"rooflinec: docs_dir has its own {page.path}; it is replaced")
                files.remove(files.get_file_from_path(page.path))  # type: ignore[arg-type]
            inclusion = (
                InclusionLevel.INCLUDED if page.path in NAV_PAGES else InclusionLevel.NOT_IN_NAV
            )
            self._add(
                files,
                _TrackedFile.generated(
                    config, page.path, content=page.markdown, inclusion=inclusion
                ),
                _fingerprint(page.title, page.slots.fill(page.markdown)),
            )
            self.generated[page.path] = page
            self._add_assets(files, config, page.assets)
        self._add_assets(files, config, self.model.downloads())
        self._add_assets(
            files,
            config,
            {
                f"{ASSET_DIR}/rooflinec.css": _asset("rooflinec.css"),
                f"{ASSET_DIR}/rooflinec.js": _asset("rooflinec.js"),
                f"{ASSET_DIR}/vega-bundle.js": vega_bundle(),
            },
        )
        self._track_hand_written(files, home_file)
        self.files = files
        return files

    def _add(self, files: Files, file: File, fingerprint: str) -> None:
        assert isinstance(file, _TrackedFile)
        file.fingerprint = fingerprint
        file.previous = self.previous
        files.append(file)
        self.tracked.append(file)

    def _add_assets(self, files: Files, config: MkDocsConfig, assets: dict[str, str]) -> None:
        for path, content in sorted(assets.items()):
            existing = files.get_file_from_path(path)
            if existing is not None:
                files.remove(existing)
            self._add(
                files, _TrackedFile.generated(config, path, content=content), _fingerprint(content)
            )

    def _track_hand_written(self, files: Files, home_file: File | None) -> None:
        """A dirty rebuild re-renders a hand-written page when its source is newer than its
        output (mkdocs' rule); also every one when the whole-site key changed, and the
        home page when its generated section did."""
        self.home_fingerprint = None
        if home_file is not None and self.home is not None:
            self.home_fingerprint = (
                f"{home_file.abs_dest_path}#home",
                _fingerprint(self.home.title, self.home.slots.fill(self.home.markdown)),
            )
        previous = self.previous
        for file in files.documentation_pages():
            if isinstance(file, _TrackedFile) or file.abs_src_path is None:
                continue
            if previous is None:
                file.is_modified = _always  # type: ignore[method-assign]
            elif file is home_file and self.home_fingerprint is not None:
                key, fingerprint = self.home_fingerprint
                if previous.get(key) != fingerprint:
                    file.is_modified = _always  # type: ignore[method-assign]

    @event_priority(50)  # before the search plugin writes its index
    def on_post_build(self, *, config: MkDocsConfig) -> None:
        record = {f.abs_dest_path: f.fingerprint for f in self.tracked}
        if self.home_fingerprint is not None:
            record[self.home_fingerprint[0]] = self.home_fingerprint[1]
        _BUILT.clear()  # one site folder at a time: serve's
        _BUILT[config.site_dir] = (self.site_key, record)
        self._complete_search_index(config)

    def _complete_search_index(self, config: MkDocsConfig) -> None:
        """A dirty rebuild indexes only the pages it renders: put in the entries of the
        others from the previous build, in the order a clean build gives them (and stop
        material's own merge, which keeps one changed page only)."""
        found = _search_entries(config)
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
            by_page = {**_SEARCH.get(config.site_dir, {}), **current}
            merged = [e for url in order for e in by_page.get(url, [])]
            merged += [e for url, found in current.items() if url not in order for e in found]
            setattr(index, attribute, merged)
            search = config.plugins.get("material/search")
            if search is not None and hasattr(search, "search_index_prev"):
                search.search_index_prev = None
        _SEARCH.clear()
        _SEARCH[config.site_dir] = {url: by_page[url] for url in order if url in by_page}

    def on_build_error(self, *, error: Exception) -> None:
        # Files may be half written: the next build into any folder starts afresh.
        _BUILT.clear()
        _SEARCH.clear()

    def on_page_markdown(
        self, markdown: str, /, *, page: Page, config: MkDocsConfig, files: Files
    ) -> str | None:
        if self.page_date:
            # mkdocs stamps every page with the build date (sitemap lastmod, gzip mtime);
            # the newest spec version date makes two builds of one catalog identical.
            page.update_date = self.page_date
        generated = self.generated.get(page.file.src_uri)
        if generated is not None:
            # The theme puts the title into <title> and the header without escaping, and
            # would take it from the rendered H1 with entities decoded: give it escaped.
            page.meta["title"] = html.escape(generated.title, quote=True)
        if page.file.src_uri == "index.md" and self.home is not None:
            from rooflinec.site.pages import HOME_MARKER

            if HOME_MARKER in markdown:
                return markdown.replace(HOME_MARKER, self.home.markdown)
            return markdown + "\n\n" + self.home.markdown
        return None

    def on_page_content(
        self, html: str, /, *, page: Page, config: MkDocsConfig, files: Files
    ) -> str | None:
        uri = page.file.src_uri
        generated = self.generated.get(uri)
        if generated is None and uri == "index.md" and self.home is not None:
            generated = self.home
        if generated is None:
            return None
        return generated.slots.fill(sanitize(html))

    def on_post_page(self, output: str, /, *, page: Page, config: MkDocsConfig) -> str | None:
        return compact_html(output)

    def on_serve(
        self, server: LiveReloadServer, /, *, config: MkDocsConfig, builder: Any
    ) -> LiveReloadServer | None:
        if self.specs_dir is not None:
            # mkdocs polls what it watches every 0.5 s; the specs folder (a few dozen small
            # files) is polled every 0.1 s, so an edit starts its rebuild sooner.
            observer = getattr(server, "observer", None)
            interval = getattr(observer, "_timeout", None)
            if isinstance(interval, (int, float)) and interval > SPECS_POLL_SECONDS:
                observer._timeout = SPECS_POLL_SECONDS  # type: ignore[union-attr]
                try:
                    server.watch(str(self.specs_dir))
                finally:
                    observer._timeout = interval  # type: ignore[union-attr]
            else:
                server.watch(str(self.specs_dir))
        return server
