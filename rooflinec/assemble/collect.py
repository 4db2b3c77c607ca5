"""What a build gathers as it goes: its diagnostics, and what failed to load."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from rooflinec.errors import Diagnostic


@dataclass
class Collector:
    """Diagnostics gathered while building; `ok` until the first error."""

    diagnostics: list[Diagnostic] = field(default_factory=list)

    def add(self, diagnostic: Diagnostic) -> None:
        self.diagnostics.append(diagnostic)

    def extend(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics.extend(diagnostics)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]


@dataclass
class Broken:
    """What is known of the documents that failed to load or validate.

    A file that failed is not built further, so references to what it declares would
    all look dangling; the builder skips those errors for the ids recorded here (and
    for every id of a kind when some file of that kind could not even be read).
    """

    ids: set[str] = field(default_factory=set)
    unknown: set[str] = field(default_factory=set)  # kinds with a file whose ids are unknown

    def covers(self, kind: str, ident: str) -> bool:
        return kind in self.unknown or ident in self.ids
