"""Read one YAML spec file into plain data with the position of every key and value.

The loader is strict on purpose: specs arrive in pull requests from anyone, so
anything that could surprise a reader or a walker is refused at its position:
tags (`!!python/...`), anchors and aliases (billion laughs), tabs, duplicate keys,
deep nesting, huge files, directives (`%YAML 1.1` changes how other tools read the
file), integers with leading zeros (`040` is 32 to YAML 1.1 tools), and the line
breaks YAML knows but editors do not (U+0085, U+2028, U+2029). Scalars are resolved
by YAML 1.2 core rules; dates stay ISO strings; decimals become exact `Fraction`s
(never floats). Lines are counted as editors and the parser both count them: after
`\r\n`, a lone `\r` or `\n`.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from rooflinec.errors import Diagnostic, Location, SpecError, json_path

MAX_BYTES = 1_000_000
MAX_DEPTH = 24
MAX_NODES = 10_000_000

PathKey = tuple[str | int, ...]
Segments = tuple[tuple[int, int, str], ...]
"""A multi-line scalar's source: (line, column, text) of each of its lines."""


@dataclass(frozen=True)
class Document:
    """A loaded spec file: its data and where each piece of it stands in the file."""

    file: str
    data: dict[str, Any]
    values: Mapping[PathKey, tuple[int, int]] = field(repr=False)
    keys: Mapping[PathKey, tuple[int, int]] = field(repr=False)
    multiline: Mapping[PathKey, tuple[str, Segments]] = field(default_factory=dict, repr=False)
    """Each scalar written over several lines: its value and the lines it came from."""
    signature: tuple[str, str | None, int, int] | None = field(default=None, repr=False)
    """(path, display name, size, change time) when a `DocumentCache` loaded it: the same
    signature is the same text, so checks of it can be remembered (`schema.validate`)."""

    def locate(self, path: PathKey, *, key: bool = False, offset: int = 0) -> Location:
        """Location of the value (or key) at `path`; the nearest ancestor if unknown.

        `offset` is a character of the value: a formula error at character 7. On a
        one-line value it is added to the column; in a value written over several lines
        (a `|` block) it is found on its own line.
        """
        table = self.keys if key else self.values
        probe = tuple(path)
        while True:
            if probe in table:
                line, col = table[probe]
                if probe != tuple(path) or not offset:
                    return Location(self.file, line, col)
                if not key and probe in self.multiline:
                    value, segments = self.multiline[probe]
                    line, col = _source_position(value, segments, offset)
                    return Location(self.file, line, col)
                return Location(self.file, line, col + offset)
            if probe in self.values:
                line, col = self.values[probe]
                return Location(self.file, line, col)
            if not probe:
                return Location(self.file, 1, 1)
            probe = probe[:-1]

    def error(
        self,
        path: PathKey,
        message: str,
        *,
        key: bool = False,
        offset: int = 0,
        severity: str = "error",
        code: str = "spec",
    ) -> Diagnostic:
        """A diagnostic pointing at `path` in this document."""
        return Diagnostic(
            self.locate(path, key=key, offset=offset),
            message,
            json_path(path),
            "warning" if severity == "warning" else "error",
            code,
        )


def _source_position(value: str, segments: Segments, offset: int) -> tuple[int, int]:
    """Line and column in the file of character `offset` of a multi-line scalar.

    Folding, indentation and chomping change only white space, so the n-th character
    of the value that is not white space is the n-th such character of its source
    lines. An offset at white space points at the next character that is not.
    """
    wanted = sum(1 for c in value[:offset] if not c.isspace())
    for line, col, text in segments:
        for index, char in enumerate(text):
            if char.isspace():
                continue
            if wanted == 0:
                return line, col + index
            wanted -= 1
    line, col, text = segments[-1]
    return line, col + len(text.rstrip())


def _diag(file: str, line: int, col: int, message: str) -> SpecError:
    return SpecError([Diagnostic(Location(file, line, col), message, code="yaml")])


_INT = re.compile(r"^[-+]?[0-9]+$")
_LEADING_ZERO = re.compile(r"^[-+]?0[0-9]")
_DECIMAL = re.compile(r"^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]{1,2})?$")
_SPECIAL_FLOAT = re.compile(r"^[-+]?\.(?:inf|Inf|INF)$|^\.(?:nan|NaN|NAN)$")
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_NULL = {"", "~", "null", "Null", "NULL"}
# Characters no spec text needs and that can hide or reorder what a reviewer reads:
# C0/C1 controls (tab and newline excepted), DEL, the line and paragraph separators
# (as escapes: raw, they are refused before parsing), and the Unicode bidirectional
# overrides and isolates ("Trojan Source").
_HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]"
)
_MAX_DIGITS = 30
# Line breaks to YAML (1.1, which libyaml and ruamel's scanner follow) that editors,
# `grep -n` and GitHub do not break at: every position after one would be off.
_YAML_ONLY_BREAKS = re.compile("[\x85\u2028\u2029]")
_BREAK_NAMES = {"\x85": "NEL", "\u2028": "LINE SEPARATOR", "\u2029": "PARAGRAPH SEPARATOR"}
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_BYTE_LINE_BREAK = re.compile(rb"\r\n|\r|\n")


def load_file(path: Path, display: str | None = None) -> Document:
    """Load `path`; raise `SpecError` with the position of the first problem."""
    name = display or str(path)
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            message = f"file is {size} bytes; specs are limited to {MAX_BYTES} bytes"
            raise _diag(name, 1, 1, message)
        raw = path.read_bytes()
    except OSError as exc:
        raise _diag(name, 1, 1, f"cannot read file: {exc.strerror}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = _byte_position(raw, exc.start)
        raise _diag(
            name, line, col, f"file is not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from exc
    return load_text(text, name)


def _byte_position(raw: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column of byte `offset` (columns counted in bytes)."""
    line, line_start = 1, 0
    for match in _BYTE_LINE_BREAK.finditer(raw, 0, offset):
        line, line_start = line + 1, match.end()
    return line, offset - line_start + 1


def _text_position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of character `offset` of `text`."""
    offset = max(0, min(offset, len(text)))
    line, line_start = 1, 0
    for match in _LINE_BREAK.finditer(text, 0, offset):
        if match.end() > offset:  # between the two characters of a \r\n
            break
        line, line_start = line + 1, match.end()
    return line, offset - line_start + 1


def _lines(text: str) -> list[str]:
    """The lines of `text` as an editor shows them (`str.splitlines` breaks at more)."""
    return _LINE_BREAK.split(text)


Loader = Callable[[Path, str | None], Document]


class DocumentCache:
    """Loads each file again only when its size or change time differs from the last load.

    For long-lived processes (`serve`): an edit to one spec parses one file. Each call
    returns a copy of the cached data, since the catalog builder owns what it is given.
    Only the files of the latest round (`begin` .. `load` ..) stay cached.
    """

    def __init__(self) -> None:
        self._documents: dict[tuple[str, str | None], tuple[tuple[int, int], Document]] = {}
        self._used: dict[tuple[str, str | None], tuple[tuple[int, int], Document]] = {}

    def begin(self) -> None:
        """Start a round: files not loaded in it are dropped when it is committed."""
        self._used = {}

    def commit(self) -> None:
        self._documents = self._used

    def load(self, path: Path, display: str | None = None) -> Document:
        key = (str(path), display)
        try:
            stat = path.stat()
        except OSError:
            return load_file(path, display)
        signature = (stat.st_size, stat.st_mtime_ns)
        hit = self._documents.get(key)
        if hit is None or hit[0] != signature:
            loaded = load_file(path, display)  # a failed load raises, uncached
            hit = (signature, dataclasses.replace(loaded, signature=(*key, *signature)))
        self._used[key] = hit
        return dataclasses.replace(hit[1], data=_copy_tree(hit[1].data))


def _copy_tree(node: Any) -> Any:
    """A copy of loaded data: its containers are dicts and lists, everything else an
    immutable scalar (str, int, Fraction, bool, None), so this equals `copy.deepcopy` at a
    fraction of its time (serve copies every spec on each rebuild)."""
    if type(node) is dict:
        return {key: _copy_tree(value) for key, value in node.items()}
    if type(node) is list:
        return [_copy_tree(value) for value in node]
    return copy.deepcopy(node) if isinstance(node, (dict, list)) else node


def load_text(text: str, file: str) -> Document:
    """Load spec text; `file` is the name used in messages."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_BYTES:
        raise _diag(file, 1, 1, f"text is {size} bytes; specs are limited to {MAX_BYTES} bytes")
    tab = text.find("\t")
    if tab >= 0:
        line, col = _text_position(text, tab)
        raise _diag(file, line, col, "tab character: indent and separate with spaces")
    _check_line_breaks(text, file)
    lines = _lines(text)
    if all(not ln.strip() or ln.lstrip().startswith("#") for ln in lines):
        raise _diag(file, 1, 1, "empty file: a spec is a YAML mapping of fields")
    _check_directives(lines, file)
    node = _compose(text, file)
    if node is None:
        raise _diag(file, 1, 1, "empty file: a spec is a YAML mapping of fields")
    from ruamel.yaml.nodes import MappingNode

    if not isinstance(node, MappingNode):
        line, col = _mark(node)
        kind = "a list" if node.id == "sequence" else "a single value"
        raise _diag(
            file, line, col, f"the top level of a spec must be a mapping of fields, not {kind}"
        )
    builder = _Builder(file, lines)
    data = builder.build(node, ())
    return Document(file, data, builder.values, builder.keys, builder.multiline)


def _check_line_breaks(text: str, file: str) -> None:
    """Refuse the characters YAML breaks lines at but editors do not, at their own line."""
    found = _YAML_ONLY_BREAKS.search(text)
    if found is not None:
        char = found.group()
        line, col = _text_position(text, found.start())
        raise _diag(
            file,
            line,
            col,
            f"character U+{ord(char):04X} ({_BREAK_NAMES[char]}) is a line break to YAML"
            " but not to editors; use a plain newline, or remove it",
        )


def _check_directives(lines: list[str], file: str) -> None:
    """Refuse a directive (`%YAML 1.1`, `%TAG`) at its line.

    `%YAML 1.1` makes other YAML tools read `040` as 32 and `yes` as true while
    rooflinec reads by 1.2 rules; `%TAG` only serves tags, which specs never use.
    Directives stand at the start of a line before the document's first content.
    """
    for number, line in enumerate(lines, start=1):
        stripped = line.lstrip("\ufeff")
        if stripped.startswith("%"):
            name = stripped.split()[0]
            raise _diag(
                file,
                number,
                1 + len(line) - len(stripped),
                f"YAML directives ({_printable(name)[1:-1]}) are not allowed in specs:"
                " rooflinec reads YAML 1.2; remove the line",
            )
        if stripped.strip() and not stripped.lstrip().startswith("#"):
            return


def _mark(node: Any) -> tuple[int, int]:
    """1-based line and column where a node or parser event starts."""
    mark = node.start_mark
    return mark.line + 1, mark.column + 1


def _compose(text: str, file: str) -> Any:
    """Parse to a YAML node graph that refuses tags, anchors, aliases, depth, size.

    Either parser's events go through one composer, so both give the same refusals,
    messages and positions.
    """
    try:
        return _EventComposer(_parser(text), file).document()
    except SpecError:
        raise
    except Exception as exc:
        raise _parse_error(exc, text, file) from exc


def _parser(text: str) -> Any:
    """libyaml's parser (ruamel.yaml.clib) when installed, else ruamel's pure-Python one."""
    try:
        from _ruamel_yaml import CParser
    except ImportError:
        return _pure_parser(text)
    return CParser(text)


def _pure_parser(text: str) -> _PeekableEvents:
    """ruamel's pure-Python parser over `text`.

    It costs tens of microseconds a value, so a 1 MB file takes it seconds (libyaml's
    parser, the one installed with rooflinec, a tenth of that).
    """
    from ruamel.yaml import YAML

    return _PeekableEvents(YAML(typ="safe", pure=True).parse(text))


class _PeekableEvents:
    """The part of libyaml's parser interface the composer uses, over an event iterator."""

    def __init__(self, events: Iterator[Any]) -> None:
        self._events = events
        self._next: Any = None

    def peek_event(self) -> Any:
        if self._next is None:
            self._next = next(self._events)
        return self._next

    def get_event(self) -> Any:
        event = self.peek_event()
        self._next = None
        return event

    def check_event(self, kind: type) -> bool:
        return isinstance(self.peek_event(), kind)


class _EventComposer:
    """Nodes from a parser's events, with every refusal at the event's own position."""

    def __init__(self, parser: Any, file: str) -> None:
        from ruamel.yaml import events, nodes

        self.parser = parser
        self.file = file
        self.nodes = 0
        # Imported once here, not in `node` (which runs once a value: an import statement
        # there, even of a loaded module, was a third of the time of a large file).
        self.events = events
        self.node_types = nodes

    def document(self) -> Any:
        from ruamel.yaml.events import StreamEndEvent

        self.parser.get_event()  # stream start
        if self.parser.check_event(StreamEndEvent):
            return None
        self.parser.get_event()  # document start
        node = self.node(1)
        self.parser.get_event()  # document end
        if not self.parser.check_event(StreamEndEvent):
            line, col = _mark(self.parser.peek_event())
            raise _diag(self.file, line, col, "a spec file holds one YAML document, found another")
        return node

    def node(self, depth: int) -> Any:
        events, node_types = self.events, self.node_types
        event = self.parser.get_event()
        line, col = _mark(event)
        if isinstance(event, events.AliasEvent):
            raise _diag(self.file, line, col, "aliases (*name) are not allowed in specs")
        if event.anchor is not None:
            raise _diag(self.file, line, col, "anchors (&name) are not allowed in specs")
        if event.tag is not None:
            raise _diag(self.file, line, col, f"YAML tags are not allowed in specs: {event.tag}")
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _diag(self.file, line, col, f"more than {MAX_NODES} values in one spec file")
        if depth > MAX_DEPTH:
            raise _diag(self.file, line, col, f"nesting deeper than {MAX_DEPTH} levels")
        if isinstance(event, events.MappingStartEvent):
            pairs = []
            while not self.parser.check_event(events.MappingEndEvent):
                key = self.node(depth + 1)
                pairs.append((key, self.node(depth + 1)))
            end = self.parser.get_event()
            return node_types.MappingNode(None, pairs, event.start_mark, end.end_mark)
        if isinstance(event, events.SequenceStartEvent):
            items = []
            while not self.parser.check_event(events.SequenceEndEvent):
                items.append(self.node(depth + 1))
            end = self.parser.get_event()
            return node_types.SequenceNode(None, items, event.start_mark, end.end_mark)
        # libyaml calls a plain scalar's style '', ruamel's own parser None.
        style = event.style or None
        return node_types.ScalarNode(
            None, event.value, event.start_mark, event.end_mark, style=style
        )


def _parse_error(exc: Exception, text: str, file: str) -> SpecError:
    """What a YAML parser (libyaml's or ruamel's own) raised, as a spec error at its place."""
    from ruamel.yaml.error import MarkedYAMLError, YAMLError
    from ruamel.yaml.reader import ReaderError

    if isinstance(exc, ReaderError):
        line, col = _text_position(text, exc.position)
        char = exc.character if isinstance(exc.character, int) else ord(str(exc.character))
        return _diag(file, line, col, f"character U+{char:04X} is not allowed in YAML")
    if isinstance(exc, MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        return _diag(file, line, col, f"YAML syntax: {_one_line(problem)}")
    if isinstance(exc, (YAMLError, RecursionError, ValueError)):
        return _diag(file, 1, 1, f"YAML syntax: {exc.__class__.__name__}")
    # A parser's own assertions (`%YAML 1.6`) and libyaml's refusals are input errors too.
    detail = _one_line(str(exc))[:120]
    return _diag(file, 1, 1, f"YAML syntax: the parser gave up ({detail})")


def _empty(node: Any) -> bool:
    """An empty plain scalar: `key:` or `-` with no value written."""
    return node.id == "scalar" and node.value == "" and node.style is None


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _printable(text: str) -> str:
    """A string as quoted in a message: escapes shown, never a raw control character."""
    shown = repr(text)
    return shown if len(shown) <= 60 else shown[:56] + "...'"


class _Builder:
    """Turns composed nodes into plain data, recording positions by JSON path."""

    def __init__(self, file: str, lines: list[str]) -> None:
        self.file = file
        self.lines = lines
        self.values: dict[PathKey, tuple[int, int]] = {}
        self.keys: dict[PathKey, tuple[int, int]] = {}
        self.multiline: dict[PathKey, tuple[str, Segments]] = {}

    def build(self, node: Any, path: PathKey) -> Any:
        line, col = _mark(node)
        if node.id == "mapping":
            self.values[path] = (line, col)
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                kl, kc = _mark(key_node)
                if key_node.id != "scalar":
                    raise _diag(self.file, kl, kc, "mapping keys must be plain names")
                key = str(key_node.value)
                if key_node.style in ("'", '"'):
                    kc += 1
                if key == "<<" and key_node.style is None:
                    raise _diag(self.file, kl, kc, "merge keys (<<) are not allowed in specs")
                self._check_text(key, kl, kc, "key", allow_newline=False)
                if key in out:
                    first = self.keys[(*path, key)]
                    raise _diag(
                        self.file,
                        kl,
                        kc,
                        f"duplicate key {_printable(key)}"
                        f" (first defined at line {first[0]}, column {first[1]})",
                    )
                self.keys[(*path, key)] = (kl, kc)
                out[key] = self.build(value_node, (*path, key))
                if _empty(value_node):
                    # `key:` with nothing after it: the empty value is at the key, not at
                    # the next token (which may be lines further down) nor after the colon.
                    self.values[(*path, key)] = (kl, kc)
            return out
        if node.id == "sequence":
            self.values[path] = (line, col)
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        # Scalars: point at the first character of the content, inside any quote.
        quoted = node.style in ("'", '"')
        if quoted:
            col += 1
        elif node.style in ("|", ">"):
            line, col = self._block_start(node, line, col)
        self.values[path] = (line, col)
        if node.end_mark.line + 1 > line and node.style != '"':
            # Double quotes excepted: their escapes change more than white space.
            self.multiline[path] = (node.value, self._segments(node, line, col))
        return self._scalar(node, quoted, line, col)

    def _segments(self, node: Any, line: int, col: int) -> Segments:
        """The source lines of a scalar, from (line, col) to where the scalar ends."""
        end_line, end_col = node.end_mark.line + 1, node.end_mark.column + 1
        out: list[tuple[int, int, str]] = []
        for number in range(line, min(end_line, len(self.lines)) + 1):
            text = self.lines[number - 1]
            stop = end_col - 1 if number == end_line else len(text)
            start = col - 1 if number == line else 0
            out.append((number, start + 1, text[start:stop]))
        return tuple(out) or ((line, col, ""),)

    def _block_start(self, node: Any, line: int, col: int) -> tuple[int, int]:
        """Where the text of a `|` or `>` block begins: its first non-blank line."""
        last = node.end_mark.line + 1
        for number in range(line + 1, min(last, len(self.lines)) + 1):
            content = self.lines[number - 1]
            if content.strip():
                return number, len(content) - len(content.lstrip(" ")) + 1
        return line, col

    def _check_text(self, value: str, line: int, col: int, what: str, allow_newline: bool) -> None:
        hidden = _HIDDEN.search(value) or (None if allow_newline else re.search("[\n\t]", value))
        if hidden is not None:
            char = hidden.group()
            raise _diag(
                self.file,
                line,
                col,
                f"{what} contains the invisible character U+{ord(char):04X}; remove it",
            )

    def _scalar(self, node: Any, quoted: bool, line: int, col: int) -> Any:
        value: str = node.value
        if quoted or node.style in ("|", ">"):
            self._check_text(value, line, col, "text", allow_newline=True)
            return value
        if value in _NULL:
            return None
        if value in _BOOL:
            return _BOOL[value]
        if _INT.match(value):
            if _LEADING_ZERO.match(value):
                digits = value.lstrip("+-0") or "0"
                raise _diag(
                    self.file,
                    line,
                    col,
                    f"{value!r} has a leading zero, which YAML 1.1 tools read as an octal"
                    f" number; write {value[0] if value[0] in '+-' else ''}{digits}",
                )
            if len(value.lstrip("+-")) > _MAX_DIGITS:
                raise _diag(self.file, line, col, f"number has more than {_MAX_DIGITS} digits")
            return int(value)
        if _SPECIAL_FLOAT.match(value):
            raise _diag(self.file, line, col, f"{value!r} is not a finite number")
        if _DECIMAL.match(value) and any(c.isdigit() for c in value):
            if len(value) > _MAX_DIGITS:
                raise _diag(self.file, line, col, f"number has more than {_MAX_DIGITS} digits")
            return Fraction(value)
        self._check_text(value, line, col, "text", allow_newline=True)
        return value


__all__ = ["MAX_BYTES", "MAX_DEPTH", "Document", "PathKey", "load_file", "load_text"]
