"""AsyncIterablePublisher: delivery on the executor, fairness, shutdown."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

import reactive_streams as rs

from .support import Probe


def test_signals_run_on_the_executor_not_the_caller() -> None:
    threads: set[str] = set()

    def record(probe: Probe, item: int) -> None:
        threads.add(threading.current_thread().name)

    with ThreadPoolExecutor(2, thread_name_prefix="test-pool") as executor:
        probe = Probe(10, on_next_hook=record)
        rs.AsyncIterablePublisher(range(10), executor).subscribe(probe)
        probe.await_done()
    assert probe.items == list(range(10)) and all(t.startswith("test-pool") for t in threads)


def test_two_subscribers_share_one_executor_thread_fairly() -> None:
    with ThreadPoolExecutor(1) as executor:
        order: list[str] = []
        a = Probe(rs.MAX_DEMAND, on_next_hook=lambda p, i: order.append("a"))
        b = Probe(rs.MAX_DEMAND, on_next_hook=lambda p, i: order.append("b"))
        publisher = rs.AsyncIterablePublisher(range(10_000), executor, batch_size=100)
        publisher.subscribe(a)
        publisher.subscribe(b)
        a.await_done()
        b.await_done()
    first_b = order.index("b")
    assert first_b < 10_000, "b waited for all of a's elements: slices did not interleave"


def test_rule_1_9_a_shut_down_executor_becomes_on_error_after_on_subscribe() -> None:
    executor = ThreadPoolExecutor(1)
    executor.shutdown()
    probe = Probe(1)
    rs.AsyncIterablePublisher(range(3), executor).subscribe(probe)
    assert probe.subscribed.is_set() and isinstance(probe.error, rs.ReactiveStreamsError)
    assert "refused" in str(probe.error) and probe.items == []
    probe.assert_rules_held()


def test_an_executor_shut_down_mid_stream_ends_it_with_on_error() -> None:
    executor = ThreadPoolExecutor(1)
    probe = Probe(2)
    rs.AsyncIterablePublisher(range(10), executor).subscribe(probe)
    probe.await_items(2)
    executor.shutdown()
    probe.request(3)  # the pass the executor refuses runs here, to say so
    assert isinstance(probe.error, rs.ReactiveStreamsError) and probe.items == [0, 1]
    probe.assert_rules_held()


def test_what_cannot_be_iterated_is_refused_at_once() -> None:
    with pytest.raises(
        TypeError, match=r"^AsyncIterablePublisher\(iterable\) needs an iterable .*got int 5$"
    ):
        rs.AsyncIterablePublisher(5)  # type: ignore[arg-type]


def test_bad_batch_size() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        rs.AsyncIterablePublisher([1], batch_size=0)
