"""Test helpers: a recording subscriber that checks the rules as signals arrive, and one
factory per reference publisher and operator, so that each rule test runs over all of them."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import reactive_streams as rs

# Seconds: a guard against hangs, never a timing assertion. Generous, as a loaded 2-core machine
# (or a cold JVM's first Spark job) can be slow; only a failing test ever waits this long.
WAIT = 60.0


def wait_for(condition: Callable[[], bool], what: str) -> None:
    """Wait until ``condition()`` holds, for what happens on another thread."""
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)


def steady(read: Callable[[], int], what: str, quiet: float = 0.5, within: float = WAIT) -> int:
    """``read()`` once it has kept one value for ``quiet`` seconds: a snapshot of shared state
    (a shared bridge's live streams, a shared JVM's Arrow bytes) that earlier tests' streams,
    ending a moment after those tests, still change. Fails, naming ``what``, if it never holds
    still within ``within`` seconds."""
    deadline = time.monotonic() + within
    value, since = read(), time.monotonic()
    while time.monotonic() - since < quiet:
        assert time.monotonic() < deadline, f"{what} never held still for {quiet} s: last {value}"
        time.sleep(0.05)
        now = read()
        if now != value:
            value, since = now, time.monotonic()
    return value


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
        self._relay: weakref.ref[_Relay] | None = None
        self.diagnose: Callable[[], str] | None = None  # what a failed wait adds to its message

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
        """Wait until ``count`` elements have arrived; fail, saying what did arrive, if a
        terminal signal or the deadline comes first."""
        with self.changed:
            self.changed.wait_for(lambda: len(self.items) >= count or self.done.is_set(), timeout)
        assert len(self.items) >= count, (
            f"expected {count} items, got {len(self.items)} "
            + (f"then {self._terminal()}" if self.done.is_set() else f"and nothing more within {timeout}s")
            + f" ({self.requested} requested)"
            + self._diagnosis()
        )

    def _diagnosis(self) -> str:
        if self.diagnose is None:
            return ""
        try:
            return "\n" + self.diagnose()
        except Exception as exc:  # the failure itself matters more than its diagnosis
            return f"\n(no diagnosis: {exc!r})"

    def _terminal(self) -> str:
        if self.completed:
            return "on_complete"
        stack = getattr(self.error, "java_stack", "")  # where in the JVM it failed
        return f"on_error({self.error!r})" + (f"\n{stack}" if stack else "")

    def relay(self) -> rs.Subscriber[Any]:
        """A subscriber that passes every signal to this probe and that only the publisher holds:
        `await_released` sees the publisher let go of it (§3.13), after which no signal can come."""
        relay = _Relay(self)
        self._relay = weakref.ref(relay)
        return relay

    def await_released(self, what: str = "the publisher to let go of its subscriber") -> None:
        """Wait until the publisher holds the `relay` no more (§3.13), collecting cycles as it
        goes: from then on nothing can signal this probe, so a test may count what it got."""
        relay = self._relay
        assert relay is not None, "subscribe probe.relay() to use await_released"

        def released() -> bool:
            if relay() is not None:
                gc.collect()  # the publisher's side may sit in a reference cycle
            return relay() is None

        wait_for(released, what)

    def await_done(self, timeout: float = WAIT) -> None:
        assert self.done.wait(timeout), (
            f"no terminal signal within {timeout}s; got {len(self.items)} items" + self._diagnosis()
        )

    def await_subscribed(self, timeout: float = WAIT) -> None:
        assert self.subscribed.wait(timeout), "no on_subscribe"

    def assert_rules_held(self) -> None:
        assert not self.violations, self.violations


class BatchProbe(Probe):
    """A `Probe` that also takes lists in one signal, as bulk publishers and operators send them
    to a subscriber that has ``on_next_batch``: each element is checked as ``on_next`` checks it
    (§1.1, §1.3, §1.7), none after a cancel made meanwhile (the list came before it)."""

    def __init__(self, initial: int = 0, on_next_hook: Callable[[Probe, Any], None] | None = None):
        super().__init__(initial, on_next_hook)
        self.batches: list[int] = []  # the size of each list

    def on_next_batch(self, items: list[Any]) -> None:
        self.batches.append(len(items))
        if not items:
            self.violations.append("on_next_batch with an empty list")
        for item in items:
            if self.cancelled:
                break
            self.on_next(item)


class _Relay(rs.Subscriber[Any]):
    def __init__(self, probe: Probe) -> None:
        self._probe = probe

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        self._probe.on_subscribe(subscription)

    def on_next(self, item: Any) -> None:
        self._probe.on_next(item)

    def on_error(self, exc: BaseException) -> None:
        self._probe.on_error(exc)

    def on_complete(self) -> None:
        self._probe.on_complete()


def run_threads(target: Callable[[], object], count: int) -> None:
    """Call ``target`` from ``count`` threads started one after another, and wait for them all."""
    threads = [threading.Thread(target=target) for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)


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


class Upstream:
    """What a publisher under test reads from, watched so that a test can see a cancel arrive
    there (§1.8, §3.5): each upstream publisher behind a `Spy`, each source generator noting
    when it is closed or let go, each `SubmissionPublisher` its subscribers."""

    def __init__(self) -> None:
        self.spies: list[Spy] = []
        self.sources: list[WatchedSource] = []
        self.submissions: list[rs.SubmissionPublisher[Any]] = []

    def publisher(self, inner: rs.Publisher[Any]) -> rs.Publisher[Any]:
        spy = Spy(inner)
        self.spies.append(spy)
        return spy

    def iterable(self, count: int, error: BaseException | None, start: int = 0) -> WatchedSource:
        source = WatchedSource(count, error, start)
        self.sources.append(source)
        return source

    def live(self) -> list[str]:
        """What still runs upstream: subscribed and neither terminated nor cancelled."""
        live = [
            f"upstream publisher #{i} (asked for {spy.requested}, sent {spy.delivered}) was never cancelled"
            for i, spy in enumerate(self.spies)
            if spy.subscribed and not spy.terminated and not spy.cancels
        ]
        live += [
            f"source #{i} (pulled {source.pulled}) was neither closed nor let go"
            for i, source in enumerate(self.sources)
            if source.pulled and not source.closed
        ]
        live += [
            f"SubmissionPublisher #{i} still has {p.number_of_subscribers} subscriber(s)"
            for i, p in enumerate(self.submissions)
            if p.number_of_subscribers
        ]
        return live

    def await_cancelled(self) -> None:
        """Wait until the cancel has reached every source still running; fail naming the rest."""
        assert self.spies or self.sources or self.submissions, "nothing upstream is watched"
        deadline = time.monotonic() + WAIT
        while live := self.live():
            assert time.monotonic() < deadline, f"the cancel did not reach upstream: {'; '.join(live)}"
            gc.collect()  # a source let go of may sit in a reference cycle
            time.sleep(0.005)


class WatchedSource:
    """``start, start+1, ...`` (``count`` of them), then ``error`` if given; a fresh generator
    per ``iter()`` that counts what was pulled and notes when it is closed, or collected once
    its publisher lets go of it."""

    def __init__(self, count: int, error: BaseException | None, start: int = 0) -> None:
        self._count, self._error, self._start = count, error, start
        self.pulled = 0
        self.closed = False

    def __iter__(self) -> Iterator[Any]:
        try:
            for i in range(self._start, self._start + self._count):
                self.pulled += 1
                yield i
            if self._error is not None:
                raise self._error
        finally:
            self.closed = True

    async def __aiter__(self) -> Any:
        """The same generator, for ``async for``: closing this one closes it."""
        with contextlib.closing(iter(self)) as items:
            for i in items:
                yield i


class _SubmittingPublisher(rs.Publisher[Any]):
    """Each subscriber gets a fresh SubmissionPublisher that a thread feeds with ``count``
    elements, once the subscriber has subscribed, then closes (exceptionally with ``error``)."""

    def __init__(self, count: int, error: BaseException | None, upstream: Upstream | None = None) -> None:
        self._count, self._error = count, error
        self._upstream = upstream

    def subscribe(self, subscriber: rs.Subscriber[Any]) -> None:
        publisher: rs.SubmissionPublisher[Any] = rs.SubmissionPublisher(max_buffer_capacity=8)
        if self._upstream is not None:
            self._upstream.submissions.append(publisher)
        publisher.subscribe(subscriber)
        subscribed = getattr(subscriber, "subscribed", None) or getattr(
            getattr(subscriber, "_probe", None), "subscribed", _never
        )

        def feed() -> None:
            while publisher.number_of_subscribers == 0 and not getattr(subscriber, "done", _never).is_set():
                if subscribed.wait(0.01):
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


def _processor(count: int, error: BaseException | None, up: Upstream) -> rs.Publisher[Any]:
    processor: rs.MapProcessor[int, int] = rs.MapProcessor(lambda x: x)
    _it(count, error, up).subscribe(processor)
    return processor


@dataclass(frozen=True)
class Source:
    """One reference publisher or operator under test. ``make(count, error, upstream)`` builds
    it over real sources that ``upstream`` watches (`Upstream`)."""

    name: str
    make: Callable[[int, BaseException | None, Upstream], rs.Publisher[Any]]
    ordered: bool = True
    synchronous: bool = True  # signals on the requesting thread
    replayable: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    def __call__(
        self, count: int, error: BaseException | None = None, upstream: Upstream | None = None
    ) -> rs.Publisher[Any]:
        return self.make(count, error, upstream if upstream is not None else Upstream())

    def expected(self, count: int) -> list[Any]:
        return [[i] for i in range(count)] if self.name in ("batch", "buffer") else list(range(count))


def _it(count: int, error: BaseException | None, up: Upstream, start: int = 0) -> rs.Publisher[int]:
    """``from_iterable`` over a watched source, itself watched: what operators read from."""
    return up.publisher(rs.from_iterable(failing(count, error, start)))


def _concat(count: int, error: BaseException | None, up: Upstream) -> rs.Publisher[int]:
    half = count // 2
    return rs.concat(_it(half, None, up), _it(count - half, error, up, half))


def _merge(count: int, error: BaseException | None, up: Upstream) -> rs.Publisher[int]:
    half = count // 2
    return rs.merge(
        _it(half, None, up), up.publisher(rs.AsyncIterablePublisher(failing(count - half, error, half)))
    )


def _flat_map(count: int, error: BaseException | None, up: Upstream) -> rs.Publisher[int]:
    return _it(count, error, up).flat_map(lambda x: up.publisher(rs.from_iterable([x])))


def _generate(count: int, error: BaseException | None, up: Upstream) -> rs.Publisher[int]:
    """``generate`` whose step pulls from a watched source, one element per call."""
    source = up.iterable(count, error)

    def step(state: Any) -> Any:
        elements = iter(source) if state is None else state
        for item in elements:
            return item, elements
        return None

    return rs.generate(None, step)


def _retry(count: int, error: BaseException | None, up: Upstream) -> rs.Publisher[int]:
    """The first subscription fails halfway; the one `retry` makes goes on from there."""
    half, attempts = count // 2, []

    def make() -> rs.Publisher[int]:
        attempts.append(1)
        if len(attempts) == 1:
            return _it(half, Boom("the first attempt fails"), up)
        return _it(count - half, error, up, half)

    return rs.defer(make).retry(1)


def _retry_backoff(count: int, error: BaseException | None, up: Upstream) -> rs.Publisher[int]:
    """`_retry`, with the second subscription made after a backoff, on the default scheduler."""
    half, attempts = count // 2, []

    def make() -> rs.Publisher[int]:
        attempts.append(1)
        if len(attempts) == 1:
            return _it(half, Boom("the first attempt fails"), up)
        return _it(count - half, error, up, half)

    return rs.defer(make).retry(1, backoff=0.001)


def _catch(count: int, error: BaseException | None, up: Upstream) -> rs.Publisher[int]:
    half = count // 2
    return _it(half, Boom("caught"), up).catch(lambda _: _it(count - half, error, up, half))


SOURCES: list[Source] = [
    Source("from_iterable", lambda n, e, up: rs.from_iterable(up.iterable(n, e))),
    Source(
        "async_iterable",
        lambda n, e, up: rs.AsyncIterablePublisher(up.iterable(n, e), batch_size=7),
        synchronous=False,
    ),
    Source(
        "from_async_iterable",
        lambda n, e, up: rs.from_async_iterable(up.iterable(n, e), shared_loop()),
        synchronous=False,
    ),
    Source("submission", lambda n, e, up: _SubmittingPublisher(n, e, up), synchronous=False),
    Source("processor", _processor),
    Source("map", lambda n, e, up: _it(n, e, up).map(lambda x: x)),
    Source(
        "filter",
        lambda n, e, up: _it(2 * n, e, up).filter(lambda x: x % 2 == 0).map(lambda x: x // 2),
    ),
    Source(
        "take",
        lambda n, e, up: _it(n + 100, None, up).take(n) if e is None else _it(n, e, up).take(n + 100),
    ),
    Source("skip", lambda n, e, up: _it(n + 5, e, up, -5).skip(5)),
    Source("batch", lambda n, e, up: _it(n, e, up).batch(1)),
    Source("concat", _concat),
    Source("merge", _merge, ordered=False, synchronous=False),
    Source("flat_map", _flat_map),
    Source("generate", _generate),
    Source("defer", lambda n, e, up: rs.defer(lambda: rs.from_iterable(up.iterable(n, e)))),
    Source("scan", lambda n, e, up: _it(n, e, up).scan(lambda a, x: x)),
    Source("scan_initial", lambda n, e, up: _it(n, e, up).scan(lambda a, x: x, -1).skip(1)),
    Source(
        "take_while",
        lambda n, e, up: (
            _it(n + 100, None, up).take_while(lambda x: x < n)
            if e is None
            else _it(n, e, up).take_while(lambda x: True)
        ),
    ),
    Source("skip_while", lambda n, e, up: _it(n + 5, e, up, -5).skip_while(lambda x: x < 0)),
    Source("distinct", lambda n, e, up: _it(2 * n, e, up).map(lambda x: x // 2).distinct_until_changed()),
    Source("start_with", lambda n, e, up: _it(n, e, up).start_with(-2, -1).skip(2)),
    Source("end_with", lambda n, e, up: _it(n, e, up).end_with(-1).take_while(lambda x: x >= 0)),
    Source("prepend", lambda n, e, up: _it(n - n // 2, e, up, n // 2).prepend(_it(n // 2, None, up))),
    Source("append", lambda n, e, up: _it(n // 2, None, up).append(_it(n - n // 2, e, up, n // 2))),
    Source(
        "switch_if_empty",
        lambda n, e, up: up.publisher(rs.from_iterable([])).switch_if_empty(_it(n, e, up)),
    ),
    Source("concat_map", lambda n, e, up: _it(n, e, up).concat_map(lambda x: up.publisher(rs.just(x)))),
    Source("tap", lambda n, e, up: _it(n, e, up).tap(on_next=lambda x: None)),
    Source("zip", lambda n, e, up: rs.zip(_it(n, e, up), _it(n + 3, None, up)).map(lambda t: t[0])),
    Source("catch", _catch),
    Source("retry", _retry),
    Source(
        "subscribe_on",
        lambda n, e, up: _it(n, e, up).subscribe_on(rs.default_scheduler()),
        synchronous=False,
    ),
    Source(
        "publish_on",
        lambda n, e, up: _it(n, e, up).publish_on(rs.default_scheduler(), prefetch=8),
        synchronous=False,
    ),
    Source("delay", lambda n, e, up: _it(n, e, up).delay(0.0005), synchronous=False),
    Source(
        "delay_subscription", lambda n, e, up: _it(n, e, up).delay_subscription(0.0005), synchronous=False
    ),
    Source("timeout", lambda n, e, up: _it(n, e, up).timeout(WAIT)),
    Source("buffer", lambda n, e, up: _it(n, e, up).buffer(1, WAIT)),
    Source("retry_backoff", _retry_backoff, synchronous=False),
    Source("on_backpressure_buffer", lambda n, e, up: _it(n, e, up).on_backpressure_buffer(max(n, 1))),
    Source("share", lambda n, e, up: _it(n, e, up).share(prefetch=8)),
    Source("replay", lambda n, e, up: _it(n, e, up).replay(2, prefetch=8).ref_count()),
]

SOURCE_IDS = [s.name for s in SOURCES]


class Spy(rs.Publisher[Any]):
    """Wraps a publisher and records what its subscriber asks of it: every ``request(n)``
    and whether it cancelled, plus how many elements went through and whether it ended."""

    def __init__(self, inner: rs.Publisher[Any], bulk: bool = False) -> None:
        self.inner = inner
        self.bulk = bulk  # relays lists to a subscriber that takes them (else one by one)
        self.requests: list[int] = []
        self.cancels = 0
        self.delivered = 0
        self.batches = 0  # lists relayed in one on_next_batch
        self.subscribed = False
        self.terminated = False

    @property
    def requested(self) -> int:
        return sum(n for n in self.requests if n > 0)

    def subscribe(self, subscriber: rs.Subscriber[Any]) -> None:
        spy = self

        class Relay(rs.Subscriber[Any], rs.Subscription):
            def on_subscribe(self, subscription: rs.Subscription) -> None:
                self.upstream = subscription
                spy.subscribed = True
                subscriber.on_subscribe(self)

            def on_next(self, item: Any) -> None:
                spy.delivered += 1
                subscriber.on_next(item)

            def on_error(self, exc: BaseException) -> None:
                spy.terminated = True
                subscriber.on_error(exc)

            def on_complete(self) -> None:
                spy.terminated = True
                subscriber.on_complete()

            def request(self, n: int) -> None:
                spy.requests.append(n)
                self.upstream.request(n)

            def cancel(self) -> None:
                spy.cancels += 1
                self.upstream.cancel()

        if not (self.bulk and hasattr(subscriber, "on_next_batch")):
            self.inner.subscribe(Relay())
            return

        class BulkRelay(Relay):
            def on_next_batch(self, items: list[Any]) -> None:
                spy.delivered += len(items)
                spy.batches += 1
                subscriber.on_next_batch(items)  # type: ignore[attr-defined]

        self.inner.subscribe(BulkRelay())


class OnRequest(rs.Publisher[Any]):
    """A publisher that does only what ``emit`` does: its subscriptions call
    ``emit(subscriber, n)`` on every ``request(n)`` and ignore ``cancel`` (for publishers that
    break a rule, or that never emit)."""

    def __init__(self, emit: Callable[[rs.Subscriber[Any], int], None]) -> None:
        self._emit = emit

    def subscribe(self, subscriber: rs.Subscriber[Any]) -> None:
        emit = self._emit

        class Calls(rs.Subscription):
            def request(self, n: int) -> None:
                emit(subscriber, n)

            def cancel(self) -> None:
                pass

        subscriber.on_subscribe(Calls())


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


def quiesce(source: Source, probe: Probe) -> None:
    """For an asynchronous source, wait until a pause passes with no new signal: what it had
    started has landed (a settling wait for checks of what did NOT happen, never a pass/fail
    timing)."""
    if source.synchronous:
        return
    last = (-1, False)
    while last != (len(probe.items), probe.done.is_set()):
        last = (len(probe.items), probe.done.is_set())
        time.sleep(0.05)


class Pushed(rs.Publisher[Any]):
    """A publisher the test drives from its own thread with `push`, slower than any consumer:
    its subscriber waits for each list. Every ``request(n)`` is recorded in ``requests``."""

    def __init__(self) -> None:
        self.requests: list[int] = []
        self.subscriber: Any = None
        self.cancels = 0
        self._asked = threading.Condition()

    def subscribe(self, subscriber: rs.Subscriber[Any]) -> None:
        outer = self

        class _Subscription(rs.Subscription):
            def request(self, n: int) -> None:
                with outer._asked:
                    outer.requests.append(n)
                    outer._asked.notify_all()

            def cancel(self) -> None:
                outer.cancels += 1

        self.subscriber = subscriber
        subscriber.on_subscribe(_Subscription())

    def push(self, items: list[Any]) -> None:
        """Sends ``items`` as one list (one ``on_next_batch``), once subscribed."""
        wait_for(lambda: self.subscriber is not None, "the subscription")
        self.subscriber.on_next_batch(list(items))

    def wait_for_requests(self, count: int) -> list[int]:
        """The requests once there are ``count`` of them."""
        with self._asked:
            assert self._asked.wait_for(lambda: len(self.requests) >= count, WAIT), self.requests
            return list(self.requests)


def assert_a_loop_that_must_wait_asks_early(loop: Callable[[Pushed, list[Any]], None]) -> None:
    """Runs ``loop(source, got)`` (a loop over ``source`` at prefetch 16, iterate's or aiterate's,
    appending to ``got``) on a thread of its own while this thread pushes: 5 elements, which it
    takes and then waits (asked for at once: a quarter went out), then 3 (fewer than a quarter:
    it waits), then 1 more (4 since the request: asked for at once). Requested and not taken
    stays within prefetch (§1.1); the source ends the loop whatever failed."""
    source, got = Pushed(), []
    consumer = threading.Thread(target=loop, args=(source, got), daemon=True)
    consumer.start()
    try:
        assert source.wait_for_requests(1) == [16]
        source.push(list(range(5)))
        assert source.wait_for_requests(2) == [16, 5]  # 5 taken, and the loop waits: not at 12
        source.push(list(range(5, 8)))
        wait_for(lambda: len(got) == 8, "three more taken")
        source.push([8])  # 3 taken since the request, now 4: a quarter
        assert source.wait_for_requests(3) == [16, 5, 4]
        assert sum(source.requests) - len(got) <= 16  # requested and not taken (§1.1)
    finally:
        source.subscriber.on_complete()  # ends the loop, whatever failed
        consumer.join(10)
    assert not consumer.is_alive() and got == list(range(9)) and source.requests == [16, 5, 4]
