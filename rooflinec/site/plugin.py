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
"""

from __future__ import annotations

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
from mkdocs.plugins import BasePlugin
from mkdocs.structure.files import File, Files, InclusionLevel

from rooflinec.errors import Diagnostic
from rooflinec.site.escape import compact_html, sanitize

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.livereload import LiveReloadServer
    from mkdocs.structure.pages import Page

    from rooflinec.site.pages import GeneratedPage, SiteModel

log = logging.getLogger("mkdocs.plugins.rooflinec")

ASSET_DIR = "assets/rooflinec"
NAV_PAGES = frozenset(
    {"index.md", "devices/index.md", "kernels/index.md", "comparison.md", "sources.md",
     "conflicts.md", "glossary.md", "changelog.md", "changes.md"}
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


_COMPILED: dict[Path, tuple[tuple[tuple[str, int, int], ...], Any]] = {}


def _signature(folder: Path) -> tuple[tuple[str, int, int], ...]:
    """What the compiled catalog depends on: every file's path, size and change time."""
    out = []
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            stat = path.stat()
            out.append((str(path), stat.st_size, stat.st_mtime_ns))
    return tuple(out)


def compiled_or_diagnostics(folder: Path) -> tuple[Any, list[Diagnostic]]:
    """(compiled catalog or None, diagnostics); cached while no file of `folder` changes,
    so `rooflinec build` (which checks the specs first) and `serve` compile once."""
    from rooflinec.cli.commands import checked

    key = folder.resolve()
    signature = _signature(key)
    hit = _COMPILED.get(key)
    if hit is not None and hit[0] == signature:
        return hit[1], []
    compiled, diagnostics, _ = checked(folder)
    if compiled is not None and not any(d.severity == "error" for d in diagnostics):
        _COMPILED.clear()
        _COMPILED[key] = (signature, compiled)
    return compiled, diagnostics


def compile_specs(folder: Path) -> Any:
    """The compiled catalog, or `SpecPluginError` with one diagnostic per line."""
    compiled, diagnostics = compiled_or_diagnostics(folder)
    errors = [d for d in diagnostics if d.severity == "error"]
    if compiled is None or errors:
        raise SpecPluginError(errors, folder)
    for warning in diagnostics:
        log.warning(str(warning))
    return compiled


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
        home_file = files.get_file_from_path("index.md")
        if home_file is not None:
            self.home = self.model.home_section("index.md")
            self._add_assets(files, config, self.home.assets)
        for page in pages:
            if files.get_file_from_path(page.path) is not None:
                log.warning(f"rooflinec: docs_dir has its own {page.path}; it is replaced")
                files.remove(files.get_file_from_path(page.path))  # type: ignore[arg-type]
            inclusion = (
                InclusionLevel.INCLUDED
                if page.path in NAV_PAGES
                else InclusionLevel.NOT_IN_NAV
            )
            files.append(File.generated(config, page.path, content=page.markdown,
                                        inclusion=inclusion))
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
        return files

    @staticmethod
    def _add_assets(files: Files, config: MkDocsConfig, assets: dict[str, str]) -> None:
        for path, content in sorted(assets.items()):
            existing = files.get_file_from_path(path)
            if existing is not None:
                files.remove(existing)
            files.append(File.generated(config, path, content=content))

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

    def on_post_page(
        self, output: str, /, *, page: Page, config: MkDocsConfig
    ) -> str | None:
        return compact_html(output)

    def on_serve(
        self, server: LiveReloadServer, /, *, config: MkDocsConfig, builder: Any
    ) -> LiveReloadServer | None:
        if self.specs_dir is not None:
            server.watch(str(self.specs_dir))
        return server

