"""SubmissionPublisher: multicast, bounded buffers, submit waits, offer drops, close."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

import reactive_streams as rs

from .support import WAIT, Boom, Probe, wait_for


def test_every_subscriber_gets_what_was_submitted_after_it_subscribed() -> None:
    with rs.SubmissionPublisher[int]() as publisher:
        a, b = Probe(rs.MAX_DEMAND), Probe(rs.MAX_DEMAND)
        publisher.subscribe(a)
        publisher.subscribe(b)
        a.await_subscribed()
        b.await_subscribed()
        for i in range(100):
            publisher.submit(i)
    a.await_done()
    b.await_done()
    assert a.items == b.items == list(range(100)) and a.completed and b.completed


def test_submit_waits_for_a_slow_subscriber_and_the_buffer_stays_bounded() -> None:
    publisher: rs.SubmissionPublisher[int] = rs.SubmissionPublisher(max_buffer_capacity=4)
    probe = Probe(0)
    publisher.subscribe(probe)
    probe.await_subscribed()
    submitted = []
    attempted = []

    def producer() -> None:
        for i in range(20):
            attempted.append(i)
            submitted.append(publisher.submit(i))
        publisher.close()

    thread = threading.Thread(target=producer)
    thread.start()
    wait_for(lambda: len(attempted) == 5, "the producer to fill the buffer and submit a fifth")
    assert thread.is_alive() and len(submitted) == 4  # blocked on the full buffer
    probe.request(rs.MAX_DEMAND)
    thread.join(WAIT)
    probe.await_done()
    assert probe.items == list(range(20)) and max(submitted) <= 4


def test_offer_drops_for_a_full_subscriber_and_reports_it() -> None:
    publisher: rs.SubmissionPublisher[int] = rs.SubmissionPublisher(max_buffer_capacity=2)
    probe = Probe(0)
    publisher.subscribe(probe)
    probe.await_subscribed()
    dropped: list[int] = []
    results = [publisher.offer(i, on_drop=lambda s, x: dropped.append(x) is not None) for i in range(5)]
    assert results[:2] == [1, 2] and results[2:] == [-1, -1, -1] and dropped == [2, 3, 4]
    probe.request(10)
    probe.await_items(2)
    assert probe.items == [0, 1]


def test_a_with_block_that_raises_fails_subscribers_with_its_exception() -> None:
    probe = Probe(rs.MAX_DEMAND)
    with pytest.raises(Boom), rs.SubmissionPublisher[int]() as publisher:
        publisher.subscribe(probe)
        probe.await_subscribed()
        publisher.submit(1)
        raise Boom("the block failed")
    probe.await_done()
    assert publisher.is_closed and probe.items == [1] and isinstance(probe.error, Boom)


def test_close_exceptionally_fails_subscribers_and_later_ones() -> None:
    publisher: rs.SubmissionPublisher[int] = rs.SubmissionPublisher()
    probe = Probe(1)
    publisher.subscribe(probe)
    probe.await_subscribed()
    publisher.close_exceptionally(Boom("closed"))
    probe.await_done()
    late = Probe(1)
    publisher.subscribe(late)
    late.await_done()
    assert isinstance(probe.error, Boom) and isinstance(late.error, Boom)
    with pytest.raises(rs.ReactiveStreamsError, match="closed"):
        publisher.submit(1)


def test_rule_2_12_a_duplicate_subscribe_fails_the_existing_subscription_once() -> None:
    # §1.10, §2.12, the JDK's choice: the existing subscription signals on_error once and
    # nothing after it; the subscriber gets no second on_subscribe.
    with ThreadPoolExecutor(max_workers=1) as executor:  # passes run in the order signalled
        publisher: rs.SubmissionPublisher[int] = rs.SubmissionPublisher(executor, max_buffer_capacity=8)
        probe, other = Probe(rs.MAX_DEMAND), Probe(rs.MAX_DEMAND)
        publisher.subscribe(probe)
        publisher.subscribe(other)
        probe.await_subscribed()
        other.await_subscribed()
        publisher.submit(0)
        wait_for(lambda: probe.items == [0], "the first element")
        publisher.subscribe(probe)
        probe.await_done()
        for i in range(1, 20):
            publisher.submit(i)
        publisher.close()
        other.await_done()  # the last task on the one worker: every earlier one has run
    assert isinstance(probe.error, rs.ReactiveStreamsError) and "§2.12" in str(probe.error)
    assert probe.items == [0] and other.items == list(range(20)) and other.completed
    assert publisher.number_of_subscribers == 0
    probe.assert_rules_held()  # no second on_subscribe (§2.12), nothing after on_error (§1.7)
    other.assert_rules_held()


def test_rule_2_12_a_duplicate_subscribe_during_on_next_fails_after_it_returns() -> None:
    entered, release = threading.Event(), threading.Event()

    def slow(probe: Probe, item: int) -> None:
        if item == 0:
            entered.set()
            assert release.wait(WAIT)

    publisher: rs.SubmissionPublisher[int] = rs.SubmissionPublisher(max_buffer_capacity=8)
    probe = Probe(rs.MAX_DEMAND, on_next_hook=slow)
    publisher.subscribe(probe)
    probe.await_subscribed()
    for i in range(3):
        publisher.submit(i)
    assert entered.wait(WAIT)
    publisher.subscribe(probe)  # another thread, while the drain is inside on_next(0)
    release.set()
    probe.await_done()
    publisher.close()
    assert probe.items == [0] and isinstance(probe.error, rs.ReactiveStreamsError)  # ahead of 1, 2
    probe.assert_rules_held()  # §1.3: on_error did not overlap on_next


def test_rule_2_12_a_duplicate_subscribe_after_close_fails_the_draining_subscription() -> None:
    publisher: rs.SubmissionPublisher[int] = rs.SubmissionPublisher(max_buffer_capacity=8)
    probe = Probe(0)
    publisher.subscribe(probe)
    probe.await_subscribed()
    for i in range(4):
        publisher.submit(i)
    publisher.close()  # the buffer is not delivered yet: no demand
    publisher.subscribe(probe)
    probe.await_done()
    probe.request(10)  # §3.6: nothing follows
    assert probe.items == [] and not probe.completed and "§2.12" in str(probe.error)
    probe.assert_rules_held()


def test_cancel_releases_a_blocked_submit() -> None:
    publisher: rs.SubmissionPublisher[int] = rs.SubmissionPublisher(max_buffer_capacity=1)
    probe = Probe(0)
    publisher.subscribe(probe)
    probe.await_subscribed()
    publisher.submit(0)
    thread = threading.Thread(target=publisher.submit, args=(1,))
    thread.start()
    probe.cancel()
    thread.join(WAIT)
    assert not thread.is_alive() and publisher.number_of_subscribers == 0


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="max_buffer_capacity"):
        rs.SubmissionPublisher(max_buffer_capacity=0)
    with pytest.raises(TypeError, match=r"§2\.13"):
        rs.SubmissionPublisher().submit(None)
    with pytest.raises(ValueError, match="timeout"):
        rs.SubmissionPublisher().offer(1, timeout=-1)
