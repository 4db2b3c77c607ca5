"""`rooflinec build` and `rooflinec serve`: mkdocs in-process on a temporary configuration.

Both work from any folder, on any specs folder, with an installed package: the site's
hand-written pages come from the package (`rooflinec.resources.site_dir`), the
configuration is written to a temporary folder (the same settings as the repository's
`mkdocs.yml`, see `site_config`), and the specs folder is passed to the plugin.

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
from pathlib import Path
from typing import Any

from rooflinec.errors import RooflinecError, UsageError
from rooflinec.site.output import (
    BUILD_TEMP_PREFIX,
    SERVE_TEMP_PREFIX,
    check_target,
    clean_stale,
    install,
    staging_folder,
    temporary_folder,
)

__all__ = ["build_site", "serve_site", "site_config"]

NAV: list[dict[str, str]] = [
    {"Home": "index.md"},
    {"Devices": "devices/index.md"},
    {"Kernels": "kernels/index.md"},
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
    docs_dir: Path, site_dir: Path, specs: Path, options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The mkdocs configuration: the repository's `mkdocs.yml`, with absolute folders;
    `options` are extra rooflinec plugin options."""
    return {
        "site_name": "rooflinec",
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


def _write_config(folder: Path, config: dict[str, Any]) -> Path:
    import json

    # JSON is YAML: no YAML writer needed, and paths with odd characters stay intact.
    path = folder / "mkdocs.yml"
    path.write_text(json.dumps(config, indent=1), "utf-8")
    return path


class _OneLine(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname.lower()}: {record.getMessage()}"


@contextlib.contextmanager
def _mkdocs_logging(verbose: bool) -> Iterator[None]:
    """mkdocs' warnings (and with `verbose`, its progress) on stderr, one line each."""
    logger = logging.getLogger("mkdocs")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine())
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
    from rooflinec.pipeline import compiled_or_diagnostics
    from rooflinec.resources import site_dir

    started = time.perf_counter()
    specs = specs.resolve()
    out = check_target(out, specs)
    # Check the specs before mkdocs runs: it would report a plugin error as a log line and
    # a generic abort. The plugin reuses this compilation.
    compiled, diagnostics = compiled_or_diagnostics(specs)
    errors = [d for d in diagnostics if d.severity == "error"]
    if compiled is None or errors:
        raise SpecError(errors)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create {out.parent}: {exc.strerror}") from exc
    clean_stale(out)
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    with temporary_folder(BUILD_TEMP_PREFIX) as tmp:
        docs = Path(tmp) / "docs"
        shutil.copytree(site_dir(), docs)
        staging = staging_folder(out)
        try:
            config_file = _write_config(Path(tmp), site_config(docs, staging, specs, options))
            with _mkdocs_logging(verbose):
                config = load_config(str(config_file))
                build(config)
            install(staging, out)
        except (MkDocsException, OSError) as exc:
            raise RooflinecError(f"site build failed: {exc}") from exc
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return time.perf_counter() - started


def serve_site(specs: Path, dev_addr: str = "127.0.0.1:8000") -> None:
    """`mkdocs serve` on the site of `specs`, rebuilding on every spec or page edit.

    Rebuilds are dirty: only the pages and files whose output changes are rendered and
    written again (the plugin tracks what each generated file held), so an edit to one
    device re-renders its page and the pages that list it, not the whole site. While a
    spec is broken every page shows the errors over the last good site."""
    from mkdocs.commands.serve import serve

    from rooflinec.resources import site_dir

    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    clean_stale(None)
    with temporary_folder(SERVE_TEMP_PREFIX) as tmp:
        # serve builds into a temporary folder of its own; site_dir here is never used.
        # A broken spec does not stop the preview: the last good site is shown with the
        # errors on a banner (the plugin's `show_errors`).
        options = {"show_errors": True}
        config = site_config(site_dir(), Path(tmp) / "unused", specs.resolve(), options)
        config_file = _write_config(Path(tmp), config)
        with _mkdocs_logging(verbose=True):
            serve(
                config_file=str(config_file),
                dev_addr=dev_addr,
                livereload=True,
                build_type="dirty",
            )
