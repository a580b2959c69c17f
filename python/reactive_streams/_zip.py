"""`zip` and `zip_with`: tuples of the sources' elements, one from each, in lockstep.

Each source is asked for what downstream has asked for and no more, and never for more than
``prefetch`` beyond the tuples already out: so no source is ever asked for more than the others
have matched plus the downstream demand, and a fast source's queue stays within ``prefetch``.
The stream ends, and the other sources are cancelled, as soon as one source has ended and its
queue is empty, so that no more tuple can be made: with completion, as the builtin ``zip``
stops at the shortest, or with the source's error, once the tuples its elements before the
error make have gone out (the builtin ``zip`` raises when it reaches the failing iterator's end,
too). A §3.9 request is signalled at once.

Every signal records state and signals one inline `Drain`, whose passes make every call to the
downstream subscriber and to the sources' subscriptions (§1.3, §2.7), and keep the recursion
through synchronous sources bounded (§3.3). Lists in, lists out: each source's lists are queued
as they came, and the tuples are made in C by ``zip`` over them, a list at a time (a lazy chunk,
its tuples made as it is iterated, for a subscriber that takes one, as `iterate`'s does).
"""

from __future__ import annotations

import builtins
import threading
from collections import deque
from itertools import chain
from typing import Any, TypeVar, overload

from ._api import Publisher, Subscriber, Subscription
from ._chunks import LazyChunk
from ._compose import operator
from ._demand import MAX_DEMAND, Demand, Drain
from ._fluent import fluent
from ._operator_types import Operator, PairOperator
from ._rules import (
    describe,
    log_subscriber_failure,
    require_not_none,
    require_publisher,
    signal_or_cancel,
    signal_terminal,
)

__all__ = ["zip", "zip_with"]

T = TypeVar("T")
A = TypeVar("A")
B = TypeVar("B")
C = TypeVar("C")
D = TypeVar("D")

#: What `zip` asks each source for ahead of the tuples out, at most.
PREFETCH = 1024


# fmt: off
@overload
def zip(p1: Publisher[A], /, *, prefetch: int = PREFETCH) -> Publisher[tuple[A]]: ...
@overload
def zip(p1: Publisher[A], p2: Publisher[B], /, *, prefetch: int = PREFETCH) -> Publisher[tuple[A, B]]: ...
@overload
def zip(
    p1: Publisher[A], p2: Publisher[B], p3: Publisher[C], /, *, prefetch: int = PREFETCH
) -> Publisher[tuple[A, B, C]]: ...
@overload
def zip(
    p1: Publisher[A], p2: Publisher[B], p3: Publisher[C], p4: Publisher[D], /, *, prefetch: int = PREFETCH
) -> Publisher[tuple[A, B, C, D]]: ...
@overload
def zip(*publishers: Publisher[Any], prefetch: int = PREFETCH) -> Publisher[tuple[Any, ...]]: ...
# fmt: on
@fluent
def zip(*publishers: Publisher[Any], prefetch: int = PREFETCH) -> Publisher[tuple[Any, ...]]:
    """``(Publisher[A], Publisher[B], ...) -> Publisher[tuple[A, B, ...]]``: one tuple per
    element of each source, as the builtin ``zip`` (rs's ``Zip``).

    Demand goes to every source in lockstep: a ``request(n)`` asks each for ``n`` more, and at
    most ``prefetch`` ahead of the tuples out. Completes when a source has completed and no
    tuple can be made any more, cancelling the others; zip of nothing completes at once.

    >>> list(rs.zip(rs.just(1, 2, 3), rs.just("a", "b")).iterate())
    [(1, 'a'), (2, 'b')]

    Signals go out serially, from one drain (§1.3); a cancel reaches every source (§3.12); a
    §3.9 request is signalled at once (§3.9).

    Raises:
        TypeError: a source is not a publisher. ValueError: ``prefetch`` is not an int >= 1.
    """
    for publisher in publishers:
        require_publisher(publisher, "zip(*publishers)")
    if isinstance(prefetch, bool) or not isinstance(prefetch, int) or prefetch < 1:
        raise ValueError(f"zip(prefetch) needs an int >= 1, got {describe(prefetch)}")
    return _ZipPublisher(publishers, prefetch)


# fmt: off
@overload
def zip_with(p2: Publisher[B], /, *, prefetch: int = PREFETCH) -> PairOperator[B]: ...
@overload
def zip_with(
    p2: Publisher[B], p3: Publisher[C], /, *, prefetch: int = PREFETCH
) -> Operator[A, tuple[A, B, C]]: ...
@overload
def zip_with(*others: Publisher[Any], prefetch: int = PREFETCH) -> Operator[Any, tuple[Any, ...]]: ...
# fmt: on
@fluent
def zip_with(*others: Publisher[Any], prefetch: int = PREFETCH) -> Operator[Any, tuple[Any, ...]]:
    """``(Publisher[B], ...) -> (Publisher[A] -> Publisher[tuple[A, B, ...]])``: `zip` of the
    source and ``others``, the source's element first in each tuple.

    Demand, cancel and rules as `zip`'s: each source asked in lockstep (§1.1), a cancel reaches
    every source (§3.12), a §3.9 request is signalled (§3.9).
    """
    zip(*others, prefetch=prefetch)  # the checks, now
    return operator("zip_with", lambda source: zip(source, *others, prefetch=prefetch))


class _ZipPublisher(Publisher[tuple[Any, ...]]):
    __slots__ = ("_prefetch", "_publishers")

    def __init__(self, publishers: tuple[Publisher[Any], ...], prefetch: int) -> None:
        self._publishers, self._prefetch = publishers, prefetch

    def subscribe(self, subscriber: Subscriber[tuple[Any, ...]]) -> None:
        """Signal ``on_subscribe``, then subscribe every source in turn (§1.9)."""
        require_not_none(subscriber, "subscriber", "§1.9")
        _Zipper(subscriber, len(self._publishers), self._prefetch).start(self._publishers)


class _Side(Subscriber[Any]):
    """The zipper's subscriber to one source: what arrives is queued, as the lists it came in,
    for the drain to take (under the zipper's lock)."""

    __slots__ = (
        "_gathering",
        "_zipper",
        "asked",
        "chunks",
        "done",
        "error",
        "offset",
        "size",
        "subscription",
    )

    def __init__(self, zipper: _Zipper) -> None:
        self._zipper = zipper
        self.subscription: Subscription | None = None
        self.chunks: deque[list[Any]] = deque()  # lists of elements, the first from `offset` on
        self.offset = 0
        self.size = 0  # elements queued
        self._gathering: list[Any] | None = None  # the last chunk, while on_next appends to it
        self.asked = 0  # asked of this source in all (the drain's)
        self.done = False
        self.error: BaseException | None = None  # its failure, signalled once its queue is out

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "subscription", "§2.13")
        zipper = self._zipper
        with zipper.lock:
            keep = self.subscription is None and not zipper.finished
            if keep:
                self.subscription = subscription
                run = zipper.drain.signal_locked()
        if not keep:
            subscription.cancel()  # §2.5, or the zip has ended meanwhile
        elif run:
            zipper.drain.passes()

    def on_next(self, item: Any) -> None:
        require_not_none(item, "element", "§2.13")
        zipper = self._zipper
        with zipper.lock:
            gathering = self._gathering
            if gathering is None:
                self._gathering = gathering = []
                self.chunks.append(gathering)
            gathering.append(item)
            self.size += 1
            run = zipper.drain.signal_locked()
        if run:
            zipper.drain.passes()

    def on_next_batch(self, items: list[Any]) -> None:
        zipper = self._zipper
        with zipper.lock:
            self._gathering = None
            self.chunks.append(items)  # its sender checked them (§2.13) and gave it up
            self.size += len(items)
            run = zipper.drain.signal_locked()
        if run:
            zipper.drain.passes()

    def on_error(self, exc: BaseException) -> None:
        require_not_none(exc, "error", "§2.13")
        self.error = exc
        self.done = True
        self._zipper.drain.signal()

    def on_complete(self) -> None:
        self.done = True
        self._zipper.drain.signal()

    def take(self, count: int) -> list[Any]:
        """The next ``count`` elements (``size`` has them), as a list of their own: the first
        chunk itself when it is exactly that. Call it under the zipper's lock."""
        self.size -= count
        chunks = self.chunks
        first, offset = chunks[0], self.offset
        if len(first) - offset > count:  # part of the first
            self.offset = offset + count
            return first[offset : offset + count]
        if offset == 0 and len(first) == count:  # the first, whole
            chunks.popleft()
            if first is self._gathering:
                self._gathering = None
            return first
        parts: list[list[Any]] = []
        while count:
            first = chunks[0]
            part = first[offset : offset + count]
            parts.append(part)
            count -= len(part)
            if offset + len(part) == len(first):
                chunks.popleft()
                offset = 0
                if first is self._gathering:
                    self._gathering = None
            else:
                offset += len(part)
        self.offset = offset
        return list(chain.from_iterable(parts))

    def clear(self) -> None:
        self.chunks.clear()
        self._gathering = None
        self.size = self.offset = 0


class _Zipper(Subscription):
    """The downstream's subscription, and the drain that zips."""

    def __init__(self, downstream: Subscriber[tuple[Any, ...]], count: int, prefetch: int) -> None:
        self._downstream: Subscriber[tuple[Any, ...]] | None = downstream
        self.lock = threading.Lock()
        self.drain = Drain(self._pass, lock=self.lock)
        self._sides = [_Side(self) for _ in builtins.range(count)]
        self._demand = Demand()  # asked by downstream, not yet delivered
        self._requested = 0  # asked by downstream in all (§3.17: capped)
        self._emitted = 0
        self._prefetch = prefetch
        self._limit = max(1, prefetch - (prefetch >> 2))  # ask again every 3/4 of prefetch
        self._error: BaseException | None = None  # a §3.9 request's
        self._cancelled = False
        self.finished = False

    def start(self, publishers: tuple[Publisher[Any], ...]) -> None:
        if not signal_or_cancel(self._downstream, "on_subscribe", self, self.cancel):  # §1.9, §2.13
            return
        for side, publisher in builtins.zip(self._sides, publishers, strict=True):
            if self.finished or self._cancelled:
                break  # a source failed, or downstream cancelled, meanwhile
            try:
                publisher.subscribe(side)
            except Exception as exc:  # a publisher that breaks §1.9
                side.error, side.done = exc, True
        self.drain.signal()  # zip of nothing: complete

    def request(self, n: int) -> None:
        """Add ``n`` to demand (§3.8, §3.17); a §3.9 request is signalled by the drain."""
        with self.lock:
            if self.finished:
                return  # §3.6
            error = self._demand.add(n)
            if error is not None:
                if self._error is None:
                    self._error = error
            else:
                total = self._requested + n
                self._requested = MAX_DEMAND if total >= MAX_DEMAND else total
            run = self.drain.signal_locked()
        if run:
            self.drain.passes()

    def cancel(self) -> None:
        """The drain cancels every source and drops the downstream (§3.5, §3.13)."""
        self._cancelled = True
        self.drain.signal()

    def _pass(self) -> None:
        """One pass: the tuples demand allows, then what each source is to be asked for, then
        the end, if it has come."""
        downstream = self._downstream
        if downstream is None or self.finished:
            return
        if self._cancelled:
            self._finish(None, signal=False)
            return
        sides = self._sides
        with self.lock:
            outstanding, requested, error = self._demand.outstanding, self._requested, self._error
            count = builtins.min(outstanding, builtins.min(side.size for side in sides)) if sides else 0
            if count:
                columns = [side.take(count) for side in sides]
                self._demand.produced(count)  # going out now (or the stream ends, if it fails)
        if count:
            if not self._emit(downstream, columns, count):
                return
            self._emitted += count
        if error is not None:
            self._finish(error, signal=True)  # §3.9, after the tuples the demand let out
            return
        ended = [side for side in sides if side.done and not side.size]
        if ended or not sides:  # no tuple can be made any more
            self._finish(next((side.error for side in ended if side.error is not None), None), signal=True)
            return
        target = builtins.min(requested, self._emitted + self._prefetch)  # lockstep, within prefetch
        for side in sides:
            subscription = side.subscription
            if subscription is None or side.done:
                continue
            n = target - side.asked
            if n > 0 and (n >= self._limit or target == requested):
                side.asked = target
                subscription.request(n)

    def _emit(self, downstream: Subscriber[tuple[Any, ...]], columns: list[list[Any]], count: int) -> bool:
        """The tuples of ``columns`` downstream: as one lazy chunk or list, or one by one; False
        if downstream failed (§2.13)."""
        on_next_batch = getattr(downstream, "on_next_batch", None)
        try:
            if on_next_batch is not None:
                if getattr(downstream, "lazy_batches", False):  # made as it is iterated; a cancel
                    tuples = builtins.zip(*columns, strict=False)  # clears the first column: the end
                    on_next_batch(LazyChunk(tuples, count, columns[0]))
                else:
                    on_next_batch(list(builtins.zip(*columns, strict=True)))
            else:
                for item in builtins.zip(*columns, strict=True):
                    if self._cancelled:
                        break  # §3.12
                    downstream.on_next(item)
        except Exception as exc:
            self._finish(None, signal=False)
            log_subscriber_failure(downstream, "on_next" if on_next_batch is None else "on_next_batch", exc)
            return False
        return True

    def _finish(self, error: BaseException | None, *, signal: bool) -> None:
        with self.lock:
            self.finished = True
        downstream, self._downstream = self._downstream, None  # §3.13
        for side in self._sides:
            if side.subscription is not None and not side.done:
                side.subscription.cancel()
            with self.lock:
                side.clear()
        if signal and downstream is not None:
            signal_terminal(downstream, error)
