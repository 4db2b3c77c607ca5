"""The C event path (libyaml) and the pure-Python path of the loader agree."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from rooflinec import loader
from rooflinec.errors import SpecError

CASES = Path(__file__).parent / "cases"
TEXTS = sorted(
    [*CASES.glob("bad/*.yaml"), *CASES.glob("good/*.yaml"), *CASES.rglob("base/**/*.yaml")]
)
SYNTAX = "YAML syntax:"

pytest.importorskip("_ruamel_yaml", reason="ruamel.yaml.clib (libyaml) is not installed")


def outcome(text: str) -> object:
    """Data and positions of a loaded text, or its first error's position and message.

    The two parsers word their own syntax errors differently; every refusal of the
    loader itself is compared word for word.
    """
    try:
        doc = loader.load_text(text, "f.yaml")
        return doc.data, dict(doc.values), dict(doc.keys)
    except SpecError as exc:
        first = exc.diagnostics[0]
        message = SYNTAX if first.message.startswith(SYNTAX) else first.message
        return first.location.line, first.location.col, message


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: p.name)
def test_both_paths_agree(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Same data and positions, or the same error at the same place, on either path."""
    text = path.read_text("utf-8")
    fast = outcome(text)
    monkeypatch.setattr(loader, "_parser", loader._pure_parser)
    pure = outcome(text)
    assert fast == pure


def test_pure_path_is_used_without_libyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ruamel.yaml.clib the loader reads the text through ruamel's own parser."""
    used: list[str] = []
    pure = loader._pure_parser

    def recorded(text: str) -> Any:
        used.append(text)
        return pure(text)

    monkeypatch.setitem(sys.modules, "_ruamel_yaml", None)
    monkeypatch.setattr(loader, "_pure_parser", recorded)
    assert {"a": [1, "b"]} == loader.load_text("a: [1, b]\n", "f.yaml").data
    assert ["a: [1, b]\n"] == used
