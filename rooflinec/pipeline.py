"""The pipeline below the CLI, the site and the pytest plugin: specs folder → checked
catalog → compiled results.

`checked` runs every stage `rooflinec check` reports on (build, compile, reference
examples, lints); `compiled_or_raise` is what compile, explain and diff need;
`compiled_or_diagnostics` is `checked` with a cache (`Compilations`, which the site's
session owns) keyed by the files' signatures, so `rooflinec build` (which checks first)
and every `serve` rebuild compile once, and after an edit only the files that changed
are parsed again.
"""

from __future__ import annotations

import io
import posixpath
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rooflinec.errors import Diagnostic, RooflinecError, UsageError, one_line
from rooflinec.loader import DocumentCache, Loader

if TYPE_CHECKING:
    from rooflinec.engine.compiler import Compiled


def specs_folder(specs: Path | None) -> Path:
    """`--specs` when given, else `./specs` when present, else the bundled catalog."""
    from rooflinec.resources import default_specs_dir

    folder = specs if specs is not None else default_specs_dir()
    if not folder.is_dir():
        raise UsageError(f"specs folder not found: {folder}")
    return folder


def checked(
    folder: Path, *, strict: bool = False, load: Loader | None = None
) -> tuple[Compiled | None, list[Diagnostic], int]:
    """Build, compile, run the examples and the lints: (compiled or None, diagnostics, files).

    `load` reads one spec file (default: the loader's `load_file`; `serve` passes a cache).
    """
    from rooflinec.assemble import build_catalog, discover
    from rooflinec.engine.compiler import compile_catalog
    from rooflinec.engine.examples import check_examples
    from rooflinec.lints import lint_catalog

    files = discover(folder)
    count = (
        (1 if files.precisions else 0)
        + len(files.devices)
        + len(files.kernels)
        + len(files.methods)
        + len(files.models)
    )
    catalog, diagnostics = build_catalog(folder, **({"load": load} if load else {}))
    if catalog is None:
        return None, diagnostics, count
    compiled = compile_catalog(catalog)
    diagnostics = [*diagnostics, *compiled.diagnostics, *check_examples(compiled)]
    if any(model.serving for model in catalog.models.values()):
        from rooflinec.engine.serving import serving_diagnostics

        # A serving result better than its bound: `check` and `build` refuse it;
        # `validate` and `compile` still show it, beside its bound.
        diagnostics += serving_diagnostics(compiled.model_engine)
    for lint in lint_catalog(catalog):
        diagnostics.append(lint if not strict else _as_error(lint))
    diagnostics.sort(key=Diagnostic.sort_key)
    return compiled, diagnostics, count


def _as_error(d: Diagnostic) -> Diagnostic:
    return Diagnostic(d.location, d.message, d.path, "error", d.code)


def compiled_or_raise(folder: Path) -> Compiled:
    """The compiled catalog, or `SpecError` when the specs do not build or compile.

    The compile stage's own errors (a measured run faster than its roofline, or above a
    level's bandwidth: `compile_catalog`'s diagnostics, the very ones `check` and `build`
    report) stop every command here, so none prints an efficiency above 100 %.
    Failing reference examples and lints are `check`'s business: compile, explain
    and diff still show the figures of a catalog whose example no longer holds.
    """
    from rooflinec.assemble import catalog_or_raise
    from rooflinec.engine.compiler import compile_catalog
    from rooflinec.errors import SpecError

    compiled = compile_catalog(catalog_or_raise(folder))
    errors = [d for d in compiled.diagnostics if d.severity == "error"]
    if errors:
        raise SpecError(sorted(errors, key=Diagnostic.sort_key))
    return compiled


class Compilations:
    """The last good compile of one specs folder and the spec files it parsed: what a
    build keeps for the next. Owned by the site's `Session` (one mkdocs run), so after an
    edit in `serve` only the edited file is parsed again; `rooflinec build` checks the
    specs first and hands its `Compilations` to the plugin, which compiles nothing again."""

    def __init__(self) -> None:
        self.compiled: tuple[Path, tuple[tuple[str, int, int], ...], Compiled] | None = None
        self.documents = DocumentCache()


def _signature(folder: Path) -> tuple[tuple[str, int, int], ...]:
    """What the compiled catalog depends on: every file's path, size and change time."""
    out = []
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            stat = path.stat()
            out.append((str(path), stat.st_size, stat.st_mtime_ns))
    return tuple(out)


def compiled_or_diagnostics(
    folder: Path, kept: Compilations | None = None
) -> tuple[Compiled | None, list[Diagnostic]]:
    """(compiled catalog or None, diagnostics); with `kept`, cached there while no file of
    `folder` changes, and after an edit only the files that changed are parsed again."""
    if kept is None:
        compiled, diagnostics, _ = checked(folder)
        return compiled, diagnostics
    key = folder.resolve()
    signature = _signature(key)
    hit = kept.compiled
    if hit is not None and hit[0] == key and hit[1] == signature:
        return hit[2], []
    kept.documents.begin()
    compiled, diagnostics, _ = checked(folder, load=kept.documents.load)
    kept.documents.commit()
    if compiled is not None and not any(d.severity == "error" for d in diagnostics):
        kept.compiled = (key, signature, compiled)
    return compiled, diagnostics


def last_compiled(folder: Path, kept: Compilations) -> Compiled | None:
    """The last catalog of `folder` that compiled without errors into `kept`, whatever
    changed since: what `serve` keeps showing while a spec is broken."""
    hit = kept.compiled
    return hit[2] if hit is not None and hit[0] == folder.resolve() else None


# ------------------------------------------------------------- compile at a git ref


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)


def repo_root(folder: Path) -> Path:
    proc = _git(folder, "rev-parse", "--show-toplevel")
    if proc.returncode != 0:
        raise UsageError(f"{folder} is not inside a git repository")
    return Path(proc.stdout.decode().strip())


def default_base(repo: Path) -> str:
    """The merge base with main (or master) when there is one, else HEAD."""
    for branch in ("main", "origin/main", "master"):
        proc = _git(repo, "merge-base", "HEAD", branch)
        if proc.returncode == 0:
            head = _git(repo, "rev-parse", "HEAD").stdout.decode().strip()
            base = proc.stdout.decode().strip()
            if base != head:
                return base
    return "HEAD"


def resolve_ref(repo: Path, ref: str) -> str:
    proc = _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if proc.returncode != 0:
        raise UsageError(f"git ref '{ref}' does not exist in {repo}")
    return proc.stdout.decode().strip()


def _leaves(member: tarfile.TarInfo, relative: str) -> bool:
    """True if a link of the archive points outside the specs folder `relative`.

    The same rule as in the working tree (`assemble.files.discover`): a spec at a ref may
    link only within the catalog; a symbolic link's target is relative to its folder, a
    hard link's to the archive's root.
    """
    if not (member.issym() or member.islnk()):
        return False
    if posixpath.isabs(member.linkname):
        return True
    start = posixpath.dirname(member.name) if member.issym() else ""
    target = posixpath.normpath(posixpath.join(start, member.linkname))
    if relative == ".":  # the specs folder is the repository's root
        return target == ".." or target.startswith("../")
    return not (target + "/").startswith(relative + "/")


@contextmanager
def specs_at(specs: Path, repo: Path, commit: str) -> Iterator[Path | None]:
    """The specs folder as it was at `commit` of `repo` (both resolved by the caller), in
    a temporary folder (None if absent there).

    Raises `RooflinecError` naming the first link at that commit that leaves the specs
    folder: it is not extracted, and nothing of that commit is read.
    """
    specs = specs.resolve()
    relative = specs.relative_to(repo.resolve()).as_posix()
    proc = _git(repo, "archive", "--format=tar", commit, "--", relative)
    with tempfile.TemporaryDirectory(prefix="rooflinec-base-") as tmp:
        if proc.returncode != 0:
            yield None  # the folder did not exist at that commit
            return
        with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as archive:
            members = archive.getmembers()
            for member in members:
                if _leaves(member, relative):
                    raise RooflinecError(
                        f"{one_line(member.name)} at {commit[:12]} is a link to a file outside "
                        "the specs folder: not read (compare with another ref)"
                    )
            archive.extractall(tmp, members=members, filter="data")
        yield Path(tmp) / relative


@dataclass(frozen=True)
class AtRef:
    """The specs folder compiled as it was at a git commit."""

    commit: str
    compiled: Compiled | None
    """None when the folder did not exist at that commit or its specs did not build."""
    builds: bool
    """False when the folder was there but its specs do not build with this rooflinec."""


def compiled_at(folder: Path, ref: str) -> AtRef:
    """The specs `folder` compiled as they were at `ref`: what `rooflinec diff` and the
    site's changes page compare the working tree with. Raises `UsageError` when `folder`
    is not in a git repository or `ref` is not a commit there, and `RooflinecError` when
    the specs at `ref` link outside their folder."""
    from rooflinec.assemble import build_catalog
    from rooflinec.engine.compiler import compile_catalog

    repo = repo_root(folder)
    commit = resolve_ref(repo, ref)
    with specs_at(folder, repo, commit) as old_folder:
        if old_folder is None or not old_folder.is_dir():
            return AtRef(commit, None, True)
        old_catalog, _ = build_catalog(old_folder)
        if old_catalog is None:
            return AtRef(commit, None, False)
        return AtRef(commit, compile_catalog(old_catalog), True)
