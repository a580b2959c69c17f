"""`AsyncIterablePublisher`: emits an iterable's elements on an executor, as
reactive-streams-jvm's ``AsyncIterablePublisher`` does.

Its subscription is a `Demand` and a `Drain` that runs on the executor (the kit in
``_demand``): ``request`` and ``cancel`` only record state and signal the drain, so every signal,
``on_subscribe`` first, goes out from one pass at a time (§1.3) on an executor thread, never on
the caller's stack (§3.3, §3.4).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from typing import TypeVar

from ._api import Publisher, Subscriber
from ._demand import Drain
from ._errors import ReactiveStreamsError
from ._executor import default_executor
from ._iterable import IteratorSubscription, _size, cursor
from ._rules import require_iterable, require_not_none, signal_or_cancel

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
        _AsyncSubscription(subscriber, self._iterable, executor, self._batch_size).start()


class _AsyncSubscription(IteratorSubscription[T]):
    __slots__ = ("_batch_size", "_executor", "_refused", "_resuming", "_subscribed")

    def __init__(
        self, subscriber: Subscriber[T], iterable: Iterable[T], executor: Executor, batch_size: int
    ) -> None:
        super().__init__(subscriber, iterable, Drain(self._emit, run_on=self._run_on))
        self._subscribed = False  # on_subscribe has gone out (the first pass)
        self._executor = executor
        self._batch_size = batch_size
        self._refused: BaseException | None = None  # the executor refused a pass
        self._resuming: int | None = None  # the thread running `_resume`

    def _run_on(self, passes: Callable[[], None]) -> None:
        """The drain's ``run_on``: a task on the executor, unless this thread is one already,
        started by `_resume`."""
        if self._resuming == threading.get_ident():
            passes()
        else:
            self._submit(passes)

    def _resume(self) -> None:
        """A fresh executor task for a pass that gave up its thread, for fairness."""
        self._resuming = threading.get_ident()
        try:
            self._drain.signal()
        finally:
            self._resuming = None

    def _submit(self, task: Callable[[], None]) -> None:
        try:
            self._executor.submit(task)
        except RuntimeError as exc:  # the executor is shut down: this pass says so, here
            self._refused = ReactiveStreamsError(f"the executor refused work: {exc}")
            task()

    def _emit(self) -> None:
        """One drain pass: ``on_subscribe`` first, then the pending error, or at most
        ``batch_size`` of the elements demanded (§1.1)."""
        subscriber = self._subscriber
        if subscriber is None:
            return
        if not self._subscribed and not self._subscribe(subscriber):
            return
        if self._refused is not None:
            self._terminate(subscriber, self._refused)
            return
        if self._error is not None:
            self._terminate(subscriber, self._error)
            return
        if self._remaining == 0:
            self._terminate(subscriber, None)  # §2.9: an empty Sized iterable completes at once
            return
        iterator = self._iterator
        with self._drain.lock:
            demand = self._demand.outstanding
        want = min(demand, self._batch_size)
        if want == 0 or iterator is None:
            return
        left = self._send(subscriber, iterator, want)
        if left is not None and want < demand and left > 0:
            # The batch, not the demand, ended this pass: go on in a fresh task, for fairness to
            # other work on the executor. (Demand requested during the pass needs nothing
            # more: the drain has recorded it, and goes round again.)
            self._submit(self._resume)

    def _subscribe(self, subscriber: Subscriber[T]) -> bool:
        """Signal ``on_subscribe`` (§1.9: first, on the executor), then start iterating; a
        failure to start is signalled after it, never raised. True if elements may follow."""
        self._subscribed = True
        iterable = self._iterable
        if not signal_or_cancel(subscriber, "on_subscribe", self, self.cancel):  # §2.13
            return False
        if self._refused is not None or self._subscriber is None:
            return self._subscriber is not None
        try:
            iterator = cursor(iterable)  # type: ignore[arg-type]
        except Exception as exc:  # §1.9: a failure to start is signalled
            self._terminate(subscriber, exc)
            return False
        self._remaining = _size(iterable)  # type: ignore[arg-type]  # a failing len() is unsized
        with self._drain.lock:
            if self._subscriber is None:
                return False  # cancelled meanwhile, from another thread
            self._iterator = iterator
        return True
