"""Every command and option is documented in the README, and every command has help."""

from __future__ import annotations

import argparse

import pytest

from rooflinec.cli.main import build_parser
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
