"""buffer, sample, throttle_first and debounce: exact emission times on a virtual clock, demand
(buffer never fails for lack of it, and holds at most ``size``), the end after what is held, no
timer left after the end or a cancel, §3.9, and bad arguments."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, ParamSpec, TypeVar

import pytest

import reactive_streams as rs

from .support import BatchProbe, Boom, Probe, Spy

P = ParamSpec("P")
R = TypeVar("R")


class InlineExecutor(Executor):
    """Runs each task at once, on the submitting thread."""

    def submit(self, fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> Future[R]:
        future: Future[R] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            future.set_exception(exc)
        return future


def hot() -> rs.SubmissionPublisher[Any]:
    """A SubmissionPublisher that signals on the submitting thread: what a test submits between
    two advances of the clock arrives at once, at the clock's time."""
    return rs.SubmissionPublisher(executor=InlineExecutor())


class Timeline(Probe):
    """A `Probe` that notes the clock's time of each element and of the end."""

    def __init__(self, clock: rs.VirtualTimeScheduler, initial: int = rs.MAX_DEMAND) -> None:
        super().__init__(initial)
        self.clock = clock
        self.times: list[float] = []
        self.ended_at: float | None = None

    def on_next(self, item: Any) -> None:
        self.times.append(self.clock.now())
        super().on_next(item)

    def on_error(self, exc: BaseException) -> None:
        self.ended_at = self.clock.now()
        super().on_error(exc)

    def on_complete(self) -> None:
        self.ended_at = self.clock.now()
        super().on_complete()

    @property
    def timeline(self) -> list[tuple[float, Any]]:
        return list(zip(self.times, self.items, strict=True))


# buffer


def test_buffer_sends_a_full_list_at_once_and_a_partial_one_timeout_after_its_first_element() -> None:
    clock = rs.VirtualTimeScheduler()
    probe = Timeline(clock)
    rs.interval(1, scheduler=clock).take(7).buffer(3, 1.5, scheduler=clock).subscribe(probe)
    clock.advance(20)
    # ticks 0..6 at t=1..7: [0, 1] times out at 1 + 1.5; [2, 3] at 3 + 1.5; [4, 5] at 5 + 1.5;
    # [6] goes out with the completion at t=7
    assert probe.timeline == [(2.5, [0, 1]), (4.5, [2, 3]), (6.5, [4, 5]), (7.0, [6])]
    assert probe.completed and probe.ended_at == 7.0
    assert clock.pending == 0  # completion leaves no timer
    probe.assert_rules_held()


def test_buffer_sends_a_list_the_moment_it_is_full_and_its_timer_is_stopped() -> None:
    clock = rs.VirtualTimeScheduler()
    probe = Timeline(clock)
    rs.interval(1, scheduler=clock).take(7).buffer(3, 2.5, scheduler=clock).subscribe(probe)
    clock.advance(20)
    # full at the third element (t=3, t=6); the timers set at t=1 and t=4 never fire
    assert probe.timeline == [(3.0, [0, 1, 2]), (6.0, [3, 4, 5]), (7.0, [6])]
    assert probe.completed and clock.pending == 0
    probe.assert_rules_held()


def test_buffer_with_no_demand_stops_asking_upstream_and_does_not_fail() -> None:
    clock = rs.VirtualTimeScheduler()
    spy = Spy(rs.range(0, 100))
    probe = Timeline(clock, 0)
    spy.buffer(3, 1, scheduler=clock).subscribe(probe)
    assert spy.requested == 0  # no demand: nothing asked (§1.1)
    probe.request(1)
    assert probe.items == [[0, 1, 2]]
    assert spy.requested == 3 and spy.delivered == 3  # demand met: no more asked
    clock.advance(3600)
    assert probe.items == [[0, 1, 2]] and not probe.done.is_set() and spy.requested == 3
    probe.request(2)
    assert probe.items == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert spy.requested == 9 and spy.delivered == 9  # never more than size asked ahead
    probe.assert_rules_held()


def test_buffer_with_no_demand_holds_at_most_size_and_what_comes_later_stays_upstream() -> None:
    clock = rs.VirtualTimeScheduler()
    source = hot()
    spy = Spy(source)
    probe = Timeline(clock, 1)
    spy.buffer(3, 1, scheduler=clock).subscribe(probe)
    assert spy.requests == [3]
    source.submit(0)
    clock.advance(1)  # [0] times out and goes out: the demand is met
    assert probe.timeline == [(1.0, [0])] and spy.requested == 3
    for item in range(1, 10):
        source.submit(item)
    clock.advance(3600)
    assert spy.delivered == 3 and spy.requested == 3  # [1, 2] held, 3..9 wait upstream
    assert probe.items == [[0]] and not probe.done.is_set()
    probe.request(3)
    # the request asks upstream first for what tops held and in flight up to size: 3 joins the
    # due [1, 2]; then three full lists, and no more asked
    assert probe.items == [[0], [1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert spy.requested == 10 and spy.delivered == 10
    probe.cancel()
    assert clock.pending == 0
    probe.assert_rules_held()


def test_buffer_a_list_whose_time_is_up_waits_for_a_request_and_fills_up_to_size_meanwhile() -> None:
    clock = rs.VirtualTimeScheduler()
    source = hot()
    spy = Spy(source)
    probe = Timeline(clock, 1)
    spy.buffer(3, 1, scheduler=clock).subscribe(probe)
    source.submit("a")
    clock.advance(1)
    assert probe.timeline == [(1.0, ["a"])]  # timed out with demand: out at once
    source.submit("b")  # t=1: its list times out at t=2, with no demand
    clock.advance(1.5)
    assert probe.items == [["a"]] and not probe.done.is_set()
    source.submit("c")  # the due list fills with what was in flight
    source.submit("d")  # not asked for: these stay upstream
    source.submit("e")
    assert spy.delivered == 3 and spy.requested == 3
    clock.advance(0.5)
    probe.request(1)  # tops up to size ("d" joins the due list), then it goes out
    assert probe.timeline == [(1.0, ["a"]), (3.0, ["b", "c", "d"])]
    assert spy.delivered == 4 and spy.requested == 4  # demand met: "e" still upstream
    clock.advance(1)
    probe.request(1)  # t=4: "e" asked for; its list times out at t=5
    assert spy.delivered == 5 and len(probe.items) == 2
    clock.advance(1)
    assert probe.timeline[-1] == (5.0, ["e"])
    probe.cancel()
    assert clock.pending == 0
    probe.assert_rules_held()


def test_buffer_signals_an_error_from_upstream_after_the_held_list() -> None:
    clock = rs.VirtualTimeScheduler()
    probe = Timeline(clock, 0)
    rs.range(0, 5).append(rs.error(Boom("late"))).buffer(3, 1, scheduler=clock).subscribe(probe)
    probe.request(1)
    assert probe.items == [[0, 1, 2]] and not probe.done.is_set()  # [3, 4] held, the error behind it
    clock.advance(10)
    assert probe.items == [[0, 1, 2]] and not probe.done.is_set()
    probe.request(1)
    assert probe.items == [[0, 1, 2], [3, 4]] and isinstance(probe.error, Boom)
    assert clock.pending == 0
    probe.assert_rules_held()


def test_buffer_cancel_drops_what_is_held_stops_the_timer_and_reaches_upstream() -> None:
    clock = rs.VirtualTimeScheduler()
    source = hot()
    spy = Spy(source)
    probe = Timeline(clock)
    spy.buffer(3, 1, scheduler=clock).subscribe(probe)
    source.submit(1)
    source.submit(2)
    assert clock.pending == 1  # the open list's timer
    probe.cancel()
    assert clock.pending == 0 and spy.cancels == 1 and source.number_of_subscribers == 0
    clock.advance(10)
    assert probe.items == [] and not probe.done.is_set()  # [1, 2] dropped (§3.12)
    probe.assert_rules_held()


def test_buffer_completion_sends_the_open_list_and_leaves_no_timer() -> None:
    clock = rs.VirtualTimeScheduler()
    source = hot()
    probe = Timeline(clock)
    source.buffer(3, 1, scheduler=clock).subscribe(probe)
    clock.advance(0.25)
    source.submit(1)
    assert clock.pending == 1
    clock.advance(0.25)
    source.close()
    assert probe.timeline == [(0.5, [1])] and probe.completed and probe.ended_at == 0.5
    assert clock.pending == 0
    probe.assert_rules_held()
    empty = Timeline(clock)
    rs.empty().buffer(3, 1, scheduler=clock).subscribe(empty)
    assert empty.items == [] and empty.completed and clock.pending == 0  # no empty list


def test_buffer_a_3_9_request_is_signalled_and_cancels_upstream() -> None:
    clock = rs.VirtualTimeScheduler()
    spy = Spy(rs.range(0, 100))
    probe = Timeline(clock, 0)
    spy.buffer(3, 1, scheduler=clock).subscribe(probe)
    probe.request(-1)
    assert isinstance(probe.error, rs.IllegalDemandError) and "§3.9" in str(probe.error)
    assert spy.cancels == 1 and probe.items == [] and clock.pending == 0


def test_buffer_takes_and_sends_lists_in_one_signal_to_subscribers_that_take_them() -> None:
    clock = rs.VirtualTimeScheduler()
    spy = Spy(rs.range(0, 10), bulk=True)
    probe = BatchProbe(2)
    spy.buffer(4, 1, scheduler=clock).subscribe(probe)
    assert probe.items == [[0, 1, 2, 3], [4, 5, 6, 7]] and spy.requests == [4, 4] and spy.batches == 2
    probe.request(1)
    assert probe.items[-1] == [8, 9] and probe.completed and clock.pending == 0
    probe.assert_rules_held()


def test_buffer_on_real_time_and_the_default_scheduler() -> None:
    assert list(rs.range(0, 10).buffer(3, 0.05).iterate()) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    # a source that never ends: the partial list goes out when its time is up
    assert list(rs.just(1, 2).concat_with(rs.never()).buffer(3, 0.05).take(1).iterate()) == [[1, 2]]


# sample


def test_sample_sends_the_newest_of_each_period_and_the_last_before_the_end() -> None:
    clock = rs.VirtualTimeScheduler()
    probe = Timeline(clock)
    rs.interval(1, scheduler=clock).take(8).sample(2.25, scheduler=clock).subscribe(probe)
    clock.advance(20)
    # ticks 0..7 at t=1..8; samples at 2.25, 4.5, 6.75; 7, not yet sampled, at the end (t=8)
    assert probe.timeline == [(2.25, 1), (4.5, 3), (6.75, 5), (8.0, 7)]
    assert probe.completed and probe.ended_at == 8.0 and clock.pending == 0
    probe.assert_rules_held()


def test_sample_sends_nothing_for_a_period_with_no_element() -> None:
    clock = rs.VirtualTimeScheduler()
    source = hot()
    probe = Timeline(clock)
    source.sample(2, scheduler=clock).subscribe(probe)
    for at, item in [(0.5, "a"), (1.0, "b"), (4.5, "c"), (5.0, "d"), (6.2, "e")]:
        clock.advance_to(at)
        source.submit(item)
    clock.advance_to(6.5)
    source.close()
    assert probe.timeline == [(2.0, "b"), (6.0, "d"), (6.5, "e")]  # none at t=4
    assert probe.completed and probe.ended_at == 6.5 and clock.pending == 0
    probe.assert_rules_held()


def test_sample_a_sample_waiting_for_demand_is_replaced_by_the_next() -> None:
    clock = rs.VirtualTimeScheduler()
    source = hot()
    probe = Timeline(clock, 0)
    source.sample(1, scheduler=clock).subscribe(probe)
    clock.advance_to(0.5)
    source.submit("a")
    clock.advance_to(1.5)  # "a" sampled at t=1, waiting for demand
    source.submit("b")
    clock.advance_to(2.5)  # "b" sampled at t=2 replaces it
    probe.request(1)
    assert probe.timeline == [(2.5, "b")]
    clock.advance(5)
    assert probe.items == ["b"]  # nothing came since: nothing more, and only one was held
    probe.cancel()
    assert clock.pending == 0
    probe.assert_rules_held()


def test_sample_cancel_stops_the_timer_and_reaches_upstream() -> None:
    clock = rs.VirtualTimeScheduler()
    source = hot()
    spy = Spy(source)
    probe = Timeline(clock)
    spy.sample(1, scheduler=clock).subscribe(probe)
    source.submit(1)
    assert clock.pending == 1
    probe.cancel()
    assert clock.pending == 0 and spy.cancels == 1 and source.number_of_subscribers == 0
    clock.advance(10)
    assert probe.items == [] and not probe.done.is_set()


def test_sample_asks_upstream_for_everything_and_a_3_9_request_is_signalled() -> None:
    clock = rs.VirtualTimeScheduler()
    spy = Spy(rs.never())
    probe = Timeline(clock, 0)
    spy.sample(1, scheduler=clock).subscribe(probe)
    assert spy.requests == [rs.MAX_DEMAND]  # §3.17: what is not sampled is dropped here
    probe.request(0)
    assert isinstance(probe.error, rs.IllegalDemandError) and spy.cancels == 1 and clock.pending == 0


def test_sample_and_debounce_on_real_time_send_the_last_element_before_the_end() -> None:
    # range ends at once: the last element goes out with the end, before any period passes
    assert list(rs.range(0, 5).sample(0.01).iterate()) == [4]
    assert list(rs.range(0, 5).debounce(0.01).iterate()) == [4]
    assert list(rs.just(1).concat_with(rs.never()).debounce(0.01).take(1).iterate()) == [1]


# throttle_first


def test_throttle_first_lets_the_first_of_each_window_pass_and_drops_the_rest() -> None:
    clock = rs.VirtualTimeScheduler()
    probe = Timeline(clock)
    rs.interval(1, scheduler=clock).take(10).throttle_first(2.5, scheduler=clock).subscribe(probe)
    clock.advance(20)
    # ticks 0..9 at t=1..10: windows [1, 3.5), [4, 6.5), [7, 9.5), [10, 12.5)
    assert probe.timeline == [(1.0, 0), (4.0, 3), (7.0, 6), (10.0, 9)]
    assert probe.completed and probe.ended_at == 10.0 and clock.pending == 0
    probe.assert_rules_held()


def test_throttle_first_a_window_ends_exactly_period_after_the_element_that_opened_it() -> None:
    clock = rs.VirtualTimeScheduler()
    probe = Timeline(clock)
    rs.interval(1, scheduler=clock).take(5).throttle_first(2, scheduler=clock).subscribe(probe)
    clock.advance(10)
    # windows [1, 3), [3, 5), [5, 7): the element at a window's end opens the next
    assert probe.timeline == [(1.0, 0), (3.0, 2), (5.0, 4)] and probe.completed


def test_throttle_first_replaces_each_dropped_element_with_a_request_for_one() -> None:
    clock = rs.VirtualTimeScheduler()
    spy = Spy(rs.interval(1, scheduler=clock))
    probe = Timeline(clock, 2)
    spy.throttle_first(2.5, scheduler=clock).subscribe(probe)
    clock.advance_to(4)
    # 0 passes at t=1; 1 and 2 dropped, each replaced by one request; 3 passes at t=4
    assert probe.timeline == [(1.0, 0), (4.0, 3)]
    assert spy.requests == [2, 1, 1] and spy.delivered == 4  # demand met exactly, no more asked
    probe.cancel()
    assert spy.cancels == 1 and clock.pending == 0
    probe.assert_rules_held()


def test_throttle_first_windows_are_per_subscription() -> None:
    clock = rs.VirtualTimeScheduler()
    source = hot()
    throttled = source.throttle_first(10, scheduler=clock)
    first, second = Timeline(clock), Timeline(clock)
    throttled.subscribe(first)
    source.submit("a")
    clock.advance(1)
    throttled.subscribe(second)
    source.submit("b")  # inside the first subscriber's window, the first of the second's
    assert first.items == ["a"] and second.items == ["b"]


def test_throttle_first_a_3_9_request_is_signalled() -> None:
    clock = rs.VirtualTimeScheduler()
    spy = Spy(rs.range(0, 10))
    probe = Timeline(clock, 0)
    spy.throttle_first(1, scheduler=clock).subscribe(probe)
    probe.request(0)  # passed upstream as filter passes it: the source signals it (§3.9)
    assert isinstance(probe.error, rs.IllegalDemandError) and probe.items == []


# debounce


def test_debounce_sends_an_element_once_period_passed_with_no_newer_one() -> None:
    clock = rs.VirtualTimeScheduler()
    source = hot()
    probe = Timeline(clock)
    source.debounce(1, scheduler=clock).subscribe(probe)
    for at, item in [(0.0, "a"), (0.5, "b"), (3.0, "c"), (5.0, "d"), (5.9, "e")]:
        clock.advance_to(at)
        source.submit(item)
    clock.advance_to(6.2)
    source.close()
    # "a" and "d" were followed within a period; "e" goes out at the end
    assert probe.timeline == [(1.5, "b"), (4.0, "c"), (6.2, "e")]
    assert probe.completed and probe.ended_at == 6.2 and clock.pending == 0
    probe.assert_rules_held()


def test_debounce_sends_the_last_element_at_completion() -> None:
    clock = rs.VirtualTimeScheduler()
    probe = Timeline(clock)
    rs.interval(1, scheduler=clock).take(3).debounce(0.5, scheduler=clock).subscribe(probe)
    clock.advance(10)
    assert probe.timeline == [(1.5, 0), (2.5, 1), (3.0, 2)]
    assert probe.completed and probe.ended_at == 3.0 and clock.pending == 0


def test_debounce_an_element_waiting_for_demand_is_replaced_by_a_later_one() -> None:
    clock = rs.VirtualTimeScheduler()
    source = hot()
    probe = Timeline(clock, 0)
    source.debounce(1, scheduler=clock).subscribe(probe)
    source.submit("a")  # quiet at t=1, then waits for demand
    clock.advance_to(1.5)
    source.submit("b")  # quiet at t=2.5: replaces "a"
    clock.advance_to(3)
    probe.request(5)
    assert probe.timeline == [(3.0, "b")]
    source.close()
    assert probe.completed and clock.pending == 0
    probe.assert_rules_held()


def test_debounce_cancel_stops_the_timer_and_reaches_upstream() -> None:
    clock = rs.VirtualTimeScheduler()
    source = hot()
    spy = Spy(source)
    probe = Timeline(clock)
    spy.debounce(1, scheduler=clock).subscribe(probe)
    source.submit(1)
    assert clock.pending == 1
    probe.cancel()
    assert clock.pending == 0 and spy.cancels == 1 and source.number_of_subscribers == 0
    clock.advance(10)
    assert probe.items == [] and not probe.done.is_set()


def test_debounce_asks_upstream_for_everything_and_a_3_9_request_is_signalled() -> None:
    clock = rs.VirtualTimeScheduler()
    spy = Spy(rs.never())
    probe = Timeline(clock, 0)
    spy.debounce(1, scheduler=clock).subscribe(probe)
    assert spy.requests == [rs.MAX_DEMAND]  # §3.17: what a newer one replaces is dropped here
    probe.request(-5)
    assert isinstance(probe.error, rs.IllegalDemandError) and spy.cancels == 1


# bad arguments


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda: rs.buffer(0, 1), ValueError, r"^buffer\(size\) needs size >= 1, got 0"),
        (lambda: rs.buffer("3", 1), TypeError, r"^buffer\(size\) needs an int"),  # type: ignore[arg-type]
        (lambda: rs.buffer(True, 1), TypeError, r"^buffer\(size\) needs an int"),
        (lambda: rs.buffer(3, 0), ValueError, r"^buffer\(timeout\) needs seconds > 0, got 0"),
        (lambda: rs.buffer(3, -1), ValueError, r"^buffer\(timeout\) needs seconds > 0, got -1"),
        (lambda: rs.buffer(3, float("nan")), TypeError, r"^buffer\(timeout\) needs a number of seconds"),
        (
            lambda: rs.buffer(3, 1, scheduler=rs.ImmediateScheduler()),
            ValueError,
            r"^buffer\(scheduler=\): the immediate scheduler cannot wait",
        ),
        (
            lambda: rs.buffer(3, 1, scheduler="pool"),  # type: ignore[arg-type]
            TypeError,
            r"^buffer\(scheduler=\) needs a reactive_streams.Scheduler",
        ),
        (lambda: rs.sample(0), ValueError, r"^sample\(period\) needs seconds > 0, got 0"),
        (lambda: rs.sample(float("inf")), ValueError, r"^sample\(period\) needs a finite number"),
        (
            lambda: rs.sample(1, scheduler=rs.ImmediateScheduler()),
            ValueError,
            r"^sample\(scheduler=\): the immediate scheduler cannot wait",
        ),
        (lambda: rs.debounce(-1), ValueError, r"^debounce\(period\) needs seconds > 0, got -1"),
        (
            lambda: rs.debounce(1, scheduler="pool"),  # type: ignore[arg-type]
            TypeError,
            r"^debounce\(scheduler=\) needs a reactive_streams.Scheduler",
        ),
        (
            lambda: rs.throttle_first("x"),  # type: ignore[arg-type]
            TypeError,
            r"^throttle_first\(period\) needs a number of seconds",
        ),
        (
            lambda: rs.throttle_first(1, scheduler="pool"),  # type: ignore[arg-type]
            TypeError,
            r"^throttle_first\(scheduler=\) needs a reactive_streams.Scheduler",
        ),
    ],
)
def test_bad_arguments_fail_at_once_with_a_clear_message(
    build: Callable[[], object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        build()


def test_throttle_first_takes_the_immediate_scheduler_as_it_only_reads_the_clock() -> None:
    assert list(rs.range(0, 5).throttle_first(3600, scheduler=rs.ImmediateScheduler()).iterate()) == [0]
