"""The safe formula engine: kernel formulas as text -> a validated tree -> exact numbers.

Kernel specs give operation and byte counts as formulas (`2*M*N*K`,
`w*(M*K + K*N + M*N)`, `ceil(M/128)*128`). Spec text comes from pull requests, so it
is never handed to `eval`, `exec`, `sympify` or `parse_expr` (sympy's parsers run
Python). Instead:

1. cheap text checks run first (length, characters, parenthesis nesting), because
   `ast.parse` itself recurses and must never see a pathological input;
2. `ast.parse(text, mode="eval")` builds a syntax tree (nothing is compiled to code
   or run);
3. every node is checked against a whitelist, and the first offending token in
   reading order is reported with its column;
4. the tree is converted into a small private tree (`_Sum`, `_Prod`, ...) whose
   same-operator chains (`a + b - c`, `a * b / c`) are flattened, so the nesting
   depth of the tree is what the author wrote, not the number of terms.

From that tree come: exact evaluation by a tree of closures over `int`/`Fraction`
(no sympy at evaluation time), a LaTeX rendering in the author's term order, and,
lazily, a sympy expression with explicit `Symbol`s (so `N`, `S`, `E`, `I`, `O`, `Q`
are plain user symbols). Parsing, evaluation and LaTeX never import sympy, which
costs ~0.5 s: `rooflinec check` validates formulas without it.

Every limit in `FormulaLimits` exists to keep work bounded: a formula cannot make
evaluation allocate unbounded integers (exponents are small literals and nested powers
are capped in total), recurse deeply, or run any code.

The stages, one module each: `text` (cheap text checks), `syntax` (`ast.parse` with
positions mapped back), `whitelist` (the node checks), `convert` (to the private
`tree`), `parse` (`parse_formula`, all of them in order), then `evaluate` (closures),
`latex`, `symbolic` (sympy) and `formula` (the `Formula` that ties them together);
`limits` and `errors` are shared.

It may import `rooflinec.errors` only: the catalog, the engine and the validators
import it.
"""

from __future__ import annotations

from rooflinec.formulas.errors import EvaluationError, FormulaError
from rooflinec.formulas.formula import Formula, bulk_evaluate, to_sympy
from rooflinec.formulas.limits import FUNCTIONS, LIMITS, SHARED_MEMORY, WIDTH, FormulaLimits
from rooflinec.formulas.parse import parse_formula

__all__ = [
    "FUNCTIONS",
    "LIMITS",
    "SHARED_MEMORY",
    "WIDTH",
    "EvaluationError",
    "Formula",
    "FormulaError",
    "FormulaLimits",
    "bulk_evaluate",
    "parse_formula",
    "to_sympy",
]
