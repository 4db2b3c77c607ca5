"""The command table: every command parses into a typed, frozen `Options`."""

from __future__ import annotations

import argparse
import dataclasses
import re
from pathlib import Path

import pytest

from rooflinec.cli.main import COMMANDS, Command, build_parser, parse
from rooflinec.cli.options import Options


def test_the_table_lists_every_command_once_in_help_order() -> None:
    """`rooflinec --help` lists the commands in the table's order."""
    expected = [
        "check",
        "compile",
        "explain",
        "report",
        "import",
        "solve",
        "plan",
        "validate",
        "diff",
        "publish",
        "export",
        "build",
        "serve",
    ]
    assert expected == [c.name for c in COMMANDS]
    listed = re.findall(r"^    (\w+) ", build_parser().format_help(), re.MULTILINE)
    assert expected == listed


def test_compile_collects_repeated_options_as_tuples() -> None:
    """Repeatable options become tuples, in the order given."""
    opts = parse(
        ["compile", "--device", "a", "--device", "b", "--case", "c", "--precision", "bf16"]
    )
    expected = Options(
        command="compile",
        format="table",
        devices=("a", "b"),
        cases=("c",),
        precisions=("bf16",),
    )
    assert expected == opts


def test_explain_fills_the_same_fields_as_compile() -> None:
    """`explain`'s one device and optional precision are 1-tuples, like compile's filters."""
    opts = parse(["explain", "gemm", "--device", "d"])
    assert ("gemm", ("d",), ()) == (opts.case, opts.devices, opts.precisions)
    opts = parse(["explain", "gemm", "--device", "d", "--precision", "fp8", "--symbolic"])
    assert (("d",), ("fp8",), True) == (opts.devices, opts.precisions, opts.symbolic)


def test_import_options_are_typed_fields() -> None:
    """`import`'s kind, file, one device and precision, repeated matches and --write."""
    opts = parse(
        ["import", "ncu", "run.csv", "--device", "d", "--match", "gemm=g1", "--match", "x=g2"]
    )
    assert ("ncu", Path("run.csv"), ("d",), ("gemm=g1", "x=g2"), False) == (
        opts.kind,
        opts.file,
        opts.devices,
        opts.matches,
        opts.write,
    )
    assert parse(["import", "csv", "a.csv", "--write"]).write


def test_publish_build_and_serve_options_are_typed_fields() -> None:
    """Options of publish, build and serve are fields with their parser's defaults."""
    opts = parse(["publish", "2026.11", "--alias", "latest", "--alias", "stable"])
    assert ("2026.11", ("latest", "stable"), Path("mkdocs.yml"), "gh-pages", False) == (
        opts.version,
        opts.aliases,
        opts.config,
        opts.branch,
        opts.push,
    )
    opts = parse(["build", "--out", "site", "--verbose"])
    assert (Path("site"), True) == (opts.out, opts.verbose)
    assert "0.0.0.0:9000" == parse(["serve", "--dev-addr", "0.0.0.0:9000"]).dev_addr
    assert "127.0.0.1:8000" == parse(["serve"]).dev_addr


@pytest.mark.parametrize("command", COMMANDS, ids=[c.name for c in COMMANDS])
def test_every_argument_is_an_options_field(command: Command) -> None:
    """Each argument of each command lands in a field of `Options`, never in a bag."""
    parser = argparse.ArgumentParser()
    command.arguments(parser)
    dests = {a.dest for a in parser._actions} - {"help"}
    assert set() == dests - {f.name for f in dataclasses.fields(Options)}


def test_options_are_frozen() -> None:
    """A parsed command line cannot be changed by the command that reads it."""
    opts = parse(["check"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.strict = True  # type: ignore[misc]
