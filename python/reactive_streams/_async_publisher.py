"""`AsyncIterablePublisher`: emits an iterable's elements on an executor, as
reactive-streams-jvm's ``AsyncIterablePublisher`` does.

``request`` and ``cancel`` only record state and schedule the subscription's drain task; the
task runs on the executor, one at a time (a lock-protected running flag plus a "missed"
flag), so every signal is serial (§1.3) and never runs on the caller's stack (§3.3, §3.4).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sized
from concurrent.futures import Executor
from itertools import islice
from typing import Generic, TypeVar

from ._api import Publisher, Subscriber, Subscription
from ._errors import IllegalDemandError, NullElementError, ReactiveStreamsError
from ._executor import default_executor
from ._rules import (
    MAX_DEMAND,
    add_demand,
    checked_demand,
    log_subscriber_failure,
    require_iterable,
    require_not_none,
    signal_terminal,
)

__all__ = ["AsyncIterablePublisher"]

T = TypeVar("T")


class AsyncIterablePublisher(Publisher[T]):
    """A cold publisher that emits ``iterable``'s elements on ``executor``.

    Args:
        iterable: iterated afresh for each subscriber (``iter(iterable)``).
        executor: where signals are delivered; the library's shared pool by default.
        batch_size: most elements delivered in one task before it reschedules itself, so
            that one fast subscriber does not hold an executor thread indefinitely.
    """

    def __init__(
        self, iterable: Iterable[T], executor: Executor | None = None, batch_size: int = 256
    ) -> None:
        require_iterable(iterable, "AsyncIterablePublisher(iterable)")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
        self._iterable = iterable
        self._executor = executor
        self._batch_size = batch_size

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        """Schedule ``on_subscribe`` on the executor, then elements as requested (§1.9)."""
        require_not_none(subscriber, "subscriber", "§1.9")
        executor = self._executor or default_executor()
        _AsyncSubscription(subscriber, self._iterable, executor, self._batch_size).schedule()


class _AsyncSubscription(Subscription, Generic[T]):
    def __init__(
        self, subscriber: Subscriber[T], iterable: Iterable[T], executor: Executor, batch_size: int
    ) -> None:
        self._subscriber: Subscriber[T] | None = subscriber
        self._iterable: Iterable[T] | None = iterable
        self._iterator: Iterator[T] | None = None
        self._executor = executor
        self._batch_size = batch_size
        self._lock = threading.Lock()
        self._running = False
        self._missed = False
        self._requested = 0
        self._cancelled = False
        self._terminated = False
        self._pending_error: BaseException | None = None
        self._remaining: int | None = None  # known for a Sized iterable (see from_iterable)

    def request(self, n: int) -> None:
        """Record demand and schedule delivery; returns at once (§3.4, §3.8, §3.17)."""
        checked = checked_demand(n)
        with self._lock:
            if self._cancelled:
                return  # §3.6
            if isinstance(checked, IllegalDemandError):
                self._cancelled, self._pending_error = True, checked  # §3.9
            else:
                self._requested = add_demand(self._requested, checked)
        self.schedule()

    def cancel(self) -> None:
        """Record cancellation; the task drops the subscriber (§3.5, §3.7, §3.13)."""
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
        self.schedule()

    def schedule(self) -> None:
        with self._lock:
            if self._running:
                self._missed = True
                return
            self._running = True
        self._submit()

    def _submit(self) -> None:
        try:
            self._executor.submit(self._run)
        except RuntimeError as exc:  # the executor is shut down
            with self._lock:
                self._running = False
                subscriber, self._subscriber = self._subscriber, None
                self._cancelled = self._terminated = True
                self._iterable = self._iterator = None
            if subscriber is not None:
                signal_terminal(subscriber, ReactiveStreamsError(f"the executor refused work: {exc}"))

    def _run(self) -> None:
        while True:
            more_demand = self._run_once()
            with self._lock:
                if self._missed:
                    self._missed = False
                    continue
                if not more_demand:
                    self._running = False
                    return
            self._submit()  # a fresh task, for fairness to other work on the executor
            return

    def _run_once(self) -> bool:
        """One slice of work; True when demand remains that the slice did not serve."""
        subscriber = self._subscriber
        if subscriber is None or self._terminated:
            return False
        if self._iterator is None:
            if not self._start(subscriber):
                return False
            if self._remaining == 0:
                self._terminate(None)  # §2.9: an empty Sized iterable completes at once
                return False
        if self._cancelled:
            self._finish_cancelled()
            return False
        with self._lock:
            requested = self._requested
        if requested == 0:
            return False
        iterator = self._iterator
        assert iterator is not None
        target = min(requested, self._batch_size)
        remaining = self._remaining
        if remaining is not None and remaining < target:
            target = remaining
        emitted = 0
        try:
            for item in islice(iterator, target):  # §1.1
                if item is None:
                    self._terminate(NullElementError("§2.13: the iterable yielded None"))
                    return False
                try:
                    subscriber.on_next(item)
                except Exception as exc:
                    self._drop()  # §2.13
                    log_subscriber_failure(subscriber, "on_next", exc)
                    return False
                emitted += 1
                if self._cancelled:  # §1.8
                    self._finish_cancelled()
                    return False
        except Exception as exc:
            self._terminate(exc)  # §1.4
            return False
        if remaining is not None:
            self._remaining = remaining = remaining - emitted
        if emitted < target or remaining == 0:
            self._terminate(None)  # exhausted, or known to be (§1.5)
            return False
        with self._lock:
            if self._requested != MAX_DEMAND:
                self._requested -= emitted
            return self._requested > 0

    def _start(self, subscriber: Subscriber[T]) -> bool:
        iterable, self._iterable = self._iterable, None
        if isinstance(iterable, Sized):
            self._remaining = len(iterable)
        try:
            self._iterator = iter(iterable)  # type: ignore[arg-type]
        except Exception as exc:
            failure: BaseException | None = exc
            self._iterator = iter(())
        else:
            failure = None
        try:
            subscriber.on_subscribe(self)  # §1.9: first, on the executor
        except Exception as exc:
            self._drop()  # §2.13
            log_subscriber_failure(subscriber, "on_subscribe", exc)
            return False
        if failure is not None:
            self._terminate(failure)
            return False
        return True

    def _drop(self) -> None:
        with self._lock:
            self._cancelled = self._terminated = True
            self._subscriber = None  # §3.13
            self._iterable = self._iterator = None

    def _finish_cancelled(self) -> None:
        subscriber, error = self._subscriber, self._pending_error
        self._pending_error = None
        self._drop()
        if subscriber is not None and error is not None:
            signal_terminal(subscriber, error)

    def _terminate(self, error: BaseException | None) -> None:
        if self._cancelled:
            self._finish_cancelled()  # §1.7: only a pending §3.9 error may still go out
            return
        subscriber = self._subscriber
        self._drop()  # §1.6
        if subscriber is None:
            return
        signal_terminal(subscriber, error)
