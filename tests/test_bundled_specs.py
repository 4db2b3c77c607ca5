"""Every bundled spec names its schema in a modeline editors understand."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.specfactory import BUNDLED

KIND_OF = {"devices": "device", "kernels": "kernel", "methods": "method", "models": "model"}
SPECS = sorted(BUNDLED.rglob("*.yaml"))


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.relative_to(BUNDLED).as_posix())
def test_modeline_points_at_the_right_schema(path: Path) -> None:
    """The first line is `# yaml-language-server: $schema=...` and resolves to its kind's schema."""
    first = path.read_text("utf-8").splitlines()[0]
    prefix = "# yaml-language-server: $schema="
    assert first.startswith(prefix)
    target = (path.parent / first.removeprefix(prefix)).resolve()
    kind = KIND_OF.get(path.parent.name, "precisions")
    assert (BUNDLED.parent / "schemas" / f"{kind}.schema.json").resolve() == target
    assert target.is_file()
