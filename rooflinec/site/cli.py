"""The `build` and `serve` commands, registered with the CLI (cheap to import: the work
is imported when a command runs)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from rooflinec.cli import commands
from rooflinec.pipeline import specs_folder

DEFAULT_OUT = Path("build/site")


def cmd_build(opts: Any, out: TextIO) -> int:
    from rooflinec.site.build import build_site

    folder = specs_folder(opts.specs)
    target = opts.out if opts.out is not None else DEFAULT_OUT
    verbose = bool(opts.extra.get("verbose", False))
    seconds = build_site(folder, target, verbose=verbose)
    out.write(f"site of {folder} written to {target} in {seconds:.1f} s\n")
    return commands.EXIT_OK


def cmd_serve(opts: Any, out: TextIO) -> int:
    from rooflinec.site.build import serve_site

    folder = specs_folder(opts.specs)
    serve_site(folder, str(opts.extra.get("dev_addr") or "127.0.0.1:8000"))
    return commands.EXIT_OK


def register(
    sub: Any,
    specs_arg: Callable[[argparse.ArgumentParser], None],
    table: dict[str, Callable[[Any, TextIO], int]],
) -> None:
    p = sub.add_parser(
        "build",
        help="build the static site",
        description="Build the static site of a specs folder (default: ./specs when present, "
        "else the bundled catalog): every device, kernel and method page, the comparison, "
        "sources, glossary and changelog, with offline charts. The site is written to a "
        "temporary folder and swapped in, so a failed build leaves the previous one intact.",
    )
    specs_arg(p)
    p.add_argument(
        "--out", type=Path, metavar="DIR", help=f"output folder (default: {DEFAULT_OUT})"
    )
    p.add_argument("--verbose", action="store_true", help="show mkdocs' progress messages")
    p = sub.add_parser(
        "serve",
        help="live preview of the site, rebuilt on every spec edit",
        description="Serve the site on a local address and rebuild it whenever a spec "
        "changes (mkdocs serve with the specs folder watched).",
    )
    specs_arg(p)
    p.add_argument(
        "--dev-addr",
        default="127.0.0.1:8000",
        metavar="HOST:PORT",
        help="address to serve on (default: 127.0.0.1:8000)",
    )
    table["build"] = cmd_build
    table["serve"] = cmd_serve


commands._EXTRA_REGISTRARS.append(register)
