"""`Arbiter`: one downstream subscription over a succession of upstream sources, the kit that
`start_with`, `append`, `switch_if_empty`, `catch` and `retry` are built on (Reactor's
``MultiSubscriptionSubscriber``, RxJava's ``SubscriptionArbiter``).

Only one source is subscribed at a time, and elements pass straight through, lists included:
nothing is buffered. The arbiter keeps the downstream's outstanding demand (requested, not yet
delivered); when a source ends and the next is subscribed, the next is asked for exactly what is
outstanding, so nothing delivered is asked for again, and nothing requested is lost.

Its requests to a source's subscription, the switch to a new one and the subscribing of the next
source are made by one inline `Drain`, one pass at a time (§2.7): a synchronous source that
completes inside a ``request`` has the next one subscribed by the same pass, in a loop, not by
recursion (§3.3). A cancel goes to the current source at once, as the relays' do (cancel is
thread-safe, §3.5), so that a synchronous source stops in the middle of a request (§3.12).
Each source gets a subscriber of its own (§2.12), and only the current one's signals count.
Downstream signals come only from the current source's signals, or from the drain once the
source before has ended, so they stay serial (§1.3).
"""

from __future__ import annotations

import threading
from abc import abstractmethod
from typing import Any, Generic, TypeVar

from ._api import Publisher, Subscriber, Subscription
from ._demand import MAX_DEMAND, Demand, Drain, check_request, run_out
from ._errors import IllegalDemandError
from ._operators import DISCARD
from ._rules import log_subscriber_failure, require_not_none, signal_or_cancel, signal_terminal

__all__ = ["Arbiter", "ArbiterPublisher"]

T = TypeVar("T")


class ArbiterPublisher(Publisher[T]):
    """A publisher whose subscribers each get an `Arbiter` from `_arbiter`."""

    __slots__ = ()

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        """Signal ``on_subscribe``, then subscribe the first source (§1.9)."""
        require_not_none(subscriber, "subscriber", "§1.9")
        self._arbiter(subscriber).start()

    @abstractmethod
    def _arbiter(self, downstream: Subscriber[T]) -> Arbiter[T]:
        """A new arbiter for ``downstream``."""


class Arbiter(Subscription, Generic[T]):
    """The downstream's subscription. A subclass says which source comes first (`_first`),
    after one completes (`_after_complete`) and after one fails (`_after_error`)."""

    def __init__(self, downstream: Subscriber[T]) -> None:
        self._downstream: Subscriber[T] = downstream
        self._lock = threading.Lock()
        self._drain = Drain(self._pass, lock=self._lock)
        self._active: _Source | None = None  # the subscriber of the source now subscribed
        self._current: Subscription | None = None  # its subscription, once the drain took it
        self._arrived: Subscription | None = None  # its subscription, for the drain to take
        self._upcoming: Publisher[Any] | None = None  # the next source, for the drain to subscribe
        self._demand = Demand()  # requested by downstream, not yet delivered (§3.17)
        self._unsent = 0  # requested since the drain last asked the current source
        self._produced = 0  # delivered by the current source, not yet taken off the demand
        self.delivered = 0  # delivered by the sources that have ended
        self._illegal: object = None  # a §3.9 request, for the current source to signal
        self._illegal_sent = False
        self._emitting: list[Any] = []  # a list going out one on_next at a time
        self._cancelled = False
        self._done = False

    # What a subclass decides (called on the thread of the source that ended, or of `start`).

    @abstractmethod
    def _first(self) -> Publisher[Any] | None:
        """The first source; None: complete at once."""

    def _after_complete(self) -> Publisher[Any] | None:
        """The source to subscribe after one completed; None: complete. Default: complete."""
        return None

    def _after_error(self, error: BaseException) -> Publisher[Any] | None:
        """The source to subscribe after one failed with ``error``; None: signal it. Raising
        signals what it raised instead. Default: signal it."""
        return None

    # The downstream's subscription.

    def start(self) -> None:
        """Signal ``on_subscribe`` (§1.9), then subscribe the first source."""
        if not signal_or_cancel(self._downstream, "on_subscribe", self, self.cancel):  # §2.13
            return
        try:
            first = self._first()
        except Exception as exc:
            self._terminate(exc)
            return
        self._next(first)

    def request(self, n: int) -> None:
        """Add ``n`` to the outstanding demand (§3.8, §3.17) and ask the current source for it; a
        §3.9 request goes to the current source (or the next), which signals the error."""
        if n.__class__ is not int or n <= 0:
            checked = check_request(n)
            if isinstance(checked, IllegalDemandError):
                with self._lock:
                    if self._done or self._cancelled or self._illegal is not None:
                        return
                    self._illegal = n
                    run = self._drain.signal_locked()
                if run:
                    self._drain.passes()
                return
            n = checked
        with self._lock:
            if self._done or self._cancelled:
                return  # §3.6
            self._demand.add(n)
            unsent = self._unsent + n
            self._unsent = MAX_DEMAND if unsent >= MAX_DEMAND else unsent
            run = self._drain.signal_locked()
        if run:
            self._drain.passes()

    def cancel(self) -> None:
        """Cancel the current source, at once, and subscribe no other; drop the downstream
        (§3.7, §3.12, §3.13). A source whose subscription arrives later is cancelled then."""
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
            self._downstream = DISCARD  # §3.13
            self._upcoming = None
            self._emitting.clear()  # the rest of a list going out is not sent (§3.12)
            stale = (self._current, self._arrived)
            self._current = self._arrived = None
        for subscription in stale:
            if subscription is not None:
                subscription.cancel()

    # The drain.

    def _pass(self) -> None:
        """One pass: take a source's new subscription and ask it for all that is outstanding, or
        ask the current one for what was requested since; then subscribe the next source, if one
        is waiting."""
        with self._lock:
            if self._cancelled:
                return  # `cancel` made the calls
            arrived = self._arrived
            if arrived is not None:
                self._arrived, self._current = None, arrived
                n = self._demand.outstanding  # all of it: nothing was asked of this one
            else:
                n = self._unsent
            self._unsent = 0
            current = self._current
            illegal = self._illegal if current is not None and not self._illegal_sent else None
            if illegal is not None:
                self._illegal_sent = True
            upcoming, self._upcoming = self._upcoming, None
        if current is not None:
            if illegal is not None:
                current.request(illegal)  # type: ignore[arg-type]  # §3.9, signalled by the source
            elif n > 0:
                current.request(n)
        if upcoming is not None:
            self._subscribe(upcoming)

    def _next(self, publisher: Publisher[Any] | None) -> None:
        """Have the drain subscribe ``publisher``; None: complete."""
        if publisher is None:
            self._terminate(None)
            return
        with self._lock:
            if self._cancelled:
                return
            self._upcoming = publisher
            run = self._drain.signal_locked()
        if run:
            self._drain.passes()

    def _subscribe(self, publisher: Publisher[Any]) -> None:
        source = _Source(self)
        with self._lock:
            if self._cancelled:
                return
            self._active = source
        try:
            publisher.subscribe(source)
        except Exception as exc:  # a publisher that breaks §1.9: its failure ends the source
            source.on_error(exc)

    # A source's end (on its signalling thread).

    def _ended(self, source: _Source) -> bool:
        """Take the ended source's deliveries off the demand; False if it is not the current one."""
        with self._lock:
            if self._active is not source:
                return False
            self._active = None
            self._current = self._arrived = None
            self._demand.produced(self._produced)
            self.delivered += self._produced
            self._produced = self._unsent = 0
        return True

    def _completed(self, source: _Source) -> None:
        if not self._ended(source):
            return
        if self._cancelled or self._done:
            return
        try:
            upcoming = self._after_complete()
        except Exception as exc:
            self._terminate(exc)
            return
        self._next(upcoming)

    def _failed(self, source: _Source, error: BaseException) -> None:
        if not self._ended(source):
            return
        if self._illegal_sent or self._cancelled or self._done:
            self._terminate(error)  # §3.9: the error is the downstream's own doing, never recovered
            return
        try:
            upcoming = self._after_error(error)
        except Exception as exc:
            if exc is not error and exc.__context__ is None:
                exc.__context__ = error  # what it was handling, as inside an `except` block
            self._terminate(exc)
            return
        if upcoming is None:
            self._terminate(error)
        else:
            self._next(upcoming)

    def _terminate(self, error: BaseException | None) -> None:
        with self._lock:
            if self._done:
                return  # §1.7
            self._done = True
            downstream, self._downstream = self._downstream, DISCARD  # §3.13
            self._upcoming = None
        signal_terminal(downstream, error)

    def _downstream_failed(self, method: str, exc: BaseException) -> None:
        downstream = self._downstream
        self.cancel()  # §2.13: the subscription is considered cancelled
        log_subscriber_failure(downstream, method, exc)


class _Source(Subscriber[Any]):
    """The arbiter's subscriber to one source: its elements go straight downstream, counted."""

    __slots__ = ("_arbiter", "_subscribed")

    def __init__(self, arbiter: Arbiter[Any]) -> None:
        self._arbiter = arbiter
        self._subscribed = False

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "subscription", "§2.13")
        arbiter = self._arbiter
        with arbiter._lock:
            keep = not self._subscribed and arbiter._active is self and not arbiter._cancelled
            if keep:
                self._subscribed = True
                arbiter._arrived = subscription
                run = arbiter._drain.signal_locked()
        if not keep:
            subscription.cancel()  # §2.5, or the arbiter was cancelled meanwhile
        elif run:
            arbiter._drain.passes()

    def on_next(self, item: Any) -> None:
        arbiter = self._arbiter
        if arbiter._active is not self or arbiter._cancelled:
            return  # §2.8
        arbiter._produced += 1  # this source's thread only; taken off the demand as it ends
        try:
            arbiter._downstream.on_next(item)
        except Exception as exc:
            arbiter._downstream_failed("on_next", exc)

    def on_next_batch(self, items: list[Any]) -> None:
        """A list straight on: as one ``on_next_batch`` if the downstream takes lists, else one
        ``on_next`` each, stopped by a cancel (§3.12)."""
        arbiter = self._arbiter
        if arbiter._active is not self or arbiter._cancelled:
            return  # §2.8
        arbiter._produced += len(items)
        downstream = arbiter._downstream
        on_next_batch = getattr(downstream, "on_next_batch", None)
        try:
            if on_next_batch is not None:
                on_next_batch(items)
            else:
                arbiter._emitting = emitting = list(items)  # a cancel empties it: nothing follows
                run_out(map(downstream.on_next, emitting))
        except Exception as exc:
            arbiter._downstream_failed("on_next" if on_next_batch is None else "on_next_batch", exc)

    def on_error(self, exc: BaseException) -> None:
        require_not_none(exc, "error", "§2.13")
        self._arbiter._failed(self, exc)

    def on_complete(self) -> None:
        self._arbiter._completed(self)
