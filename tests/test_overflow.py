"""on_backpressure_buffer, on_backpressure_drop and on_backpressure_latest: what a slow subscriber
of `interval` gets with each strategy (exact, on a virtual clock), the queue's capacity, what
``on_dropped`` sees, the overflow error, the end after what is held, cancel, §3.9, and bad
arguments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import pytest

import reactive_streams as rs

from .support import Boom, Probe, Spy

Strategy = Callable[[rs.Publisher[Any]], rs.Publisher[Any]]

STRATEGIES: list[tuple[str, Callable[[], Strategy]]] = [
    ("buffer error", lambda: rs.on_backpressure_buffer(2)),
    ("buffer drop_oldest", lambda: rs.on_backpressure_buffer(2, "drop_oldest")),
    ("buffer drop_latest", lambda: rs.on_backpressure_buffer(2, "drop_latest")),
    ("drop", lambda: rs.on_backpressure_drop()),
    ("latest", lambda: rs.on_backpressure_latest()),
]
STRATEGY_IDS = [name for name, _ in STRATEGIES]


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


def slow_subscriber(
    clock: rs.VirtualTimeScheduler, strategy: Strategy | None, spy: Spy | None = None
) -> Timeline:
    """A subscriber of ``interval(1)`` (ticks 0, 1, ... at t=1, 2, ...) through ``strategy`` that
    asks for 1 at once, 2 more at t=4.5, and is looked at at t=8.5."""
    ticks = spy if spy is not None else rs.interval(1, scheduler=clock)
    probe = Timeline(clock, 1)
    (strategy(ticks) if strategy is not None else ticks).subscribe(probe)
    clock.advance_to(4.5)
    probe.request(2)
    clock.advance_to(8.5)
    return probe


# interval and a slow subscriber


def test_interval_with_a_slow_subscriber_and_no_strategy_ends_with_missing_demand_naming_the_tick() -> None:
    clock = rs.VirtualTimeScheduler()
    probe = slow_subscriber(clock, None)
    assert probe.timeline == [(1.0, 0)]
    assert isinstance(probe.error, rs.MissingDemandError) and probe.ended_at == 2.0
    assert "tick 1 was due and the subscriber had asked for none" in str(probe.error)
    assert "on_backpressure_drop()" in str(probe.error)  # it says how to keep going
    assert clock.pending == 0  # the ticks stopped
    probe.assert_rules_held()


def test_interval_with_on_backpressure_drop_keeps_going_and_drops_the_ticks_not_asked_for() -> None:
    clock = rs.VirtualTimeScheduler()
    dropped: list[int] = []
    probe = slow_subscriber(clock, rs.on_backpressure_drop(dropped.append))
    assert probe.timeline == [(1.0, 0), (5.0, 4), (6.0, 5)]
    assert dropped == [1, 2, 3, 6, 7] and not probe.done.is_set()
    probe.request(1)
    clock.advance(1)
    assert probe.timeline[-1] == (9.0, 8)  # nothing held: the next tick
    probe.cancel()
    assert clock.pending == 0
    probe.assert_rules_held()


def test_interval_with_on_backpressure_latest_keeps_going_with_the_newest_tick() -> None:
    clock = rs.VirtualTimeScheduler()
    probe = slow_subscriber(clock, rs.on_backpressure_latest())
    # 1 and 2 replaced by 3, sent at the request; 4 as it comes; 5 and 6 replaced by 7
    assert probe.timeline == [(1.0, 0), (4.5, 3), (5.0, 4)] and not probe.done.is_set()
    probe.request(2)
    clock.advance(1)
    assert probe.timeline[3:] == [(8.5, 7), (9.0, 8)]
    probe.cancel()
    assert clock.pending == 0
    probe.assert_rules_held()


def test_interval_with_on_backpressure_buffer_drop_oldest_keeps_going_with_the_newest_queued() -> None:
    clock = rs.VirtualTimeScheduler()
    dropped: list[int] = []
    probe = slow_subscriber(clock, rs.on_backpressure_buffer(2, "drop_oldest", on_dropped=dropped.append))
    assert probe.timeline == [(1.0, 0), (4.5, 2), (4.5, 3)]  # 1 made room for 3
    assert dropped == [1, 4, 5] and not probe.done.is_set()  # at t=8.5 the queue is [6, 7]
    probe.request(3)
    clock.advance(1)
    assert probe.timeline[3:] == [(8.5, 6), (8.5, 7), (9.0, 8)]
    probe.cancel()
    assert clock.pending == 0
    probe.assert_rules_held()


def test_interval_with_on_backpressure_buffer_drop_latest_keeps_going_with_the_oldest_queued() -> None:
    clock = rs.VirtualTimeScheduler()
    dropped: list[int] = []
    probe = slow_subscriber(clock, rs.on_backpressure_buffer(2, "drop_latest", on_dropped=dropped.append))
    assert probe.timeline == [(1.0, 0), (4.5, 1), (4.5, 2)]  # 3 came to a full queue
    assert dropped == [3, 6, 7] and not probe.done.is_set()  # at t=8.5 the queue is [4, 5]
    probe.request(3)
    clock.advance(1)
    assert probe.timeline[3:] == [(8.5, 4), (8.5, 5), (9.0, 8)]
    probe.cancel()
    assert clock.pending == 0
    probe.assert_rules_held()


def test_interval_with_on_backpressure_buffer_error_ends_when_the_queue_overflows() -> None:
    clock = rs.VirtualTimeScheduler()
    spy = Spy(rs.interval(1, scheduler=clock))
    probe = slow_subscriber(clock, rs.on_backpressure_buffer(2), spy)
    # 1 and 2 queued; 3 came to the full queue at t=4: the queue is dropped, the error goes out
    assert probe.timeline == [(1.0, 0)] and probe.ended_at == 4.0
    assert isinstance(probe.error, rs.MissingDemandError)
    message = str(probe.error)
    assert message.startswith("on_backpressure_buffer(2, 'error'): the queue is full")
    assert "element 3 came; it is lost" in message and "overflow='drop_oldest'" in message
    assert spy.cancels == 1 and clock.pending == 0  # upstream cancelled: the ticks stopped
    probe.assert_rules_held()


# the queue


@pytest.mark.parametrize(
    ("overflow", "kept"),
    [("drop_oldest", [95, 96, 97, 98, 99]), ("drop_latest", [0, 1, 2, 3, 4])],
)
def test_on_backpressure_buffer_holds_at_most_capacity(
    overflow: Literal["drop_oldest", "drop_latest"], kept: list[int]
) -> None:
    dropped: list[int] = []
    probe = Probe(0)
    rs.range(0, 100).on_backpressure_buffer(5, overflow, on_dropped=dropped.append).subscribe(probe)
    assert not probe.done.is_set()  # all came, and completion: it waits behind the queue
    probe.request(rs.MAX_DEMAND)
    assert probe.items == kept and probe.completed
    assert sorted(dropped) == sorted(set(range(100)) - set(kept))  # each dropped one, once
    probe.assert_rules_held()


def test_on_backpressure_buffer_error_lets_a_full_queue_be_and_fails_on_the_element_after() -> None:
    probe = Probe(0)
    rs.range(0, 5).on_backpressure_buffer(5).subscribe(probe)
    probe.request(10)
    assert probe.items == [0, 1, 2, 3, 4] and probe.completed  # exactly capacity: no error
    probe = Probe(0)
    spy = Spy(rs.range(0, 6))
    spy.on_backpressure_buffer(5).subscribe(probe)
    assert isinstance(probe.error, rs.MissingDemandError) and "element 5 came" in str(probe.error)
    assert spy.cancels == 1 and spy.delivered == 6
    probe.request(10)
    assert probe.items == []  # the queue was dropped with the error


def test_on_backpressure_buffer_sends_the_queue_in_order_as_demand_comes_then_the_completion() -> None:
    probe = Probe(0)
    rs.range(0, 5).on_backpressure_buffer(10).subscribe(probe)
    assert probe.items == [] and not probe.done.is_set()
    probe.request(3)
    assert probe.items == [0, 1, 2] and not probe.done.is_set()
    probe.request(2)
    assert probe.items == [0, 1, 2, 3, 4] and probe.completed
    probe.assert_rules_held()


def test_on_backpressure_buffer_sends_an_error_after_what_was_asked_for_dropping_the_rest() -> None:
    """An error waits for the elements asked for, not for demand: the rest of the queue, which
    nobody asked for, is dropped, so the error reaches a subscriber that asks for nothing more."""
    probe = Probe(0)
    rs.range(0, 3).append(rs.error(Boom("late"))).on_backpressure_buffer(10).subscribe(probe)
    assert probe.items == [] and isinstance(probe.error, Boom)
    asked = Probe(2)
    rs.range(0, 3).append(rs.error(Boom("late"))).on_backpressure_buffer(10).subscribe(asked)
    assert asked.items == [0, 1] and isinstance(asked.error, Boom)
    probe.assert_rules_held()
    asked.assert_rules_held()


def test_on_backpressure_latest_sends_the_newest_then_the_completion() -> None:
    probe = Probe(0)
    rs.range(0, 5).on_backpressure_latest().subscribe(probe)
    assert probe.items == [] and not probe.done.is_set()
    probe.request(3)
    assert probe.items == [4] and probe.completed
    probe.assert_rules_held()


def test_on_backpressure_drop_sends_what_was_asked_for_and_completes_at_once() -> None:
    dropped: list[int] = []
    probe = Probe(2)
    rs.range(0, 5).on_backpressure_drop(dropped.append).subscribe(probe)
    assert probe.items == [0, 1] and dropped == [2, 3, 4] and probe.completed
    probe.assert_rules_held()


# on_dropped


@pytest.mark.parametrize(
    ("strategy", "failed_on", "ended_at"),
    [
        (lambda f: rs.on_backpressure_drop(f), 0, 1.0),
        (lambda f: rs.on_backpressure_buffer(1, "drop_latest", on_dropped=f), 1, 2.0),
        (lambda f: rs.on_backpressure_buffer(1, "drop_oldest", on_dropped=f), 0, 2.0),
    ],
    ids=["drop", "buffer drop_latest", "buffer drop_oldest"],
)
def test_an_on_dropped_that_raises_ends_the_stream_with_its_error_and_cancels_upstream(
    strategy: Callable[[Callable[[Any], object]], Strategy], failed_on: int, ended_at: float
) -> None:
    clock = rs.VirtualTimeScheduler()
    spy = Spy(rs.interval(1, scheduler=clock))
    failure = Boom("on_dropped failed")
    seen: list[int] = []

    def on_dropped(item: int) -> None:
        seen.append(item)
        raise failure

    probe = Timeline(clock, 0)
    strategy(on_dropped)(spy).subscribe(probe)
    clock.advance(10)
    assert seen == [failed_on] and probe.error is failure and probe.ended_at == ended_at
    assert probe.items == [] and spy.cancels == 1 and clock.pending == 0
    probe.assert_rules_held()


# cancel, §3.9


@pytest.mark.parametrize("make", [make for _, make in STRATEGIES], ids=STRATEGY_IDS)
def test_cancel_drops_what_is_held_reaches_upstream_and_leaves_no_timer(make: Callable[[], Strategy]) -> None:
    clock = rs.VirtualTimeScheduler()
    spy = Spy(rs.interval(1, scheduler=clock))
    probe = Timeline(clock, 1)
    make()(spy).subscribe(probe)
    assert spy.requests == [rs.MAX_DEMAND]  # §3.17: everything; the strategy chooses
    clock.advance(2.5)  # 0 sent, 1 held (or dropped)
    probe.cancel()
    assert spy.cancels == 1 and clock.pending == 0
    probe.request(5)  # §3.6: nothing after the cancel
    clock.advance(5)
    assert probe.items == [0] and not probe.done.is_set()
    probe.assert_rules_held()


@pytest.mark.parametrize("make", [make for _, make in STRATEGIES], ids=STRATEGY_IDS)
def test_a_3_9_request_is_signalled_and_cancels_upstream(make: Callable[[], Strategy]) -> None:
    spy = Spy(rs.never())
    probe = Probe(0)
    make()(spy).subscribe(probe)
    probe.request(0)
    assert isinstance(probe.error, rs.IllegalDemandError) and "§3.9" in str(probe.error)
    assert spy.cancels == 1


# bad arguments


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (
            lambda: rs.on_backpressure_buffer(0),
            ValueError,
            r"^on_backpressure_buffer\(capacity\) needs capacity >= 1, got 0",
        ),
        (
            lambda: rs.on_backpressure_buffer("3"),  # type: ignore[arg-type]
            TypeError,
            r"^on_backpressure_buffer\(capacity\) needs an int, got str",
        ),
        (
            lambda: rs.on_backpressure_buffer(True),
            TypeError,
            r"^on_backpressure_buffer\(capacity\) needs an int, got bool",
        ),
        (
            lambda: rs.on_backpressure_buffer(3, "explode"),  # type: ignore[arg-type]
            ValueError,
            r"^on_backpressure_buffer\(overflow=\) needs one of \('error', 'drop_oldest', 'drop_latest'\), "
            r"got 'explode'",
        ),
        (
            lambda: rs.on_backpressure_buffer(3, on_dropped=5),  # type: ignore[arg-type]
            TypeError,
            r"^on_backpressure_buffer\(on_dropped=\) needs a callable, got int 5",
        ),
        (
            lambda: rs.on_backpressure_drop(5),  # type: ignore[arg-type]
            TypeError,
            r"^on_backpressure_drop\(on_dropped\) needs a callable, got int 5",
        ),
    ],
)
def test_bad_arguments_fail_at_once_with_a_clear_message(
    build: Callable[[], object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        build()
