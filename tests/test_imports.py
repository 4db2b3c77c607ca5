"""The package's imports form no circle, and the command line sits on top of everything.

The graph is read from the source with `ast`, so an import inside a function counts
(it runs when the function does) and one under `if TYPE_CHECKING:` does not (it never
runs). `from pkg import name` is an edge to `pkg.name` when that is a module, else to
`pkg`; importing `a.b.c` also runs `a.b`'s `__init__`, so it is an edge to every parent
package that is not already an ancestor of the importer (those ran before it did).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import deque
from pathlib import Path

import rooflinec

PACKAGE = Path(rooflinec.__file__).resolve().parent

Graph = dict[str, set[str]]


def modules(root: Path) -> dict[str, Path]:
    """Every module of the package under `root`, by dotted name (a package by its own)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Imports(ast.NodeVisitor):
    """The dotted names one module imports, wherever the statement is, except under
    `if TYPE_CHECKING:`."""

    def __init__(self, name: str, is_package: bool, known: set[str]) -> None:
        self.name = name
        self.is_package = is_package
        self.known = known
        self.found: set[str] = set()

    def visit_If(self, node: ast.If) -> None:
        if _type_checking(node.test):
            for statement in node.orelse:
                self.visit(statement)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.found.update(alias.name for alias in node.names)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:
            base = self.name.split(".") if self.is_package else self.name.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            module = ".".join([*base, module] if module else base)
        for alias in node.names:
            submodule = f"{module}.{alias.name}"
            self.found.add(submodule if submodule in self.known else module)


def import_graph(root: Path) -> Graph:
    """Module → the package's modules its import statements load."""
    found = modules(root)
    known = set(found)
    graph: Graph = {}
    for name, path in found.items():
        visitor = _Imports(name, path.name == "__init__.py", known)
        visitor.visit(ast.parse(path.read_text("utf-8"), filename=str(path)))
        edges = {target for target in visitor.found if target in known and target != name}
        for target in list(edges):
            parts = target.split(".")
            for i in range(1, len(parts)):
                parent = ".".join(parts[:i])
                if parent != name and not name.startswith(parent + "."):
                    edges.add(parent)
        graph[name] = edges
    return graph


def circles(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module, each sorted (Tarjan's
    algorithm, iterative so a deep package cannot overflow the stack)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def shortest_loop(graph: Graph, component: list[str]) -> list[str]:
    """One shortest import path from the component's first module back to itself."""
    start = component[0]
    inside = set(component)
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for target in sorted(graph[node] & inside):
            if target == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [start, *reversed(path[:-1]), start]
            if target not in came_from:
                came_from[target] = node
                queue.append(target)
    return [start]


def describe(graph: Graph, component: list[str]) -> str:
    loop = " -> ".join(shortest_loop(graph, component))
    return f"{len(component)} modules import each other: {', '.join(component)} (e.g. {loop})"


# --------------------------------------------------------------------------- the walk


def write_package(root: Path, files: dict[str, str]) -> Path:
    package = root / "pkg"
    for name, text in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    return package


def test_walk_counts_imports_inside_functions(tmp_path: Path) -> None:
    """An import inside a function is an edge: it runs when the function is called."""
    package = write_package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "def f():\n    from pkg import b\n",
            "b.py": "import pkg.a\n",
        },
    )
    graph = import_graph(package)
    assert {"pkg.b"} == graph["pkg.a"]
    assert [["pkg.a", "pkg.b"]] == circles(graph)


def test_walk_skips_type_checking_imports(tmp_path: Path) -> None:
    """Imports under `if TYPE_CHECKING:` never run; those in its `else:` do."""
    package = write_package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "import typing\nif typing.TYPE_CHECKING:\n    from pkg.b import B\n",
            "b.py": "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from pkg import a\nelse:\n    from pkg import c\n",
            "c.py": "",
        },
    )
    graph = import_graph(package)
    assert set() == graph["pkg.a"]
    assert {"pkg.c"} == graph["pkg.b"]
    assert [] == circles(graph)


def test_walk_follows_submodules_parents_and_relative_imports(tmp_path: Path) -> None:
    """`from pkg.sub import mod` is an edge to the module and to `pkg.sub`'s `__init__`
    (not to `pkg`, which ran before the importer); `from . import x` is resolved."""
    package = write_package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from pkg.sub import mod\nfrom pkg.sub.mod import name\n",
            "sub/__init__.py": "from . import mod\n",
            "sub/mod.py": "from ..a import something\n",
        },
    )
    graph = import_graph(package)
    assert {"pkg.sub", "pkg.sub.mod"} == graph["pkg.a"]
    assert {"pkg.sub.mod"} == graph["pkg.sub"]
    assert {"pkg.a"} == graph["pkg.sub.mod"]
    assert [["pkg.a", "pkg.sub", "pkg.sub.mod"]] == circles(graph)
    assert ["pkg.a", "pkg.sub.mod", "pkg.a"] == shortest_loop(graph, circles(graph)[0])


# --------------------------------------------------------------------------- rooflinec


def test_rooflinec_has_no_import_circle() -> None:
    """No two modules of rooflinec import each other, however indirectly."""
    graph = import_graph(PACKAGE)
    found = [describe(graph, component) for component in circles(graph)]
    assert [] == found, "\n".join(found)


def test_only_the_command_line_imports_the_command_line() -> None:
    """`rooflinec.cli` is imported by itself and `python -m rooflinec`, nothing else: the
    pipeline, the site and the plugins sit below it."""
    graph = import_graph(PACKAGE)
    importers = {
        name
        for name, targets in graph.items()
        if any(t == "rooflinec.cli" or t.startswith("rooflinec.cli.") for t in targets)
        and not (name == "rooflinec.cli" or name.startswith("rooflinec.cli."))
    }
    assert {"rooflinec.__main__"} == importers


def test_the_command_line_loads_no_command_until_it_runs() -> None:
    """Importing the command line and building its parser loads neither the site, mkdocs
    nor the provenance trails: each command imports what it runs."""
    code = (
        "import sys; import rooflinec.cli.main as m; m.build_parser(); "
        "print(sorted(set(sys.argv[1:]) & set(sys.modules)))"
    )
    heavy = ["rooflinec.site", "mkdocs", "rooflinec.provenance", "pyarrow"]
    proc = subprocess.run(
        [sys.executable, "-c", code, *heavy], capture_output=True, text=True, check=True, timeout=60
    )
    assert "[]" == proc.stdout.strip()


def test_check_of_the_bundled_catalog_imports_no_heavy_library() -> None:
    """`rooflinec check` needs no numpy (grids are loaded and counted without it), sympy,
    mkdocs or pyarrow: each costs a check a tenth of a second or more to import."""
    code = (
        "import io, sys\n"
        "from rooflinec.cli.main import main\n"
        "main(['check'], out=io.StringIO())\n"
        "print(sorted(m for m in sys.argv[1:] if m in sys.modules))\n"
    )
    heavy = ["numpy", "sympy", "mkdocs", "pyarrow", "altair", "jinja2"]
    proc = subprocess.run(
        [sys.executable, "-c", code, *heavy],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert "[]" == proc.stdout.strip()
