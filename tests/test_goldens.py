"""Goldens of what a user sees: every CLI output and the built site, byte for byte.

They were recorded before the compile engine and the site pages were rebuilt, and
prove that a refactor changes nothing a reader can see. A reviewed change rewrites
them: `ROOFLINEC_UPDATE_GOLDENS=1 pytest tests/test_goldens.py`, then the
changelog says what moved and why.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
from pathlib import Path

import pytest

from benchmarks.synth import write_catalog
from rooflinec.cli.main import main
from tests.specfactory import BUNDLED

GOLDENS = Path(__file__).parent / "golden"
UPDATE = bool(os.environ.get("ROOFLINEC_UPDATE_GOLDENS"))

# name -> arguments after `--specs FOLDER`; the same commands run on both catalogs.
COMMON: dict[str, list[str]] = {
    "check-text": ["check"],
    "check-json": ["check", "--format", "json"],
    "check-github": ["check", "--format", "github"],
    "compile-json": ["compile", "--format", "json"],
    "compile-csv": ["compile", "--format", "csv"],
    "compile-table": ["compile", "--format", "table"],
    "compile-declared-csv": ["compile", "--format", "csv", "--declared-only"],
    "compile-bf16-json": ["compile", "--format", "json", "--precision", "bf16"],
    "export-csv": ["export", "--format", "csv"],
    "export-json": ["export", "--format", "json"],
}
BUNDLED_ONLY: dict[str, list[str]] = {
    "compile-h100-json": ["compile", "--format", "json", "--device", "nvidia-h100-sxm"],
    "compile-h100-csv": ["compile", "--format", "csv", "--device", "nvidia-h100-sxm"],
    "compile-gemm-large-csv": ["compile", "--format", "csv", "--case", "gemm-large"],
    "compile-conv3x3-table": ["compile", "--format", "table", "--case", "conv3x3"],
    "explain-gemm-large-h100": ["explain", "gemm-large", "--device", "nvidia-h100-sxm"],
    "explain-conv3x3-h100-fp8": [
        "explain",
        "conv3x3",
        "--device",
        "nvidia-h100-sxm",
        "--precision",
        "fp8",
    ],
    "explain-gemv-mi300x-symbolic": [
        "explain",
        "gemv-decode",
        "--device",
        "amd-mi300x",
        "--symbolic",
    ],
    "explain-attention-unfused-tpu": ["explain", "attention-unfused", "--device", "google-tpu-v5p"],
}
SYNTH_ONLY: dict[str, list[str]] = {
    "compile-synth-0001-json": ["compile", "--format", "json", "--device", "synth-0001"],
    "compile-synth-fp8-csv": ["compile", "--format", "csv", "--precision", "fp8"],
}

_VERSION = re.compile(r'("rooflinec": )"[^"]+"')


def _synth_specs(root: Path) -> Path:
    return write_catalog(root, devices=3, cases=40)


@pytest.fixture(scope="module")
def synth_specs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _synth_specs(tmp_path_factory.mktemp("synth"))


def _run(specs: Path, args: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    code = main([args[0], "--specs", str(specs), *args[1:]], out=out)
    # The package version is not part of what a refactor must keep.
    text = _VERSION.sub(r'\1"VERSION"', out.getvalue()).replace(str(specs), "SPECS")
    return code, text


# Outputs larger than this are kept as a digest and their first lines, not in full: the
# bundled catalog's JSON with its model rows runs to megabytes.
DIGEST_ABOVE = 256 * 1024
HEAD_LINES = 60


def _compare(name: str, code: int, text: str) -> None:
    actual = f"exit {code}\n{text}"
    path = GOLDENS / "cli" / f"{name}.txt"
    digest = GOLDENS / "cli" / f"{name}.sha256"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        digest.unlink(missing_ok=True)
        if len(actual) > DIGEST_ABOVE:
            digest.write_text(_digest(actual), "utf-8")
        else:
            path.write_text(actual, "utf-8")
    if digest.exists():
        expected = digest.read_text("utf-8")
        assert expected == _digest(actual), f"{name}: output differs from {digest}"
    else:
        expected = path.read_text("utf-8")
        assert expected == actual, f"{name}: output differs from {path}"


def _digest(text: str) -> str:
    """The sha256 of a large output, its size, and its first lines to show what it is."""
    lines = text.splitlines(keepends=True)
    head = "".join(lines[:HEAD_LINES])
    sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return f"sha256 {sha}\nbytes {len(text.encode('utf-8'))}\nlines {len(lines)}\n\n{head}"


@pytest.mark.parametrize("name", sorted({**COMMON, **BUNDLED_ONLY}))
def test_cli_bundled(name: str) -> None:
    """Each CLI output on the bundled catalog equals its golden."""
    args = {**COMMON, **BUNDLED_ONLY}[name]
    code, text = _run(BUNDLED, args)
    _compare(f"bundled-{name}", code, text)


@pytest.mark.parametrize("name", sorted({**COMMON, **SYNTH_ONLY}))
def test_cli_synthetic(name: str, synth_specs: Path) -> None:
    """Each CLI output on a 3-device, 40-case synthetic catalog equals its golden."""
    args = {**COMMON, **SYNTH_ONLY}[name]
    code, text = _run(synth_specs, args)
    _compare(f"synth-{name}", code, text)


# Files whose bytes carry the build date or the package version.
_DATED = {"sitemap.xml", "sitemap.xml.gz"}


def rooflinec_output(rel: str) -> bool:
    """Whether a site file is rooflinec's own output (pages, downloads, charts, search
    index, its own assets), not the theme's bundle (material's scripts, styles, images
    under `assets/`), whose bytes a theme release changes with nothing of rooflinec's."""
    return not rel.startswith("assets/") or rel.startswith("assets/rooflinec/")


def site_checksums(site: Path) -> dict[str, str]:
    """sha256 of each of rooflinec's own files of a built site (`rooflinec_output`)."""
    sums: dict[str, str] = {}
    for path in sorted(site.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(site).as_posix()
        if rel in _DATED or not rooflinec_output(rel):
            continue
        sums[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return sums


def test_site_checksums(tmp_path: Path) -> None:
    """Every file rooflinec writes into the bundled catalog's site (its pages, downloads,
    charts, search index and assets; not the theme's bundle) has the bytes recorded in
    its golden."""
    out = tmp_path / "site"
    code = main(["build", "--specs", str(BUNDLED), "--out", str(out)], out=io.StringIO())
    assert 0 == code
    actual = site_checksums(out)
    path = GOLDENS / "site-sha256.json"
    if UPDATE:
        path.write_text(json.dumps(actual, indent=1, sort_keys=True) + "\n", "utf-8")
    expected = json.loads(path.read_text("utf-8"))
    assert sorted(expected) == sorted(actual)
    changed = sorted(name for name in expected if expected[name] != actual[name])
    assert [] == changed
