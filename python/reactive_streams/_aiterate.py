"""asyncio: `aiterate` (a publisher as an async iterator) and `from_async_iterable` (an async
iterable as a publisher, driven by an event loop)."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable
from types import TracebackType
from typing import Any, Generic, TypeVar

from ._api import Publisher, Subscriber
from ._chunks import Chunk
from ._demand import Drain, DrainedSubscription, subscribe_and_start
from ._errors import NullElementError, ReactiveStreamsError
from ._fluent import fluent
from ._gauges import name_of
from ._iterate import DEFAULT_PREFETCH, BufferSubscriber, CancelOnCollect
from ._rules import (
    describe,
    log_subscriber_failure,
    require_not_none,
    require_publisher,
    signal_terminal,
)

__all__ = ["AsyncPublisherIterator", "aiterate", "from_async_iterable"]

T = TypeVar("T")


class _LoopBufferSubscriber(BufferSubscriber[T]):
    kind = "aiterate"

    def __init__(self, prefetch: int, name: str = "") -> None:
        super().__init__(prefetch, name)
        self._waiter: asyncio.Future[None] | None = None  # set with _waiting, on the loop

    def _wake(self) -> None:
        with self._lock:
            waiter, self._waiter = self._waiter, None
        if waiter is not None:
            loop = waiter.get_loop()
            if asyncio._get_running_loop() is loop:
                _resolve(waiter)
            elif not loop.is_closed():
                loop.call_soon_threadsafe(_resolve, waiter)

    def poll(self) -> list[Chunk[T]] | None:
        """The chunks buffered, ``[]`` if the consumer must `wait` first, None at the end."""
        with self._lock:
            return self._take_locked()

    async def wait(self) -> None:
        """Wait for a signal after `poll` gave ``[]``; one may have come meanwhile."""
        with self._lock:
            if not self._waiting:
                return  # a signal came between poll() and now
            waiter = self._waiter = asyncio.get_running_loop().create_future()
        try:
            await waiter
        finally:
            with self._lock:
                if self._waiter is waiter:
                    self._waiter = None


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


async def _loop_elements(subscriber: _LoopBufferSubscriber[T], guard: CancelOnCollect) -> AsyncIterator[T]:
    """The async generator an ``async for`` over `aiterate` runs: a chunk at a time, in the
    pieces `BufferSubscriber.pieces` cuts it into (which request more as they go), yielded
    unlocked. ``guard`` is held here, so that the subscription lives as long as this generator."""
    poll, wait, pieces = subscriber.poll, subscriber.wait, subscriber.pieces
    while True:
        chunks = poll()
        if chunks is None:
            return
        if not chunks:
            subscriber.ask_before_waiting()
            await wait()
            continue
        for chunk in chunks:
            for piece in pieces(chunk):
                for item in piece:
                    yield item


class AsyncPublisherIterator(AsyncIterator[T], Generic[T]):
    """The async iterator `aiterate` returns; ``aclose()`` (or ``async with``, or garbage
    collection) cancels the subscription. ``aiter()`` of it is its async generator, which an
    ``async for`` runs at an async generator's pace; ``__anext__`` takes from the same one."""

    def __init__(self, publisher: Publisher[T], prefetch: int) -> None:
        require_not_none(publisher, "publisher", "aiterate")
        subscriber: _LoopBufferSubscriber[T] = _LoopBufferSubscriber(prefetch, name_of(publisher))
        self._subscriber = subscriber
        self._elements = _loop_elements(subscriber, CancelOnCollect(subscriber))
        publisher.subscribe(subscriber)

    def __aiter__(self) -> AsyncIterator[T]:
        return self._elements

    def __anext__(self) -> Awaitable[T]:
        return self._elements.__anext__()

    async def aclose(self) -> None:
        """Cancel the subscription (§3.5) and drop the buffered elements."""
        self._subscriber.cancel()
        try:
            await self._elements.aclose()  # type: ignore[attr-defined]
        except RuntimeError:
            pass  # running in another task: the cancel ends it there

    async def __aenter__(self) -> AsyncPublisherIterator[T]:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()


@fluent
def aiterate(publisher: Publisher[T], prefetch: int = DEFAULT_PREFETCH) -> AsyncPublisherIterator[T]:
    """Subscribe to ``publisher`` and iterate its elements with ``async for``.

    Waiting never blocks the event loop: signals from other threads wake the waiting task through
    ``call_soon_threadsafe``. The source's own work runs where the source runs it: the requests
    go out from the loop's thread, so a source that emits inside ``request`` (`from_iterable`,
    the sources and operators built on it, a synchronous publisher of your own) runs its
    iterable there, and a blocking one blocks the loop. Give a blocking iterable to
    `AsyncIterablePublisher` (an executor's thread) and an async generator to
    `from_async_iterable`. At most ``prefetch`` elements are requested ahead and buffered;
    the stream's error is raised from ``__anext__``. ``aclose()`` and ``async with`` cancel the
    subscription at once; ``break`` or dropping the iterator cancels it when the iterator is
    collected, on the ``rs-finalizer`` thread.
    """
    require_publisher(publisher, "aiterate(publisher)")
    return AsyncPublisherIterator(publisher, prefetch)


def from_async_iterable(
    source: AsyncIterable[T], loop: asyncio.AbstractEventLoop | None = None
) -> Publisher[T]:
    """A publisher of an async iterable's elements (an async generator, say), pulled one at
    a time on ``loop`` and only while there is demand (§1.1); signals go out on ``loop`` too.

    ``loop`` defaults to the running loop; outside one, pass it. Subscribers may subscribe
    and request from any thread. Each subscription calls ``source.__aiter__()`` afresh, so an
    async generator object (its own iterator) serves one subscriber; cancel closes it.
    """
    require_not_none(source, "source", "from_async_iterable")
    if not isinstance(source, AsyncIterable):
        hint = "; for a plain iterable, use rs.from_iterable(...)" if isinstance(source, Iterable) else ""
        raise TypeError(
            "from_async_iterable() needs an async iterable (an async generator, or an object with "
            f"__aiter__), got {describe(source)}{hint}"
        )
    if loop is None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise ReactiveStreamsError(
                "from_async_iterable() outside a running event loop needs loop=..."
            ) from None
    return _FromAsyncIterablePublisher(source, loop)


class _FromAsyncIterablePublisher(Publisher[T]):
    def __init__(self, source: AsyncIterable[T], loop: asyncio.AbstractEventLoop) -> None:
        self._source = source
        self._loop = loop

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "subscriber", "§1.9")
        subscription = _AsyncIterableSubscription(subscriber, self._source, self._loop)
        subscribe_and_start(subscriber, subscription)  # §1.9, §2.13


# The pull task's step, as a pass sees it (the task runs between its awaits only).
_IDLE, _WAITING, _PULLING = 0, 1, 2
_BATCH = 256  # most elements pulled before the pull task lets a pass deliver them


class _AsyncIterableSubscription(DrainedSubscription[T]):
    """A `Demand` and a `Drain` whose passes run on the loop (the kit in ``_demand``), and a
    task that pulls elements into a queue, as many as the last pass allowed (§1.1).

    ``request`` and ``cancel`` only record state and signal the drain; every signal goes out
    from a pass, so they never overlap (§1.3). A pass runs at once when signalled on the loop,
    and through ``call_soon_threadsafe`` from any other thread, so ``request`` returns at once
    from another thread (§3.4). The pull task never signals the subscriber itself: it queues
    what it pulled, or notes the end it met, and has a pass run as soon as it next waits, so an
    async generator that does not wait is delivered in batches.
    """

    def __init__(
        self, subscriber: Subscriber[T], source: AsyncIterable[T], loop: asyncio.AbstractEventLoop
    ) -> None:
        super().__init__(subscriber, Drain(self._emit, run_on=self._on_loop))
        self._source: AsyncIterable[T] | None = source
        self._loop = loop
        self._started = False  # on_subscribe has returned (§1.3: no signal overlaps it)
        self._loop_closed = False
        # Touched on the loop only, by passes and the pull task:
        self._task: asyncio.Task[None] | None = None
        self._step = _IDLE
        self._allowed = 0  # pulls a pass has allowed, not yet begun
        self._wanted = asyncio.Event()  # wakes the pull task from _WAITING: pulls allowed, or stop
        self._queue: deque[T] = deque()  # pulled, not yet delivered
        self._pass_due = False  # the pull task has a pass coming (call_soon)
        self._ended = False  # the source is exhausted, or failed with self._failure
        self._failure: BaseException | None = None
        self._stopped = False

    def start(self) -> None:
        with self._drain.lock:
            self._started = True
        super().start()

    def cancel(self) -> None:
        """Drop the subscriber (§3.5, §3.7, §3.13); a pass then stops the pull task, which
        closes the async iterator."""
        drain = self._drain
        with drain.lock:
            if self._subscriber is None:
                return
            self._subscriber = None
            run = drain.signal_locked()
        if run:
            drain.passes()

    def _on_loop(self, passes: Callable[[], None]) -> None:
        """The drain's ``run_on``: at once on the loop, else through ``call_soon_threadsafe``."""
        loop = self._loop
        if asyncio._get_running_loop() is loop:
            passes()
            return
        try:
            loop.call_soon_threadsafe(passes)
        except RuntimeError:  # the loop is closed: nothing runs on it, so this pass runs here
            self._loop_closed = True
            passes()

    def _emit(self) -> None:
        """One drain pass: the pending error, the elements queued, the end, and then as many
        pulls allowed as there is demand for beyond them (§1.1)."""
        subscriber = self._subscriber
        if subscriber is None:
            self._stop()
            return
        if not self._started:
            return
        if self._loop_closed:
            self._terminate(subscriber, ReactiveStreamsError("from_async_iterable: its event loop is closed"))
            return
        if self._task is None:
            source, self._source = self._source, None
            self._task = self._loop.create_task(self._pull(source))  # type: ignore[arg-type]
        if self._error is not None:
            self._terminate(subscriber, self._error)
            return
        queue = self._queue
        left: int | None = None
        if queue:
            on_next, emitted = subscriber.on_next, 0
            while queue:  # each was pulled on a pull allowed by demand (§1.1)
                item = queue.popleft()
                try:
                    on_next(item)
                except Exception as exc:
                    self.cancel()  # §2.13; the next pass stops the pull task
                    log_subscriber_failure(subscriber, "on_next", exc)
                    return
                emitted += 1
                if self._subscriber is None or self._error is not None:
                    break  # cancelled (§1.8), or a §3.9 error: the next pass sees to it
            with self._drain.lock:
                left = self._demand.produced(emitted)
            if self._subscriber is None or self._error is not None:
                return
        if self._ended:
            self._terminate(subscriber, self._failure)  # §1.4, §1.5
            return
        if left is None:
            with self._drain.lock:
                left = self._demand.outstanding
        step = self._step
        allowed = left - (1 if step == _PULLING else 0)  # the queue is empty now
        self._allowed = allowed
        if allowed > 0 and step == _WAITING:
            self._wanted.set()

    async def _pull(self, source: AsyncIterable[T]) -> None:
        """Pull while pulls are allowed, queue the elements and have a pass deliver them; after
        ``_BATCH`` of them without a wait, wait once so that the pass can run."""
        iterator: AsyncIterator[T] | None = None
        queue, pulled = self._queue, 0
        try:
            iterator = source.__aiter__()
            while not self._stopped:
                if pulled >= _BATCH:
                    pulled = 0
                    await asyncio.sleep(0)  # the pass due delivers what is queued
                    continue
                if self._allowed <= 0:
                    pulled, self._step = 0, _WAITING
                    self._wanted.clear()
                    await self._wanted.wait()
                    self._step = _IDLE
                    continue
                self._allowed -= 1
                self._step = _PULLING
                try:
                    item = await iterator.__anext__()
                except StopAsyncIteration:
                    self._end(None)  # §1.5
                    return
                self._step = _IDLE
                if item is None:
                    self._end(NullElementError("§2.13: the async iterable yielded None"))
                    return
                queue.append(item)
                pulled += 1
                if not self._pass_due:
                    self._pass_due = True
                    self._loop.call_soon(self._pass)  # runs as soon as this task waits
        except Exception as exc:  # the source failed (§1.4)
            self._end(exc)
        except asyncio.CancelledError:
            if not self._stopped:  # not by a pass: by the loop's owner (asyncio.run ending, say)
                self._end(ReactiveStreamsError("from_async_iterable: its pull task was cancelled"))
            raise
        finally:
            aclose: Any = getattr(iterator, "aclose", None)
            if aclose is not None:
                await aclose()

    def _pass(self) -> None:
        self._pass_due = False
        self._drain.signal()

    def _end(self, failure: BaseException | None) -> None:
        self._step = _IDLE
        self._ended, self._failure = True, failure
        self._drain.signal()

    def _stop(self) -> None:
        """Stop the pull task; its ``finally`` closes the async iterator. On the loop only."""
        if self._stopped or self._loop_closed:
            return
        self._stopped, self._source = True, None
        self._queue.clear()
        if self._task is None:
            return
        if self._step == _PULLING:
            self._task.cancel()  # interrupts a pending __anext__
        elif self._step == _WAITING:
            self._wanted.set()  # otherwise it is running, or about to: it sees _stopped

    def _terminate(self, subscriber: Subscriber[T], error: BaseException | None) -> None:
        with self._drain.lock:
            if self._subscriber is None:
                return  # §1.7, §1.8
            self._subscriber = None  # §1.6, §3.13
        self._stop()
        signal_terminal(subscriber, error)
