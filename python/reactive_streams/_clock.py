"""Sources of time: `interval` (a tick every period) and `timer` (one element after a delay),
each on a `Scheduler`.

A tick is due whether or not the subscriber asked for it: `interval` emits it if there is
demand, and otherwise ends the stream with `MissingDemandError`, naming the tick it could not
deliver (as Reactor's ``Flux.interval`` does), unless a backpressure strategy downstream
(``on_backpressure_drop``, ``on_backpressure_latest``, ``on_backpressure_buffer``) asks for every
tick and chooses what to do with those nobody wants. `timer`'s one element waits for demand.
"""

from __future__ import annotations

from ._api import Publisher, Subscriber
from ._demand import Drain, DrainedSubscription, subscribe_and_start
from ._errors import MissingDemandError
from ._rules import log_subscriber_failure, require_not_none, signal_terminal
from ._schedulers import Cancellable, Scheduler
from ._time_args import scheduler_arg, seconds_arg

__all__ = ["interval", "timer"]


def interval(period: float, *, scheduler: Scheduler | None = None) -> Publisher[int]:
    """``float -> Publisher[int]``: 0, 1, 2, ..., one every ``period`` seconds on ``scheduler``
    (default: `default_scheduler`), the first after one period; it never completes.

    A tick is due whether or not it was asked for (§1.1 bounds what is sent, not what is due):
    with demand it goes out; without, the stream ends with `MissingDemandError` naming the tick,
    and the timer stops. Put a backpressure strategy after it to keep going (drop the ticks
    nobody asked for, keep the latest, or buffer a bounded number). Ticks keep to the schedule
    (``start + k × period``) however long a tick takes. A cancel stops the timer (§3.12); a §3.9
    request is signalled.

    Raises:
        TypeError, ValueError: ``period`` is not a positive number of seconds, or ``scheduler``
            not a `Scheduler`.
    """
    seconds = seconds_arg(period, "interval(period)", positive=True)
    return _Interval(seconds, scheduler_arg(scheduler, "interval(scheduler=)"))


def timer(delay: float, *, scheduler: Scheduler | None = None) -> Publisher[int]:
    """``float -> Publisher[int]``: one element, ``0``, ``delay`` seconds after the subscription
    (on ``scheduler``, default `default_scheduler`), then completion. The element waits for a
    request if none has come by then (§1.1); a cancel stops the timer (§3.12).

    Raises:
        TypeError, ValueError: ``delay`` is not a number of seconds >= 0, or ``scheduler`` not a
            `Scheduler`.
    """
    return _Timer(seconds_arg(delay, "timer(delay)"), scheduler_arg(scheduler, "timer(scheduler=)"))


class _Interval(Publisher[int]):
    __slots__ = ("_period", "_scheduler")

    def __init__(self, period: float, scheduler: Scheduler) -> None:
        self._period, self._scheduler = period, scheduler

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        """Signal ``on_subscribe``, then start the ticks (§1.9)."""
        require_not_none(subscriber, "subscriber", "§1.9")
        subscription = _Ticks(subscriber, self._period, self._scheduler)
        subscribe_and_start(subscriber, subscription)
        subscription.arm()


class _Ticks(DrainedSubscription[int]):
    """Ticks due and not yet sent; the drain sends them as demand allows, or ends the stream."""

    __slots__ = ("__weakref__", "_armed", "_count", "_due", "_period", "_scheduler", "_start", "_timer")

    def __init__(self, subscriber: Subscriber[int], period: float, scheduler: Scheduler) -> None:
        super().__init__(subscriber, Drain(self._send))
        self._period, self._scheduler = period, scheduler
        self._start = scheduler.now()
        self._count = 0  # ticks sent
        self._due = 0  # ticks due, not yet sent
        self._armed = 0  # ticks scheduled so far: the next is due at start + (armed + 1) × period
        self._timer: Cancellable | None = None

    def arm(self) -> None:
        """Set the timer for the next tick, on the schedule."""
        with self._drain.lock:
            if self._subscriber is None:
                return
            self._armed += 1
            at = self._start + self._armed * self._period
            self._timer = self._scheduler.schedule_after(at - self._scheduler.now(), self._tick)

    def _tick(self) -> None:
        with self._drain.lock:
            if self._subscriber is None:
                return
            self._due += 1
            run = self._drain.signal_locked()
        if run:
            self._drain.passes()
        self.arm()

    def cancel(self) -> None:
        """Stop the timer and drop the subscriber (§3.5, §3.12, §3.13)."""
        with self._drain.lock:
            self._subscriber = None
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()

    def _send(self) -> None:
        """One drain pass: the due ticks demand allows; one due without demand ends the stream."""
        subscriber = self._subscriber
        if subscriber is None:
            return
        failure: BaseException | None = self._error  # §3.9
        sent = 0
        if failure is None:
            with self._drain.lock:
                due, demand = self._due, self._demand.outstanding
            for _ in range(min(due, demand)):
                try:
                    subscriber.on_next(self._count)
                except Exception as exc:
                    self.cancel()  # §2.13
                    log_subscriber_failure(subscriber, "on_next", exc)
                    return
                self._count += 1
                sent += 1
                if self._subscriber is None:
                    return  # cancelled inside on_next
            with self._drain.lock:
                self._due -= sent
                self._demand.produced(sent)
                if self._due and not self._demand.outstanding:
                    failure = MissingDemandError(
                        f"interval({self._period:g}): tick {self._count} was due and the subscriber had "
                        "asked for none; it is lost, and the ticks stop. Put on_backpressure_drop(), "
                        "on_backpressure_latest() or on_backpressure_buffer(...) after interval() to keep "
                        "going without demand"
                    )
        if failure is not None:
            self.cancel()
            signal_terminal(subscriber, failure)


class _Timer(Publisher[int]):
    __slots__ = ("_delay", "_scheduler")

    def __init__(self, delay: float, scheduler: Scheduler) -> None:
        self._delay, self._scheduler = delay, scheduler

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        """Signal ``on_subscribe``, then set the timer (§1.9)."""
        require_not_none(subscriber, "subscriber", "§1.9")
        subscription = _Fire(subscriber)
        subscribe_and_start(subscriber, subscription)
        subscription.set(self._scheduler.schedule_after(self._delay, subscription.fire))


class _Fire(DrainedSubscription[int]):
    """One element once the timer fires, sent when there is demand for it."""

    __slots__ = ("__weakref__", "_fired", "_timer")

    def __init__(self, subscriber: Subscriber[int]) -> None:
        super().__init__(subscriber, Drain(self._send))
        self._fired = False
        self._timer: Cancellable | None = None

    def set(self, timer: Cancellable) -> None:
        with self._drain.lock:
            cancelled = self._subscriber is None
            self._timer = timer
        if cancelled:
            timer.cancel()

    def fire(self) -> None:
        with self._drain.lock:
            self._fired = True
            run = self._drain.signal_locked()
        if run:
            self._drain.passes()

    def cancel(self) -> None:
        """Stop the timer and drop the subscriber (§3.5, §3.13)."""
        with self._drain.lock:
            self._subscriber = None
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()

    def _send(self) -> None:
        subscriber = self._subscriber
        if subscriber is None:
            return
        if self._error is not None:  # §3.9
            self.cancel()
            signal_terminal(subscriber, self._error)
            return
        with self._drain.lock:
            ready = self._fired and self._demand.outstanding > 0
            if ready:
                self._subscriber = None  # §1.7: one element, then the end
        if ready:
            try:
                subscriber.on_next(0)
            except Exception as exc:
                log_subscriber_failure(subscriber, "on_next", exc)  # §2.13
                return
            signal_terminal(subscriber, None)
