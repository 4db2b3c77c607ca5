"""`precisions.yaml` typed: the precisions every peak and case names."""

from __future__ import annotations

from fractions import Fraction

from rooflinec.catalog import Precision
from rooflinec.loader import Document


def build_precisions(docs: list[Document]) -> dict[str, Precision]:
    """Every precision declared, by id (the schema has checked each entry)."""
    out: dict[str, Precision] = {}
    for doc in docs:
        for pid, p in doc.data["precisions"].items():
            out[pid] = Precision(
                pid,
                p["label"],
                Fraction(p["bytes"]),
                p.get("unit", "FLOP"),
                p.get("description"),
                doc.locate(("precisions", pid), key=True),
            )
    return out
