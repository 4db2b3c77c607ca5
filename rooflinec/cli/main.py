"""`rooflinec`: every command in one table, parsed into `Options`, run, and its exit code.

Exit codes: 0 ok, 1 spec errors and outputs the system would not let it write, 2 usage,
3 an internal bug (said in one line), 130 interrupted (Ctrl-C; `interrupted` on stderr),
143 terminated (SIGTERM, from `timeout`, a cancelled CI job or `docker stop`; `terminated`
on stderr), each after the same cleanup.
Tests call `main([...])` directly; nothing runs at import time. Parsing loads no
command's implementation: each `cmd_*` imports what it runs inside itself.
"""

from __future__ import annotations

import argparse
import errno
import gc
import os
import re
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, TextIO

from rooflinec import __version__
from rooflinec.cli import commands, validate
from rooflinec.cli.extras import EXTRA_OF_MODULE, missing_extra_message
from rooflinec.cli.options import (
    DEFAULT_ADDRESS,
    DEFAULT_BRANCH,
    DEFAULT_CONFIG,
    DEFAULT_SITE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SPEC,
    EXIT_TERMINATED,
    EXIT_USAGE,
    Options,
)
from rooflinec.errors import (
    PENDING_STOP,
    RooflinecError,
    SpecError,
    Terminated,
    UsageError,
    internal_error_line,
    one_line,
)
from rooflinec.outputs.formats import DEFAULT_FORMAT, FORMATS, format_help

if TYPE_CHECKING:
    from sys import UnraisableHookArgs

__all__ = ["COMMANDS", "Command", "build_parser", "console", "main", "parse"]

# What only writing gives: the disk or the quota is full, the file too large for it.
_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


@dataclass(frozen=True)
class Command:
    """One subcommand: its name, its help, the arguments it takes and what runs it."""

    name: str
    help: str
    description: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[Options, TextIO], int]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"rooflinec: error: {one_line(message)}\n")
        raise SystemExit(EXIT_USAGE)


class _Repeat(argparse.Action):
    """Collect a repeatable option into a tuple, the type of its `Options` field."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[object] | None,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, self.collected(getattr(namespace, self.dest), values))

    @staticmethod
    def collected(before: tuple[object, ...], value: object) -> tuple[object, ...]:
        return (*before, value)


class _One(_Repeat):
    """Store the value as a 1-tuple: `explain --device D` fills the same `Options` field
    as `compile --device D`, which may repeat."""

    @staticmethod
    def collected(before: tuple[object, ...], value: object) -> tuple[object, ...]:
        return (value,)


def _specs(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--specs",
        type=Path,
        metavar="DIR",
        help="the specs folder (default: ./specs when present, else the bundled catalog)",
    )


def _repeated(p: argparse.ArgumentParser, flag: str, dest: str, metavar: str, help: str) -> None:
    """A repeatable option, collected into the tuple of its `Options` field `dest`."""
    p.add_argument(flag, dest=dest, action=_Repeat, default=(), metavar=metavar, help=help)


def _once(
    p: argparse.ArgumentParser,
    flag: str,
    dest: str,
    metavar: str,
    help: str,
    *,
    required: bool = False,
) -> None:
    """An option given once, filling the same tuple field as its repeatable form."""
    p.add_argument(
        flag, dest=dest, action=_One, default=(), required=required, metavar=metavar, help=help
    )


def _format(p: argparse.ArgumentParser, choices: list[str], default: str, help: str) -> None:
    p.add_argument("--format", choices=choices, default=default, help=help)


def _check(p: argparse.ArgumentParser) -> None:
    _specs(p)
    _format(
        p,
        ["text", "github", "json"],
        "text",
        "text (default), github (workflow annotations) or json",
    )
    p.add_argument("--strict", action="store_true", help="treat lint warnings as errors")
    _repeated(
        p,
        "--disable",
        "disable",
        "LINT=REASON",
        "turn lint LINT off, saying why (repeatable; also [tool.rooflinec.disable] in "
        "the pyproject.toml beside the specs folder)",
    )


def _compile(p: argparse.ArgumentParser) -> None:
    _specs(p)
    _format(p, list(FORMATS), DEFAULT_FORMAT, format_help())
    p.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help="write to FILE instead of stdout, whole or not at all (a temporary file beside "
        "it, moved in when complete; a device or pipe as it is); a folder with --partition",
    )
    p.add_argument(
        "--partition",
        choices=["device"],
        help="with --format parquet: a folder of Hive partitions, device=ID/part-0.parquet",
    )
    p.add_argument(
        "--csv-header",
        choices=["units", "plain"],
        default="units",
        help="csv headers with units, 'time [s]' (default), or plain names, 'time', that SQL "
        "reads unquoted (units in schemas/results.schema.json)",
    )
    _repeated(p, "--device", "devices", "D", "only device D (repeatable)")
    _repeated(p, "--case", "cases", "C", "only case C (repeatable)")
    _repeated(p, "--precision", "precisions", "P", "only precision P (repeatable)")
    p.add_argument(
        "--declared-only", action="store_true", help="only each case's declared precision"
    )
    _repeated(
        p,
        "--model",
        "models",
        "M",
        "only model M's rows (repeatable); without --case, no kernel results",
    )
    _repeated(p, "--phase", "phases", "PH", "only phase PH of the models selected (repeatable)")
    _deployment(p)
    _named_deployment(p, "with one --model")
    _request(p, "request rows for the deployment given, in place of the model rows")


def _request(p: argparse.ArgumentParser, what: str) -> None:
    """`--input N --output N` or `--request ID`, and `--batch N`: a request of the model."""
    p.add_argument(
        "--input", metavar="N", help=f"a request's input (prompt) tokens, with --output: {what}"
    )
    p.add_argument("--output", metavar="N", help="a request's output (generated) tokens")
    p.add_argument(
        "--request",
        metavar="ID",
        help="a request shape the model's spec names (requests:, default chat-1k and long-8k)"
        " instead of --input/--output",
    )
    p.add_argument(
        "--batch", metavar="N", help="requests in the static batch of a request (default 1)"
    )
    _speculate(p)


def _speculate(p: argparse.ArgumentParser) -> None:
    """`--speculate k=K,acceptance=A`: a request decoded by speculation."""
    p.add_argument(
        "--speculate",
        metavar="k=K,acceptance=A",
        help="decode by speculation: verify passes of K drafted tokens (1 to 64), each"
        " kept with chance A (0 to 1, as 0.7 or 7/10); the draft's own work is not counted",
    )


def _named_deployment(p: argparse.ArgumentParser, what: str) -> None:
    """`--deployment NAME`: a deployment the model's spec names, instead of the degrees."""
    p.add_argument(
        "--deployment",
        metavar="NAME",
        help="the deployment the model's spec names NAME (its device and split), instead of"
        f" --tp/--pp/--ep/--chips; {what}",
    )


def _deployment(p: argparse.ArgumentParser) -> None:
    """`--tp N --pp N --ep N [--chips N]`: the deployment of the model rows."""
    for flag, what in (
        ("--tp", "tensor-parallel degree: chips sharing every layer (default 1)"),
        ("--pp", "pipeline-parallel degree: stages holding a share of the layers (default 1)"),
        ("--ep", "expert-parallel degree: chips of a stage spreading the experts (default 1)"),
    ):
        p.add_argument(flag, metavar="N", help=f"the model rows' {what}")
    p.add_argument(
        "--chips",
        metavar="N",
        help="the deployment's chips, tp × pp × dp (default lcm(tp, ep) × pp)",
    )


def _device_and_precision(p: argparse.ArgumentParser) -> None:
    """`--device D` (required) and `--precision P` of a command about one result."""
    _once(p, "--device", "devices", "D", "a device id", required=True)
    _once(p, "--precision", "precisions", "P", "default: the case's declared precision")


def _shape(p: argparse.ArgumentParser, default: str) -> None:
    """`--shape M=..,N=..`: one shape of a grid case."""
    p.add_argument(
        "--shape",
        default="",
        metavar="M=1,N=2,...",
        help=f"for a grid case, the shape to use: every symbol, each a value of the grid"
        f" ({default})",
    )


def _explain(p: argparse.ArgumentParser) -> None:
    p.add_argument("case", metavar="CASE", nargs="?", default="", help="a case id")
    _once(p, "--model", "models", "M", "a model id")
    _once(p, "--phase", "phases", "PH", "the model's phase")
    # Not required here: `--deployment NAME` gives the device of a model's pass.
    _once(p, "--device", "devices", "D", "a device id (with --deployment: its device)")
    _once(p, "--precision", "precisions", "P", "default: the case's declared precision")
    _deployment(p)
    _named_deployment(p, "with --model M --phase PH")
    _request(p, "the derivation of a request row instead of a phase's pass")
    _shape(p, "required for a grid case")
    p.add_argument(
        "--symbolic",
        action="store_true",
        help="time at the roofline as an expression over the shape (plain and LaTeX)",
    )
    _specs(p)


def _report(p: argparse.ArgumentParser) -> None:
    p.add_argument("case", metavar="CASE", help="a case id with a measured run")
    _device_and_precision(p)
    _specs(p)


def _import(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "kind",
        choices=["csv", "ncu", "rocprof", "hf-config", "serving"],
        metavar="csv|ncu|rocprof|hf-config|serving",
        help="csv (the plain form), ncu (an Nsight Compute CSV export) or rocprof"
        " (rocprof-compute's pmc_perf.csv): measured entries; hf-config: a model spec"
        " from a Hugging Face config.json; serving: a model's serving results from a"
        " serving benchmark's output",
    )
    p.add_argument(
        "file", type=Path, metavar="FILE", help="the export (config.json, results) to read"
    )
    p.add_argument(
        "--id",
        dest="model_id",
        type=_model_id,
        metavar="ID",
        help="hf-config: the model's id (the spec is models/ID.yaml)",
    )
    p.add_argument(
        "--url",
        type=_config_url,
        metavar="URL",
        help="hf-config: the config's published address (https://huggingface.co/ORG/NAME/"
        "blob/COMMIT/config.json), quoted as the spec's source",
    )
    _specs(p)
    _once(
        p, "--device", "devices", "D", "the device measured (for exports without a device column)"
    )
    _once(
        p,
        "--precision",
        "precisions",
        "P",
        "the precision measured (default: each case's declared precision)",
    )
    _repeated(
        p,
        "--match",
        "matches",
        "REGEX=CASE",
        "map kernel names found by REGEX to case CASE (repeatable; the first match wins)",
    )
    p.add_argument(
        "--write",
        action="store_true",
        help="add the entries to the kernel specs in place (default: print them as YAML);"
        " hf-config: write models/ID.yaml (never over an existing file); serving: add the"
        " results to the model's spec",
    )
    p.add_argument(
        "--source",
        type=_source_id,
        metavar="ID",
        help="the id of the measurement source to write (default: the tool and the file's"
        " name, e.g. ncu-run); a different source of that id already in a kernel file is"
        " never replaced",
    )
    _import_serving(p)
    commas = p.add_mutually_exclusive_group()
    commas.add_argument(
        "--decimal-comma",
        action="store_true",
        help="read a comma in a number as the decimal point ('0,2' is 0.2; '1.234,5' is 1234.5)",
    )
    commas.add_argument(
        "--thousands-comma",
        action="store_true",
        help="read a comma in a number as a thousands separator ('1,234' is 1234)",
    )


def _import_serving(p: argparse.ArgumentParser) -> None:
    """The flags of `import serving`: what the results file does not say of the run."""
    _once(p, "--model", "models", "M", "serving: the model spec the results are for (required)")
    p.add_argument(
        "--format",
        dest="serving_format",
        choices=["vllm", "genai-perf", "csv"],
        help="serving: vllm (benchmark_serving's --save-result JSON), genai-perf (its"
        " profile_export_genai_perf.csv) or csv (the plain form); default: told from the file",
    )
    for flag, what in (
        ("--tp", "tensor-parallel degree"),
        ("--pp", "pipeline-parallel degree"),
        ("--ep", "expert-parallel degree"),
        ("--chips", "chips serving (default lcm(tp, ep) × pp)"),
    ):
        p.add_argument(flag, metavar="N", help=f"serving: the run's {what}")
    p.add_argument("--kv", metavar="P", help="serving: the KV cache's precision (default: P's)")
    p.add_argument("--input", metavar="N", help="serving: input (prompt) tokens per request")
    p.add_argument("--output", metavar="N", help="serving: output (generated) tokens per request")
    p.add_argument("--concurrency", metavar="N", help="serving: requests kept in flight")
    p.add_argument("--batch", metavar="N", help="serving: requests of one static batch")
    p.add_argument(
        "--engine", metavar="TEXT", help="serving: the engine and its version, as 'vLLM 0.6.3'"
    )


_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")


def _id_option(option: str) -> Callable[[str], str]:
    """An option's value checked as an id as the schemas spell one: lower-case letters,
    digits and hyphens."""

    def checked(text: str) -> str:
        if not _ID.fullmatch(text):
            raise argparse.ArgumentTypeError(
                f"{option} {text[:80]!r}: an id is lower-case letters, digits and hyphens"
                " (at most 64, starting with a letter or digit)"
            )
        return text

    return checked


_source_id = _id_option("--source")
_model_id = _id_option("--id")


_URL = re.compile(r"https://[A-Za-z0-9.-]+(/[A-Za-z0-9._~%/+=-]*)?")


def _config_url(text: str) -> str:
    if len(text) > 500 or not _URL.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"--url {text[:80]!r}: an https:// address of letters, digits and . _ ~ % / + = -"
        )
    return text


def _solve(p: argparse.ArgumentParser) -> None:
    p.add_argument("case", metavar="CASE", nargs="?", default="", help="a case id")
    _once(p, "--model", "models", "M", "a model id, instead of CASE (with --phase)")
    _once(p, "--phase", "phases", "PH", "the model's phase")
    _device_and_precision(p)
    p.add_argument(
        "--vary",
        required=True,
        metavar="SYMBOL",
        help="a case's symbol, varied over 1..10^12; with --model, tp (the tensor-parallel"
        " degree) or b (the batch)",
    )
    _shape(p, "default: the grid's first shape, every symbol at its smallest value")
    _deployment(p)
    _format(p, ["text", "json"], "text", "text (default) or json")
    _specs(p)


def _plan(p: argparse.ArgumentParser) -> None:
    _once(p, "--model", "models", "M", "a model id", required=True)
    p.add_argument("--input", metavar="I", help="input (prompt) tokens per request")
    p.add_argument("--output", metavar="O", help="output (generated) tokens per request")
    p.add_argument(
        "--request",
        metavar="ID",
        help="a request shape the model's spec names (requests:), instead of --input/--output",
    )
    p.add_argument(
        "--min-user-rate", metavar="R", help="the least tokens/s per user (a number, as 20)"
    )
    p.add_argument("--max-ttft", metavar="T", help="the most time to the first token (500ms)")
    p.add_argument("--max-latency", metavar="T", help="the most time for a request (30s)")
    p.add_argument("--max-chips", metavar="N", help="the most chips of a deployment")
    _speculate(p)
    _repeated(p, "--device", "devices", "D", "a device (repeatable; default: every device)")
    p.add_argument(
        "--objective",
        choices=["tokens-per-chip", "cost", "energy"],
        default="tokens-per-chip",
        help="what the best deployment maximises: tokens-per-chip (default), or minimises:"
        " cost (USD per million tokens, where a price is given) or energy (joules per token"
        " at board power)",
    )
    _repeated(
        p,
        "--price",
        "prices",
        "D=PRICE",
        "the reader's price of device D per chip-hour, as 2.5USD/h (repeatable); shown as"
        " the reader's",
    )
    _once(p, "--precision", "precisions", "P", "default: the model's precision")
    _format(p, ["text", "json", "csv"], "text", "text (default), json or csv")
    _specs(p)


def _validate(p: argparse.ArgumentParser) -> None:
    _repeated(p, "--model", "models", "M", "a model (repeatable; default: every model)")
    _repeated(p, "--device", "devices", "D", "a device (repeatable; default: every device)")
    _format(p, ["text", "json", "csv"], "text", "text (default), json or csv")
    _specs(p)


def _diff(p: argparse.ArgumentParser) -> None:
    p.add_argument("base", nargs="?", metavar="BASE_REF", help="a git ref (default: merge base)")
    _specs(p)
    _format(p, ["markdown", "json"], "markdown", "markdown or json")
    p.add_argument(
        "--require-bump",
        action="store_true",
        help="fail when a spec's content changed without a new versions entry",
    )


def _publish(p: argparse.ArgumentParser) -> None:
    p.add_argument("version", metavar="VERSION", help="the version to publish, e.g. 2026.11")
    _repeated(
        p,
        "--alias",
        "aliases",
        "ALIAS",
        "an alias to point at this version, e.g. latest (repeatable)",
    )
    p.add_argument(
        "--config",
        type=Path,
        default=DEFAULT_CONFIG,
        metavar="FILE",
        help="the mkdocs config (default: ./mkdocs.yml)",
    )
    p.add_argument("--branch", default=DEFAULT_BRANCH, help="the branch to commit to")
    p.add_argument("--push", action="store_true", help="push the branch after committing")


def _export(p: argparse.ArgumentParser) -> None:
    _specs(p)
    _format(p, ["csv", "json"], "csv", "csv (default) or json")


def _build(p: argparse.ArgumentParser) -> None:
    _specs(p)
    p.add_argument(
        "--out", type=Path, metavar="DIR", help=f"output folder (default: {DEFAULT_SITE})"
    )
    p.add_argument(
        "--verbose",
        action="store_true",
        help="show mkdocs' progress messages, and one line when rooflinec's fast paths are "
        "off (a mkdocs, Markdown or mkdocs-material outside the tested versions)",
    )


def _serve(p: argparse.ArgumentParser) -> None:
    _specs(p)
    p.add_argument(
        "--dev-addr",
        default=DEFAULT_ADDRESS,
        metavar="HOST:PORT",
        help=f"address to serve on (default: {DEFAULT_ADDRESS})",
    )


COMMANDS: tuple[Command, ...] = (
    Command(
        "check",
        help="load, validate and cross-check the specs; run every reference example",
        description="Load, validate and cross-check every spec, evaluate every formula for "
        "every case, run every reference example and the catalog lints. Prints one line per "
        "problem, FILE:LINE:COL: error: MESSAGE [$.path]. Exit 0 when clean, 1 on spec errors. "
        "A lint is turned off with --disable 'LINT=REASON' or in the [tool.rooflinec.disable] "
        "table of the pyproject.toml beside the specs folder; a reason is required.",
        arguments=_check,
        run=commands.cmd_check,
    ),
    Command(
        "compile",
        help="compile every case on every device and precision",
        description="Resolve every kernel case against every device at every precision the "
        "device has a peak for, and every model's phases at the model's precision (or at those "
        "--precision names). json follows the results "
        "contract (model rows under `models`); jsonl has one result per line, as data-frame "
        "tools read it; csv has units in its headers (or plain names with --csv-header plain) "
        "and holds the model rows when only models are selected (--model); parquet has one "
        "typed column per csv column of the results with its unit in the column's metadata "
        "(--partition device: a folder DuckDB, Polars or Spark read as one table); table is "
        "for reading in a terminal. With --model M --input I --output O (or --request ID), "
        "request rows instead: a static batch (--batch N) of requests on the deployment given, "
        "with ttft, itl, latency, tokens per second per user, per chip and in all, cost where a "
        "price is quoted and energy at board power, in every format (under `requests` in json). "
        "Rows are written in batches as they are computed. With "
        "--out, the output is written to a temporary file beside FILE and moved in when "
        "complete: an error, Ctrl-C (exit 130) or SIGTERM (exit 143) leaves no partial file. "
        "A device or a pipe (/dev/null, /dev/stdout) is written to as it is, never replaced; "
        "a file check reads (in the specs folder, the pyproject.toml beside it) is refused.",
        arguments=_compile,
        run=commands.cmd_compile,
    ),
    Command(
        "explain",
        help="the derivation of one result, step by step",
        description="Print the derivation of CASE on device D: formulas, values bound, "
        "operations, bytes, intensities, every ceiling, which one wins, and the time. "
        "--symbolic keeps the shape free and prints the time as an expression. With "
        "--model M --phase PH instead of CASE: each step's derivation, the sums, and tokens "
        "per second; --deployment NAME takes the device and the split from the deployment "
        "the model's spec names. With --model M --input I --output O (or --request ID) "
        "instead of --phase: a request row's derivation (ttft, the decode passes' sum, "
        "latency, the rates, cost and energy).",
        arguments=_explain,
        run=commands.cmd_explain,
    ),
    Command(
        "report",
        help="the write-up block of a measured run",
        description="For CASE's measured run on device D, the lines a benchmark write-up "
        "carries: the kernel, achieved throughput (and its share of the peak), achieved "
        "bandwidth per level (and its share), arithmetic intensity (modelled, and measured "
        "where the profiler counted bytes, with the traffic ratio), the regime "
        "(compute-bound, memory-bound at a level, latency-bound) and the bottleneck to attack.",
        arguments=_report,
        run=commands.cmd_report,
    ),
    Command(
        "import",
        help="measured entries from a profiler's export or a serving benchmark's results",
        description="Read FILE, a plain CSV of measured runs (columns case, device, "
        "precision, time, launches, flops, bytes.dram, bytes.l2, bytes.l1; times with "
        "units), an Nsight Compute CSV export (raw or details page) or rocprof-compute's "
        "pmc_perf.csv, sum the launches of each kernel, and print the measured entries as "
        "YAML; --write adds them and a measurement source to the kernel specs in place, "
        "keeping comments, order and line ends; --source ID names that source (a different "
        "source of that id already in a file is refused, never replaced). All files change "
        "or none: they are written beside and renamed in, an error or Ctrl-C puts the "
        "originals back, and a journal left by a killed run is finished or rolled back by "
        "the next --write. A number with one comma and no point (0,2 or 1,234) is refused "
        "unless --decimal-comma or --thousands-comma says how to read it. A bad file gives "
        "FILE:LINE[:COL]: error: lines, exit 1, and no spec is touched. "
        "`import hf-config config.json --id ID --url URL` prints a model spec from a Hugging "
        "Face config.json (Llama, Mistral, Mixtral, Qwen2, Qwen3, Qwen3-MoE): its sizes as "
        "parameters, each quoting the config, and the steps, memory ledger and phases of the "
        "bundled specs of its family; --write writes it to models/ID.yaml, refusing an "
        "existing file (exit 2). Another architecture is one line naming it, exit 1. "
        "`import serving FILE --model M` prints (--write: adds to the model's spec, with a "
        "measurement source) serving results from vLLM's benchmark_serving --save-result "
        "JSON, genai-perf's profile_export_genai_perf.csv or the plain serving CSV "
        "(--format says which; default: told from the file); --device, --tp/--pp/--ep/"
        "--chips, --precision, --kv, --input, --output, --concurrency, --batch and --engine "
        "give what the file does not say, and one that says otherwise than the file is an "
        "error.",
        arguments=_import,
        run=commands.cmd_import,
    ),
    Command(
        "solve",
        help="the shape at which a case turns compute bound; a model's degree and batch",
        description="Vary one SYMBOL of CASE over the integers 1..10^12, the others held at "
        "the case's shape, on device D: the regions limited by compute and by each memory "
        "level, the crossover (the least value from which on it stays compute bound), the "
        "bandwidth per level at which the case's own shape turns compute bound and the peak "
        "above which it turns memory bound. Exact: every boundary is checked on both sides. "
        "With --model M --phase PH instead of CASE: --vary tp evaluates the pass at every "
        "tensor-parallel degree from 1 to the device's bound (its scale-up domain, or 1,024 "
        "where a scale-out network joins domains), --pp, --ep and --chips held, skipping "
        "(and naming) the degrees the model or device cannot take; per degree chips, fits, "
        "time, time_overlapped, tokens/s (none where it does not fit), limited_by and the "
        "interconnect's share of the time; then the least degree from which on, over the "
        "degrees evaluated, the pass stays interconnect bound, and the least at which it "
        "fits. --vary b gives the largest batch whose memory ledger fits at the phase's "
        "other variables and the deployment --tp/--pp/--ep/--chips (exact; it stops fitting "
        "one batch later), and the batch from which each step turns compute bound there. "
        "--format json: degrees, skipped, interconnect_bound_from, least_fitting; or "
        "max_batch, stops_fitting_at, steps (see the README).",
        arguments=_solve,
        run=commands.cmd_solve,
    ),
    Command(
        "plan",
        help="the best deployment per device for a request shape and service targets",
        description="Search, per device, the deployments of model M (chips a power of two "
        "up to the scale-up domain, at most 64; tp a power of two dividing the query heads; "
        "pp dividing the layers; ep dividing the experts) at batches 1, 2, 4, ... and the "
        "largest that fits, for requests of --input and --output tokens (or the model's "
        "named --request): the frontier of tokens/s per user against tokens/s per chip, and "
        "the best deployment that meets the targets (--min-user-rate, --max-ttft, "
        "--max-latency, --max-chips) by --objective. When none meets them it says so and "
        "names the target that binds. --price D=2.5USD/h gives the reader's price of a "
        "device (labelled as the reader's). Each plan row names the explain command that "
        "derives it. --format json: model, input, output, targets, plans, frontier.",
        arguments=_plan,
        run=commands.cmd_plan,
    ),
    Command(
        "validate",
        help="compare bounds with measured serving results",
        description="Set every measured serving result of the models (a `measured` entry "
        "with input and output) beside its bound: ttft, itl and tokens/s per user at batch "
        "1, output tokens/s at the most sequences that can be resident (a static batch at "
        "its batch), from the passes' time_overlapped; the ratio (1 or more when the bound "
        "holds), the regime of the pass that sets the bound, and a calibrated estimate (the "
        "bound times the geometric mean of the ratios of its device, metric and regime), "
        "labelled as such. Then per device, metric and regime the points, median and worst "
        "ratio, and the estimate's leave-one-out error (median and worst absolute "
        "percentage error) beside the bound's own. Energy is shown, not bounded. --format "
        "json: points, summary, estimate_error, bound_error (see the README).",
        arguments=_validate,
        run=validate.cmd_validate,
    ),
    Command(
        "diff",
        help="compiled figures that differ between a git ref and the working tree",
        description="Compile the catalog at BASE_REF (default: the merge base with main, else "
        "HEAD) and in the working tree; list specs added and removed and every figure that "
        "moved (peaks, bandwidths, ridge points, intensities, attainable rates, bounds, "
        "times), old -> new with the relative change, largest first. Markdown fits a "
        "pull-request comment or a job summary.",
        arguments=_diff,
        run=commands.cmd_diff,
    ),
    Command(
        "publish",
        help="publish a version of the site with mike into a local gh-pages branch",
        description="Build the site and commit it as VERSION to a local gh-pages branch with "
        "mike (material's version selector lists every published version). The site's "
        "changes page lists the figures that moved since the previous published version. "
        "Nothing is pushed without --push.",
        arguments=_publish,
        run=commands.cmd_publish,
    ),
    Command(
        "export",
        help="the device catalog with provenance columns, as CSV or JSON",
        description="Write every device figure (peaks, bandwidths, capacities) with its "
        "printed text, dense and sustained values in SI base units, source, quote and the "
        "spread of its alternatives. csv (default) has one row per figure; json adds each "
        "figure's transformation steps and alternatives.",
        arguments=_export,
        run=commands.cmd_export,
    ),
    Command(
        "build",
        help="build the static site",
        description="Build the static site of a specs folder (default: ./specs when present, "
        "else the bundled catalog): every device, kernel and method page, the comparison, "
        "sources, glossary and changelog, with offline charts. The site is built in a "
        "temporary folder and moved in, so a failed build leaves the previous one intact. "
        "DIR/.rooflinec-manifest.json lists what each build wrote: a build replaces only "
        "those files, and keeps dot files (.git, .nojekyll) and everything else. It refuses "
        "(exit 2, nothing touched) a DIR that is / or the home folder, contains the working "
        "folder or the specs, or lies inside the specs; a DIR holding anything but dot files "
        "and no manifest; and a new file landing on a file the manifest does not list.",
        arguments=_build,
        run=commands.cmd_build,
    ),
    Command(
        "serve",
        help="live preview of the site, rebuilt on every spec edit",
        description="Serve the site on a local address and rebuild it whenever a spec "
        "changes (mkdocs serve with the specs folder watched). While a spec is broken, the "
        "last good site is served with the errors on a banner on every page.",
        arguments=_serve,
        run=commands.cmd_serve,
    ),
)


def build_parser() -> argparse.ArgumentParser:
    """One parser for every command of `COMMANDS`, in the table's order."""
    parser = _Parser(
        prog="rooflinec",
        description="Roofline results and a static report site from YAML specs of "
        "accelerators and kernels.",
    )
    parser.add_argument("--version", action="version", version=f"rooflinec {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for command in COMMANDS:
        command.arguments(
            sub.add_parser(command.name, help=command.help, description=command.description)
        )
    return parser


def parse(argv: Sequence[str]) -> Options:
    """The command line as `Options`; `SystemExit` on a usage error, after argparse's
    message. Each argument's destination is an `Options` field."""
    return Options(**vars(build_parser().parse_args(list(argv))))


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the command line; return the exit code."""
    stdout = out or sys.stdout
    try:
        opts = parse(sys.argv[1:] if argv is None else argv)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    run = next(c.run for c in COMMANDS if c.name == opts.command)
    # Every line printed below is one line whatever it quotes (a file name, a spec's text, a
    # tool's output): `one_line` and `Diagnostic.__str__` escape control characters.
    try:
        code = run(opts, stdout)
        PENDING_STOP.check()  # a SIGTERM Python dropped is not a success
        return code
    except UsageError as exc:
        sys.stderr.write(f"rooflinec: error: {one_line(str(exc))}\n")
        return EXIT_USAGE
    except SpecError as exc:
        for d in exc.diagnostics:
            sys.stderr.write(f"{d}\n")
        return EXIT_SPEC
    except RooflinecError as exc:
        sys.stderr.write(f"rooflinec: error: {one_line(str(exc))}\n")
        return EXIT_SPEC
    except ModuleNotFoundError as exc:
        # An optional dependency reached only on some inputs: say which extra brings
        # it. Any other is a bug.
        extra = EXTRA_OF_MODULE.get((exc.name or "").partition(".")[0])
        if extra is None:
            return _internal(exc)
        message = missing_extra_message(f"rooflinec {opts.command}", extra, [exc.name or ""])
        sys.stderr.write(f"rooflinec: error: {message}\n")
        return EXIT_USAGE
    except (KeyboardInterrupt, Terminated) as exc:
        # Ctrl-C, or SIGTERM (`console` turns it into `Terminated`): whatever was being
        # written has been removed on the way out.
        return _stopped(exc)
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:
        # Outputs named with --out raise `WriteError` themselves; an error that only a write
        # gives (a full disk, a quota, a file too large), naming no file, is the standard
        # output's: `compile > /dev/full`.
        if exc.filename is None and exc.errno in _WRITE_ERRNOS:
            reason = exc.strerror or os.strerror(exc.errno or 0)
            sys.stderr.write(f"rooflinec: error: cannot write standard output: {reason}\n")
            return EXIT_SPEC
        return _internal(exc)
    except Exception as exc:
        return _internal(exc)


def _internal(exc: Exception) -> int:
    """A bug in rooflinec itself: one line, not a traceback; or a stop in disguise."""
    stop = _stop_within(exc)
    if stop is not None:
        return _stopped(stop)
    sys.stderr.write(internal_error_line(exc) + "\n")
    return EXIT_INTERNAL


def _stop_within(exc: BaseException) -> BaseException | None:
    """The Ctrl-C or SIGTERM an exception was raised from or while handling, if any.

    A signal's exception can surface wrapped: raised while Python runs a class's
    `__set_name__` (a library defining its classes as it loads) it arrives as the
    `RuntimeError` whose `__cause__` it is. Stopping is still what happened."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, (KeyboardInterrupt, Terminated)):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _stopped(stop: BaseException) -> int:
    """The line and exit code of Ctrl-C (130) or SIGTERM (143)."""
    if isinstance(stop, Terminated):
        sys.stderr.write("rooflinec: terminated\n")
        return EXIT_TERMINATED
    sys.stderr.write("rooflinec: interrupted\n")
    return EXIT_INTERRUPTED


def _terminate(signum: int, frame: FrameType | None) -> None:
    """SIGTERM as an exception where the program is, so every cleanup that runs on Ctrl-C
    (temporary files and folders removed, the previous output kept) runs for it too.
    A second SIGTERM during that cleanup is ignored: it must not cut the cleanup short."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated


def _unraisable(hook: UnraisableHookArgs) -> None:
    """A `Terminated` Python could not raise (see `PENDING_STOP`) is recorded, silently;
    anything else is reported as Python reports it."""
    if isinstance(hook.exc_value, Terminated):
        PENDING_STOP.pending = True
        return
    sys.__unraisablehook__(hook)


def console() -> None:
    """Entry point of the `rooflinec` console script."""
    # By default SIGTERM ends the process at once, leaving a write's temporary file behind.
    # Only here, not in `main`: a program that calls `main` keeps its own handlers.
    signal.signal(signal.SIGTERM, _terminate)
    sys.unraisablehook = _unraisable
    # A command builds a catalog and keeps it to the end: the cycle collector's default
    # passes (one every 700 allocations, over everything kept every hundred or so) find
    # next to nothing to free in it and cost a compile of the bundled catalog a tenth of
    # its time. Fewer passes; a full one still follows every million or so allocations,
    # so a long `serve` or site build frees its cycles as before.
    gc.set_threshold(10_000, 10, 10)
    try:
        code = main()
    # Before `main` could catch them: while modules load or the options are parsed.
    except KeyboardInterrupt:
        sys.stderr.write("rooflinec: interrupted\n")
        code = EXIT_INTERRUPTED
    except Terminated:
        sys.stderr.write("rooflinec: terminated\n")
        code = EXIT_TERMINATED
    raise SystemExit(code)
