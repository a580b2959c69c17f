"""MapProcessor / IdentityProcessor: multicast with exact demand upstream."""

from __future__ import annotations

import threading

import pytest

import reactive_streams as rs

from .support import WAIT, Boom, Probe, Spy


def make(values: range | list[int] = range(100), **kwargs: bool) -> tuple[Spy, rs.MapProcessor[int, int]]:
    spy = Spy(rs.from_iterable(values))
    processor: rs.MapProcessor[int, int] = rs.MapProcessor(lambda x: x * 2, **kwargs)
    spy.subscribe(processor)
    return spy, processor


def test_nothing_is_requested_upstream_before_a_subscriber_asks() -> None:
    spy, processor = make()
    probe = Probe(0)
    processor.subscribe(probe)
    assert spy.requests == []
    probe.request(3)
    assert spy.requested == 3 and probe.items == [0, 2, 4]


def test_upstream_demand_is_the_smallest_subscriber_demand() -> None:
    spy, processor = make()
    fast, slow = Probe(0), Probe(0)
    processor.subscribe(fast)
    processor.subscribe(slow)
    fast.request(10)
    assert spy.requests == [] and fast.items == []
    slow.request(2)
    assert slow.items == [0, 2] and len(fast.items) == 2
    assert spy.requested == 2  # what both can take, no more (§1.1 end to end)
    slow.request(8)
    assert len(fast.items) == 10 and len(slow.items) == 10 and spy.requested == 10


def test_function_failure_fails_every_subscriber_and_cancels_upstream() -> None:
    spy = Spy(rs.from_iterable(range(100)))
    processor: rs.MapProcessor[int, int] = rs.MapProcessor(lambda x: 1 // (x - 3))
    spy.subscribe(processor)
    a, b = Probe(rs.MAX_DEMAND), Probe(rs.MAX_DEMAND)
    processor.subscribe(a)
    processor.subscribe(b)
    assert isinstance(a.error, ZeroDivisionError) and isinstance(b.error, ZeroDivisionError)
    assert spy.cancels == 1


def test_upstream_error_reaches_subscribers_at_once() -> None:  # §4.2
    def source():  # type: ignore[no-untyped-def]
        yield 1
        yield 2
        raise Boom()

    processor: rs.IdentityProcessor[int] = rs.IdentityProcessor()
    probe = Probe(1)
    processor.subscribe(probe)
    rs.from_iterable(source()).subscribe(processor)
    assert probe.items == [1] and probe.error is None
    probe.request(1)
    probe.request(1)
    assert probe.items == [1, 2] and isinstance(probe.error, Boom)


def test_last_subscriber_cancelling_cancels_upstream() -> None:
    spy, processor = make()
    probe = Probe(2)
    processor.subscribe(probe)
    probe.cancel()
    assert spy.cancels == 1
    late = Probe(1)
    processor.subscribe(late)
    assert isinstance(late.error, rs.ReactiveStreamsError)


def test_without_auto_cancel_upstream_survives_subscribers() -> None:
    spy, processor = make(auto_cancel=False)
    first = Probe(2)
    processor.subscribe(first)
    first.cancel()
    second = Probe(2)
    processor.subscribe(second)
    assert spy.cancels == 0 and second.items == [4, 6]


def test_late_subscriber_gets_completion() -> None:
    _spy, processor = make([1, 2])
    probe = Probe(5)
    processor.subscribe(probe)
    assert probe.completed
    late = Probe(1)
    processor.subscribe(late)
    assert late.completed and late.items == []


def test_a_second_upstream_is_cancelled() -> None:  # §2.5
    _spy, processor = make()
    other = Spy(rs.from_iterable([1]))
    other.subscribe(processor)
    assert other.cancels == 1


def test_a_function_that_cannot_be_called_is_refused_at_once() -> None:
    with pytest.raises(TypeError, match=r"^MapProcessor\(function\) needs a callable, got int 5$"):
        rs.MapProcessor(5)  # type: ignore[arg-type]


def test_rule_2_12_a_duplicate_subscribe_fails_the_existing_subscription_once() -> None:
    # §1.10, §2.12: the choice SubmissionPublisher makes, as the JDK's does.
    spy, processor = make()
    probe, other = Probe(2), Probe(0)
    processor.subscribe(probe)
    processor.subscribe(other)
    other.request(2)
    assert probe.items == [0, 2] and other.items == []  # coordinated: probe has no demand left
    processor.subscribe(probe)
    assert isinstance(probe.error, rs.ReactiveStreamsError) and "§2.12" in str(probe.error)
    probe.request(5)  # §3.6 after on_error
    other.request(5)
    assert probe.items == [0, 2] and other.items == [4, 6, 8, 10, 12, 14, 16]
    assert spy.requested == 9 and spy.cancels == 0  # the other subscriber keeps the stream
    probe.assert_rules_held()  # no second on_subscribe, nothing after on_error (§1.7)
    other.assert_rules_held()


class _SlowUpstream(rs.Subscription):
    """An upstream subscription whose ``request`` waits until released, and that records any
    call that overlaps another (§2.7)."""

    def __init__(self) -> None:
        self.inside, self.release = threading.Event(), threading.Event()
        self.cancels, self.overlaps, self._active = 0, 0, 0
        self._lock = threading.Lock()

    def _enter(self) -> None:
        with self._lock:
            self.overlaps += self._active
            self._active += 1

    def _exit(self) -> None:
        with self._lock:
            self._active -= 1

    def request(self, n: int) -> None:
        self._enter()
        self.inside.set()
        assert self.release.wait(WAIT)
        self._exit()

    def cancel(self) -> None:
        self._enter()
        self.cancels += 1
        self._exit()


def test_rule_2_7_a_failing_function_cancels_upstream_from_the_drain_not_during_a_request() -> None:
    processor: rs.MapProcessor[int, int] = rs.MapProcessor(lambda x: 1 // 0)
    upstream = _SlowUpstream()
    processor.on_subscribe(upstream)
    probe = Probe(0)
    processor.subscribe(probe)
    requester = threading.Thread(target=probe.request, args=(5,))
    requester.start()
    assert upstream.inside.wait(WAIT)  # the drain, on the requester's thread, is in request()
    processor.on_next(1)  # upstream signals from its own thread meanwhile; the function fails
    assert upstream.cancels == 0  # recorded: the drain cancels once request() has returned
    upstream.release.set()
    requester.join(WAIT)
    probe.await_done()
    assert upstream.cancels == 1 and upstream.overlaps == 0
    assert isinstance(probe.error, ZeroDivisionError)
    probe.assert_rules_held()
