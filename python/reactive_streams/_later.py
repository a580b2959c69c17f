"""`delay_subscription`: the source subscribed after a delay, on a `Scheduler`; the subscriber
gets its subscription at once, and what it asks for meanwhile is kept for the source. `retry`'s
backoff is built on it.
"""

from __future__ import annotations

import threading
from typing import TypeVar

from ._api import Publisher, Subscriber, Subscription
from ._compose import operator
from ._demand import check_request
from ._errors import IllegalDemandError
from ._fluent import fluent
from ._operator_types import SameOperator
from ._operators import DISCARD
from ._rules import require_not_none, signal_or_cancel, signal_terminal
from ._schedulers import Cancellable, Scheduler
from ._time_args import scheduler_arg, seconds_arg
from ._upstream import SerialUpstream

__all__ = ["DelayedSubscribe", "delay_subscription"]

T = TypeVar("T")


@fluent
def delay_subscription(duration: float, *, scheduler: Scheduler | None = None) -> SameOperator:
    """``float -> (Publisher[T] -> Publisher[T])``: the source subscribed ``duration`` seconds
    after the subscriber subscribed, on ``scheduler`` (default: `default_scheduler`).

    The subscriber gets its subscription at once (§1.9); what it asks for meanwhile is asked of
    the source once subscribed (§3.17), a §3.9 request too, for the source to signal. A cancel
    stops the timer, or cancels the source (§3.12).

    Raises:
        TypeError, ValueError: as `delay`.
    """
    seconds = seconds_arg(duration, "delay_subscription(duration)")
    chosen = scheduler_arg(scheduler, "delay_subscription(scheduler=)")
    return operator("delay_subscription", lambda source: DelayedSubscribe(source, seconds, chosen))


class DelayedSubscribe(Publisher[T]):
    __slots__ = ("_scheduler", "_seconds", "_source")

    def __init__(self, source: Publisher[T], seconds: float, scheduler: Scheduler) -> None:
        self._source, self._seconds, self._scheduler = source, seconds, scheduler

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        """Give ``subscriber`` its subscription now (§1.9); subscribe the source later."""
        require_not_none(subscriber, "subscriber", "§1.9")
        relay = _Later(subscriber)
        if signal_or_cancel(subscriber, "on_subscribe", relay, relay.cancel):  # §2.13
            relay.wait(
                self._scheduler.schedule_after(self._seconds, lambda: relay.subscribe_to(self._source))
            )


class _Later(Subscriber[T], Subscription):
    """The subscription given before the source is subscribed; then a relay of its signals."""

    def __init__(self, downstream: Subscriber[T]) -> None:
        self._downstream: Subscriber[T] = downstream
        self._upstream = SerialUpstream()  # keeps what is asked, and a cancel, until subscribed
        self._lock = threading.Lock()
        self._timer: Cancellable | None = None
        self._illegal: object = None
        self._subscription: Subscription | None = None
        self._subscribed = False
        self._cancelled = False

    def wait(self, timer: Cancellable) -> None:
        with self._lock:
            cancelled = self._cancelled
            self._timer = None if cancelled else timer
        if cancelled:
            timer.cancel()

    def subscribe_to(self, source: Publisher[T]) -> None:
        with self._lock:
            self._timer = None
            if self._cancelled:
                return
        try:
            source.subscribe(self)
        except Exception as exc:  # a publisher that breaks §1.9: signalled, not lost
            self._cancelled = True
            downstream, self._downstream = self._downstream, DISCARD
            signal_terminal(downstream, exc)

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "subscription", "§2.13")
        if self._subscribed:
            subscription.cancel()  # §2.5
            return
        self._subscribed = True
        with self._lock:
            illegal, self._illegal = self._illegal, None
            self._subscription = subscription
        if illegal is not None:
            subscription.request(illegal)  # type: ignore[arg-type]  # §3.9, signalled by the source
        self._upstream.set(subscription)

    def on_next(self, item: T) -> None:
        self._downstream.on_next(item)

    def on_error(self, exc: BaseException) -> None:
        require_not_none(exc, "error", "§2.13")
        downstream, self._downstream = self._downstream, DISCARD  # §3.13
        signal_terminal(downstream, exc)

    def on_complete(self) -> None:
        downstream, self._downstream = self._downstream, DISCARD  # §3.13
        signal_terminal(downstream, None)

    def request(self, n: int) -> None:
        """Ask the source for ``n``, now or once it is subscribed (§3.8); a §3.9 ``n`` goes to it as
        it is, for it to signal."""
        if isinstance(check_request(n), IllegalDemandError):
            with self._lock:
                subscription = self._subscription
                if subscription is None and self._illegal is None:
                    self._illegal = n
            if subscription is not None:
                subscription.request(n)  # §3.9: the source signals it, on its own thread (§1.3)
            return
        self._upstream.request(n)

    def cancel(self) -> None:
        """Stop the timer, or cancel the source (§3.5, §3.12); drop the subscriber (§3.13)."""
        with self._lock:
            self._cancelled = True
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        self._downstream = DISCARD
        self._upstream.cancel()
