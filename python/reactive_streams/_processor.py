"""`MapProcessor` (and `IdentityProcessor`): a multicast processing stage with exact demand.

Upstream is asked for no more than every current subscriber can take: the smallest
"requested minus buffered" among them, less what is already on its way (§1.1 held end to
end). Each element goes to every subscriber; a subscriber that joined after a request was
made may buffer up to that request. Every event records state under the lock and signals one
inline `Drain` (the kit in ``_demand``); its passes make every downstream signal, from
``on_subscribe`` to the terminal one, and every upstream ``request``/``cancel`` (§1.3, §2.7,
§3.3).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast

from ._api import Processor, Subscriber, Subscription
from ._demand import MAX_DEMAND, Demand, Drain
from ._errors import NullElementError, ReactiveStreamsError
from ._rules import (
    duplicate_subscribe_error,
    log_subscriber_failure,
    require_callable,
    require_not_none,
    signal_or_cancel,
    signal_terminal,
)

__all__ = ["IdentityProcessor", "MapProcessor"]

T = TypeVar("T")
R = TypeVar("R")


class MapProcessor(Processor[T, R]):
    """Applies ``function`` to each element from upstream and multicasts the results.

    Emission is coordinated: an element reaches the subscribers only when every one of them has
    demand for it (the TCK's ``does_coordinated_emission``), so the TCK's two optional §1.11
    multicast tests that assume independent subscribers are skipped for it.

    An exception from ``function`` cancels upstream and fails every subscriber (§1.4); an
    upstream error reaches every subscriber at once, after the buffered elements it has demand
    for, dropping the rest (§4.2);
    completion reaches each after its buffered elements (§1.5). With ``auto_cancel`` (the
    default), when the last subscriber cancels the upstream subscription is cancelled too,
    and later subscribers get ``on_error``. A subscriber that subscribes while already
    subscribed fails its existing subscription and gains no second one (§2.12).
    """

    def __init__(self, function: Callable[[T], R], *, auto_cancel: bool = True) -> None:
        require_callable(function, "MapProcessor(function)")
        self._function = function
        self._auto_cancel = auto_cancel
        self._lock = threading.Lock()
        self._drain = Drain(self._pass, lock=self._lock)
        self._upstream: Subscription | None = None  # kept until the drain cancels it
        self._requested = Demand()  # requested upstream, not yet received
        self._subscribers: list[_Downstream[R]] = []
        self._had_subscriber = False
        self._done = False  # upstream terminated, or to be cancelled by the drain
        self._error: BaseException | None = None

    # Subscriber side.

    def on_subscribe(self, subscription: Subscription) -> None:
        """Accept the upstream subscription, or cancel a second one (§2.5, §2.13)."""
        require_not_none(subscription, "subscription", "§2.13")
        with self._lock:
            duplicate = self._upstream is not None or self._done
            if not duplicate:
                self._upstream = subscription
                run = self._drain.signal_locked()
        if duplicate:
            subscription.cancel()
        elif run:
            self._drain.passes()

    def on_next(self, item: T) -> None:
        """Map ``item`` and buffer it for every subscriber (§1.1, §2.13)."""
        require_not_none(item, "element", "§2.13")
        if self._done:
            return  # §2.8
        try:
            result = self._function(item)
            if result is None:
                raise NullElementError("§2.13: the processor's function returned None")
        except Exception as exc:
            self._finish(exc, cancel_upstream=True)  # §1.4: the drain cancels, then signals
            return
        with self._lock:
            self._requested.produced(1)
            for downstream in self._subscribers:
                downstream.queue.append(result)
            run = self._drain.signal_locked()
        if run:
            self._drain.passes()

    def on_error(self, exc: BaseException) -> None:
        """Fail every subscriber at once (§4.2, §2.13)."""
        require_not_none(exc, "error", "§2.13")
        self._finish(exc, cancel_upstream=False)

    def on_complete(self) -> None:
        """Complete every subscriber after its buffered elements (§1.5)."""
        self._finish(None, cancel_upstream=False)

    # Publisher side.

    def subscribe(self, subscriber: Subscriber[R]) -> None:
        """Add a subscriber; it sees elements that arrive from now on (§1.9, §1.11).

        Subscribing a subscriber that is already subscribed fails its existing subscription
        with ``on_error`` and adds none, as ``java.util.concurrent.SubmissionPublisher`` does
        (§1.10, §2.12).
        """
        require_not_none(subscriber, "subscriber", "§1.9")
        with self._lock:
            existing = next((d for d in self._subscribers if d.subscriber is subscriber), None)
            if existing is None:
                self._subscribers.append(_Downstream(self, subscriber))  # on_subscribe: the drain
            elif existing.pending_error is None:
                existing.pending_error = duplicate_subscribe_error()
            run = self._drain.signal_locked()
        if run:
            self._drain.passes()

    def _finish(self, error: BaseException | None, *, cancel_upstream: bool) -> None:
        with self._lock:
            if self._done:
                return
            self._done, self._error = True, error
            if not cancel_upstream:
                self._upstream = None  # §2.4: upstream is over already
            run = self._drain.signal_locked()
        if run:
            self._drain.passes()

    # The drain.

    def _pass(self) -> None:
        """One drain pass: cancel upstream if it must go, deliver what each subscriber's demand
        allows, then ask upstream for what every subscriber can take."""
        with self._lock:
            upstream = self._upstream
            if self._done:
                self._upstream = None
            subscribers = list(self._subscribers)
            done, error = self._done, self._error
        if done and upstream is not None:
            upstream.cancel()  # §1.4: the function failed; cancel before signalling
            upstream = None
        for downstream in subscribers:
            if not downstream.deliver(done, error):
                with self._lock:
                    self._subscribers.remove(downstream)
        if upstream is None:
            return
        with self._lock:
            if self._done or self._upstream is None:
                return  # finished meanwhile: the next pass sees it
            if not self._subscribers:
                if not (self._auto_cancel and self._had_subscriber):
                    return
                self._done = True  # the last subscriber left: stop upstream
                self._error = ReactiveStreamsError(
                    "this processor cancelled its upstream when its last subscriber cancelled"
                )
                self._upstream = None
                want = 0
            else:
                requested = self._requested
                capacity = min(d.capacity() for d in self._subscribers)
                want = 0 if requested.unbounded else capacity - requested.outstanding
                if want > 0:
                    requested.add(want)  # §3.17
        if want > 0:
            upstream.request(want)
        elif self._done:
            upstream.cancel()


class IdentityProcessor(MapProcessor[T, T]):
    """A `MapProcessor` that passes elements through unchanged."""

    def __init__(self, *, auto_cancel: bool = True) -> None:
        super().__init__(_identity, auto_cancel=auto_cancel)


def _identity(item: T) -> T:
    return item


class _Downstream(Subscription, Generic[R]):
    """One subscriber's subscription to the processor; only the drain signals its subscriber."""

    def __init__(self, processor: MapProcessor[Any, R], subscriber: Subscriber[R]) -> None:
        self._processor: MapProcessor[Any, R] | None = processor
        self.subscriber: Subscriber[R] | None = subscriber
        self.subscribed = False
        self.queue: deque[R] = deque()
        self.demand = Demand()
        self.cancelled = False
        self.pending_error: BaseException | None = None

    def capacity(self) -> int:
        demand = self.demand
        if demand.unbounded:
            return MAX_DEMAND
        return max(0, demand.outstanding - len(self.queue))

    def request(self, n: int) -> None:
        """Add demand; the processor's drain delivers and requests upstream (§3.4, §3.8)."""
        processor = self._processor
        if self.cancelled or processor is None:
            return  # §3.6
        with processor._lock:
            error = self.demand.add(n)
            if error is not None and self.pending_error is None:
                self.pending_error = error  # §3.9, delivered by the drain
            run = processor._drain.signal_locked()
        if run:
            processor._drain.passes()

    def cancel(self) -> None:
        """Leave the processor; the drain drops the subscriber (§3.5, §3.7, §3.13)."""
        if self.cancelled:
            return
        self.cancelled = True
        processor = self._processor
        if processor is not None:
            processor._drain.signal()

    def deliver(self, done: bool, error: BaseException | None) -> bool:
        """Signal what is due, from inside the drain; False once this subscription is over."""
        subscriber = self.subscriber
        if subscriber is None or self.cancelled:
            self._release()
            return False
        processor = cast("MapProcessor[Any, R]", self._processor)
        if not self.subscribed:
            self.subscribed = True
            if not signal_or_cancel(subscriber, "on_subscribe", self, self._release):  # §1.9
                return False
            processor._had_subscriber = True
            if self.cancelled:
                self._release()
                return False
        if self.pending_error is not None:
            return self._end(subscriber, self.pending_error)
        queue, demand, lock = self.queue, self.demand, processor._lock
        while queue and demand.outstanding:
            with lock:
                item = queue.popleft()
                demand.produced(1)
            try:
                subscriber.on_next(item)  # §1.1
            except Exception as exc:
                log_subscriber_failure(subscriber, "on_next", exc)  # §2.13
                self._release()
                return False
            if self.cancelled:
                self._release()
                return False
            if self.pending_error is not None:
                return self._end(subscriber, self.pending_error)  # §3.9, §2.12: at once
        if error is not None:
            return self._end(subscriber, error)  # §4.2: without waiting for more demand
        if done and not queue:
            return self._end(subscriber, None)
        return True

    def _end(self, subscriber: Subscriber[R], error: BaseException | None) -> bool:
        self._release()
        signal_terminal(subscriber, error)
        return False

    def _release(self) -> None:
        self.cancelled = True
        self.subscriber = self._processor = None  # §3.13
        self.queue.clear()
