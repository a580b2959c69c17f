"""The demand-and-drain kit every adapter is built on: `Demand` keeps one subscription's
outstanding demand by the rules (§3.9, §3.16, §3.17), and `Drain` runs an adapter's one
signalling loop so that signals to a subscriber never overlap (§1.3) and a ``request`` made
inside ``on_next`` never recurses (§3.3).

The pattern, as RxJava's drain loops and reactive-streams-jvm's examples have it: every event
first records state (demand added, an element queued, ``done`` set, cancelled), under the
drain's lock, then calls `Drain.signal`. Only the caller that finds the drain idle runs it; a
signal that arrives while a pass runs is recorded as missed, and the pass repeats, so no event
is ever lost. Every ``on_next``, ``on_error`` and ``on_complete`` goes out from inside a pass.
"""

from __future__ import annotations

import collections
import logging
import operator
import threading
import weakref
from collections.abc import Callable, Iterable
from types import MethodType
from typing import Any, Generic, Protocol, TypeVar

from ._api import Subscriber, Subscription
from ._errors import IllegalDemandError
from ._rules import require_not_none, signal_or_cancel

__all__ = [
    "MAX_DEMAND",
    "Demand",
    "Drain",
    "DrainedSubscription",
    "check_request",
    "run_out",
    "subscribe_and_start",
]

logger = logging.getLogger("reactive_streams")

T = TypeVar("T")

#: Java's ``Long.MAX_VALUE``: a demand this large is "effectively unbounded" (§3.17).
MAX_DEMAND = 2**63 - 1

#: Runs an iterator out, in C: ``run_out(map(subscriber.on_next, batch))`` is the cheapest way
#: to deliver a batch element by element. Over a list or an ``array`` the run ends early if the
#: batch is emptied meanwhile (``del batch[:]``), which is how a cancel stops it (§3.6).
run_out: Callable[[Iterable[Any]], None] = collections.deque(maxlen=0).extend


def check_request(n: object) -> int | IllegalDemandError:
    """``n`` as a positive int, or the §3.9 error to signal through ``on_error``.

    ``request`` must return normally (§3.16), so a bad argument, a bool, or one whose
    ``__index__`` raises anything at all, comes back as the error for the caller to signal.
    """
    if n.__class__ is int and n > 0:
        return n
    if isinstance(n, bool):
        return IllegalDemandError(
            f"§3.9: request(n) needs a positive int; a bool is not accepted as demand, got {n!r}"
        )
    try:
        value = operator.index(n)  # type: ignore[arg-type]
    except Exception as exc:  # §3.16: whatever __index__ raises
        return IllegalDemandError(
            f"§3.9: request(n) needs a positive integer, got {n!r} ({type(exc).__name__}: {exc})"
        )
    if value <= 0:
        return IllegalDemandError(
            f"§3.9: request(n) must be called with n > 0 (non-positive requests are illegal), got {n!r}"
        )
    return value


def add_capped(current: int, n: int) -> int:
    """``current + n``, capped at ``MAX_DEMAND`` (§3.8, §3.17)."""
    total = current + n
    return MAX_DEMAND if total >= MAX_DEMAND else total


def multiply_capped(n: int, factor: int) -> int:
    """``n * factor``, capped at ``MAX_DEMAND`` (§3.17): demand for ``n`` batches of ``factor``."""
    return MAX_DEMAND if n >= MAX_DEMAND // factor else n * factor


class Demand:
    """One subscription's outstanding demand. Not thread-safe by itself: call it under the
    lock of the drain that reads it."""

    __slots__ = ("outstanding",)

    def __init__(self) -> None:
        self.outstanding = 0

    def add(self, n: object) -> IllegalDemandError | None:
        """Add a requested ``n`` (§3.8), capped at 2**63-1 (§3.17); the §3.9 error to signal if
        ``n`` is not a positive integer (never raised, §3.16)."""
        if n.__class__ is not int or n <= 0:
            checked = check_request(n)
            if isinstance(checked, IllegalDemandError):
                return checked
            n = checked
        total = self.outstanding + n
        self.outstanding = MAX_DEMAND if total >= MAX_DEMAND else total
        return None

    def produced(self, count: int) -> int:
        """Take ``count`` delivered elements off the demand, unless it is unbounded (§3.17);
        returns what is left."""
        if self.outstanding != MAX_DEMAND:
            self.outstanding -= count
        return self.outstanding

    @property
    def unbounded(self) -> bool:
        return self.outstanding == MAX_DEMAND


class Drain:
    """Runs ``work`` one pass at a time, however many threads call `signal`.

    ``run_on`` decides where a pass runs: ``None`` inline, on the signalling thread; an
    executor's ``submit``; an event loop's ``call_soon_threadsafe``. ``work`` must not raise: a
    pass that does is logged, and the drain stays usable.

    A ``work`` that is a method of the drain's owner is held weakly, so that the owner, holding
    its drain, makes no reference cycle: it is freed as soon as nothing else holds it, which is
    how the bridge knows a Python subscriber is gone (§3.13).
    """

    __slots__ = ("_function", "_missed", "_owner", "_run_on", "_running", "lock")

    def __init__(
        self,
        work: Callable[[], object],
        *,
        run_on: Callable[[Callable[[], None]], object] | None = None,
        lock: threading.Lock | threading.RLock | None = None,
    ) -> None:
        # The method's function and a weak reference to its owner (a WeakMethod's call runs in
        # Python, and a pass runs for every request); a plain function is held as it is.
        self._owner: Callable[[], object] | None = None
        self._function: Callable[..., object] = work
        if isinstance(work, MethodType):
            try:
                self._owner = weakref.ref(work.__self__)
                self._function = work.__func__
            except TypeError:  # an owner without __weakref__: held strongly
                pass
        self._run_on = run_on
        self._running = False
        self._missed = False
        self.lock = lock if lock is not None else threading.Lock()

    def signal(self) -> None:
        """Run a pass now, or have the running pass go round once more (the missed-work
        handoff: an event recorded before this call is always seen by a later pass)."""
        with self.lock:
            if self._running:
                self._missed = True
                return
            self._running = True
        if self._run_on is None:
            self._passes()
        else:
            self._run_on(self._passes)

    def signal_locked(self) -> bool:
        """`signal` for a caller that holds ``lock``: True if the caller must now run `passes`
        (outside the lock), False if a running pass will see its event."""
        if self._running:
            self._missed = True
            return False
        self._running = True
        return True

    def passes(self) -> None:
        """Run passes until none was missed; for a caller that `signal_locked` chose."""
        if self._run_on is None:
            self._passes()
        else:
            self._run_on(self._passes)

    def release(self) -> bool:
        """End a pass that the caller `signal_locked` chose made itself, without ``work``: True
        if a signal came meanwhile (the caller must now run `passes`), else the drain is idle."""
        with self.lock:
            if self._missed:
                self._missed = False
                return True
            self._running = False
            return False

    @property
    def running(self) -> bool:
        return self._running

    def _passes(self) -> None:
        function, lock = self._function, self.lock
        arguments: tuple[object, ...] = ()
        if self._owner is not None:
            owner = self._owner()
            if owner is None:  # the owner is gone; a later signal (from a resurrecting
                with lock:  # finalizer, say) must not find the drain still running
                    self._running = self._missed = False
                return
            arguments = (owner,)
        while True:
            try:
                function(*arguments)
            except Exception:
                logger.exception("a drain pass raised; the drain goes on")
            with lock:
                if not self._missed:
                    self._running = False
                    return
                self._missed = False


class DrainedSubscription(Subscription, Generic[T]):
    """A publisher's subscription on the kit: a `Demand`, and a `Drain` whose passes signal the
    subscriber. ``request`` only records demand, or a §3.9 error for a pass to signal, and
    signals the drain, so it returns at once (§3.4) and never recurses into ``on_next`` (§3.3).

    A subclass gives the drain its pass (``Drain(self._emit, ...)``), and sets ``_subscriber``
    to None, under the drain's lock, once cancelled or terminated.
    """

    __slots__ = ("_demand", "_drain", "_error", "_subscriber")

    def __init__(self, subscriber: Subscriber[T], drain: Drain) -> None:
        self._subscriber: Subscriber[T] | None = subscriber  # None once cancelled or terminated
        self._demand = Demand()
        self._error: BaseException | None = None  # a §3.9 error waiting for the drain
        self._drain = drain

    def start(self) -> None:
        """Run the first pass, after ``on_subscribe`` or to signal it (§1.9)."""
        self._drain.signal()

    def request(self, n: int) -> None:
        """Add ``n`` to demand (§3.8, §3.17) and signal the drain, which delivers it."""
        drain = self._drain
        with drain.lock:
            if self._subscriber is None:
                return  # §3.6
            error = self._demand.add(n)
            if error is not None and self._error is None:
                self._error = error  # §3.9, signalled by the drain (§1.3)
            run = drain.signal_locked()
        if run:
            drain.passes()


class _Startable(Protocol):
    def start(self) -> None: ...

    def cancel(self) -> None: ...


def subscribe_and_start(subscriber: Any, subscription: _Startable) -> None:
    """Hand ``subscription`` to ``subscriber`` (§1.9: before any other signal), then start its
    drain; a subscriber whose ``on_subscribe`` raises is cancelled and logged (§2.13)."""
    require_not_none(subscriber, "subscriber", "§1.9")
    if signal_or_cancel(subscriber, "on_subscribe", subscription, subscription.cancel):
        subscription.start()
