"""pytest plugin: every reference example in a spec is a test item.

Registered under the `pytest11` entry point. A YAML file inside a specs folder
(a folder holding `precisions.yaml`, named as in the `rooflinec_specs_dirs` ini
option, `specs` by default) that carries `examples:` becomes a collector; each
example becomes an item with an id like `specs/methods/roofline.yaml::h100-worked-example`.
A failing item names the spec's file:line and each expectation that missed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr

    from rooflinec.engine.compiler import Compiled

_COMPILED_KEY = pytest.StashKey[dict[Path, "Compiled"]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "rooflinec_specs_dirs",
        type="args",
        default=["specs"],
        help="names of spec folders whose reference examples are collected as tests",
    )


def _specs_root(path: Path, names: list[str]) -> Path | None:
    for parent in path.parents:
        if (parent / "precisions.yaml").is_file():
            return parent if parent.name in names else None
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    from rooflinec.assemble.files import inside, is_spec_name

    if not is_spec_name(file_path.name) or file_path.name == "precisions.yaml":
        return None
    root = _specs_root(file_path, parent.config.getini("rooflinec_specs_dirs"))
    # A link leaving the catalog is never read: `check` reports it.
    if root is None or not inside(file_path, root.resolve()):
        return None
    try:
        head = file_path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if "\nexamples:" not in head:
        return None
    return SpecFile.from_parent(parent, path=file_path, root=root)


def _compiled(config: pytest.Config, root: Path) -> Compiled:
    cache = config.stash.setdefault(_COMPILED_KEY, {})
    if root not in cache:
        from rooflinec.pipeline import compiled_or_raise

        cache[root] = compiled_or_raise(root)
    return cache[root]


class SpecFile(pytest.File):
    def __init__(self, *, root: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.root = root

    def collect(self) -> Iterator[pytest.Item]:
        from rooflinec.loader import load_file

        doc = load_file(self.path, display=self._display())
        for example in doc.data.get("examples") or []:
            if isinstance(example, dict) and isinstance(example.get("id"), str):
                yield ExampleItem.from_parent(self, name=example["id"], spec_id=doc.data.get("id"))

    def _display(self) -> str:
        """The file as the node id names it (relative to the rootdir), so the error's
        FILE:LINE:COL matches the test id; absolute when the file lies elsewhere."""
        try:
            return self.path.relative_to(self.config.rootpath).as_posix()
        except ValueError:
            return str(self.path)

    # The signature of `pytest.Collector.repr_failure`, which itself narrows `Node`'s.
    def repr_failure(  # type: ignore[override]
        self, excinfo: pytest.ExceptionInfo[BaseException]
    ) -> str | TerminalRepr:
        """A spec that does not load (a YAML error, a file that is not UTF-8) is reported
        as its one-line diagnostics, the loader's traceback left out: the error is in
        the spec, not in rooflinec."""
        from rooflinec.errors import SpecError

        if isinstance(excinfo.value, SpecError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class ExampleFailure(Exception):
    """Raised by an example item; its lines are the failed expectations."""


class ExampleItem(pytest.Item):
    def __init__(self, *, spec_id: str | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec_id = spec_id

    def runtest(self) -> None:
        from rooflinec.engine.examples import describe_failure, run_example

        spec_file = self.parent
        assert isinstance(spec_file, SpecFile)  # items are only created under a SpecFile
        compiled = _compiled(self.config, spec_file.root)
        example = next(
            (e for e in compiled.catalog.examples if e.id == self.name and e.owner == self.spec_id),
            None,
        )
        if example is None:
            raise ExampleFailure(f"example '{self.name}' is not in the compiled catalog")
        failures = [
            f"{o.expectation.location}: {describe_failure(o)}"
            for o in run_example(compiled, example)
            if not o.passed
        ]
        if failures:
            raise ExampleFailure("\n".join(failures))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ExampleFailure):
            return str(excinfo.value)
        if excinfo.typename == "SpecError":
            return f"the catalog does not build:\n{excinfo.value}"
        return super().repr_failure(excinfo)  # type: ignore[return-value]

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"reference example {self.name}"
