"""start_with, end_with, prepend, append, switch_if_empty and default_if_empty (on the arbiter): their
elements, and that each next source is asked for exactly the demand still outstanding."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import reactive_streams as rs

from .support import WAIT, BatchProbe, Boom, Probe, Spy, run_threads


def run(publisher: rs.Publisher[Any], initial: int = rs.MAX_DEMAND) -> Probe:
    probe = Probe(initial)
    publisher.subscribe(probe)
    return probe


def test_values_and_publishers_before_and_after() -> None:
    source = rs.range(0, 3)
    assert list(source.start_with(-2, -1).iterate()) == [-2, -1, 0, 1, 2]
    assert list(source.end_with(7, 8).iterate()) == [0, 1, 2, 7, 8]
    assert list(source.prepend(rs.just("a"), rs.just("b")).iterate()) == ["a", "b", 0, 1, 2]
    assert list(source.append(rs.just("a"), rs.empty(), rs.just("b")).iterate()) == [0, 1, 2, "a", "b"]
    assert list(source.start_with().end_with().iterate()) == [0, 1, 2]  # nothing to add: the source


def test_the_next_source_is_asked_for_exactly_the_demand_outstanding() -> None:
    first, second = Spy(rs.range(0, 3)), Spy(rs.range(10, 100))
    probe = run(first.append(second), initial=5)
    assert probe.items == [0, 1, 2, 10, 11]
    assert first.requests == [5] and second.requests == [2]  # what the first did not deliver
    probe.request(3)
    assert probe.items[-3:] == [12, 13, 14] and second.requests == [2, 3]


def test_lists_pass_on_as_lists() -> None:
    probe = BatchProbe(rs.MAX_DEMAND)
    rs.from_iterable(range(1000)).start_with(-1).subscribe(probe)
    assert probe.items == [-1, *range(1000)] and probe.completed
    assert probe.batches == [1, 1000]  # the value's list, then the source's


def test_an_error_ends_the_stream_and_no_later_source_is_subscribed() -> None:
    later = Spy(rs.just(1))
    probe = run(rs.range(0, 2).append(rs.error(Boom("x")), later))
    assert probe.items == [0, 1] and isinstance(probe.error, Boom) and not later.subscribed
    assert run(rs.error(Boom("y")).end_with(1)).items == []


def test_cancel_reaches_the_source_subscribed_then_and_no_other_is_subscribed() -> None:
    first, second, later = Spy(rs.just(1)), Spy(rs.range(0, 100)), Spy(rs.just(2))
    probe = run(first.append(second, later), initial=3)
    assert probe.items == [1, 0, 1]
    probe.cancel()
    assert second.cancels == 1 and not later.subscribed
    assert not probe.done.is_set()


def test_many_synchronous_sources_in_turn_do_not_recurse() -> None:  # §3.3
    sources = [rs.just(i) for i in range(5000)]
    assert list(rs.empty().append(*sources).iterate()) == list(range(5000))


def test_switch_if_empty_switches_only_when_the_source_had_nothing() -> None:
    fallback = Spy(rs.just("fallback"))
    assert list(rs.empty().switch_if_empty(fallback).iterate()) == ["fallback"]
    unused = Spy(rs.just("unused"))
    assert list(rs.just(1).switch_if_empty(unused).iterate()) == [1] and not unused.subscribed
    failed = run(rs.error(Boom("x")).switch_if_empty(unused))
    assert isinstance(failed.error, Boom) and not unused.subscribed


def test_switch_if_empty_asks_the_fallback_for_the_demand_outstanding() -> None:
    empty, fallback = Spy(rs.empty()), Spy(rs.range(0, 100))
    probe = run(empty.switch_if_empty(fallback), initial=4)
    assert probe.items == [0, 1, 2, 3] and fallback.requests == [4]


def test_default_if_empty() -> None:
    assert list(rs.empty().default_if_empty(1, 2).iterate()) == [1, 2]
    assert list(rs.just(5).default_if_empty(1).iterate()) == [5]
    probe = run(rs.empty().default_if_empty(9), initial=0)
    assert probe.items == [] and not probe.done.is_set()  # the value waits for demand (§1.1)
    probe.request(1)
    assert probe.items == [9] and probe.completed


def test_a_3_9_request_is_signalled_whichever_source_is_current() -> None:
    probe = run(rs.range(0, 2).append(rs.range(2, 10)), initial=4)
    assert probe.items == [0, 1, 2, 3]
    probe.request(-1)
    assert isinstance(probe.error, rs.IllegalDemandError) and probe.items == [0, 1, 2, 3]


def test_requests_from_many_threads_while_sources_switch() -> None:  # §1.3, §2.7
    publishers = [rs.AsyncIterablePublisher(range(i * 10, i * 10 + 10), batch_size=3) for i in range(20)]
    probe = run(rs.empty().append(*publishers), initial=0)
    serial = threading.Lock()

    def requester() -> None:
        for _ in range(25):
            with serial:  # §2.7: the callers request serially
                probe.request(2)

    run_threads(requester, 4)
    probe.await_done(WAIT)
    assert probe.items == list(range(200)) and probe.completed
    probe.assert_rules_held()


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda: rs.start_with(1, None), rs.NullElementError, "§2.13"),
        (lambda: rs.end_with(None), rs.NullElementError, "§2.13"),
        (lambda: rs.prepend([1, 2]), TypeError, r"^prepend\(\*publishers\) needs a reactive_streams"),
        (lambda: rs.append(rs.just(1), 3), TypeError, r"^append\(\*publishers\) needs a reactive_streams"),
        (lambda: rs.switch_if_empty([1]), TypeError, r"^switch_if_empty\(publisher\) needs a reactive"),
        (lambda: rs.default_if_empty(), ValueError, r"^default_if_empty\(\*values\) needs at least one"),
    ],
)
def test_bad_arguments_fail_at_once_with_a_clear_message(build: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        build()
