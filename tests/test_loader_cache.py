"""The document cache `serve` uses: parse a spec again only when it changed."""

from __future__ import annotations

import os
from pathlib import Path

from rooflinec import loader


def test_unchanged_file_is_not_parsed_again(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A second round reuses the parsed document and hands out a private copy."""
    spec = tmp_path / "a.yaml"
    spec.write_text("id: a\nvalues: [1, 2]\n", "utf-8")
    calls: list[Path] = []
    real = loader.load_file
    monkeypatch.setattr(loader, "load_file", lambda p, d=None: calls.append(p) or real(p, d))
    cache = loader.DocumentCache()
    cache.begin()
    first = cache.load(spec)
    cache.commit()
    first.data["values"].append(3)
    cache.begin()
    second = cache.load(spec)
    cache.commit()
    assert [spec] == calls
    assert {"id": "a", "values": [1, 2]} == second.data


def test_edited_file_is_parsed_again(tmp_path: Path) -> None:
    """A change of size or change time loads the new text."""
    spec = tmp_path / "a.yaml"
    spec.write_text("id: a\n", "utf-8")
    cache = loader.DocumentCache()
    cache.begin()
    cache.load(spec)
    cache.commit()
    spec.write_text("id: b\n", "utf-8")
    stat = spec.stat()
    os.utime(spec, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    cache.begin()
    assert {"id": "b"} == cache.load(spec).data
