"""Schedulers: where and when work runs, for the operators that move work or keep time.

A `Scheduler` runs an action now (on its threads, or its loop) or after a delay, and hands back
a `Cancellable`. No operator sleeps or starts a thread of its own: each takes ``scheduler=``.

- `ThreadPoolScheduler`: actions on a ``concurrent.futures`` executor; delays kept by one timer
  thread for all the scheduler's timers (it hands each due action to the executor, and ends when
  none is left), so ten thousand timeouts cost one thread.
- `AsyncioScheduler`: actions on an asyncio loop, through ``call_soon_threadsafe`` and
  ``call_later``: never blocking the loop, callable from any thread.
- `ImmediateScheduler`: actions at once, on the calling thread; it cannot wait.
- `VirtualTimeScheduler`: a clock that moves only when a test advances it; due actions run on the
  advancing thread, in time order, so an hour of timers runs in milliseconds.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Protocol

from ._errors import ReactiveStreamsError
from ._executor import default_executor
from ._rules import describe, require_callable

__all__ = [
    "AsyncioScheduler",
    "Cancellable",
    "ImmediateScheduler",
    "Scheduler",
    "ThreadPoolScheduler",
    "VirtualTimeScheduler",
    "default_scheduler",
]

logger = logging.getLogger("reactive_streams")

Action = Callable[[], object]


class Cancellable(Protocol):
    """What scheduling hands back: ``cancel()`` keeps the action from running, if it has not
    started; idempotent and thread-safe."""

    def cancel(self) -> None: ...


class Scheduler(ABC):
    """Where and when actions run. An action must not raise: one that does is logged on the
    ``reactive_streams`` logger, and the scheduler goes on."""

    @abstractmethod
    def now(self) -> float:
        """The scheduler's clock, in seconds (only differences mean anything)."""

    @abstractmethod
    def schedule(self, action: Action) -> Cancellable:
        """Run ``action`` as soon as the scheduler can, not on the calling thread's stack
        (except `ImmediateScheduler`)."""

    @abstractmethod
    def schedule_after(self, delay: float, action: Action) -> Cancellable:
        """Run ``action`` once ``delay`` seconds have passed on the scheduler's clock."""


def _check_delay(delay: object) -> float:
    if isinstance(delay, bool) or not isinstance(delay, (int, float)) or delay != delay:
        raise TypeError(f"a delay needs a number of seconds, got {describe(delay)}")
    return max(0.0, float(delay))


def _run(action: Action) -> None:
    try:
        action()
    except Exception:
        logger.exception("a scheduled action raised; the scheduler goes on")


class _Entry:
    """A timer: its action, due time and order; cancelled by dropping the action."""

    __slots__ = ("action", "due", "order")

    def __init__(self, due: float, order: int, action: Action) -> None:
        self.due, self.order = due, order
        self.action: Action | None = action

    def __lt__(self, other: _Entry) -> bool:
        return (self.due, self.order) < (other.due, other.order)

    def cancel(self) -> None:
        self.action = None


class _Timers:
    """A heap of `_Entry`, ordered by due time, then by when it was scheduled. Entries cancelled
    are dropped as they reach the top, and all at once when they are most of the heap, so that
    many short-lived timers with long delays do not pile up."""

    def __init__(self) -> None:
        self.heap: list[_Entry] = []
        self._order = itertools.count()
        self._cancelled = 0

    def add(self, due: float, action: Action) -> _Entry:
        entry = _Entry(due, next(self._order), action)
        heapq.heappush(self.heap, entry)
        return entry

    def cancel(self, entry: _Entry) -> bool:
        """Drop ``entry``'s action; True if it was live. Call it under the owner's lock."""
        if entry.action is None:
            return False
        entry.action = None
        self._cancelled += 1
        if self._cancelled > 1024 and self._cancelled * 2 > len(self.heap):
            self.heap = [live for live in self.heap if live.action is not None]
            heapq.heapify(self.heap)
            self._cancelled = 0
        return True

    def pop_due(self, now: float) -> _Entry | None:
        """The first live entry due at ``now`` or before; None if there is none."""
        heap = self.heap
        while heap and (heap[0].action is None or heap[0].due <= now):
            entry = heapq.heappop(heap)
            if entry.action is not None:
                return entry
            self._cancelled = max(0, self._cancelled - 1)
        return None

    def next_due(self) -> float | None:
        heap = self.heap
        while heap and heap[0].action is None:
            heapq.heappop(heap)
            self._cancelled = max(0, self._cancelled - 1)
        return heap[0].due if heap else None


class ThreadPoolScheduler(Scheduler):
    """Actions on ``executor`` (default: the library's shared thread pool); delayed ones handed
    to it, when due, by one timer thread of the scheduler's own, started when a timer is set and
    ending when none is left."""

    def __init__(self, executor: Executor | None = None) -> None:
        self._executor = executor
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._timers = _Timers()
        self._thread: threading.Thread | None = None

    def now(self) -> float:
        """``time.monotonic()``."""
        return time.monotonic()

    def schedule(self, action: Action) -> Cancellable:
        """Submit ``action`` to the executor."""
        require_callable(action, "schedule(action)")
        executor = self._executor or default_executor()
        entry = _Entry(0.0, 0, action)
        executor.submit(_run_entry, entry)
        return entry

    def schedule_after(self, delay: float, action: Action) -> Cancellable:
        """Hand ``action`` to the executor once ``delay`` seconds have passed."""
        require_callable(action, "schedule_after(delay, action)")
        due = time.monotonic() + _check_delay(delay)
        with self._lock:
            entry = self._timers.add(due, action)
            if self._thread is None:
                self._thread = threading.Thread(target=self._keep_time, name="rs-timer", daemon=True)
                self._thread.start()
            elif self._timers.heap[0] is entry:
                self._wake.notify()  # earlier than what the timer thread waits for
        return _TimerCancel(self, entry)

    def _cancel(self, entry: _Entry) -> None:
        with self._lock:
            if self._timers.cancel(entry):
                self._wake.notify()  # it may have nothing left to wait for

    def _keep_time(self) -> None:
        executor = self._executor or default_executor()
        with self._lock:
            while True:
                due = self._timers.next_due()
                if due is None:
                    self._thread = None  # no timer left: the thread ends
                    return
                wait = due - time.monotonic()
                if wait > 0:
                    self._wake.wait(wait)
                    continue
                entry = self._timers.pop_due(time.monotonic())
                if entry is not None:
                    try:
                        executor.submit(_run_entry, entry)
                    except RuntimeError:  # the executor is shut down: run it here, and go on
                        _run_entry(entry)


class _TimerCancel:
    """Cancels a timer through its scheduler (its lock, and the heap's count of the dead)."""

    __slots__ = ("_entry", "_scheduler")

    def __init__(self, scheduler: ThreadPoolScheduler | VirtualTimeScheduler, entry: _Entry) -> None:
        self._scheduler, self._entry = scheduler, entry

    def cancel(self) -> None:
        if self._entry.action is not None:
            self._scheduler._cancel(self._entry)


def _run_entry(entry: _Entry) -> None:
    action, entry.action = entry.action, None
    if action is not None:
        _run(action)


class AsyncioScheduler(Scheduler):
    """Actions on ``loop`` (default: the loop running where it is made), through
    ``call_soon_threadsafe`` and ``call_later``: from any thread, never blocking the loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        if loop is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                raise ReactiveStreamsError(
                    "AsyncioScheduler() needs a loop: make it inside a coroutine, or pass loop="
                ) from None
        self._loop = loop

    def now(self) -> float:
        """The loop's clock (``loop.time()``)."""
        return self._loop.time()

    def schedule(self, action: Action) -> Cancellable:
        """Run ``action`` on the loop, soon."""
        require_callable(action, "schedule(action)")
        entry = _Entry(0.0, 0, action)
        self._loop.call_soon_threadsafe(_run_entry, entry)
        return entry

    def schedule_after(self, delay: float, action: Action) -> Cancellable:
        """Run ``action`` on the loop once ``delay`` seconds have passed on its clock."""
        require_callable(action, "schedule_after(delay, action)")
        timer = _LoopTimer(self._loop, action)
        self._loop.call_soon_threadsafe(timer.arm, _check_delay(delay))
        return timer


class _LoopTimer:
    """A timer of `AsyncioScheduler`: armed on the loop; a cancel (from any thread) drops the
    action at once and cancels the loop's handle on the loop."""

    __slots__ = ("_action", "_handle", "_loop")

    def __init__(self, loop: asyncio.AbstractEventLoop, action: Action) -> None:
        self._loop = loop
        self._action: Action | None = action
        self._handle: asyncio.TimerHandle | None = None

    def arm(self, seconds: float) -> None:
        if self._action is not None:
            self._handle = self._loop.call_later(seconds, self._fire)

    def _fire(self) -> None:
        action, self._action = self._action, None
        if action is not None:
            _run(action)

    def cancel(self) -> None:
        if self._action is None:
            return
        self._action = None
        if not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._disarm)

    def _disarm(self) -> None:
        if self._handle is not None:
            self._handle.cancel()  # nothing left in the loop's timers
            self._handle = None


class ImmediateScheduler(Scheduler):
    """Actions at once, on the calling thread. It cannot wait: a delay is refused."""

    def now(self) -> float:
        """``time.monotonic()``."""
        return time.monotonic()

    def schedule(self, action: Action) -> Cancellable:
        """Run ``action`` now."""
        require_callable(action, "schedule(action)")
        entry = _Entry(0.0, 0, action)
        _run_entry(entry)
        return entry

    def schedule_after(self, delay: float, action: Action) -> Cancellable:
        """Refused: an immediate scheduler runs on the caller's thread, which it will not block."""
        raise ReactiveStreamsError(
            "the immediate scheduler cannot wait: for time, use a ThreadPoolScheduler, an "
            "AsyncioScheduler, or a VirtualTimeScheduler in tests"
        )


class VirtualTimeScheduler(Scheduler):
    """A clock that moves only when `advance` (or `advance_to`) moves it. The actions due by then
    run on the advancing thread, in time order (those due at the same time, in the order they
    were scheduled), including those they schedule in turn within the span; ``schedule`` is due
    now, run by the next advance (``advance(0)`` will do)."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)
        self._lock = threading.Lock()
        self._timers = _Timers()
        self._advancing = False

    def now(self) -> float:
        """The virtual clock."""
        return self._now

    def schedule(self, action: Action) -> Cancellable:
        """Due now: run by the next advance."""
        require_callable(action, "schedule(action)")
        return self.schedule_after(0.0, action)

    def schedule_after(self, delay: float, action: Action) -> Cancellable:
        """Due ``delay`` seconds after the virtual clock's now."""
        require_callable(action, "schedule_after(delay, action)")
        seconds = _check_delay(delay)
        with self._lock:
            entry = self._timers.add(self._now + seconds, action)
        return _TimerCancel(self, entry)

    def _cancel(self, entry: _Entry) -> None:
        with self._lock:
            self._timers.cancel(entry)

    def advance(self, seconds: float = 0.0) -> None:
        """Move the clock ``seconds`` on, running what falls due, in order."""
        self.advance_to(self._now + _check_delay(seconds))

    def advance_to(self, instant: float) -> None:
        """Move the clock to ``instant`` (not back), running what falls due, in order."""
        if self._advancing:
            raise ReactiveStreamsError(
                "advance() called from an action it runs: the clock moves one advance at a time"
            )
        self._advancing = True
        try:
            while True:
                with self._lock:
                    due = self._timers.next_due()
                    if due is None or due > instant:
                        break
                    entry = self._timers.pop_due(due)
                    self._now = max(self._now, due)
                if entry is not None:
                    _run_entry(entry)
            with self._lock:
                self._now = max(self._now, instant)
        finally:
            self._advancing = False

    @property
    def pending(self) -> int:
        """How many actions are scheduled and not yet run or cancelled."""
        with self._lock:
            return sum(1 for entry in self._timers.heap if entry.action is not None)


_default: ThreadPoolScheduler | None = None
_default_lock = threading.Lock()


def default_scheduler() -> Scheduler:
    """The scheduler the operators use when given none: a `ThreadPoolScheduler` over the
    library's shared thread pool, made on first use."""
    global _default
    with _default_lock:
        if _default is None:
            _default = ThreadPoolScheduler()
        return _default
