"""Every time operator under ``aiterate`` on an `AsyncioScheduler`: the right elements, and the
loop never blocked while the stream runs (its lag measured by a ticking task)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

import reactive_streams as rs

from .support import Boom

Build = Callable[[rs.Scheduler], rs.Publisher[Any]]


def _flaky(scheduler: rs.Scheduler) -> rs.Publisher[int]:
    attempts: list[int] = []

    def make() -> rs.Publisher[int]:
        attempts.append(1)
        return rs.error(Boom("x")) if len(attempts) < 3 else rs.range(0, 5)

    return rs.defer(make).retry(5, backoff=0.002, scheduler=scheduler)


def _shared(scheduler: rs.Scheduler) -> rs.Publisher[int]:
    return rs.interval(0.001, scheduler=scheduler).take(20).share()


CASES: dict[str, tuple[Build, Callable[[list[Any]], bool]]] = {
    "interval": (lambda s: rs.interval(0.001, scheduler=s).take(20), lambda got: got == list(range(20))),
    "timer": (lambda s: rs.timer(0.005, scheduler=s), lambda got: got == [0]),
    # Waits longer than the lag allowed: one that blocked the loop could not hide.
    "timer_long": (lambda s: rs.timer(0.3, scheduler=s), lambda got: got == [0]),
    "delay_long": (lambda s: rs.just(1, 2).delay(0.3, scheduler=s), lambda got: got == [1, 2]),
    "delay": (lambda s: rs.range(0, 50).delay(0.002, scheduler=s), lambda got: got == list(range(50))),
    "delay_subscription": (
        lambda s: rs.range(0, 5).delay_subscription(0.002, scheduler=s),
        lambda got: got == list(range(5)),
    ),
    "timeout": (
        lambda s: rs.interval(0.001, scheduler=s).take(10).timeout(5, scheduler=s),
        lambda got: got == list(range(10)),
    ),
    "timeout_fallback": (
        lambda s: rs.never().timeout(0.005, rs.just(1, 2), scheduler=s),
        lambda got: got == [1, 2],
    ),
    "buffer": (
        lambda s: rs.interval(0.001, scheduler=s).take(25).buffer(10, 0.004, scheduler=s),
        lambda got: [x for part in got for x in part] == list(range(25)) and all(len(p) <= 10 for p in got),
    ),
    "sample": (
        lambda s: rs.interval(0.001, scheduler=s).take(30).sample(0.005, scheduler=s),
        lambda got: got == sorted(set(got)) and got[-1] == 29,
    ),
    "throttle_first": (
        lambda s: rs.interval(0.001, scheduler=s).take(30).throttle_first(0.005, scheduler=s),
        lambda got: got[0] == 0 and got == sorted(set(got)) and len(got) < 30,
    ),
    "debounce": (
        lambda s: rs.interval(0.001, scheduler=s).take(30).debounce(0.005, scheduler=s),
        lambda got: got == [29],
    ),
    "retry_backoff": (_flaky, lambda got: got == list(range(5))),
    "publish_on": (
        lambda s: rs.range(0, 500).publish_on(s, prefetch=16),
        lambda got: got == list(range(500)),
    ),
    "subscribe_on": (lambda s: rs.range(0, 500).subscribe_on(s), lambda got: got == list(range(500))),
    "share": (_shared, lambda got: got == list(range(20))),
    "on_backpressure_latest": (
        lambda s: rs.interval(0.001, scheduler=s).take(20).on_backpressure_latest(),
        lambda got: got[-1] == 19 and got == sorted(set(got)),
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_time_operators_under_aiterate_never_block_the_loop(name: str) -> None:
    build, check = CASES[name]

    async def main() -> tuple[list[Any], float]:
        loop = asyncio.get_running_loop()
        scheduler = rs.AsyncioScheduler()
        lag = 0.0
        running = True

        async def ticking() -> None:  # how late a 1 ms sleep wakes: the loop's lag
            nonlocal lag
            while running:
                before = loop.time()
                await asyncio.sleep(0.001)
                lag = max(lag, loop.time() - before - 0.001)

        ticker = asyncio.create_task(ticking())
        got = [item async for item in rs.aiterate(build(scheduler), prefetch=8)]
        running = False
        await ticker
        return got, lag

    got, lag = asyncio.run(asyncio.wait_for(main(), 30))
    assert check(got), got
    assert lag < 0.2, f"the loop was blocked for {lag * 1000:.0f} ms"
