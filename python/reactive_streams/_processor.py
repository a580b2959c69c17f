"""`MapProcessor` (and `IdentityProcessor`): a multicast processing stage with exact demand.

Upstream is asked for no more than every current subscriber can take: the smallest
"requested minus buffered" among them, less what is already on its way (§1.1 held end to
end). Each element goes to every subscriber; a subscriber that joined after a request was
made may buffer up to that request. One drain loop behind a lock-protected work-in-progress
counter makes every downstream signal and every upstream ``request``/``cancel`` (§1.3, §2.7,
§3.3).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast

from ._api import Processor, Subscriber, Subscription
from ._errors import IllegalDemandError, NullElementError, ReactiveStreamsError
from ._rules import (
    MAX_DEMAND,
    add_demand,
    checked_demand,
    log_subscriber_failure,
    require_callable,
    require_not_none,
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
    and later subscribers get ``on_error``.
    """

    def __init__(self, function: Callable[[T], R], *, auto_cancel: bool = True) -> None:
        require_callable(function, "MapProcessor(function)")
        self._function = function
        self._auto_cancel = auto_cancel
        self._lock = threading.Lock()
        self._wip = 0
        self._upstream: Subscription | None = None
        self._outstanding = 0  # requested upstream, not yet received
        self._subscribers: list[_Downstream[R]] = []
        self._had_subscriber = False
        self._done = False  # upstream terminated, or cancelled by this processor
        self._error: BaseException | None = None

    # Subscriber side.

    def on_subscribe(self, subscription: Subscription) -> None:
        """Accept the upstream subscription, or cancel a second one (§2.5, §2.13)."""
        require_not_none(subscription, "subscription", "§2.13")
        with self._lock:
            duplicate = self._upstream is not None or self._done
            if not duplicate:
                self._upstream = subscription
        if duplicate:
            subscription.cancel()
            return
        self._schedule()

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
            self._fail(exc, cancel_upstream=True)
            return
        with self._lock:
            if self._outstanding != MAX_DEMAND:
                self._outstanding -= 1
            for downstream in self._subscribers:
                downstream.queue.append(result)
        self._schedule()

    def on_error(self, exc: BaseException) -> None:
        """Fail every subscriber at once (§4.2, §2.13)."""
        require_not_none(exc, "error", "§2.13")
        self._fail(exc, cancel_upstream=False)

    def on_complete(self) -> None:
        """Complete every subscriber after its buffered elements (§1.5)."""
        with self._lock:
            if self._done:
                return
            self._done = True
            self._upstream = None  # §2.4
        self._schedule()

    # Publisher side.

    def subscribe(self, subscriber: Subscriber[R]) -> None:
        """Add a subscriber; it sees elements that arrive from now on (§1.9, §1.11)."""
        require_not_none(subscriber, "subscriber", "§1.9")
        downstream = _Downstream(self, subscriber)
        try:
            subscriber.on_subscribe(downstream)
        except Exception as exc:
            downstream.cancelled = True  # §2.13
            log_subscriber_failure(subscriber, "on_subscribe", exc)
            return
        with self._lock:
            self._subscribers.append(downstream)
            self._had_subscriber = True
        self._schedule()

    def _fail(self, exc: BaseException, *, cancel_upstream: bool) -> None:
        with self._lock:
            if self._done:
                return
            self._done, self._error = True, exc
            upstream, self._upstream = self._upstream, None
        if cancel_upstream and upstream is not None:
            upstream.cancel()
        self._schedule()

    # The drain.

    def _schedule(self) -> None:
        with self._lock:
            self._wip += 1
            if self._wip != 1:
                return
        missed = 1
        while True:
            self._drain_once()
            with self._lock:
                self._wip -= missed
                missed = self._wip
                if missed == 0:
                    return

    def _drain_once(self) -> None:
        with self._lock:
            subscribers = list(self._subscribers)
        for downstream in subscribers:
            if not downstream.deliver(self._done, self._error):
                with self._lock:
                    self._subscribers.remove(downstream)
        with self._lock:
            upstream, done = self._upstream, self._done
            if done or upstream is None:
                return
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
                capacity = min(d.capacity() for d in self._subscribers)
                want = capacity - self._outstanding if self._outstanding != MAX_DEMAND else 0
                if want > 0:
                    self._outstanding = add_demand(self._outstanding, want)
        if done:
            return
        if self._done:
            upstream.cancel()
        elif want > 0:
            upstream.request(want)


class IdentityProcessor(MapProcessor[T, T]):
    """A `MapProcessor` that passes elements through unchanged."""

    def __init__(self, *, auto_cancel: bool = True) -> None:
        super().__init__(_identity, auto_cancel=auto_cancel)


def _identity(item: T) -> T:
    return item


class _Downstream(Subscription, Generic[R]):
    """One subscriber's subscription to the processor; only the drain delivers to it."""

    def __init__(self, processor: MapProcessor[Any, R], subscriber: Subscriber[R]) -> None:
        self._processor: MapProcessor[Any, R] | None = processor
        self.subscriber: Subscriber[R] | None = subscriber
        self.queue: deque[R] = deque()
        self.requested = 0
        self.cancelled = False
        self.pending_error: BaseException | None = None

    def capacity(self) -> int:
        if self.requested == MAX_DEMAND:
            return MAX_DEMAND
        return max(0, self.requested - len(self.queue))

    def request(self, n: int) -> None:
        """Add demand; the processor's drain delivers and requests upstream (§3.4, §3.8)."""
        processor = self._processor
        if self.cancelled or processor is None:
            return  # §3.6
        checked = checked_demand(n)
        if isinstance(checked, IllegalDemandError):
            self.pending_error = checked  # §3.9, delivered by the drain
        else:
            with processor._lock:
                self.requested = add_demand(self.requested, checked)
        processor._schedule()

    def cancel(self) -> None:
        """Leave the processor; the drain drops the subscriber (§3.5, §3.7, §3.13)."""
        if self.cancelled:
            return
        self.cancelled = True
        processor = self._processor
        if processor is not None:
            processor._schedule()

    def deliver(self, done: bool, error: BaseException | None) -> bool:
        """Deliver what demand allows; False once this subscription is over."""
        subscriber = self.subscriber
        if subscriber is None or self.cancelled:
            self._release()
            return False
        if self.pending_error is not None:
            return self._end(subscriber, self.pending_error)
        processor = cast("MapProcessor[Any, R]", self._processor)
        while self.queue and self.requested:
            with processor._lock:
                item = self.queue.popleft()
                if self.requested != MAX_DEMAND:
                    self.requested -= 1
            try:
                subscriber.on_next(item)  # §1.1
            except Exception as exc:
                log_subscriber_failure(subscriber, "on_next", exc)  # §2.13
                self._release()
                return False
            if self.cancelled:
                self._release()
                return False
        if error is not None:
            return self._end(subscriber, error)  # §4.2: without waiting for more demand
        if done and not self.queue:
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
