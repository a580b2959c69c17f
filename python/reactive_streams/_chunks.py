"""Chunks: what a bulk publisher hands a subscriber that takes many elements in one signal
(``on_next_batch``), and what `iterate`'s buffer holds. A chunk is a list, or a `LazyChunk`
whose elements are made as it is iterated: rows made from columns one at a time are freed
as soon as the consumer is done with them, so a few thousand buffered rows do not wake the
garbage collector (which counts the containers alive) again and again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Generic, Protocol, TypeVar

__all__ = ["Chunk", "LazyChunk", "RowColumns"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Chunk(Protocol[T_co]):
    """A list, or a `LazyChunk`: sized, iterated once, and ``clear()`` ends an iteration under
    way (a cancel)."""

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[T_co]: ...

    def clear(self) -> None: ...


class LazyChunk(Generic[T]):
    """``length`` elements made by ``elements`` as it is iterated, once. ``stop`` is a list the
    elements are read from (a column, say): ``clear()`` empties it, which ends the iteration."""

    __slots__ = ("_elements", "_length", "_stop")

    def __init__(self, elements: Iterator[T], length: int, stop: list[Any]) -> None:
        self._elements = elements
        self._length = length
        self._stop = stop

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[T]:
        return self._elements

    def clear(self) -> None:
        self._stop.clear()


class RowColumns(Generic[T]):
    """Rows held as columns of Python values (which the garbage collector does not track when
    they are numbers and strings), handed out as `LazyChunk`s that make each row as it is
    iterated (``make`` of the row's values, a tuple). Each chunk reads slices of the columns of
    its own, so chunks are independent of each other and of this."""

    __slots__ = ("_at", "_columns", "_make")

    def __init__(self, columns: list[list[Any]], make: Callable[[tuple[Any, ...]], T]) -> None:
        self._columns = columns
        self._make = make
        self._at = 0

    def __len__(self) -> int:
        return len(self._columns[0]) - self._at

    def take(self, count: int) -> LazyChunk[T]:
        """The next ``count`` rows (at most `len`)."""
        at, self._at = self._at, self._at + count
        parts = [column[at : at + count] for column in self._columns]
        return LazyChunk(map(self._make, zip(*parts, strict=False)), len(parts[0]), parts[0])
