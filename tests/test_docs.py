"""Every command and option, every mkdocs plugin option, the pytest option and every extra
are documented in the README, and every command has help."""

from __future__ import annotations

import argparse

import pytest

from rooflinec.cli.main import build_parser
from rooflinec.outputs.formats import DEFAULT_FORMAT, FORMATS, format_help, readme_table
from tests.specfactory import REPO


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


README = (REPO / "README.md").read_text("utf-8")


@pytest.mark.parametrize("name", sorted(subcommands()))
def test_command_is_in_readme(name: str) -> None:
    """The README's command table lists the command."""
    assert f"`rooflinec {name}" in README


@pytest.mark.parametrize("name", sorted(subcommands()))
def test_command_options_are_in_readme(name: str) -> None:
    """Each long option of the command appears in the README."""
    missing = [
        option
        for action in subcommands()[name]._actions
        for option in action.option_strings
        if option.startswith("--") and option != "--help" and option not in README
    ]
    assert [] == missing


@pytest.mark.parametrize("name", sorted(subcommands()))
def test_command_has_description(name: str) -> None:
    """`rooflinec COMMAND --help` says what the command does."""
    assert subcommands()[name].description


def plugin_options() -> list[str]:
    from mkdocs.config.base import get_schema

    from rooflinec.site.plugin import RooflinecConfig

    return [name for name, _ in get_schema(RooflinecConfig)]


def test_plugin_has_the_known_options() -> None:
    """The options the README's plugin table describes are the plugin's own."""
    assert {"specs", "default_device", "chart_precision", "svg", "show_errors"} <= set(
        plugin_options()
    )


@pytest.mark.parametrize("name", plugin_options())
def test_plugin_option_is_in_readme(name: str) -> None:
    """Each option of the mkdocs plugin has a row in the README's plugin table."""
    assert f"| `{name}` |" in README


def test_pytest_option_is_in_readme() -> None:
    """The pytest plugin's ini option is documented."""
    assert "`rooflinec_specs_dirs`" in README


def test_extras_are_in_readme() -> None:
    """Each optional-dependency group has a row in the README's extras table."""
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"][
        "optional-dependencies"
    ]
    assert [] == [name for name in extras if f"| `{name}` |" not in README]


def test_readme_installs_the_site_extra_to_build() -> None:
    """The quick start installs what `build` needs."""
    assert (
        ".venv/bin/pip install -c constraints.txt '.[site]' && .venv/bin/rooflinec build" in README
    )


def test_readme_format_table_is_the_registrys() -> None:
    """The README's table of `compile --format`s is the one the format registry writes."""
    start = "<!-- formats: rooflinec.outputs.formats.readme_table() -->\n"
    assert start in README
    written = README.split(start, 1)[1].split("<!-- /formats -->", 1)[0]
    assert readme_table() == written


def test_compile_format_choices_are_the_registrys() -> None:
    """`compile --format` offers the registry's formats, its default, and help naming each."""
    action = next(a for a in subcommands()["compile"]._actions if "--format" in a.option_strings)
    assert list(FORMATS) == list(action.choices or ())
    assert DEFAULT_FORMAT == action.default
    assert format_help() == action.help
    assert all(name in (action.help or "") for name in FORMATS)
