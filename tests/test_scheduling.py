"""subscribe_on and publish_on: where the work runs, the queue's bound, order, and the rules under
many threads."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import reactive_streams as rs

from .support import WAIT, BatchProbe, Boom, Probe, Spy, run_threads, wait_for


def thread_name() -> str:
    return threading.current_thread().name


def test_subscribe_on_runs_the_sources_work_on_the_scheduler() -> None:
    pulled_on: list[str] = []

    def numbers() -> Any:
        for i in range(5):
            pulled_on.append(thread_name())
            yield i

    assert list(rs.from_iterable(numbers()).subscribe_on(rs.ThreadPoolScheduler()).iterate()) == list(
        range(5)
    )
    assert pulled_on and thread_name() not in pulled_on  # the generator ran on the pool


def test_subscribe_on_a_virtual_clock_subscribes_when_the_clock_moves() -> None:
    clock = rs.VirtualTimeScheduler()
    probe = Probe(10)
    rs.just(1, 2, 3).subscribe_on(clock).subscribe(probe)
    assert probe.subscription is None  # scheduled, not yet run
    clock.advance(0)  # the subscribe, then the request it scheduled, both due now
    assert probe.items == [1, 2, 3] and probe.completed


def test_a_cancel_while_a_request_waits_for_the_scheduler_reaches_the_source() -> None:
    clock = rs.VirtualTimeScheduler()
    spy = Spy(rs.just(1, 2, 3))

    class AskThenCancel(Probe):
        def on_subscribe(self, subscription: rs.Subscription) -> None:
            super().on_subscribe(subscription)
            subscription.request(10)  # held until on_subscribe returns, then scheduled
            subscription.cancel()

    probe = AskThenCancel()
    rs.subscribe_on(clock)(spy).subscribe(probe)
    clock.advance(0)
    assert spy.cancels == 1 and spy.requests == [] and probe.items == []


def test_publish_on_signals_the_subscriber_on_the_scheduler_in_order() -> None:
    seen_on: set[str] = set()
    probe = Probe(rs.MAX_DEMAND, on_next_hook=lambda p, item: seen_on.add(thread_name()))
    rs.range(0, 10_000).publish_on(rs.ThreadPoolScheduler(), prefetch=32).subscribe(probe)
    probe.await_done()
    assert probe.items == list(range(10_000)) and probe.completed
    assert seen_on and thread_name() not in seen_on
    probe.assert_rules_held()


@pytest.mark.parametrize("bulk", [False, True], ids=["one by one", "lists"])
def test_publish_on_holds_at_most_prefetch_requested_and_queued(bulk: bool) -> None:
    clock = rs.VirtualTimeScheduler()  # the drain runs only when the clock moves: the queue fills
    spy = Spy(rs.from_iterable(range(1000)), bulk=bulk)
    probe = BatchProbe(0) if bulk else Probe(0)
    spy.publish_on(clock, prefetch=16).subscribe(probe)
    clock.advance(0)
    assert spy.requested == 16 and spy.delivered == 16 and probe.items == []  # all queued
    probe.request(5)
    clock.advance(0)
    assert probe.items == list(range(5)) and spy.requested == 16  # 5 out: under 3/4 of 16
    probe.request(100)
    clock.advance(0)
    assert spy.requested - len(probe.items) <= 16  # requested and not yet out: within prefetch
    while not probe.done.is_set():
        probe.request(100)
        clock.advance(0)
    assert probe.items == list(range(1000)) and probe.completed


def test_publish_on_signals_the_error_after_what_was_asked_for() -> None:
    """Elements asked for go out before the error; those nobody asked for are dropped, so the
    error never waits for demand (the TCK's processor test of §1.4 subscribes one that asks none)."""
    clock = rs.VirtualTimeScheduler()
    probe = Probe(0)
    rs.range(0, 3).append(rs.error(Boom("late"))).publish_on(clock).subscribe(probe)
    probe.request(2)
    clock.advance(0)
    assert probe.items == [0, 1] and isinstance(probe.error, Boom)
    idle = Probe(0)
    rs.range(0, 3).append(rs.error(Boom("late"))).publish_on(clock).subscribe(idle)
    clock.advance(0)
    assert idle.items == [] and isinstance(idle.error, Boom)


def test_publish_on_a_bad_request_during_the_last_on_next_fails_rather_than_completes() -> None:
    # The property suite's find: the end was decided in the pass that sent the last element, so
    # a request(0) made during that on_next was dropped for the completion (§3.9).
    entered, release = threading.Event(), threading.Event()
    probe = Probe(0, on_next_hook=lambda _probe, _item: (entered.set(), release.wait(WAIT)))
    rs.just(0).publish_on(rs.default_scheduler(), prefetch=8).subscribe(probe)
    probe.request(1)
    try:
        assert entered.wait(WAIT)
        probe.request(0)
    finally:
        release.set()
    probe.await_done()
    assert probe.items == [0] and isinstance(probe.error, rs.IllegalDemandError)  # §3.9
    probe.assert_rules_held()


def test_publish_on_cancel_stops_the_drain_and_reaches_upstream() -> None:
    clock = rs.VirtualTimeScheduler()
    spy = Spy(rs.range(0, 10**6))
    probe = Probe(0)
    spy.publish_on(clock).subscribe(probe)
    clock.advance(0)
    probe.request(3)
    probe.cancel()
    clock.advance(0)
    assert spy.cancels == 1 and probe.items == [] and not probe.done.is_set()


def test_publish_on_a_3_9_request_cancels_upstream_and_is_signalled() -> None:
    clock = rs.VirtualTimeScheduler()
    spy = Spy(rs.range(0, 100))
    probe = Probe(0)
    spy.publish_on(clock).subscribe(probe)
    probe.request(-1)
    clock.advance(0)
    assert isinstance(probe.error, rs.IllegalDemandError) and spy.cancels == 1


def test_publish_on_and_subscribe_on_under_eight_threads_a_thousand_runs() -> None:
    pool = rs.ThreadPoolScheduler()
    failures: list[str] = []

    def run() -> None:
        for _ in range(125):
            probe = Probe(0)
            rs.range(0, 200).subscribe_on(pool).publish_on(pool, prefetch=16).subscribe(probe)
            probe.await_subscribed()
            serial = threading.Lock()

            def requester(probe: Probe = probe, serial: threading.Lock = serial) -> None:
                for _ in range(30):
                    with serial:  # §2.7
                        probe.request(7)

            run_threads(requester, 2)
            probe.await_done(WAIT)
            if probe.items != list(range(200)) or not probe.completed or probe.violations:
                failures.append(f"{probe.items[:5]}... {probe.completed} {probe.violations}")

    run_threads(run, 8)
    assert failures == []


def test_no_thread_is_left_behind() -> None:
    before = {t.ident for t in threading.enumerate()}
    pool = rs.ThreadPoolScheduler()
    for _ in range(50):
        assert sum(rs.range(0, 100).subscribe_on(pool).publish_on(pool).iterate()) == 4950
    wait_for(
        lambda: (
            {t.name for t in threading.enumerate() if t.ident not in before}
            <= {
                t.name
                for t in threading.enumerate()
                if t.name.startswith("reactive-streams") or t.name == "rs-finalizer"  # one, for the process
            }
        ),
        "only the shared pool's threads and the finalizer to remain",
    )


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (
            lambda: rs.subscribe_on("pool"),
            TypeError,
            r"^subscribe_on\(scheduler\) needs a reactive_streams.Scheduler",
        ),
        (
            lambda: rs.publish_on(None),
            TypeError,
            r"^publish_on\(scheduler\) needs a reactive_streams.Scheduler",
        ),
        (
            lambda: rs.publish_on(rs.ImmediateScheduler(), 0),
            ValueError,
            r"^publish_on\(prefetch\) needs an int >= 1",
        ),
    ],
)
def test_bad_arguments_fail_at_once_with_a_clear_message(build: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        build()
