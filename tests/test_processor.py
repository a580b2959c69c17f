"""MapProcessor / IdentityProcessor: multicast with exact demand upstream."""

from __future__ import annotations

import pytest

import reactive_streams as rs

from .support import Boom, Probe, Spy


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
