"""aiterate and from_async_iterable."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from typing import Any

import pytest

import reactive_streams as rs

from .support import (
    WAIT,
    Boom,
    GatedUpstream,
    Probe,
    Pushed,
    Spy,
    assert_a_loop_that_must_wait_asks_early,
    finalizer_idle,
    shared_loop,
    wait_for,
)


def test_aiterate_yields_everything_from_another_thread() -> None:
    async def main() -> list[int]:
        return [x async for x in rs.aiterate(rs.AsyncIterablePublisher(range(1000)), prefetch=5)]

    assert asyncio.run(main()) == list(range(1000))


@pytest.mark.parametrize("prefetch", [7, 2_048], ids=["pieces", "one-chunk"])
def test_aiterate_yields_everything_of_a_synchronous_publisher(prefetch: int) -> None:
    async def main() -> list[int]:
        return [x async for x in rs.aiterate(rs.from_iterable(range(1000)), prefetch=prefetch)]

    assert asyncio.run(main()) == list(range(1000))  # one-chunk: 1,000 taken whole, under 3/4 of 2,048


def test_aiterate_buffer_is_bounded_and_replenished_in_batches() -> None:
    spy = Spy(rs.from_iterable(range(100)))

    async def main() -> None:
        iterator = rs.aiterate(spy, prefetch=8)
        assert spy.requests == [8]
        for _ in range(6):
            await iterator.__anext__()
        assert spy.requests == [8, 6]
        await iterator.aclose()

    asyncio.run(main())
    assert spy.cancels == 1


@pytest.mark.parametrize("bulk", [False, True], ids=["elements", "lists"])
@pytest.mark.parametrize("prefetch", [1, 2, 3, 8, 16, 256])
def test_aiterate_never_has_more_than_prefetch_outstanding_and_buffered(prefetch: int, bulk: bool) -> None:
    spy = Spy(rs.from_iterable(range(5_000)), bulk=bulk)  # bulk: from_iterable's lists, as they come

    async def main() -> int:
        taken = 0
        async for _ in rs.aiterate(spy, prefetch=prefetch):
            taken += 1
            assert spy.delivered - taken <= prefetch  # buffered
            assert spy.requested - taken <= prefetch  # requested and not yet taken (§1.1 bound)
        return taken

    assert asyncio.run(main()) == 5_000
    assert spy.batches >= 5_000 // prefetch if bulk else spy.batches == 0


def test_a_loop_that_must_wait_asks_at_once_for_what_it_took_once_a_quarter_went_out() -> None:
    """As `iterate`'s: out of elements, the ``async for`` asks again for what it took since the
    last request when that is a quarter of prefetch or more; fewer wait for more (§1.1 kept)."""

    async def consume(source: Pushed, got: list[int]) -> None:
        async for item in rs.aiterate(source, prefetch=16):
            got.append(item)

    assert_a_loop_that_must_wait_asks_early(lambda source, got: asyncio.run(consume(source, got)))


def test_aiterate_raises_the_stream_error() -> None:
    def source():  # type: ignore[no-untyped-def]
        yield 1
        raise Boom()

    async def main() -> list[int]:
        return [x async for x in rs.aiterate(rs.AsyncIterablePublisher(source()))]

    with pytest.raises(Boom):
        asyncio.run(main())


def test_aiterate_break_and_async_with_cancel() -> None:
    spy = Spy(rs.from_iterable(range(10**6)))
    spy2 = Spy(rs.from_iterable(range(10**6)))

    async def main() -> None:
        async for item in rs.aiterate(spy):
            if item == 3:
                break
        async with rs.aiterate(spy2) as iterator:
            await iterator.__anext__()

    asyncio.run(main())
    gc.collect()
    wait_for(lambda: spy.cancels == 1 and spy2.cancels == 1, "the cancels")


def test_aiterate_does_not_block_the_loop() -> None:
    # The upstream yields only once a heartbeat task on the loop has ticked: if aiterate blocked
    # the loop while it waits, no tick could come, and the upstream gives up with an error.
    beats = 3
    gate = threading.Event()

    def slow() -> Any:
        if not gate.wait(WAIT):
            raise AssertionError("no heartbeat while aiterate waited for an element: it blocks the loop")
        yield 1

    async def main() -> tuple[list[int], list[int]]:
        ticks = 0
        seen_at: list[int] = []

        async def heartbeat() -> None:
            nonlocal ticks
            while ticks < beats:
                await asyncio.sleep(0)  # one pass of the loop
                ticks += 1
            gate.set()

        task = asyncio.create_task(heartbeat())
        items = []
        async for x in rs.aiterate(rs.AsyncIterablePublisher(slow())):
            seen_at.append(ticks)
            items.append(x)
        await task
        return items, seen_at

    items, seen_at = asyncio.run(main())
    assert items == [1]
    assert seen_at == [beats], "the element came before the loop ticked"


def _blocking(count: int) -> Any:
    """A generator that blocks 10 ms before each element (a slow read)."""
    for i in range(count):
        time.sleep(0.01)
        yield i


async def _sleeping(count: int) -> Any:
    for i in range(count):
        await asyncio.sleep(0.01)
        yield i


def _submitted(count: int) -> rs.Publisher[int]:
    """A SubmissionPublisher fed by a thread that blocks 10 ms before each element."""
    publisher: rs.SubmissionPublisher[int] = rs.SubmissionPublisher()

    def feed() -> None:
        while not publisher.number_of_subscribers:
            time.sleep(0.001)
        for i in _blocking(count):
            publisher.submit(i)
        publisher.close()

    threading.Thread(target=feed, daemon=True).start()
    return publisher


# Where each kind of source does its work under aiterate, as README.md and docs/guide.md say:
# from_iterable pulls its iterable inside request, on the loop's thread (a blocking one blocks
# the loop); the others work on an executor, on a thread of their own, or by awaiting.
HEARTBEAT_SOURCES = {
    "from_iterable": (lambda n: rs.from_iterable(_blocking(n)), False),
    "async_iterable_publisher": (lambda n: rs.AsyncIterablePublisher(_blocking(n)), True),
    "from_async_iterable": (lambda n: rs.from_async_iterable(_sleeping(n)), True),
    "submission_publisher": (_submitted, True),
}


@pytest.mark.parametrize("kind", list(HEARTBEAT_SOURCES))
def test_the_loops_heartbeat_while_each_kind_of_source_streams(kind: str) -> None:
    make, loop_free = HEARTBEAT_SOURCES[kind]

    async def main() -> tuple[list[int], int]:
        ticks = 0

        async def heartbeat() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.002)
                ticks += 1

        task = asyncio.create_task(heartbeat())
        await asyncio.sleep(0)  # the heartbeat runs from here on, unless the loop is blocked
        items = [x async for x in rs.aiterate(make(20))]  # 20 elements, 200 ms of work
        task.cancel()
        return items, ticks

    items, ticks = asyncio.run(main())
    assert items == list(range(20))
    if loop_free:
        assert ticks >= 20, f"{kind}: {ticks} heartbeats in 200 ms: the source's work blocked the loop"
    else:
        assert ticks <= 2, f"{kind}: {ticks} heartbeats; the docs say its iterable runs on the loop's thread"


def test_from_async_iterable_pulls_only_on_demand_and_closes_on_cancel() -> None:
    pulled: list[int] = []
    closed = threading.Event()

    async def agen() -> Any:
        try:
            for i in range(100):
                pulled.append(i)
                yield i
        finally:
            closed.set()

    probe = Probe(3)
    rs.from_async_iterable(agen(), shared_loop()).subscribe(probe)
    probe.await_items(3)
    assert probe.items == [0, 1, 2] and len(pulled) <= 4
    probe.cancel()
    assert closed.wait(10)


def test_from_async_iterable_inside_a_running_loop() -> None:
    async def agen() -> Any:
        for i in range(5):
            await asyncio.sleep(0)
            yield i

    async def main() -> list[int]:
        return [x async for x in rs.aiterate(rs.from_async_iterable(agen()))]

    assert asyncio.run(main()) == [0, 1, 2, 3, 4]


def test_what_is_not_a_publisher_or_an_async_iterable_is_refused_at_once() -> None:
    with pytest.raises(
        TypeError, match=r"^aiterate\(publisher\) needs a reactive_streams\.Publisher, got list"
    ):
        rs.aiterate([1, 2])  # type: ignore[arg-type]
    loop = asyncio.new_event_loop()
    with pytest.raises(TypeError) as refused:
        rs.from_async_iterable([1, 2], loop=loop)  # type: ignore[arg-type]
    loop.close()
    assert str(refused.value) == (
        "from_async_iterable() needs an async iterable (an async generator, or an object with __aiter__), "
        "got list [1, 2]; for a plain iterable, use rs.from_iterable(...)"
    )
    with pytest.raises(TypeError, match=r"got int 5$"):
        rs.from_async_iterable(5)  # type: ignore[arg-type]


def test_from_async_iterable_outside_a_loop_needs_one() -> None:
    async def agen() -> Any:
        yield 1

    with pytest.raises(rs.ReactiveStreamsError, match="loop="):
        rs.from_async_iterable(agen())


def test_from_async_iterable_on_a_closed_loop_signals_an_error() -> None:
    loop = asyncio.new_event_loop()
    loop.close()

    async def agen() -> Any:
        yield 1

    probe = Probe(1)
    rs.from_async_iterable(agen(), loop).subscribe(probe)
    probe.await_done()
    assert isinstance(probe.error, rs.ReactiveStreamsError)


@pytest.mark.parametrize("how", ["aclose", "drop"])
def test_rule_2_7_a_cancel_during_a_request_waits_for_it_to_return(how: str) -> None:
    upstream = GatedUpstream()
    iterator = rs.aiterate(upstream, prefetch=4)
    assert upstream.entered.wait(WAIT)  # request(4) in progress, on the publisher's thread
    if how == "aclose":
        asyncio.run(iterator.aclose())  # returns at once: the cancel is recorded, not made now
    else:
        del iterator
        gc.collect()
        finalizer_idle()
    assert upstream.calls == ["request(4)"]
    upstream.finish()
    assert upstream.calls == ["request(4)", "cancel"] and not upstream.overlaps


async def _count(count: int) -> Any:
    for i in range(count):
        yield i


class _Counting:
    """A fresh async generator of ``0 .. count-1`` per subscription."""

    def __init__(self, count: int) -> None:
        self.count = count

    def __aiter__(self) -> Any:
        return _count(self.count).__aiter__()


def test_rule_1_3_an_illegal_request_inside_on_next_is_signalled_after_it() -> None:
    during: list[bool] = []

    def illegal(probe: Probe, item: Any) -> None:
        probe.subscription.request(0)  # type: ignore[union-attr]
        during.append(probe.done.is_set())

    probe = Probe(on_next_hook=illegal)
    rs.from_async_iterable(_Counting(100), shared_loop()).subscribe(probe)
    probe.request(5)
    probe.await_done()
    assert during == [False], "on_error arrived while on_next was still running"
    assert isinstance(probe.error, rs.IllegalDemandError) and probe.items == [0]
    probe.assert_rules_held()


def test_rule_1_3_an_illegal_request_from_another_thread_waits_for_on_next() -> None:
    entered, release = threading.Event(), threading.Event()

    def slow(probe: Probe, item: Any) -> None:
        entered.set()
        assert release.wait(WAIT)

    probe = Probe(5, on_next_hook=slow)
    rs.from_async_iterable(_Counting(100), shared_loop()).subscribe(probe)
    assert entered.wait(WAIT)
    probe.subscription.request(-1)  # type: ignore[union-attr]  # this thread, mid-on_next
    assert not probe.done.is_set(), "on_error overlapped on_next"
    release.set()
    probe.await_done()
    assert isinstance(probe.error, rs.IllegalDemandError) and probe.items == [0]
    probe.assert_rules_held()


class _ThreadProbe(Probe):
    """A Probe that records the thread of every on_next, on_error and on_complete."""

    def __init__(self, initial: int = 0) -> None:
        super().__init__(initial)
        self.threads: set[int] = set()

    def on_next(self, item: Any) -> None:
        self.threads.add(threading.get_ident())
        super().on_next(item)

    def on_error(self, exc: BaseException) -> None:
        self.threads.add(threading.get_ident())
        super().on_error(exc)

    def on_complete(self) -> None:
        self.threads.add(threading.get_ident())
        super().on_complete()


@pytest.mark.parametrize("last", ["error", "complete"])
def test_from_async_iterable_signals_only_on_its_loop(last: str) -> None:
    probe = _ThreadProbe(2)
    rs.from_async_iterable(_Counting(3), shared_loop()).subscribe(probe)
    probe.await_items(2)
    assert probe.items == [0, 1]
    if last == "complete":
        probe.request(2)
    else:
        probe.subscription.request(0)  # type: ignore[union-attr]  # from this thread
    probe.await_done()
    assert len(probe.threads) == 1 and threading.get_ident() not in probe.threads
    probe.assert_rules_held()


class _GatedAsync:
    """Yields ``0 .. count-1``; before ``gate_at`` it awaits until `open` is called."""

    def __init__(self, count: int, gate_at: int) -> None:
        self.count, self.gate_at = count, gate_at
        self.waiting, self.closed = threading.Event(), threading.Event()
        self.pulled = 0
        self._gate: asyncio.Event | None = None

    def open(self) -> None:
        assert self._gate is not None
        shared_loop().call_soon_threadsafe(self._gate.set)

    def __aiter__(self) -> Any:
        return self._gen().__aiter__()

    async def _gen(self) -> Any:
        try:
            for i in range(self.count):
                if i == self.gate_at:
                    self._gate = asyncio.Event()
                    self.waiting.set()
                    await self._gate.wait()
                self.pulled += 1
                yield i
        finally:
            self.closed.set()


def _awaiting(source: _GatedAsync, initial: int) -> Probe:
    probe = Probe(initial)
    rs.from_async_iterable(source, shared_loop()).subscribe(probe)
    assert source.waiting.wait(WAIT)
    wait_for(lambda: len(probe.items) >= source.gate_at, "the elements before the gate")
    return probe


def test_rule_3_9_an_illegal_request_while_the_async_generator_awaits_is_signalled() -> None:
    source = _GatedAsync(100, gate_at=3)
    probe = _awaiting(source, 10)
    probe.subscription.request(0)  # type: ignore[union-attr]
    probe.await_done()
    assert isinstance(probe.error, rs.IllegalDemandError) and probe.items == [0, 1, 2]
    assert source.closed.wait(WAIT) and source.pulled == 3  # the pending pull is interrupted
    probe.assert_rules_held()


def test_rule_3_7_cancel_while_the_async_generator_awaits_closes_it() -> None:
    source = _GatedAsync(100, gate_at=3)
    probe = _awaiting(source, 10)
    probe.cancel()
    assert source.closed.wait(WAIT) and source.pulled == 3  # §1.8: nothing pulled after
    assert not probe.done.is_set() and probe.items == [0, 1, 2]
    probe.assert_rules_held()


def test_rule_3_3_requests_while_the_async_generator_awaits_are_emitted() -> None:
    source = _GatedAsync(6, gate_at=2)
    probe = _awaiting(source, 3)
    probe.request(10)  # from this thread, while __anext__ is pending on the loop
    source.open()
    probe.await_done()
    assert probe.items == list(range(6)) and probe.completed
    probe.assert_rules_held()


def test_rule_1_4_a_pull_cancelled_by_its_loop_ends_the_stream_with_on_error() -> None:
    probe = Probe(5)

    async def main() -> None:
        waiting = asyncio.Event()

        async def forever() -> Any:
            yield 1
            waiting.set()
            await asyncio.Event().wait()
            yield 2

        rs.from_async_iterable(forever()).subscribe(probe)
        await waiting.wait()

    asyncio.run(main())  # cancels the pull task, pending in __anext__, as it ends
    probe.await_done()
    assert isinstance(probe.error, rs.ReactiveStreamsError) and "cancelled" in str(probe.error)
    assert probe.items == [1]
    probe.assert_rules_held()


def test_aiterate_raises_the_stream_error_after_every_element_before_it() -> None:
    def source():  # type: ignore[no-untyped-def]
        yield from range(300)
        raise Boom("failed")

    seen: list[int] = []

    async def main() -> None:
        async for item in rs.aiterate(rs.from_iterable(source()), prefetch=1_000):
            seen.append(item)

    with pytest.raises(Boom):
        asyncio.run(main())
    assert seen == list(range(300))


def test_aclose_inside_the_loop_stops_the_chunk_being_yielded() -> None:
    spy = Spy(rs.from_iterable(range(10_000)), bulk=True)
    seen: list[int] = []

    async def main() -> None:
        async with rs.aiterate(spy, prefetch=256) as iterator:
            async for item in iterator:
                seen.append(item)
                if item == 4:
                    await iterator.aclose()  # 251 more of this chunk are buffered: none goes out

    asyncio.run(main())
    assert seen == [0, 1, 2, 3, 4] and spy.cancels == 1


def test_anext_and_async_for_take_from_the_same_place() -> None:
    async def main() -> list[int]:
        iterator = rs.aiterate(rs.from_iterable(range(10)), prefetch=4)
        first = await iterator.__anext__()
        return [first] + [x async for x in iterator]

    assert asyncio.run(main()) == list(range(10))
