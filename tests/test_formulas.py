"""Tests of rooflinec.formulas: exact values, LaTeX, limits, hostile input, never running code."""

from __future__ import annotations

import ast
import builtins
import contextlib
import math
import pickle
import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rooflinec.errors import RooflinecError
from rooflinec.formulas import (
    LIMITS,
    EvaluationError,
    Formula,
    FormulaError,
    bulk_evaluate,
    parse_formula,
    to_sympy,
)

REPO = Path(__file__).resolve().parents[1]

# --------------------------------------------------------------------------- reference kernels

# The six reference kernels of the method, as in specs/kernels/, at their reference
# shapes and BF16 (w = 2): (flops formula, bytes formula, symbols, shape, flops,
# bytes, intensity quoted in the case description).
REFERENCE = {
    "gemm-large": (
        "2*M*N*K",
        "w*(M*K + K*N + M*N)",
        {"M": 8192, "N": 8192, "K": 8192},
        1099511627776,
        402653184,
        Fraction(8192, 3),
    ),
    "gemv-decode": (
        "2*M*K*B",
        "w*(M*K + K*B + M*B)",
        {"M": 4096, "K": 4096, "B": 1},
        33554432,
        33570816,
        Fraction(4096, 4098),
    ),
    "attention-fused": (
        "4*s**2*d*h",
        "w*4*s*d*h",
        {"s": 4096, "d": 128, "h": 1},
        8589934592,
        4194304,
        Fraction(2048),
    ),
    "attention-unfused": (
        "4*s**2*d*h",
        "w*h*(4*s*d + 4*s*s)",
        {"s": 4096, "d": 128, "h": 1},
        8589934592,
        138412032,
        Fraction(4096 * 128, 2 * (4096 + 128)),
    ),
    "conv3x3": (
        "2*Nb*H*W*C*F*R*S",
        "w*(Nb*H*W*C + R*S*C*F + Nb*H*W*F)",
        {"Nb": 32, "H": 56, "W": 56, "C": 64, "F": 64, "R": 3, "S": 3},
        7398752256,
        25763840,
        Fraction(7398752256, 25763840),
    ),
    "elementwise-add": (
        "n",
        "w*3*n",
        {"n": 100_000_000},
        100_000_000,
        600_000_000,
        Fraction(1, 6),
    ),
}


@pytest.mark.parametrize("case", sorted(REFERENCE))
def test_reference_kernels_give_exact_counts(case: str) -> None:
    """Each reference kernel's flops and bytes formulas give the method's exact figures."""
    flops_text, bytes_text, shape, flops, nbytes, intensity = REFERENCE[case]
    flops_formula = parse_formula(flops_text, shape)
    bytes_formula = parse_formula(bytes_text, shape)
    got_flops = flops_formula.evaluate(shape)
    got_bytes = bytes_formula.evaluate({**shape, "w": 2})
    assert Fraction(flops) == got_flops
    assert Fraction(nbytes) == got_bytes
    assert intensity == got_flops / got_bytes


def test_gemm_flops_value() -> None:
    """`2*M*N*K` at M=N=K=8192 is 1099511627776, an exact Fraction."""
    formula = parse_formula("2*M*N*K", ["M", "N", "K"])
    result = formula.evaluate({"M": 8192, "N": 8192, "K": 8192})
    assert Fraction(1099511627776) == result
    assert Fraction is type(result)


def test_gemm_bytes_value() -> None:
    """`w*(M*K + K*N + M*N)` with w=2 at 8192 cubed is 402653184."""
    formula = parse_formula("w*(M*K + K*N + M*N)", ["M", "N", "K"])
    assert Fraction(402653184) == formula.evaluate({"M": 8192, "N": 8192, "K": 8192, "w": 2})


def test_unfused_attention_bytes_value() -> None:
    """`w*(4*s*d + 4*s*s)` at s=4096, d=128, w=2 is 138412032."""
    formula = parse_formula("w*(4*s*d + 4*s*s)", ["s", "d"])
    assert Fraction(138412032) == formula.evaluate({"s": 4096, "d": 128, "w": 2})


def test_fractional_bytes_per_value_is_exact() -> None:
    """w = 1/2 (fp4) gives an exact half, not a float."""
    formula = parse_formula("w*(M*K + K*N + M*N)", ["M", "N", "K"])
    result = formula.evaluate({"M": 3, "N": 5, "K": 7, "w": Fraction(1, 2)})
    assert Fraction(3 * 7 + 7 * 5 + 3 * 5, 2) == result
    assert Fraction(1, 2) == parse_formula("w", []).evaluate({"w": Fraction(1, 2)})


def test_division_is_exact() -> None:
    """`M/3` is exactly 10/3 at M=10, and `M/N/K` divides left to right."""
    assert Fraction(10, 3) == parse_formula("M/3", ["M"]).evaluate({"M": 10})
    assert Fraction(1, 6) == parse_formula("M/N/K", ["M", "N", "K"]).evaluate(
        {"M": 1, "N": 2, "K": 3}
    )
    assert Fraction(3, 2) == parse_formula("M/N*K", ["M", "N", "K"]).evaluate(
        {"M": 1, "N": 2, "K": 3}
    )


@pytest.mark.parametrize(
    ("text", "values", "expected"),
    [
        ("ceil(M/128)*128", {"M": 200}, Fraction(256)),
        ("ceil(M/128)*128", {"M": 256}, Fraction(256)),
        ("floor(M/128)", {"M": 255}, Fraction(1)),
        ("floor(-M/128)", {"M": 1}, Fraction(-1)),
        ("max(M, 64)", {"M": 3}, Fraction(64)),
        ("min(M, N, 0.5)", {"M": 3, "N": 1}, Fraction(1, 2)),
        ("min(M/3, N/4)", {"M": 1, "N": 1}, Fraction(1, 4)),
        ("M - N - K", {"M": 10, "N": 3, "K": 2}, Fraction(5)),
        ("M - (N - K)", {"M": 10, "N": 3, "K": 2}, Fraction(9)),
        ("-M**2", {"M": 3}, Fraction(-9)),
        ("(-M)**2", {"M": 3}, Fraction(9)),
        ("M**0", {"M": 0}, Fraction(1)),
        ("0.1*M", {"M": 3}, Fraction(3, 10)),
        (".5 + 5.", {}, Fraction(11, 2)),
        ("1_000*M", {"M": 2}, Fraction(2000)),
        ("(M +\n N)", {"M": 1, "N": 2}, Fraction(3)),
        ("  M + N  ", {"M": 1, "N": 2}, Fraction(3)),
        ("w**2*M", {"M": 4, "w": Fraction(1, 2)}, Fraction(1)),
    ],
)
def test_arithmetic_and_functions(text: str, values: dict[str, Any], expected: Fraction) -> None:
    """Operators, precedence, decimals and min/max/ceil/floor evaluate exactly."""
    assert expected == parse_formula(text, ["M", "N", "K"]).evaluate(values)


def test_decimal_literal_comes_from_its_text() -> None:
    """`0.1` is exactly 1/10 (the source text), not the float 0.1000000000000000055..."""
    formula = parse_formula("0.1", [])
    assert Fraction(1, 10) == formula.evaluate({})
    assert Fraction(0.1) != formula.evaluate({})


@pytest.mark.parametrize("name", ["N", "S", "E", "I", "O", "Q", "C", "beta", "pi", "gamma"])
def test_sympy_builtin_names_are_plain_symbols(name: str) -> None:
    """Names that mean something in sympy (N, S, E, I, ...) are ordinary user symbols."""
    formula = parse_formula(f"2*{name} + {name}**2", [name])
    assert Fraction(2 * 7 + 49) == formula.evaluate({name: 7})
    assert frozenset({name}) == formula.symbols
    (symbol,) = formula.expr.free_symbols
    assert name == symbol.name
    assert symbol.is_integer and symbol.is_positive
    expected = 63
    assert expected == formula.expr.subs({symbol: 7}).doit()


def test_symbols_are_the_names_used() -> None:
    """`symbols` lists the names used, w included, not every declared one."""
    formula = parse_formula("w*M + max(M, 3)", ["M", "N"])
    assert frozenset({"M", "w"}) == formula.symbols
    assert frozenset({"w"}) == formula.reserved


def test_sympy_expression_uses_assumptions() -> None:
    """Declared symbols are positive integers, w a positive rational."""
    formula = parse_formula("w*(M + N)", ["M", "N"])
    by_name = {s.name: s for s in formula.expr.free_symbols}
    assert {"M", "N", "w"} == set(by_name)
    assert by_name["M"].is_integer and by_name["M"].is_positive
    assert by_name["w"].is_rational and by_name["w"].is_positive
    assert by_name["w"].is_integer is None
    assert formula.expr is formula.expr  # cached
    assert formula.expr == to_sympy(formula)


def test_sympy_expression_with_constant_zero_inside_min() -> None:
    """A symbol-free exact zero inside min (`1 - 1`) does not break sympy's subs."""
    formula = parse_formula("min(M, min(0, 1 - 1)) + max(M/3, 2)", DECLARED)
    (symbol,) = formula.expr.free_symbols
    expected = formula.evaluate({"M": 9})
    assert expected == formula.expr.subs({symbol: 9}).doit()


def test_custom_reserved_names() -> None:
    """Reserved names are configurable and named in the unknown-symbol message."""
    formula = parse_formula("b*M", ["M"], reserved=("b",))
    assert Fraction(3, 2) == formula.evaluate({"M": 3, "b": Fraction(1, 2)})
    with pytest.raises(FormulaError) as info:
        parse_formula("w*M", ["M"], reserved=("b",))
    expected = "unknown symbol 'w' (declared: M; b is reserved)"
    assert expected == info.value.message


# --------------------------------------------------------------------------- LaTeX


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2*M*N*K", "2 M N K"),
        ("w*(M*K + K*N + M*N)", r"w \left(M K + K N + M N\right)"),
        ("4*s**2*d", "4 s^{2} d"),
        ("w*(4*s*d + 4*s*s)", r"w \left(4 s d + 4 s s\right)"),
        ("2*Nb*H*W*C*F*R*S", r"2 \mathit{Nb} H W C F R S"),
        ("ceil(M/128)*128", r"\left\lceil \frac{M}{128} \right\rceil \cdot 128"),
        ("floor(M/3)", r"\left\lfloor \frac{M}{3} \right\rfloor"),
        ("max(M, 64)", r"\max\left(M, 64\right)"),
        ("min(M, N, 7)", r"\min\left(M, N, 7\right)"),
        ("M - (N - K)", r"M - \left(N - K\right)"),
        ("M + -N", r"M + \left(-N\right)"),
        ("-(M + N)", r"-\left(M + N\right)"),
        ("(M + N)/2", r"\frac{M + N}{2}"),
        ("M/N/K", r"\frac{M}{N K}"),
        ("M*N/K*2", r"\frac{M N}{K} \cdot 2"),
        ("(M*N)**2", r"\left(M N\right)^{2}"),
        (".5*M", "0.5 M"),
        ("d_model*x1", r"d_{\mathrm{model}} x_{1}"),
        ("alpha*M", r"\alpha M"),
    ],
)
def test_latex_keeps_author_order(text: str, expected: str) -> None:
    """LaTeX keeps the author's term order and parenthesises only where needed."""
    symbols = ["M", "N", "K", "s", "d", "Nb", "H", "W", "C", "F", "R", "S"]
    symbols += ["d_model", "x1", "alpha"]
    assert expected == parse_formula(text, symbols).latex()


# --------------------------------------------------------------------------- hostile input

DECLARED = ["M", "N", "K"]

# (text, column of the offending token, token or None, words in the message).
HOSTILE: list[tuple[str, int, str | None, str]] = [
    ('__import__("os").system("echo hi")', 0, "__import__", "function '__import__'"),
    ("__import__('os').system('x')", 0, "__import__", "is not allowed"),
    ("M.__class__", 1, ".__class__", "attribute access"),
    ("M. N", 1, ". N", "attribute access"),
    ("().__class__", 0, "()", "not allowed in a formula"),
    ('open("x")', 0, "open", "function 'open' is not allowed (allowed: min, max, ceil, floor)"),
    ("exec('1')", 0, "exec", "function 'exec' is not allowed"),
    ("lambda: 1", 0, "lambda", "not allowed in a formula"),
    ("[1]*9**9", 0, "[1]", "lists"),
    ("9**9**9**9", 3, "9**9**9", "exponent"),
    ("M**M**M", 3, "M**M", "exponent"),
    ("2**(M)", 4, "M", "exponent"),
    ("2**1000", 3, "1000", "exponent 1000 is too large"),
    ("M**-1", 3, "-1", "exponent"),
    ("M**65", 3, "65", "at most 64"),
    ("(M**8)**9", 4, "8", "nested powers"),
    ('"a"*10', 0, '"a"', "strings"),
    ("b'x'", 0, "b'x'", "strings"),
    ("f'{M}'", 0, "f'{M}'", "f-strings"),
    ("M if N else K", 2, "if", "conditional"),
    ("M; import os", 1, ";", "invalid formula syntax"),
    ("import os", 0, "import", "invalid formula syntax"),
    ("M\nN", 2, "N", "invalid formula syntax"),
    ("M < N", 2, "<", "comparisons"),
    ("M == N", 2, "==", "comparisons"),
    ("M and N", 2, "and", "boolean"),
    ("not M", 0, "not", "boolean"),
    ("M[0]", 1, "[0]", "subscripts"),
    ("M @ N", 2, "@", "not allowed in a formula"),
    ("~M", 0, "~", "not allowed in a formula"),
    ("M // N", 2, "//", "not allowed in a formula"),
    ("M % N", 2, "%", "not allowed in a formula"),
    ("M << 2", 2, "<<", "not allowed in a formula"),
    ("M ^ N", 2, "^", "not allowed in a formula"),
    ("M | N", 2, "|", "not allowed in a formula"),
    ("-1e400", 1, "1e400", "exponent notation"),
    ("1e999", 0, "1e999", "exponent notation"),
    ("0x10", 0, "0x10", "only decimal numbers"),
    ("1j*M", 0, "1j", "complex"),
    ("True*M", 0, "True", "not allowed in a formula"),
    ("None", 0, "None", "not allowed in a formula"),
    ("...", 0, "...", "not allowed in a formula"),
    ("(M := 1)", 3, ":=", "assignment"),
    ("max(M, key=N)", 7, "key=", "keyword arguments"),
    ("max(*M, N)", 4, "*M", "starred"),
    ("{M: N}", 0, "{M: N}", "dicts"),
    ("[x for x in M]", 0, "[x for x in M]", "comprehensions"),
    ("await M", 0, "await M", "not allowed in a formula"),
    ("Z*M", 0, "Z", "unknown symbol 'Z' (declared: K, M, N; w is the bytes per value)"),
    ("M(2)", 0, "M", "function 'M' is not allowed"),
    ("(M+N)(2)", 1, "M+N", "can be called"),
    ("ceil(M, N)", 0, "ceil", "ceil takes exactly 1 argument (2 given)"),
    ("min(M)", 0, "min", "min takes at least 2 arguments (1 given)"),
    ("floor()", 0, "floor", "floor takes exactly 1 argument (0 given)"),
    ("10000000000000000001", 0, "10000000000000000001", "too large"),
    ("0.1234567890123456789", 0, "0.1234567890123456789", "digits"),
    ("M # comment", 2, "#", "comments"),
    ("M\x00", 1, "\x00", "control characters"),
    ("M\r\nN", 1, "\r", "control characters"),
    ("µ*M", 0, "µ", "ASCII"),
    ("ﬁ", 0, "ﬁ", "ASCII"),
    ("(M", 0, "(", "never closed"),
    ("M)", 1, ")", "unmatched"),
    ("M N", 2, "N", "write '*' between factors"),
    ("2M", 0, "2", "invalid formula syntax"),
    ("M +", 3, None, "ends too early"),
    ("", 0, None, "empty"),
    ("  \n ", 0, None, "empty"),
    ("(" * 41 + "M" + ")" * 41, 40, "(", "more than 40 deep"),
    ("-" * 41 + "M", 40, "-", "more than 40 levels deep"),
    ("(" * 5000 + "M" + ")" * 5000, 0, None, "10001 characters long"),
    ("M+" * 500 + "M", 0, None, "characters long"),
    ("+".join(["M"] * 300), 0, None, "too large"),
]


@pytest.mark.parametrize(("text", "column", "token", "words"), HOSTILE)
def test_hostile_input_is_refused_with_position(
    text: str, column: int, token: str | None, words: str
) -> None:
    """Every non-arithmetic input is a FormulaError naming the token and its column."""
    with pytest.raises(FormulaError) as info:
        parse_formula(text, DECLARED)
    error = info.value
    assert words in error.message
    assert (column, token) == (error.column, error.token)
    assert error.message == str(error)
    if token is not None:
        assert token == text[column : column + len(token)]


def test_hostile_count() -> None:
    """The hostile table covers well over 25 inputs."""
    assert len(HOSTILE) >= 25


def test_column_counts_leading_whitespace_and_lines() -> None:
    """Columns are offsets into the original text, across leading blanks and newlines."""
    text = "  (M +\n   Z)"
    with pytest.raises(FormulaError) as info:
        parse_formula(text, DECLARED)
    assert (text.index("Z"), "Z") == (info.value.column, info.value.token)


def test_deep_nesting_is_refused() -> None:
    """5,000 nested parentheses, or 999 unary minus, are refused as a FormulaError, not a
    RecursionError (how fast is the benchmark's question, not a test's)."""
    for text in ["(" * 5000 + "M" + ")" * 5000, "(" * 499 + "M" + ")" * 499, "-" * 999 + "M"]:
        with pytest.raises(FormulaError):
            parse_formula(text, DECLARED)


def test_limits_are_inclusive() -> None:
    """Values at each limit are accepted; one beyond is refused."""
    ok = [
        "M**64",
        "(M**8)**8",
        "1000000000000000000",
        "0.12345678901234567",
        "(" * 40 + "M" + ")" * 40,
        "-" * 39 + "M",
        "+".join(["M"] * 200),
        "M" + " " * (LIMITS.text_length - 1),
    ]
    for text in ok:
        parse_formula(text, DECLARED)
    bad = [
        "M**65",
        "(M**8)**9",
        "1000000000000000001",
        "0.123456789012345678",
        "(" * 41 + "M" + ")" * 41,
        "-" * 40 + "M",
        "+".join(["M"] * 201),
        "M" + " " * LIMITS.text_length,
    ]
    for text in bad:
        with pytest.raises(FormulaError):
            parse_formula(text, DECLARED)


def test_formula_error_is_a_value_error_and_pickles() -> None:
    """FormulaError is a ValueError and a RooflinecError; pickling keeps column and token."""
    with pytest.raises(FormulaError) as info:
        parse_formula("M + Z", DECLARED)
    error = info.value
    assert isinstance(error, ValueError)
    assert isinstance(error, RooflinecError)
    copy = pickle.loads(pickle.dumps(error))
    assert (error.message, error.column, error.token) == (copy.message, copy.column, copy.token)
    assert str(error) == str(copy)


def test_formula_pickles_after_use() -> None:
    """A used formula (cached closures, sympy expression) pickles and still evaluates."""
    formula = parse_formula("ceil(M/128)*128 + w", DECLARED)
    values: dict[str, int | Fraction] = {"M": 200, "w": Fraction(1, 2)}
    before = formula.evaluate(values)
    assert formula.expr is not None
    copy = pickle.loads(pickle.dumps(formula))
    assert formula == copy
    assert before == copy.evaluate(values)
    assert formula.latex() == copy.latex()


def test_non_string_text_is_a_type_error() -> None:
    """A number for the text, or one str for the symbols, is a programming error."""
    with pytest.raises(TypeError):
        parse_formula(42, DECLARED)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        parse_formula("Nb", "Nb")  # a str would declare N and b


# --------------------------------------------------------------------------- evaluation errors


def test_division_by_zero_names_the_divisor() -> None:
    """Division by zero is an EvaluationError pointing at the divisor."""
    formula = parse_formula("M/(N - K)", DECLARED)
    with pytest.raises(EvaluationError) as info:
        formula.evaluate({"M": 1, "N": 2, "K": 2})
    expected = ("division by zero: 'N - K' is 0", 3, "N - K")
    assert expected == (info.value.message, info.value.column, info.value.token)
    assert isinstance(info.value, ValueError)


def test_result_too_large_is_refused() -> None:
    """A result beyond 10**60 in magnitude is an EvaluationError; 10**60 itself is fine."""
    formula = parse_formula("M**64", DECLARED)
    assert Fraction(10**60) == parse_formula("M**6", DECLARED).evaluate({"M": 10**10})
    with pytest.raises(EvaluationError, match="larger than 10\\*\\*60"):
        formula.evaluate({"M": 10**18})
    with pytest.raises(EvaluationError, match="larger than 10\\*\\*60"):
        parse_formula("-M**7", DECLARED).evaluate({"M": 10**10})


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ({"M": 1}, "no value for symbol 'N'"),
        ({"M": 1, "N": 1.5}, "must be an int or a Fraction, not float"),
        ({"M": 1, "N": True}, "not bool"),
        ({"M": 1, "N": "2"}, "not str"),
    ],
)
def test_bad_values_are_evaluation_errors(values: dict[str, Any], words: str) -> None:
    """Missing, float, bool or text values are refused with the symbol's column."""
    formula = parse_formula("M + N", DECLARED)
    with pytest.raises(EvaluationError, match=words) as info:
        formula.evaluate(values)
    expected = (4, "N")
    assert expected == (info.value.column, info.value.token)


def test_evaluate_is_exact_with_ceil_and_fractions() -> None:
    """ceil rounds up exactly and a fractional width stays a Fraction."""
    formula = parse_formula("ceil(M/128)*128 + w*N", DECLARED)
    values: dict[str, int | Fraction] = {"M": 300, "N": 3, "w": Fraction(1, 2)}
    assert Fraction(771, 2) == formula.evaluate(values)


def test_bulk_evaluate_matches_evaluate() -> None:
    """bulk_evaluate gives, row by row, what evaluate gives."""
    formula = parse_formula("w*(M*K + K*N + M*N)/3", DECLARED)
    columns: dict[str, list[int | Fraction]] = {
        "M": [1, 2, 3, 4],
        "N": [5, 6, 7, 8],
        "K": [9, 10, 11, 12],
        "w": [Fraction(1, 2), 1, 2, Fraction(4, 3)],
        "unused": [0, 0, 0, 0],
    }
    rows = [{name: column[i] for name, column in columns.items()} for i in range(4)]
    assert [formula.evaluate(row) for row in rows] == bulk_evaluate(formula, columns)


def test_bulk_evaluate_edges() -> None:
    """Row errors carry the row; lengths must agree; constants repeat; no rows, no results."""
    formula = parse_formula("M/N", DECLARED)
    with pytest.raises(EvaluationError) as info:
        bulk_evaluate(formula, {"M": [1, 2, 3], "N": [1, 1, 0]})
    expected_row = 2
    assert expected_row == info.value.row
    with pytest.raises(EvaluationError, match="different lengths"):
        bulk_evaluate(formula, {"M": [1, 2], "N": [1]})
    with pytest.raises(EvaluationError, match="no column for symbol 'N'"):
        bulk_evaluate(formula, {"M": [1]})
    with pytest.raises(EvaluationError, match="not float"):
        bulk_evaluate(formula, {"M": [1], "N": [1.0]})  # type: ignore[list-item]
    assert [Fraction(1, 2)] * 3 == bulk_evaluate(parse_formula("1/2", []), {"M": [1, 2, 3]})
    no_rows: list[Fraction] = []
    assert no_rows == bulk_evaluate(formula, {"M": [], "N": []})


def test_bulk_evaluate_of_many_rows() -> None:
    """100,000 rows of the GEMM bytes formula, exactly (its speed is measured by the
    benchmark's compile rows, not here)."""
    formula = parse_formula("w*(M*K + K*N + M*N)", DECLARED)
    rows = 100_000
    columns: dict[str, list[int | Fraction]] = {
        "M": list(range(1, rows + 1)),
        "N": [8192] * rows,
        "K": [4096] * rows,
        "w": [Fraction(1, 2)] * rows,
    }
    result = bulk_evaluate(formula, columns)
    assert rows == len(result)
    assert Fraction(1 * 4096 + 4096 * 8192 + 1 * 8192, 2) == result[0]
    assert Fraction(rows * 4096 + 4096 * 8192 + rows * 8192, 2) == result[-1]


# --------------------------------------------------------------------------- no code runs


class CodeRan(BaseException):
    """Raised by the patched builtins; a BaseException so nothing can swallow it."""


@contextlib.contextmanager
def _booby_trapped_builtins(calls: list[object]) -> Iterator[None]:
    """eval, exec and __import__ raise CodeRan; compile works only to build an AST.

    Builtins are swapped by hand, not with monkeypatch: its own code may import
    between two patches, which would trip the trap outside the `try`.
    """
    real = {name: getattr(builtins, name) for name in ("eval", "exec", "__import__", "compile")}

    def trap(*args: object, **kwargs: object) -> None:
        calls.append(args[:1])
        raise CodeRan(args[:1])

    def ast_only_compile(source: Any, filename: Any, mode: Any, flags: int = 0, **kw: Any) -> Any:
        if not flags & ast.PyCF_ONLY_AST:
            trap(source)
        return real["compile"](source, filename, mode, flags, **kw)

    try:
        builtins.eval = trap
        builtins.exec = trap
        builtins.compile = ast_only_compile  # type: ignore[assignment]
        builtins.__import__ = trap  # type: ignore[assignment]
        yield
    finally:
        for name, value in real.items():
            setattr(builtins, name, value)


def test_no_code_runs_during_parse_or_evaluation() -> None:
    """With eval, exec, __import__ and non-AST compile booby-trapped, everything still works."""
    calls: list[object] = []
    refused: list[FormulaError] = []
    with _booby_trapped_builtins(calls):
        formulas = [
            parse_formula("w*(M*K + K*N)", DECLARED),
            parse_formula("ceil(M/128)*128 + max(N, 2) - floor(K/3)", DECLARED),
        ]
        for text, *_ in HOSTILE:
            # No pytest.raises in here: pytest's own machinery may import.
            try:
                parse_formula(text, DECLARED)
            except FormulaError as error:
                refused.append(error)
        values: dict[str, int | Fraction] = {"M": 300, "N": 1, "K": 7, "w": Fraction(1, 2)}
        results = [f.evaluate(values) for f in formulas]
        bulk = bulk_evaluate(formulas[1], {k: [v] for k, v in values.items()})
        tex = formulas[1].latex()
    no_calls: list[object] = []
    assert no_calls == calls
    assert len(HOSTILE) == len(refused)
    assert [Fraction(300 * 7 + 7 * 1, 2), Fraction(384)] == results
    assert [results[1]] == bulk
    assert tex.startswith(r"\left\lceil")


def test_parse_and_evaluate_do_not_import_sympy() -> None:
    """Parsing, evaluating and LaTeX work without importing sympy (it costs 0.5 s)."""
    code = (
        "import sys\n"
        "from rooflinec.formulas import parse_formula, bulk_evaluate\n"
        "f = parse_formula('2*M*N*K', ['M', 'N', 'K'])\n"
        "assert f.evaluate({'M': 2, 'N': 3, 'K': 4}) == 48\n"
        "assert bulk_evaluate(f, {'M': [2], 'N': [3], 'K': [4]}) == [48]\n"
        "assert f.latex() == '2 M N K'\n"
        "print('sympy' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env={"PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        check=True,
    )
    sympy_imported = "False"
    assert sympy_imported == out.stdout.strip()


# --------------------------------------------------------------------------- properties

SYMBOLS = ["M", "N", "K", "S", "E", "I", "w"]

# A tree is ("sym", name) | ("num", text, value) | ("neg", t) | ("pow", t, e)
# | ("bin", op, t, t) | ("call", name, (t, ...)). It is rendered to text with the
# fewest parentheses Python's precedence needs (plus some redundant ones at random)
# and evaluated independently, with Fractions, as the oracle.
Tree = tuple[Any, ...]

_leaves = st.one_of(
    st.sampled_from(SYMBOLS).map(lambda name: ("sym", name)),
    st.integers(0, 1000).map(lambda i: ("num", str(i), Fraction(i))),
    st.tuples(st.integers(0, 99), st.integers(0, 99)).map(
        lambda t: ("num", f"{t[0]}.{t[1]:02d}", Fraction(f"{t[0]}.{t[1]:02d}"))
    ),
)


def _extend(children: st.SearchStrategy[Tree]) -> st.SearchStrategy[Tree]:
    return st.one_of(
        st.tuples(st.just("bin"), st.sampled_from("+-*/"), children, children),
        st.tuples(st.just("neg"), children),
        st.tuples(st.just("pow"), children, st.integers(0, 3)),
        st.tuples(
            st.just("call"),
            st.sampled_from(["min", "max"]),
            st.lists(children, min_size=2, max_size=3).map(tuple),
        ),
        st.tuples(
            st.just("call"), st.sampled_from(["ceil", "floor"]), children.map(lambda c: (c,))
        ),
    )


trees = st.recursive(_leaves, _extend, max_leaves=12)

_PREC = {"+": 1, "-": 1, "*": 2, "/": 2}


def _render(tree: Tree, rnd: random.Random) -> tuple[str, int]:
    """Text for a tree and its precedence (1 sum, 2 product, 3 unary, 4 power, 5 atom)."""
    kind = tree[0]
    if kind in ("sym", "num"):
        text, prec = tree[1], 5
    elif kind == "call":
        text = f"{tree[1]}({', '.join(_render(arg, rnd)[0] for arg in tree[2])})"
        prec = 5
    elif kind == "neg":
        inner, inner_prec = _render(tree[1], rnd)
        text, prec = "-" + (f"({inner})" if inner_prec < 3 else inner), 3
    elif kind == "pow":
        base, base_prec = _render(tree[1], rnd)
        text, prec = (f"({base})" if base_prec <= 4 else base) + f"**{tree[2]}", 4
    else:
        op, p = tree[1], _PREC[tree[1]]
        left, left_prec = _render(tree[2], rnd)
        right, right_prec = _render(tree[3], rnd)
        if left_prec < p:
            left = f"({left})"
        if right_prec < p or (right_prec == p and op in "-/"):
            right = f"({right})"
        space = " " if rnd.random() < 0.5 else ""
        text, prec = f"{left}{space}{op}{space}{right}", p
    if rnd.random() < 0.15:
        return f"({text})", 5
    return text, prec


def _oracle(tree: Tree, env: dict[str, Fraction]) -> Fraction:
    """The exact value of a tree; ZeroDivisionError on division by zero."""
    kind = tree[0]
    if kind == "sym":
        return env[tree[1]]
    if kind == "num":
        return Fraction(tree[2])
    if kind == "neg":
        return -_oracle(tree[1], env)
    if kind == "pow":
        return Fraction(_oracle(tree[1], env) ** tree[2])
    if kind == "call":
        args = [_oracle(arg, env) for arg in tree[2]]
        funcs: dict[str, Callable[..., Any]] = {
            "min": min,
            "max": max,
            "ceil": math.ceil,
            "floor": math.floor,
        }
        return Fraction(funcs[tree[1]](*args))
    left, right = _oracle(tree[2], env), _oracle(tree[3], env)
    if tree[1] == "+":
        return left + right
    if tree[1] == "-":
        return left - right
    if tree[1] == "*":
        return left * right
    return left / right  # raises ZeroDivisionError on 0


def _power_overflow(tree: Tree, power: int = 1) -> bool:
    """Whether nested powers in the tree multiply beyond the allowed 64."""
    kind = tree[0]
    if kind == "pow":
        total = power * tree[2]
        return total > LIMITS.nested_exponent or _power_overflow(tree[1], max(total, 1))
    if kind in ("sym", "num"):
        return False
    children = tree[2] if kind == "call" else tree[1:] if kind == "neg" else tree[2:]
    return any(_power_overflow(child, power) for child in children)


_envs = st.fixed_dictionaries(
    {
        **{name: st.integers(1, 50).map(Fraction) for name in SYMBOLS if name != "w"},
        "w": st.sampled_from([Fraction(1, 2), Fraction(1), Fraction(2), Fraction(4)]),
    }
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=trees, env=_envs, rnd=st.randoms(use_true_random=False))
def test_random_formulas_match_an_exact_oracle_and_sympy(
    tree: Tree, env: dict[str, Fraction], rnd: random.Random
) -> None:
    """Random formulas from the grammar evaluate to the oracle's value and to sympy's subs."""
    import sympy

    text, _ = _render(tree, rnd)
    declared = [name for name in SYMBOLS if name != "w"]
    if _power_overflow(tree):
        with pytest.raises(FormulaError, match="nested powers"):
            parse_formula(text, declared)
        return
    formula = parse_formula(text, declared)
    values = {name: int(v) if v.denominator == 1 else v for name, v in env.items()}
    try:
        expected = _oracle(tree, env)
    except ZeroDivisionError:
        with pytest.raises(EvaluationError, match="division by zero"):
            formula.evaluate(values)
        return
    if abs(expected) > LIMITS.result:
        with pytest.raises(EvaluationError, match="larger than"):
            formula.evaluate(values)
        return
    result = formula.evaluate(values)
    assert expected == result
    assert [result] == bulk_evaluate(formula, {k: [v] for k, v in values.items()})
    substitution = {s: sympy.Rational(env[s.name]) for s in formula.expr.free_symbols}
    # xreplace puts every value in at once; sympy's `subs` re-evaluates the unevaluated
    # Min/Max after each symbol and can get them wrong: it gives 2 for
    # min(E, max(M, min(M, 0))) at E = 2, M = 1.
    assert (
        sympy.Rational(result.numerator, result.denominator)
        == formula.expr.xreplace(substitution).doit()
    )
    assert isinstance(formula.latex(), str)


def test_nested_min_max_agrees_with_sympy_at_a_point() -> None:
    """min(E, max(M, min(M, 0))) at E = 2, M = 1 is 1, evaluated and in sympy (xreplace)."""
    import sympy

    formula = parse_formula("min(E, max(M, min(M, 0)))", ["E", "M"])
    assert Fraction(1) == formula.evaluate({"E": 2, "M": 1})
    values = {s: sympy.Integer({"E": 2, "M": 1}[s.name]) for s in formula.expr.free_symbols}
    assert sympy.Integer(1) == formula.expr.xreplace(values).doit()


@settings(max_examples=500, deadline=None)
@given(text=st.text(max_size=120))
def test_arbitrary_text_raises_only_formula_error(text: str) -> None:
    """Any text either parses or raises FormulaError; nothing else escapes."""
    try:
        parse_formula(text, DECLARED)
    except FormulaError as error:
        assert 0 <= error.column <= len(text)


_FORMULA_CHARS = "MNKwZ0123456789._+-*/() ,\n\tminaxceflor"


@settings(max_examples=1000, deadline=None)
@given(text=st.text(alphabet=_FORMULA_CHARS, max_size=60))
def test_formula_like_text_parses_or_fails_cleanly(text: str) -> None:
    """Formula-like text parses (and then evaluates or raises EvaluationError) or is refused."""
    try:
        formula = parse_formula(text, DECLARED)
    except FormulaError as error:
        assert 0 <= error.column <= len(text)
        if error.token is not None:
            assert error.token == text[error.column : error.column + len(error.token)]
        return
    assert isinstance(formula, Formula)
    assert isinstance(formula.latex(), str)
    try:
        result = formula.evaluate({"M": 3, "N": 5, "K": 7, "w": Fraction(1, 2)})
    except EvaluationError:
        return
    assert isinstance(result, Fraction)
