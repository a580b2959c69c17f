"""`flat_map`, and `merge` and `concat` built on it.

Every event records state under the lock and signals one inline `Drain` (the kit in
``_demand``); its passes make every call to the downstream subscriber, ``on_subscribe`` and
the terminal signals included, and every ``request``/``cancel`` to the upstream and inner
subscriptions, so signals are serial (§1.3, §2.7) whichever threads the inner publishers
signal on, and the recursion through synchronous publishers stays bounded (§3.3).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from functools import partial
from itertools import repeat, starmap
from typing import Any, Generic, TypeVar

from ._api import Publisher, Subscriber, Subscription
from ._compose import operator
from ._demand import MAX_DEMAND, Demand, Drain
from ._errors import NullElementError
from ._fluent import fluent
from ._iterable import from_iterable
from ._operator_types import Operator, UnionOperator
from ._operators import OperatorPublisher
from ._rules import (
    accept_subscription,
    log_subscriber_failure,
    require_callable,
    require_not_none,
    require_publisher,
    signal_or_cancel,
    signal_terminal,
)

__all__ = ["FlatMapPublisher", "concat", "concat_map", "concat_with", "flat_map", "merge", "merge_with"]

T = TypeVar("T")
R = TypeVar("R")


@fluent
def flat_map(
    function: Callable[[T], Publisher[R]], concurrency: int = 16, prefetch: int = 32
) -> Operator[T, R]:
    """``(T -> Publisher[R]) -> (Publisher[T] -> Publisher[R])``: each element mapped to a
    publisher, their elements merged as they arrive.

    At most ``concurrency`` inner publishers are subscribed at once (upstream is asked for one
    element per free slot), and each inner one buffers at most ``prefetch`` elements.

    Signals from all inner publishers go out serially, from one drain (§1.3); a cancel reaches
    upstream and every inner publisher (§3.12); a §3.9 request is signalled by the drain.

    Raises:
        TypeError: ``function`` is not callable. ValueError: ``concurrency`` or ``prefetch`` is
            not an int >= 1.
    """
    require_callable(function, "flat_map(function)")
    _check_positive(concurrency, "flat_map(concurrency)")
    _check_positive(prefetch, "flat_map(prefetch)")
    return operator("flat_map", lambda source: FlatMapPublisher(source, function, concurrency, prefetch))


@fluent
def concat_map(function: Callable[[T], Publisher[R]], prefetch: int = 32) -> Operator[T, R]:
    """``(T -> Publisher[R]) -> (Publisher[T] -> Publisher[R])``: each element mapped to a
    publisher, their elements one publisher after another, in the order of the elements (a
    sequential `flat_map`).

    Upstream is asked for one element at a time, when the publisher before has completed; each
    inner publisher buffers at most ``prefetch`` elements.

    A cancel reaches upstream and the inner publisher (§3.12); a §3.9 request is signalled by
    the drain; signals stay serial (§1.3).

    Raises:
        TypeError: ``function`` is not callable. ValueError: ``prefetch`` is not an int >= 1.
    """
    require_callable(function, "concat_map(function)")
    _check_positive(prefetch, "concat_map(prefetch)")
    return operator(
        "concat_map", lambda source: FlatMapPublisher(source, function, 1, prefetch, "concat_map")
    )


@fluent
def concat(*publishers: Publisher[T], prefetch: int = 32) -> Publisher[T]:
    """Each publisher's elements in turn; the next is subscribed when the previous completes.

    Each source buffers at most ``prefetch`` elements ahead of downstream demand.

    Signals go out serially, from one drain (§1.3); a cancel reaches the source subscribed
    (§3.12); a §3.9 request is signalled (§3.9).
    """
    for publisher in publishers:
        require_publisher(publisher, "concat(*publishers)")
    return FlatMapPublisher(from_iterable(publishers), _identity, 1, prefetch)


@fluent
def merge(*publishers: Publisher[T], prefetch: int = 32) -> Publisher[T]:
    """All publishers' elements as they arrive; every source is subscribed at once.

    Each source buffers at most ``prefetch`` elements ahead of downstream demand.

    Signals go out serially, from one drain (§1.3); a cancel reaches every source (§3.12); a
    §3.9 request is signalled (§3.9).
    """
    for publisher in publishers:
        require_publisher(publisher, "merge(*publishers)")
    return FlatMapPublisher(from_iterable(publishers), _identity, max(1, len(publishers)), prefetch)


@fluent
def concat_with(*others: Publisher[R]) -> UnionOperator[R]:
    """``(Publisher[R]...) -> (Publisher[T] -> Publisher[T | R])``: `concat` of the source and
    ``others``, the source first.

    Demand, cancel and rules as `concat`'s: each source buffers at most ``prefetch`` (§1.1), a
    cancel reaches the source subscribed (§3.12), a §3.9 request is signalled (§3.9).

    Raises:
        TypeError: one of ``others`` is not a publisher.
    """
    for publisher in others:
        require_publisher(publisher, "concat_with(*others)")
    return operator("concat_with", lambda source: concat(source, *others))


@fluent
def merge_with(*others: Publisher[R]) -> UnionOperator[R]:
    """``(Publisher[R]...) -> (Publisher[T] -> Publisher[T | R])``: `merge` of the source and
    ``others``.

    Demand, cancel and rules as `merge`'s: each source buffers at most ``prefetch`` (§1.1), a
    cancel reaches every source (§3.12), a §3.9 request is signalled (§3.9).

    Raises:
        TypeError: one of ``others`` is not a publisher.
    """
    for publisher in others:
        require_publisher(publisher, "merge_with(*others)")
    return operator("merge_with", lambda source: merge(source, *others))


def _identity(publisher: Publisher[T]) -> Publisher[T]:
    return publisher


def _check_positive(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} needs an int >= 1, got {value!r}")
    return min(value, MAX_DEMAND)


class FlatMapPublisher(OperatorPublisher[T, R]):
    """``publisher.flat_map(function, concurrency, prefetch)``."""

    __slots__ = ("_concurrency", "_function", "_name", "_prefetch")

    def __init__(
        self,
        source: Publisher[T],
        function: Callable[[T], Publisher[R]],
        concurrency: int,
        prefetch: int,
        name: str = "flat_map",
    ) -> None:
        require_callable(function, f"{name}(function)")
        super().__init__(source)
        self._function = function
        self._concurrency = _check_positive(concurrency, f"{name}(concurrency)")
        self._prefetch = _check_positive(prefetch, f"{name}(prefetch)")
        self._name = name  # the operator its errors name

    def _operator(self, downstream: Subscriber[R]) -> Subscriber[T]:
        return _FlatMapSubscriber(downstream, self._function, self._concurrency, self._prefetch, self._name)


class _Inner(Subscriber[Any]):
    __slots__ = ("_parent", "consumed", "done", "queue", "started", "subscription")

    def __init__(self, parent: _FlatMapSubscriber[Any, Any]) -> None:
        self._parent = parent
        self.subscription: Subscription | None = None
        self.queue: deque[Any] = deque()
        self.done = False
        self.consumed = 0
        self.started = False  # the drain made the first request

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "subscription", "§2.13")
        parent = self._parent
        with parent._drain.lock:
            duplicate, late = self.subscription is not None, False
            if not duplicate:
                self.subscription = subscription
                late = parent.finished  # else the drain's _finish sees the subscription
        if duplicate or late:
            subscription.cancel()  # §2.5, or the parent ended while this source subscribed
            return
        parent.schedule()  # the drain makes the first request (§2.7)

    def on_next(self, item: Any) -> None:
        require_not_none(item, "element", "§2.13")
        self.queue.append(item)
        self._parent.schedule()

    def on_next_batch(self, items: list[Any]) -> None:
        self.queue.extend(items)  # its sender checked them (§2.13)
        self._parent.schedule()

    def on_error(self, exc: BaseException) -> None:
        require_not_none(exc, "error", "§2.13")
        self.done = True
        self._parent.fail(exc)

    def on_complete(self) -> None:
        self.done = True
        self._parent.schedule()


class _FlatMapSubscriber(Subscriber[T], Subscription, Generic[T, R]):
    def __init__(
        self,
        downstream: Subscriber[R],
        function: Callable[[T], Publisher[R]],
        concurrency: int,
        prefetch: int,
        name: str,
    ) -> None:
        self._downstream: Subscriber[R] | None = downstream
        self._function = function
        self._name = name
        self._concurrency = concurrency
        self._prefetch = prefetch
        self._limit = max(1, prefetch - (prefetch >> 2))  # replenish every 3/4 of prefetch
        self._lock = threading.Lock()
        self._drain = Drain(self._pass, lock=self._lock)
        self._subscribed = False  # the drain signalled on_subscribe downstream
        self._upstream: Subscription | None = None
        self._upstream_started = False
        self._upstream_done = False
        self._error: BaseException | None = None
        self._cancelled = False
        self.finished = False
        self._demand = Demand()
        self._inners: list[_Inner] = []

    # Upstream signals.

    def on_subscribe(self, subscription: Subscription) -> None:
        if not accept_subscription(subscription, self._upstream):
            return
        self._upstream = subscription
        self.schedule()  # the first pass signals on_subscribe downstream, then requests

    def on_next(self, item: T) -> None:
        require_not_none(item, "element", "§2.13")
        if self.finished or self._cancelled or self._error is not None:
            return
        try:
            inner_publisher = self._function(item)
            if inner_publisher is None:
                raise NullElementError(f"§2.13: the {self._name} function returned None")
            require_publisher(inner_publisher, f"{self._name}(function)'s result")  # not a list
            inner = _Inner(self)
            with self._lock:
                self._inners.append(inner)
            inner_publisher.subscribe(inner)
        except Exception as exc:
            self.fail(exc)

    def on_next_batch(self, items: list[T]) -> None:
        """Publishers in bulk (``merge`` and ``concat`` get their list's): each subscribed."""
        for item in items:
            self.on_next(item)

    def on_error(self, exc: BaseException) -> None:
        require_not_none(exc, "error", "§2.13")
        self._upstream_done = True
        self.fail(exc)

    def on_complete(self) -> None:
        self._upstream_done = True
        self.schedule()

    # Downstream's subscription.

    def request(self, n: int) -> None:
        with self._lock:
            error = self._demand.add(n)  # §3.8, §3.17
            if error is not None and self._error is None:
                self._error = error  # §3.9, signalled by the drain
            run = self._drain.signal_locked()
        if run:
            self._drain.passes()

    def cancel(self) -> None:
        self._cancelled = True  # §3.5: the drain cancels the sources and drops references
        self.schedule()

    # The drain.

    def schedule(self) -> None:
        self._drain.signal()

    def fail(self, exc: BaseException) -> None:
        with self._lock:
            if self._error is None:
                self._error = exc
            run = self._drain.signal_locked()
        if run:
            self._drain.passes()

    def _pass(self) -> None:
        """One drain pass: on_subscribe first, then what demand allows, then the terminal signal."""
        downstream = self._downstream
        if downstream is None or self.finished:
            return
        if not self._subscribed:
            self._subscribed = True
            drop = partial(self._finish, None, signal=False)
            if not signal_or_cancel(downstream, "on_subscribe", self, drop):  # §1.9
                return
        if self._cancelled:
            self._finish(None, signal=False)
            return
        upstream = self._upstream
        if upstream is None:
            return
        # After a failure, what is buffered and requested still goes out, then the error.
        failed = self._error is not None
        if not self._upstream_started and not failed:
            self._upstream_started = True
            upstream.request(self._concurrency)
        with self._lock:
            inners = list(self._inners)
            requested = self._demand.outstanding
        emitted = 0
        finished_inners = 0
        on_next_batch = getattr(downstream, "on_next_batch", None)
        for inner in inners:
            subscription = inner.subscription
            if subscription is None:
                continue
            if not inner.started and not failed:
                inner.started = True
                subscription.request(self._prefetch)
            done = inner.done
            queue = inner.queue
            # What is queued now, no more: an inner that refills synchronously on each
            # replenishing request must not starve the others (they get the next pass).
            available = len(queue)
            if on_next_batch is not None and available and emitted != requested:
                if self._cancelled:
                    self.schedule()  # the next pass finishes
                    return
                count = min(available, requested - emitted)
                items = list(starmap(queue.popleft, repeat((), count)))  # in C; inners append
                try:
                    on_next_batch(items)
                except Exception as exc:
                    self._cancelled = True
                    log_subscriber_failure(downstream, "on_next_batch", exc)  # §2.13
                    self.schedule()  # the next pass cancels the sources
                    return
                emitted += count
                inner.consumed += count
                available = 0
            while available and emitted != requested:
                available -= 1
                if self._cancelled:
                    self.schedule()  # the next pass finishes
                    return
                item = queue.popleft()
                try:
                    downstream.on_next(item)
                except Exception as exc:
                    self._cancelled = True
                    log_subscriber_failure(downstream, "on_next", exc)  # §2.13
                    self.schedule()  # the next pass cancels the sources
                    return
                emitted += 1
                inner.consumed += 1
            if inner.consumed >= self._limit and not done and not failed:
                consumed, inner.consumed = inner.consumed, 0
                subscription.request(consumed)  # what left the queue: the bound stays prefetch
            if done and not queue:
                finished_inners += 1
                with self._lock:
                    self._inners.remove(inner)
        if emitted:
            with self._lock:
                self._demand.produced(emitted)
        if failed:
            self._finish(self._error, signal=True)
        elif finished_inners and not self._upstream_done:
            upstream.request(finished_inners)  # one new inner publisher per free slot
        elif self._upstream_done and not self._inners and self._error is None:
            self._finish(None, signal=True)  # (a failure that arrived meanwhile: next pass)

    def _finish(self, error: BaseException | None, *, signal: bool) -> None:
        with self._lock:
            self.finished = True
            inners, self._inners = self._inners, []
        downstream, self._downstream = self._downstream, None  # §3.13
        upstream = self._upstream
        if upstream is not None and not self._upstream_done:
            upstream.cancel()
        for inner in inners:
            if inner.subscription is not None and not inner.done:
                inner.subscription.cancel()
            inner.queue.clear()
        if not signal or downstream is None:
            return
        signal_terminal(downstream, error)
