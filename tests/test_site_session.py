"""The site's one `Session` (`rooflinec.site.session`): mkdocs keeps the plugin's one
instance, each mkdocs run (`on_startup`) starts a new session, and every cache in it is
bounded."""

from __future__ import annotations

from pathlib import Path

import pytest

from rooflinec.site.session import Bounded, Session

pytest.importorskip("mkdocs")

REPO = Path(__file__).resolve().parents[1]


def test_bounded_drops_the_least_recently_used() -> None:
    """At most `size` entries; a read makes an entry the most recent."""
    kept: Bounded[str, int] = Bounded(2)
    kept.put("a", 1)
    kept.put("b", 2)
    assert 1 == kept.get("a")
    kept.put("c", 3)
    assert (None, 1, 3, 2) == (kept.get("b"), kept.get("a"), kept.get("c"), len(kept))


def test_mkdocs_keeps_one_plugin_and_each_run_starts_a_session(tmp_path: Path) -> None:
    """Two loads of a configuration give the same plugin instance (it defines
    `on_startup`, as `serve` reloads the configuration on every rebuild); `on_startup`
    gives it a new session, which keeps device pages only for `serve`."""
    from mkdocs.config import load_config

    from rooflinec.resources import site_dir
    from rooflinec.site.build import _write_config, site_config
    from rooflinec.site.plugin import plugin_of

    settings = site_config(site_dir(), tmp_path / "out", REPO / "specs")
    config_file = str(_write_config(tmp_path, settings))
    first, second = load_config(config_file), load_config(config_file)
    plugin = plugin_of(first)
    assert plugin is plugin_of(second)
    before = plugin.session
    first.plugins.on_startup(command="serve", dirty=True)
    serving = plugin.session
    assert serving is not before and serving.keep_pages
    second.plugins.on_startup(command="build", dirty=False)
    assert plugin.session is not serving and not plugin.session.keep_pages
    assert Session().built is None and Session().search is None
