"""scan, take_while, skip_while and distinct_until_changed: their values against itertools', what
they ask upstream for (a `Spy` records it), and when they cancel."""

from __future__ import annotations

import itertools
import operator
from typing import Any

import pytest

import reactive_streams as rs

from .support import BatchProbe, Boom, Probe, Spy


def run(publisher: rs.Publisher[Any], initial: int = rs.MAX_DEMAND, probe: Probe | None = None) -> Probe:
    probe = probe if probe is not None else Probe(initial)
    publisher.subscribe(probe)
    return probe


@pytest.mark.parametrize("bulk", [False, True], ids=["one by one", "lists"])
def test_scan_is_itertools_accumulate(bulk: bool) -> None:
    values = [3, 1, 4, 1, 5, 9, 2, 6]
    probe = BatchProbe(rs.MAX_DEMAND) if bulk else Probe(rs.MAX_DEMAND)
    run(Spy(rs.from_iterable(values), bulk=bulk).scan(operator.add), probe=probe)
    assert probe.items == list(itertools.accumulate(values))
    with_initial = run(Spy(rs.from_iterable(values), bulk=bulk).scan(operator.mul, 10))
    assert with_initial.items == list(itertools.accumulate(values, operator.mul, initial=10))
    assert list(rs.empty().scan(operator.add, 0).iterate()) == [0]  # as accumulate([], initial=0)


def test_scan_with_an_initial_value_asks_upstream_for_one_fewer_and_subscribes_late() -> None:
    spy = Spy(rs.from_iterable(range(100)))
    probe = run(spy.scan(operator.add, 0), initial=0)
    assert not spy.subscribed  # nothing to ask upstream before the initial value is out
    probe.request(1)
    assert probe.items == [0] and spy.requests == []  # subscribed once the value is out, asked nothing
    probe.request(4)
    assert probe.items == [0, 0, 1, 3, 6] and spy.requests == [4]


def test_scan_accumulator_failure_comes_after_the_values_before_it_and_cancels_upstream() -> None:
    def add(total: int, x: int) -> int:
        if x == 3:
            raise Boom("bad element")
        return total + x

    for bulk in (False, True):
        spy = Spy(rs.from_iterable(range(10)), bulk=bulk)
        probe = run(spy.scan(add), probe=BatchProbe(rs.MAX_DEMAND) if bulk else Probe(rs.MAX_DEMAND))
        assert probe.items == [0, 1, 3] and isinstance(probe.error, Boom) and spy.cancels == 1


def test_scan_returning_none_is_a_null_element_error() -> None:  # §2.13
    probe = run(rs.range(0, 5).scan(lambda total, x: None if x == 2 else total + x))
    assert probe.items == [0, 1] and isinstance(probe.error, rs.NullElementError)


@pytest.mark.parametrize("bulk", [False, True], ids=["one by one", "lists"])
def test_take_while_cancels_upstream_at_the_first_false_and_completes(bulk: bool) -> None:
    spy = Spy(rs.from_iterable(range(100)), bulk=bulk)
    probe = run(spy.take_while(lambda x: x < 5), probe=BatchProbe(10) if bulk else Probe(10))
    assert probe.items == list(itertools.takewhile(lambda x: x < 5, range(100)))
    assert probe.completed and spy.cancels == 1 and spy.requests == [10]  # demand passed through


def test_take_while_predicate_failure_ends_the_stream_after_the_elements_before() -> None:
    for bulk in (False, True):
        spy = Spy(rs.from_iterable(range(100)), bulk=bulk)
        probe = run(spy.take_while(lambda x: 1 / (3 - x)), probe=BatchProbe(50) if bulk else Probe(50))
        assert probe.items == [0, 1, 2] and isinstance(probe.error, ZeroDivisionError) and spy.cancels == 1


@pytest.mark.parametrize("bulk", [False, True], ids=["one by one", "lists"])
def test_skip_while_asks_again_for_every_element_it_skips(bulk: bool) -> None:  # §1.1
    spy = Spy(rs.from_iterable(range(100)), bulk=bulk)
    probe = run(spy.skip_while(lambda x: x < 30), probe=BatchProbe(5) if bulk else Probe(5))
    assert probe.items == [30, 31, 32, 33, 34]
    assert spy.delivered == spy.requested == 35  # exactly what was asked for, no more
    assert list(rs.range(0, 10).skip_while(lambda x: x % 5 != 4).iterate()) == list(range(4, 10))


def test_skip_while_stops_calling_the_predicate_after_the_first_false() -> None:
    seen: list[int] = []
    rs.range(0, 10).skip_while(lambda x: seen.append(x) or x < 3).subscribe(Probe(rs.MAX_DEMAND))
    assert seen == [0, 1, 2, 3]


def test_skip_while_predicate_failure_cancels_upstream() -> None:
    spy = Spy(rs.from_iterable(range(10)))
    probe = run(spy.skip_while(lambda x: 1 / 0))
    assert probe.items == [] and isinstance(probe.error, ZeroDivisionError) and spy.cancels == 1


@pytest.mark.parametrize("bulk", [False, True], ids=["one by one", "lists"])
def test_distinct_until_changed_drops_repeats_and_asks_again_for_each(bulk: bool) -> None:
    values = [1, 1, 2, 2, 2, 3, 1, 1, 4] * 3
    expected = [key for key, _ in itertools.groupby(values)]
    spy = Spy(rs.from_iterable(values), bulk=bulk)
    probe = run(spy.distinct_until_changed(), probe=BatchProbe(4) if bulk else Probe(4))
    assert probe.items == expected[:4]
    assert spy.delivered == spy.requested  # every dropped element asked for again, no more
    rest = run(rs.from_iterable(values).distinct_until_changed())
    assert rest.items == expected


def test_distinct_until_changed_by_key() -> None:
    words = ["apple", "avocado", "banana", "blueberry", "cherry", "apricot"]
    assert list(rs.from_iterable(words).distinct_until_changed(key=lambda w: w[0]).iterate()) == [
        "apple",
        "banana",
        "cherry",
        "apricot",
    ]


def test_distinct_until_changed_key_failure_comes_after_the_elements_before() -> None:
    for bulk in (False, True):
        spy = Spy(rs.from_iterable([1, 1, 2, 0, 5]), bulk=bulk)
        probe = BatchProbe(9) if bulk else Probe(9)
        run(spy.distinct_until_changed(key=lambda x: 1 / x), probe=probe)
        assert probe.items == [1, 2] and isinstance(probe.error, ZeroDivisionError) and spy.cancels == 1


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: rs.scan(5), r"^scan\(accumulator\) needs a callable, got int 5$"),
        (lambda: rs.scan(operator.add, None), "§2.13"),
        (lambda: rs.take_while("x"), r"^take_while\(predicate\) needs a callable"),
        (lambda: rs.skip_while(1), r"^skip_while\(predicate\) needs a callable"),
        (lambda: rs.distinct_until_changed(key=3), r"^distinct_until_changed\(key\) needs a callable"),
        (lambda: rs.map(lambda x: x)([1, 2]), r"^the map\(...\) operator needs a reactive_streams.Publisher"),
    ],
)
def test_bad_arguments_fail_at_once_with_a_clear_message(build: Any, message: str) -> None:
    with pytest.raises((TypeError, ValueError), match=message):
        build()


def test_operator_functions_are_the_fluent_methods_curried() -> None:
    source = rs.range(0, 10)
    assert list(rs.scan(operator.add)(source).iterate()) == list(source.scan(operator.add).iterate())
    assert list(rs.map(str)(source).iterate()) == [str(i) for i in range(10)]
    assert list(rs.filter(lambda x: x % 3 == 0)(source).iterate()) == [0, 3, 6, 9]
    assert list(rs.take(2)(source).iterate()) == [0, 1]
    assert list(rs.skip(8)(source).iterate()) == [8, 9]
    assert list(rs.batch(4)(source).iterate()) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert list(rs.flat_map(lambda x: rs.just(x, x))(rs.range(0, 2)).iterate()) == [0, 0, 1, 1]
    assert list(rs.concat_map(lambda x: rs.repeat(x, x))(rs.range(0, 4)).iterate()) == [1, 2, 2, 3, 3, 3]
