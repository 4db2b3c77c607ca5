"""A memory ledger's reserve: the share of a chip's capacity held back for the framework,
in a model spec's `memory:` and in a reference example's memory settings."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from rooflinec.assemble.builder import Builder
from rooflinec.catalog import DEFAULT_RESERVE
from rooflinec.loader import Document, PathKey

_PERCENT = re.compile(r"\s*([0-9]{1,3}(?:\.[0-9]{1,6})?)\s*%\s*(?![\s\S])")


def reserve_share(builder: Builder, doc: Document, path: PathKey, raw: Any) -> Fraction:
    """A reserve written in per cent, from 0 up to, not including, 100 (an error, and the
    default, otherwise)."""
    text = str(raw)
    match = _PERCENT.match(text)
    if match is None:
        builder.error(
            doc,
            path,
            f"reserve '{text}' is not a share: write it in per cent, as in '10%' or '0%'",
            code="units",
        )
        return DEFAULT_RESERVE
    share = Fraction(match.group(1)) / 100
    if share >= 1:
        builder.error(
            doc,
            path,
            f"reserve {text} leaves nothing for the model: a reserve is below 100 %",
            code="units",
        )
    return share
