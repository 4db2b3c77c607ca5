"""The package's rooms and their order: which modules may import which.

Every import counts, at any level: module-level, inside a function (a lazy import) and
under `if TYPE_CHECKING:` (a type-level one), since each is a dependency a reader must
follow. The import graph of `rooflinec` has no circle, and each module imports only from
its own layer or the layers below it (`LAYERS`, lowest first).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.test_imports import circles

PACKAGE = Path(__file__).resolve().parent.parent / "rooflinec"

#: Lowest first; a module may import from its own layer and the ones before it. A name is
#: a root module or a package (with everything under it).
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"errors", "quantities", "resources", "loader", "formatting", "progress"}),
    frozenset({"formulas"}),
    frozenset({"catalog", "grid_values", "schema", "provenance"}),
    frozenset({"engine"}),
    frozenset({"assemble", "lints"}),
    frozenset({"pipeline", "importing", "prose", "outputs"}),
    frozenset({"site"}),
    frozenset({"integrations"}),
    frozenset({"cli", "__main__"}),
)

#: The package itself: it holds the version (which every writer records) and loads
#: `rooflinec.roofline_chart` from `integrations` on first use, which nothing below
#: imports back.
PACKAGE_INIT_MAY_IMPORT = {"rooflinec.integrations.notebook"}

#: Modules at the package root: the core values and the pipeline's seams.
MAX_ROOT_MODULES = 14


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path) -> Iterator[str]:
    """Every rooflinec module `module` imports, at any level of its code."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*parts, base] if base else parts)
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names
            ]
        else:
            continue
        for target in targets:
            if target.split(".")[0] == "rooflinec":
                found = _resolve(target)
                if found is not None and found != module:
                    yield found


GRAPH = {m: set(_imports(m, p)) for m, p in MODULES.items()}


def _layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:
        return 0  # the package itself (see PACKAGE_INIT_MAY_IMPORT)
    for rank, names in enumerate(LAYERS):
        if parts[1] in names:
            return rank
    raise AssertionError(f"{module} is in no layer: add it to LAYERS")


def test_the_graph_is_read() -> None:
    """The reader sees the imports it must judge: a lazy one, a type-level one, one of a
    whole module by name."""
    assert "rooflinec.engine.columns" in GRAPH["rooflinec.engine.compiler"]  # lazy
    assert "rooflinec.engine.cells" in GRAPH["rooflinec.engine.columns"]  # type-level
    assert "rooflinec.integrations.notebook" in GRAPH["rooflinec"]


def test_no_import_circle() -> None:
    """No module reaches itself through imports of any kind (the run-time graph of
    `test_imports` leaves the type-level ones out; this one keeps them)."""
    assert [] == circles({m: set(targets) for m, targets in GRAPH.items()})


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_go_down_the_layers(module: str) -> None:
    """A module imports from its own layer or a lower one: `engine` nothing from
    `outputs`, `site` or `cli`, `outputs` nothing from `site` or `cli`, and so on."""
    rank = _layer(module)
    allowed = PACKAGE_INIT_MAY_IMPORT if module == "rooflinec" else set()
    upward = sorted(t for t in GRAPH[module] if _layer(t) > rank and t not in allowed)
    assert [] == upward


def test_the_layers_hold_the_issue_rules() -> None:
    """The two rules the layering exists for, stated directly."""
    for module, targets in GRAPH.items():
        room = module.split(".")[1] if "." in module else ""
        rooms = {t.split(".")[1] for t in targets if "." in t}
        if room == "engine":
            assert set() == rooms & {"outputs", "site", "cli", "prose", "integrations"}, module
        if room == "outputs":
            assert set() == rooms & {"site", "cli", "integrations"}, module


def test_few_modules_at_the_root() -> None:
    """The package root keeps the core values and seams; the rest lives in rooms."""
    root = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(root) <= MAX_ROOT_MODULES, root


@pytest.mark.parametrize(
    "package", sorted(m for m, p in MODULES.items() if p.name == "__init__.py" and "." in m)
)
def test_each_room_says_what_it_owns_and_may_import(package: str) -> None:
    """Each package's docstring says what it may import (and so what it may not)."""
    doc = ast.get_docstring(ast.parse(MODULES[package].read_text("utf-8"))) or ""
    assert "may import" in doc or "imports nothing" in doc, package
