"""A grid case's values: lists and ranges per symbol, their count and order, never expanded.

A grid binds every symbol of its kernel to a list of whole numbers or to a range:
geometric (`{from: 1, to: 65536, times: 2}`: 1, 2, 4, ..., 65536) or arithmetic
(`{from: 128, to: 8192, step: 128}`). `to` is inclusive; when the sequence does not
hit it exactly, the last value is the largest one not above it (`{from: 1, to: 100,
times: 3}` is 1, 3, 9, 27, 81). A list is taken in ascending order, whatever order it
is written in.

The grid stands for the product of its axes in one fixed order: symbols in the
kernel's declared order, each axis's values ascending, the last symbol fastest (the
order of nested loops written in the kernel's symbol order, numpy's C order). Shape
number `i` of a grid is therefore found by mixed-radix division, without expanding
anything before it; `size` is the product of the axes' counts, computed exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

#: More shapes than this in one grid is refused (at the case, when the specs load).
MAX_GRID_SHAPES = 10**9


@dataclass(frozen=True)
class GridAxis:
    """One symbol's values: a list (`values`) or a range (`start`, `stop`, and `times` or
    `step`). `text` is how it was written, for the site and messages."""

    symbol: str
    text: str
    values: tuple[int, ...] = ()  # a list, ascending; empty for a range
    start: int = 0
    stop: int = 0
    times: int | None = None
    step: int | None = None

    @property
    def count(self) -> int:
        """How many values the axis has (exact, without listing them)."""
        if not self.is_range:
            return len(self.values)
        if self.start > self.stop:
            return 0
        if self.step is not None:
            return (self.stop - self.start) // self.step + 1
        assert self.times is not None
        n, value = 0, self.start
        while value <= self.stop:  # at most 50 rounds: values are <= 10^15, times >= 2
            n, value = n + 1, value * self.times
        return n

    @property
    def is_range(self) -> bool:
        return self.times is not None or self.step is not None

    def value_at(self, index: int) -> int:
        """The axis's `index`-th value (0-based, ascending)."""
        if not self.is_range:
            return self.values[index]
        if self.step is not None:
            return self.start + index * self.step
        assert self.times is not None
        value: int = self.start * self.times**index
        return value

    @property
    def first(self) -> int:
        return self.value_at(0)

    @property
    def last(self) -> int:
        return self.value_at(self.count - 1)

    def contains(self, value: int) -> bool:
        """Whether `value` is one of the axis's values."""
        if not self.is_range:
            return value in self.values
        if not self.start <= value <= self.stop:
            return False
        if self.step is not None:
            return (value - self.start) % self.step == 0
        assert self.times is not None
        current = self.start
        while current < value:
            current *= self.times
        return current == value

    def array(self, indices: NDArray[np.int64]) -> NDArray[np.int64]:
        """The values at `indices`, as int64 (every value is <= 10^15 < 2^63)."""
        import numpy as np  # here, not at the top: `check` loads grids without numpy

        if not self.is_range:
            return np.asarray(self.values, dtype=np.int64)[indices]
        if self.step is not None:
            return np.int64(self.start) + indices * np.int64(self.step)
        table = np.array([self.value_at(i) for i in range(self.count)], dtype=np.int64)
        return table[indices]


@dataclass(frozen=True)
class Grid:
    """A grid's axes in the kernel's symbol order."""

    axes: tuple[GridAxis, ...]

    @property
    def symbols(self) -> tuple[str, ...]:
        return tuple(axis.symbol for axis in self.axes)

    @property
    def size(self) -> int:
        """How many shapes the grid stands for: the product of the axes' counts."""
        size = 1
        for axis in self.axes:
            size *= axis.count
        return size

    def shape_at(self, index: int) -> dict[str, int]:
        """Shape number `index` (0-based) in the grid's order (the last symbol fastest)."""
        if not 0 <= index < self.size:
            raise IndexError(index)
        out: dict[str, int] = {}
        for axis in reversed(self.axes):
            index, rest = divmod(index, axis.count)
            out[axis.symbol] = axis.value_at(rest)
        return {axis.symbol: out[axis.symbol] for axis in self.axes}

    @property
    def first(self) -> dict[str, int]:
        """The first shape: every symbol at its smallest value."""
        return {axis.symbol: axis.first for axis in self.axes}

    @property
    def last(self) -> dict[str, int]:
        """The last shape: every symbol at its largest value."""
        return {axis.symbol: axis.last for axis in self.axes}

    def contains(self, shape: dict[str, int]) -> bool:
        return set(shape) == set(self.symbols) and all(
            axis.contains(shape[axis.symbol]) for axis in self.axes
        )

    def columns(self, start: int, stop: int) -> dict[str, NDArray[np.int64]]:
        """Shapes `start` .. `stop - 1` as one int64 array per symbol (no Python object
        per shape): the mixed-radix digits of each shape number, read as values."""
        import numpy as np  # here, not at the top: `check` loads grids without numpy

        index = np.arange(start, stop, dtype=np.int64)
        out: dict[str, NDArray[np.int64]] = {}
        for axis in reversed(self.axes):
            count = np.int64(axis.count)
            out[axis.symbol] = axis.array(index % count)
            index //= count
        return {axis.symbol: out[axis.symbol] for axis in self.axes}


def axis_text(raw: object) -> str:
    """An axis as written, in one line: `[1, 2, 4]`, `1 to 65536, ×2`, `128 to 8192, +128`."""
    if isinstance(raw, list):
        return "[" + ", ".join(f"{v:,}" for v in raw) + "]"
    if isinstance(raw, dict):
        start, stop = raw.get("from"), raw.get("to")
        if "times" in raw:
            return f"{start:,} to {stop:,}, ×{raw['times']:,}"
        return f"{start:,} to {stop:,}, +{raw.get('step'):,}"
    return str(raw)


__all__ = ["MAX_GRID_SHAPES", "Grid", "GridAxis", "axis_text"]
