"""Every link of a built site resolves: with mkdocs' defaults in a user's own `mkdocs.yml`,
with directory URLs on and off, for a catalog without methods, and on the 404 page under
a version folder of a published site. `mkdocs build --strict` fails on a broken link."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rooflinec.site.build import SITE_URL, _write_config, build_site, site_config
from rooflinec.site.requirements import add_required_extensions, warn_on_missing_anchors
from rooflinec.site.urls import relocate_page_files, source_folder_from_page
from tests.sitecrawl import crawl

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / "specs"
MINIMAL_CONFIG = "site_name: x\nplugins:\n  - search\n  - rooflinec\n"

pytest.importorskip("mkdocs")


def _mkdocs_build(project: Path) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict` in `project`, as a user runs it."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _scratch_project(root: Path, index: str = "# Hello\n") -> Path:
    """A user's project: a minimal `mkdocs.yml` (mkdocs' defaults: directory URLs, no
    extensions, the mkdocs theme) and one page; the specs are the bundled catalog."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "mkdocs.yml").write_text(MINIMAL_CONFIG, "utf-8")
    (root / "docs").mkdir()
    (root / "docs" / "index.md").write_text(index, "utf-8")
    return root


def test_a_minimal_mkdocs_yml_builds_strict_with_no_broken_link(tmp_path: Path) -> None:
    """`plugins: [search, rooflinec]` and nothing else: `--strict` passes and every link and
    anchor of the built HTML resolves (directory URLs: `devices/x/index.html`)."""
    project = _scratch_project(tmp_path / "project")
    done = _mkdocs_build(project)
    assert 0 == done.returncode, done.stderr[-3000:]
    site = project / "site"
    assert (site / "devices" / "nvidia-h100-sxm" / "index.html").is_file()
    assert (site / "devices" / "nvidia-h100-sxm.roofline.svg").is_file()
    assert [] == [str(b) for b in crawl(site)]


def test_strict_fails_on_a_link_to_a_missing_anchor(tmp_path: Path) -> None:
    """A link to an anchor that a generated page lacks is a warning, so `--strict` fails
    (mkdocs' own default only logs it as information)."""
    link = "[x](devices/nvidia-h100-sxm.md#no-such-figure)"
    project = _scratch_project(tmp_path / "project", f"# Hello\n\n{link}\n")
    done = _mkdocs_build(project)
    assert 1 == done.returncode
    assert "does not contain an anchor '#no-such-figure'" in done.stderr


def _build_in_process(
    out: Path, tmp: Path, *, directory_urls: bool, plugins: list[Any] | None = None
) -> None:
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    from rooflinec.resources import site_dir

    settings = site_config(site_dir(), out, BUNDLED, {"svg": False}, site_url=SITE_URL)
    settings["use_directory_urls"] = directory_urls
    if plugins is not None:
        settings["plugins"] = plugins + settings["plugins"]
    config = load_config(str(_write_config(tmp, settings)))
    build(config)


def test_the_bundled_site_has_no_broken_link(tmp_path: Path) -> None:
    """`rooflinec build` of the bundled catalog (file URLs, `site_url` set): every link
    resolves; the 404 page's links are root-absolute under the site_url's path."""
    out = tmp_path / "site"
    build_site(BUNDLED, out, options={"svg": False})
    assert [] == [str(b) for b in crawl(out, url_prefix="/rooflinec/")]
    assert "https://rooflinec.github.io/rooflinec/devices/nvidia-h100-sxm.html" in (
        out / "sitemap.xml"
    ).read_text("utf-8")


def test_a_published_version_with_directory_urls_has_no_broken_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bundled site with directory URLs, built as mike builds version 1.2 (its plugin
    adds the version to `site_url`): every link resolves, and the 404 page's links,
    root-absolute, resolve under `/rooflinec/1.2/`; the sitemap lists the version's URLs."""
    pytest.importorskip("mike")
    monkeypatch.setenv("MIKE_DOCS_VERSION", "1.2")
    monkeypatch.setenv("NO_MKDOCS_2_WARNING", "1")
    out = tmp_path / "site"
    _build_in_process(out, tmp_path, directory_urls=True, plugins=["mike"])
    assert (out / "devices" / "nvidia-h100-sxm" / "index.html").is_file()
    assert [] == [str(b) for b in crawl(out, url_prefix="/rooflinec/1.2/")]
    not_found = (out / "404.html").read_text("utf-8")
    assert 'href="/rooflinec/1.2/devices/' in not_found
    sitemap = (out / "sitemap.xml").read_text("utf-8")
    assert "<loc>https://rooflinec.github.io/rooflinec/1.2/devices/nvidia-h100-sxm/</loc>" in (
        sitemap
    )


def test_a_catalog_without_methods_builds_without_warnings_or_broken_links(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bundled catalog minus `methods/`: no method page, no nav entry or link to one
    (the home page's link keeps its text), no warning, no broken link."""
    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs, ignore=shutil.ignore_patterns("methods"))
    out = tmp_path / "site"
    build_site(specs, out, options={"svg": False})
    assert "" == capsys.readouterr().err
    assert not (out / "method").exists()
    assert [] == [str(b) for b in crawl(out, url_prefix="/rooflinec/")]
    pages = [p.read_text("utf-8") for p in out.rglob("*.html")]
    assert [] == [p for p in pages if "method/roofline" in p]
    home = (out / "index.html").read_text("utf-8")
    assert "<li>Method: the formulas" in home


def _loaded(tmp_path: Path, yaml_text: str) -> Any:
    from mkdocs.config import load_config

    (tmp_path / "docs").mkdir(exist_ok=True)
    (tmp_path / "mkdocs.yml").write_text(yaml_text, "utf-8")
    return load_config(str(tmp_path / "mkdocs.yml"))


def test_required_extensions_are_added_once_and_user_options_kept(tmp_path: Path) -> None:
    """A config without them gets `attr_list` and `md_in_html` (mkdocs always lists
    `toc` and `tables`); a `toc` the user configured keeps its options, and nothing is
    added twice."""
    config = _loaded(
        tmp_path,
        "site_name: x\nmarkdown_extensions:\n  - toc:\n      permalink: true\n  - admonition\n",
    )
    assert ["attr_list", "md_in_html"] == add_required_extensions(config)
    assert 1 == config.markdown_extensions.count("toc")
    assert {"permalink": True} == config.mdx_configs["toc"]
    assert [] == add_required_extensions(config)


def test_missing_anchors_warn_unless_the_user_chose_a_level(tmp_path: Path) -> None:
    """mkdocs' default `info` is raised to `warn`; a level the user chose stays."""
    default = _loaded(tmp_path, "site_name: x\n")
    assert warn_on_missing_anchors(default)
    assert logging.WARNING == default.validation.links.anchors

    chosen = _loaded(tmp_path, "site_name: x\nvalidation:\n  links:\n    anchors: ignore\n")
    assert not warn_on_missing_anchors(chosen)
    assert logging.DEBUG == chosen.validation.links.anchors


def test_chart_files_climb_to_the_source_folder_under_directory_urls() -> None:
    """A page served one folder below its source reads its chart files with `../`; other
    links, and pages served beside their source, are left alone."""
    assert "../" == source_folder_from_page("devices/x.md", "devices/x/index.html")
    assert "" == source_folder_from_page("devices/x.md", "devices/x.html")
    assert "" == source_folder_from_page("index.md", "index.html")
    page = (
        '<img src="x.roofline.svg"><a href="x.roofline.vl.json" download>'
        '<a href="../kernels/gemm/">gemm</a><a href="x.roofline.svg.txt">'
    )
    files = ["devices/x.roofline.svg", "devices/x.roofline.vl.json", "kernels/g.svg"]
    expected = (
        '<img src="../x.roofline.svg"><a href="../x.roofline.vl.json" download>'
        '<a href="../kernels/gemm/">gemm</a><a href="x.roofline.svg.txt">'
    )
    assert expected == relocate_page_files(page, "devices/x.md", files, "../")
    assert page == relocate_page_files(page, "devices/x.md", files, "")
