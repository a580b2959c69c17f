"""`from_iterable`: a synchronous, re-subscribable publisher over any Python iterable.

Its subscription is a `Demand` and an inline `Drain` (the kit in ``_demand``): the ``request``
that finds the drain idle runs the emit loop, on the caller's thread; a ``request`` made from
another thread, or from inside ``on_next``, only records demand, which the running loop then
emits, so the recursion between ``request`` and ``on_next`` is bounded at depth one (§3.3).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence, Sized
from itertools import islice
from typing import Generic, TypeVar

from ._api import Publisher, Subscriber
from ._demand import Drain, DrainedSubscription, subscribe_and_start
from ._errors import NullElementError
from ._rules import (
    index_of_none,
    log_subscriber_failure,
    require_iterable,
    require_not_none,
    signal_terminal,
)

__all__ = ["IterablePublisher", "Slices", "cursor", "from_iterable"]

T = TypeVar("T")

BULK = 8192  # most elements in one on_next_batch: a bounded list even under unbounded demand


def from_iterable(iterable: Iterable[T]) -> Publisher[T]:
    """A cold publisher of ``iterable``'s elements, emitted on the thread that requests them.

    Each subscriber gets its own ``iter(iterable)``, so a list, range or other re-iterable
    collection is replayed to every subscriber, while an iterator or generator is shared
    (what one subscriber takes, the next does not see). A `Sized` iterable (list, tuple,
    range, ...) completes as soon as its last element is delivered, and at once if empty;
    any other completes when a request finds it exhausted. A ``None`` element ends the stream
    with ``NullElementError`` (§2.13); an exception from the iterable ends it with that
    exception (§1.4).

    Raises:
        NullElementError: ``iterable`` is None.
        TypeError: ``iterable`` is not iterable (``from_iterable(5)``).
    """
    return IterablePublisher(iterable)


class IterablePublisher(Publisher[T]):
    """The publisher `from_iterable` returns."""

    __slots__ = ("_iterable",)

    def __init__(self, iterable: Iterable[T]) -> None:
        require_iterable(iterable, "from_iterable()")
        self._iterable = iterable

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        """Signal ``on_subscribe``, then elements as requested (§1.9, §1.1); a failure to start
        (``iter`` raising) is signalled as ``on_error`` after ``on_subscribe``, never raised."""
        require_not_none(subscriber, "subscriber", "§1.9")
        subscription = _IterableSubscription(subscriber, self._iterable)
        subscribe_and_start(subscriber, subscription)  # §1.9, §2.13


class Slices(Generic[T]):
    """A list, tuple or range read by position, a chunk at a time as one slice, in C: a list's
    chunk is copied whole and a range's ints are made in one go, where its iterator would hand
    out (and a list be grown by) one element at a time. Each subscriber reads its own."""

    __slots__ = ("_at", "_sequence")

    def __init__(self, sequence: Sequence[T]) -> None:
        self._sequence = sequence
        self._at = 0

    def take(self, count: int) -> list[T]:
        """The next ``count`` elements (fewer at the end), as a list of their own."""
        at = self._at
        part = self._sequence[at : at + count]
        self._at = at + len(part)
        return part if part.__class__ is list else list(part)

    def elements(self, count: int) -> Iterator[T]:
        """The next ``count`` elements one by one, taken a slice of at most `BULK` at a time."""
        while count > 0:
            part = self.take(min(count, BULK))
            if not part:
                return
            count -= len(part)
            yield from part


#: The iterables read by position (exactly these types: a subclass may iterate otherwise).
_SLICED = frozenset({list, tuple, range})


def cursor(iterable: Iterable[T]) -> Iterator[T] | Slices[T]:
    """What a subscription reads ``iterable`` through: `Slices` for a list, tuple or range, else
    ``iter(iterable)`` (which may raise: a failure to start)."""
    if iterable.__class__ in _SLICED:
        return Slices(iterable)
    return iter(iterable)


def _size(iterable: Iterable[object]) -> int | None:
    """``len(iterable)`` if it has one that works (``range(2**64)`` has one that overflows)."""
    if not isinstance(iterable, Sized):
        return None
    try:
        return len(iterable)
    except Exception:
        return None


class IteratorSubscription(DrainedSubscription[T]):
    """What `from_iterable` and `AsyncIterablePublisher` share: a subscription that pulls
    elements from ``iter(iterable)`` as demand allows. The subclass's pass makes the iterator and
    calls `_send`.

    No ``__weakref__`` here: a subclass whose drain runs on an executor needs the drain to hold
    it strongly, since nothing else does before ``on_subscribe`` goes out.
    """

    __slots__ = ("_iterable", "_iterator", "_nulls_possible", "_remaining")

    def __init__(self, subscriber: Subscriber[T], iterable: Iterable[T], drain: Drain) -> None:
        super().__init__(subscriber, drain)
        self._iterable: Iterable[T] | None = iterable
        self._iterator: Iterator[T] | Slices[T] | None = None  # made by the first pass (`cursor`)
        # Elements left when the iterable is Sized: the last one completes the stream at
        # once, and an empty one completes without a request (§1.2, §2.9).
        self._remaining: int | None = None
        self._nulls_possible = type(iterable) is not range  # a range yields ints only

    def cancel(self) -> None:
        """Stop emitting and drop the subscriber (§3.5, §3.7, §3.12, §3.13)."""
        with self._drain.lock:
            self._subscriber = self._iterator = self._iterable = None

    def _send(self, subscriber: Subscriber[T], iterator: Iterator[T] | Slices[T], want: int) -> int | None:
        """Deliver up to ``want`` elements (§1.1), then the terminal signal if they exhausted the
        iterable; the demand left if the stream goes on, else None. A subscriber with an
        ``on_next_batch(items)`` method gets them as lists (see `_send_bulk`)."""
        on_next, remaining = subscriber.on_next, self._remaining
        if remaining is not None and remaining < want:
            want = remaining
        on_next_batch = getattr(subscriber, "on_next_batch", None)
        if on_next_batch is not None:
            sent = self._send_bulk(subscriber, on_next_batch, iterator, want)
            if sent is None:
                return None
            return self._after_send(subscriber, *sent)
        emitted = 0
        elements = iterator.elements(want) if isinstance(iterator, Slices) else islice(iterator, want)
        try:
            for item in elements:  # §1.1
                if item is None:
                    self._terminate(subscriber, NullElementError("§2.13: the iterable yielded None"))
                    return None
                try:
                    on_next(item)
                except Exception as exc:
                    self.cancel()  # §2.13
                    log_subscriber_failure(subscriber, "on_next", exc)
                    return None
                emitted += 1
                if self._subscriber is None or self._error is not None:
                    break  # §1.8: no element pulled after cancel; a §3.9 error goes next
        except Exception as exc:  # the iterable failed (§1.4)
            self._terminate(subscriber, exc)
            return None
        return self._after_send(subscriber, emitted, want)

    def _send_bulk(
        self,
        subscriber: Subscriber[T],
        on_next_batch: Callable[[list[T]], object],
        iterator: Iterator[T] | Slices[T],
        want: int,
    ) -> tuple[int, int] | None:
        """Up to ``want`` elements as lists of at most `BULK`, one ``on_next_batch`` each: what a
        batch-aware subscriber (the bridge's, on its way to the JVM) takes without a call per
        element. Demand requested meanwhile (a ``filter`` asking again for what it dropped) is
        sent in the same loop, not in another pass of the drain. How many were sent and the
        demand they were sent against, or None once the stream has ended. Demand counts
        elements, as ever (§1.1); the elements an iterable yields before it fails, or before a
        None, are delivered first, as one by one."""
        emitted, cap = 0, self._remaining
        slices = iterator if isinstance(iterator, Slices) else None
        while self._subscriber is not None and self._error is None:
            if emitted >= want:
                with self._drain.lock:
                    want = self._demand.outstanding  # none produced yet in this pass: all of it
                if cap is not None and cap < want:
                    want = cap
                if emitted >= want:
                    break
            chunk = min(want - emitted, BULK)
            failure: BaseException | None = None
            if slices is not None:
                items = slices.take(chunk)
            else:
                items = []
                try:
                    items.extend(islice(iterator, chunk))  # type: ignore[arg-type]  # keeps what came before a raise
                except Exception as exc:  # the iterable failed (§1.4)
                    failure = exc
            if self._nulls_possible and (at := index_of_none(items)) >= 0:  # §2.13
                del items[at:]  # what came before the None goes first
                failure = NullElementError("§2.13: the iterable yielded None")
            if items:
                try:
                    on_next_batch(items)
                except Exception as exc:
                    self.cancel()  # §2.13
                    log_subscriber_failure(subscriber, "on_next_batch", exc)
                    return None
                emitted += len(items)
            if failure is not None:
                self._terminate(subscriber, failure)
                return None
            if len(items) < chunk:
                break  # exhausted
        return emitted, want

    def _after_send(self, subscriber: Subscriber[T], emitted: int, want: int) -> int | None:
        remaining = self._remaining
        with self._drain.lock:
            left = self._demand.produced(emitted)
        if remaining is not None:
            self._remaining = remaining = remaining - emitted
        if self._subscriber is None:
            return None
        if self._error is not None:
            self._terminate(subscriber, self._error)
        elif emitted < want or remaining == 0:
            self._terminate(subscriber, None)  # exhausted, or known to be (§1.5)
        else:
            return left
        return None

    def _terminate(self, subscriber: Subscriber[T], error: BaseException | None) -> None:
        with self._drain.lock:
            if self._subscriber is None:
                return  # §1.7, §1.8
            self._subscriber = self._iterator = self._iterable = None  # §1.6, §3.13
        signal_terminal(subscriber, error)


class _IterableSubscription(IteratorSubscription[T]):
    """Its drain runs inline: the ``request`` that finds it idle emits, on the caller's thread."""

    __slots__ = ("__weakref__",)  # the drain holds its pass weakly: no cycle (§3.13)

    def __init__(self, subscriber: Subscriber[T], iterable: Iterable[T]) -> None:
        super().__init__(subscriber, iterable, Drain(self._emit))

    def _emit(self) -> None:
        """One drain pass: the pending error, or as many elements as demanded (§1.1)."""
        subscriber = self._subscriber
        if subscriber is None:
            return
        if self._iterator is None:
            iterable = self._iterable
            try:
                self._iterator = cursor(iterable)  # type: ignore[arg-type]
            except Exception as exc:  # §1.9: a failure to start is signalled, never raised
                self._terminate(subscriber, exc)
                return
            self._remaining = _size(iterable)  # type: ignore[arg-type]
        if self._error is not None:
            self._terminate(subscriber, self._error)
            return
        if self._remaining == 0:
            self._terminate(subscriber, None)
            return
        with self._drain.lock:
            want = self._demand.outstanding
        self._send(subscriber, self._iterator, want)
