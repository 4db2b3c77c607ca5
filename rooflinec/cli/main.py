"""`rooflinec`: parse arguments into a plain object, run one command, return its exit code.

Exit codes: 0 ok, 1 spec errors, 2 usage, 3 an internal bug (said in one line).
Tests call `main([...])` directly; nothing runs at import time.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from rooflinec import __version__
from rooflinec.errors import RooflinecError, SpecError, UsageError

EXIT_OK, EXIT_SPEC, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


@dataclass
class Options:
    """The parsed command line."""

    command: str
    specs: Path | None = None
    format: str = "text"
    strict: bool = False
    devices: list[str] = field(default_factory=list)
    cases: list[str] = field(default_factory=list)
    precisions: list[str] = field(default_factory=list)
    declared_only: bool = False
    case: str | None = None
    symbolic: bool = False
    out: Path | None = None
    base: str | None = None
    require_bump: bool = False
    extra: dict[str, object] = field(default_factory=dict)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"rooflinec: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def _specs_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--specs",
        type=Path,
        metavar="DIR",
        help="the specs folder (default: ./specs when present, else the bundled catalog)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rooflinec",
        description="Roofline results and a static report site from YAML specs of "
        "accelerators and kernels.",
    )
    parser.add_argument("--version", action="version", version=f"rooflinec {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser(
        "check",
        help="load, validate and cross-check the specs; run every reference example",
        description="Load, validate and cross-check every spec, evaluate every formula for "
        "every case, run every reference example and the catalog lints. Prints one line per "
        "problem, FILE:LINE:COL: error: MESSAGE [$.path]. Exit 0 when clean, 1 on spec errors.",
    )
    _specs_arg(p)
    p.add_argument(
        "--format",
        choices=["text", "github", "json"],
        default="text",
        help="text (default), github (workflow annotations) or json",
    )
    p.add_argument("--strict", action="store_true", help="treat lint warnings as errors")

    p = sub.add_parser(
        "compile",
        help="compile every case on every device and precision",
        description="Resolve every kernel case against every device at every precision the "
        "device has a peak for. json follows the results contract; csv has units in its "
        "headers; table is for reading in a terminal.",
    )
    _specs_arg(p)
    p.add_argument(
        "--format",
        choices=["json", "csv", "table"],
        default="table",
        help="table (default), json or csv",
    )
    p.add_argument(
        "--device", action="append", default=[], metavar="D", help="only device D (repeatable)"
    )
    p.add_argument(
        "--case", action="append", default=[], metavar="C", help="only case C (repeatable)"
    )
    p.add_argument(
        "--precision",
        action="append",
        default=[],
        metavar="P",
        help="only precision P (repeatable)",
    )
    p.add_argument(
        "--declared-only", action="store_true", help="only each case's declared precision"
    )

    p = sub.add_parser(
        "explain",
        help="the derivation of one result, step by step",
        description="Print the derivation of CASE on device D: formulas, values bound, "
        "operations, bytes, intensities, every ceiling, which one wins, and the time. "
        "--symbolic keeps the shape free and prints the time as an expression.",
    )
    p.add_argument("case", metavar="CASE", help="a case id")
    p.add_argument("--device", required=True, metavar="D", help="a device id")
    p.add_argument("--precision", metavar="P", help="default: the case's declared precision")
    p.add_argument(
        "--symbolic",
        action="store_true",
        help="time at the roofline as an expression over the shape (plain and LaTeX)",
    )
    _specs_arg(p)

    p = sub.add_parser(
        "diff",
        help="compiled figures that differ between a git ref and the working tree",
        description="Compile the catalog at BASE_REF (default: the merge base with main, else "
        "HEAD) and in the working tree; list specs added and removed and every figure that "
        "moved (peaks, bandwidths, ridge points, intensities, attainable rates, bounds, "
        "times), old -> new with the relative change, largest first. Markdown fits a "
        "pull-request comment or a job summary.",
    )
    p.add_argument("base", nargs="?", metavar="BASE_REF", help="a git ref (default: merge base)")
    _specs_arg(p)
    p.add_argument(
        "--format", choices=["markdown", "json"], default="markdown", help="markdown or json"
    )
    p.add_argument(
        "--require-bump",
        action="store_true",
        help="fail when a spec's content changed without a new versions entry",
    )

    p = sub.add_parser(
        "publish",
        help="publish a version of the site with mike into a local gh-pages branch",
        description="Build the site and commit it as VERSION to a local gh-pages branch with "
        "mike (material's version selector lists every published version). The site's "
        "changes page lists the figures that moved since the previous published version. "
        "Nothing is pushed without --push.",
    )
    p.add_argument("version", metavar="VERSION", help="the version to publish, e.g. 2026.11")
    p.add_argument(
        "--alias",
        action="append",
        default=[],
        metavar="ALIAS",
        help="an alias to point at this version, e.g. latest (repeatable)",
    )
    p.add_argument(
        "--config",
        type=Path,
        default=Path("mkdocs.yml"),
        metavar="FILE",
        help="the mkdocs config (default: ./mkdocs.yml)",
    )
    p.add_argument("--branch", default="gh-pages", help="the branch to commit to")
    p.add_argument("--push", action="store_true", help="push the branch after committing")

    from rooflinec.cli import commands

    commands.register_more(sub, _specs_arg)
    return parser


def parse(argv: Sequence[str]) -> Options:
    ns = build_parser().parse_args(list(argv))
    opts = Options(command=ns.command)
    for name in (
        "specs",
        "format",
        "strict",
        "symbolic",
        "out",
        "base",
        "require_bump",
        "declared_only",
    ):
        if hasattr(ns, name):
            setattr(opts, name, getattr(ns, name))
    if ns.command == "explain":
        opts.case = ns.case
        opts.devices = [ns.device]
        opts.precisions = [ns.precision] if ns.precision else []
    elif ns.command == "diff":
        opts.format = ns.format
    elif ns.command == "compile":
        opts.devices, opts.cases, opts.precisions = ns.device, ns.case, ns.precision
    opts.extra = {k: v for k, v in vars(ns).items() if not hasattr(opts, k)}
    return opts


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the command line; return the exit code."""
    stdout = out or sys.stdout
    try:
        opts = parse(sys.argv[1:] if argv is None else argv)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    from rooflinec.cli import commands

    try:
        return commands.run(opts, stdout)
    except UsageError as exc:
        sys.stderr.write(f"rooflinec: error: {exc}\n")
        return EXIT_USAGE
    except SpecError as exc:
        for d in exc.diagnostics:
            sys.stderr.write(f"{d}\n")
        return EXIT_SPEC
    except RooflinecError as exc:
        sys.stderr.write(f"rooflinec: error: {exc}\n")
        return EXIT_SPEC
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # a bug in rooflinec itself: one line, not a traceback
        sys.stderr.write(
            f"rooflinec: internal error: {exc.__class__.__name__}: {exc}"
            " (please report this with the command you ran)\n"
        )
        return EXIT_INTERNAL


def console() -> None:
    """Entry point of the `rooflinec` console script."""
    raise SystemExit(main())
