"""take, skip and batch: values, and the demand each one passes upstream."""

from __future__ import annotations

import pytest

import reactive_streams as rs

from .support import BatchProbe, Boom, Probe, Spy


def run(publisher: rs.Publisher[object], initial: int = rs.MAX_DEMAND) -> Probe:
    probe = Probe(initial)
    publisher.subscribe(probe)
    return probe


def test_take_never_requests_more_than_its_count() -> None:
    spy = Spy(rs.from_iterable(range(1000)))
    probe = run(spy.take(5), initial=rs.MAX_DEMAND)
    assert probe.items == [0, 1, 2, 3, 4] and probe.completed
    assert spy.requested == 5 and spy.cancels == 1


def test_take_splits_demand_across_requests() -> None:
    spy = Spy(rs.from_iterable(range(1000)))
    probe = run(spy.take(5), initial=2)
    probe.request(2)
    probe.request(10)
    assert probe.items == [0, 1, 2, 3, 4] and probe.completed
    assert spy.requests == [2, 2, 1]


def test_rule_3_9_take_signals_an_illegal_request_made_during_its_last_on_next() -> None:
    # take(2) has cancelled upstream when its last on_next goes out: the §3.9 error of a
    # request made inside that on_next is take's to signal, in place of on_complete.
    def illegal_on_the_last(probe: Probe, item: int) -> None:
        if item == 1:
            probe.request(0)

    probe = Probe(2, on_next_hook=illegal_on_the_last)
    rs.from_iterable(range(10)).take(2).subscribe(probe)
    probe.await_done()
    assert probe.items == [0, 1] and not probe.completed
    assert isinstance(probe.error, rs.IllegalDemandError) and "§3.9" in str(probe.error)
    probe.assert_rules_held()


def test_take_zero_completes_without_requesting() -> None:
    spy = Spy(rs.from_iterable(range(10)))
    probe = run(spy.take(0), initial=0)
    assert probe.completed and probe.items == []
    assert spy.requests == [] and spy.cancels == 1


def test_skip_adds_its_count_to_the_first_request_only() -> None:
    spy = Spy(rs.from_iterable(range(100)))
    probe = run(spy.skip(3), initial=2)
    probe.request(4)
    assert probe.items == [3, 4, 5, 6, 7, 8]
    assert spy.requests == [5, 4]


def test_batch_requests_size_times_the_lists_asked_for() -> None:
    spy = Spy(rs.from_iterable(range(10)))
    probe = run(spy.batch(4), initial=1)
    assert probe.items == [[0, 1, 2, 3]] and spy.requests == [4]
    probe.request(5)
    assert probe.items == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] and probe.completed


@pytest.mark.parametrize("size", [1, 3, 7, 10_000])
def test_batch_makes_the_same_lists_from_elements_in_bulk(size: int) -> None:
    bulk = run(rs.from_iterable(range(25_000)).batch(size), initial=5)
    one_by_one = Probe(5)
    Spy(rs.from_iterable(range(25_000))).batch(size).subscribe(one_by_one)  # Spy relays one by one
    first_five = [list(range(i, min(i + size, 25_000))) for i in range(0, 25_000, size)][:5]
    assert bulk.items == one_by_one.items == first_five
    bulk.request(rs.MAX_DEMAND)
    assert [x for items in bulk.items for x in items] == list(range(25_000)) and bulk.completed


def test_batch_stops_a_bulk_list_when_downstream_cancels() -> None:
    probe = Probe(rs.MAX_DEMAND, on_next_hook=lambda p, _: p.cancel())
    rs.from_iterable(range(100)).batch(10).subscribe(probe)
    assert probe.items == [list(range(10))] and not probe.completed  # nothing after the cancel (§3.12)


def test_batch_demand_saturates_at_long_max() -> None:
    spy = Spy(rs.from_iterable(range(5)))
    run(spy.batch(3), initial=rs.MAX_DEMAND // 2)
    assert spy.requests == [rs.MAX_DEMAND]


def test_batch_drops_the_partial_list_on_error() -> None:
    def source():  # type: ignore[no-untyped-def]
        yield from range(5)
        raise Boom()

    probe = run(rs.from_iterable(source()).batch(2))
    assert probe.items == [[0, 1], [2, 3]] and isinstance(probe.error, Boom)


def test_take_of_lists_never_emits_past_its_count() -> None:
    spy = Spy(rs.from_iterable(range(10_000)), bulk=True)
    probe = BatchProbe(rs.MAX_DEMAND)
    spy.take(1_234).subscribe(probe)
    assert probe.items == list(range(1_234)) and probe.completed
    assert spy.requested == 1_234 and spy.cancels == 1  # asked for no more, and cancelled at the end
