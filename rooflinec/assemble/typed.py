"""What typing a device, kernel or method file shares: its id claimed first, then its
examples and versions typed last, and the whole file refused on any error in it."""

from __future__ import annotations

from collections.abc import Iterable

from rooflinec.assemble.builder import Builder
from rooflinec.assemble.examples import build_examples
from rooflinec.catalog import Example, Version
from rooflinec.loader import Document


class TypedFile:
    """One device, kernel or method file being typed; its errors count from its start."""

    def __init__(self, builder: Builder, doc: Document, kind: str) -> None:
        self.builder = builder
        self.doc = doc
        self._errors_before = len(builder.out.errors)
        builder.claim(doc, ("id",), doc.data["id"], kind)

    @property
    def clean(self) -> bool:
        """No error reported since the file was opened."""
        return len(self.builder.out.errors) == self._errors_before

    def finish(
        self, also: Iterable[str] = ()
    ) -> tuple[tuple[Example, ...], tuple[Version, ...]] | None:
        """The file's examples and versions, or None when it has errors.

        Examples are typed even then, so that the cross-file check still sees them; a
        refused file's ids (its own, `also`, its examples') are recorded as broken.
        """
        examples = build_examples(self.builder, self.doc)
        versions = self.builder.versions(self.doc)
        if not self.clean:
            self.builder.refuse(self.doc.data["id"], examples, also)
            return None
        return examples, versions
