"""`from_iterable`: a synchronous, re-subscribable publisher over any Python iterable.

Its subscription is a demand counter (as reactive-streams-jvm's ``RangePublisher``): only the
``request`` that lifts demand from zero runs the emit loop, on the caller's thread; a
``request`` made from inside ``on_next`` only adds demand, so the recursion between
``request`` and ``on_next`` is bounded at depth one (§3.3).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sized
from itertools import islice
from typing import Generic, TypeVar

from ._api import Publisher, Subscriber, Subscription
from ._errors import IllegalDemandError, NullElementError
from ._rules import (
    MAX_DEMAND,
    checked_demand,
    log_subscriber_failure,
    require_iterable,
    require_not_none,
    signal_terminal,
)

__all__ = ["IterablePublisher", "from_iterable"]

T = TypeVar("T")


def from_iterable(iterable: Iterable[T]) -> Publisher[T]:
    """A cold publisher of ``iterable``'s elements, emitted on the thread that requests them.

    Each subscriber gets its own ``iter(iterable)``, so a list, range or other re-iterable
    collection is replayed to every subscriber, while an iterator or generator is shared
    (what one subscriber takes, the next does not see). A `Sized` iterable (list, tuple,
    range, ...) completes as soon as its last element is delivered, and at once if empty;
    any other completes when a request finds it exhausted. A ``None`` element ends the stream
    with ``NullElementError`` (§2.13); an exception from the iterable ends it with that
    exception (§1.4).

    Raises:
        NullElementError: ``iterable`` is None.
        TypeError: ``iterable`` is not iterable (``from_iterable(5)``).
    """
    return IterablePublisher(iterable)


class IterablePublisher(Publisher[T]):
    """The publisher `from_iterable` returns."""

    __slots__ = ("_iterable",)

    def __init__(self, iterable: Iterable[T]) -> None:
        require_iterable(iterable, "from_iterable()")
        self._iterable = iterable

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        """Signal ``on_subscribe``, then elements as requested (§1.9, §1.1)."""
        require_not_none(subscriber, "subscriber", "§1.9")
        failure: BaseException | None = None
        try:
            iterator: Iterator[T] = iter(self._iterable)
        except Exception as exc:  # §1.9: a failure to start is signalled, never raised
            failure, iterator = exc, iter(())
        size = len(self._iterable) if isinstance(self._iterable, Sized) and failure is None else None
        subscription = _IterableSubscription(subscriber, iterator, size)
        if failure is not None:
            subscription.fail_before_start(failure)
        try:
            subscriber.on_subscribe(subscription)
        except Exception as exc:
            subscription.cancel()  # §2.13
            log_subscriber_failure(subscriber, "on_subscribe", exc)
            return
        if failure is not None:
            subscription.signal_start_failure()
        else:
            subscription.complete_if_empty()


class _IterableSubscription(Subscription, Generic[T]):
    __slots__ = (
        "_cancelled",
        "_iterator",
        "_lock",
        "_pending_error",
        "_remaining",
        "_requested",
        "_subscriber",
    )

    def __init__(self, subscriber: Subscriber[T], iterator: Iterator[T], size: int | None) -> None:
        self._subscriber: Subscriber[T] | None = subscriber
        self._iterator: Iterator[T] | None = iterator
        self._lock = threading.Lock()
        # Outstanding demand; non-zero also means an emit loop owns the subscription.
        self._requested = 0
        self._cancelled = False
        self._pending_error: BaseException | None = None
        # Elements left when the iterable is Sized: the last one completes the stream at
        # once, and an empty one completes without a request (§1.2, §2.9).
        self._remaining = size

    def complete_if_empty(self) -> None:
        if self._remaining == 0:
            self._terminate(None)

    def fail_before_start(self, error: BaseException) -> None:
        self._cancelled = True
        self._pending_error = error

    def signal_start_failure(self) -> None:
        with self._lock:
            subscriber, error = self._subscriber, self._pending_error
            self._subscriber = self._iterator = self._pending_error = None
        if subscriber is not None and error is not None:
            signal_terminal(subscriber, error)

    def request(self, n: int) -> None:
        """Add ``n`` to demand and emit, unless a loop is already emitting (§3.3, §3.8)."""
        if n.__class__ is not int or n <= 0:
            checked = checked_demand(n)
            if isinstance(checked, IllegalDemandError):
                self._fail(checked)  # §3.9
                return
            n = checked
        with self._lock:
            if self._cancelled:
                return  # §3.6
            old = self._requested
            total = old + n
            self._requested = MAX_DEMAND if total >= MAX_DEMAND else total  # §3.17
        if old == 0:
            self._emit()

    def cancel(self) -> None:
        """Stop emitting and drop the subscriber (§3.5, §3.7, §3.12, §3.13)."""
        with self._lock:
            self._cancelled = True
            self._pending_error = None
            self._subscriber = self._iterator = None

    def _fail(self, error: IllegalDemandError) -> None:
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
            self._pending_error = error
            old = self._requested
            self._requested = old or 1  # claim the loop if it is idle
        if old == 0:
            self._emit()

    def _emit(self) -> None:
        subscriber, iterator = self._subscriber, self._iterator
        if subscriber is None or iterator is None:
            self._finish_cancelled()
            return
        on_next = subscriber.on_next
        requested = self._requested
        remaining = self._remaining
        emitted = 0
        while True:
            if self._cancelled:
                self._finish_cancelled()
                return
            want = requested - emitted
            if remaining is not None and remaining < want:
                want = remaining
            start = emitted
            try:
                for item in islice(iterator, want):  # §1.1
                    if item is None:
                        self._terminate(NullElementError("§2.13: the iterable yielded None"))
                        return
                    try:
                        on_next(item)
                    except Exception as exc:
                        self.cancel()  # §2.13
                        log_subscriber_failure(subscriber, "on_next", exc)
                        return
                    emitted += 1
                    if self._cancelled:  # §1.8: do not pull another element after cancel
                        self._finish_cancelled()
                        return
            except Exception as exc:  # the iterable failed (§1.4)
                self._terminate(exc)
                return
            if remaining is not None:
                remaining -= emitted - start
            if emitted - start != want or remaining == 0:
                self._terminate(None)  # exhausted, or known to be (§1.5)
                return
            with self._lock:
                if self._cancelled:
                    continue  # delivers a pending §3.9 error, if any
                current = self._requested
                if current == MAX_DEMAND:  # §3.17: effectively unbounded, stop counting
                    requested, emitted = MAX_DEMAND, 0
                    continue
                if current == emitted:
                    self._requested = 0  # release the loop
                    self._remaining = remaining
                    return
                requested = self._requested = current - emitted
                emitted = 0

    def _finish_cancelled(self) -> None:
        with self._lock:
            subscriber, error = self._subscriber, self._pending_error
            self._subscriber = self._iterator = self._pending_error = None
        if subscriber is not None and error is not None:
            signal_terminal(subscriber, error)

    def _terminate(self, error: BaseException | None) -> None:
        with self._lock:
            if self._cancelled:
                return  # §1.7, §1.8
            self._cancelled = True  # §1.6
            subscriber = self._subscriber
            self._subscriber = self._iterator = None  # §3.13
        if subscriber is None:
            return
        signal_terminal(subscriber, error)
