"""The `rooflinec` mkdocs plugin: compile the catalog once per build, add the generated pages.

Hooks, in build order:

- `on_config`: resolve the specs folder, compile the catalog (a spec error fails the build
  with the one-line diagnostics; with `show_errors`, as in `rooflinec serve`, the last good
  catalog is used and the errors go on a banner), add the site's CSS and script, enable
  the Markdown extensions the pages need and make a missing anchor a warning (see
  `rooflinec.site.requirements`), and keep material's mike version selector only in a
  build of a published version.
- `on_files`: build the `Site` value, then add every generated page, its chart files, the
  Vega runtime, the downloads (results, catalog with provenance, JSON Schemas under
  `schemas/`) and, for a version built by `rooflinec publish`, `rooflinec-build.json`
  and the changes against the previous published version, as virtual files
  (`File.generated`); nothing is written into `docs_dir`.
- `on_env`: pin every page's date to the catalog's newest version date (no build clock in
  the output), clamped to what a 32-bit count of seconds since 1970 holds (see
  `sitemap_date`).
- `on_page_markdown`: give each generated page its escaped title, put the generated
  comparison into the home page, and unlink a hand-written page's links to method pages
  the catalog lacks (`rooflinec.site.absent`, which also drops them from the nav). The
  tables of generated pages (and of the home section) are rendered here rather than by
  Python-Markdown, byte for byte as it would (`rooflinec.site.fast_tables`).
- `on_page_content`: put those tables in, sanitise the HTML of every generated page with
  nh3, then put the trusted fragments (charts, formulas) in, their file links made right
  for the page's URL (`rooflinec.site.urls`).
- `on_page_context`: find a generated page's search sections for material's search plugin,
  the same entries its `html.parser` pass would give (`rooflinec.site.fast_search`).
- `on_post_page` / `on_post_template`: compact the HTML; put the spec-error banner (see
  `rooflinec.site.banner`) on every page and on the 404 page while the specs are broken.
- `on_serve`: watch the specs folder, so `mkdocs serve` rebuilds on every spec edit.
- `on_post_build` / `on_build_error`: remember (or forget) what each generated file held.

Dirty rebuilds (`rooflinec serve`) render only the files whose output changed: see
`rooflinec.site.incremental`.

The plugin defines `on_startup`, so mkdocs keeps its one instance across the rebuilds of
`serve`: every cache lives in the `Session` that `on_startup` makes (one per mkdocs run,
see `rooflinec.site.session`), none at module level.
"""

from __future__ import annotations

import contextlib
import html
import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority
from mkdocs.structure.files import Files, InclusionLevel

from rooflinec.errors import Diagnostic, internal_error_line
from rooflinec.pipeline import Compilations, compiled_or_diagnostics, last_compiled
from rooflinec.site.absent import nav_without_absent_methods, unlink_absent_methods
from rooflinec.site.banner import banner_html, with_banner
from rooflinec.site.escape import compact_html, sanitize
from rooflinec.site.fast_search import FastSearch
from rooflinec.site.fast_tables import FastTables, RowMemo
from rooflinec.site.incremental import Rebuild, fingerprint
from rooflinec.site.mkdocs_compat import (
    cache_theme_listing,
    fast_paths,
    fast_paths_line,
    stamp_update_date,
    theme_template_cache,
    watch_quickly,
)
from rooflinec.site.pages.common import PER_INDEX_PAGE
from rooflinec.site.requirements import add_required_extensions, warn_on_missing_anchors
from rooflinec.site.session import Session
from rooflinec.site.urls import relocate_page_files, source_folder_from_page

if TYPE_CHECKING:
    from jinja2 import Environment
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.livereload import LiveReloadServer
    from mkdocs.structure.nav import Navigation
    from mkdocs.structure.pages import Page
    from mkdocs.utils.templates import TemplateContext

    from rooflinec.engine.compiler import Compiled
    from rooflinec.progress import ProgressLine
    from rooflinec.site.pages.common import GeneratedPage

log = logging.getLogger("mkdocs.plugins.rooflinec")

ASSET_DIR = "assets/rooflinec"
# The dates a 32-bit unsigned count of seconds since 1970-01-01 (gzip's header) can hold.
FIRST_STAMPABLE_DATE = "1970-01-01"
LAST_STAMPABLE_DATE = "2106-02-07"
SPECS_POLL_SECONDS = 0.1
NAV_PAGES = frozenset(
    {
        "index.md",
        "devices/index.md",
        "kernels/index.md",
        "models/index.md",
        "comparison.md",
        "sources.md",
        "conflicts.md",
        "glossary.md",
        "changelog.md",
        "changes.md",
    }
)


def sitemap_date(date: str) -> str:
    """`date` (ISO, `YYYY-MM-DD`) as the pages' update date, clamped to 1970-01-01 ..
    2106-02-07: mkdocs writes the newest one into `sitemap.xml.gz`'s header as a 32-bit
    count of seconds and fails outside that range. Only the sitemap shows this date; the
    pages show every version date as written."""
    import datetime

    try:
        day = datetime.date.fromisoformat(date).isoformat()
    except ValueError:  # not a calendar date: the loader reports it; stamp nothing odd
        return FIRST_STAMPABLE_DATE
    return min(max(day, FIRST_STAMPABLE_DATE), LAST_STAMPABLE_DATE)


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
    show_errors = c.Type(bool, default=False)
    """On spec errors, build the last good catalog's site (or the hand-written pages alone)
    with the errors on a banner on every page, instead of failing: `rooflinec serve` sets
    it, so a broken spec never stops the preview."""
    per_index_page = c.Type(int, default=PER_INDEX_PAGE)
    """Rows per devices or kernels index page; more start `index-2`, ..."""
    frontier = c.Type(bool, default=True)
    """Build each model's frontier pages (`models/<id>/frontier-<request>.md`), the model
    pages' links to them and the comparison page's summary (the float path's search
    over every deployment and batch: a few seconds of CPU for the bundled catalog)."""
    prices = c.Type(dict, default={})
    """The reader's prices per chip-hour, `{DEVICE: 2.5 USD/h}`: shown on device pages
    labelled as the reader's, and used for the cost of the plans (`reader_prices`)."""
    fast_paths = c.Type(bool, default=True)
    """Render the generated pages' tables and search sections with rooflinec's fast paths
    (the same bytes, sooner); off, or with a mkdocs, Python-Markdown or material outside
    the tested versions (`rooflinec.site.mkdocs_compat`), the plain mkdocs path runs."""


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


def reader_prices(
    option: Mapping[object, object], devices: Mapping[str, object]
) -> dict[str, Fraction]:
    """The plugin option `prices` as USD per chip-hour by device; `PluginError` in one line
    for an unknown device or a value that is not a price (`2.5 USD/h`, or `2.5USD/h`)."""
    from rooflinec.quantities import Dimension, QuantityError, parse_cli_quantity

    out: dict[str, Fraction] = {}
    for device, value in option.items():
        name = str(device)[:60]
        if not isinstance(device, str) or device not in devices:
            raise PluginError(f"rooflinec: prices: unknown device {name!r}")
        if not isinstance(value, str):
            raise PluginError(
                f"rooflinec: prices: {device}: {str(value)[:40]!r} is not a price: write it"
                " with its unit, as '2.5 USD/h' (per chip-hour)"
            )
        try:
            out[device] = parse_cli_quantity(value, Dimension.PRICE).value * 3600
        except QuantityError as exc:
            raise PluginError(f"rooflinec: prices: {device}: {exc.message}") from None
    return out


def compile_specs(folder: Path, kept: Compilations) -> Compiled:
    """The compiled catalog, or `SpecPluginError` with one diagnostic per line."""
    found, diagnostics = compiled_or_diagnostics(folder, kept)
    compiled: Compiled | None = found
    errors = [d for d in diagnostics if d.severity == "error"]
    if compiled is None or errors:
        raise SpecPluginError(errors, folder)
    for warning in diagnostics:
        log.warning(str(warning))
    return compiled


def compile_or_last_good(folder: Path, kept: Compilations) -> tuple[Compiled | None, list[str]]:
    """(the compiled catalog, []) when the specs compile; else (the last catalog of
    `folder` that did, else the one compiled now if it got that far, else None; the
    error lines).

    Any failure of the spec pipeline is an error line: an exception no check turned into
    a diagnostic (a bug) is shown as rooflinec's internal-error line, and the preview
    keeps answering with the last good site, instead of a rebuild that raises and leaves
    the server waiting."""
    try:
        compiled, diagnostics = compiled_or_diagnostics(folder, kept)
    except Exception as exc:
        line = internal_error_line(exc)
        log.error(line)
        return last_compiled(folder, kept), [line]
    errors = [str(d) for d in diagnostics if d.severity == "error"]
    for warning in diagnostics:
        if warning.severity != "error":
            log.warning(str(warning))
    if compiled is not None and not errors:
        return compiled, []
    lines = errors or [f"{folder}: the catalog did not compile"]
    for line in lines:
        log.error(line)
    return last_compiled(folder, kept) or compiled, lines


def plugin_of(config: MkDocsConfig) -> RooflinecPlugin:
    """The configuration's rooflinec plugin: the one instance mkdocs keeps for the
    process (it defines `on_startup`), so every later load of a configuration that lists
    the plugin (`serve`'s, on each rebuild) gets this same object."""
    plugin = config.plugins.get("rooflinec")
    assert isinstance(plugin, RooflinecPlugin), "the configuration lists no rooflinec plugin"
    return plugin


@contextlib.contextmanager
def session_options(
    plugin: RooflinecPlugin,
    options: Mapping[str, Any],
    progress: ProgressLine | None = None,
) -> Iterator[RooflinecPlugin]:
    """`plugin` with `options` winning over the mkdocs configuration's, and `progress`
    told of the pages, while the block runs.

    `rooflinec build` and `serve` build a project with its own `mkdocs.yml` and give the
    plugin the specs folder of their command line (and `serve` its `show_errors`): mkdocs
    reloads the configuration file on every `serve` rebuild, so the options cannot be
    written into it; the plugin instance is kept, so they are given to it. `progress`
    (`rooflinec build`'s progress line) is told how many pages the build renders, and
    each page as it is written. Unknown names raise `KeyError`."""
    unknown = sorted(set(options) - set(RooflinecConfig().keys()))
    if unknown:
        raise KeyError(f"unknown rooflinec plugin options: {', '.join(unknown)}")
    saved = plugin.overrides, plugin.progress
    plugin.overrides, plugin.progress = dict(options), progress
    try:
        yield plugin
    finally:
        plugin.overrides, plugin.progress = saved


def _asset(name: str) -> str:
    return resources.files("rooflinec.site").joinpath("assets").joinpath(name).read_text("utf-8")


def _version_selector_only_when_versioned(config: MkDocsConfig) -> None:
    """Drop material's mike version selector (`extra.version.provider: mike`) unless this
    build is a published version (mike sets MIKE_DOCS_VERSION, `rooflinec publish` sets
    ROOFLINEC_BUILD_VERSION): elsewhere its request for `../versions.json` fails."""
    from rooflinec.site.publish import ENV_VERSION

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
        self.compiled: Compiled | None = None
        self.generated: dict[str, GeneratedPage] = {}
        self.home: GeneratedPage | None = None
        self.page_date: str | None = None
        self.prices: dict[str, Fraction] = {}  # the reader's, USD per chip-hour
        self.rebuild: Rebuild | None = None
        self.errors: list[str] = []
        self.banner = ""
        self.tables = FastTables()
        self.search = FastSearch((self._search_sections, self._search_entries))
        self.session = Session()  # a build that never started (no `on_startup`) gets one too
        self.fast = True  # the fast paths run (`mkdocs_compat.fast_paths`)
        self.overrides: dict[str, Any] = {}  # `session_options`
        self.progress: ProgressLine | None = None  # `session_options`

    def on_startup(self, *, command: str, dirty: bool) -> None:
        # Once per mkdocs run: its presence makes mkdocs keep this instance across the
        # rebuilds of `serve`, which share this session (device pages too: `keep_pages`).
        from rooflinec.site.charts import render_svg
        from rooflinec.site.session import SVGS_KEPT
        from rooflinec.site.svg_renders import SvgRenders

        serve = command == "serve"
        renders = SvgRenders(render_svg, SVGS_KEPT) if serve else None
        self.session = Session(keep_pages=serve, renders=renders)

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig | None:
        for key, value in self.overrides.items():
            self.config[key] = value
        session = self.session
        if session.renders is not None:
            session.renders.cancel()  # what the last build left is superseded
        self.search = FastSearch(
            (self._search_sections, self._search_entries),
            session.search_rows if session.keep_pages else None,
        )
        self.fast = fast_paths(self.config.fast_paths)
        if not self.fast and not self.session.told_plain_path:
            self.session.told_plain_path = True  # once a session, not on every rebuild
            log.info(fast_paths_line(self.config.fast_paths))
        if self.fast:
            cache_theme_listing(config, self.session.theme_files)
        self.specs_dir = specs_dir_for(config, self.config.specs)
        if self.config.show_errors:
            kept = self.session.compilations
            self.compiled, self.errors = compile_or_last_good(self.specs_dir, kept)
        else:
            self.compiled = compile_specs(self.specs_dir, self.session.compilations)
        self.banner = (
            banner_html(self.errors, stale=self.compiled is not None) if self.errors else ""
        )
        self.page_date = None
        if self.compiled is not None:
            catalog = self.compiled.catalog
            # A bad option is the config's error, not the specs': it stops the build.
            self.prices = reader_prices(self.config.prices, catalog.devices)
            dates = [v.date for d in catalog.devices.values() for v in d.versions]
            dates += [v.date for k in catalog.kernels.values() for v in k.versions]
            dates += [v.date for m in catalog.methods.values() for v in m.versions]
            dates += [v.date for m in catalog.models.values() for v in m.versions]
            self.page_date = sitemap_date(max(dates)) if dates else None
            config.nav = nav_without_absent_methods(config.nav, catalog.methods)
        _version_selector_only_when_versioned(config)
        for name in add_required_extensions(config):
            log.info(f"rooflinec: enabled the Markdown extension {name}, which its pages need")
        warn_on_missing_anchors(config)
        for css in (f"{ASSET_DIR}/rooflinec.css",):
            if css not in config.extra_css:
                config.extra_css.append(css)
        script = f"{ASSET_DIR}/rooflinec.js"
        if script not in [str(s) for s in config.extra_javascript]:
            config.extra_javascript.append(script)
        return config

    def on_files(self, files: Files, /, *, config: MkDocsConfig) -> Files | None:
        from rooflinec.site.charts import vega_bundle
        from rooflinec.site.pages.common import PageLimits
        from rooflinec.site.pages.downloads import downloads
        from rooflinec.site.pages.home import home_section
        from rooflinec.site.pages.listing import pages
        from rooflinec.site.pages.model import Site
        from rooflinec.site.versions import Changes

        assert self.specs_dir is not None
        site = None
        generated: list[GeneratedPage] = []
        home_file = files.get_file_from_path("index.md")
        home: GeneratedPage | None = None
        extra: dict[str, str] = {}
        try:
            if self.compiled is not None:  # None: specs broken since serve started (banner)
                site = Site.of(
                    self.compiled,
                    default_device=self.config.default_device,
                    chart_precision=self.config.chart_precision,
                    svg=self.config.svg,
                    # Only `rooflinec publish` sets the variables; a plain build has none.
                    changes=Changes.from_environment(self.specs_dir, self.compiled),
                    limits=PageLimits(per_index_page=self.config.per_index_page),
                    session=self.session,
                    prices=self.prices,
                    frontier=self.config.frontier,
                )
                generated = pages(site)
                home = home_section(site, "index.md") if home_file is not None else None
                extra = downloads(site)
        except Exception as exc:
            if not self.config.show_errors:
                raise
            # A bug in making the pages: under `serve` the banner says so on every page
            # (the hand-written ones and the 404 page) and the preview keeps answering.
            line = internal_error_line(exc)
            log.error(line)
            self.errors = [*self.errors, line]
            self.banner = banner_html(self.errors, stale=False)
            site, generated, home, extra = None, [], None, {}
        self.generated = {}
        self.home = None
        rebuild = self.rebuild = Rebuild(
            self.session,
            config.site_dir,
            fingerprint(
                repr(self.page_date),
                repr(config.nav),
                repr(sorted(self.config.items())),
                repr(sorted(f.src_uri for f in files)),
                "\n".join(sorted(page.path for page in generated)),
                # the navigation shows these pages' titles on every page
                repr([(page.path, page.title) for page in generated if page.path in NAV_PAGES]),
                self.banner,
            ),
        )
        if home is not None:
            self.home = home
            rebuild.add_files(files, config, home.assets)
        for page in generated:
            if files.get_file_from_path(page.path) is not None:
                log.warning(f"rooflinec: docs_dir has its own {page.path}; it is replaced")
                files.remove(files.get_file_from_path(page.path))  # type: ignore[arg-type]
            inclusion = (
                InclusionLevel.INCLUDED if page.path in NAV_PAGES else InclusionLevel.NOT_IN_NAV
            )
            rebuild.add_page(files, config, page, inclusion)
            self.generated[page.path] = page
            rebuild.add_files(files, config, page.assets)
        rebuild.add_files(files, config, extra)
        rebuild.add_files(
            files,
            config,
            {
                f"{ASSET_DIR}/rooflinec.css": _asset("rooflinec.css"),
                f"{ASSET_DIR}/rooflinec.js": _asset("rooflinec.js"),
                f"{ASSET_DIR}/vega-bundle.js": vega_bundle(),
            },
        )
        rebuild.track_hand_written(files, home_file, self.home)
        return files

    def on_env(self, env: Environment, /, *, config: MkDocsConfig, files: Files) -> None:
        if self.progress is not None:
            self.progress.total = len(files.documentation_pages())
        if self.fast:
            theme_template_cache(env)  # a rebuild does not compile the theme again
        if self.page_date:
            # mkdocs stamps every page with the build date (sitemap lastmod, gzip mtime);
            # the newest spec version date makes two builds of one catalog identical. Here
            # rather than per page: a dirty rebuild reads only the pages it renders.
            stamp_update_date(files, self.page_date)

    @event_priority(50)  # before the search plugin writes its index
    def on_post_build(self, *, config: MkDocsConfig) -> None:
        if self.rebuild is not None:
            self.rebuild.finish(config)
        if self.session.renders is not None:
            self.session.renders.start(config.site_dir)

    def on_build_error(self, *, error: Exception) -> None:
        self.session.forget_build()

    def on_page_markdown(
        self, markdown: str, /, *, page: Page, config: MkDocsConfig, files: Files
    ) -> str | None:
        generated = self.generated.get(page.file.src_uri)
        if generated is not None:
            # The theme puts the title into <title> and the header without escaping, and
            # would take it from the rendered H1 with entities decoded: give it escaped.
            page.meta["title"] = html.escape(generated.title, quote=True)
            if self.fast:
                markdown = self.tables.take(markdown, page, config, files, self._rows())
        elif self.compiled is not None:
            markdown = unlink_absent_methods(
                markdown, page.file.src_uri, self.compiled.catalog.methods
            )
        if page.file.src_uri == "index.md" and self.home is not None:
            from rooflinec.site.pages.common import HOME_MARKER

            home = self.home.markdown
            if self.fast:
                home = self.tables.take(home, page, config, files, self._rows())
            if HOME_MARKER in markdown:
                return markdown.replace(HOME_MARKER, home)
            return markdown + "\n\n" + home
        return markdown

    def _rows(self) -> RowMemo | None:
        """Where rendered table rows are kept: across a `serve` session's rebuilds only
        (a single build renders most rows once)."""
        return self.session.table_rows if self.session.keep_pages else None

    def on_page_content(
        self, html: str, /, *, page: Page, config: MkDocsConfig, files: Files
    ) -> str | None:
        uri = page.file.src_uri
        generated = self.generated.get(uri)
        if generated is None and uri == "index.md" and self.home is not None:
            generated = self.home
        if generated is None:
            return None
        html = self.tables.put(html, page)  # before the sanitiser: it sees them as before
        filled = generated.slots.fill(sanitize(html))
        prefix = source_folder_from_page(uri, page.file.dest_uri)
        return relocate_page_files(filled, uri, generated.assets, prefix)

    @event_priority(1)  # right before material's search plugin (priority 0) reads the page
    def _search_sections(
        self, context: TemplateContext, /, *, page: Page, config: MkDocsConfig, nav: Navigation
    ) -> None:
        uri = page.file.src_uri
        if not self.fast:
            return
        if uri in self.generated or (uri == "index.md" and self.home is not None):
            self.search.before(page, config)

    @event_priority(-1)  # right after it
    def _search_entries(
        self, context: TemplateContext, /, *, page: Page, config: MkDocsConfig, nav: Navigation
    ) -> None:
        self.search.after(page)

    # material's search parses every page's HTML with html.parser; the generated pages'
    # sections are found faster, to the same entries (`rooflinec.site.fast_search`).
    on_page_context = CombinedEvent(_search_sections, _search_entries)

    def on_post_page(self, output: str, /, *, page: Page, config: MkDocsConfig) -> str | None:
        if self.progress is not None:
            self.progress(1)
        compact = compact_html(output)
        return with_banner(compact, self.banner) if self.banner else compact

    def on_post_template(
        self, output_content: str, /, *, template_name: str, config: MkDocsConfig
    ) -> str | None:
        # The 404 page too: a generated page missing while the specs are broken lands there.
        if self.banner and template_name == "404.html":
            return with_banner(output_content, self.banner)
        return None

    def on_serve(
        self, server: LiveReloadServer, /, *, config: MkDocsConfig, builder: Any
    ) -> LiveReloadServer | None:
        if self.specs_dir is not None:
            # mkdocs polls what it watches every 0.5 s; the specs folder (a few dozen small
            # files) is polled every 0.1 s, so an edit starts its rebuild sooner.
            if self.fast:
                watch_quickly(server, str(self.specs_dir), SPECS_POLL_SECONDS)
            else:
                server.watch(str(self.specs_dir))
        return server
