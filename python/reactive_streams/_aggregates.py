"""Aggregates that fold the whole stream: one element, then completion (`reduce`, `count`,
`sum`, `min`, `max`, `average`, `last`, `to_list`), each on the `Aggregate` kit; those whose
answer can come early are in ``_lookups``.

Each asks upstream for nothing until its answer is asked for, then for `CHUNK` elements at a
time, and folds lists in C where Python has the fold (``sum``, ``min``, ``functools.reduce``).
Where a stream has no answer (`max` of nothing), it ends with `NoSuchElementError`, unless a
``default`` is given.
"""

from __future__ import annotations

import builtins
import functools
import operator as op
from collections.abc import Callable
from typing import Any, TypeVar, overload

from ._aggregate import Aggregate, aggregate, check_default, or_default
from ._api import Subscriber
from ._errors import NoSuchElementError
from ._fluent import MISSING, fluent
from ._operator_types import ListOperator, Operator, SameOperator, UnionOperator
from ._rules import require_callable

__all__ = ["average", "count", "last", "max", "min", "reduce", "sum", "to_list"]

T = TypeVar("T")
R = TypeVar("R")
D = TypeVar("D")


@overload
def reduce(function: Callable[[T, T], T]) -> Operator[T, T]: ...
@overload
def reduce(function: Callable[[R, T], R], initial: R) -> Operator[T, R]: ...
@fluent
def reduce(function: Callable[[Any, Any], Any], initial: object = MISSING) -> Operator[Any, Any]:
    """``((R, T) -> R, R) -> (Publisher[T] -> Publisher[R])``: the elements folded into one, as
    ``functools.reduce(function, elements, initial)``: lists fold in C, and only the accumulator
    is held. Without ``initial``, an empty stream ends with `NoSuchElementError`. Asks upstream
    in chunks of 1,024, once the answer is asked for.

    Asks upstream for nothing until the answer is asked for, then 1,024 at a time; cancels
    upstream only when downstream does (§3.12). The answer goes out once requested (§1.1); an
    exception from ``function`` cancels upstream, then ``on_error`` (§2.13); a §3.9 request
    cancels upstream and is signalled (§3.9).
    """
    require_callable(function, "reduce(function)")
    return aggregate("reduce", lambda down: _Reduce(down, function, initial))


@fluent
def count() -> Operator[T, int]:
    """``() -> (Publisher[T] -> Publisher[int])``: how many elements the stream had.

    Asks upstream for nothing until the answer is asked for, then 1,024 at a time; the answer
    goes out once requested (§1.1). A cancel reaches upstream (§3.12); a §3.9 request cancels
    upstream and is signalled (§3.9).
    """
    return aggregate("count", _Count)


@overload
def sum() -> UnionOperator[int]: ...
@overload
def sum(start: R) -> UnionOperator[R]: ...
@fluent
def sum(start: object = 0) -> Operator[Any, Any]:
    """``(R) -> (Publisher[T] -> Publisher[T | R])``: ``start`` plus every element, as the
    builtin ``sum(elements, start)``, one list at a time.

    Asks upstream for nothing until the answer is asked for, then 1,024 at a time; the answer
    goes out once requested (§1.1). A cancel reaches upstream (§3.12); an exception from ``+``
    cancels upstream, then ``on_error`` (§2.13); a §3.9 request cancels upstream and is
    signalled (§3.9).
    """
    return aggregate("sum", lambda down: _Sum(down, start))


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
    equals, as the builtin ``min``; ``default`` for an empty stream, else `NoSuchElementError`.

    Asks upstream for nothing until the answer is asked for, then 1,024 at a time; the answer
    goes out once requested (§1.1). A cancel reaches upstream (§3.12); an exception from ``key``
    or a comparison cancels upstream, then ``on_error`` (§2.13); a §3.9 request cancels upstream
    and is signalled (§3.9).
    """
    check_default(default, "min(default=)")
    return aggregate("min", lambda down: _Extreme(down, key, default, builtins.min, op.lt, "min"))


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
    equals, as the builtin ``max``; ``default`` for an empty stream, else `NoSuchElementError`.

    Asks upstream for nothing until the answer is asked for, then 1,024 at a time; the answer
    goes out once requested (§1.1). A cancel reaches upstream (§3.12); an exception from ``key``
    or a comparison cancels upstream, then ``on_error`` (§2.13); a §3.9 request cancels upstream
    and is signalled (§3.9).
    """
    check_default(default, "max(default=)")
    return aggregate("max", lambda down: _Extreme(down, key, default, builtins.max, op.gt, "max"))


@fluent
def average() -> Operator[T, float]:
    """``() -> (Publisher[number] -> Publisher[float])``: the sum of the elements over their
    count; `NoSuchElementError` for an empty stream.

    Asks upstream for nothing until the answer is asked for, then 1,024 at a time; the answer
    goes out once requested (§1.1). A cancel reaches upstream (§3.12); a §3.9 request cancels
    upstream and is signalled (§3.9).
    """
    return aggregate("average", _Average)


@overload
def last() -> SameOperator: ...
@overload
def last(*, default: D) -> UnionOperator[D]: ...
@fluent
def last(*, default: object = MISSING) -> Operator[Any, Any]:
    """``() -> (Publisher[T] -> Publisher[T])``: the last element, once the stream completes; an
    empty one gives ``default``, else `NoSuchElementError`.

    Asks upstream for nothing until the answer is asked for, then 1,024 at a time; the answer
    goes out once requested (§1.1). A cancel reaches upstream (§3.12); a §3.9 request cancels
    upstream and is signalled (§3.9).
    """
    check_default(default, "last(default=)")
    return aggregate("last", lambda down: _Last(down, default))


@fluent
def to_list() -> ListOperator:
    """``() -> (Publisher[T] -> Publisher[list[T]])``: every element, in one list, once the
    stream completes (the list is the only thing held).

    Asks upstream for nothing until the answer is asked for, then 1,024 at a time; the list goes
    out once requested (§1.1). A cancel reaches upstream (§3.12); a §3.9 request cancels
    upstream and is signalled (§3.9).
    """
    return aggregate("to_list", _ToList)


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
        return or_default(self._value, "reduce(function) of an empty stream, with no initial value")


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
            return or_default(self._default, f"{self._name}() of an empty stream, with no default")
        return self._best


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
            return or_default(self._default, "last(): the stream was empty, and there is no default")
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
