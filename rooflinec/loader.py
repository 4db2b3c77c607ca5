"""Read one YAML spec file into plain data with the position of every key and value.

The loader is strict on purpose: specs arrive in pull requests from anyone, so
anything that could surprise a reader or a walker is refused at its position:
tags (`!!python/...`), anchors and aliases (billion laughs), tabs, duplicate keys,
deep nesting, huge files. Scalars are resolved by YAML 1.2 core rules; dates stay
ISO strings; decimals become exact `Fraction`s (never floats).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from rooflinec.errors import Diagnostic, Location, SpecError, json_path

MAX_BYTES = 1_000_000
MAX_DEPTH = 24

PathKey = tuple[str | int, ...]


@dataclass(frozen=True)
class Document:
    """A loaded spec file: its data and where each piece of it stands in the file."""

    file: str
    data: dict[str, Any]
    values: Mapping[PathKey, tuple[int, int]] = field(repr=False)
    keys: Mapping[PathKey, tuple[int, int]] = field(repr=False)

    def locate(self, path: PathKey, *, key: bool = False, offset: int = 0) -> Location:
        """Location of the value (or key) at `path`; the nearest ancestor if unknown.

        `offset` is added to the column: a formula error at character 7 of a value.
        """
        table = self.keys if key else self.values
        probe = tuple(path)
        while probe:
            if probe in table:
                line, col = table[probe]
                return Location(self.file, line, col + (offset if probe == tuple(path) else 0))
            if probe in self.values:
                line, col = self.values[probe]
                return Location(self.file, line, col)
            probe = probe[:-1]
        return Location(self.file, 1, 1)

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


def _diag(file: str, line: int, col: int, message: str) -> SpecError:
    return SpecError([Diagnostic(Location(file, line, col), message, code="yaml")])


_INT = re.compile(r"^[-+]?[0-9]+$")
_DECIMAL = re.compile(r"^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]{1,2})?$")
_SPECIAL_FLOAT = re.compile(r"^[-+]?\.(?:inf|Inf|INF)$|^\.(?:nan|NaN|NAN)$")
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_NULL = {"", "~", "null", "Null", "NULL"}


def load_file(path: Path, display: str | None = None) -> Document:
    """Load `path`; raise `SpecError` with the position of the first problem."""
    name = display or str(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise _diag(name, 0, 0, f"cannot read file: {exc.strerror}") from exc
    if size > MAX_BYTES:
        raise _diag(name, 1, 1, f"file is {size} bytes; specs are limited to {MAX_BYTES} bytes")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _diag(name, 1, 1, f"file is not UTF-8 text ({exc.reason})") from exc
    except OSError as exc:
        raise _diag(name, 0, 0, f"cannot read file: {exc.strerror}") from exc
    return load_text(text, name)


def load_text(text: str, file: str) -> Document:
    """Load spec text; `file` is the name used in messages."""
    if len(text.encode("utf-8")) > MAX_BYTES:
        raise _diag(file, 1, 1, f"text is over {MAX_BYTES} bytes; specs are limited to that")
    for lineno, line in enumerate(text.splitlines(), start=1):
        col = line.find("\t")
        if col >= 0:
            raise _diag(file, lineno, col + 1, "tab character: indent and separate with spaces")
    if not text.strip() or all(
        not ln.strip() or ln.lstrip().startswith("#") for ln in text.splitlines()
    ):
        raise _diag(file, 1, 1, "empty file: a spec is a YAML mapping")
    node = _compose(text, file)
    if node is None:
        raise _diag(file, 1, 1, "empty file: a spec is a YAML mapping")
    builder = _Builder(file)
    data = builder.build(node, ())
    if not isinstance(data, dict):
        line, col = _mark(node)
        raise _diag(file, line, col, "the top level of a spec must be a mapping of fields")
    return Document(file, data, builder.values, builder.keys)


def _mark(node: Any) -> tuple[int, int]:
    mark = node.start_mark
    return mark.line + 1, mark.column + 1


def _compose(text: str, file: str) -> Any:
    """Parse to a YAML node graph with a composer that refuses tags, anchors, aliases, depth."""
    from ruamel.yaml import YAML
    from ruamel.yaml.composer import Composer
    from ruamel.yaml.error import MarkedYAMLError, YAMLError
    from ruamel.yaml.events import AliasEvent

    class StrictComposer(Composer):  # type: ignore[misc]
        depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.parser.peek_event()
            mark = event.start_mark
            if isinstance(event, AliasEvent):
                raise _diag(file, mark.line + 1, mark.column + 1, "aliases (*name) are not allowed in specs")
            if getattr(event, "anchor", None) is not None:
                raise _diag(file, mark.line + 1, mark.column + 1, "anchors (&name) are not allowed in specs")
            tag = getattr(event, "ctag", None)
            if tag is not None and str(tag) != "!":
                raise _diag(file, mark.line + 1, mark.column + 1, f"YAML tags are not allowed in specs: {tag}")
            StrictComposer.depth += 1
            try:
                if StrictComposer.depth > MAX_DEPTH:
                    raise _diag(
                        file,
                        mark.line + 1,
                        mark.column + 1,
                        f"nesting deeper than {MAX_DEPTH} levels",
                    )
                return super().compose_node(parent, index)
            finally:
                StrictComposer.depth -= 1

    yaml = YAML(typ="rt", pure=True)
    yaml.Composer = StrictComposer
    StrictComposer.depth = 0
    try:
        nodes = list(yaml.compose_all(text))
    except SpecError:
        raise
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        raise _diag(file, line, col, f"YAML syntax: {problem}") from exc
    except (YAMLError, RecursionError, ValueError) as exc:
        raise _diag(file, 1, 1, f"YAML syntax: {exc.__class__.__name__}") from exc
    if len(nodes) > 1:
        line, col = _mark(nodes[1])
        raise _diag(file, line, col, "a spec file holds one YAML document, found another")
    return nodes[0] if nodes else None


class _Builder:
    """Turns composed nodes into plain data, recording positions by JSON path."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.values: dict[PathKey, tuple[int, int]] = {}
        self.keys: dict[PathKey, tuple[int, int]] = {}

    def build(self, node: Any, path: PathKey) -> Any:
        from ruamel.yaml.nodes import MappingNode, SequenceNode

        line, col = _mark(node)
        if isinstance(node, MappingNode):
            self.values[path] = (line, col)
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if isinstance(key_node, (MappingNode, SequenceNode)):
                    kl, kc = _mark(key_node)
                    raise _diag(self.file, kl, kc, "mapping keys must be plain names")
                key = key_node.value
                kl, kc = _mark(key_node)
                if key == "<<":
                    raise _diag(self.file, kl, kc, "merge keys (<<) are not allowed in specs")
                if key in out:
                    first = self.keys[(*path, key)]
                    raise _diag(
                        self.file,
                        kl,
                        kc,
                        f"duplicate key '{key}' (first defined at line {first[0]}, column {first[1]})",
                    )
                self.keys[(*path, key)] = (kl, kc)
                out[key] = self.build(value_node, (*path, key))
            return out
        if isinstance(node, SequenceNode):
            self.values[path] = (line, col)
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        # Scalars: point at the first character of the content, inside any quote.
        quoted = node.style in ("'", '"')
        self.values[path] = (line, col + 1 if quoted else col)
        return self._scalar(node, quoted, line, col)

    def _scalar(self, node: Any, quoted: bool, line: int, col: int) -> Any:
        value: str = node.value
        if quoted or node.style in ("|", ">"):
            return value
        if value in _NULL:
            return None
        if value in _BOOL:
            return _BOOL[value]
        if _INT.match(value):
            if len(value) > 30:
                raise _diag(self.file, line, col, "number has too many digits")
            return int(value)
        if _SPECIAL_FLOAT.match(value):
            raise _diag(self.file, line, col, f"'{value}' is not a finite number")
        if _DECIMAL.match(value) and any(c.isdigit() for c in value):
            if len(value) > 30:
                raise _diag(self.file, line, col, "number has too many digits")
            return Fraction(value)
        return value


def iter_paths(data: Any, path: PathKey = ()) -> Iterator[tuple[PathKey, Any]]:
    """Every (path, value) pair in a loaded document, depth first."""
    yield path, data
    if isinstance(data, dict):
        for key, value in data.items():
            yield from iter_paths(value, (*path, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from iter_paths(value, (*path, i))


__all__ = ["MAX_BYTES", "MAX_DEPTH", "Document", "PathKey", "iter_paths", "load_file", "load_text"]
