"""`SubmissionPublisher`: a hot, multicast publisher fed by ``submit`` and ``offer``, after the
JDK's ``java.util.concurrent.SubmissionPublisher``.

Each subscriber has its own bounded buffer and its own `Drain` (the kit in ``_demand``) whose
passes run on the executor and make every signal to it, ``on_subscribe`` and the terminal
one included, so subscribers never share a thread's stack and a slow one slows ``submit``
(which waits for space) or loses elements to ``offer`` (which drops), never grows a buffer
beyond ``max_buffer_capacity``.

A subscriber that subscribes again while subscribed has its existing subscription failed
with ``on_error`` (delivered at once, ahead of its buffer) and gets no second one, the JDK's
choice for a duplicate subscribe (§1.10, §2.12).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Generic, TypeVar

from ._api import Publisher, Subscriber, Subscription
from ._closing import Closing
from ._demand import Demand, Drain
from ._errors import ReactiveStreamsError
from ._executor import default_executor
from ._rules import (
    duplicate_subscribe_error,
    log_subscriber_failure,
    require_not_none,
    signal_or_cancel,
    signal_terminal,
)

__all__ = ["SubmissionPublisher"]

T = TypeVar("T")


class SubmissionPublisher(Closing, Publisher[T]):
    """Multicasts submitted elements to its current subscribers.

    A subscriber sees the elements submitted after it subscribed. ``close()`` completes
    every subscriber once its buffer is delivered; later subscribers get ``on_complete``
    (or the ``close_exceptionally`` error) right after ``on_subscribe``. Use it as a context
    manager to close it, exceptionally if the block raised. Subscribing a subscriber that is
    already subscribed fails its existing subscription, as the JDK's does (§1.10, §2.12).

    Args:
        executor: where each subscriber's signals are delivered; the shared pool by default.
        max_buffer_capacity: the most elements buffered for one subscriber.
    """

    def __init__(self, executor: Executor | None = None, max_buffer_capacity: int = 256) -> None:
        if (
            isinstance(max_buffer_capacity, bool)
            or not isinstance(max_buffer_capacity, int)
            or max_buffer_capacity < 1
        ):
            raise ValueError(f"max_buffer_capacity must be an int >= 1, got {max_buffer_capacity!r}")
        self._executor = executor or default_executor()
        self._capacity = max_buffer_capacity
        self._lock = threading.Lock()
        self._subscriptions: list[_BufferedSubscription[T]] = []
        self._closed = False
        self._close_error: BaseException | None = None

    @property
    def max_buffer_capacity(self) -> int:
        """The most elements buffered for one subscriber."""
        return self._capacity

    @property
    def is_closed(self) -> bool:
        """Whether ``close`` or ``close_exceptionally`` has been called."""
        return self._closed

    @property
    def number_of_subscribers(self) -> int:
        """Subscribers that have neither cancelled nor been completed."""
        with self._lock:
            return sum(1 for s in self._subscriptions if not s.cancelled)

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        """Add a subscriber; ``on_subscribe`` runs on the executor (§1.9).

        A subscriber that is already subscribed (its buffer not yet delivered, even after
        ``close``) gets no second subscription: its existing one signals ``on_error`` at once,
        dropping what is buffered, and nothing after it (§1.7, §1.10, §2.12).
        """
        require_not_none(subscriber, "subscriber", "§1.9")
        with self._lock:
            self._subscriptions = [s for s in self._subscriptions if not s.cancelled]
            existing = next((s for s in self._subscriptions if s.subscriber is subscriber), None)
            closed, error = self._closed, self._close_error
            if existing is None:
                subscription = _BufferedSubscription(self, subscriber, self._capacity, self._executor)
                if not closed:
                    self._subscriptions.append(subscription)
        if existing is not None:
            existing.fail(duplicate_subscribe_error())
        elif closed:
            subscription.terminate(error)
        else:
            subscription.start()

    def submit(self, item: T) -> int:
        """Deliver ``item`` to every current subscriber, waiting for buffer space in each.

        Returns the largest number of elements buffered for one subscriber (an estimate of
        lag). Raises ``NullElementError`` for ``None`` (§2.13) and ``ReactiveStreamsError``
        when closed. Do not call it from a task of the same executor that it would wait on.
        """
        require_not_none(item, "item", "§2.13")
        lag = 0
        for subscription in self._targets():
            lag = max(lag, subscription.put(item, None))
        return lag

    def offer(
        self,
        item: T,
        timeout: float | None = 0.0,
        on_drop: Callable[[Subscriber[T], T], bool] | None = None,
    ) -> int:
        """Deliver ``item`` to every subscriber with buffer space, waiting at most ``timeout``
        seconds for each full one; drop it for the rest.

        ``on_drop(subscriber, item)`` is called for each drop; if it returns True the
        element is offered once more. Returns ``-drops`` if any subscriber lost the element,
        otherwise the largest number of elements buffered for one subscriber.
        """
        require_not_none(item, "item", "§2.13")
        if timeout is not None and timeout < 0:
            raise ValueError(f"timeout must be >= 0 or None, got {timeout!r}")
        deadline = None if timeout is None else time.monotonic() + timeout
        lag, drops = 0, 0
        for subscription in self._targets():
            buffered = subscription.put(item, deadline)
            target = subscription.subscriber
            if buffered < 0 and on_drop is not None and target is not None and on_drop(target, item):
                buffered = subscription.put(item, time.monotonic())
            if buffered < 0:
                drops += 1
            else:
                lag = max(lag, buffered)
        return -drops if drops else lag

    def close(self) -> None:
        """Complete every subscriber after its buffered elements (§1.5); idempotent."""
        self._close(None)

    def close_exceptionally(self, error: BaseException) -> None:
        """Fail every subscriber with ``error`` after its buffered elements (§1.4)."""
        require_not_none(error, "error", "close_exceptionally")
        self._close(error)

    def _on_exit(self, exc: BaseException | None) -> None:
        self._close(exc)  # a block that raised closes exceptionally, with its exception

    def _close(self, error: BaseException | None) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed, self._close_error = True, error
            # Each stays listed until its drain has delivered the terminal signal, so that a
            # duplicate subscribe meanwhile is still seen as one (§2.12).
            subscriptions = list(self._subscriptions)
        for subscription in subscriptions:
            subscription.terminate(error)

    def _targets(self) -> list[_BufferedSubscription[T]]:
        with self._lock:
            if self._closed:
                raise ReactiveStreamsError("this SubmissionPublisher is closed")
            return list(self._subscriptions)

    def _remove(self, subscription: _BufferedSubscription[T]) -> None:
        with self._lock:
            if subscription in self._subscriptions:
                self._subscriptions.remove(subscription)


class _BufferedSubscription(Subscription, Generic[T]):
    def __init__(
        self,
        publisher: SubmissionPublisher[T],
        subscriber: Subscriber[T],
        capacity: int,
        executor: Executor,
    ) -> None:
        self._publisher: SubmissionPublisher[T] | None = publisher
        self.subscriber: Subscriber[T] | None = subscriber
        self._capacity = capacity
        self._executor = executor
        self._lock = threading.Lock()
        self._space = threading.Condition(self._lock)
        self._drain = Drain(self._deliver, run_on=self._submit, lock=self._lock)
        self._buffer: deque[T] = deque()
        self._demand = Demand()
        self._subscribed = False
        self.cancelled = False
        self._terminal = False
        self._terminal_error: BaseException | None = None
        self._failure: BaseException | None = None  # §3.9, §2.12: signalled ahead of the buffer

    def start(self) -> None:
        """Have the drain signal ``on_subscribe`` (§1.9)."""
        self._drain.signal()

    def put(self, item: T, deadline: float | None) -> int:
        """Buffer ``item``; the count buffered, or -1 if the deadline passed with no space."""
        with self._space:
            while len(self._buffer) >= self._capacity and not self.cancelled:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return -1
                self._space.wait(remaining)
            if self.cancelled:
                return 0
            self._buffer.append(item)
            buffered = len(self._buffer)
            run = self._drain.signal_locked()
        if run:
            self._drain.passes()
        return buffered

    def request(self, n: int) -> None:
        """Add demand and signal the drain (§3.4, §3.8, §3.17)."""
        with self._lock:
            if self.cancelled:
                return  # §3.6
            error = self._demand.add(n)
            if error is not None and self._failure is None:
                self._failure = error  # §3.9: signalled at once, ahead of the buffer
            run = self._drain.signal_locked()
        if run:
            self._drain.passes()

    def cancel(self) -> None:
        """Stop delivery, drop the buffer and the subscriber (§3.5, §3.7, §3.13)."""
        self._drop()

    def terminate(self, error: BaseException | None) -> None:
        """Complete, or fail with ``error``, once the buffer is delivered (§1.4, §1.5)."""
        with self._lock:
            if self._terminal:
                return
            self._terminal, self._terminal_error = True, error
            run = self._drain.signal_locked()
        if run:
            self._drain.passes()

    def fail(self, error: BaseException) -> None:
        """Signal ``error`` at once, dropping the buffer (§2.12: a duplicate subscribe)."""
        with self._lock:
            if self.cancelled or self._failure is not None:
                return
            self._failure = error
            run = self._drain.signal_locked()
        if run:
            self._drain.passes()

    def _submit(self, passes: Callable[[], None]) -> None:
        """The drain's ``run_on``: its passes run on the executor."""
        try:
            self._executor.submit(passes)
        except RuntimeError:  # the executor is shut down: nothing can deliver any more
            subscriber = self.subscriber
            self._drop()
            if subscriber is not None:
                refused = ReactiveStreamsError("the executor refused work")
                log_subscriber_failure(subscriber, "its executor", refused)

    def _deliver(self) -> None:
        """One drain pass: ``on_subscribe`` first, then a failure at once, or the buffer as
        demand allows (§1.1), then the terminal signal once the buffer is empty."""
        subscriber = self.subscriber
        if subscriber is None:
            return
        if not self._subscribed:
            self._subscribed = True
            if not signal_or_cancel(subscriber, "on_subscribe", self, self._drop):  # §1.9
                return
        buffer, demand, space = self._buffer, self._demand, self._space
        while True:
            with space:
                if self.cancelled:
                    return
                failure = self._failure
                if failure is not None or not buffer or not demand.outstanding:
                    finished = failure is None and self._terminal and not buffer
                    break
                item = buffer.popleft()
                demand.produced(1)
                space.notify()
            try:
                subscriber.on_next(item)  # §1.1
            except Exception as exc:
                self._drop()
                log_subscriber_failure(subscriber, "on_next", exc)  # §2.13
                return
        if failure is not None or finished:
            self._drop()  # §1.6, §1.7: nothing after the terminal signal
            signal_terminal(subscriber, failure if failure is not None else self._terminal_error)

    def _drop(self) -> None:
        with self._space:
            self.cancelled = True
            self._buffer.clear()
            self._space.notify_all()  # a waiting submit moves on
            publisher, self._publisher = self._publisher, None
            self.subscriber = None  # §3.13
        if publisher is not None:
            publisher._remove(self)
