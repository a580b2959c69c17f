"""iterate: bounded buffer, the stream's error, cancel on break, close and garbage collection."""

from __future__ import annotations

import gc
import threading

import pytest

import reactive_streams as rs

from .support import (
    Boom,
    GatedUpstream,
    Pushed,
    Spy,
    assert_a_loop_that_must_wait_asks_early,
    failing,
    finalizer_idle,
    wait_for,
)


def test_iterate_yields_everything() -> None:
    assert list(rs.iterate(rs.from_iterable(range(1000)), prefetch=7)) == list(range(1000))


def test_iterate_requests_prefetch_then_replenishes_in_batches() -> None:
    spy = Spy(rs.from_iterable(range(100)))
    iterator = rs.iterate(spy, prefetch=8)
    assert spy.requests == [8]
    for _ in range(6):
        next(iterator)
    assert spy.requests == [8, 6]  # after 3/4 of prefetch
    assert spy.requested - 6 <= 8  # outstanding + buffered never exceed prefetch


@pytest.mark.parametrize("bulk", [False, True], ids=["elements", "lists"])
@pytest.mark.parametrize("prefetch", [1, 2, 3, 8, 16, 256])
def test_iterate_never_has_more_than_prefetch_outstanding_and_buffered(prefetch: int, bulk: bool) -> None:
    spy = Spy(rs.from_iterable(range(5_000)), bulk=bulk)  # bulk: from_iterable's lists, as they come
    taken = 0
    for _ in rs.iterate(spy, prefetch=prefetch):
        taken += 1
        assert spy.delivered - taken <= prefetch  # buffered
        assert spy.requested - taken <= prefetch  # requested and not yet taken (§1.1 bound)
    assert taken == 5_000 and all(n > 0 for n in spy.requests)
    assert spy.batches >= 5_000 // prefetch if bulk else spy.batches == 0


def test_a_loop_that_must_wait_asks_at_once_for_what_it_took_once_a_quarter_went_out() -> None:
    """A publisher slower than the loop: the loop, out of elements, asks again for what it took
    since the last request when that is a quarter of prefetch (4 of 16) or more, not once three
    quarters (12) are; fewer wait for more. Requested and not taken stays within prefetch (§1.1)."""

    def loop(source: Pushed, got: list[int]) -> None:
        for item in rs.iterate(source, prefetch=16):
            got.append(item)

    assert_a_loop_that_must_wait_asks_early(loop)


def test_a_synchronous_publisher_is_asked_again_only_at_three_quarters() -> None:
    """The loop never waits for `from_iterable`: every request after the first is three
    quarters of prefetch, as before the loop learned to ask early."""
    spy = Spy(rs.from_iterable(range(100)))
    assert list(rs.iterate(spy, prefetch=8)) == list(range(100))
    assert spy.requests[0] == 8 and set(spy.requests[1:]) == {6}


@pytest.mark.parametrize("prefetch", [1, 3, 8, 64])
def test_iterate_keeps_its_bound_with_a_publisher_on_another_thread(prefetch: int) -> None:
    """The loop waits for an `AsyncIterablePublisher` often, and asks early each time: still
    never more than prefetch requested and not taken (§1.1)."""
    spy = Spy(rs.AsyncIterablePublisher(range(5_000), batch_size=5), bulk=True)
    taken = 0
    for _ in rs.iterate(spy, prefetch=prefetch):
        taken += 1
        assert spy.requested - taken <= prefetch
    assert taken == 5_000


def test_iterate_raises_the_stream_error_after_the_elements() -> None:
    def source():  # type: ignore[no-untyped-def]
        yield 1
        raise Boom("failed")

    iterator = rs.iterate(rs.from_iterable(source()))
    assert next(iterator) == 1
    with pytest.raises(Boom):
        next(iterator)
    with pytest.raises(StopIteration):
        next(iterator)


def test_break_cancels_upstream() -> None:
    spy = Spy(rs.from_iterable(range(10**9)))
    for item in rs.iterate(spy, prefetch=4):
        if item == 2:
            break
    gc.collect()
    wait_for(lambda: spy.cancels == 1, "the cancel")


def test_close_and_with_cancel_upstream() -> None:
    spy = Spy(rs.from_iterable(range(10_000)))
    with rs.iterate(spy) as iterator:
        next(iterator)
    assert spy.cancels == 1
    iterator.close()  # idempotent
    assert spy.cancels == 1
    with pytest.raises(StopIteration):
        next(iterator)


def test_dropping_the_iterator_cancels_upstream() -> None:
    spy = Spy(rs.from_iterable(range(10_000)))
    iterator = rs.iterate(spy)
    next(iterator)
    del iterator
    gc.collect()
    wait_for(lambda: spy.cancels == 1, "the cancel")  # on the finalizer thread


def test_iterate_waits_for_an_asynchronous_publisher() -> None:
    assert list(rs.AsyncIterablePublisher(range(500)).iterate(prefetch=3)) == list(range(500))


def test_what_is_not_a_publisher_is_refused_saying_what_to_do() -> None:
    with pytest.raises(TypeError) as refused:
        rs.iterate([1, 2])  # type: ignore[arg-type]
    assert str(refused.value) == (
        "iterate(publisher) needs a reactive_streams.Publisher, got list [1, 2]; for the elements of a "
        "list or another iterable, pass rs.from_iterable(...)"
    )


def test_bad_prefetch_is_refused() -> None:
    with pytest.raises(ValueError, match="prefetch"):
        rs.iterate(rs.from_iterable([1]), prefetch=0)


@pytest.mark.parametrize("how", ["close", "drop"])
def test_rule_2_7_a_cancel_during_a_request_waits_for_it_to_return(how: str) -> None:
    upstream = GatedUpstream()
    iterator = rs.iterate(upstream, prefetch=4)
    assert upstream.entered.wait(10)  # request(4) in progress, on the publisher's thread
    if how == "close":
        iterator.close()  # returns at once: the cancel is recorded, not made now
    else:
        del iterator
        gc.collect()
        finalizer_idle()  # the finalizer thread has asked for the cancel
    assert upstream.calls == ["request(4)"]
    upstream.finish()
    assert upstream.calls == ["request(4)", "cancel"] and not upstream.overlaps


def test_iterate_takes_lists_whole_and_requests_as_three_quarters_go_out() -> None:
    spy = Spy(rs.from_iterable(range(100)), bulk=True)
    iterator = rs.iterate(spy, prefetch=8)
    assert spy.requests == [8] and spy.batches == 1  # one list of 8, buffered whole
    for expected in range(5):
        assert next(iterator) == expected
    assert spy.requests == [8]
    assert next(iterator) == 5  # the 6th of 8 goes out: 6 more are asked for, in one request
    assert spy.requests == [8, 6]
    assert list(iterator) == list(range(6, 100))
    assert spy.requests[2:] == [6] * (len(spy.requests) - 2)  # replenished in batches of 3/4


def test_next_and_for_take_from_the_same_place() -> None:
    iterator = rs.iterate(rs.from_iterable(range(10)), prefetch=4)
    assert next(iterator) == 0
    assert [x for x in iterator if x < 5] == [1, 2, 3, 4]
    with pytest.raises(StopIteration):
        next(iterator)


def test_close_inside_the_loop_stops_the_chunk_being_yielded() -> None:
    spy = Spy(rs.from_iterable(range(10_000)), bulk=True)
    seen = []
    with rs.iterate(spy, prefetch=256) as iterator:
        for item in iterator:
            seen.append(item)
            if item == 4:
                iterator.close()  # 251 more of this chunk are buffered: none goes out
    assert seen == [0, 1, 2, 3, 4] and spy.cancels == 1


def test_iterate_raises_the_stream_error_after_every_element_before_it() -> None:
    def source():  # type: ignore[no-untyped-def]
        yield from range(300)
        raise Boom("failed")

    seen: list[int] = []
    with pytest.raises(Boom):
        for item in rs.iterate(rs.from_iterable(source()), prefetch=1_000):  # one list, then the error
            seen.append(item)
    assert seen == list(range(300))


def test_iterate_raises_an_error_from_another_thread_after_the_elements() -> None:
    seen: list[int] = []
    with pytest.raises(Boom):
        for item in rs.AsyncIterablePublisher(failing(1_000, Boom("late"))).iterate(prefetch=64):
            seen.append(item)
    assert seen == list(range(1_000))


def test_single_elements_wake_a_consumer_that_waits_for_them() -> None:
    """A source that sends one on_next at a time, and no completion: each element wakes the
    waiting loop (mutmut found the wake-up untested: every other source sends lists or ends)."""
    import time

    from .test_operators import Manual

    source = Manual()
    got: list[int] = []

    def consume() -> None:
        for item in rs.iterate(source, prefetch=4):
            got.append(item)
            if len(got) == 3:
                break

    consumer = threading.Thread(target=consume)
    consumer.start()
    for item in range(3):
        time.sleep(0.1)  # the loop is waiting by now
        while source.subscriber is None:
            time.sleep(0.01)
        source.subscriber.on_next(item)
    consumer.join(10)
    assert not consumer.is_alive() and got == [0, 1, 2]
    wait_for(lambda: source.cancels == 1, "the break's cancel")


def test_none_signals_are_refused_naming_the_rule_and_what_was_none() -> None:
    """§2.13: iterate's subscriber refuses a None subscription, element or error by raising
    NullElementError whose message names the rule and the signal (a caller's log must say which)."""

    class Capturing(rs.Publisher[int]):
        subscriber: rs.Subscriber[int] | None = None

        def subscribe(self, subscriber: rs.Subscriber[int]) -> None:
            self.subscriber = subscriber

    source = Capturing()
    iterator = rs.iterate(source)
    with iterator:
        assert source.subscriber is not None
        for signal, call in (
            ("subscription", source.subscriber.on_subscribe),
            ("element", source.subscriber.on_next),
            ("error", source.subscriber.on_error),
        ):
            with pytest.raises(rs.NullElementError) as refused:
                call(None)  # type: ignore[arg-type]
            assert str(refused.value) == f"§2.13: {signal} must not be None"
