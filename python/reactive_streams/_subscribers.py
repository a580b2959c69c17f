"""`SyncSubscriber` and `AsyncSubscriber`: bases for subscribers written as three hooks.

Override ``when_next`` (return ``False`` to stop), and optionally ``when_error`` and
``when_complete``. The base keeps the rules: it requests ``batch`` elements and replenishes
every three quarters of them (§2.1), cancels a second subscription (§2.5), refuses ``None``
(§2.13), turns an exception from a hook into a cancelled subscription plus ``when_error``
(never raising back to the publisher, §2.13), and never calls the subscription after a
terminal signal (§2.3, §2.4).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

from ._api import Subscriber, Subscription
from ._demand import Drain
from ._errors import NullElementError, ReactiveStreamsError
from ._executor import default_executor
from ._rules import require_not_none

__all__ = ["AsyncSubscriber", "SyncSubscriber"]

T = TypeVar("T")
logger = logging.getLogger("reactive_streams")


#: The signal methods the bases keep the rules in, and the hook a subclass overrides instead.
_HOOKS = {"on_next": "when_next", "on_error": "when_error", "on_complete": "when_complete"}


class _HookSubscriber(Subscriber[T]):
    """The signal handling both bases share; ``on_next`` and ``_handle_*`` run serially (§1.3)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Refuse a subclass that overrides a signal method instead of its hook.

        The signal methods are where the base requests more (§2.1), ends the subscription
        (§2.4) and, for `AsyncSubscriber`, hands the signal to its drain; an override that
        handles the element itself gets the first ``batch`` elements and then waits forever.
        Whether an override still calls ``super()`` cannot be checked, so every override is
        refused: put the code in the hook.
        """
        super().__init_subclass__(**kwargs)
        if cls.__module__ == __name__:
            return  # SyncSubscriber and AsyncSubscriber themselves
        for method, hook in _HOOKS.items():
            if method in vars(cls):
                base = next(b.__name__ for b in cls.__mro__ if b.__module__ == __name__)
                raise TypeError(
                    f"{cls.__qualname__} overrides {method}(), which {base} keeps the rules in "
                    f"(demand, §2.1; the end of the stream, §2.4): override {hook}() instead"
                )

    def __init__(self, batch: int = 256) -> None:
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise ValueError(f"batch must be an int >= 1, got {batch!r}")
        self._batch = batch
        self._limit = max(1, batch - (batch >> 2))
        self._received = 0
        self._subscription: Subscription | None = None
        self._done = False
        #: Resolved once the subscriber is through: None after ``when_complete`` has returned or
        #: the subscriber stopped (``when_next`` returned ``False``, or ``cancel()``); the failure
        #: after ``when_error`` has run (or the exception ``when_complete`` raised). An
        #: `AsyncSubscriber`'s hooks run after its signal methods return: wait on this, not on
        #: them (the partitioned sink's write tasks do).
        self.completion: Future[None] = Future()

    # The hooks.

    def when_next(self, item: T) -> bool | None:
        """Handle one element; return ``False`` to cancel the subscription."""
        raise NotImplementedError

    def when_error(self, exc: BaseException) -> None:
        """Handle the stream's failure (or a failure of ``when_next``). Logs it by default."""
        logger.error("%s: stream failed", type(self).__name__, exc_info=exc)

    def when_complete(self) -> None:
        """Handle the end of the stream."""

    # The logic.

    def _handle_subscribe(self, subscription: Subscription) -> None:
        if self._subscription is not None or self._done:
            subscription.cancel()  # §2.5
            return
        self._subscription = subscription
        subscription.request(self._batch)

    def on_next(self, item: T) -> None:
        """Run ``when_next``; request more every 3/4 of ``batch`` (§2.1, §2.13).

        `SyncSubscriber` runs it on the publisher's thread; `AsyncSubscriber` queues the
        element and its drain runs it (as ``_handle_next``).
        """
        if item is None:
            raise NullElementError("§2.13: element must not be None")
        if self._done:
            return  # §2.8
        try:
            keep = self.when_next(item)
        except Exception as exc:
            self._cancel_subscription()
            self._handle_error_hook(exc)
            return
        if keep is False:
            self._cancel_subscription()
            self._finish(None)
            return
        self._received += 1
        if self._received == self._limit:
            self._received = 0
            subscription = self._subscription
            if subscription is not None:
                subscription.request(self._limit)  # §2.1, at the end of processing

    # SyncSubscriber's on_next is this very function, not a wrapper: one call less per element.
    _handle_next = on_next

    def _handle_error(self, exc: BaseException) -> None:
        if self._done:
            return
        self._done = True
        self._subscription = None  # §2.4
        self._handle_error_hook(exc)

    def _handle_complete(self) -> None:
        if self._done:
            return
        self._done = True
        self._subscription = None  # §2.4
        try:
            self.when_complete()
        except Exception as exc:
            logger.exception("%s.when_complete raised", type(self).__name__)
            self._finish(exc)
        else:
            self._finish(None)

    def _handle_error_hook(self, exc: BaseException) -> None:
        try:
            self.when_error(exc)
        except Exception:
            logger.exception("%s.when_error raised", type(self).__name__)
        self._finish(exc)

    def _finish(self, failure: BaseException | None) -> None:
        """Resolve `completion`, once."""
        if self.completion.done():
            return
        if failure is None:
            self.completion.set_result(None)
        else:
            self.completion.set_exception(failure)

    def _cancel_subscription(self) -> None:
        self._done = True
        subscription, self._subscription = self._subscription, None
        if subscription is not None:
            subscription.cancel()  # §2.6


class SyncSubscriber(_HookSubscriber[T]):
    """Runs the hooks on the publisher's thread, during ``on_next`` and the terminal calls.

    A subclass overrides the hooks, never ``on_next``, ``on_error`` or ``on_complete``: a
    class that does is refused with a ``TypeError`` when it is defined.

    Args:
        batch: elements requested at a time; outstanding demand never exceeds it.
    """

    def on_subscribe(self, subscription: Subscription) -> None:
        """Store the subscription and request ``batch`` (§2.1, §2.5, §2.13)."""
        require_not_none(subscription, "subscription", "§2.13")
        self._handle_subscribe(subscription)

    def on_error(self, exc: BaseException) -> None:
        """Run ``when_error`` (§2.4, §2.10, §2.13)."""
        require_not_none(exc, "error", "§2.13")
        self._handle_error(exc)

    def on_complete(self) -> None:
        """Run ``when_complete`` (§2.4, §2.9)."""
        self._handle_complete()

    def cancel(self) -> None:
        """Cancel the subscription from inside a hook; `completion` resolves to None."""
        self._cancel_subscription()
        self._finish(None)


class AsyncSubscriber(_HookSubscriber[T]):
    """Runs the hooks on an executor, so a slow consumer never holds the publisher's thread
    (§2.2). Signals are queued (at most ``batch`` elements, as that is all it requests) and
    processed one at a time in arrival order by a `Drain` whose passes run on the executor
    (§1.3, §2.11).

    A subclass overrides the hooks, never ``on_next``, ``on_error`` or ``on_complete``: a
    class that does is refused with a ``TypeError`` when it is defined.

    Args:
        executor: where the hooks run; the library's shared pool by default.
        batch: elements requested at a time; the queue never holds more.
    """

    def __init__(self, executor: Executor | None = None, batch: int = 256) -> None:
        super().__init__(batch)
        self._executor = executor or default_executor()
        self._signals: deque[tuple[Callable[..., None], Any]] = deque()
        self._drain = Drain(self._handle_signals, run_on=self._submit)
        self._refused = False  # the executor refused a pass: nothing runs the hooks any more
        self._cancel_requested = False

    def on_subscribe(self, subscription: Subscription) -> None:
        """Queue the subscription; the drain stores it and requests (§2.1, §2.5, §2.13)."""
        require_not_none(subscription, "subscription", "§2.13")
        self._enqueue(self._handle_subscribe, subscription)

    def on_next(self, item: T) -> None:
        """Queue one element for ``when_next`` (§2.13)."""
        require_not_none(item, "element", "§2.13")
        self._enqueue(self._handle_next, item)

    def on_error(self, exc: BaseException) -> None:
        """Queue the failure for ``when_error`` (§2.4, §2.10, §2.13)."""
        require_not_none(exc, "error", "§2.13")
        self._enqueue(self._handle_error, exc)

    def on_complete(self) -> None:
        """Queue completion for ``when_complete`` (§2.4, §2.9)."""
        self._enqueue(lambda _: self._handle_complete(), None)

    def cancel(self) -> None:
        """Cancel the subscription, from any thread; the drain task does it (§2.7)."""
        self._cancel_requested = True
        self._enqueue(_noop, None)

    def _enqueue(self, handler: Callable[..., None], argument: Any) -> None:
        if self._refused:
            return
        self._signals.append((handler, argument))
        self._drain.signal()

    def _submit(self, passes: Callable[[], None]) -> None:
        """The drain's ``run_on``: its passes run on the executor."""
        try:
            self._executor.submit(passes)
        except RuntimeError as exc:  # the executor is shut down: nothing can run the hooks
            self._refused = True  # no pass is running, and none will
            self._signals.clear()
            self._cancel_subscription()
            refused = ReactiveStreamsError(f"the executor refused work: {exc}")
            logger.error("%s: %s", type(self).__name__, refused)
            self._finish(refused)

    def _handle_signals(self) -> None:
        """One drain pass: the queued signals, in arrival order."""
        signals = self._signals
        while signals:
            handler, argument = signals.popleft()
            if self._cancel_requested and not self._done:
                self._cancel_subscription()
                self._finish(None)
            handler(argument)


def _noop(_: Any) -> None:
    pass
