"""Sources one after another, on the `Arbiter`: `start_with`, `end_with`, `prepend`, `append`,
`switch_if_empty` and `default_if_empty`.

Each source is subscribed when the one before completes and asked for exactly the demand still
outstanding; nothing is buffered, and lists pass on as lists. An error from any source ends the
stream with it, and a cancel reaches the source subscribed then (§3.5).
"""

from __future__ import annotations

from typing import Any, TypeVar

from ._api import Publisher, Subscriber
from ._arbiter import Arbiter, ArbiterPublisher
from ._compose import operator
from ._fluent import fluent
from ._iterable import from_iterable
from ._operator_types import UnionOperator
from ._rules import require_not_none, require_publisher

__all__ = [
    "SequencePublisher",
    "append",
    "default_if_empty",
    "end_with",
    "prepend",
    "start_with",
    "switch_if_empty",
]

T = TypeVar("T")
R = TypeVar("R")


def _values(values: tuple[Any, ...], what: str) -> Publisher[Any]:
    for value in values:
        require_not_none(value, f"a value of {what}", "§2.13")
    return from_iterable(values)


def _publishers(publishers: tuple[Any, ...], what: str) -> tuple[Publisher[Any], ...]:
    for publisher in publishers:
        require_publisher(publisher, what)
    return publishers


@fluent
def start_with(*values: R) -> UnionOperator[R]:
    """``(R...) -> (Publisher[T] -> Publisher[T | R])``: ``values`` first, then the source's
    elements. The source is subscribed once the values are out, asked for the demand left.

    Asks the source for exactly the demand left once the values are out (§1.1); a cancel reaches
    whichever is subscribed then (§3.12); a §3.9 request is signalled (§3.9).
    """
    first = _values(values, "start_with(*values)")
    return operator("start_with", lambda source: SequencePublisher((first, source)) if values else source)


@fluent
def end_with(*values: R) -> UnionOperator[R]:
    """``(R...) -> (Publisher[T] -> Publisher[T | R])``: the source's elements, then ``values``
    once it completes (after an error, not).

    Asks the source for the demand as it comes, and the values go out within the demand left
    (§1.1); a cancel reaches the source (§3.12); a §3.9 request is signalled (§3.9).
    """
    last = _values(values, "end_with(*values)")
    return operator("end_with", lambda source: SequencePublisher((source, last)) if values else source)


@fluent
def prepend(*publishers: Publisher[R]) -> UnionOperator[R]:
    """``(Publisher[R]...) -> (Publisher[T] -> Publisher[T | R])``: each of ``publishers``' elements
    in turn, then the source's (rs's ``Prepend``): each is subscribed when the one before
    completes.

    Each publisher is asked for exactly the demand outstanding when it is subscribed (§1.1); a
    cancel reaches the one subscribed then (§3.12); a §3.9 request is signalled (§3.9).
    """
    before = _publishers(publishers, "prepend(*publishers)")
    return operator("prepend", lambda source: SequencePublisher((*before, source)))


@fluent
def append(*publishers: Publisher[R]) -> UnionOperator[R]:
    """``(Publisher[R]...) -> (Publisher[T] -> Publisher[T | R])``: the source's elements, then
    each of ``publishers``' in turn (rs's ``Append``).

    Each publisher is asked for exactly the demand outstanding when it is subscribed (§1.1); a
    cancel reaches the one subscribed then (§3.12); a §3.9 request is signalled (§3.9).
    """
    after = _publishers(publishers, "append(*publishers)")
    return operator("append", lambda source: SequencePublisher((source, *after)))


@fluent
def switch_if_empty(publisher: Publisher[R]) -> UnionOperator[R]:
    """``Publisher[R] -> (Publisher[T] -> Publisher[T | R])``: the source's elements; if it
    completes without one, ``publisher``'s instead (rs's ``IfEmpty``), asked for the demand
    outstanding.

    The source is asked for the demand as it comes; the fallback, for exactly the demand
    outstanding (§1.1). A cancel reaches whichever is subscribed (§3.12); a §3.9 request is
    signalled (§3.9).
    """
    require_publisher(publisher, "switch_if_empty(publisher)")
    return operator("switch_if_empty", lambda source: _IfEmptyPublisher(source, publisher))


@fluent
def default_if_empty(*values: R) -> UnionOperator[R]:
    """``(R...) -> (Publisher[T] -> Publisher[T | R])``: the source's elements; if it completes
    without one, ``values`` instead.

    The source is asked for the demand as it comes; the values go out within the demand
    outstanding (§1.1). A cancel reaches the source (§3.12); a §3.9 request is signalled (§3.9).

    Raises:
        ValueError: no value given. NullElementError: a value is None.
    """
    if not values:
        raise ValueError("default_if_empty(*values) needs at least one value")
    fallback = _values(values, "default_if_empty(*values)")
    return operator("default_if_empty", lambda source: _IfEmptyPublisher(source, fallback))


class SequencePublisher(ArbiterPublisher[T]):
    """The elements of ``publishers``, one publisher after another, none buffered."""

    __slots__ = ("_publishers",)

    def __init__(self, publishers: tuple[Publisher[Any], ...]) -> None:
        self._publishers = publishers

    def _arbiter(self, downstream: Subscriber[T]) -> Arbiter[T]:
        return _InTurn(downstream, self._publishers)


class _InTurn(Arbiter[T]):
    def __init__(self, downstream: Subscriber[T], publishers: tuple[Publisher[Any], ...]) -> None:
        super().__init__(downstream)
        self._publishers = publishers
        self._index = 0

    def _first(self) -> Publisher[Any] | None:
        return self._publishers[0] if self._publishers else None

    def _after_complete(self) -> Publisher[Any] | None:
        self._index += 1
        return self._publishers[self._index] if self._index < len(self._publishers) else None


class _IfEmptyPublisher(ArbiterPublisher[T]):
    __slots__ = ("_fallback", "_source")

    def __init__(self, source: Publisher[Any], fallback: Publisher[Any]) -> None:
        self._source, self._fallback = source, fallback

    def _arbiter(self, downstream: Subscriber[T]) -> Arbiter[T]:
        return _IfEmpty(downstream, self._source, self._fallback)


class _IfEmpty(Arbiter[T]):
    def __init__(self, downstream: Subscriber[T], source: Publisher[Any], fallback: Publisher[Any]) -> None:
        super().__init__(downstream)
        self._source: Publisher[Any] | None = source
        self._fallback: Publisher[Any] | None = fallback

    def _first(self) -> Publisher[Any] | None:
        source, self._source = self._source, None
        return source

    def _after_complete(self) -> Publisher[Any] | None:
        fallback, self._fallback = self._fallback, None  # once: the fallback's end is the end
        return fallback if self.delivered == 0 else None
