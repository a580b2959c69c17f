"""The demand-and-drain kit (``_demand``), and the rules it keeps where user code runs on
another thread while a drain is inside an iterator or a subscriber."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

import reactive_streams as rs
from reactive_streams._demand import MAX_DEMAND, Demand, Drain, check_request

from .support import WAIT, Probe


class BadIndex:
    def __index__(self) -> int:
        raise RuntimeError("no index today")


@pytest.mark.parametrize("bad", [0, -5, True, False, "3", 2.0, None, BadIndex()])
def test_check_request_returns_the_3_9_error_and_never_raises(bad: object) -> None:
    error = check_request(bad)
    assert isinstance(error, rs.IllegalDemandError) and "§3.9" in str(error)


def test_a_bool_is_named_as_not_demand() -> None:
    assert "a bool is not accepted as demand" in str(check_request(True))


def test_demand_adds_up_to_the_3_17_cap_and_stays_there() -> None:
    demand = Demand()
    assert demand.add(5) is None and demand.outstanding == 5
    assert demand.add(MAX_DEMAND) is None and demand.outstanding == MAX_DEMAND
    assert demand.add(MAX_DEMAND) is None and demand.outstanding == MAX_DEMAND
    assert demand.produced(1_000) == MAX_DEMAND and demand.unbounded
    bounded = Demand()
    bounded.add(3)
    assert bounded.produced(2) == 1
    assert isinstance(bounded.add(0), rs.IllegalDemandError) and bounded.outstanding == 1


def test_drain_runs_one_pass_at_a_time_and_never_loses_a_signal() -> None:
    passes = 0
    inside = threading.Event()
    release = threading.Event()
    overlapped: list[bool] = []
    running = threading.Lock()

    def work() -> None:
        nonlocal passes
        if not running.acquire(blocking=False):
            overlapped.append(True)
            return
        try:
            passes += 1
            if passes == 1:
                inside.set()
                assert release.wait(WAIT)
        finally:
            running.release()

    drain = Drain(work)
    first = threading.Thread(target=drain.signal)
    first.start()
    assert inside.wait(WAIT)
    for _ in range(5):
        drain.signal()  # missed while the first pass runs: one more pass, not five
    release.set()
    first.join(WAIT)
    assert passes == 2 and not overlapped and not drain.running


def test_a_raising_pass_leaves_the_drain_usable(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[int] = []

    def work() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("pass failed")

    drain = Drain(work)
    drain.signal()
    drain.signal()
    assert len(calls) == 2 and "drain pass raised" in caplog.text


class GatedIterator(Iterator[int]):
    """Yields 0, 1, 2, ...; ``__next__`` for element ``gate_at`` waits until released."""

    def __init__(self, count: int, gate_at: int) -> None:
        self.next_value, self.count, self.gate_at = 0, count, gate_at
        self.waiting, self.release = threading.Event(), threading.Event()
        self.pulled_after_stop = 0

    def __next__(self) -> int:
        value = self.next_value
        if value == self.gate_at:
            self.waiting.set()
            assert self.release.wait(WAIT)
        if value >= self.count:
            raise StopIteration
        self.next_value += 1
        return value


#: The publishers over a synchronous iterable: one emits on the requesting thread, the other
#: on an executor.
ITERABLE_PUBLISHERS = pytest.mark.parametrize(
    "publish", [rs.from_iterable, rs.AsyncIterablePublisher], ids=["from_iterable", "async_iterable"]
)


def in_iterator(iterator: GatedIterator, probe: Probe, publish: Any = rs.from_iterable) -> threading.Thread:
    """Start the emit loop on its own thread and wait until it is inside ``__next__``."""
    publish(iterator).subscribe(probe)
    probe.await_subscribed()
    thread = threading.Thread(target=probe.request, args=(10,))
    thread.start()
    assert iterator.waiting.wait(WAIT)
    return thread


@ITERABLE_PUBLISHERS
def test_rule_3_9_illegal_request_while_the_iterator_runs_is_signalled(publish: Any) -> None:
    iterator, probe = GatedIterator(100, gate_at=3), Probe()
    emitter = in_iterator(iterator, probe, publish)
    probe.subscription.request(0)  # type: ignore[union-attr]  # another thread, mid-__next__
    iterator.release.set()
    emitter.join(WAIT)
    probe.await_done()
    assert isinstance(probe.error, rs.IllegalDemandError) and not probe.completed
    assert probe.items in ([0, 1, 2], [0, 1, 2, 3])  # at most the element being pulled
    probe.assert_rules_held()


@ITERABLE_PUBLISHERS
def test_rule_3_9_while_the_iterator_finds_its_end_is_signalled_not_lost(publish: Any) -> None:
    iterator, probe = GatedIterator(3, gate_at=3), Probe()  # __next__ waits, then ends
    emitter = in_iterator(iterator, probe, publish)
    probe.subscription.request(-1)  # type: ignore[union-attr]
    iterator.release.set()
    emitter.join(WAIT)
    probe.await_done()
    assert isinstance(probe.error, rs.IllegalDemandError) and not probe.completed
    probe.assert_rules_held()


@ITERABLE_PUBLISHERS
def test_rule_3_7_cancel_while_the_iterator_runs_stops_pulling(publish: Any) -> None:
    iterator, probe = GatedIterator(100, gate_at=3), Probe()
    emitter = in_iterator(iterator, probe, publish)
    probe.cancel()
    iterator.release.set()
    emitter.join(WAIT)
    assert iterator.next_value <= 4 and not probe.done.is_set()  # §1.8: nothing pulled after
    assert probe.signals_after_cancel <= 1  # the element already pulled may still arrive
    probe.assert_rules_held()


@ITERABLE_PUBLISHERS
def test_rule_3_3_requests_from_another_thread_during_a_slow_on_next_are_emitted(publish: Any) -> None:
    entered, release = threading.Event(), threading.Event()

    def slow(probe: Probe, item: Any) -> None:
        if item == 0:
            entered.set()
            assert release.wait(WAIT)

    probe = Probe(on_next_hook=slow)
    publish(range(6)).subscribe(probe)
    probe.await_subscribed()
    emitter = threading.Thread(target=probe.request, args=(1,))
    emitter.start()
    assert entered.wait(WAIT)
    probe.request(5)  # recorded; the loop inside on_next emits it
    release.set()
    emitter.join(WAIT)
    probe.await_done()
    assert probe.items == list(range(6)) and probe.completed
    probe.assert_rules_held()


class Unsized:
    def __init__(self, length: Exception) -> None:
        self.length = length

    def __iter__(self) -> Iterator[int]:
        return iter([1, 2, 3])

    def __len__(self) -> int:
        raise self.length


@pytest.mark.parametrize(
    "iterable",
    [range(2**64), Unsized(RuntimeError("no len")), Unsized(OverflowError())],
    ids=["huge", "raises", "overflow"],
)
@ITERABLE_PUBLISHERS
def test_rule_1_9_a_failing_len_is_not_a_failure_to_subscribe(publish: Any, iterable: Any) -> None:
    probe = Probe(initial=3)
    publish(iterable).subscribe(probe)
    probe.await_items(3)
    assert probe.items[:3] in ([0, 1, 2], [1, 2, 3]) and probe.error is None
    probe.cancel()
    probe.assert_rules_held()


def test_from_iterable_refuses_what_is_not_iterable() -> None:
    with pytest.raises(TypeError, match=r"from_iterable\(\) needs an iterable.*got int 5"):
        rs.from_iterable(5)  # type: ignore[arg-type]


def test_rule_3_13_a_drains_owner_is_freed_without_the_cycle_collector() -> None:
    """The bridge learns that a Python subscriber is gone when it is freed; a drain holding its
    owner's pass strongly would make a cycle that only the cycle collector frees, much later."""
    import gc
    import weakref

    class Owner:
        def __init__(self) -> None:
            self.passes = 0
            self.drain = Drain(self.work)

        def work(self) -> None:
            self.passes += 1

    gc.disable()
    try:
        owner = Owner()
        owner.drain.signal()
        assert owner.passes == 1
        freed = weakref.ref(owner)
        del owner
        assert freed() is None, "the drain kept its owner alive"
    finally:
        gc.enable()
