"""Operators that count elements: take, skip and batch (built on ``_operators``' base)."""

from __future__ import annotations

import threading
from typing import Any, TypeVar

from ._api import Publisher, Subscriber, Subscription
from ._compose import operator
from ._demand import add_capped, check_request, multiply_capped
from ._errors import IllegalDemandError
from ._fluent import fluent
from ._operator_types import ListOperator, SameOperator
from ._operators import CANCELLED, OperatorPublisher, OperatorSubscriber

__all__ = ["BatchPublisher", "SkipPublisher", "TakePublisher", "batch", "skip", "take"]

T = TypeVar("T")


@fluent
def take(count: int) -> SameOperator:
    """``int -> (Publisher[T] -> Publisher[T])``: the first ``count`` elements; upstream is
    cancelled before the last goes out, then the stream completes. Never asks upstream for more
    than ``count`` in all.

    A §3.9 request is signalled, even after the last element went out (§3.9); a cancel passes
    upstream (§3.12).

    Raises:
        TypeError, ValueError: ``count`` is not an int >= 0.
    """
    _check_count(count, "take")
    return operator("take", lambda source: TakePublisher(source, count))


@fluent
def skip(count: int) -> SameOperator:
    """``int -> (Publisher[T] -> Publisher[T])``: the elements after the first ``count``; the
    first request upstream is raised by ``count`` (§3.17: capped).

    Cancel passes upstream at once (§3.12, §3.13); a §3.9 request is passed up and signalled
    (§3.9).

    Raises:
        TypeError, ValueError: ``count`` is not an int >= 0.
    """
    _check_count(count, "skip")
    return operator("skip", lambda source: SkipPublisher(source, count))


@fluent
def batch(size: int) -> ListOperator:
    """``int -> (Publisher[T] -> Publisher[list[T]])``: lists of ``size`` elements (the last may
    be shorter); a request for ``n`` lists asks upstream for ``n * size`` elements.

    Cancel passes upstream at once (§3.12, §3.13); a §3.9 request is passed up and signalled
    (§3.9); a short last list goes out within the demand (§1.1).

    Raises:
        TypeError, ValueError: ``size`` is not an int >= 1.
    """
    if _check_count(size, "batch") == 0:
        raise ValueError("batch(size) needs size >= 1, got 0")
    return operator("batch", lambda source: BatchPublisher(source, size))


def _positive_or_none(n: Any) -> int | None:
    """``n`` as a plain positive int (an int subclass too: JPype's, numpy's), or None when the
    request is illegal and must go upstream as it is, to be signalled there (§3.9)."""
    if n.__class__ is int:
        return n if n > 0 else None
    checked = check_request(n)
    return None if isinstance(checked, IllegalDemandError) else checked


def _check_count(count: int, operator: str) -> int:
    if isinstance(count, bool) or not isinstance(count, int):
        raise TypeError(f"{operator}(count) needs an int, got {count!r}")
    if count < 0:
        raise ValueError(f"{operator}(count) needs count >= 0, got {count}")
    return count


class TakePublisher(OperatorPublisher[T, T]):
    """``publisher.take(count)``."""

    __slots__ = ("_count",)

    def __init__(self, source: Publisher[T], count: int) -> None:
        super().__init__(source)
        self._count = _check_count(count, "take")

    def _operator(self, downstream: Subscriber[T]) -> Subscriber[T]:
        return _TakeSubscriber(downstream, self._count)


class _TakeSubscriber(OperatorSubscriber[T, T]):
    __slots__ = ("_invalid", "_lock", "_remaining", "_unrequested")

    def __init__(self, downstream: Subscriber[T], count: int) -> None:
        super().__init__(downstream)
        self._remaining = count  # elements still to deliver
        self._unrequested = count  # elements not yet asked of upstream
        self._invalid: IllegalDemandError | None = None  # §3.9 during the last on_next
        self._lock = threading.Lock()

    def on_subscribe(self, subscription: Subscription) -> None:
        super().on_subscribe(subscription)
        if self._remaining == 0 and self._upstream is subscription:
            self._stop(None)

    def request(self, n: int) -> None:
        upstream = self._upstream
        if upstream is None or self._done:
            return
        demand = _positive_or_none(n)
        if demand is None:
            with self._lock:
                if self._remaining == 0:  # the last on_next is out and upstream cancelled:
                    if self._invalid is None:  # §3.9 goes out in place of on_complete
                        checked = check_request(n)
                        self._invalid = checked if isinstance(checked, IllegalDemandError) else None
                    return
            upstream.request(n)  # §3.9, signalled by upstream
            return
        with self._lock:
            grant = min(demand, self._unrequested)
            self._unrequested -= grant
        if grant:
            upstream.request(grant)  # never more than count in total

    def on_next(self, item: T) -> None:
        if self._done:
            return
        with self._lock:
            self._remaining -= 1
            last = self._remaining == 0
        if last:
            self._cancel_upstream()
        self._emit(item)
        if last:
            self._complete()

    def on_next_batch(self, items: list[T]) -> None:
        """The list up to the count; the last element goes out after upstream is cancelled."""
        if self._done:
            return
        with self._lock:
            remaining = self._remaining
            if remaining <= 0:
                return
            if len(items) > remaining:
                items = items[:remaining]  # §1.1: never past the count, whatever upstream sent
            self._remaining = remaining = remaining - len(items)
        last = remaining == 0
        if last:
            self._cancel_upstream()
        self._emit_batch(items)
        if last:
            self._complete()

    def _cancel_upstream(self) -> None:
        """Before the last element goes out: nothing more is needed (§3.7: once)."""
        upstream, self._upstream = self._upstream, CANCELLED
        if upstream is not None:
            upstream.cancel()

    def _complete(self) -> None:
        with self._lock:  # a §3.9 request after this is one on a completed subscription
            invalid, self._remaining = self._invalid, -1
        self._terminate(invalid)


class SkipPublisher(OperatorPublisher[T, T]):
    """``publisher.skip(count)``."""

    __slots__ = ("_count",)

    def __init__(self, source: Publisher[T], count: int) -> None:
        super().__init__(source)
        self._count = _check_count(count, "skip")

    def _operator(self, downstream: Subscriber[T]) -> Subscriber[T]:
        return _SkipSubscriber(downstream, self._count)


class _SkipSubscriber(OperatorSubscriber[T, T]):
    __slots__ = ("_first_request", "_to_skip")

    def __init__(self, downstream: Subscriber[T], count: int) -> None:
        super().__init__(downstream)
        self._to_skip = count
        self._first_request = True

    def request(self, n: int) -> None:
        upstream = self._upstream
        if upstream is None or self._done:
            return
        demand = _positive_or_none(n)
        if demand is None:
            upstream.request(n)  # §3.9, signalled by upstream
            return
        if self._first_request:
            self._first_request = False  # requests are serial (§2.7)
            demand = add_capped(demand, self._to_skip)  # §3.17
        upstream.request(demand)

    def on_next(self, item: T) -> None:
        if self._done:
            return
        if self._to_skip:
            self._to_skip -= 1  # requested along with the first request
            return
        self._emit(item)

    def on_next_batch(self, items: list[T]) -> None:
        """The list past the elements still to skip."""
        if self._done:
            return
        to_skip = self._to_skip
        if to_skip:
            self._to_skip = max(0, to_skip - len(items))
            if to_skip >= len(items):
                return
            items = items[to_skip:]
        self._emit_batch(items)


class BatchPublisher(OperatorPublisher[T, list[T]]):
    """``publisher.batch(size)``."""

    __slots__ = ("_size",)

    def __init__(self, source: Publisher[T], size: int) -> None:
        super().__init__(source)
        self._size = _check_count(size, "batch")
        if size == 0:
            raise ValueError("batch(size) needs size >= 1, got 0")

    def _operator(self, downstream: Subscriber[list[T]]) -> Subscriber[T]:
        return _BatchSubscriber(downstream, self._size)


class _BatchSubscriber(OperatorSubscriber[T, list[T]]):
    __slots__ = ("_buffer", "_lists", "_size")

    def __init__(self, downstream: Subscriber[list[T]], size: int) -> None:
        super().__init__(downstream)
        self._size = size
        self._buffer: list[T] = []
        self._lists = False  # upstream sends lists: so does this

    def request(self, n: int) -> None:
        upstream = self._upstream
        if upstream is None or self._done:
            return
        demand = _positive_or_none(n)
        if demand is None:
            upstream.request(n)  # §3.9, signalled by upstream
            return
        upstream.request(multiply_capped(demand, self._size))  # §3.17

    def on_next(self, item: T) -> None:
        if self._done:
            return
        buffer = self._buffer
        buffer.append(item)
        if len(buffer) >= self._size:
            self._buffer = []
            self._emit(buffer)

    def on_next_batch(self, items: list[T]) -> None:
        """Elements in bulk, from a publisher that emits lists (``from_iterable``): the same
        lists as ``on_next`` for each would make, sliced instead of appended one by one, and the
        lists filled go downstream together."""
        self._lists = True
        if self._done:
            return
        size, at, filled = self._size, 0, []
        buffer = self._buffer
        if buffer:
            at = size - len(buffer)
            buffer.extend(items[:at])
            if len(buffer) < size:
                return
            filled.append(buffer)
        end = len(items)
        while end - at >= size:
            filled.append(items[at : at + size])
            at += size
        self._buffer = items[at:]
        if filled:
            self._emit_batch(filled)

    def on_complete(self) -> None:
        buffer, self._buffer = self._buffer, []
        if buffer and not self._done:
            if self._lists:  # the last, shorter list, as the others went; within the demand (§1.1)
                self._emit_batch([buffer])
            else:
                self._emit(buffer)
        self._terminate(None)

    def on_error(self, exc: BaseException) -> None:
        self._buffer = []
        super().on_error(exc)
