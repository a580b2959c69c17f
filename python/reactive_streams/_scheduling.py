"""Moving work to a `Scheduler`: `subscribe_on` (subscribing, and every request, on it) and
`publish_on` (the subscriber's signals on it, through a bounded queue).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from itertools import chain
from typing import Generic, TypeVar

from ._api import Publisher, Subscriber, Subscription
from ._compose import operator
from ._demand import Demand, Drain, check_request
from ._errors import IllegalDemandError
from ._fluent import fluent
from ._gauges import StreamState, name_of, register, state_of
from ._held import HeldRelay
from ._operator_types import SameOperator
from ._operators import CANCELLED, DISCARD
from ._rules import (
    describe,
    require_not_none,
    signal_or_cancel,
    signal_terminal,
)
from ._schedulers import Scheduler
from ._time_args import scheduler_arg

__all__ = ["publish_on", "subscribe_on"]

T = TypeVar("T")


@fluent
def subscribe_on(scheduler: Scheduler) -> SameOperator:
    """``Scheduler -> (Publisher[T] -> Publisher[T])``: the source subscribed on ``scheduler``,
    and every request made to it there too, so a source that works inside ``subscribe`` or
    ``request`` (`from_iterable`, a blocking generator) does that work on the scheduler's thread,
    not the subscriber's.

    Demand passes through unchanged, one request at a time (§2.7); a cancel goes upstream at
    once, from the calling thread (§3.5); the source's signals pass straight on (§1.3).

    Raises:
        TypeError: ``scheduler`` is not a `Scheduler`.
    """
    chosen = _scheduler_required(scheduler, "subscribe_on(scheduler)")
    return operator("subscribe_on", lambda source: _SubscribeOnPublisher(source, chosen))


@fluent
def publish_on(scheduler: Scheduler, prefetch: int = 4096) -> SameOperator:
    """``Scheduler -> (Publisher[T] -> Publisher[T])``: the subscriber's signals on
    ``scheduler``, in order, through a queue that holds at most ``prefetch`` elements.

    Upstream is asked for ``prefetch`` at first, and again for three quarters of it each time
    that many have gone out downstream, so requested plus queued never exceed ``prefetch``
    (§1.1). Signals downstream go out from one drain on the scheduler, one at a time (§1.3); an
    error or the end goes out after what is queued. A cancel stops the drain and goes upstream
    at once (§3.12); a §3.9 request cancels upstream and is signalled (§3.9).

    The default is larger than Reactor's 256: a hop between two Python threads costs tens of
    microseconds, and with 256 a fast stream spends most of its time hopping (both measured in
    benchmarks/time_and_multicast.py).

    Raises:
        TypeError: ``scheduler`` is not a `Scheduler`. ValueError: ``prefetch`` is not an int >= 1.
    """
    chosen = _scheduler_required(scheduler, "publish_on(scheduler)")
    if isinstance(prefetch, bool) or not isinstance(prefetch, int) or prefetch < 1:
        raise ValueError(f"publish_on(prefetch) needs an int >= 1, got {describe(prefetch)}")
    return operator("publish_on", lambda source: _PublishOnPublisher(source, chosen, prefetch))


class _SubscribeOnPublisher(Publisher[T]):
    __slots__ = ("_scheduler", "_source")

    def __init__(self, source: Publisher[T], scheduler: Scheduler) -> None:
        self._source, self._scheduler = source, scheduler

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        """Subscribe ``subscriber`` to the source, on the scheduler (§1.9)."""
        require_not_none(subscriber, "subscriber", "§1.9")
        relay = _SubscribeOn(subscriber, self._scheduler)
        source = self._source

        def subscribe() -> None:
            try:
                source.subscribe(relay)
            except Exception as exc:  # a publisher that breaks §1.9: signalled, not lost
                relay.on_subscribe(CANCELLED)
                relay.on_error(exc)

        self._scheduler.schedule(subscribe)


class _SubscribeOn(Subscriber[T], Subscription, Generic[T]):
    """Signals pass straight through; requests go upstream on the scheduler, one at a time."""

    def __init__(self, downstream: Subscriber[T], scheduler: Scheduler) -> None:
        self._downstream: Subscriber[T] = downstream
        self._upstream: Subscription | None = None
        self._lock = threading.Lock()
        self._unrequested = Demand()
        self._illegal: object = None
        self._calls = Drain(self._request_upstream, run_on=scheduler.schedule, lock=self._lock)
        self._cancelled = False

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "subscription", "§2.13")
        if self._upstream is not None or self._cancelled:
            subscription.cancel()  # §2.5, or cancelled before the scheduler subscribed
            return
        self._upstream = subscription
        # Hold the request drain while on_subscribe runs: what it requests goes upstream from the
        # scheduler once it has returned, so no on_next overlaps it on another thread (§1.3).
        with self._lock:
            held = self._calls.signal_locked()
        signal_or_cancel(self._downstream, "on_subscribe", self, self.cancel)  # §2.13
        if held:
            self._calls.passes()

    def on_next(self, item: T) -> None:
        self._downstream.on_next(item)

    def on_next_batch(self, items: list[T]) -> None:
        on_next_batch = getattr(self._downstream, "on_next_batch", None)
        if on_next_batch is not None:
            on_next_batch(items)
        else:
            for item in items:
                if self._cancelled:
                    return  # §3.12
                self._downstream.on_next(item)

    def on_error(self, exc: BaseException) -> None:
        require_not_none(exc, "error", "§2.13")
        downstream, self._downstream = self._downstream, DISCARD  # §3.13
        signal_terminal(downstream, exc)

    def on_complete(self) -> None:
        downstream, self._downstream = self._downstream, DISCARD  # §3.13
        signal_terminal(downstream, None)

    def request(self, n: int) -> None:
        """Record ``n``, to be asked of the source on the scheduler (§2.7); a §3.9 ``n`` is passed
        there as it is, for the source to signal."""
        with self._lock:
            if self._cancelled:
                return  # §3.6
            if n.__class__ is int and n > 0:
                self._unrequested.add(n)
            elif isinstance(check_request(n), IllegalDemandError):
                if self._illegal is None:
                    self._illegal = n
            else:
                self._unrequested.add(n)
            run = self._calls.signal_locked()
        if run:
            self._calls.passes()

    def cancel(self) -> None:
        """Cancel the source at once (§3.5), and drop the subscriber (§3.13)."""
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
        self._downstream = DISCARD
        upstream = self._upstream
        if upstream is not None:
            upstream.cancel()

    def _request_upstream(self) -> None:
        with self._lock:
            upstream = self._upstream
            if self._cancelled or upstream is None:
                return
            illegal, self._illegal = self._illegal, None
            n = self._unrequested.outstanding
            self._unrequested.outstanding = 0
        if illegal is not None:
            upstream.request(illegal)  # type: ignore[arg-type]  # §3.9, signalled by the source
        elif n:
            upstream.request(n)


class _PublishOnPublisher(Publisher[T]):
    __slots__ = ("_prefetch", "_scheduler", "_source")

    def __init__(self, source: Publisher[T], scheduler: Scheduler, prefetch: int) -> None:
        self._source, self._scheduler, self._prefetch = source, scheduler, prefetch

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        """Subscribe ``subscriber`` through a queue drained on the scheduler (§1.9)."""
        require_not_none(subscriber, "subscriber", "§1.9")
        self._source.subscribe(_PublishOn(subscriber, self._scheduler, self._prefetch, name_of(self._source)))


class _PublishOn(HeldRelay[T, T]):
    """The queue between the source's thread and the scheduler's; the kit's drain, run on the
    scheduler, empties it."""

    def __init__(self, downstream: Subscriber[T], scheduler: Scheduler, prefetch: int, name: str) -> None:
        super().__init__(downstream, run_on=scheduler.schedule)
        self._prefetch = prefetch
        self._limit = max(1, prefetch - (prefetch >> 2))  # ask again every 3/4 of prefetch
        self._queue: deque[list[T]] = deque()  # lists of elements, as they came
        self._queued = 0
        self._sent_since = 0  # since the last request upstream (the drain's)
        # For `stream_state`, counted per request and per pass, never per element.
        self._name = name
        self._requested_in_all = self._sent_in_all = 0
        self._sending = 0  # taken from the queue by the drain's pass, not yet sent
        self._since = time.monotonic()  # the last pass that sent elements downstream
        register(self)

    def stream_state(self) -> StreamState | None:
        """The queue's state (`describe_streams`): what it holds for the scheduler's side, the
        demand outstanding upstream, and on whom it waits."""
        with self._lock:
            if self._finished or self._cancelled:
                return None
            return state_of(
                "publish_on",
                self._name,
                requested=self._requested_in_all,
                delivered=self._sent_in_all,
                held=self._queued + self._sending,  # what downstream is still on, too
                since=self._since,
            )

    def _started(self) -> None:
        self._requested_in_all += self._prefetch
        self._upstream.request(self._prefetch)

    def on_next(self, item: T) -> None:
        require_not_none(item, "element", "§2.13")
        self._enqueue([item])

    def on_next_batch(self, items: list[T]) -> None:
        self._enqueue(items)  # its sender checked them (§2.13) and gave the list up

    def _enqueue(self, items: list[T]) -> None:
        with self._lock:
            if self._cancelled or self._ended:
                return  # §2.8
            self._queue.append(items)
            self._queued += len(items)
            run = self._drain.signal_locked()
        if run:
            self._drain.passes()

    def _held_locked(self) -> bool:
        return self._queued > 0

    def _clear_locked(self) -> None:
        self._queue.clear()
        self._queued = 0

    def _take_locked(self, n: int) -> list[T]:
        """The next ``n`` queued elements (at most), as one list."""
        count = min(n, self._queued)
        if not count:
            return []
        queue = self._queue
        self._queued -= count
        self._sending = count
        first = queue[0]
        if len(first) == count:
            return queue.popleft()
        if len(first) > count:
            queue[0] = first[count:]
            return first[:count]
        taken: list[list[T]] = []
        left = count
        while left:
            part = queue[0]
            if len(part) <= left:
                taken.append(queue.popleft())
                left -= len(part)
            else:
                taken.append(part[:left])
                queue[0] = part[left:]
                left = 0
        return list(chain.from_iterable(taken))

    def _sent(self, count: int) -> None:
        self._sending = 0
        self._sent_in_all += count
        self._since = time.monotonic()
        self._sent_since += count
        if self._sent_since >= self._limit and not self._ended:
            sent, self._sent_since = self._sent_since, 0
            self._requested_in_all += sent
            self._upstream.request(sent)  # what left the queue: the bound stays prefetch


def _scheduler_required(scheduler: object, what: str) -> Scheduler:
    if scheduler is None:
        raise TypeError(f"{what} needs a reactive_streams.Scheduler, got None")
    return scheduler_arg(scheduler, what, waits=False)
