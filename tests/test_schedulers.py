"""Schedulers: actions now and after a delay, in time order, cancelled ones never run, and no
thread or loop timer left behind."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any

import pytest

import reactive_streams as rs

from .support import WAIT, wait_for


def timer_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name == "rs-timer"]


def test_virtual_time_runs_an_hour_of_timers_in_order_at_their_times() -> None:
    clock = rs.VirtualTimeScheduler()
    log: list[tuple[str, float]] = []

    def later() -> None:
        log.append(("10 s", clock.now()))
        clock.schedule_after(5, lambda: log.append(("then 5 s", clock.now())))

    clock.schedule_after(3600, lambda: log.append(("an hour", clock.now())))
    clock.schedule_after(10, later)
    clock.schedule_after(10, lambda: log.append(("10 s, second", clock.now())))
    clock.schedule(lambda: log.append(("now", clock.now())))
    cancelled = clock.schedule_after(1, lambda: log.append(("cancelled", clock.now())))
    cancelled.cancel()
    assert log == [] and clock.pending == 4  # nothing runs until the clock moves
    clock.advance(0)
    assert log == [("now", 0.0)]
    clock.advance(20)
    assert log[1:] == [("10 s", 10.0), ("10 s, second", 10.0), ("then 5 s", 15.0)]
    assert clock.now() == 20.0 and clock.pending == 1
    clock.advance_to(3600)
    assert log[-1] == ("an hour", 3600.0) and clock.pending == 0


def test_virtual_time_refuses_an_advance_from_inside_an_action() -> None:
    clock = rs.VirtualTimeScheduler()
    failures: list[BaseException] = []

    def nested() -> None:
        try:
            clock.advance(1)
        except rs.ReactiveStreamsError as exc:
            failures.append(exc)

    clock.schedule(nested)
    clock.advance(0)
    assert len(failures) == 1 and "one advance at a time" in str(failures[0])


def test_a_thread_pool_scheduler_keeps_time_with_one_thread_that_ends_when_idle() -> None:
    scheduler = rs.ThreadPoolScheduler()
    fired: list[float] = []
    start = time.monotonic()
    done = threading.Event()
    for delay in (0.06, 0.02, 0.04):
        scheduler.schedule_after(delay, lambda d=delay: fired.append(d))
    scheduler.schedule_after(0.08, done.set)
    never = scheduler.schedule_after(0.03, lambda: fired.append(-1))
    never.cancel()
    assert len(timer_threads()) >= 1
    assert done.wait(WAIT)
    assert fired == [0.02, 0.04, 0.06]  # in time order; the cancelled one never ran
    assert time.monotonic() - start >= 0.08
    wait_for(lambda: not timer_threads(), "the timer thread to end once no timer is left")


def test_ten_thousand_timers_cost_one_timer_thread_and_cancelled_ones_are_compacted() -> None:
    scheduler = rs.ThreadPoolScheduler()
    before = threading.active_count()
    timers = [scheduler.schedule_after(3600, lambda: None) for _ in range(10_000)]
    assert threading.active_count() <= before + 1
    for timer in timers:
        timer.cancel()
    assert len(scheduler._timers.heap) < 2048  # most of them compacted away at once
    wait_for(lambda: not timer_threads(), "the timer thread to end once every timer is cancelled")


def test_schedule_runs_on_the_executor_and_an_action_that_raises_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    scheduler = rs.ThreadPoolScheduler()
    ran_on: list[str] = []
    done = threading.Event()

    def boom() -> None:
        raise KeyError("action failed")

    with caplog.at_level(logging.ERROR, logger="reactive_streams"):
        scheduler.schedule(boom)
        scheduler.schedule(lambda: (ran_on.append(threading.current_thread().name), done.set()))
        assert done.wait(WAIT)
        wait_for(lambda: any("scheduled action raised" in r.getMessage() for r in caplog.records), "the log")
    assert ran_on[0] != threading.current_thread().name


def test_the_asyncio_scheduler_runs_on_the_loop_from_any_thread_and_cancels_its_handles() -> None:
    async def main() -> tuple[list[str], int]:
        loop = asyncio.get_running_loop()
        scheduler = rs.AsyncioScheduler()
        got: list[str] = []
        on_loop = threading.get_ident()
        scheduler.schedule_after(0.02, lambda: got.append("later"))
        cancelled = scheduler.schedule_after(0.01, lambda: got.append("cancelled"))
        threading.Thread(target=cancelled.cancel).start()  # from another thread
        threading.Thread(
            target=lambda: scheduler.schedule(
                lambda: got.append(f"soon, on the loop: {threading.get_ident() == on_loop}")
            )
        ).start()
        await asyncio.sleep(0.05)
        long = scheduler.schedule_after(3600, lambda: None)
        await asyncio.sleep(0)
        armed = len(loop._scheduled)  # type: ignore[attr-defined]
        long.cancel()
        await asyncio.sleep(0.01)
        return got, armed - len([h for h in loop._scheduled if not h.cancelled()])  # type: ignore[attr-defined]

    got, disarmed = asyncio.run(main())
    assert got == ["soon, on the loop: True", "later"]
    assert disarmed == 1  # the hour-long timer no longer sits in the loop


def test_the_immediate_scheduler_runs_at_once_and_refuses_to_wait() -> None:
    scheduler = rs.ImmediateScheduler()
    got: list[int] = []
    scheduler.schedule(lambda: got.append(threading.get_ident()))
    assert got == [threading.get_ident()]
    with pytest.raises(rs.ReactiveStreamsError, match="cannot wait"):
        scheduler.schedule_after(1, lambda: None)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda s: s.schedule_after("1", lambda: None), TypeError, "needs a number of seconds, got str '1'"),
        (lambda s: s.schedule(5), TypeError, r"schedule\(action\) needs a callable, got int 5"),
        (lambda s: s.schedule_after(1, None), rs.NullElementError, "must not be None"),
    ],
)
def test_bad_arguments_fail_at_once_with_a_clear_message(call: Any, error: type, message: str) -> None:
    for scheduler in (rs.ThreadPoolScheduler(), rs.VirtualTimeScheduler()):
        with pytest.raises(error, match=message):
            call(scheduler)


def test_asyncio_scheduler_outside_a_loop_says_what_it_needs() -> None:
    with pytest.raises(rs.ReactiveStreamsError, match="needs a loop"):
        rs.AsyncioScheduler()


def test_the_default_scheduler_is_one_thread_pool_scheduler() -> None:
    assert rs.default_scheduler() is rs.default_scheduler()
    assert isinstance(rs.default_scheduler(), rs.ThreadPoolScheduler)
