r"""Aggregates whose answer can come before the end (`all`, `some`, `contains`, `element_at`,
`first`): each cancels upstream as soon as its answer is known, on the `Aggregate` kit.

`first()` and `element_at(i)` ask upstream for exactly the 1 and ``i + 1`` elements they need;
the others ask in `CHUNK`\ s, as every aggregate does. Lists are searched in C where Python has
the search (``all``, ``any``, ``in``, ``filter``).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any, TypeVar, overload

from ._aggregate import Aggregate, aggregate, check_default, or_default
from ._api import Subscriber
from ._demand import MAX_DEMAND
from ._fluent import MISSING, fluent
from ._operator_types import Operator, SameOperator, UnionOperator
from ._rules import describe, require_callable

__all__ = ["all", "contains", "element_at", "first", "some"]

T = TypeVar("T")
D = TypeVar("D")


@fluent
def all(predicate: Callable[[T], object] | None = None) -> Operator[T, bool]:
    """``(T -> bool) -> (Publisher[T] -> Publisher[bool])``: whether ``predicate`` (truth, without
    one) holds for every element; upstream is cancelled at the first that fails it. True for an
    empty stream, as the builtin ``all``.

    Asks upstream for nothing until the answer is asked for, then 1,024 at a time, and cancels
    it at the answer (§3.12); the answer goes out once requested (§1.1). An exception from
    ``predicate`` cancels upstream, then ``on_error`` (§2.13); a §3.9 request cancels upstream
    and is signalled (§3.9).
    """
    if predicate is not None:
        require_callable(predicate, "all(predicate)")
    return aggregate("all", lambda down: _Every(down, predicate, True))


@fluent
def some(predicate: Callable[[T], object] | None = None) -> Operator[T, bool]:
    """``(T -> bool) -> (Publisher[T] -> Publisher[bool])``: whether ``predicate`` (truth, without
    one) holds for some element, as the builtin ``any``; upstream is cancelled at the first.

    Asks upstream for nothing until the answer is asked for, then 1,024 at a time, and cancels
    it at the answer (§3.12); the answer goes out once requested (§1.1). An exception from
    ``predicate`` cancels upstream, then ``on_error`` (§2.13); a §3.9 request cancels upstream
    and is signalled (§3.9).
    """
    if predicate is not None:
        require_callable(predicate, "some(predicate)")
    return aggregate("some", lambda down: _Every(down, predicate, False))


@fluent
def contains(value: object) -> Operator[T, bool]:
    """``(T) -> (Publisher[T] -> Publisher[bool])``: whether an element equals ``value`` (``in``);
    upstream is cancelled at the first that does.

    Asks upstream for nothing until the answer is asked for, then 1,024 at a time, and cancels
    it at the first match (§3.12); the answer goes out once requested (§1.1); a §3.9 request
    cancels upstream and is signalled (§3.9).
    """
    return aggregate("contains", lambda down: _Contains(down, value))


@overload
def element_at(index: int) -> SameOperator: ...


@overload
def element_at(index: int, *, default: D) -> UnionOperator[D]: ...


@fluent
def element_at(index: int, *, default: object = MISSING) -> Operator[Any, Any]:
    """``(int) -> (Publisher[T] -> Publisher[T])``: the element at ``index`` (from 0). Asks
    upstream for exactly ``index + 1`` elements and cancels it at that one; a shorter stream
    gives ``default``, else `NoSuchElementError`.

    Nothing is asked until the answer is; the answer goes out once requested (§1.1); a §3.9
    request cancels upstream and is signalled (§3.9).

    Raises:
        TypeError, ValueError: ``index`` is not an int >= 0.
    """
    if isinstance(index, bool) or not isinstance(index, int):
        raise TypeError(f"element_at(index) needs an int, got {describe(index)}")
    if index < 0:
        raise ValueError(f"element_at(index) needs index >= 0, got {index}")
    check_default(default, "element_at(default=)")
    return aggregate("element_at", lambda down: _ElementAt(down, index, default))


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
    `NoSuchElementError`.

    Nothing is asked until the answer is; the answer goes out once requested (§1.1); an
    exception from ``predicate`` cancels upstream, then ``on_error`` (§2.13); a §3.9 request
    cancels upstream and is signalled (§3.9).
    """
    if predicate is not None:
        require_callable(predicate, "first(predicate)")
    check_default(default, "first(default=)")
    return aggregate("first", lambda down: _First(down, predicate, default))


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
            return or_default(
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
            return or_default(self._default, f"first(): the stream {what}, and there is no default")
        return self._element
