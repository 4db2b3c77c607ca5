"""`precisions.yaml` typed: the precisions every peak and case names, with the bytes of a
block-scaled format worked out exactly from its bits and its block's scale."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from rooflinec.assemble.builder import Builder
from rooflinec.catalog import Precision, Source
from rooflinec.loader import Document

BITS_PER_BYTE = 8


def build_precisions(
    builder: Builder, docs: list[Document]
) -> tuple[dict[str, Precision], dict[str, Source]]:
    """Every precision declared, by id (the schema has checked each entry's fields), and
    the sources they quote. A precision gives `bytes` or `bits` (with an optional
    `scale`), not both."""
    out: dict[str, Precision] = {}
    sources: dict[str, Source] = {}
    for doc in docs:
        own = builder.sources(doc)
        sources.update(own)
        for pid, p in doc.data["precisions"].items():
            path = ("precisions", pid)
            value = _bytes(builder, doc, path, p)
            builder.source_ref(doc, (*path, "source"), p.get("source"), own)
            if p.get("quote") is not None and p.get("source") is None:
                builder.error(
                    doc,
                    (*path, "quote"),
                    "a quote needs the `source` it is read from",
                    code="refs",
                )
            scale = p.get("scale")
            out[pid] = Precision(
                pid,
                p["label"],
                value if value is not None else Fraction(1),
                p.get("unit", "FLOP"),
                p.get("description"),
                doc.locate(path, key=True),
                Fraction(p["bits"]) if p.get("bits") is not None else None,
                (int(scale["bits"]), int(scale["per"])) if scale is not None else None,
                bool(p.get("width_only", False)),
                p.get("source"),
                p.get("quote"),
            )
    return out, sources


def block_bytes(bits: Fraction, scale: tuple[int, int] | None) -> Fraction:
    """Bytes per value of a format of `bits` per value whose blocks of `per` values share
    a scale of `scale bits` (`scale` = (scale bits, per)): (bits + scale bits / per) / 8."""
    total = bits if scale is None else bits + Fraction(scale[0], scale[1])
    return total / BITS_PER_BYTE


def _bytes(
    builder: Builder, doc: Document, path: tuple[str, str], entry: dict[str, Any]
) -> Fraction | None:
    """The entry's bytes per value (the schema has checked it gives `bytes` or `bits`, one
    of them); None (with an error) for a block scale beside `bytes`."""
    bits = entry.get("bits")
    if bits is not None:
        scale = entry.get("scale")
        pair = (int(scale["bits"]), int(scale["per"])) if scale is not None else None
        return block_bytes(Fraction(bits), pair)
    if entry.get("scale") is not None:
        builder.error(
            doc,
            (*path, "scale"),
            "a block scale adds to `bits`: write the format's `bits` in place of `bytes`",
            key=True,
            code="schema",
        )
        return None
    return Fraction(entry["bytes"])
