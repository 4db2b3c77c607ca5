"""Bounds on what a formula may be, and the functions it may call."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias


@dataclass(frozen=True)
class FormulaLimits:
    """Bounds on what a formula may be; each keeps parsing and evaluation cheap."""

    text_length: int = 1000
    """Characters in the formula text."""
    nodes: int = 400
    """Numbers, symbols, operations and calls in the syntax tree."""
    depth: int = 40
    """Nesting, counted as parentheses in the text and as levels of the tree (a chain
    `a + b + c` is one level, so long sums and products are not penalised)."""
    exponent: int = 64
    """Largest literal exponent; `M**M` or `2**(M)` could allocate without bound."""
    nested_exponent: int = 64
    """Largest product of the exponents of nested powers: `((M**64)**64)**64` would
    otherwise be M**262144 and eat memory even though each exponent is small."""
    literal: int = 10**18
    """Largest integer literal."""
    literal_digits: int = 18
    """Most digits in a decimal literal."""
    result: int = 10**60
    """Largest magnitude of an evaluated result; beyond it a spec is surely wrong."""


LIMITS: Final = FormulaLimits()

#: The symbol every kernel formula may use for the bytes per value of the precision it is
#: evaluated at (a kernel's own width symbols are bound per case or step): defined here
#: once, for the parser, the catalog and the engine.
WIDTH: Final = "w"

#: The symbol a kernel's byte formulas may use for the shared memory of one compute core
#: of the device evaluated (`core: {shared_memory}`), in bytes: a tiled kernel's traffic
#: depends on how large its tiles can be. A whole number, bound per device.
SHARED_MEMORY: Final = "smem"

#: The functions a formula may call, with their arity (minimum, maximum or None).
FUNCTIONS: Final[Mapping[str, tuple[int, int | None]]] = {
    "min": (2, None),
    "max": (2, None),
    "ceil": (1, 1),
    "floor": (1, 1),
}
_FUNCTION_LIST: Final = ", ".join(FUNCTIONS)

#: Functions only the engine writes (a model's `experts:` binding), never spec text:
#: `unpicked(E, k, n)` = ((E - k) / E) ** n, the chance that n tokens, each routed to k
#: of E experts uniformly at random, all miss a given expert. Exact up to `MAX_TOKENS`.
#: `unreached(E, k, g)` = C(E - g, k) / C(E, k), the chance that a token routed to k of
#: E experts uniformly at random misses every one of a given g (one chip's experts).
ENGINE_FUNCTIONS: Final[Mapping[str, tuple[int, int | None]]] = {
    "unpicked": (3, 3),
    "unreached": (3, 3),
}
MAX_UNPICKED_TOKENS: Final = 65_536
#: The most experts per token `unreached` takes: its exact value is a product of k
#: fractions.
MAX_UNREACHED_ACTIVE: Final = 4_096

_FunctionName: TypeAlias = Literal["min", "max", "ceil", "floor", "unpicked", "unreached"]
