"""Aggregates: one element, then completion (`reduce`, `count`, `sum`, `min`, `max`, `average`,
`all`, `some`, `contains`, `element_at`, `first`, `last`, `to_list`), each on the `Aggregate` kit.

Each asks upstream for nothing until its answer is asked for, then for `CHUNK` elements at a
time (`first()` and `element_at(i)` for exactly the 1 and ``i + 1`` they need), folds lists in C
where Python has the fold (``sum``, ``min``, ``functools.reduce``, ``all``, ``in``), and
cancels upstream as soon as its answer is known. Where a stream has no answer (`max` of nothing,
`first` of nothing), it ends with `NoSuchElementError`, unless a ``default`` is given.
"""

from __future__ import annotations

import builtins
import functools
import operator as op
from collections.abc import Callable
from typing import Any, TypeVar, overload

from ._aggregate import Aggregate, AggregatePublisher
from ._api import MISSING, ListOperator, Operator, SameOperator, Subscriber, UnionOperator, fluent
from ._compose import operator
from ._demand import MAX_DEMAND
from ._errors import NoSuchElementError, NullElementError
from ._rules import describe, require_callable

__all__ = [
    "all",
    "average",
    "contains",
    "count",
    "element_at",
    "first",
    "last",
    "max",
    "min",
    "reduce",
    "some",
    "sum",
    "to_list",
]

T = TypeVar("T")
R = TypeVar("R")
D = TypeVar("D")


def _aggregate(name: str, make: Callable[[Subscriber[Any]], Aggregate[Any, Any]]) -> Operator[Any, Any]:
    return operator(name, lambda source: AggregatePublisher(source, make))


def _or_default(default: Any, error: str) -> Any:
    if default is MISSING:
        raise NoSuchElementError(error)
    return default


def _check_default(default: object, what: str) -> None:
    """Refuse ``default=None`` when it is given, not when an empty stream would signal it (§2.13)."""
    if default is None:
        raise NullElementError(f"§2.13: {what} needs a default that is not None: None is no element")


@overload
def reduce(function: Callable[[T, T], T]) -> Operator[T, T]: ...
@overload
def reduce(function: Callable[[R, T], R], initial: R) -> Operator[T, R]: ...
@fluent
def reduce(function: Callable[[Any, Any], Any], initial: object = MISSING) -> Operator[Any, Any]:
    """``((R, T) -> R, R) -> (Publisher[T] -> Publisher[R])``: the elements folded into one, as
    ``functools.reduce(function, elements, initial)``: lists fold in C, and only the accumulator
    is held. Without ``initial``, an empty stream ends with `NoSuchElementError`. Asks upstream
    in chunks of 1,024, once the answer is asked for."""
    require_callable(function, "reduce(function)")
    return _aggregate("reduce", lambda down: _Reduce(down, function, initial))


@fluent
def count() -> Operator[T, int]:
    """``() -> (Publisher[T] -> Publisher[int])``: how many elements the stream had."""
    return _aggregate("count", _Count)


@overload
def sum() -> UnionOperator[int]: ...
@overload
def sum(start: R) -> UnionOperator[R]: ...
@fluent
def sum(start: object = 0) -> Operator[Any, Any]:
    """``(R) -> (Publisher[T] -> Publisher[T | R])``: ``start`` plus every element, as the
    builtin ``sum(elements, start)``, one list at a time."""
    return _aggregate("sum", lambda down: _Sum(down, start))


@overload
def min() -> SameOperator: ...
@overload
def min(*, default: D) -> UnionOperator[D]: ...
@overload
def min(*, key: Callable[[T], Any]) -> Operator[T, T]: ...
@overload
def min(*, key: Callable[[T], Any], default: D) -> Operator[T, T | D]: ...
@fluent
def min(*, key: Callable[[Any], Any] | None = None, default: object = MISSING) -> Operator[Any, Any]:
    """``() -> (Publisher[T] -> Publisher[T])``: the smallest element (by ``key``), the first of
    equals, as the builtin ``min``; ``default`` for an empty stream, else `NoSuchElementError`."""
    _check_default(default, "min(default=)")
    return _aggregate("min", lambda down: _Extreme(down, key, default, builtins.min, op.lt, "min"))


@overload
def max() -> SameOperator: ...
@overload
def max(*, default: D) -> UnionOperator[D]: ...
@overload
def max(*, key: Callable[[T], Any]) -> Operator[T, T]: ...
@overload
def max(*, key: Callable[[T], Any], default: D) -> Operator[T, T | D]: ...
@fluent
def max(*, key: Callable[[Any], Any] | None = None, default: object = MISSING) -> Operator[Any, Any]:
    """``() -> (Publisher[T] -> Publisher[T])``: the largest element (by ``key``), the first of
    equals, as the builtin ``max``; ``default`` for an empty stream, else `NoSuchElementError`."""
    _check_default(default, "max(default=)")
    return _aggregate("max", lambda down: _Extreme(down, key, default, builtins.max, op.gt, "max"))


@fluent
def average() -> Operator[T, float]:
    """``() -> (Publisher[number] -> Publisher[float])``: the sum of the elements over their
    count; `NoSuchElementError` for an empty stream."""
    return _aggregate("average", _Average)


@fluent
def all(predicate: Callable[[T], object] | None = None) -> Operator[T, bool]:
    """``(T -> bool) -> (Publisher[T] -> Publisher[bool])``: whether ``predicate`` (truth, without
    one) holds for every element; upstream is cancelled at the first that fails it. True for an
    empty stream, as the builtin ``all``."""
    if predicate is not None:
        require_callable(predicate, "all(predicate)")
    return _aggregate("all", lambda down: _Every(down, predicate, True))


@fluent
def some(predicate: Callable[[T], object] | None = None) -> Operator[T, bool]:
    """``(T -> bool) -> (Publisher[T] -> Publisher[bool])``: whether ``predicate`` (truth, without
    one) holds for some element, as the builtin ``any``; upstream is cancelled at the first."""
    if predicate is not None:
        require_callable(predicate, "some(predicate)")
    return _aggregate("some", lambda down: _Every(down, predicate, False))


@fluent
def contains(value: object) -> Operator[T, bool]:
    """``(T) -> (Publisher[T] -> Publisher[bool])``: whether an element equals ``value`` (``in``);
    upstream is cancelled at the first that does."""
    return _aggregate("contains", lambda down: _Contains(down, value))


@overload
def element_at(index: int) -> SameOperator: ...
@overload
def element_at(index: int, *, default: D) -> UnionOperator[D]: ...
@fluent
def element_at(index: int, *, default: object = MISSING) -> Operator[Any, Any]:
    """``(int) -> (Publisher[T] -> Publisher[T])``: the element at ``index`` (from 0). Asks
    upstream for exactly ``index + 1`` elements and cancels it at that one; a shorter stream
    gives ``default``, else `NoSuchElementError`.

    Raises:
        TypeError, ValueError: ``index`` is not an int >= 0.
    """
    if isinstance(index, bool) or not isinstance(index, int):
        raise TypeError(f"element_at(index) needs an int, got {describe(index)}")
    if index < 0:
        raise ValueError(f"element_at(index) needs index >= 0, got {index}")
    _check_default(default, "element_at(default=)")
    return _aggregate("element_at", lambda down: _ElementAt(down, index, default))


@overload
def first() -> SameOperator: ...
@overload
def first(*, default: D) -> UnionOperator[D]: ...
@overload
def first(predicate: Callable[[T], object]) -> Operator[T, T]: ...
@overload
def first(predicate: Callable[[T], object], *, default: D) -> Operator[T, T | D]: ...
@fluent
def first(
    predicate: Callable[[Any], object] | None = None, *, default: object = MISSING
) -> Operator[Any, Any]:
    """``() -> (Publisher[T] -> Publisher[T])``: the first element (for which ``predicate`` holds).
    Without a predicate it asks upstream for exactly 1 and cancels it once that arrives; with
    one, in chunks, cancelling at the match. No such element: ``default``, else
    `NoSuchElementError`."""
    if predicate is not None:
        require_callable(predicate, "first(predicate)")
    _check_default(default, "first(default=)")
    return _aggregate("first", lambda down: _First(down, predicate, default))


@overload
def last() -> SameOperator: ...
@overload
def last(*, default: D) -> UnionOperator[D]: ...
@fluent
def last(*, default: object = MISSING) -> Operator[Any, Any]:
    """``() -> (Publisher[T] -> Publisher[T])``: the last element, once the stream completes; an
    empty one gives ``default``, else `NoSuchElementError`."""
    _check_default(default, "last(default=)")
    return _aggregate("last", lambda down: _Last(down, default))


@fluent
def to_list() -> ListOperator:
    """``() -> (Publisher[T] -> Publisher[list[T]])``: every element, in one list, once the
    stream completes (the list is the only thing held)."""
    return _aggregate("to_list", _ToList)


class _Reduce(Aggregate[Any, Any]):
    def __init__(
        self, downstream: Subscriber[Any], function: Callable[[Any, Any], Any], initial: Any
    ) -> None:
        super().__init__(downstream)
        self._function, self._value = function, initial

    def _fold(self, item: Any) -> bool:
        value = self._value
        self._value = item if value is MISSING else self._function(value, item)
        return False

    def _fold_batch(self, items: list[Any]) -> bool:
        value = self._value
        if value is MISSING:
            self._value = functools.reduce(self._function, items)
        else:
            self._value = functools.reduce(self._function, items, value)
        return False

    def _answer(self) -> Any:
        return _or_default(self._value, "reduce(function) of an empty stream, with no initial value")


class _Count(Aggregate[Any, int]):
    def __init__(self, downstream: Subscriber[int]) -> None:
        super().__init__(downstream)
        self._count = 0

    def _fold(self, item: Any) -> bool:
        self._count += 1
        return False

    def _fold_batch(self, items: list[Any]) -> bool:
        self._count += len(items)
        return False

    def _answer(self) -> int:
        return self._count


class _Sum(Aggregate[Any, Any]):
    def __init__(self, downstream: Subscriber[Any], start: Any) -> None:
        super().__init__(downstream)
        self._total = start

    def _fold(self, item: Any) -> bool:
        self._total = self._total + item
        return False

    def _fold_batch(self, items: list[Any]) -> bool:
        self._total = builtins.sum(items, self._total)
        return False

    def _answer(self) -> Any:
        return self._total


class _Average(_Sum):
    def __init__(self, downstream: Subscriber[Any]) -> None:
        super().__init__(downstream, 0)
        self._count = 0

    def _fold(self, item: Any) -> bool:
        self._count += 1
        return super()._fold(item)

    def _fold_batch(self, items: list[Any]) -> bool:
        self._count += len(items)
        return super()._fold_batch(items)

    def _answer(self) -> float:
        if not self._count:
            raise NoSuchElementError("average() of an empty stream")
        return self._total / self._count  # type: ignore[no-any-return]


class _Extreme(Aggregate[Any, Any]):
    def __init__(
        self,
        downstream: Subscriber[Any],
        key: Callable[[Any], Any] | None,
        default: Any,
        pick: Callable[..., Any],
        better: Callable[[Any, Any], Any],
        name: str,
    ) -> None:
        super().__init__(downstream)
        self._key, self._default, self._pick, self._better, self._name = key, default, pick, better, name
        self._best: Any = MISSING
        self._best_key: Any = None

    def _fold(self, item: Any) -> bool:
        key = item if self._key is None else self._key(item)
        if self._best is MISSING or self._better(key, self._best_key):  # strictly: the first of equals
            self._best, self._best_key = item, key
        return False

    def _fold_batch(self, items: list[Any]) -> bool:
        return self._fold(self._pick(items) if self._key is None else self._pick(items, key=self._key))

    def _answer(self) -> Any:
        if self._best is MISSING:
            return _or_default(self._default, f"{self._name}() of an empty stream, with no default")
        return self._best


class _Every(Aggregate[Any, bool]):
    """`all` (``every`` True: the answer is False at the first that fails) and `some` (False:
    True at the first that passes)."""

    def __init__(self, downstream: Subscriber[bool], predicate: Callable[[Any], object] | None, every: bool):
        super().__init__(downstream)
        self._predicate, self._every = predicate, every
        self._result = every

    def _fold(self, item: Any) -> bool:
        holds = bool(item if self._predicate is None else self._predicate(item))
        if holds is not self._every:
            self._result = not self._every
            return True
        return False

    def _fold_batch(self, items: list[Any]) -> bool:
        values = items if self._predicate is None else builtins.map(self._predicate, items)
        decided = not builtins.all(values) if self._every else builtins.any(values)
        if decided:
            self._result = not self._every
        return decided

    def _answer(self) -> bool:
        return self._result


class _Contains(Aggregate[Any, bool]):
    def __init__(self, downstream: Subscriber[bool], value: object) -> None:
        super().__init__(downstream)
        self._value = value
        self._found = False

    def _fold(self, item: Any) -> bool:
        self._found = item is self._value or bool(item == self._value)  # as `in` compares
        return self._found

    def _fold_batch(self, items: list[Any]) -> bool:
        self._found = self._value in items
        return self._found

    def _answer(self) -> bool:
        return self._found


class _ElementAt(Aggregate[Any, Any]):
    def __init__(self, downstream: Subscriber[Any], index: int, default: Any) -> None:
        super().__init__(downstream, builtins.min(index + 1, MAX_DEMAND), replenish=False)
        self._index, self._default = index, default
        self._seen = 0
        self._element: Any = MISSING

    def _fold(self, item: Any) -> bool:
        if self._seen == self._index:
            self._element = item
            return True
        self._seen += 1
        return False

    def _fold_batch(self, items: list[Any]) -> bool:
        at = self._index - self._seen
        if at < len(items):
            self._element = items[at]
            return True
        self._seen += len(items)
        return False

    def _answer(self) -> Any:
        if self._element is MISSING:
            return _or_default(
                self._default, f"element_at({self._index}): the stream ended after {self._seen} elements"
            )
        return self._element


class _First(Aggregate[Any, Any]):
    def __init__(self, downstream: Subscriber[Any], predicate: Callable[[Any], object] | None, default: Any):
        if predicate is None:
            super().__init__(downstream, 1, replenish=False)  # exactly what the answer needs
        else:
            super().__init__(downstream)
        self._predicate, self._default = predicate, default
        self._element: Any = MISSING

    def _fold(self, item: Any) -> bool:
        if self._predicate is None or self._predicate(item):
            self._element = item
            return True
        return False

    def _fold_batch(self, items: list[Any]) -> bool:
        found = (
            items[0] if self._predicate is None else next(builtins.filter(self._predicate, items), MISSING)
        )
        self._element = found
        return found is not MISSING

    def _answer(self) -> Any:
        if self._element is MISSING:
            what = "was empty" if self._predicate is None else "had no element that matched"
            return _or_default(self._default, f"first(): the stream {what}, and there is no default")
        return self._element


class _Last(Aggregate[Any, Any]):
    def __init__(self, downstream: Subscriber[Any], default: Any) -> None:
        super().__init__(downstream)
        self._default = default
        self._element: Any = MISSING

    def _fold(self, item: Any) -> bool:
        self._element = item
        return False

    def _fold_batch(self, items: list[Any]) -> bool:
        self._element = items[-1]
        return False

    def _answer(self) -> Any:
        if self._element is MISSING:
            return _or_default(self._default, "last(): the stream was empty, and there is no default")
        return self._element


class _ToList(Aggregate[Any, list[Any]]):
    def __init__(self, downstream: Subscriber[list[Any]]) -> None:
        super().__init__(downstream)
        self._elements: list[Any] = []

    def _fold(self, item: Any) -> bool:
        self._elements.append(item)
        return False

    def _fold_batch(self, items: list[Any]) -> bool:
        self._elements.extend(items)
        return False

    def _answer(self) -> list[Any]:
        return self._elements
