"""zip and zip_with: tuples as the builtin zip makes them, demand in lockstep (no side asked for
more than the others have matched plus the downstream demand), the end at the shortest."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import reactive_streams as rs

from .support import WAIT, BatchProbe, Boom, Probe, Spy, run_threads


def run(publisher: rs.Publisher[Any], initial: int = rs.MAX_DEMAND, probe: Probe | None = None) -> Probe:
    probe = probe if probe is not None else Probe(initial)
    publisher.subscribe(probe)
    return probe


def test_tuples_as_the_builtin_zip_makes_them() -> None:
    a, b, c = range(10), "abcdefg", [True, False] * 20
    expected = list(zip(a, b, c, strict=False))
    assert list(rs.zip(rs.from_iterable(a), rs.from_iterable(b), rs.from_iterable(c)).iterate()) == expected
    assert list(rs.from_iterable(a).zip_with(rs.from_iterable(b), rs.from_iterable(c)).iterate()) == expected
    assert list(rs.zip(rs.just(1)).iterate()) == [(1,)]
    assert list(rs.zip().iterate()) == []  # as zip(): nothing, and the end at once


def test_demand_goes_to_every_side_in_lockstep() -> None:
    left, right = Spy(rs.from_iterable(range(100))), Spy(rs.from_iterable(range(100)))
    probe = run(rs.zip(left, right), initial=3)
    assert probe.items == [(0, 0), (1, 1), (2, 2)]
    assert left.requests == right.requests == [3]
    probe.request(5)
    assert len(probe.items) == 8 and left.requests == right.requests == [3, 5]


def test_no_side_is_asked_for_more_than_the_others_matched_plus_the_demand() -> None:
    """With a slow side (its elements come on another thread, a few at a time) and a fast one,
    whatever the order of arrivals, each side's requests stay within the tuples out plus the
    downstream demand outstanding."""
    left = Spy(rs.AsyncIterablePublisher(range(3000), batch_size=7))
    right = Spy(rs.from_iterable(range(5000)))
    checks: list[str] = []

    def check(probe: Probe, item: Any) -> None:
        outstanding = probe.requested - len(probe.items)
        for name, spy in (("left", left), ("right", right)):
            if spy.requested > len(probe.items) + outstanding:
                checks.append(
                    f"{name} asked {spy.requested} with {len(probe.items)} out, {outstanding} wanted"
                )

    probe = Probe(0, on_next_hook=check)
    rs.zip(left, right).subscribe(probe)
    for n in (1, 10, 100, 7, 2000, 5000):
        probe.request(n)
    probe.await_done()
    assert probe.items == list(zip(range(3000), range(3000), strict=True)) and probe.completed
    assert checks == []
    assert right.cancels == 1  # the end at the shortest cancels the other


def test_unbounded_demand_is_asked_prefetch_at_a_time() -> None:
    left, right = Spy(rs.from_iterable(range(10_000))), Spy(rs.from_iterable(range(10_000)))
    probe = run(rs.zip(left, right, prefetch=64))
    assert len(probe.items) == 10_000 and probe.completed
    assert max(left.requests) <= 64 and max(right.requests) <= 64


def test_the_end_comes_with_the_shortest_and_cancels_the_rest() -> None:
    short, long = Spy(rs.from_iterable(range(3))), Spy(rs.from_iterable(range(10**9)))
    probe = run(rs.zip(long, short))
    assert probe.items == [(0, 0), (1, 1), (2, 2)] and probe.completed and long.cancels == 1


def test_an_error_comes_after_the_tuples_before_it_and_cancels_the_rest() -> None:
    failing = rs.range(0, 3).append(rs.error(Boom("side failed")))
    other = Spy(rs.from_iterable(range(10**6)))
    probe = run(rs.zip(failing, other))
    assert probe.items == [(0, 0), (1, 1), (2, 2)] and isinstance(probe.error, Boom) and other.cancels == 1
    at_once = run(rs.zip(rs.never(), rs.error(Boom("now"))), initial=0)
    assert isinstance(at_once.error, Boom)  # §2.10: no request needed


def test_lists_in_and_a_list_of_tuples_out() -> None:
    probe = BatchProbe(rs.MAX_DEMAND)
    rs.zip(rs.from_iterable(range(5000)), rs.from_iterable(range(5000))).subscribe(probe)
    assert len(probe.items) == 5000 and probe.completed and len(probe.batches) < 20


def test_iterate_takes_tuples_made_as_it_goes_and_a_cancel_stops_them() -> None:
    with rs.iterate(rs.zip(rs.range(0, 10**6), rs.range(0, 10**6))) as pairs:
        seen = []
        for pair in pairs:
            seen.append(pair)
            if len(seen) == 10:
                pairs.close()  # clears the chunk under way: nothing more comes
        assert seen == [(i, i) for i in range(10)]


def test_requests_and_cancels_from_many_threads() -> None:  # §1.3, §2.7, §3.5
    for _ in range(20):
        probe = run(rs.zip(rs.AsyncIterablePublisher(range(500), batch_size=5), rs.range(0, 500)), initial=0)
        serial = threading.Lock()

        def requester(probe: Probe = probe, serial: threading.Lock = serial) -> None:
            for _ in range(30):
                with serial:
                    probe.request(3)

        run_threads(requester, 3)
        probe.await_items(270, WAIT)
        probe.cancel()
        probe.assert_rules_held()
        assert probe.items == list(zip(range(len(probe.items)), range(len(probe.items)), strict=True))


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (
            lambda: rs.zip(rs.just(1), [1]),
            TypeError,
            r"^zip\(\*publishers\) needs a reactive_streams.Publisher",
        ),
        (
            lambda: rs.zip(rs.just(1), prefetch=0),
            ValueError,
            r"^zip\(prefetch\) needs an int >= 1, got int 0$",
        ),
        (lambda: rs.zip_with(5), TypeError, r"^zip\(\*publishers\) needs a reactive_streams.Publisher"),
    ],
)
def test_bad_arguments_fail_at_once_with_a_clear_message(build: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        build()
