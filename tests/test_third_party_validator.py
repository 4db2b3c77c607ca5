"""The schemas work outside rooflinec, offline, from any folder: check-jsonschema and editors.

The schemas carry no `$id`, so a `$ref` like `defs.schema.json#/definitions/id` resolves
against the schema file itself. These tests copy the catalog and the schemas to a scratch
folder, run check-jsonschema there with every network fetch made to fail, and follow each
spec's `yaml-language-server` modeline the way an editor does.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rooflinec.loader import load_file
from tests.specfactory import BUNDLED, REPO

SCHEMAS = REPO / "schemas"
KINDS = {
    "precisions": ["precisions.yaml"],
    "device": sorted(p.relative_to(BUNDLED).as_posix() for p in BUNDLED.glob("devices/*.yaml")),
    "kernel": sorted(p.relative_to(BUNDLED).as_posix() for p in BUNDLED.glob("kernels/*.yaml")),
    "method": sorted(p.relative_to(BUNDLED).as_posix() for p in BUNDLED.glob("methods/*.yaml")),
}
MODELINE = re.compile(r"# yaml-language-server: \$schema=(?P<path>\S+)\Z")
# Any proxy-aware client (requests, urllib) sent here gets "connection refused" at once.
DEAD_PROXY = "http://127.0.0.1:9"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the catalog and its schemas in a folder of its own, as a user has them."""
    root = tmp_path_factory.mktemp("project")
    shutil.copytree(BUNDLED, root / "specs")
    shutil.copytree(SCHEMAS, root / "schemas")
    return root


def offline_env(home: Path) -> dict[str, str]:
    """The environment with every HTTP(S) fetch refused and an empty download cache."""
    env = {k: v for k, v in os.environ.items() if k.lower() not in {"no_proxy", "all_proxy"}}
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        env[name] = DEAD_PROXY
    env["XDG_CACHE_HOME"] = str(home / "cache")
    return env


def check_jsonschema(
    kind: str, files: list[Path], cwd: Path, schemas: Path = SCHEMAS
) -> subprocess.CompletedProcess[str]:
    """check-jsonschema as a user runs it: the schema file and the specs, nothing more."""
    exe = Path(sys.executable).with_name("check-jsonschema")
    if not exe.exists():
        pytest.skip("check-jsonschema is not installed (it comes with the test extras)")
    schema = schemas / f"{kind}.schema.json"
    return subprocess.run(
        [str(exe), "--schemafile", os.path.relpath(schema, cwd), *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
        env=offline_env(cwd),
    )


def test_the_offline_environment_refuses_a_fetch(tmp_path: Path) -> None:
    """The environment the runs below use really fails a download: with the published
    schemas' old absolute `$id`, check-jsonschema cannot resolve `defs.schema.json`."""
    schema = json.loads((SCHEMAS / "precisions.schema.json").read_text("utf-8"))
    schema["$id"] = "https://schemas.invalid/v1/precisions.schema.json"
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "precisions.schema.json").write_text(json.dumps(schema), "utf-8")
    shutil.copy(BUNDLED / "precisions.yaml", tmp_path / "precisions.yaml")
    proc = check_jsonschema("precisions", [Path("precisions.yaml")], tmp_path, tmp_path / "schemas")
    assert 1 == proc.returncode
    assert "schemas.invalid" in proc.stdout + proc.stderr


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_bundled_specs_pass_check_jsonschema_offline(kind: str, project: Path) -> None:
    """Every bundled spec of a kind validates with check-jsonschema, offline, from a copy of
    the project in another folder, run from inside the specs folder, with no --base-uri."""
    cwd = project / "specs"
    proc = check_jsonschema(kind, [Path(f) for f in KINDS[kind]], cwd, project / "schemas")
    output = proc.stdout + proc.stderr
    assert 0 == proc.returncode, output
    assert "ok -- validation done" in output
    assert "http" not in output.lower()


def test_check_jsonschema_rejects_what_we_reject(tmp_path: Path) -> None:
    """An unknown field and a javascript: URL fail in check-jsonschema too."""
    bad = tmp_path / "bad.yaml"
    shutil.copy(BUNDLED / "devices" / "nvidia-h100-sxm.yaml", bad)
    text = bad.read_text("utf-8").replace("url: https://", "url: javascript://", 1)
    bad.write_text(text + "surprise: 1\n", "utf-8")
    proc = check_jsonschema("device", [bad], tmp_path)
    assert 1 == proc.returncode
    assert "surprise" in proc.stdout and "javascript://" in proc.stdout


def test_check_jsonschema_flags_a_unit_of_the_wrong_dimension(tmp_path: Path) -> None:
    """A bandwidth written as a compute rate fails the bandwidth pattern outside rooflinec."""
    bad = tmp_path / "bad.yaml"
    text = (BUNDLED / "devices" / "nvidia-h100-sxm.yaml").read_text("utf-8")
    bad.write_text(text.replace("bandwidth: 3.35 TB/s", "bandwidth: 3.35 TFLOP/s", 1), "utf-8")
    assert bad.read_text("utf-8") != text
    proc = check_jsonschema("device", [bad], tmp_path)
    assert 1 == proc.returncode
    assert "'3.35 TFLOP/s' does not match" in proc.stdout


def test_check_jsonschema_reads_the_end_anchors_as_we_do(tmp_path: Path) -> None:
    """The patterns that cannot end early are valid ECMA-262 and refuse a trailing newline."""
    bad = tmp_path / "bad.yaml"
    text = (BUNDLED / "devices" / "nvidia-h100-sxm.yaml").read_text("utf-8")
    bad.write_text(text.replace("id: nvidia-h100-sxm", 'id: "nvidia-h100-sxm\\n"', 1), "utf-8")
    proc = check_jsonschema("device", [bad], tmp_path)
    assert 1 == proc.returncode
    assert "nvidia-h100-sxm" in proc.stdout and "does not match" in proc.stdout


# --- the modelines, as an editor follows them ---------------------------------------------


def _modeline_schema(spec: Path) -> Path:
    first = spec.read_text("utf-8").splitlines()[0]
    match = MODELINE.match(first)
    assert match is not None, f"{spec.name}: first line is not a schema modeline: {first!r}"
    return (spec.parent / match["path"]).resolve()


def _from_disk(uri: str) -> Any:
    """An editor's retrieval: file URIs are read from disk; anything else is a failure."""
    from referencing import Resource
    from referencing.exceptions import NoSuchResource

    if not uri.startswith("file://"):
        raise NoSuchResource(ref=uri)
    path = Path(uri.removeprefix("file://").split("#", 1)[0])
    return Resource.from_contents(json.loads(path.read_text("utf-8")))


def _modeline_validator(schema_path: Path) -> Any:
    """A validator whose only base is the schema file's own URI, refs read from disk."""
    from jsonschema import Draft202012Validator
    from referencing import Registry

    schema = json.loads(schema_path.read_text("utf-8"))
    assert "$id" not in schema  # the retrieval URI is the base, as in an editor
    rooted = {**schema, "$id": schema_path.as_uri()}
    return Draft202012Validator(rooted, registry=Registry(retrieve=_from_disk))  # type: ignore[call-arg]


@pytest.mark.parametrize(("kind", "name"), [(k, f) for k, files in KINDS.items() for f in files])
def test_modeline_resolves_from_a_copy(kind: str, name: str, project: Path) -> None:
    """Each spec's modeline names its kind's schema by a path that exists beside the copy,
    and that schema, with its `$ref`s read from disk, accepts the spec."""
    spec = project / "specs" / name
    schema_path = _modeline_schema(spec)
    assert project / "schemas" / f"{kind}.schema.json" == schema_path
    data = load_file(spec).data
    errors = [e.message for e in _modeline_validator(schema_path).iter_errors(data)]
    assert [] == errors


def test_modeline_validator_follows_refs_to_the_shared_file(project: Path) -> None:
    """The shared definitions really come from disk: an id that breaks their pattern fails."""
    schema_path = project / "schemas" / "device.schema.json"
    errors = list(_modeline_validator(schema_path).iter_errors({"id": "Not An Id"}))
    assert any(e.validator == "pattern" and list(e.absolute_path) == ["id"] for e in errors)
