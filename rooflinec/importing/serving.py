"""`rooflinec import serving`: serving-benchmark results turned into a model spec's
serving results (`measured` entries with `input` and `output`).

Three formats are read, whole (a result is a few kilobytes; the file is capped at
`MAX_BYTES`):

- `vllm`: the JSON that vLLM's `benchmark_serving.py --save-result` (or `vllm bench
  serve`) writes, one object, or one a line with `--append-result`: `mean_ttft_ms`,
  `mean_itl_ms` (else `mean_tpot_ms`) and `output_throughput` become `ttft`, `itl` and
  `output_rate`, `max_concurrency` the concurrency (null: none), and each request's
  length comes from `input_lens` / `output_lens` when every request had the same;
- `genai-perf`: its `profile_export_genai_perf.csv`, the `avg` of `Time To First Token`,
  `Inter Token Latency` and `Output Token Throughput Per User`, the `Value` of `Output
  Token Throughput`, and the lengths from `Input` / `Output Sequence Length` when their
  `min` is their `max`;
- `csv`: a plain CSV with the columns `CSV_COLUMNS` (the unit in each figure's name),
  one entry a line.

What a file does not say (the device, the deployment, the precision; the lengths when
requests differed) comes from the command line (`ServingDefaults`); a flag that says
otherwise than the file is an error. A length the file shows varying, given by a flag,
is marked `assumed`. Every figure keeps the file's decimal text (`406.77` is written
`406.77 ms`, never through a float), and every problem is a `FILE:LINE[:COL]: error:`
line (`ExportError`), found before any spec is touched.

`render_serving` prints the entries as a model spec's YAML; `write_serving` adds them to
the model's spec in place with ruamel's round trip, the edited spec built first
(`write.verify`) and replaced whole or not at all (`write.commit`).
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import os
import re
import unicodedata
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.tokens import CommentToken

from rooflinec.formatting import exact_decimal
from rooflinec.importing.render import yaml
from rooflinec.importing.rows import (
    Commas,
    ExportError,
    Lines,
    NumberError,
    Problem,
    Problems,
    number,
    shown,
    table_rows,
)
from rooflinec.importing.sources import local_source, source_id
from rooflinec.quantities import Dimension, QuantityError, parse_quantity

if TYPE_CHECKING:
    from rooflinec.catalog import Catalog

__all__ = [
    "CSV_COLUMNS",
    "MAX_BYTES",
    "MAX_ENTRIES",
    "SERVING_FORMATS",
    "TOOLS",
    "ServingDefaults",
    "default_source_id",
    "detect_format",
    "read_serving",
    "render_serving",
    "serving_source",
    "text_problem",
    "write_serving",
]

SERVING_FORMATS = ("vllm", "genai-perf", "csv")

#: The tool each format comes from, as a measurement source's `tool` names it.
TOOLS = {"vllm": "vLLM benchmark_serving", "genai-perf": "genai-perf", "csv": "plain CSV"}

MAX_BYTES = 16 << 20
"""Largest file read: a result is kilobytes; vLLM's `--save-detailed` lists add a few
megabytes (a length, a time, a text per request)."""

MAX_ENTRIES = 200  # the schema's maxItems of a model's `measured`
MAX_QUOTE = 1000  # the schema's longest quote
MAX_TEXT = 2000  # the schema's longest text (engine, technique, note)
MAX_TOKENS = 10**7  # a request's tokens (`requestTokens`)
MAX_DEGREE = 1 << 20  # a degree or chip count (`degree`)
MAX_WHOLE = 10**15  # a concurrency or batch (`wholeNumber`)
MAX_DRAFT = 64  # a speculation's drafted tokens

#: The plain CSV's columns, in the order its documentation lists them.
CSV_COLUMNS = (
    "device", "chips", "tp", "pp", "ep", "precision", "kv", "input", "output", "concurrency",
    "batch", "engine", "ttft_ms", "itl_ms", "output_rate_tokens_per_s",
    "user_rate_tokens_per_s", "energy_j_per_token", "technique", "speculation_k", "assumed",
    "source", "quote", "note",
)  # fmt: skip

# Each figure: its dimension, and the plain CSV's column and unit for it.
_FIGURES: dict[str, tuple[Dimension, str, str]] = {
    "ttft": (Dimension.TIME, "ttft_ms", "ms"),
    "itl": (Dimension.TIME, "itl_ms", "ms"),
    "output_rate": (Dimension.TOKEN_RATE, "output_rate_tokens_per_s", "tokens/s"),
    "user_rate": (Dimension.TOKEN_RATE, "user_rate_tokens_per_s", "tokens/s"),
    "energy": (Dimension.ENERGY, "energy_j_per_token", "J/token"),
}
_FIGURE_COLUMNS = {column: name for name, (_, column, _) in _FIGURES.items()}
# Whole-number fields: the least and the most each may be, and what it is.
_WHOLES: dict[str, tuple[int, str]] = {
    "chips": (MAX_DEGREE, "a chip count"),
    "tp": (MAX_DEGREE, "a degree"),
    "pp": (MAX_DEGREE, "a degree"),
    "ep": (MAX_DEGREE, "a degree"),
    "input": (MAX_TOKENS, "a token count"),
    "output": (MAX_TOKENS, "a token count"),
    "concurrency": (MAX_WHOLE, "a concurrency"),
    "batch": (MAX_WHOLE, "a batch"),
}
_IDS = ("device", "precision", "kv", "source")
# The fields the command line may give (`ServingDefaults`), in the schema's order.
_FLAGGED = ("device", "chips", "tp", "pp", "ep", "precision", "kv", "input", "output",
            "concurrency", "batch", "engine")  # fmt: skip
_TEXTS = {"engine": MAX_TEXT, "technique": MAX_TEXT, "quote": MAX_QUOTE, "note": MAX_TEXT}

# The schema's fields of a serving result, in its order, and the fields `assumed` may
# name: read from the schema (what the loader checks) where it says, else these.
_ORDER = (
    "device", "chips", "tp", "pp", "ep", "precision", "kv", "input", "output", "concurrency",
    "batch", "engine", "ttft", "itl", "output_rate", "user_rate", "energy", "technique",
    "speculation", "assumed", "source", "quote", "note",
)  # fmt: skip
_ASSUMABLE = (
    "chips", "tp", "pp", "ep", "precision", "kv", "input", "output", "concurrency", "batch",
    "speculation",
)  # fmt: skip

_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
_PLAIN_DECIMAL = re.compile(r"[0-9]{1,64}(?:\.[0-9]{1,64})?")
# Bidirectional overrides and isolates: text that reads otherwise than it is stored.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_SEPARATOR = "; "  # between the lines (or JSON members) a quote joins


@dataclass(frozen=True)
class ServingDefaults:
    """What the command line says of the run: each fills what the file does not say,
    and a value the file says otherwise is an error. `model` is the model spec the
    results are for; `source` the id of the source they cite; `commas` how a comma in a
    plain CSV's number is read."""

    model: str
    device: str | None = None
    tp: int | None = None
    pp: int | None = None
    ep: int | None = None
    chips: int | None = None
    precision: str | None = None
    kv: str | None = None
    input: int | None = None
    output: int | None = None
    concurrency: int | None = None
    batch: int | None = None
    engine: str | None = None
    source: str | None = None
    commas: Commas = "ask"


@cache
def _schema() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the serving result's fields in the schema's order, the fields `assumed` names)."""
    from rooflinec.resources import schemas_dir

    try:
        schema = json.loads((schemas_dir() / "model.schema.json").read_text("utf-8"))
        properties = schema["definitions"]["serving"]["properties"]
        order = tuple(str(k) for k in properties)
        assumable = tuple(str(k) for k in properties["assumed"]["items"]["enum"])
    except (OSError, ValueError, KeyError, TypeError):  # pragma: no cover - a broken install
        return _ORDER, _ASSUMABLE
    return order, assumable


def default_source_id(fmt: str, path: str) -> str:
    """The id of the source an import of `path` records: `vllm-run` for `run.json`."""
    return source_id(fmt, path)


def serving_source(
    fmt: str, path: str, today: datetime.date, sid: str | None = None
) -> tuple[str, dict[str, Any]]:
    """(id, fields) of the measurement source recording an import of `path`, as
    `sources.measurement_source` does for a profiler's export."""
    tool = TOOLS[fmt]
    return sid or default_source_id(fmt, path), local_source(
        tool,
        f"{tool} results {Path(path).name}",
        path,
        today,
        "add the benchmark's version to `tool` and its command line (and the server's) as"
        " `command`",
    )


def text_problem(text: str, limit: int) -> str | None:
    """What keeps `text` from being a spec's text field, or None: one to `limit`
    characters, none of them a control character (line and paragraph separators and
    bidirectional overrides included). Markup is kept as written: the site escapes it."""
    bad = _control(text)
    if bad is not None:
        return (
            f"holds a control character (U+{ord(text[bad]):04X}): write it on one line of"
            " printable text"
        )
    if not text.strip():
        return "is empty"
    if len(text) > limit:
        return f"has {len(text):,} characters: at most {limit:,}"
    return None


def detect_format(path: str, data: bytes, fmt: str | None) -> str:
    """`fmt` when given (checked), else the format the file looks like: a `.json` file or
    one starting with `{` or `[` is vLLM's, one whose first cell is `Metric` genai-perf's,
    any other a plain CSV."""
    if fmt is not None:
        if fmt not in SERVING_FORMATS:
            raise ExportError(
                [
                    Problem(
                        path,
                        1,
                        f"unknown format {shown(fmt)}: import serving reads"
                        f" {', '.join(SERVING_FORMATS)}",
                    )
                ]
            )
        return fmt
    head = data[:4096].removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n")
    if path.lower().endswith(".json") or head[:1] in (b"{", b"["):
        return "vllm"
    first = head.split(b"\n", 1)[0].split(b",", 1)[0].strip(b' \t\r"')
    return "genai-perf" if first == b"Metric" else "csv"


def read_serving(
    path: str,
    data: bytes,
    fmt: str | None,
    defaults: ServingDefaults,
    catalog: Catalog | None = None,
) -> list[dict[str, Any]]:
    """The serving results in `data` (the file at `path`), each a plain dict of the
    schema's fields in its order; `ExportError` naming every problem at its line.

    `fmt` is one of `SERVING_FORMATS`, or None to tell it from the file. With `catalog`,
    the device, precision and source ids a plain CSV names are checked against it (and
    the model's sources); the command line's are the caller's to check.
    """
    kind = detect_format(path, data, fmt)
    if len(data) > MAX_BYTES:
        raise ExportError(
            [
                Problem(
                    path,
                    1,
                    f"the file is larger than {MAX_BYTES // 2**20} MiB: a serving"
                    " benchmark's results are a few kilobytes (a few megabytes with vLLM's"
                    " --save-detailed lists)",
                )
            ]
        )
    reader = _Reader(path, defaults, kind, catalog)
    if kind == "vllm":
        entries = reader.vllm(data)
    elif kind == "genai-perf":
        entries = reader.genai_perf(data)
    else:
        entries = reader.plain(data)
    reader.problems.raise_any()
    if not entries:
        raise ExportError([Problem(path, 1, "no serving result in the file")])
    return entries


# ---------------------------------------------------------------------- reading


class _Num(str):
    """A JSON number as its text: read exactly (`rows.number`), never through a float."""

    __slots__ = ()


@dataclass
class _Member:
    """A top-level member of a JSON object: its value and where its text is."""

    value: Any
    start: int  # the key's opening quote
    at: int  # the value's first character
    end: int  # after the value


@dataclass
class _Lengths:
    """What a file says of the requests' lengths (input or output tokens)."""

    stated: int | None = None  # every request had this many
    low: Fraction | None = None  # else they varied, from low to high, with this mean
    high: Fraction | None = None
    mean: Fraction | None = None
    where: tuple[int, int | None] = (1, None)  # the line and column it is read at
    what: str = ""  # the file's name for it, as a message names it


@dataclass
class _Draft:
    """A serving result being read: its fields (any order) and what is said of it."""

    line: int
    fields: dict[str, Any] = field(default_factory=dict)
    assumed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class _Reader:
    def __init__(
        self, path: str, defaults: ServingDefaults, kind: str, catalog: Catalog | None
    ) -> None:
        self.path = path
        self.defaults = defaults
        self.kind = kind
        self.catalog = catalog
        self.problems = Problems(path)
        self.source = defaults.source or default_source_id(kind, path)

    def problem(self, line: int, message: str, col: int | None = None) -> None:
        self.problems.add(Problem(self.path, line, message, col))

    def problem_at(self, where: tuple[int, int | None], message: str) -> None:
        self.problems.add(Problem(self.path, where[0], message, where[1]))

    # -- shared ------------------------------------------------------------------------

    def settle(
        self,
        draft: _Draft,
        name: str,
        value: Any,
        where: tuple[int, int | None],
        said: str,
    ) -> None:
        """Put the file's `value` of field `name` in `draft` (None: the file does not say
        it, and the command line's goes in); a flag saying otherwise is a problem at
        `where`, `said` being how the file says it."""
        flag = getattr(self.defaults, name)
        if value is None:
            if flag is not None:
                draft.fields[name] = flag
            return
        if flag is not None and flag != value:
            self.problem(
                where[0],
                f"{said} is {value}, but --{name} says {flag}: they disagree (leave the flag"
                " out, or import the file that was run with it)",
                where[1],
            )
            return
        draft.fields[name] = value

    def lengths(self, draft: _Draft, name: str, found: _Lengths) -> None:
        """Set the input or output tokens of `draft` from what the file says and the flag."""
        flag = getattr(self.defaults, name)
        line, col = found.where
        if found.stated is not None:
            self.settle(draft, name, found.stated, found.where, f"every request's {name}")
            return
        if found.low is not None and found.high is not None:
            span = f"from {_short(found.low)} to {_short(found.high)}"
            if flag is None:
                self.problem(
                    line,
                    f"the requests' {name} tokens vary {span} ({found.what}): give --{name} N"
                    " for the entry (it is then marked assumed)",
                    col,
                )
                return
            draft.fields[name] = flag
            draft.assumed.append(name)
            mean = f", mean {_short(found.mean)}" if found.mean is not None else ""
            draft.notes.append(f"{name} tokens vary {span}{mean}; --{name} {flag} given")
            return
        if flag is None:
            self.problem(
                line,
                f"the file does not say the {name} tokens of each request{found.what}: give"
                f" --{name} N",
                col,
            )
            return
        draft.fields[name] = flag
        if found.mean is not None and found.mean != flag:
            draft.assumed.append(name)
            draft.notes.append(
                f"mean {name} {_short(found.mean)} tokens a request; --{name} {flag} given"
            )

    def figure(
        self,
        draft: _Draft,
        name: str,
        text: str,
        unit: str,
        where: tuple[int, int | None],
        label: str,
        commas: Commas = "ask",
        *,
        zero_absent: bool = False,
    ) -> bool:
        """Put figure `name`, the number `text` in `unit`, in `draft`, its decimal text kept;
        False (and a problem, unless it is zero and `zero_absent`) when it is not one."""
        try:
            value = number(text, commas)
        except NumberError as exc:
            col = None if where[1] is None else where[1] + exc.offset
            self.problem(where[0], f"{label} {shown(text)} {exc.message}", col)
            return False
        if value is None:
            return False
        if value == 0:
            if not zero_absent:
                self.problem(
                    where[0],
                    f"{label} {shown(text)} is zero: a measured figure is above zero (leave"
                    " the cell empty when it was not measured)",
                    where[1],
                )
            return False
        digits = text.strip()
        if not _PLAIN_DECIMAL.fullmatch(digits):
            digits = exact_decimal(value) or digits  # '1,234.5' or '4.1e2': exactly
        quantity = f"{digits} {unit}"
        try:
            parse_quantity(quantity, _FIGURES[name][0], positive=True)
        except QuantityError as exc:
            self.problem(where[0], f"{label} {shown(text)}: {exc.message}", where[1])
            return False
        draft.fields[name] = quantity
        return True

    def text(
        self,
        label: str,
        value: str,
        limit: int,
        where: tuple[int, int | None],
        *,
        verbatim: bool = True,
    ) -> bool:
        """Whether `value` may be a text field (`text_problem`); else a problem at `where`,
        at the control character when `value` is the file's text `verbatim` (a JSON
        string's escapes make its text longer: the problem is at its first quote)."""
        wrong = text_problem(value, limit)
        if wrong is None:
            return True
        bad = _control(value)
        col = where[1] if where[1] is None or bad is None or not verbatim else where[1] + bad
        self.problem(where[0], f"{label} {shown(value)} {wrong}", col)
        return False

    def finish(self, draft: _Draft, quote: str) -> dict[str, Any]:
        """The entry of `draft`, its fields in the schema's order, the command line's
        filling what the file left out; problems for what neither says."""
        fields = draft.fields
        for name in _FLAGGED:
            if fields.get(name) is None and getattr(self.defaults, name) is not None:
                fields[name] = getattr(self.defaults, name)
        for name, flag in (("device", "--device D"), ("precision", "--precision P")):
            if fields.get(name) is None:
                self.problem(draft.line, f"the file does not name the {name}: give {flag}")
        if "concurrency" in fields and "batch" in fields:
            self.problem(
                draft.line,
                f"concurrency {fields['concurrency']} and batch {fields['batch']}: a run keeps"
                " requests in flight (concurrency) or serves a static batch, not both",
            )
        if not any(name in fields for name in _FIGURES):
            self.problem(
                draft.line,
                "no figure: a serving result gives a time to first token, an inter-token"
                " latency, an output rate, a per-user rate or an energy",
            )
        fields.setdefault("source", self.source)
        if "quote" not in fields:
            fields["quote"] = _cut(quote, MAX_QUOTE)
        if draft.assumed:
            order = _schema()[1]
            given = list(fields.get("assumed") or [])
            fields["assumed"] = [a for a in order if a in given or a in draft.assumed]
        if draft.notes:
            note = _SEPARATOR.join([*draft.notes, *([fields["note"]] if "note" in fields else [])])
            fields["note"] = _cut(note, MAX_TEXT)
        order = _schema()[0]
        return {k: fields[k] for k in order if fields.get(k) is not None}

    # -- vLLM --------------------------------------------------------------------------

    def vllm(self, data: bytes) -> list[dict[str, Any]]:
        text = self.decoded(data)
        if text is None:
            return []
        try:
            objects = list(_json_objects(text))
        except _JsonProblem as exc:
            line, col = _position(text, exc.offset)
            self.problem(line, exc.message, col)
            return []
        if not objects:
            self.problem(1, "the file is empty: expected a vLLM result (a JSON object)")
            return []
        if len(objects) > MAX_ENTRIES:
            line, _ = _position(text, objects[MAX_ENTRIES][0])
            self.problem(
                line,
                f"more than {MAX_ENTRIES} results: a model's measured list holds at most"
                f" {MAX_ENTRIES}",
            )
            return []
        out = []
        for start, members in objects:
            entry = self.vllm_entry(text, start, members)
            if entry is not None:
                out.append(entry)
        return out

    def decoded(self, data: bytes) -> str | None:
        try:
            return data.decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            before = data[: exc.start].rsplit(b"\n", 1)[-1]
            col = len(before.decode("utf-8", "replace")) + 1
            self.problem(line, f"not UTF-8 text ({exc.reason})", col)
            return None

    def vllm_entry(
        self, text: str, start: int, members: dict[str, _Member]
    ) -> dict[str, Any] | None:
        before = len(self.problems)
        line, _ = _position(text, start)
        draft = _Draft(line)

        def where(key: str) -> tuple[int, int | None]:
            member = members.get(key)
            return _position(text, member.at) if member is not None else (line, None)

        def value(key: str) -> Fraction | None:
            """The number of `key`; None when it is absent or null (or not a number, with
            a problem)."""
            member = members.get(key)
            if member is None or member.value is None:
                return None
            if not isinstance(member.value, _Num):
                self.problem_at(where(key), f'"{key}" is {_json_kind(member.value)}, not a number')
                return None
            try:
                return number(member.value)
            except NumberError as exc:
                at = where(key)
                col = None if at[1] is None else at[1] + exc.offset
                self.problem(at[0], f'"{key}" {shown(member.value)} {exc.message}', col)
                return None

        def whole(key: str, most: int, what: str) -> int | None:
            got = value(key)
            if got is None:
                return None
            if got.denominator != 1 or not 1 <= got <= most:
                self.problem_at(
                    where(key),
                    f'"{key}" {_short(got)} is not {what}: a whole number from 1 to {most:,}',
                )
                return None
            return int(got)

        if "completed" not in members:
            self.problem(
                line,
                'not a vLLM benchmark_serving result: it has no "completed" key (import'
                " serving reads the JSON that --save-result writes; for genai-perf, its"
                " profile_export_genai_perf.csv)",
            )
            return None
        completed = whole("completed", MAX_WHOLE, "a request count")
        if completed is None:
            return None
        failed = value("failed")
        if failed:
            draft.notes.append(f"{_short(failed)} request(s) failed")
        ok = _succeeded(members)
        for name in ("input", "output"):
            found = self.json_lengths(text, members, name, completed, ok)
            if found is not None:
                self.lengths(draft, name, found)
        self.settle(
            draft,
            "concurrency",
            whole("max_concurrency", MAX_WHOLE, "a concurrency"),
            where("max_concurrency"),
            '"max_concurrency"',
        )
        rate = members.get("request_rate")
        if rate is not None and isinstance(rate.value, _Num) and rate.value != "Infinity":
            per = value("request_rate")
            if per is not None:
                draft.notes.append(f"requests sent at {_short(per)} a second (request_rate)")
        self.vllm_engine(draft, members, where)
        quoted: list[tuple[int, str]] = []
        for name, keys in (
            ("ttft", ("mean_ttft_ms",)),
            ("itl", ("mean_itl_ms", "mean_tpot_ms")),
            ("output_rate", ("output_throughput",)),
        ):
            for key in keys:
                member = members.get(key)
                if member is None or member.value is None:
                    continue
                if not isinstance(member.value, _Num):
                    value(key)  # the problem
                    break
                unit = "tokens/s" if name == "output_rate" else "ms"
                if self.figure(
                    draft, name, member.value, unit, where(key), f'"{key}"', zero_absent=True
                ):
                    # A pretty-printed member's line break and indent read as one space.
                    quoted.append((member.start, " ".join(text[member.start : member.end].split())))
                    break
        model_id = members.get("model_id")
        said = model_id.value if model_id is not None else None
        if (
            isinstance(said, str)
            and said
            and self.text('"model_id"', said, 200, where("model_id"), verbatim=False)
        ):
            draft.notes.insert(0, f"benchmark of {said}")
        if len(self.problems) > before:
            return None
        # The members in the file's order, joined as JSON joins them.
        return self.finish(draft, ", ".join(member for _, member in sorted(quoted)))

    def vllm_engine(
        self,
        draft: _Draft,
        members: dict[str, _Member],
        where: Callable[[str], tuple[int, int | None]],
    ) -> None:
        """The engine: `--engine`, else vLLM and the file's `vllm_version` (given as
        `--metadata vllm_version=0.6.3`), else the backend's engine."""
        version = members.get("vllm_version")
        if version is not None and version.value is not None:
            said = version.value
            if not isinstance(said, str) or not said.strip():
                self.problem_at(where("vllm_version"), '"vllm_version" is not a version text')
                return
            if not self.text('"vllm_version"', said, 100, where("vllm_version"), verbatim=False):
                return
            self.settle(
                draft, "engine", f"vLLM {said.strip()}", where("vllm_version"), "the engine"
            )
            return
        if self.defaults.engine is not None:
            return  # `finish` puts the flag's in
        backend = members.get("backend")
        name = backend.value if backend is not None and isinstance(backend.value, str) else ""
        draft.fields["engine"] = _BACKENDS.get(name, "vLLM")

    def json_lengths(
        self,
        text: str,
        members: dict[str, _Member],
        name: str,
        completed: int,
        ok: list[int] | None,
    ) -> _Lengths | None:
        """What a vLLM result says of the requests' `name` tokens; None (a problem said)
        when it is not what vLLM writes."""
        key, total_key = f"{name}_lens", f"total_{name}_tokens"
        found = _Lengths(what=f" (no {key}: run the benchmark with --save-detailed)")
        total = members.get(total_key)
        if total is not None:
            found.where = _position(text, total.at)
            if isinstance(total.value, _Num):
                try:
                    got = number(total.value)
                except NumberError as exc:
                    line, col = found.where
                    col = None if col is None else col + exc.offset
                    self.problem(line, f'"{total_key}" {shown(total.value)} {exc.message}', col)
                    return None
                if got is not None:
                    found.mean = got / completed
        member = members.get(key)
        if member is None or member.value is None:
            return found
        found.where = _position(text, member.at)
        found.what = f'"{key}"'
        items = member.value
        if not isinstance(items, list) or not items:
            self.problem_at(found.where, f'"{key}" is not a list of token counts')
            return None
        picked = items
        if ok and len(items) > max(ok):  # the requests that succeeded
            picked = [items[i] for i in ok]
        lens: list[Fraction] = []
        for item in picked:
            got = None
            if isinstance(item, _Num):
                try:
                    got = number(item)
                except NumberError:
                    got = None
            if got is None or got.denominator != 1:
                self.problem_at(
                    found.where,
                    f'"{key}" holds {shown(str(item))}, not a whole number of tokens',
                )
                return None
            lens.append(got)
        low, high = min(lens), max(lens)
        if low == high:
            if not 1 <= low <= MAX_TOKENS:
                self.problem_at(
                    found.where,
                    f'"{key}": {_short(low)} tokens a request, not a token count from 1 to'
                    f" {MAX_TOKENS:,}",
                )
                return None
            found.stated = int(low)
            return found
        found.low, found.high = low, high
        if found.mean is None:
            found.mean = sum(lens, Fraction(0)) / len(lens)
        return found

    # -- genai-perf ---------------------------------------------------------------------

    def genai_perf(self, data: bytes) -> list[dict[str, Any]]:
        lines = Lines(io.BytesIO(data), self.path)
        rows: dict[str, tuple[int, str, list[str], dict[str, int]]] = {}
        header: list[str] | None = None
        first = True
        try:
            for line, raw, cells in _csv_lines(lines):
                names = [c.strip() for c in cells]
                if not any(names):
                    header = None
                    continue
                if first and names[0] != "Metric":
                    self.problem(
                        line,
                        "not genai-perf's CSV: its first line is the header Metric, avg, min,"
                        " max, p99, ...",
                        1,
                    )
                    return []
                if names[0] == "Metric":
                    header = names
                    if first and "avg" not in names:
                        self.problem(
                            line,
                            "missing column 'avg': a genai-perf table's header is Metric, avg,"
                            " min, max, p99, ...",
                        )
                        return []
                    first = False
                    continue
                if header is None:
                    self.problem(
                        line,
                        f"a line outside a table: expected a header line Metric, ... before"
                        f" {shown(names[0])}",
                    )
                    continue
                base = _metric_base(names[0])
                if base not in _GENAI_METRICS:
                    continue
                if len(cells) != len(header):
                    self.problem(
                        line,
                        f"expected {len(header)} cells, found {len(cells)} (a line cut short?)",
                    )
                    continue
                if base in rows:
                    self.problem(
                        line,
                        f"{shown(names[0])} appears twice, on lines {rows[base][0]} and {line}:"
                        " import one run's file",
                    )
                    continue
                rows[base] = (line, raw, cells, {n: i for i, n in enumerate(header)})
        except csv.Error as exc:
            self.problem(lines.count or 1, f"not a CSV file: {exc}")
            return []
        if first:
            self.problem(1, "the file is empty: expected genai-perf's table, Metric, avg, ...")
            return []
        before = len(self.problems)
        draft = _Draft(1)
        quoted: list[tuple[int, str]] = []
        for base, (name, dimension) in _GENAI_METRICS.items():
            if base not in rows or name in ("input", "output"):
                continue
            line, raw, cells, columns = rows[base]
            column = "avg" if "avg" in columns else "Value"
            if column not in columns:
                self.problem(line, f"{shown(cells[0])} has no avg or Value column")
                continue
            i = columns[column]
            unit = _genai_unit(cells[0].strip(), dimension)
            if unit is None:
                self.problem(
                    line, f"{shown(cells[0].strip())}: a unit import serving does not read", 1
                )
                continue
            if cells[i].strip() in ("", "N/A"):
                continue
            at = (line, _cell_column(raw, i))
            label = f"{cells[0].strip()} {column}"
            if self.figure(draft, name, cells[i], unit, at, label, "thousands", zero_absent=True):
                quoted.append((line, raw.rstrip("\r\n")))
        for name, base in (
            ("input", "Input Sequence Length"),
            ("output", "Output Sequence Length"),
        ):
            found = self.genai_lengths(rows.get(base), base)
            if found is not None:
                self.lengths(draft, name, found)
        if self.defaults.concurrency is None and self.defaults.batch is None:
            self.problem(
                1,
                "genai-perf's CSV does not say the load: give --concurrency N as the run's"
                " (genai-perf's --concurrency, 1 by default)",
            )
        if self.defaults.engine is None:
            self.problem(
                1,
                "genai-perf does not name the serving engine: give --engine TEXT, such as"
                " 'vLLM 0.6.3' or 'NVIDIA NIM 1.8.0'",
            )
        if len(self.problems) > before:
            return []
        quote = _SEPARATOR.join(raw for _, raw in sorted(quoted))
        return [self.finish(draft, quote)]

    def genai_lengths(
        self, row: tuple[int, str, list[str], dict[str, int]] | None, base: str
    ) -> _Lengths | None:
        """What genai-perf's row `base` says of the requests' lengths; None (a problem
        said) when a cell is not a number."""
        if row is None:
            return _Lengths(what=f" (no {base} row)")
        line, raw, cells, columns = row
        found = _Lengths(where=(line, 1), what=f"{base}, min and max")
        got: dict[str, Fraction] = {}
        for column in ("avg", "min", "max"):
            if column not in columns:
                continue
            i = columns[column]
            try:
                value = number(cells[i], "thousands")
            except NumberError as exc:
                col = _cell_column(raw, i)
                self.problem(
                    line,
                    f"{base} {column} {shown(cells[i])} {exc.message}",
                    None if col is None else col + exc.offset,
                )
                return None
            if value is not None:
                got[column] = value
        low, high = got.get("min"), got.get("max")
        found.mean = got.get("avg")
        if low is not None and high is not None and low == high:
            if low.denominator != 1 or not 1 <= low <= MAX_TOKENS:
                self.problem(
                    line,
                    f"{base} {_short(low)} is not a token count: a whole number from 1 to"
                    f" {MAX_TOKENS:,}",
                    _cell_column(raw, columns["min"]),
                )
                return None
            found.stated = int(low)
        elif low is not None and high is not None:
            found.low, found.high = low, high
        return found

    # -- plain CSV ---------------------------------------------------------------------

    def plain(self, data: bytes) -> list[dict[str, Any]]:
        lines = Lines(io.BytesIO(data), self.path)
        reader = csv.reader(lines)
        out: list[dict[str, Any]] = []
        try:
            header = next(reader, None)
            if header is None:
                self.problem(1, "the file is empty: expected a header line")
                return []
            names = [h.strip() for h in header]
            if not self.plain_header(names, lines):
                return []
            for line, cells in table_rows(self.path, reader, len(names), self.problems):
                if len(out) == MAX_ENTRIES:
                    self.problem(
                        line,
                        f"more than {MAX_ENTRIES} results: a model's measured list holds at"
                        f" most {MAX_ENTRIES}",
                    )
                    break
                raw = lines.last.rstrip("\r\n")
                entry = self.plain_row(line, raw, names, cells)
                if entry is not None:
                    out.append(entry)
        except csv.Error as exc:
            self.problem(reader.line_num or 1, f"not a CSV file: {exc}")
        return out

    def plain_header(self, names: list[str], lines: Lines) -> bool:
        before = len(self.problems)
        listed = ", ".join(CSV_COLUMNS)
        seen: dict[str, int] = {}
        for i, name in enumerate(names):
            if name not in CSV_COLUMNS:
                self.problem(
                    1, f"unknown column {shown(name)} (columns: {listed})", lines.column(i)
                )
            elif name in seen:
                self.problem(
                    1,
                    f"column '{name}' appears twice, as columns {seen[name] + 1} and {i + 1}:"
                    " keep one",
                    lines.column(i),
                )
            seen.setdefault(name, i)
        for name in ("device", "precision", "input", "output", "engine"):
            if name not in seen and getattr(self.defaults, name) is None:
                flag = {"device": "D", "precision": "P", "engine": "TEXT"}.get(name, "N")
                self.problem(1, f"missing column '{name}' (or give --{name} {flag})")
        if not any(_FIGURES[f][1] in seen for f in _FIGURES):
            figures = ", ".join(_FIGURES[f][1] for f in _FIGURES)
            self.problem(1, f"no figure column: give one of {figures}")
        return len(self.problems) == before

    def plain_row(
        self, line: int, raw: str, names: list[str], cells: list[str]
    ) -> dict[str, Any] | None:
        before = len(self.problems)
        record = {n: c for n, c in zip(names, cells, strict=True)}
        starts: list[int] | None = _cell_starts(raw)
        if starts is not None and len(starts) != len(cells):
            starts = None  # a cell over two lines: the line alone is known
        draft = _Draft(line)

        def at(column: str, offset: int = 0) -> tuple[int, int | None]:
            if starts is None:
                return line, None
            return line, starts[names.index(column)] + offset

        for column, cell in record.items():
            text = cell.strip()
            if not text:
                continue
            if column in _IDS:
                if not _ID.fullmatch(text):
                    self.problem_at(
                        at(column),
                        f"{column} {shown(text)} is not an id: lower-case letters, digits and"
                        " hyphens",
                    )
                    continue
                if column == "source":
                    draft.fields["source"] = text
                else:
                    self.settle(draft, column, text, at(column), column)
            elif column in _WHOLES:
                most, what = _WHOLES[column]
                got = self.plain_whole(column, text, most, what, at(column))
                if got is not None:
                    self.settle(draft, column, got, at(column), column)
            elif column == "speculation_k":
                got = self.plain_whole(column, text, MAX_DRAFT, "a draft's token count", at(column))
                if got is not None:
                    draft.fields["speculation"] = {"k": got}
            elif column == "assumed":
                draft.fields["assumed"] = self.plain_assumed(text, at(column))
            elif column in _TEXTS:
                if not self.text(column, text, _TEXTS[column], at(column)):
                    continue
                if column in _FLAGGED:
                    self.settle(draft, column, text, at(column), column)
                else:
                    draft.fields[column] = text
            elif column in _FIGURE_COLUMNS:
                figure = _FIGURE_COLUMNS[column]
                self.figure(
                    draft,
                    figure,
                    text,
                    _FIGURES[figure][2],
                    at(column),
                    column,
                    self.defaults.commas,
                )
        for name in ("input", "output", "engine"):
            if not record.get(name, "").strip() and getattr(self.defaults, name) is None:
                self.problem(line, f"the {name} is empty (or give --{name})", at(name)[1])
        if "speculation" in draft.fields and "technique" not in draft.fields:
            self.problem(
                line,
                "a draft (speculation_k) belongs to a technique: name it in the technique column",
                at("speculation_k")[1],
            )
        self.plain_ids(draft, line, at)
        if len(self.problems) > before:
            return None
        if "quote" not in draft.fields and not self.text("the line", raw, 10**9, (line, None)):
            return None
        return self.finish(draft, raw)

    def plain_whole(
        self, column: str, text: str, most: int, what: str, where: tuple[int, int | None]
    ) -> int | None:
        try:
            got = number(text, self.defaults.commas)
        except NumberError as exc:
            col = None if where[1] is None else where[1] + exc.offset
            self.problem(where[0], f"{column} {shown(text)} {exc.message}", col)
            return None
        if got is None or got.denominator != 1 or not 1 <= got <= most:
            self.problem(
                where[0],
                f"{column} {shown(text)} is not {what}: a whole number from 1 to {most:,}",
                where[1],
            )
            return None
        return int(got)

    def plain_assumed(self, text: str, where: tuple[int, int | None]) -> list[str] | None:
        allowed = _schema()[1]
        out: list[str] = []
        for part in text.split(";"):
            name = part.strip()
            if name not in allowed:
                self.problem(
                    where[0],
                    f"assumed {shown(name)} is not a field an entry may assume"
                    f" ({', '.join(allowed)}; separated by ';')",
                    where[1],
                )
                return None
            if name in out:
                self.problem(where[0], f"assumed names {shown(name)} twice", where[1])
                return None
            out.append(name)
        return out

    def plain_ids(
        self, draft: _Draft, line: int, at: Callable[[str], tuple[int, int | None]]
    ) -> None:
        """The ids a line names, checked against the catalog (and the model's sources);
        the command line's are the caller's to check."""
        if self.catalog is None:
            return
        known: dict[str, tuple[Collection[str], str]] = {
            "device": (self.catalog.devices, "device"),
            "precision": (self.catalog.precisions, "precision"),
            "kv": (self.catalog.precisions, "precision"),
        }
        for column, (table, what) in known.items():
            value = draft.fields.get(column)
            if value is None or value == getattr(self.defaults, column) or value in table:
                continue
            self.problem_at(at(column), f"{column} {shown(value)}: no such {what} in the catalog")
        source = draft.fields.get("source")
        model = self.catalog.models.get(self.defaults.model)
        if model is None or source in (None, self.source) or source in model.sources:
            return
        self.problem_at(
            at("source"),
            f"source {shown(source)} is not a source of model '{model.id}' (its sources:"
            f" {', '.join(model.sources) or 'none'}); leave the cell empty to cite this"
            f" import's ({self.source})",
        )


# genai-perf's metrics read, by name without the unit: the field and its dimension.
_GENAI_METRICS: dict[str, tuple[str, Dimension | None]] = {
    "Time To First Token": ("ttft", Dimension.TIME),
    "Inter Token Latency": ("itl", Dimension.TIME),
    "Output Token Throughput": ("output_rate", Dimension.TOKEN_RATE),
    "Output Token Throughput Per User": ("user_rate", Dimension.TOKEN_RATE),
    "Input Sequence Length": ("input", None),
    "Output Sequence Length": ("output", None),
}
_GENAI_TIME_UNITS = {"ms": "ms", "s": "s", "sec": "s", "us": "µs", "µs": "µs", "ns": "ns"}
_GENAI_RATE_UNITS = frozenset({"per sec", "tokens/sec", "tokens/sec/user", "tokens/s"})

# The engine each benchmark_serving backend speaks to; OpenAI-compatible ones are vLLM's.
_BACKENDS = {
    "tgi": "TGI",
    "lmdeploy": "LMDeploy",
    "deepspeed-mii": "DeepSpeed-MII",
    "tensorrt-llm": "TensorRT-LLM",
    "scalellm": "ScaleLLM",
    "sglang": "SGLang",
}


def _succeeded(members: dict[str, _Member]) -> list[int] | None:
    """The indices of a vLLM result's requests that succeeded (an output length above
    zero: a failed one's is 0), where `output_lens` lists them; None when it does not."""
    member = members.get("output_lens")
    if member is None or not isinstance(member.value, list):
        return None
    out = []
    for i, item in enumerate(member.value):
        if isinstance(item, _Num):
            try:
                got = number(item)
            except NumberError:
                continue
            if got:
                out.append(i)
    return out


def _metric_base(name: str) -> str:
    """'Time To First Token (ms)' -> 'Time To First Token'."""
    if name.endswith(")") and " (" in name:
        return name[: name.rindex(" (")]
    return name


def _genai_unit(name: str, dimension: Dimension | None) -> str | None:
    """The unit a figure of metric `name` is written in, or None when it is not one read."""
    unit = name[name.rindex(" (") + 2 : -1] if name.endswith(")") and " (" in name else ""
    if dimension is Dimension.TIME:
        return _GENAI_TIME_UNITS.get(unit)
    if dimension is Dimension.TOKEN_RATE:
        return "tokens/s" if unit in _GENAI_RATE_UNITS else None
    return None


def _csv_lines(lines: Lines) -> Iterator[tuple[int, str, list[str]]]:
    """Each line of a CSV file as (line number, its text, its cells)."""
    for text in lines:
        cells = next(csv.reader([text]), [])
        yield lines.count, text, cells


def _cell_starts(raw: str) -> list[int]:
    """The 1-based column where each cell of one CSV line starts, inside its quotes."""
    starts = [1]
    quoted = False
    for i, char in enumerate(raw):
        if char == '"':
            quoted = not quoted
        elif char == "," and not quoted:
            starts.append(i + 2)
    return [s + (1 if raw[s - 1 : s] == '"' else 0) for s in starts]


def _cell_column(raw: str, index: int) -> int | None:
    starts = _cell_starts(raw)
    return starts[index] if index < len(starts) else None


def _control(text: str) -> int | None:
    """The index of the first control character of `text` (line and paragraph
    separators and bidirectional overrides included), or None."""
    for i, char in enumerate(text):
        if char in _BIDI or unicodedata.category(char) in ("Cc", "Cs", "Zl", "Zp"):
            return i
    return None


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short(value: Fraction | None) -> str:
    """A count or mean as a message shows it: exact when short, else to 6 digits."""
    if value is None:
        return "?"
    text = exact_decimal(value)
    if text is not None and len(text) <= 12:
        return text
    return f"{float(value):.6g}"


def _json_kind(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"the text {shown(value)}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "null"


def _position(text: str, offset: int) -> tuple[int, int | None]:
    """The 1-based line and column of `offset` in `text`."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


class _JsonProblem(Exception):
    def __init__(self, offset: int, message: str) -> None:
        super().__init__(message)
        self.offset = offset
        self.message = message


def _skip(text: str, pos: int) -> int:
    """After the JSON white space at `pos`."""
    while pos < len(text) and text[pos] in " \t\n\r":
        pos += 1
    return pos


_DECODER = json.JSONDecoder(parse_float=_Num, parse_int=_Num, parse_constant=_Num)


def _json_value(text: str, at: int) -> tuple[Any, int]:
    try:
        return _DECODER.raw_decode(text, at)
    except json.JSONDecodeError as exc:
        raise _JsonProblem(exc.pos, f"not JSON: {exc.msg}") from None
    except RecursionError:
        raise _JsonProblem(at, "not JSON that can be read: nested too deeply") from None


def _json_objects(text: str) -> Iterator[tuple[int, dict[str, _Member]]]:
    """Each top-level object of `text` (one, or one a line as `--append-result` writes),
    with where each of its members is: a figure's problem points at its value, and its
    quote is the file's own text."""
    pos = _skip(text, 0)
    while pos < len(text):
        if text[pos] != "{":
            value, _ = _json_value(text, pos)  # not JSON at all: say where
            raise _JsonProblem(
                pos,
                f"not a JSON object but {_json_kind(value)}: a vLLM result is one object of keys",
            )
        start = pos
        members: dict[str, _Member] = {}
        pos = _skip(text, pos + 1)
        if text.startswith("}", pos):
            pos += 1
        else:
            while True:
                if not text.startswith('"', pos):
                    raise _JsonProblem(pos, "not JSON: expected a key in double quotes")
                key_at = pos
                key, pos = _json_value(text, pos)
                pos = _skip(text, pos)
                if not text.startswith(":", pos):
                    raise _JsonProblem(pos, "not JSON: expected ':' after a key")
                pos = _skip(text, pos + 1)
                at = pos
                value, pos = _json_value(text, pos)
                if key in members:
                    raise _JsonProblem(
                        key_at, f"key {shown(key)} appears twice: which one is the run's?"
                    )
                members[key] = _Member(value, key_at, at, pos)
                pos = _skip(text, pos)
                if text.startswith(",", pos):
                    pos = _skip(text, pos + 1)
                    continue
                if text.startswith("}", pos):
                    pos += 1
                    break
                raise _JsonProblem(pos, "not JSON: expected ',' or '}' after a value")
        yield start, members
        pos = _skip(text, pos)


# ---------------------------------------------------------------------- printing


def _flow(entry: dict[str, Any]) -> CommentedMap:
    """An entry as the flow mapping a model's `measured` list holds, one line."""
    item = CommentedMap()
    for key, value in entry.items():
        if isinstance(value, dict):
            value = CommentedMap(value)
            value.fa.set_flow_style()
        elif isinstance(value, list):
            value = CommentedSeq(value)
            value.fa.set_flow_style()
        item[key] = value
    item.fa.set_flow_style()
    return item


def render_serving(entries: list[dict[str, Any]], source: tuple[str, dict[str, Any]] | None) -> str:
    """The entries as the YAML of a model spec: a `measured:` list of one flow mapping
    each and, when `source` is given (a new source), a `sources:` map of it."""
    doc = CommentedMap()
    doc["measured"] = CommentedSeq(_flow(e) for e in entries)
    if source is not None:
        sid, fields = source
        doc["sources"] = CommentedMap({sid: CommentedMap(fields)})
    buffer = io.StringIO()
    yaml().dump(doc, buffer)
    return buffer.getvalue()


# ---------------------------------------------------------------------- writing

# What makes two serving results the same run: a result imported again replaces its entry.
_SAME = ("device", "chips", "tp", "pp", "ep", "precision", "kv", "input", "output",
         "concurrency", "batch", "technique", "source")  # fmt: skip


def write_serving(
    catalog: Catalog,
    folder: Path,
    model_id: str,
    entries: list[dict[str, Any]],
    source: tuple[str, dict[str, Any]] | None,
) -> list[Path]:
    """Add `entries` to model `model_id`'s `measured` list (made before `sources:` when
    the spec has none) and `source`, when given, to its sources, in place; the files
    changed. An entry of the same run and source is replaced; a different source of the
    same id is refused, never replaced. The edited spec is built first (`write.verify`)
    and replaced whole or not at all (`write.commit`): `RooflinecError`, nothing written.
    """
    from rooflinec.importing.write import commit, verify

    path = Path(catalog.models[model_id].document.file)
    text = _edited_model(path, entries, source)
    verify(folder, {path: text})
    commit(folder, {Path(os.path.realpath(path)): text})
    return [path]


def _edited_model(
    path: Path, entries: list[dict[str, Any]], source: tuple[str, dict[str, Any]] | None
) -> str:
    from rooflinec.importing.write import _same_source, round_trip

    read = round_trip(path)
    data = read.data
    measured = data.get("measured")
    if isinstance(measured, CommentedSeq) and not measured and measured.fa.flow_style():
        measured.fa.set_block_style()  # `measured: []`: one entry a line, as the specs have
    if measured is None:
        measured = CommentedSeq()
        if "measured" in data:
            data["measured"] = measured
        else:
            keys = list(data)
            data.insert(
                keys.index("sources") if "sources" in keys else len(keys), "measured", measured
            )
            if "sources" in keys:  # a blank line between the list and the sources
                data.yaml_set_comment_before_after_key("sources", before="\n")
    for entry in entries:
        item = _flow(entry)
        key = tuple(entry.get(k) for k in _SAME)
        same = [
            i
            for i, m in enumerate(measured)
            if isinstance(m, dict)
            and ("input" in m or "output" in m)
            and tuple(m.get(k) for k in _SAME) == key
        ]
        if same:  # importing the same run again replaces its entry
            measured[same[0]] = item
        else:
            _append(measured, item)
    if source is not None:
        sid, fields = source
        sources = data.get("sources")
        if sources is None:
            sources = data["sources"] = CommentedMap()
        if sid in sources:
            _same_source(path, sources, sid, fields)
        else:
            last = sources[list(sources)[-1]] if sources else None
            sources[sid] = CommentedMap(fields)
            _move_blank_lines(last, sources[sid])
    return read.text()


def _move_blank_lines(before: Any, after: CommentedMap) -> None:
    """Move the blank lines that follow mapping `before`'s last line (before the next
    key) to follow `after`, just added after it: the file keeps its spacing."""
    node = before
    while isinstance(node, CommentedMap) and len(node):
        key = list(node)[-1]
        entry = node.ca.items.get(key)
        token = entry[2] if entry and len(entry) > 2 else None
        if isinstance(token, CommentToken) and not token.value.strip():
            entry[2] = None
            last = list(after)[-1]
            after.ca.items.setdefault(last, [None, None, None, None])[2] = token
            return
        node = node[key]


def _append(seq: CommentedSeq, item: CommentedMap) -> None:
    """Append `item` to a block sequence, moving what follows the last item (the blank
    line before the next key) after the new one."""
    last = len(seq) - 1
    seq.append(item)
    if last >= 0 and last in seq.ca.items:
        seq.ca.items[last + 1] = seq.ca.items.pop(last)
