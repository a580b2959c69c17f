"""Aggregates: each against Python's own on random inputs and random request patterns, what each
asks upstream for (in chunks, exactly 1 for ``first``, ``i + 1`` for ``element_at``), when each
cancels, that nothing beyond the accumulator is held, and their errors."""

from __future__ import annotations

import functools
import gc
import itertools
import operator
import re
import statistics
import threading
import weakref
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reactive_streams as rs
from reactive_streams._aggregate import CHUNK

from .support import WAIT, BatchProbe, Boom, Probe, Spy, wait_for

NONE = rs.NoSuchElementError  # what a stream with no answer ends with


def sevens(x: int) -> bool:
    return x % 7 == 6


AGGREGATES: dict[str, tuple[Callable[[rs.Publisher[Any]], rs.Publisher[Any]], Callable[[list[int]], Any]]] = {
    "count": (rs.count(), len),
    "sum": (rs.sum(), sum),
    "sum start": (rs.sum(100), lambda xs: sum(xs, 100)),
    "min": (rs.min(default=-1), lambda xs: min(xs, default=-1)),
    "max by key": (rs.max(key=lambda x: -x, default=-1), lambda xs: max(xs, key=lambda x: -x, default=-1)),
    "average": (rs.average(), lambda xs: sum(xs) / len(xs) if xs else NONE),
    "reduce": (rs.reduce(operator.sub), lambda xs: functools.reduce(operator.sub, xs) if xs else NONE),
    "reduce initial": (rs.reduce(operator.sub, 7), lambda xs: functools.reduce(operator.sub, xs, 7)),
    "all": (rs.all(lambda x: x < 40), lambda xs: all(x < 40 for x in xs)),
    "some": (rs.some(lambda x: x > 40), lambda xs: any(x > 40 for x in xs)),
    "contains": (rs.contains(13), lambda xs: 13 in xs),
    "element_at": (rs.element_at(5, default=-1), lambda xs: xs[5] if len(xs) > 5 else -1),
    "first": (rs.first(), lambda xs: xs[0] if xs else NONE),
    "first matching": (rs.first(lambda x: x % 7 == 6, default=0), lambda xs: next(filter(sevens, xs), 0)),
    "last": (rs.last(default=-1), lambda xs: xs[-1] if xs else -1),
    "to_list": (rs.to_list(), list),
}  # fmt: skip

common = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def answer_of(probe: Probe) -> Any:
    """The one element, or the error's class."""
    assert probe.done.wait(WAIT)
    if probe.error is not None:
        return type(probe.error)
    assert len(probe.items) == 1 and probe.completed, (probe.items, probe.completed)
    return probe.items[0]


@pytest.mark.parametrize("name", list(AGGREGATES))
@common
@given(
    values=st.lists(st.integers(min_value=-50, max_value=50), max_size=3000),
    requests=st.lists(st.integers(min_value=1, max_value=3), min_size=1, max_size=3),
    bulk=st.booleans(),
)
def test_each_aggregate_equals_pythons_own(
    name: str, values: list[int], requests: list[int], bulk: bool
) -> None:
    op, python = AGGREGATES[name]
    probe = BatchProbe() if bulk else Probe()
    op(Spy(rs.from_iterable(values), bulk=bulk)).subscribe(probe)
    for n in requests:
        probe.request(n)
    assert answer_of(probe) == python(values)
    probe.assert_rules_held()


@common
@given(values=st.lists(st.integers(), max_size=200), initial=st.integers(), requests=st.integers(1, 300))
def test_scan_equals_itertools_accumulate(values: list[int], initial: int, requests: int) -> None:
    probe = Probe(requests)
    rs.from_iterable(values).scan(operator.add, initial).subscribe(probe)
    probe.request(len(values) + 2)
    assert probe.items == list(itertools.accumulate(values, initial=initial)) and probe.completed


@common
@given(
    a=st.lists(st.integers(), max_size=100),
    b=st.lists(st.text(max_size=2), max_size=100),
    requests=st.lists(st.integers(1, 40), min_size=1, max_size=6),
)
def test_zip_equals_the_builtin_zip(a: list[int], b: list[str], requests: list[int]) -> None:
    probe = Probe()
    rs.zip(rs.from_iterable(a), rs.AsyncIterablePublisher(b, batch_size=3)).subscribe(probe)
    for n in requests:
        probe.request(n)
    expected = list(zip(a, b, strict=False))
    probe.await_items(min(len(expected), sum(requests)))
    probe.request(len(expected) + 1)
    probe.await_done()
    assert probe.items == expected and probe.completed
    probe.assert_rules_held()


def test_an_aggregate_asks_upstream_for_nothing_until_its_answer_is_asked_for() -> None:
    spy = Spy(rs.from_iterable(range(10)))
    probe = Probe(0)
    spy.count().subscribe(probe)
    assert spy.subscribed and spy.requests == []
    probe.request(1)
    assert probe.items == [10] and spy.requests == [CHUNK]


@pytest.mark.parametrize("bulk", [False, True], ids=["one by one", "lists"])
def test_reduce_asks_in_chunks_never_more_than_one_outstanding(bulk: bool) -> None:
    spy = Spy(rs.from_iterable(range(10_000)), bulk=bulk)
    probe = BatchProbe(1) if bulk else Probe(1)
    spy.reduce(operator.add).subscribe(probe)
    assert probe.items == [sum(range(10_000))]
    assert spy.requests[0] == CHUNK and all(0 < n <= CHUNK for n in spy.requests)
    assert spy.requested - spy.delivered <= CHUNK  # outstanding, at the end
    assert spy.requested <= 10_000 + CHUNK


def test_an_aggregate_holds_nothing_but_its_accumulator() -> None:
    class Element:
        def __init__(self, value: int) -> None:
            self.value = value

    alive: list[weakref.ref[Element]] = []
    held_at: list[int] = []

    def elements() -> Any:
        for i in range(3 * CHUNK):
            element = Element(i)
            alive.append(weakref.ref(element))
            if i % CHUNK == CHUNK - 1:
                gc.collect()
                held_at.append(sum(ref() is not None for ref in alive))
            yield element

    total = rs.from_iterable(elements()).reduce(lambda acc, e: Element(acc.value + e.value))
    result = next(iter(total.iterate()))
    assert result.value == sum(range(3 * CHUNK))
    assert max(held_at) <= 2 * CHUNK  # at most the list being folded and the one being pulled


def test_first_asks_for_exactly_one_and_cancels_after_it() -> None:
    spy = Spy(rs.from_iterable(range(100)))
    assert list(spy.first().iterate()) == [0]
    assert spy.requests == [1] and spy.cancels == 1


def test_element_at_asks_for_exactly_what_it_needs_and_cancels_there() -> None:
    spy = Spy(rs.from_iterable(range(100)))
    assert list(spy.element_at(41).iterate()) == [41]
    assert spy.requests == [42] and spy.cancels == 1 and spy.delivered == 42


@pytest.mark.parametrize(
    ("build", "answer", "delivered"),
    [
        (lambda p: p.all(lambda x: x < 5), False, 6),
        (lambda p: p.some(lambda x: x == 7), True, 8),
        (lambda p: p.contains(3), True, 4),
        (lambda p: p.first(lambda x: x > 10), 11, 12),
    ],
)
def test_an_answer_known_early_cancels_upstream_at_once(build: Any, answer: Any, delivered: int) -> None:
    spy = Spy(rs.from_iterable(range(10_000)))  # one by one: the cancel must stop it mid-chunk
    assert list(build(spy).iterate()) == [answer]
    assert spy.cancels == 1 and spy.delivered == delivered  # §3.12: not the rest of the chunk


def test_the_answer_waits_for_a_request_and_an_error_does_not() -> None:  # §1.1, §2.10
    probe = Probe(0)
    rs.empty().count().subscribe(probe)
    assert probe.items == [] and not probe.done.is_set()
    probe.request(5)
    assert probe.items == [0] and probe.completed
    failed = Probe(0)
    rs.error(Boom("x")).count().subscribe(failed)
    assert isinstance(failed.error, Boom)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda p: p.min(), r"^min\(\) of an empty stream, with no default$"),
        (lambda p: p.max(), r"^max\(\) of an empty stream"),
        (lambda p: p.average(), r"^average\(\) of an empty stream$"),
        (lambda p: p.reduce(operator.add), r"^reduce\(function\) of an empty stream, with no initial value$"),
        (lambda p: p.first(), r"^first\(\): the stream was empty, and there is no default$"),
        (lambda p: p.first(bool), r"^first\(\): the stream had no element that matched"),
        (lambda p: p.last(), r"^last\(\): the stream was empty"),
        (lambda p: p.element_at(3), r"^element_at\(3\): the stream ended after 0 elements$"),
    ],
)
def test_no_answer_is_a_no_such_element_error(build: Any, message: str) -> None:
    probe = Probe(1)
    build(rs.empty()).subscribe(probe)
    assert isinstance(probe.error, rs.NoSuchElementError) and isinstance(probe.error, LookupError)
    assert re.match(message, str(probe.error)), str(probe.error)


def test_defaults_and_none_answers() -> None:
    assert list(rs.empty().max(default=0).iterate()) == [0]
    assert list(rs.empty().element_at(2, default="x").iterate()) == ["x"]
    for none_default in (
        rs.first,
        rs.last,
        rs.min,
        rs.max,
        lambda default: rs.element_at(3, default=default),
    ):
        with pytest.raises(
            rs.NullElementError, match=r"^§2\.13: .*\(default=\) needs a default that is not None"
        ):
            none_default(default=None)  # refused at once, not by an empty stream later


def test_user_functions_that_raise_cancel_upstream_and_are_signalled() -> None:
    for build in (
        lambda p: p.reduce(lambda a, b: 1 / 0),
        lambda p: p.all(lambda x: 1 / 0),
        lambda p: p.max(key=lambda x: 1 / 0),
        lambda p: p.sum("no"),
    ):
        spy = Spy(rs.from_iterable(range(100)))
        probe = Probe(1)
        build(spy).subscribe(probe)
        assert isinstance(probe.error, (ZeroDivisionError, TypeError)) and spy.cancels == 1


def test_min_and_max_keep_the_first_of_equals_as_the_builtins_do() -> None:
    pairs = [(1, "a"), (0, "b"), (1, "c"), (0, "d")] * 600
    key = operator.itemgetter(0)
    assert list(rs.from_iterable(pairs).min(key=key).iterate()) == [min(pairs, key=key)] == [(0, "b")]
    assert list(rs.from_iterable(pairs).max(key=key).iterate()) == [max(pairs, key=key)] == [(1, "a")]


def test_average_is_the_mean() -> None:
    values = [1.5, 2.5, 10.0, -3.0]
    assert list(rs.from_iterable(values).average().iterate()) == [statistics.fmean(values)]


def test_a_3_9_request_cancels_upstream_and_is_signalled() -> None:
    spy = Spy(rs.from_iterable(range(10)))
    probe = Probe(0)
    spy.count().subscribe(probe)
    probe.request(0)
    assert isinstance(probe.error, rs.IllegalDemandError) and spy.cancels == 1
    probe.request(1)  # §3.6
    assert probe.items == []


def test_cancel_from_another_thread_while_folding() -> None:  # §3.5
    folding = threading.Event()

    def numbers() -> Any:
        for i in range(10**9):
            if i == 5_000:
                folding.set()
            yield i

    spy = Spy(rs.AsyncIterablePublisher(numbers(), batch_size=64))
    probe = Probe(1)
    spy.sum().subscribe(probe)
    assert folding.wait(WAIT)
    probe.cancel()
    wait_for(lambda: spy.cancels == 1, "the cancel to reach upstream")
    assert not probe.done.is_set()


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda: rs.reduce("x"), TypeError, r"^reduce\(function\) needs a callable"),
        (lambda: rs.element_at(-1), ValueError, r"^element_at\(index\) needs index >= 0, got -1$"),
        (lambda: rs.element_at(1.0), TypeError, r"^element_at\(index\) needs an int, got float 1.0$"),
        (lambda: rs.all(3), TypeError, r"^all\(predicate\) needs a callable"),
        (lambda: rs.some(3), TypeError, r"^some\(predicate\) needs a callable"),
        (lambda: rs.first(3), TypeError, r"^first\(predicate\) needs a callable"),
    ],
)
def test_bad_arguments_fail_at_once_with_a_clear_message(build: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        build()
