"""`rooflinec build` and `rooflinec serve`: mkdocs in-process, on the project's site.

The project is the folder that holds the specs folder (`./specs` by default). Its own
`mkdocs.yml` is the configuration when it has one (it must list the `rooflinec` plugin);
else its own `site/` folder holds the hand-written pages, under the settings of
`site_config`; else the package's copy of rooflinec's pages is used
(`rooflinec.resources.site_dir`), so both commands work from any folder with an installed
package. See `site_source`. The specs folder is given to the plugin over whatever the
configuration says (`rooflinec.site.plugin.session_options`).

The build writes into a temporary sibling of the output folder and moves it in only when
everything succeeded, so a failed build (a spec error, a bug) leaves the previous site as
it was; what it may replace there is `rooflinec.site.output`'s business.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rooflinec.errors import RooflinecError, UsageError
from rooflinec.outputs.outfile import write_error
from rooflinec.site.output import (
    BUILD_TEMP_PREFIX,
    SERVE_TEMP_PREFIX,
    check_target,
    clean_stale,
    install,
    staging_entry,
    temporary_folder,
)

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig

__all__ = [
    "SITE_URL",
    "SiteSource",
    "build_site",
    "serve_site",
    "site_config",
    "site_source",
]

SITE_URL = "https://rooflinec.github.io/rooflinec/"
"""Where rooflinec's own site is published (the repository's `mkdocs.yml` says the
same): the sitemap's URLs and the 404 page's links start with it."""
DIRTY_BUILD_WARNING = "A 'dirty' build is being performed"

NAV: list[dict[str, str]] = [
    {"Home": "index.md"},
    {"Devices": "devices/index.md"},
    {"Kernels": "kernels/index.md"},
    {"Models": "models/index.md"},
    {"Accuracy": "accuracy.md"},
    {"Calculator": "calculator.md"},
    {"Comparison": "comparison.md"},
    {"Method": "method/roofline.md"},
    {"Sources": "sources.md"},
    {"Conflicts": "conflicts.md"},
    {"Glossary": "glossary.md"},
    {"Spec language": "spec-language.md"},
    {"Contributing": "contributing.md"},
    {"Changelog": "changelog.md"},
    {"Changes": "changes.md"},
    {"Performance": "performance.md"},
]


def site_config(
    docs_dir: Path,
    site_dir: Path,
    specs: Path,
    options: dict[str, Any] | None = None,
    *,
    site_url: str | None = None,
) -> dict[str, Any]:
    """The mkdocs configuration: the repository's `mkdocs.yml`, with absolute folders;
    `options` are extra rooflinec plugin options. `site_url` only for rooflinec's own
    pages (a project's own `site/` is published elsewhere, or nowhere)."""
    return {
        "site_name": "rooflinec",
        **({"site_url": site_url} if site_url else {}),
        "site_description": "Roofline results for accelerators and kernels, with every "
        "figure sourced.",
        "docs_dir": str(docs_dir),
        "site_dir": str(site_dir),
        "use_directory_urls": False,
        "strict": False,
        "theme": {
            "name": "material",
            "font": False,
            "features": ["navigation.indexes", "navigation.tabs", "navigation.top"],
            "palette": {"primary": "indigo"},
        },
        "plugins": [
            "search",
            {"rooflinec": {"specs": str(specs), "chart_precision": "bf16", **(options or {})}},
        ],
        "markdown_extensions": [
            "admonition",
            "attr_list",
            "md_in_html",
            "tables",
            {"toc": {"permalink": True}},
        ],
        "nav": NAV,
        # material's version selector, filled from mike's versions.json when the site is
        # published with `rooflinec publish`; without it (a plain build) nothing shows.
        "extra": {"version": {"provider": "mike"}},
    }


@dataclass(frozen=True)
class SiteSource:
    """Where a build's configuration and hand-written pages come from."""

    config_file: Path | None
    """The project's own `mkdocs.yml`, used as it is (its `docs_dir` holds the pages)."""
    docs_dir: Path | None
    """Without a `config_file`: the hand-written pages, under `site_config`."""

    @property
    def bundled(self) -> bool:
        """True for the package's copy of rooflinec's own pages."""
        return self.config_file is None and self.docs_dir == _bundled_site()


def _bundled_site() -> Path:
    from rooflinec.resources import site_dir

    return site_dir().resolve()


def site_source(specs: Path) -> SiteSource:
    """The site of the project around `specs`: its `mkdocs.yml`, else its `site/`
    folder, else rooflinec's own pages from the package."""
    project = specs.resolve().parent
    config_file = project / "mkdocs.yml"
    if config_file.is_file():
        return SiteSource(config_file, None)
    if (project / "site").is_dir():
        return SiteSource(None, (project / "site").resolve())
    return SiteSource(None, _bundled_site())


def _write_config(folder: Path, config: dict[str, Any]) -> Path:
    import json

    # JSON is YAML: no YAML writer needed, and paths with odd characters stay intact.
    path = folder / "mkdocs.yml"
    path.write_text(json.dumps(config, indent=1), "utf-8")
    return path


class _OneLine(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname.lower()}: {record.getMessage()}"


class _NotTheDirtyBuildWarning(logging.Filter):
    """Drops mkdocs' warning that a dirty build may leave stale navigation and links:
    `rooflinec serve` rebuilds dirty on purpose and the plugin re-renders every page
    whose output changes (`rooflinec.site.incremental`), so the warning says nothing."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(DIRTY_BUILD_WARNING)


@contextlib.contextmanager
def _mkdocs_logging(verbose: bool, *, serving: bool = False) -> Iterator[None]:
    """mkdocs' warnings (and with `verbose`, its progress) on stderr, one line each;
    `serving` drops the dirty-build warning of every rebuild."""
    logger = logging.getLogger("mkdocs")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine())
    if serving:
        handler.addFilter(_NotTheDirtyBuildWarning())
    level = logging.INFO if verbose else logging.WARNING
    handler.setLevel(level)
    old_level, old_propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        logger.propagate = old_propagate


def build_site(
    specs: Path, out: Path, *, verbose: bool = False, options: dict[str, Any] | None = None
) -> float:
    """Build the site of `specs` into `out`; return the seconds it took.

    Raises `SpecError` (with the diagnostics) when the specs do not compile, and
    `RooflinecError` when mkdocs fails otherwise; `out` is untouched in both cases.
    """
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException

    from rooflinec.errors import SpecError
    from rooflinec.pipeline import Compilations, compiled_or_diagnostics
    from rooflinec.progress import progress_line
    from rooflinec.site.plugin import plugin_of, session_options

    started = time.perf_counter()
    specs = specs.resolve()
    out = check_target(out, specs)
    # Check the specs before mkdocs runs: it would report a plugin error as a log line and
    # a generic abort. The plugin reuses this compilation (its session gets `kept`).
    kept = Compilations()
    compiled, diagnostics = compiled_or_diagnostics(specs, kept)
    errors = [d for d in diagnostics if d.severity == "error"]
    if compiled is None or errors:
        raise SpecError(errors)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create {out.parent}: {exc.strerror}") from exc
    clean_stale(out)
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    source = site_source(specs)
    with temporary_folder(BUILD_TEMP_PREFIX) as tmp:
        entry = staging_entry(out)
        try:
            try:
                staging = entry.folder_made()
            except OSError as exc:  # a folder rooflinec may not write in, a full disk
                raise write_error(out, exc) from exc
            with _mkdocs_logging(verbose):
                if source.config_file is not None:
                    config = _project_config(source.config_file, site_dir=str(staging))
                else:
                    # A copy: mkdocs reads the pages while the originals may be edited.
                    docs = Path(tmp) / "docs"
                    shutil.copytree(_docs_dir(source), docs)
                    settings = _settings(source, docs, staging, specs, options)
                    config = load_config(str(_write_config(Path(tmp), settings)))
                with (
                    progress_line(0, "build", unit="pages") as line,
                    session_options(
                        plugin_of(config), {"specs": str(specs), **(options or {})}, line
                    ),
                ):
                    # as `mkdocs build` does: the plugin starts a new session
                    config.plugins.on_startup(command="build", dirty=False)
                    plugin_of(config).session.compilations = kept
                    build(config)
            try:
                install(staging, out)
            except OSError as exc:
                raise write_error(out, exc) from exc
        except (MkDocsException, OSError) as exc:
            raise RooflinecError(f"site build failed: {exc}") from exc
        finally:
            if entry.path is not None:
                shutil.rmtree(entry.path, ignore_errors=True)
    return time.perf_counter() - started


def _docs_dir(source: SiteSource) -> Path:
    return source.docs_dir if source.docs_dir is not None else _bundled_site()


def _settings(
    source: SiteSource,
    docs: Path,
    site_dir: Path,
    specs: Path,
    options: dict[str, Any] | None,
) -> dict[str, Any]:
    """`site_config` for a source without its own `mkdocs.yml`."""
    url = SITE_URL if source.bundled else None
    return site_config(docs, site_dir, specs, options, site_url=url)


def _project_config(config_file: Path, **overrides: Any) -> MkDocsConfig:
    """The project's `mkdocs.yml` loaded with `overrides`; `UsageError` if it does not
    use the rooflinec plugin (it would build a site without a single roofline page)."""
    from mkdocs.config import load_config

    config = load_config(str(config_file), **overrides)
    if "rooflinec" not in config.plugins:
        raise UsageError(
            f"{config_file}: the project's mkdocs.yml does not list the rooflinec plugin "
            "(plugins: [search, rooflinec])"
        )
    return config


def serve_site(specs: Path, dev_addr: str = "127.0.0.1:8000") -> None:
    """`mkdocs serve` on the site of `specs`, rebuilding on every spec or page edit.

    Rebuilds are dirty: only the pages and files whose output changes are rendered and
    written again (the plugin tracks what each generated file held), so an edit to one
    device re-renders its page and the pages that list it, not the whole site. While a
    spec is broken every page shows the errors over the last good site. The project's
    pages are served from where they are, so an edit to one is served at once."""
    from mkdocs.commands.serve import serve
    from mkdocs.config import load_config

    from rooflinec.site.plugin import plugin_of, session_options

    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    clean_stale(None)
    specs = specs.resolve()
    source = site_source(specs)
    # A broken spec does not stop the preview: the last good site is shown with the
    # errors on a banner (the plugin's `show_errors`).
    options = {"specs": str(specs), "show_errors": True}
    with temporary_folder(SERVE_TEMP_PREFIX) as tmp:
        if source.config_file is not None:
            config = _project_config(source.config_file)
            config_file = source.config_file
        else:
            # serve builds into a temporary folder of its own; site_dir here is never used.
            settings = _settings(source, _docs_dir(source), Path(tmp) / "unused", specs, options)
            # mkdocs serve mounts the site at site_url's path: a local preview stays at /.
            settings.pop("site_url", None)
            config_file = _write_config(Path(tmp), settings)
            config = load_config(str(config_file))
        # mkdocs keeps the plugin's one instance for the process and for every rebuild,
        # and starts its session (which keeps unchanged devices' pages) in `serve`.
        with (
            _mkdocs_logging(verbose=True, serving=True),
            session_options(plugin_of(config), options),
        ):
            serve(
                config_file=str(config_file),
                dev_addr=dev_addr,
                livereload=True,
                build_type="dirty",
            )
