"""`rooflinec build` and `serve` inside a project: the project's own `mkdocs.yml` or
`site/` beside its specs, not the package's copy; `serve` without mkdocs' dirty-build
warning on every rebuild."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any

import pytest

from rooflinec.errors import UsageError
from rooflinec.resources import site_dir
from rooflinec.site import plugin
from rooflinec.site.build import SiteSource, build_site, serve_site, site_source
from tests.specfactory import without_named_deployments

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / "specs"
KEPT_DEVICES = ("nvidia-h100-sxm.yaml", "amd-mi300x.yaml")
MARKER = "Marker of this project's own home page"

pytest.importorskip("mkdocs")


def _small_specs(project: Path) -> Path:
    """The bundled catalog with two devices, in `project/specs`: quick to build."""
    specs = project / "specs"
    shutil.copytree(BUNDLED, specs)
    for path in (specs / "devices").glob("*.yaml"):
        if path.name not in KEPT_DEVICES:
            path.unlink()
    without_named_deployments(specs)
    return specs


def _project_with_site(root: Path) -> Path:
    """A project with specs and its own `site/` (a copy of rooflinec's pages) whose home
    page carries `MARKER`."""
    specs = _small_specs(root)
    shutil.copytree(site_dir(), root / "site")
    index = root / "site" / "index.md"
    index.write_text(index.read_text("utf-8").replace("# rooflinec", f"# {MARKER}"), "utf-8")
    return specs


def test_build_uses_the_projects_own_site_folder(tmp_path: Path) -> None:
    """A project's `site/index.md` is the built home page, not the package's copy."""
    specs = _project_with_site(tmp_path / "project")
    out = tmp_path / "out"
    build_site(specs, out, options={"svg": False})
    assert MARKER in (out / "index.html").read_text("utf-8")
    assert (out / "devices" / "nvidia-h100-sxm.html").is_file()


def test_build_uses_the_projects_own_mkdocs_yml(tmp_path: Path) -> None:
    """A project's `mkdocs.yml` is the configuration (its site name, its `docs_dir`, its
    directory URLs), with the specs of the command line."""
    project = tmp_path / "project"
    specs = _small_specs(project)
    (project / "pages").mkdir()
    (project / "pages" / "index.md").write_text(f"# {MARKER}\n", "utf-8")
    (project / "mkdocs.yml").write_text(
        "site_name: Project roofline\ndocs_dir: pages\nplugins:\n  - search\n"
        "  - rooflinec:\n      svg: false\n",
        "utf-8",
    )
    out = tmp_path / "out"
    build_site(specs, out)
    home = (out / "index.html").read_text("utf-8")
    assert MARKER in home and "Project roofline" in home
    assert (out / "devices" / "nvidia-h100-sxm" / "index.html").is_file()
    assert not (out / "devices" / "nvidia-b200" / "index.html").exists()


def test_a_project_mkdocs_yml_without_the_plugin_is_a_usage_error(tmp_path: Path) -> None:
    """Building with a `mkdocs.yml` that lacks the plugin would make a site without one
    roofline page: refused, naming the file, before anything is written."""
    project = tmp_path / "project"
    specs = _small_specs(project)
    (project / "docs").mkdir()
    (project / "docs" / "index.md").write_text("# x\n", "utf-8")
    (project / "mkdocs.yml").write_text("site_name: x\n", "utf-8")
    out = tmp_path / "out"
    with pytest.raises(UsageError) as caught:
        build_site(specs, out)
    assert f"{project / 'mkdocs.yml'}: the project's mkdocs.yml does not list the " in str(
        caught.value
    )
    assert not out.exists()


def test_site_source_prefers_mkdocs_yml_then_site_then_the_package(tmp_path: Path) -> None:
    """The project folder is the one holding the specs; the package's pages otherwise."""
    project = tmp_path / "project"
    (project / "specs").mkdir(parents=True)
    assert SiteSource(None, site_dir().resolve()) == site_source(project / "specs")
    assert site_source(project / "specs").bundled
    (project / "site").mkdir()
    assert SiteSource(None, (project / "site").resolve()) == site_source(project / "specs")
    assert not site_source(project / "specs").bundled
    (project / "mkdocs.yml").write_text("site_name: x\n", "utf-8")
    assert SiteSource((project / "mkdocs.yml").resolve(), None) == site_source(project / "specs")


def test_serve_watches_the_projects_pages_and_drops_the_dirty_build_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`rooflinec serve` in a project serves its `site/` folder where it is (so mkdocs
    watches it), gives the plugin the specs and `show_errors`, and of mkdocs' warnings
    drops only the dirty-build one that every rebuild logs."""
    import mkdocs.commands.serve
    from mkdocs.config import load_config

    project = tmp_path / "project"
    (project / "specs").mkdir(parents=True)
    (project / "site").mkdir()
    seen: dict[str, Any] = {}

    def fake_serve(config_file: str, **kwargs: Any) -> None:
        seen["config"] = json.loads(Path(config_file).read_text("utf-8"))
        seen["kwargs"] = kwargs
        # the instance mkdocs keeps, and so the one `serve` itself would load
        seen["plugin"] = plugin.plugin_of(load_config(config_file))
        seen["options"] = dict(seen["plugin"].overrides)
        build_log = logging.getLogger("mkdocs.commands.build")
        build_log.warning(
            "A 'dirty' build is being performed, this will likely lead to inaccurate "
            "navigation and other links within your site."
        )
        build_log.warning("Doc file 'x.md' contains a link 'y.md', but the target is not found")

    monkeypatch.setattr(mkdocs.commands.serve, "serve", fake_serve)
    serve_site(project / "specs")
    assert str((project / "site").resolve()) == seen["config"]["docs_dir"]
    assert "dirty" == seen["kwargs"]["build_type"]
    expected_options = {"specs": str((project / "specs").resolve()), "show_errors": True}
    assert expected_options == seen["options"]
    assert {} == seen["plugin"].overrides
    err = capsys.readouterr().err
    assert "dirty" not in err
    assert "warning: Doc file 'x.md' contains a link 'y.md'" in err


def test_session_options_refuse_unknown_names() -> None:
    """A misspelt option is an error, not a silently ignored setting."""
    options = plugin.session_options(plugin.RooflinecPlugin(), {"spec": "x"})
    with pytest.raises(KeyError, match="unknown rooflinec plugin options: spec"):
        options.__enter__()


def test_serve_of_the_bundled_pages_stays_at_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bundled pages carry a `site_url` for the published site; `mkdocs serve` would
    mount a preview at its path (/rooflinec/), so `rooflinec serve` leaves it out."""
    import mkdocs.commands.serve

    specs = tmp_path / "catalog" / "specs"
    shutil.copytree(BUNDLED, specs)
    seen: dict[str, Any] = {}

    def fake_serve(config_file: str, **kwargs: Any) -> None:
        seen["config"] = json.loads(Path(config_file).read_text("utf-8"))

    monkeypatch.setattr(mkdocs.commands.serve, "serve", fake_serve)
    serve_site(specs)
    assert "site_url" not in seen["config"]
