"""Formula errors, refused when parsed or failing when evaluated, and how they quote tokens."""

from __future__ import annotations

from rooflinec.errors import RooflinecError


class FormulaError(RooflinecError, ValueError):
    """A formula that cannot be accepted, with the offending token and its column.

    `column` is a 0-based offset into the formula text, so a caller that knows where
    the YAML value starts can point at file:line:col. `token` is the offending text,
    or None when the problem concerns the whole formula (too long, empty).
    It is a `ValueError` for callers that only know the standard library and a
    `RooflinecError` so that an uncaught one is printed in one line by the CLI.
    """

    def __init__(self, message: str, column: int = 0, token: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.column = column
        self.token = token

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.message!r}, column={self.column}, token={self.token!r})"
        )

    def __reduce__(self) -> tuple[type[FormulaError], tuple[str, int, str | None]]:
        # The default reduce passes only `args` (the message): keep column and token.
        return (type(self), (self.message, self.column, self.token))


class EvaluationError(FormulaError):
    """A formula that parsed but cannot be evaluated with the given values.

    Division by zero (column and token name the divisor), a result larger than
    `LIMITS.result` in magnitude, a missing value or a value that is not an `int` or
    a `Fraction`. `row` is the 0-based row when raised by `bulk_evaluate`; it is set
    after construction and, like any `row`, does not survive pickling (the inherited
    `__reduce__` keeps message, column and token).
    """

    def __init__(
        self, message: str, column: int = 0, token: str | None = None, row: int | None = None
    ) -> None:
        super().__init__(message, column, token)
        self.row = row


def _shown(token: str) -> str:
    """A token as quoted in a message: repr-quoted, cut short if very long."""
    if len(token) > 40:
        token = token[:37] + "..."
    return repr(token)
