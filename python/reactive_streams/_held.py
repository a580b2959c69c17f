"""`HeldRelay`: the kit of the operators that hold elements between their upstream and their
downstream, for a time (``delay``, ``buffer``, ``debounce``), in a bounded queue
(``on_backpressure_buffer``, ``publish_on``) or in one slot (``on_backpressure_latest``,
``sample``).

Each is the upstream's subscriber and the downstream's subscription, with one drain (inline, or
on a scheduler) that alone signals downstream (§1.3): upstream's signals, requests and timers
only record state under the drain's lock and signal it. A subclass says what is ready
(`HeldRelay._take_locked`) and whether anything is still held (`_held_locked`); the drain sends
what is ready within demand (§1.1), and completion once nothing is held. An error from upstream
goes out once what is held and asked for has gone out: nothing the subscriber asked for is lost,
and what it has not asked for is dropped, so the error reaches a subscriber that asks for nothing
more (§1.4; the TCK's processor tests require it). The operator's own failures (`_fail`) go out
at once, before what is held, and cancel upstream.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

from ._api import Publisher, Subscriber, Subscription
from ._demand import Demand, Drain
from ._operators import DISCARD, OperatorPublisher
from ._rules import log_subscriber_failure, require_not_none, signal_or_cancel, signal_terminal
from ._upstream import SerialUpstream

__all__ = ["HeldPublisher", "HeldRelay", "QueuedRelay"]

T = TypeVar("T")
R = TypeVar("R")


class HeldRelay(Subscriber[T], Subscription, Generic[T, R]):
    """Holds elements between upstream and downstream; one drain sends them (see the module)."""

    def __init__(
        self, downstream: Subscriber[R], *, run_on: Callable[[Callable[[], None]], object] | None = None
    ) -> None:
        self._downstream: Subscriber[R] = downstream
        self._upstream = SerialUpstream()  # §2.7: the drain's requests and the first
        self._lock = threading.Lock()
        self._drain = Drain(self._pass, run_on=run_on, lock=self._lock)
        self._demand = Demand()
        self._ended = False  # upstream ended: `_terminal` (None: completed) goes out last
        self._terminal: BaseException | None = None
        self._error: BaseException | None = None  # §3.9, or the operator's own: first
        self._cancelled = False
        self._finished = False
        self._subscribed = False

    # What a subclass says (all but `_take_locked` and `_held_locked` optional).

    def _started(self) -> None:
        """After ``on_subscribe`` went downstream: the first request upstream, the first timer."""

    def _requested(self, n: int) -> None:
        """After the downstream asked for ``n`` more (a legal request, already added to demand)."""

    def _take_locked(self, n: int) -> list[R]:
        """Up to ``n`` (> 0) ready elements, taken out (under the lock)."""
        raise NotImplementedError

    def _held_locked(self) -> bool:
        """Whether anything is still to go out before the end (under the lock)."""
        raise NotImplementedError

    def _ending_locked(self) -> None:
        """Upstream ended: what is pending becomes ready, if the operator sends it (under the lock)."""

    def _clear_locked(self) -> None:
        """Drop what is held: cancelled, or failed at once (under the lock)."""

    def _sent(self, count: int) -> None:
        """After ``count`` elements went downstream, on the drain's thread: replenish upstream."""

    def _after_passes(self) -> None:
        """After passes run inline on this thread (every inline run is followed by this call):
        for requests upstream best made with the drain let go."""

    def _stopped(self) -> None:
        """Once, at the end or after a cancel, on the drain's thread: stop every timer."""

    # Upstream's signals.

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "subscription", "§2.13")
        if self._subscribed:
            subscription.cancel()  # §2.5
            return
        self._subscribed = True
        self._upstream.set(subscription)
        with self._lock:  # the drain held while on_subscribe runs: nothing overlaps it (§1.3)
            held = self._drain.signal_locked()
        if signal_or_cancel(self._downstream, "on_subscribe", self, self.cancel):  # §1.9, §2.13
            self._started()
        if held:
            self._passes()

    def on_error(self, exc: BaseException) -> None:
        require_not_none(exc, "error", "§2.13")
        self._end(exc)

    def on_complete(self) -> None:
        self._end(None)

    def _end(self, error: BaseException | None) -> None:
        with self._lock:
            if self._ended or self._cancelled:
                return  # §1.7
            self._ended, self._terminal = True, error
            self._ending_locked()
            run = self._drain.signal_locked()
        if run:
            self._passes()

    def _fail(self, error: BaseException) -> None:
        """End the stream with the operator's own ``error``, at once: what is held is dropped and
        upstream cancelled (by the drain)."""
        with self._lock:
            if self._error is None:
                self._error = error
            self._clear_locked()
            run = self._drain.signal_locked()
        if run:
            self._passes()

    def _signal(self) -> None:
        """Signal the drain (for a timer that recorded its event under the lock and let it go)."""
        self._drain.signal()
        self._after_passes()

    def _passes(self) -> None:
        """Run the drain's passes, which `signal_locked` gave this caller, then `_after_passes`."""
        self._drain.passes()
        self._after_passes()

    # Downstream's subscription.

    def request(self, n: int) -> None:
        """Add ``n`` to demand (§3.8, §3.17); the drain sends what is ready. A §3.9 ``n`` ends the
        stream with the error and cancels upstream (§3.9)."""
        with self._lock:
            if self._cancelled or self._finished:
                return  # §3.6
            error = self._demand.add(n)
            if error is not None and self._error is None:
                self._error = error  # §3.9: the drain cancels upstream and signals it
            run = self._drain.signal_locked()
        if error is None:
            self._requested(n)
        if run:
            self._passes()

    def cancel(self) -> None:
        """Cancel upstream at once and drop what is held (§3.5, §3.12, §3.13); timers stop."""
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
            self._clear_locked()
            run = self._drain.signal_locked()
        self._upstream.cancel()
        if run:
            self._passes()

    # The drain.

    def _pass(self) -> None:
        """One pass: what is ready, within demand, downstream; then the end once nothing is held."""
        if self._finished:
            return
        downstream = self._downstream
        items: list[R] | None = None
        end = False
        with self._lock:
            # Read under the lock: a cancel clears what is held, which must not then read as
            # "nothing held" and end the stream with a completion (the property suite found it).
            cancelled, error = self._cancelled, self._error
            if not cancelled and error is None:
                n = self._demand.outstanding
                if n:
                    items = self._take_locked(n)
                    if items:
                        self._demand.produced(len(items))
                # The end once nothing is held; an error once what is held and asked for went
                # out: the rest, not asked for, is dropped, so an error never waits for demand.
                end = self._ended and (
                    not self._held_locked() or (self._terminal is not None and not self._demand.outstanding)
                )
        if cancelled:
            self._finished = True
            self._downstream = DISCARD  # §3.13
            self._stopped()
            return
        if error is not None:
            self._upstream.cancel()
            self._finish(downstream, error)
            return
        if items:
            if not self._send(downstream, items):
                return
            self._sent(len(items))
            if end and self._error is not None:  # a §3.9 request made during those on_next wins
                self._upstream.cancel()
                self._finish(downstream, self._error)
                return
        if end:
            self._finish(downstream, self._terminal)

    def _send(self, downstream: Subscriber[R], items: list[R]) -> bool:
        on_next_batch = getattr(downstream, "on_next_batch", None)
        try:
            if on_next_batch is not None:
                on_next_batch(items)
            else:
                for item in items:
                    if self._cancelled:
                        return False  # §3.12
                    downstream.on_next(item)
        except Exception as exc:
            self.cancel()  # §2.13
            log_subscriber_failure(downstream, "on_next" if on_next_batch is None else "on_next_batch", exc)
            return False
        return True

    def _finish(self, downstream: Subscriber[R], error: BaseException | None) -> None:
        self._finished = True
        self._downstream = DISCARD  # §3.13
        self._stopped()
        signal_terminal(downstream, error)


class QueuedRelay(HeldRelay[T, T]):
    """A held relay whose elements wait in one queue, in order, each ready as it comes
    (``timeout``, ``on_backpressure_buffer``)."""

    def __init__(self, downstream: Subscriber[T]) -> None:
        super().__init__(downstream)
        self._queue: deque[T] = deque()

    def _take_locked(self, n: int) -> list[T]:
        queue = self._queue
        if n >= len(queue):
            items = list(queue)
            queue.clear()
            return items
        return [queue.popleft() for _ in range(n)]

    def _held_locked(self) -> bool:
        return bool(self._queue)

    def _clear_locked(self) -> None:
        self._queue.clear()


class HeldPublisher(OperatorPublisher[T, R]):
    """A held relay's publisher: each subscriber subscribes through a relay of its own."""

    __slots__ = ("_make",)

    def __init__(self, source: Publisher[T], make: Callable[[Subscriber[R]], Subscriber[T]]) -> None:
        super().__init__(source)
        self._make = make

    def _operator(self, downstream: Subscriber[R]) -> Subscriber[T]:
        return self._make(downstream)
