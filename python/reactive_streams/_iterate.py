"""`iterate`: a publisher as a blocking iterator with a buffer bounded by ``prefetch``."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator
from typing import Generic, TypeVar

from . import _finalizer
from ._api import Publisher, Subscriber, Subscription
from ._closing import Closing
from ._demand import Demand, Drain
from ._rules import require_not_none, require_publisher

__all__ = ["BufferSubscriber", "iterate"]

T = TypeVar("T")


def _check_prefetch(prefetch: int) -> int:
    if isinstance(prefetch, bool) or not isinstance(prefetch, int) or prefetch < 1:
        raise ValueError(f"prefetch must be an int >= 1, got {prefetch!r}")
    return prefetch


class BufferSubscriber(Subscriber[T]):
    """Buffers at most ``prefetch`` elements: it requests ``prefetch`` at first, then again
    each time three quarters of them have been consumed, so outstanding demand plus buffered
    elements never exceed ``prefetch`` (§1.1, the spec's subscriber-controlled queue bound).

    Its calls to the subscription, ``request`` and ``cancel``, go out from one inline `Drain`,
    so they never overlap (§2.7): a ``cancel`` made (by ``close()`` on another thread, or by
    the finalizer) while a ``request`` is in progress is recorded, and made by the requesting
    thread as soon as that ``request`` returns.

    ``_wake`` is called, without the lock, whenever the consumer may be able to proceed.
    """

    def __init__(self, prefetch: int) -> None:
        self._prefetch = _check_prefetch(prefetch)
        self._limit = max(1, prefetch - (prefetch >> 2))
        self._lock = threading.Lock()
        self._buffer: deque[T] = deque()
        self._subscription: Subscription | None = None
        self._unrequested = Demand()  # asked for by the consumer, not yet requested upstream
        self._cancel_upstream = False
        self._upstream = Drain(self._call_upstream, lock=self._lock)
        self._consumed = 0
        self._done = False
        self._error: BaseException | None = None
        self._cancelled = False

    def _wake(self) -> None:
        raise NotImplementedError

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "subscription", "§2.13")
        upstream = self._upstream
        with self._lock:
            duplicate = self._subscription is not None or self._cancelled
            if not duplicate:
                self._subscription = subscription
                self._unrequested.add(self._prefetch)
                run = upstream.signal_locked()
        if duplicate:
            subscription.cancel()  # §2.5, or the consumer has already closed
        elif run:
            upstream.passes()

    def on_next(self, item: T) -> None:
        require_not_none(item, "element", "§2.13")
        with self._lock:
            if self._cancelled:
                return  # §2.8
            self._buffer.append(item)
        self._wake()

    def on_error(self, exc: BaseException) -> None:
        require_not_none(exc, "error", "§2.13")
        with self._lock:
            self._done, self._error = True, exc
            self._subscription = None  # §2.4
        self._wake()

    def on_complete(self) -> None:
        with self._lock:
            self._done = True
            self._subscription = None  # §2.4
        self._wake()

    def cancel(self) -> None:
        """Cancel upstream and drop what is buffered; thread-safe and idempotent."""
        upstream = self._upstream
        with self._lock:
            self._cancelled = self._done = self._cancel_upstream = True
            self._buffer.clear()
            run = upstream.signal_locked()
        if run:
            upstream.passes()
        self._wake()

    def _call_upstream(self) -> None:
        """One drain pass: the recorded cancel, or the requests not yet made (§2.7)."""
        with self._lock:
            subscription = self._subscription
            if subscription is None:
                return  # not subscribed yet, terminated (§2.4), or already cancelled
            cancel = self._cancel_upstream
            if cancel:
                self._subscription = None  # §3.7: one cancel is enough
            n = self._unrequested.outstanding
            self._unrequested.produced(n)
        if cancel:
            subscription.cancel()
        elif n:
            subscription.request(n)

    def _poll(self) -> tuple[bool, T | None]:
        """Take the next element if there is one; ``(False, None)`` once the stream ended.

        Raises the stream's error, once; then reports the end. Must be called with
        ``self._lock`` held and only when the buffer is non-empty or ``self._done``.
        """
        if self._buffer:
            return True, self._buffer.popleft()
        error, self._error = self._error, None
        if error is not None:
            raise error
        return False, None

    def _replenish(self) -> None:
        """Count one consumed element and request more every ``limit`` of them."""
        self._consumed += 1
        if self._consumed < self._limit:
            return
        count, self._consumed = self._consumed, 0
        upstream = self._upstream
        with self._lock:
            if self._subscription is None or self._cancelled:
                return
            self._unrequested.add(count)
            run = upstream.signal_locked()
        if run:
            upstream.passes()


class _BlockingSubscriber(BufferSubscriber[T]):
    def __init__(self, prefetch: int) -> None:
        super().__init__(prefetch)
        self._ready = threading.Condition(self._lock)

    def _wake(self) -> None:
        with self._ready:
            self._ready.notify_all()

    def take(self) -> T:
        with self._ready:
            while not self._buffer and not self._done:
                self._ready.wait()
            has_item, item = self._poll()
        if not has_item:
            raise StopIteration
        self._replenish()
        return item  # type: ignore[return-value]


class BlockingIterator(Closing, Iterator[T], Generic[T]):
    """The iterator `iterate` returns; ``close()`` (or ``with``, or garbage collection)
    cancels the subscription."""

    def __init__(self, publisher: Publisher[T], prefetch: int) -> None:
        require_not_none(publisher, "publisher", "iterate")
        self._subscriber: _BlockingSubscriber[T] = _BlockingSubscriber(prefetch)
        _finalizer.start()
        publisher.subscribe(self._subscriber)

    def __next__(self) -> T:
        return self._subscriber.take()

    def close(self) -> None:
        """Cancel the subscription (§3.5) and drop the buffered elements."""
        self._subscriber.cancel()

    def __del__(self) -> None:
        subscriber = getattr(self, "_subscriber", None)
        if subscriber is not None:
            _finalizer.defer(subscriber.cancel)  # not on the collecting thread (see _finalizer)


def iterate(publisher: Publisher[T], prefetch: int = 256) -> BlockingIterator[T]:
    """Subscribe to ``publisher`` and iterate its elements, blocking for each.

    At most ``prefetch`` elements are requested ahead and buffered. The stream's error is
    raised from ``next()``. ``close()`` and leaving a ``with`` block cancel the subscription at
    once; leaving a ``for`` loop early (``break``, an exception) or dropping the iterator
    cancels it when the iterator is collected, on the ``rs-finalizer`` thread.
    """
    require_publisher(publisher, "iterate(publisher)")
    return BlockingIterator(publisher, prefetch)
