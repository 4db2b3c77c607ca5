"""The reference implementation agrees with rooflinec: check-jsonschema on the bundled specs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.specfactory import BUNDLED, REPO

SCHEMAS = REPO / "schemas"
KINDS = {
    "precisions": ["precisions.yaml"],
    "device": sorted(p.relative_to(BUNDLED).as_posix() for p in BUNDLED.glob("devices/*.yaml")),
    "kernel": sorted(p.relative_to(BUNDLED).as_posix() for p in BUNDLED.glob("kernels/*.yaml")),
    "method": sorted(p.relative_to(BUNDLED).as_posix() for p in BUNDLED.glob("methods/*.yaml")),
}


def check_jsonschema(kind: str, files: list[Path]) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("check-jsonschema")
    if not exe.exists():
        pytest.skip("check-jsonschema is not installed (it comes with the test extras)")
    schema = SCHEMAS / f"{kind}.schema.json"
    return subprocess.run(
        [str(exe), "--schemafile", str(schema), "--base-uri", schema.as_uri(), *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_bundled_specs_pass_check_jsonschema(kind: str) -> None:
    """Every bundled spec of a kind validates with check-jsonschema against our schema."""
    proc = check_jsonschema(kind, [BUNDLED / f for f in KINDS[kind]])
    assert 0 == proc.returncode, proc.stdout + proc.stderr


def test_check_jsonschema_rejects_what_we_reject(tmp_path: Path) -> None:
    """An unknown field and a javascript: URL fail in check-jsonschema too."""
    bad = tmp_path / "bad.yaml"
    shutil.copy(BUNDLED / "devices" / "nvidia-h100-sxm.yaml", bad)
    text = bad.read_text("utf-8").replace("url: https://", "url: javascript://", 1)
    bad.write_text(text + "surprise: 1\n", "utf-8")
    proc = check_jsonschema("device", [bad])
    assert 1 == proc.returncode
    assert "surprise" in proc.stdout and "javascript://" in proc.stdout


def test_check_jsonschema_reads_the_end_anchors_as_we_do(tmp_path: Path) -> None:
    """The patterns that cannot end early are valid ECMA-262 and refuse a trailing newline."""
    bad = tmp_path / "bad.yaml"
    text = (BUNDLED / "devices" / "nvidia-h100-sxm.yaml").read_text("utf-8")
    bad.write_text(text.replace("id: nvidia-h100-sxm", 'id: "nvidia-h100-sxm\\n"', 1), "utf-8")
    proc = check_jsonschema("device", [bad])
    assert 1 == proc.returncode
    assert "nvidia-h100-sxm" in proc.stdout and "does not match" in proc.stdout
