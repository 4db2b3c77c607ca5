"""The C event path (libyaml) and the pure-Python path of the loader agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from rooflinec import loader
from rooflinec.errors import SpecError

CASES = Path(__file__).parent / "cases"
TEXTS = sorted(
    [*CASES.glob("bad/*.yaml"), *CASES.glob("good/*.yaml"), *CASES.rglob("base/**/*.yaml")]
)

pytest.importorskip("_ruamel_yaml", reason="ruamel.yaml.clib (libyaml) is not installed")


def outcome(text: str, compose: object) -> object:
    original = loader._compose
    loader._compose = compose  # type: ignore[assignment]
    try:
        doc = loader.load_text(text, "f.yaml")
        return doc.data, dict(doc.values), dict(doc.keys)
    except SpecError as exc:
        first = exc.diagnostics[0]
        return first.location.line, first.location.col
    finally:
        loader._compose = original  # type: ignore[assignment]


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: p.name)
def test_both_paths_agree(path: Path) -> None:
    """Same data and positions, or an error at the same line and column, on either path."""
    text = path.read_text("utf-8")
    fast = outcome(text, loader._compose)
    pure = outcome(text, loader._compose_pure)
    assert pure == fast
