"""asyncio: `aiterate` (a publisher as an async iterator) and `from_async_iterable` (an async
iterable as a publisher, driven by an event loop)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import AsyncIterable, AsyncIterator, Iterable
from types import TracebackType
from typing import Any, Generic, TypeVar

from . import _finalizer
from ._api import Publisher, Subscriber, Subscription
from ._errors import IllegalDemandError, NullElementError, ReactiveStreamsError
from ._iterate import BufferSubscriber
from ._rules import (
    MAX_DEMAND,
    add_demand,
    checked_demand,
    describe,
    log_subscriber_failure,
    require_not_none,
    require_publisher,
    signal_terminal,
)

__all__ = ["AsyncBlockingIterator", "aiterate", "from_async_iterable"]

T = TypeVar("T")


class _AsyncSubscriber(BufferSubscriber[T]):
    def __init__(self, prefetch: int) -> None:
        super().__init__(prefetch)
        self._waiter: asyncio.Future[None] | None = None

    def _wake(self) -> None:
        with self._lock:
            waiter, self._waiter = self._waiter, None
        if waiter is not None:
            loop = waiter.get_loop()
            if not loop.is_closed():
                loop.call_soon_threadsafe(_resolve, waiter)

    async def take(self) -> T:
        while True:
            with self._lock:
                if self._buffer or self._done:
                    has_item, item = self._poll()
                    break
                waiter = self._waiter = asyncio.get_running_loop().create_future()
            try:
                await waiter
            except BaseException:
                with self._lock:
                    if self._waiter is waiter:
                        self._waiter = None
                raise
        if not has_item:
            raise StopAsyncIteration
        self._replenish()
        return item  # type: ignore[return-value]


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class AsyncBlockingIterator(AsyncIterator[T], Generic[T]):
    """The async iterator `aiterate` returns; ``aclose()`` (or ``async with``, or garbage
    collection) cancels the subscription."""

    def __init__(self, publisher: Publisher[T], prefetch: int) -> None:
        require_not_none(publisher, "publisher", "aiterate")
        self._subscriber: _AsyncSubscriber[T] = _AsyncSubscriber(prefetch)
        _finalizer.start()
        publisher.subscribe(self._subscriber)

    async def __anext__(self) -> T:
        return await self._subscriber.take()

    async def aclose(self) -> None:
        """Cancel the subscription (§3.5) and drop the buffered elements."""
        self._subscriber.cancel()

    async def __aenter__(self) -> AsyncBlockingIterator[T]:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._subscriber.cancel()

    def __del__(self) -> None:
        subscriber = getattr(self, "_subscriber", None)
        if subscriber is not None:
            _finalizer.defer(subscriber.cancel)  # not on the collecting thread (see _finalizer)


def aiterate(publisher: Publisher[T], prefetch: int = 256) -> AsyncBlockingIterator[T]:
    """Subscribe to ``publisher`` and iterate its elements with ``async for``.

    The event loop is never blocked: signals from other threads wake the waiting task through
    ``call_soon_threadsafe``. At most ``prefetch`` elements are requested ahead and buffered;
    the stream's error is raised from ``__anext__``. ``aclose()`` and ``async with`` cancel the
    subscription at once; ``break`` or dropping the iterator cancels it when the iterator is
    collected, on the ``rs-finalizer`` thread.
    """
    require_publisher(publisher, "aiterate(publisher)")
    return AsyncBlockingIterator(publisher, prefetch)


def from_async_iterable(
    source: AsyncIterable[T], loop: asyncio.AbstractEventLoop | None = None
) -> Publisher[T]:
    """A publisher of an async iterable's elements (an async generator, say), pulled one at
    a time on ``loop`` and only while there is demand (§1.1).

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
    return _AsyncIterablePublisher(source, loop)


class _AsyncIterablePublisher(Publisher[T]):
    def __init__(self, source: AsyncIterable[T], loop: asyncio.AbstractEventLoop) -> None:
        self._source = source
        self._loop = loop

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "subscriber", "§1.9")
        subscription = _AsyncIterableSubscription(subscriber, self._loop)
        try:
            subscriber.on_subscribe(subscription)
        except Exception as exc:
            subscription.cancel()  # §2.13
            log_subscriber_failure(subscriber, "on_subscribe", exc)
            return
        subscription.start(self._source)


class _AsyncIterableSubscription(Subscription, Generic[T]):
    def __init__(self, subscriber: Subscriber[T], loop: asyncio.AbstractEventLoop) -> None:
        self._subscriber: Subscriber[T] | None = subscriber
        self._loop = loop
        self._lock = threading.Lock()
        self._requested = 0
        self._cancelled = False
        self._pending_error: BaseException | None = None
        self._demand = asyncio.Event()  # touched only on the loop
        self._task: concurrent.futures.Future[None] | None = None

    def start(self, source: AsyncIterable[T]) -> None:
        coroutine = self._run(source)
        try:
            task = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        except RuntimeError as exc:  # the loop is closed
            coroutine.close()
            self._signal_error(ReactiveStreamsError(f"from_async_iterable: its event loop is gone ({exc})"))
            return
        # A task cancelled before its first step never runs its body: deliver a pending
        # §3.9 error from here in that case (a no-op otherwise).
        task.add_done_callback(lambda _: self._finish_cancelled())
        with self._lock:
            self._task = task
            cancelled = self._cancelled
        if cancelled:
            task.cancel()

    def request(self, n: int) -> None:
        """Add demand and wake the pulling task (§3.8, §3.17); returns at once (§3.4)."""
        checked = checked_demand(n)
        with self._lock:
            if self._cancelled:
                return  # §3.6
            if not isinstance(checked, IllegalDemandError):
                self._requested = add_demand(self._requested, checked)
                cancel = False
            else:
                self._pending_error, self._cancelled = checked, True  # §3.9
                cancel = True
        if cancel:
            self._stop()
        else:
            self._poke()

    def cancel(self) -> None:
        """Stop pulling, close the async iterator and drop the subscriber (§3.5, §3.13)."""
        with self._lock:
            self._pending_error = None
            if self._cancelled:
                return
            self._cancelled = True
        self._stop()

    def _stop(self) -> None:
        # Cancelling the task interrupts a pending __anext__; its done callback then
        # delivers a pending §3.9 error and drops the subscriber.
        with self._lock:
            task = self._task
        if task is not None:
            task.cancel()

    def _poke(self) -> None:
        try:
            self._loop.call_soon_threadsafe(self._demand.set)
        except RuntimeError:  # the loop is closed: nothing more can be pulled
            self._signal_error(ReactiveStreamsError("from_async_iterable: its event loop is closed"))

    async def _run(self, source: AsyncIterable[T]) -> None:
        iterator: AsyncIterator[T] | None = None
        try:
            iterator = source.__aiter__()
            while True:
                while not self._take_one():
                    if self._cancelled:
                        return
                    self._demand.clear()
                    await self._demand.wait()
                try:
                    item = await iterator.__anext__()
                except StopAsyncIteration:
                    self._terminate(None)  # §1.5
                    return
                if item is None:
                    self._terminate(NullElementError("§2.13: the async iterable yielded None"))
                    return
                self._deliver(item)
        except Exception as exc:  # the source failed (§1.4)
            self._terminate(exc)
        finally:
            aclose: Any = getattr(iterator, "aclose", None)
            if aclose is not None:
                await aclose()

    def _deliver(self, item: T) -> None:
        # Not inlined in _run: a coroutine frame outlives the task in a kept traceback, and
        # must not hold the subscriber there (§3.13).
        subscriber = self._subscriber
        if self._cancelled or subscriber is None:
            return  # §1.8
        try:
            subscriber.on_next(item)
        except Exception as exc:
            self.cancel()
            log_subscriber_failure(subscriber, "on_next", exc)  # §2.13

    def _take_one(self) -> bool:
        with self._lock:
            if self._cancelled or self._requested == 0:
                return False
            if self._requested != MAX_DEMAND:
                self._requested -= 1
            return True

    def _finish_cancelled(self) -> None:
        with self._lock:
            subscriber, error = self._subscriber, self._pending_error
            self._subscriber = self._pending_error = None  # §3.13
        if subscriber is not None and error is not None:
            signal_terminal(subscriber, error)

    def _terminate(self, error: BaseException | None) -> None:
        with self._lock:
            if self._cancelled:
                return  # §1.7, §1.8; the done callback delivers a pending §3.9 error
            self._cancelled = True  # §1.6
            subscriber, self._subscriber = self._subscriber, None
        if subscriber is None:
            return
        signal_terminal(subscriber, error)

    def _signal_error(self, error: BaseException) -> None:
        with self._lock:
            subscriber, self._subscriber = self._subscriber, None
            self._cancelled = True
        if subscriber is not None:
            signal_terminal(subscriber, error)
