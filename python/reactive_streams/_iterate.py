"""`iterate`: a publisher as a blocking iterator with a buffer bounded by ``prefetch``.

Elements are handed over in chunks, not one by one: the publisher's side appends what arrives
(an ``on_next_batch`` list, or lazy batch, is kept as it is; single elements are gathered into a
list), and the consumer takes every chunk under one lock acquisition, then hands them out
without locking, so that a ``for`` loop runs at a list's pace. The consumer is woken only when
it waits.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator
from functools import partial
from itertools import chain, islice
from typing import Any, Generic, TypeVar

from . import _finalizer
from ._api import Publisher, Subscriber, Subscription
from ._chunks import Chunk
from ._closing import Closing
from ._demand import Demand, Drain
from ._fluent import fluent
from ._gauges import StreamState, name_of, register, state_of
from ._rules import require_not_none, require_publisher

__all__ = ["DEFAULT_PREFETCH", "BlockingIterator", "BufferSubscriber", "CancelOnCollect", "iterate"]

T = TypeVar("T")

#: `iterate`'s and `aiterate`'s ``prefetch``: buffered plus outstanding, at most.
DEFAULT_PREFETCH = 1024

_NOTHING: Any = object()  # next()'s default: a chunk emptied by a cancel


def _check_prefetch(prefetch: int) -> int:
    if isinstance(prefetch, bool) or not isinstance(prefetch, int) or prefetch < 1:
        raise ValueError(f"prefetch must be an int >= 1, got {prefetch!r}")
    return prefetch


class BufferSubscriber(Subscriber[T]):
    """Buffers at most ``prefetch`` elements: it requests ``prefetch`` at first, then again
    each time three quarters of them have been handed to the consumer, or a quarter when the
    consumer must wait for more (`ask_before_waiting`); each request is for what was handed out
    since the last, so outstanding demand plus buffered elements (the chunk being yielded
    included) never exceed ``prefetch`` (§1.1, the spec's subscriber-controlled queue bound).

    Its calls to the subscription, ``request`` and ``cancel``, go out from one inline `Drain`,
    so they never overlap (§2.7): a ``cancel`` made (by ``close()`` on another thread, or by
    the finalizer) while a ``request`` is in progress is recorded, and made by the requesting
    thread as soon as that ``request`` returns.

    The consumer takes the buffer as a chunk with `_take_locked`, which sets ``_waiting`` when
    there is none: only then does a signal call ``_wake`` (without the lock).
    """

    kind = "iterate"  # in `describe_streams`

    def __init__(self, prefetch: int, name: str = "") -> None:
        self._prefetch = _check_prefetch(prefetch)
        self._limit = max(1, prefetch - (prefetch >> 2))
        self._early = max(1, prefetch >> 2)  # handed out when the consumer must wait: asked for then
        self._lock = threading.Lock()
        self._chunks: list[Chunk[T]] = []  # arrived, not yet taken by the consumer
        self._gathering: list[T] | None = None  # the last chunk, if on_next may append to it
        self._taken: list[Chunk[T]] = []  # the chunks the consumer hands out; a cancel empties them
        self._waiting = False  # the consumer waits for a signal: the signal must wake it
        self._subscription: Subscription | None = None
        self._unrequested = Demand()  # handed out by the consumer, not yet requested upstream
        self._consumed = 0  # handed out since the last request (the consumer's: see `pieces`)
        self._cancel_upstream = False
        # Held strongly (a cycle, freed by the collector), not weakly as a method would be: a
        # dropped iterator caught in a reference cycle is collected with this subscriber, whose
        # weak references are cleared before `CancelOnCollect`'s finalizer asks for the cancel.
        self._upstream = Drain(partial(BufferSubscriber._call_upstream, self), lock=self._lock)
        self._done = False
        self._error: BaseException | None = None
        self._cancelled = False
        # What `stream_state` reports, counted per request and per take, never per element.
        self._name = name
        self._requested_in_all = 0
        self._handed_out = 0
        self._since = time.monotonic()  # the consumer's last take, or when it began to wait
        register(self)

    def _wake(self) -> None:
        raise NotImplementedError

    def stream_state(self) -> StreamState | None:
        """What it holds, the demand outstanding, on whom it waits (`describe_streams`)."""
        with self._lock:
            if self._done and not self._chunks:
                return None
            held = sum(map(len, self._chunks))
            return state_of(
                self.kind,
                self._name,
                requested=self._requested_in_all,
                delivered=self._handed_out,
                held=held,
                since=self._since,
            )

    def on_subscribe(self, subscription: Subscription) -> None:
        """Keep the first subscription and request ``prefetch`` (§2.1); cancel a second one, or
        any once the consumer has closed (§2.5, §2.13)."""
        require_not_none(subscription, "subscription", "§2.13")
        upstream = self._upstream
        with self._lock:
            duplicate = self._subscription is not None or self._cancelled
            if not duplicate:
                self._subscription = subscription
                self._unrequested.add(self._prefetch)
                run = upstream.signal_locked()
        if duplicate:
            subscription.cancel()  # §2.5, or the consumer has already closed
        elif run:
            upstream.passes()

    def on_next(self, item: T) -> None:
        """Append one element to the chunk being gathered (§2.13: never None)."""
        require_not_none(item, "element", "§2.13")
        with self._lock:
            if self._cancelled:
                return  # §2.8
            gathering = self._gathering
            if gathering is None:
                self._gathering = gathering = []
                self._chunks.append(gathering)
            gathering.append(item)
            if not self._waiting:
                return
            self._waiting = False
        self._wake()

    #: Lazy chunks (`LazyChunk`) are welcome too: the bridge and publisher_from_dataframe then
    #: hand their rows over unmade.
    lazy_batches = True

    def on_next_batch(self, items: list[T]) -> None:
        """Append a list of elements (or a `LazyChunk`) at once, kept as it is: its sender checks
        the elements (§2.13) and gives it up."""
        chunk: Chunk[T] = items if items.__class__ is list or hasattr(items, "clear") else list(items)
        with self._lock:
            if self._cancelled or not len(chunk):
                return  # §2.8
            self._chunks.append(chunk)
            self._gathering = None
            if not self._waiting:
                return
            self._waiting = False
        self._wake()

    def on_error(self, exc: BaseException) -> None:
        """End the stream with ``exc``, raised after the elements buffered before it (§2.4)."""
        require_not_none(exc, "error", "§2.13")
        with self._lock:
            self._done, self._error = True, exc
            self._subscription = None  # §2.4
            self._waiting = False
        self._wake()

    def on_complete(self) -> None:
        """End the stream after the elements buffered (§2.4)."""
        with self._lock:
            self._done = True
            self._subscription = None  # §2.4
            self._waiting = False
        self._wake()

    def cancel(self) -> None:
        """Cancel upstream and drop what is buffered, the chunk being yielded included;
        thread-safe and idempotent (§3.5, §3.7)."""
        upstream = self._upstream
        with self._lock:
            self._cancelled = self._done = self._cancel_upstream = True
            self._chunks, self._gathering = [], None
            for chunk in self._taken:
                chunk.clear()  # the consumer's iterator over it stops at once
            self._waiting = False
            run = upstream.signal_locked()
        if run:
            upstream.passes()
        self._wake()

    def _call_upstream(self) -> None:
        """One drain pass: the recorded cancel, or the requests not yet made (§2.7)."""
        with self._lock:
            subscription = self._subscription
            if subscription is None:
                return  # not subscribed yet, terminated (§2.4), or already cancelled
            cancel = self._cancel_upstream
            if cancel:
                self._subscription = None  # §3.7: one cancel is enough
            n = self._unrequested.outstanding
            self._unrequested.produced(n)
            self._requested_in_all += n
        if cancel:
            subscription.cancel()
        elif n:
            subscription.request(n)

    def _take_locked(self) -> list[Chunk[T]] | None:
        """Every chunk buffered, to hand out; ``[]`` when the consumer must wait; None once the
        stream has ended (after its last chunk). Raises the stream's error, once, after every
        element that came before it. Call it with ``self._lock`` held."""
        chunks = self._chunks
        if chunks:
            self._chunks, self._gathering = [], None
            self._taken = chunks
            self._handed_out += sum(map(len, chunks))
            self._since = time.monotonic()
            return chunks
        if not self._done:
            if not self._waiting:
                self._since = time.monotonic()  # from now on it waits on the producer
            self._waiting = True
            return chunks
        error, self._error = self._error, None
        if error is not None:
            raise error
        return None

    def pieces(self, chunk: Chunk[T]) -> Iterator[Iterable[T]]:
        """``chunk`` cut where a request is due, for the consumer to hand out piece after piece.

        ``_consumed`` counts the elements handed out since the last request, which is made as the
        ``limit``-th goes out (the consumer asks for its piece once the piece before is used up),
        not before, so that buffered plus outstanding stays within ``prefetch`` (§1.1). A chunk
        that does not reach the limit goes as it is. A cancel empties the chunk, which ends its
        iterator.
        """
        size, limit, consumed = len(chunk), self._limit, self._consumed
        if consumed + size < limit:
            self._consumed = consumed + size
            yield chunk
            return
        elements = iter(chunk)
        while size:
            step = limit - consumed
            if step > size:
                self._consumed = consumed + size
                yield elements
                return
            if step > 1:
                yield islice(elements, step - 1)
            last = next(elements, _NOTHING)
            if last is _NOTHING:
                return  # cancelled meanwhile
            size -= step
            consumed = self._consumed = 0
            self._replenish(limit)  # the limit-th goes out now: no longer buffered
            yield (last,)

    def ask_before_waiting(self) -> None:
        """The consumer is about to wait for elements: if it handed out at least a quarter of
        ``prefetch`` since the last request, they are requested now, not once three quarters
        are. A producer slower than the consumer (a JVM publisher across the bridge, a thread of
        its own) would otherwise run out of demand while the request travels: it has a quarter
        of ``prefetch`` left to make at most when the consumer asks at three quarters. A
        synchronous publisher never makes the consumer wait, so its requests are as before. Only
        what was handed out is asked for again: buffered plus outstanding stays within
        ``prefetch`` (§1.1). The consumer's own call, as ``pieces`` is."""
        consumed = self._consumed
        if consumed >= self._early:
            self._consumed = 0
            self._replenish(consumed)

    def _replenish(self, count: int) -> None:
        """Request ``count`` more, for as many elements handed to the consumer."""
        upstream = self._upstream
        with self._lock:
            if self._subscription is None or self._cancelled:
                return
            self._unrequested.add(count)
            run = upstream.signal_locked()
        if run:
            upstream.passes()


class CancelOnCollect:
    """Cancels a subscriber when collected, on the finalizer thread: held by an iterator and by
    its generator, so the subscription ends once neither is left (a ``for`` loop holds only
    the generator)."""

    __slots__ = ("subscriber",)

    def __init__(self, subscriber: BufferSubscriber[Any]) -> None:
        self.subscriber = subscriber
        _finalizer.start()

    def __del__(self) -> None:
        _finalizer.defer(self.subscriber.cancel)  # not on the collecting thread (see _finalizer)


class _BlockingSubscriber(BufferSubscriber[T]):
    def __init__(self, prefetch: int, name: str = "") -> None:
        super().__init__(prefetch, name)
        self._ready = threading.Condition(self._lock)

    def _wake(self) -> None:
        with self._ready:
            self._ready.notify()

    def take(self) -> list[Chunk[T]] | None:
        """The chunks buffered, waiting for one; None at the end (see `_take_locked`)."""
        with self._lock:  # the condition's own lock; its __enter__ runs in Python
            chunks = self._take_locked()
            if chunks is None or chunks:
                return chunks
        self.ask_before_waiting()
        with self._lock:
            while True:
                chunks = self._take_locked()
                if chunks is None or chunks:
                    return chunks
                self._ready.wait()


def _pieces(subscriber: _BlockingSubscriber[T], guard: CancelOnCollect) -> Iterator[Iterable[T]]:
    """The pieces of every chunk ``take`` gives, for ``chain.from_iterable`` to hand out element
    by element in C: a ``for`` loop over them runs at a list's pace. ``guard`` is held by this
    generator's frame, so that the subscription lives as long as the iteration does."""
    take, pieces = subscriber.take, subscriber.pieces
    while (chunks := take()) is not None:
        for chunk in chunks:
            yield from pieces(chunk)


class BlockingIterator(Closing, Iterator[T], Generic[T]):
    """The iterator `iterate` returns; ``close()`` (or ``with``, or garbage collection)
    cancels the subscription. ``iter()`` of it is a ``chain`` over the chunks, which a ``for``
    loop runs at a list's pace; ``next()`` takes from the same chain. One consumer at a time."""

    def __init__(self, publisher: Publisher[T], prefetch: int) -> None:
        require_not_none(publisher, "publisher", "iterate")
        subscriber: _BlockingSubscriber[T] = _BlockingSubscriber(prefetch, name_of(publisher))
        self._subscriber = subscriber
        guard = CancelOnCollect(subscriber)
        self._elements: Iterator[T] = chain.from_iterable(_pieces(subscriber, guard))
        publisher.subscribe(subscriber)

    def __iter__(self) -> Iterator[T]:
        return self._elements

    def __next__(self) -> T:
        return next(self._elements)

    def close(self) -> None:
        """Cancel the subscription (§3.5) and drop the buffered elements."""
        self._subscriber.cancel()


@fluent
def iterate(publisher: Publisher[T], prefetch: int = DEFAULT_PREFETCH) -> BlockingIterator[T]:
    """Subscribe to ``publisher`` and iterate its elements, blocking while none is buffered.

    At most ``prefetch`` elements are requested ahead and buffered; more are requested each
    time three quarters of them have been handed out, or as soon as a quarter has when the loop
    must wait for elements (so that a publisher slower than the loop is asked again before it
    runs out of demand). The stream's error is raised after the
    elements that came before it. ``close()`` and leaving a ``with`` block cancel the
    subscription at once; leaving a ``for`` loop early (``break``, an exception) or dropping the
    iterator cancels it when the iterator is collected, on the ``rs-finalizer`` thread.
    ``prefetch`` sets the throughput: each replenishing request is a round trip to the publisher
    (a few microseconds in Python, more across the bridge), and the default, 1,024, spends a
    small share of a list's pace on them (256 spent a third of it).
    """
    require_publisher(publisher, "iterate(publisher)")
    return BlockingIterator(publisher, prefetch)
