"""aiterate and from_async_iterable."""

from __future__ import annotations

import asyncio
import gc
import threading
from typing import Any

import pytest

import reactive_streams as rs

from .support import WAIT, Boom, Probe, Spy, shared_loop, wait_for


def test_aiterate_yields_everything_from_another_thread() -> None:
    async def main() -> list[int]:
        return [x async for x in rs.aiterate(rs.AsyncIterablePublisher(range(1000)), prefetch=5)]

    assert asyncio.run(main()) == list(range(1000))


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
