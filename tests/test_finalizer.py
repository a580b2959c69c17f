"""Cancels that garbage collection asks for run on the finalizer thread, never on the thread
the collector interrupted (which may hold a lock the cancel needs)."""

from __future__ import annotations

import asyncio
import gc
import threading
from typing import Any

import reactive_streams as rs
from reactive_streams import _finalizer

from .support import WAIT, wait_for


class _LockedCancel(rs.Publisher[int]):
    """Endless; its subscriptions' ``cancel`` takes ``lock`` and records the thread it ran on."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.cancelled_on: list[str] = []

    def subscribe(self, subscriber: rs.Subscriber[int]) -> None:
        publisher = self

        class Endless(rs.Subscription):
            def request(self, n: int) -> None:
                subscriber.on_next(1)

            def cancel(self) -> None:
                if not publisher.lock.acquire(timeout=WAIT):  # a cancel on the holder would deadlock
                    publisher.cancelled_on.append("deadlocked")
                    return
                publisher.cancelled_on.append(threading.current_thread().name)
                publisher.lock.release()

        subscriber.on_subscribe(Endless())


def test_a_dropped_iterator_cancels_on_the_finalizer_thread() -> None:
    publisher = _LockedCancel()
    iterator = rs.iterate(publisher, prefetch=2)
    assert next(iterator) == 1
    with publisher.lock:  # the collecting thread holds what cancel needs
        del iterator
        gc.collect()
    wait_for(lambda: publisher.cancelled_on, "the cancel")
    assert publisher.cancelled_on == ["rs-finalizer"]


def test_a_dropped_async_iterator_cancels_on_the_finalizer_thread() -> None:
    publisher = _LockedCancel()

    async def first() -> Any:
        iterator = rs.aiterate(publisher, prefetch=2)
        return await iterator.__anext__()

    assert asyncio.run(first()) == 1
    with publisher.lock:
        gc.collect()
    wait_for(lambda: publisher.cancelled_on, "the cancel")
    assert publisher.cancelled_on == ["rs-finalizer"]


def test_an_iterator_dropped_in_a_reference_cycle_still_cancels() -> None:
    # Collected as cyclic garbage, the subscriber's weak references are cleared before the
    # guard's finalizer runs: its cancel must not depend on them (Python 3.12's asyncio leaves
    # an abandoned async generator in such a cycle).
    publisher = _LockedCancel()
    iterator = rs.iterate(publisher, prefetch=2)
    assert next(iterator) == 1
    cycle: list[Any] = [iterator]
    cycle.append(cycle)
    del iterator, cycle
    gc.collect()
    wait_for(lambda: publisher.cancelled_on, "the cancel")
    assert publisher.cancelled_on == ["rs-finalizer"]


def test_an_async_iterator_dropped_in_a_reference_cycle_still_cancels() -> None:
    publisher = _LockedCancel()

    async def first() -> Any:
        iterator = rs.aiterate(publisher, prefetch=2)
        cycle: list[Any] = [iterator, iterator.__aiter__()]
        cycle.append(cycle)
        return await iterator.__anext__()

    assert asyncio.run(first()) == 1
    gc.collect()
    wait_for(lambda: publisher.cancelled_on, "the cancel")
    assert publisher.cancelled_on == ["rs-finalizer"]


def test_a_failing_deferred_task_is_logged_and_the_worker_goes_on(caplog: Any) -> None:
    done = threading.Event()

    def fail() -> None:
        raise RuntimeError("boom")

    _finalizer.start()
    _finalizer.defer(fail)
    _finalizer.defer(done.set)
    assert done.wait(10)
    assert "garbage collection failed" in caplog.text
