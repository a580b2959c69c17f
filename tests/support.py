"""Test helpers: a recording subscriber that checks the rules as signals arrive, and one
factory per reference publisher and operator, so that each rule test runs over all of them."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import reactive_streams as rs

WAIT = 10.0  # seconds: a guard against hangs, never a timing assertion


def wait_for(condition: Callable[[], bool], what: str) -> None:
    """Wait until ``condition()`` holds, for what happens on another thread."""
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)


class Boom(Exception):
    """The failure the failing sources raise."""


class Probe(rs.Subscriber[Any]):
    """Records every signal and checks, as they arrive: serial signals (§1.3), on_subscribe
    first and once (§1.9, §2.12), never more on_next than requested (§1.1), nothing after a
    terminal signal (§1.7)."""

    def __init__(self, initial: int = 0, on_next_hook: Callable[[Probe, Any], None] | None = None):
        self.subscription: rs.Subscription | None = None
        self.items: list[Any] = []
        self.error: BaseException | None = None
        self.completed = False
        self.violations: list[str] = []
        self.requested = 0
        self.signals_after_cancel = 0
        self.cancelled = False
        self._initial = initial
        self._hook = on_next_hook
        self._active = 0
        self._owner = 0
        self._guard = threading.Lock()
        self.done = threading.Event()
        self.subscribed = threading.Event()
        self.changed = threading.Condition()

    def _enter(self, name: str) -> None:
        # A signal nested in another on the same thread is a synchronous request's doing
        # (§3.2, §3.10); one on another thread while a signal runs breaks §1.3.
        me = threading.get_ident()
        with self._guard:
            if self._active and self._owner != me:
                self.violations.append(f"§1.3: {name} overlapped a signal on another thread")
            self._active += 1
            self._owner = me
        if self.done.is_set():
            self.violations.append(f"§1.7: {name} after a terminal signal")
        if self.cancelled and name != "on_subscribe":
            self.signals_after_cancel += 1

    def _exit(self) -> None:
        with self._guard:
            self._active -= 1
        with self.changed:
            self.changed.notify_all()

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        self._enter("on_subscribe")
        if self.subscription is not None:
            self.violations.append("§2.12: on_subscribe twice")
        self.subscription = subscription
        self.subscribed.set()
        try:
            if self._initial:
                self.request(self._initial)
        finally:
            self._exit()

    def on_next(self, item: Any) -> None:
        self._enter("on_next")
        try:
            if self.subscription is None:
                self.violations.append("§1.9: on_next before on_subscribe")
            self.items.append(item)
            if len(self.items) > self.requested:
                self.violations.append(f"§1.1: on_next #{len(self.items)} with {self.requested} requested")
            if self._hook is not None:
                self._hook(self, item)
        finally:
            self._exit()

    def on_error(self, exc: BaseException) -> None:
        self._enter("on_error")
        self.error = exc
        self.done.set()
        self._exit()

    def on_complete(self) -> None:
        self._enter("on_complete")
        self.completed = True
        self.done.set()
        self._exit()

    def request(self, n: int) -> None:
        assert self.subscription is not None
        with self._guard:
            self.requested = min(self.requested + n, rs.MAX_DEMAND) if n > 0 else self.requested
        self.subscription.request(n)

    def cancel(self) -> None:
        assert self.subscription is not None
        self.cancelled = True
        self.subscription.cancel()

    def await_items(self, count: int, timeout: float = WAIT) -> None:
        with self.changed:
            self.changed.wait_for(lambda: len(self.items) >= count or self.done.is_set(), timeout)

    def await_done(self, timeout: float = WAIT) -> None:
        assert self.done.wait(timeout), f"no terminal signal within {timeout}s; got {len(self.items)} items"

    def await_subscribed(self, timeout: float = WAIT) -> None:
        assert self.subscribed.wait(timeout), "no on_subscribe"

    def assert_rules_held(self) -> None:
        assert not self.violations, self.violations


def failing(count: int, error: BaseException | None, start: int = 0) -> Iterator[Any]:
    """``start, start+1, ...`` (``count`` of them), then ``error`` if given."""
    yield from range(start, start + count)
    if error is not None:
        raise error


class LoopThread:
    """An asyncio event loop running on a daemon thread, for `from_async_iterable`."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="test-loop", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(WAIT)
        self.loop.close()


_loop_thread: LoopThread | None = None


def shared_loop() -> asyncio.AbstractEventLoop:
    global _loop_thread
    if _loop_thread is None:
        _loop_thread = LoopThread()
    return _loop_thread.loop


async def _agen(count: int, error: BaseException | None) -> Any:
    for i in range(count):
        yield i
    if error is not None:
        raise error


class _AsyncGenSource:
    """Re-iterable async source: a fresh async generator per subscription."""

    def __init__(self, count: int, error: BaseException | None) -> None:
        self._count, self._error = count, error

    def __aiter__(self) -> Any:
        return _agen(self._count, self._error).__aiter__()


class _SubmittingPublisher(rs.Publisher[Any]):
    """Each subscriber gets a fresh SubmissionPublisher that a thread feeds with ``count``
    elements, once the subscriber has subscribed, then closes (exceptionally with ``error``)."""

    def __init__(self, count: int, error: BaseException | None) -> None:
        self._count, self._error = count, error

    def subscribe(self, subscriber: rs.Subscriber[Any]) -> None:
        publisher: rs.SubmissionPublisher[Any] = rs.SubmissionPublisher(max_buffer_capacity=8)
        publisher.subscribe(subscriber)

        def feed() -> None:
            while publisher.number_of_subscribers == 0 and not getattr(subscriber, "done", _never).is_set():
                if getattr(subscriber, "subscribed", _never).wait(0.01):
                    break
            for i in range(self._count):
                if publisher.number_of_subscribers == 0:
                    break
                publisher.submit(i)
            if self._error is not None:
                publisher.close_exceptionally(self._error)
            else:
                publisher.close()

        threading.Thread(target=feed, daemon=True).start()


_never = threading.Event()


def _processor(count: int, error: BaseException | None) -> rs.Publisher[Any]:
    processor: rs.MapProcessor[int, int] = rs.MapProcessor(lambda x: x)
    rs.from_iterable(failing(count, error)).subscribe(processor)
    return processor


@dataclass(frozen=True)
class Source:
    """One reference publisher or operator under test."""

    name: str
    make: Callable[[int, BaseException | None], rs.Publisher[Any]]
    ordered: bool = True
    synchronous: bool = True  # signals on the requesting thread
    replayable: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    def __call__(self, count: int, error: BaseException | None = None) -> rs.Publisher[Any]:
        return self.make(count, error)

    def expected(self, count: int) -> list[Any]:
        return [[i] for i in range(count)] if self.name == "batch" else list(range(count))


def _it(count: int, error: BaseException | None, start: int = 0) -> rs.Publisher[int]:
    return rs.from_iterable(failing(count, error, start))


def _concat(count: int, error: BaseException | None) -> rs.Publisher[int]:
    half = count // 2
    return rs.concat(_it(half, None), _it(count - half, error, half))


def _merge(count: int, error: BaseException | None) -> rs.Publisher[int]:
    half = count // 2
    return rs.merge(_it(half, None), rs.AsyncIterablePublisher(failing(count - half, error, half)))


SOURCES: list[Source] = [
    Source("from_iterable", lambda n, e: _it(n, e)),
    Source(
        "async_iterable",
        lambda n, e: rs.AsyncIterablePublisher(failing(n, e), batch_size=7),
        synchronous=False,
    ),
    Source(
        "from_async_iterable",
        lambda n, e: rs.from_async_iterable(_AsyncGenSource(n, e), shared_loop()),
        synchronous=False,
    ),
    Source("submission", lambda n, e: _SubmittingPublisher(n, e), synchronous=False),
    Source("processor", _processor),
    Source("map", lambda n, e: _it(n, e).map(lambda x: x)),
    Source(
        "filter",
        lambda n, e: rs.from_iterable(failing(2 * n, e)).filter(lambda x: x % 2 == 0).map(lambda x: x // 2),
    ),
    Source("take", lambda n, e: _it(n + 100, None).take(n) if e is None else _it(n, e).take(n + 100)),
    Source("skip", lambda n, e: rs.from_iterable(failing(n + 5, e, -5)).skip(5)),
    Source("batch", lambda n, e: _it(n, e).batch(1)),
    Source("concat", _concat),
    Source("merge", _merge, ordered=False, synchronous=False),
    Source("flat_map", lambda n, e: _it(n, e).flat_map(lambda x: rs.from_iterable([x]))),
]

SOURCE_IDS = [s.name for s in SOURCES]


class Spy(rs.Publisher[Any]):
    """Wraps a publisher and records what its subscriber asks of it: every ``request(n)``
    and whether it cancelled, plus how many elements went through."""

    def __init__(self, inner: rs.Publisher[Any]) -> None:
        self.inner = inner
        self.requests: list[int] = []
        self.cancels = 0
        self.delivered = 0

    @property
    def requested(self) -> int:
        return sum(n for n in self.requests if n > 0)

    def subscribe(self, subscriber: rs.Subscriber[Any]) -> None:
        spy = self

        class Relay(rs.Subscriber[Any], rs.Subscription):
            def on_subscribe(self, subscription: rs.Subscription) -> None:
                self.upstream = subscription
                subscriber.on_subscribe(self)

            def on_next(self, item: Any) -> None:
                spy.delivered += 1
                subscriber.on_next(item)

            def on_error(self, exc: BaseException) -> None:
                subscriber.on_error(exc)

            def on_complete(self) -> None:
                subscriber.on_complete()

            def request(self, n: int) -> None:
                spy.requests.append(n)
                self.upstream.request(n)

            def cancel(self) -> None:
                spy.cancels += 1
                self.upstream.cancel()

        self.inner.subscribe(Relay())


class GatedUpstream(rs.Publisher[Any]):
    """Calls ``on_subscribe`` on a thread of its own (``thread``); its subscription's first
    ``request`` waits there until ``release`` is set, and every call to the subscription is
    recorded in ``calls``, with a §2.7 entry in ``overlaps`` if it began while another ran."""

    def __init__(self) -> None:
        self.entered, self.release = threading.Event(), threading.Event()
        self.calls: list[str] = []
        self.overlaps: list[str] = []
        self.thread: threading.Thread | None = None
        self._inside = 0
        self._guard = threading.Lock()

    def subscribe(self, subscriber: rs.Subscriber[Any]) -> None:
        upstream = self

        class Gated(rs.Subscription):
            def request(self, n: int) -> None:
                upstream._call(f"request({n})", gate=True)

            def cancel(self) -> None:
                upstream._call("cancel")

        self.thread = threading.Thread(target=subscriber.on_subscribe, args=(Gated(),), daemon=True)
        self.thread.start()

    def _call(self, name: str, gate: bool = False) -> None:
        with self._guard:
            if self._inside:
                self.overlaps.append(f"§2.7: {name} began while {self.calls[-1]} ran")
            self._inside += 1
            self.calls.append(name)
        try:
            if gate and not self.entered.is_set():
                self.entered.set()
                assert self.release.wait(WAIT)
        finally:
            with self._guard:
                self._inside -= 1

    def finish(self) -> None:
        """Let the gated request return, and wait for the subscribing thread to end."""
        self.release.set()
        assert self.thread is not None
        self.thread.join(WAIT)
        assert not self.thread.is_alive()


def finalizer_idle() -> None:
    """Wait until the ``rs-finalizer`` thread has run every task deferred so far."""
    from reactive_streams import _finalizer

    done = threading.Event()
    _finalizer.defer(done.set)
    assert done.wait(WAIT), "the finalizer thread did not get through its tasks"
