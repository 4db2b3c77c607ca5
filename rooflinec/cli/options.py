"""The parsed command line as one typed value, and the exit codes every command shares."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

EXIT_OK, EXIT_SPEC, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a command stopped by Ctrl-C
EXIT_TERMINATED = 143  # 128 + SIGTERM, as shells report a command stopped by `kill`

DEFAULT_SITE = Path("build/site")
DEFAULT_CONFIG = Path("mkdocs.yml")
DEFAULT_BRANCH = "gh-pages"
DEFAULT_ADDRESS = "127.0.0.1:8000"


@dataclass(frozen=True)
class Options:
    """Every option of every command; a command reads only its own.

    Field names are the parser's destinations, so a parsed command line becomes an
    `Options` without a mapping table; an argument whose destination is not a field
    here fails at once (`TypeError`), never silently.
    """

    command: str
    specs: Path | None = None
    # Each command's parser sets its own choices and default.
    format: str = "text"
    # check
    strict: bool = False
    disable: tuple[str, ...] = ()
    # compile (each repeatable) and explain (`--device` exactly once, `--precision` at most once)
    devices: tuple[str, ...] = ()
    cases: tuple[str, ...] = ()
    precisions: tuple[str, ...] = ()
    declared_only: bool = False
    csv_header: str = "units"
    partition: str | None = None  # compile --format parquet: a column to partition by
    models: tuple[str, ...] = ()  # compile: repeatable; explain: at most one
    phases: tuple[str, ...] = ()
    # compile and explain: the deployment of the model rows, as typed (checked by the
    # command, one line: None is 1, chips None the least)
    tp: str | None = None
    pp: str | None = None
    ep: str | None = None
    chips: str | None = None
    deployment: str | None = None  # compile and explain: a model's named deployment
    # compile and explain: a request of a model, as typed (checked by the command)
    input: str | None = None
    output: str | None = None
    batch: str | None = None
    request: str | None = None  # a shape the model's spec names (`requests:`)
    speculate: str | None = None  # compile, explain and plan: `k=3,acceptance=0.7`
    # explain
    case: str = ""
    shape: str = ""  # explain and solve: `M=1,N=2` picks one shape of a grid case
    symbolic: bool = False
    # solve (with `case`, `devices`, `precisions` and `format`)
    vary: str = ""
    # plan (with `models`, `devices`, `precisions`, `format` and the request's `input`,
    # `output` or `request`): as typed, checked by the command (one line)
    min_user_rate: str | None = None
    max_ttft: str | None = None
    max_latency: str | None = None
    max_chips: str | None = None
    objective: str = "tokens-per-chip"
    prices: tuple[str, ...] = ()
    # import (with `specs`, `devices` and `precisions`, each at most once)
    kind: str = ""
    file: Path | None = None
    matches: tuple[str, ...] = ()
    write: bool = False
    source: str | None = None  # the measurement source's id (default: from the file's name)
    decimal_comma: bool = False
    thousands_comma: bool = False
    model_id: str | None = None  # import hf-config: the model's id
    url: str | None = None  # import hf-config: the config's address
    # import serving (with `models`, `devices`, `precisions`, the deployment's `tp`, `pp`,
    # `ep`, `chips` and the request's `input`, `output`, `batch`): as typed, checked by the
    # command (one line); `serving_format` None: told from the file
    serving_format: str | None = None
    kv: str | None = None
    concurrency: str | None = None
    engine: str | None = None
    # diff
    base: str | None = None
    require_bump: bool = False
    # publish
    version: str = ""
    aliases: tuple[str, ...] = ()
    config: Path = DEFAULT_CONFIG
    branch: str = DEFAULT_BRANCH
    push: bool = False
    # build and serve; compile (a file, or a folder with --partition)
    out: Path | None = None
    verbose: bool = False
    dev_addr: str = DEFAULT_ADDRESS
