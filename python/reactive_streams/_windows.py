"""Operators over windows of time: `buffer` (lists by size or time), `sample` (the newest each
period), `throttle_first` (the first of each period) and `debounce` (an element once the source
has been quiet for a period). Each takes ``scheduler=`` (default: `default_scheduler`) and holds
at most one timer per subscription, stopped at the end, on error and on cancel.
"""

from __future__ import annotations

from collections import deque
from functools import partial
from typing import Any, TypeVar

from ._api import Publisher, Subscriber
from ._compose import operator
from ._demand import MAX_DEMAND
from ._fluent import fluent
from ._held import HeldPublisher, HeldRelay
from ._operator_types import ListOperator, SameOperator
from ._operators import FilterPublisher
from ._rules import describe, require_not_none
from ._schedulers import Cancellable, Scheduler
from ._time_args import scheduler_arg, seconds_arg

__all__ = ["buffer", "debounce", "sample", "throttle_first"]

T = TypeVar("T")

_EMPTY: Any = object()


@fluent
def buffer(size: int, timeout: float, *, scheduler: Scheduler | None = None) -> ListOperator:
    """``(int, float) -> (Publisher[T] -> Publisher[list[T]])``: lists of up to ``size``
    elements, each sent when full, or once ``timeout`` seconds have passed since its first
    element came (Reactor's ``bufferTimeout``, RxJava's ``buffer(time, count)``), on
    ``scheduler`` (default: `default_scheduler`). The last list goes out before the end.

    It never fails for lack of demand: a list whose time is up waits for a request (it goes on
    filling meanwhile, up to ``size``), and upstream is asked for more only while the
    subscriber has demand, and never for more than ``size`` held and in flight together, so a
    subscriber that stops asking makes it hold at most ``size`` elements, and stop asking
    upstream (§1.1). Reactor's ``bufferTimeout`` signals an error here ("Could not emit buffer
    due to lack of requests"). A cancel drops what is held and stops the timer (§3.12); a §3.9
    request is signalled.

    Raises:
        TypeError, ValueError: ``size`` is not an int >= 1, ``timeout`` not a number of seconds
            > 0, ``scheduler`` not a `Scheduler` that can wait.
    """
    if isinstance(size, bool) or not isinstance(size, int):
        raise TypeError(f"buffer(size) needs an int, got {describe(size)}")
    if size < 1:
        raise ValueError(f"buffer(size) needs size >= 1, got {size}")
    seconds = seconds_arg(timeout, "buffer(timeout)", positive=True)
    chosen = scheduler_arg(scheduler, "buffer(scheduler=)")
    return operator(
        "buffer", lambda source: HeldPublisher(source, lambda d: _Buffer(d, size, seconds, chosen))
    )


@fluent
def sample(period: float, *, scheduler: Scheduler | None = None) -> SameOperator:
    """``float -> (Publisher[T] -> Publisher[T])``: every ``period`` seconds (on ``scheduler``,
    default `default_scheduler`), the newest element that came in that period, if one did; the
    newest not yet sampled goes out before the end (Reactor's ``sample``).

    Upstream is asked for everything (§3.17): the operator drops what it does not sample. A
    sample waits for demand (§1.1), and the next one replaces it if the subscriber has not
    asked by then, so at most one is held. A cancel stops the timer and reaches upstream
    (§3.12); a §3.9 request is signalled.

    Raises:
        TypeError, ValueError: ``period`` is not a number of seconds > 0, ``scheduler`` not a
            `Scheduler` that can wait.
    """
    seconds = seconds_arg(period, "sample(period)", positive=True)
    chosen = scheduler_arg(scheduler, "sample(scheduler=)")
    return operator("sample", lambda source: HeldPublisher(source, lambda d: _Sample(d, seconds, chosen)))


@fluent
def throttle_first(period: float, *, scheduler: Scheduler | None = None) -> SameOperator:
    """``float -> (Publisher[T] -> Publisher[T])``: an element, then none for ``period``
    seconds (on ``scheduler``'s clock, default `default_scheduler`): those that come meanwhile
    are dropped.

    Demand is kept as ``filter`` keeps it: a dropped element is replaced by a request for one
    more (§1.1), so a subscriber that stops asking stops the source. A cancel reaches upstream
    (§3.12); a §3.9 request is signalled.

    Raises:
        TypeError, ValueError: ``period`` is not a number of seconds > 0, ``scheduler`` not a
            `Scheduler`.
    """
    seconds = seconds_arg(period, "throttle_first(period)", positive=True)
    chosen = scheduler_arg(scheduler, "throttle_first(scheduler=)", waits=False)
    return operator("throttle_first", lambda source: _ThrottleFirst(source, seconds, chosen))


@fluent
def debounce(period: float, *, scheduler: Scheduler | None = None) -> SameOperator:
    """``float -> (Publisher[T] -> Publisher[T])``: an element once ``period`` seconds have
    passed with no newer one (on ``scheduler``, default `default_scheduler`); an element
    followed sooner by another is dropped. The last one goes out at once when the source ends,
    before the end.

    Upstream is asked for everything (§3.17). An element whose quiet period has passed waits
    for demand (§1.1); a later one replaces it if the subscriber has not asked by then, so at
    most one is held. A cancel stops the timer and reaches upstream (§3.12); a §3.9 request is
    signalled.

    Raises:
        TypeError, ValueError: ``period`` is not a number of seconds > 0, ``scheduler`` not a
            `Scheduler` that can wait.
    """
    seconds = seconds_arg(period, "debounce(period)", positive=True)
    chosen = scheduler_arg(scheduler, "debounce(scheduler=)")
    return operator("debounce", lambda source: HeldPublisher(source, lambda d: _Debounce(d, seconds, chosen)))


class _Timed(HeldRelay[T, Any]):
    """A held relay with one timer, stopped at the end and on cancel."""

    def __init__(self, downstream: Subscriber[Any], seconds: float, scheduler: Scheduler) -> None:
        super().__init__(downstream)
        self._seconds, self._scheduler = seconds, scheduler
        self._timer: Cancellable | None = None

    def _stopped(self) -> None:
        with self._lock:
            self._stop_timer_locked()

    def _stop_timer_locked(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()  # no timer outlives the stream (the scheduler never calls back under its lock)


class _Buffer(_Timed[T]):
    """The open list and the full ones; upstream topped up to ``size`` held and in flight."""

    def __init__(
        self, downstream: Subscriber[list[T]], size: int, seconds: float, scheduler: Scheduler
    ) -> None:
        super().__init__(downstream, seconds, scheduler)
        self._size = size
        self._open: list[T] = []
        self._full: deque[list[T]] = deque()
        self._held = 0  # elements in the open list and the full ones
        self._in_flight = 0  # asked of upstream, not yet come
        self._generation = 0  # of the open list: a timer set for an older one is stale
        self._due = False  # the open list's time is up: it goes out at the next request
        self._ask = 0  # counted as in flight by a pass, asked for after it (`_sent`)

    def _requested(self, n: int) -> None:
        with self._lock:
            want = self._top_up_locked()
        if want:
            self._upstream.request(want)

    def _sent(self, count: int) -> None:
        # Asked for once the drain has let go (`_after_passes`): a synchronous source then sends
        # the next list inside its own running loop, into a drain that is free to pass it on at
        # once, where a request from inside the pass made each list a new pass of both drains.
        with self._lock:
            self._ask += self._top_up_locked()

    def _after_passes(self) -> None:
        with self._lock:
            want, self._ask = self._ask, 0
        if want:
            self._upstream.request(want)

    def _top_up_locked(self) -> int:
        """How much to ask upstream for, counted as in flight: what brings held and in flight to
        ``size``, if the subscriber has demand (§1.1); with none, at most ``size`` is held."""
        if self._ended or self._cancelled or self._error is not None or not self._demand.outstanding:
            return 0
        want = self._size - self._in_flight - self._held
        if want <= 0:
            return 0
        self._in_flight += want
        return want

    def on_next(self, item: T) -> None:
        require_not_none(item, "element", "§2.13")
        self._add([item])

    def on_next_batch(self, items: list[T]) -> None:
        self._add(items)  # its sender checked them (§2.13)

    def _add(self, items: list[T]) -> None:
        size = self._size
        with self._lock:
            if self._ended or self._cancelled:
                return  # §2.8
            self._in_flight -= len(items)
            self._held += len(items)
            closed = False
            start = 0
            while start < len(items):
                if not self._open and len(items) - start >= size:
                    # A whole list: the sender's own when it is exactly one (on_next_batch's
                    # list is the receiver's to keep), else copied once.
                    self._full.append(items if len(items) == size else items[start : start + size])
                    start += size
                    closed = True
                    continue
                room = size - len(self._open)
                was_empty = not self._open
                self._open.extend(items[start : start + room])
                start += room
                if len(self._open) >= size:
                    self._close_locked()
                    closed = True
                elif was_empty:
                    self._timer = self._scheduler.schedule_after(
                        self._seconds, partial(self._time_up, self._generation)
                    )
            run = closed and self._drain.signal_locked()
        if run:
            self._passes()

    def _close_locked(self) -> None:
        """The open list is full: it waits for demand; a new one opens, with no timer yet."""
        self._full.append(self._open)
        self._open = []
        self._next_list_locked()

    def _next_list_locked(self) -> None:
        self._generation += 1
        self._due = False
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()  # the scheduler never calls back under its own lock: safe here

    def _time_up(self, generation: int) -> None:
        with self._lock:
            if generation != self._generation or not self._open:
                return  # the list went out, full, before its time
            self._due, self._timer = True, None
            run = self._drain.signal_locked()
        if run:
            self._passes()

    def _take_locked(self, n: int) -> list[list[T]]:
        lists: list[list[T]] = []
        full = self._full
        while full and len(lists) < n:
            lists.append(full.popleft())
        if len(lists) < n and self._open and (self._due or self._ended):
            lists.append(self._open)
            self._open = []
            self._next_list_locked()
        self._held -= sum(map(len, lists))
        return lists

    def _held_locked(self) -> bool:
        return bool(self._full or self._open)

    def _clear_locked(self) -> None:
        self._full.clear()
        self._open = []
        self._held = 0
        self._next_list_locked()


class _Sample(_Timed[T]):
    """The newest element of the period, and the sample waiting for demand."""

    def __init__(self, downstream: Subscriber[T], seconds: float, scheduler: Scheduler) -> None:
        super().__init__(downstream, seconds, scheduler)
        self._latest: Any = _EMPTY
        self._ready: Any = _EMPTY
        self._start = scheduler.now()
        self._ticks = 0

    def _started(self) -> None:
        self._upstream.request(MAX_DEMAND)  # §3.17: what is not sampled is dropped here
        self._arm()

    def _arm(self) -> None:
        """The timer for the next tick, on the schedule (start + k × period)."""
        with self._lock:
            if self._ended or self._cancelled or self._finished:
                return
            self._ticks += 1
            at = self._start + self._ticks * self._seconds
            self._timer = self._scheduler.schedule_after(at - self._scheduler.now(), self._tick)

    def _tick(self) -> None:
        with self._lock:
            run = False
            if self._latest is not _EMPTY:
                self._ready, self._latest = self._latest, _EMPTY
                run = self._drain.signal_locked()
        if run:
            self._passes()
        self._arm()

    def on_next(self, item: T) -> None:
        require_not_none(item, "element", "§2.13")
        with self._lock:
            if not (self._ended or self._cancelled):
                self._latest = item

    def _ending_locked(self) -> None:
        if self._latest is not _EMPTY:
            self._ready, self._latest = self._latest, _EMPTY  # the newest goes out before the end
        self._stop_timer_locked()  # no tick is needed once upstream has ended

    def _take_locked(self, n: int) -> list[T]:
        ready, self._ready = self._ready, _EMPTY
        return [] if ready is _EMPTY else [ready]

    def _held_locked(self) -> bool:
        return self._ready is not _EMPTY

    def _clear_locked(self) -> None:
        self._latest = self._ready = _EMPTY


class _Debounce(_Timed[T]):
    """The element waiting out its quiet period, and the one whose period has passed."""

    def __init__(self, downstream: Subscriber[T], seconds: float, scheduler: Scheduler) -> None:
        super().__init__(downstream, seconds, scheduler)
        self._pending: Any = _EMPTY
        self._ready: Any = _EMPTY
        self._generation = 0  # of the pending element: a timer set for an older one is stale

    def _started(self) -> None:
        self._upstream.request(MAX_DEMAND)  # §3.17: what a newer one replaces is dropped here

    def on_next(self, item: T) -> None:
        require_not_none(item, "element", "§2.13")
        with self._lock:
            if self._ended or self._cancelled:
                return  # §2.8
            self._pending = item
            self._generation += 1
            generation = self._generation
            stale = self._timer
            self._timer = self._scheduler.schedule_after(self._seconds, partial(self._quiet, generation))
        if stale is not None:
            stale.cancel()

    def _quiet(self, generation: int) -> None:
        with self._lock:
            if generation != self._generation or self._pending is _EMPTY:
                return
            self._ready, self._pending, self._timer = self._pending, _EMPTY, None
            run = self._drain.signal_locked()
        if run:
            self._passes()

    def _ending_locked(self) -> None:
        if self._pending is not _EMPTY:
            self._ready, self._pending = self._pending, _EMPTY  # the last goes out before the end
        self._stop_timer_locked()

    def _take_locked(self, n: int) -> list[T]:
        ready, self._ready = self._ready, _EMPTY
        return [] if ready is _EMPTY else [ready]

    def _held_locked(self) -> bool:
        return self._ready is not _EMPTY

    def _clear_locked(self) -> None:
        self._pending = self._ready = _EMPTY


class _ThrottleFirst(Publisher[T]):
    __slots__ = ("_scheduler", "_seconds", "_source")

    def __init__(self, source: Publisher[T], seconds: float, scheduler: Scheduler) -> None:
        self._source, self._seconds, self._scheduler = source, seconds, scheduler

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        """Subscribe ``subscriber`` through a filter with a window of its own (§1.9)."""
        require_not_none(subscriber, "subscriber", "§1.9")
        seconds, now = self._seconds, self._scheduler.now
        opens = [float("-inf")]  # when the next element may pass: this subscription's state

        def first_in_window(item: T) -> bool:
            at = now()
            if at >= opens[0]:
                opens[0] = at + seconds
                return True
            return False

        FilterPublisher(self._source, first_in_window).subscribe(subscriber)
