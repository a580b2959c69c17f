"""Operators that keep time on a `Scheduler`: `delay` and `timeout`.

Each takes ``scheduler=`` (default: `default_scheduler`, a thread pool with one timer thread)
and holds at most one timer per subscription, stopped at the end, on error and on cancel.
"""

from __future__ import annotations

from collections import deque
from functools import partial
from typing import Any, TypeVar

from ._api import Publisher, Subscriber
from ._compose import operator
from ._errors import StreamTimeoutError
from ._fluent import fluent
from ._held import HeldPublisher, HeldRelay, QueuedRelay
from ._operator_types import SameOperator, UnionOperator
from ._recovery import catch
from ._rules import require_not_none, require_publisher
from ._schedulers import Cancellable, Scheduler
from ._time_args import scheduler_arg, seconds_arg

__all__ = ["delay", "timeout"]

T = TypeVar("T")
R = TypeVar("R")


@fluent
def delay(duration: float, *, scheduler: Scheduler | None = None) -> SameOperator:
    """``float -> (Publisher[T] -> Publisher[T])``: each element ``duration`` seconds after it
    came, in order, on ``scheduler`` (default: `default_scheduler`). The end goes out after the
    last element held, an error too (nothing asked for is lost; RxJava's
    ``delay(d, delayError=true)``).

    Demand passes upstream as it comes, so at most what was asked for is held (§1.1). A cancel
    drops what is held, stops the timer, and reaches upstream (§3.12); a §3.9 request is
    signalled.

    Raises:
        TypeError, ValueError: ``duration`` is not a number of seconds >= 0, or ``scheduler``
            not a `Scheduler` that can wait.
    """
    seconds = seconds_arg(duration, "delay(duration)")
    chosen = scheduler_arg(scheduler, "delay(scheduler=)")
    return operator("delay", lambda source: HeldPublisher(source, lambda d: _Delay(d, seconds, chosen)))


@fluent
def timeout(
    duration: float, fallback: Publisher[R] | None = None, *, scheduler: Scheduler | None = None
) -> UnionOperator[R]:
    """``float -> (Publisher[T] -> Publisher[T | R])``: the source's elements, as long as each
    comes within ``duration`` seconds of the one before (the first, of the subscription). If
    none comes in time, the source is cancelled and the stream ends with `StreamTimeoutError`
    (a ``TimeoutError``), or, given a ``fallback`` publisher, goes on with it, asked for the
    demand still outstanding. Time runs whether or not the subscriber asked (Reactor's and
    RxJava's ``timeout``).

    Demand passes upstream as it comes (§1.1). The timer stops at the end, on error and on
    cancel (§3.12); a §3.9 request is signalled, never taken for a timeout.

    Raises:
        TypeError, ValueError: ``duration`` is not a number of seconds > 0, ``fallback`` not a
            `Publisher`, ``scheduler`` not a `Scheduler` that can wait.
    """
    seconds = seconds_arg(duration, "timeout(duration)", positive=True)
    chosen = scheduler_arg(scheduler, "timeout(scheduler=)")
    if fallback is not None:
        require_publisher(fallback, "timeout(fallback)")
    token = object()  # this operator's own timeouts, not one from upstream, go to the fallback

    def timed(source: Publisher[Any]) -> Publisher[Any]:
        return HeldPublisher(source, lambda d: _Timeout(d, seconds, chosen, token))

    if fallback is None:
        return operator("timeout", timed)
    other = fallback
    recover = catch(lambda error: _fallback(error, token, other))
    return operator("timeout", lambda source: recover(timed(source)))


def _fallback(error: BaseException, token: object, fallback: Publisher[Any]) -> Publisher[Any]:
    if getattr(error, "_timeout_token", None) is token:
        return fallback
    raise error


class _Delay(HeldRelay[T, T]):
    """Elements with the time each is due; one timer, set for the first not yet due."""

    def __init__(self, downstream: Subscriber[T], seconds: float, scheduler: Scheduler) -> None:
        super().__init__(downstream)
        self._seconds, self._scheduler = seconds, scheduler
        self._queue: deque[tuple[float, T]] = deque()
        self._due = 0  # how many at the queue's front are due
        self._timer: Cancellable | None = None

    def _requested(self, n: int) -> None:
        self._upstream.request(n)  # §1.1: only what was asked for is ever held

    def on_next(self, item: T) -> None:
        require_not_none(item, "element", "§2.13")
        with self._lock:
            if self._ended or self._cancelled:
                return  # §2.8
            self._queue.append((self._scheduler.now() + self._seconds, item))
            if self._timer is None:
                self._timer = self._scheduler.schedule_after(self._seconds, self._fire)

    def _fire(self) -> None:
        with self._lock:
            self._timer = None
            if self._cancelled or self._finished:
                return
            queue, now = self._queue, self._scheduler.now()
            due = self._due
            while due < len(queue) and queue[due][0] <= now:
                due += 1
            self._due = due
            if due < len(queue):
                self._timer = self._scheduler.schedule_after(queue[due][0] - now, self._fire)
            run = self._drain.signal_locked()
        if run:
            self._drain.passes()

    def _take_locked(self, n: int) -> list[T]:
        count = min(n, self._due)
        self._due -= count
        popleft = self._queue.popleft
        return [popleft()[1] for _ in range(count)]

    def _held_locked(self) -> bool:
        return bool(self._queue)

    def _clear_locked(self) -> None:
        self._queue.clear()
        self._due = 0

    def _stopped(self) -> None:
        with self._lock:
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()


class _Timeout(QueuedRelay[T]):
    """A relay whose timer, set again by every element, ends the stream when it fires."""

    def __init__(
        self, downstream: Subscriber[T], seconds: float, scheduler: Scheduler, token: object
    ) -> None:
        super().__init__(downstream)
        self._seconds, self._scheduler, self._token = seconds, scheduler, token
        self._index = 0  # elements come so far: a timer set before the last one is stale
        self._timer: Cancellable | None = None

    def _started(self) -> None:
        self._arm(0)

    def _requested(self, n: int) -> None:
        self._upstream.request(n)

    def _arm(self, index: int) -> None:
        with self._lock:
            if self._index != index or self._ended or self._cancelled:
                return  # an element came meanwhile, or the stream is over
            stale, self._timer = (
                self._timer,
                self._scheduler.schedule_after(self._seconds, partial(self._fire, index)),
            )
        if stale is not None:
            stale.cancel()

    def on_next(self, item: T) -> None:
        require_not_none(item, "element", "§2.13")
        with self._lock:
            if self._ended or self._cancelled:
                return  # §2.8: timed out already
            self._index += 1
            index = self._index
            self._queue.append(item)
            run = self._drain.signal_locked()
        if run:
            self._drain.passes()
        self._arm(index)

    def _fire(self, index: int) -> None:
        with self._lock:
            if self._index != index or self._ended or self._cancelled:
                return
            error = StreamTimeoutError(
                f"timeout({self._seconds:g}): no element came within {self._seconds:g} s "
                + ("of the subscription" if index == 0 else f"after element {index}")
            )
            error._timeout_token = self._token  # type: ignore[attr-defined]
            self._ended, self._terminal, self._timer = True, error, None
            run = self._drain.signal_locked()
        self._upstream.cancel()
        if run:
            self._drain.passes()

    def _stopped(self) -> None:
        with self._lock:
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()  # no timer outlives the stream
