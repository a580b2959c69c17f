"""map and filter, what every operator shares (argument checks, chaining, §2.5), and lists end to
end through every operator: values, and the demand each one passes upstream."""

from __future__ import annotations

from typing import Any

import pytest

import reactive_streams as rs

from .support import BatchProbe, Boom, Probe, Spy


def run(publisher: rs.Publisher[object], initial: int = rs.MAX_DEMAND) -> Probe:
    probe = Probe(initial)
    publisher.subscribe(probe)
    return probe


def test_map_applies_the_function_and_passes_demand_through() -> None:
    spy = Spy(rs.from_iterable(range(10)))
    probe = run(spy.map(lambda x: x * 10), initial=3)
    assert probe.items == [0, 10, 20]
    assert spy.requests == [3]


def test_map_function_failure_cancels_upstream_and_signals_the_error() -> None:
    def f(x: int) -> int:
        if x == 2:
            raise Boom("bad element")
        return x

    spy = Spy(rs.from_iterable(range(10)))
    probe = run(spy.map(f))
    assert probe.items == [0, 1] and isinstance(probe.error, Boom)
    assert spy.cancels == 1


def test_map_returning_none_is_a_null_element_error() -> None:
    probe = run(rs.from_iterable([1, 2]).map(lambda x: None))
    assert isinstance(probe.error, rs.NullElementError)


def test_filter_requests_a_replacement_for_each_dropped_element() -> None:
    spy = Spy(rs.from_iterable(range(100)))
    probe = run(spy.filter(lambda x: x % 10 == 0), initial=3)
    assert probe.items == [0, 10, 20]
    assert spy.delivered == spy.requested  # exactly what was asked for, no more
    assert spy.delivered == 21


def test_filter_predicate_failure_is_signalled() -> None:
    probe = run(rs.from_iterable([1, 2]).filter(lambda x: 1 / 0))
    assert isinstance(probe.error, ZeroDivisionError)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda p: p.take(-1), "count >= 0"),
        (lambda p: p.skip("3"), "needs an int"),
        (lambda p: p.batch(0), "size >= 1"),
        (lambda p: p.map(None), "§2.13|must not be None"),
        (lambda p: p.map(5), r"^map\(function\) needs a callable, got int 5$"),
        (lambda p: p.filter("x"), r"^filter\(predicate\) needs a callable, got str 'x'$"),
        (lambda p: p.flat_map(5), r"^flat_map\(function\) needs a callable, got int 5$"),
        (lambda p: p.flat_map(lambda x: x, concurrency=0), "concurrency"),
        (lambda p: p.flat_map(lambda x: x, prefetch=-1), "prefetch"),
    ],
)
def test_bad_operator_arguments_fail_at_once_with_a_clear_message(build, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises((ValueError, TypeError), match=message):
        build(rs.from_iterable([1]))


def test_operators_chain_fluently() -> None:
    result = list(
        rs.from_iterable(range(100))
        .map(lambda x: x + 1)
        .filter(lambda x: x % 2)
        .skip(5)
        .take(10)
        .batch(4)
        .iterate()
    )
    assert result == [[11, 13, 15, 17], [19, 21, 23, 25], [27, 29]]


def test_an_operator_cancels_a_second_upstream_subscription() -> None:  # §2.5
    probe = Probe()
    spy1, spy2 = Spy(rs.from_iterable([1])), Spy(rs.from_iterable([2]))
    mapped = rs.from_iterable([]).map(lambda x: x)
    # subscribe the same operator subscriber to two upstreams: capture it through a relay
    captured: list[rs.Subscriber[object]] = []

    class Capture(rs.Publisher[object]):
        def subscribe(self, subscriber: rs.Subscriber[object]) -> None:
            captured.append(subscriber)

    Capture().map(lambda x: x).subscribe(probe)
    spy1.subscribe(captured[0])
    spy2.subscribe(captured[0])
    assert spy2.cancels == 1 and spy1.cancels == 0
    del mapped


# Lists end to end: each operator's on_next_batch.

OPERATORS = {
    "map": lambda p: p.map(lambda x: x + 1),
    "filter": lambda p: p.filter(lambda x: x % 3 != 0),
    "take": lambda p: p.take(700),
    "skip": lambda p: p.skip(300),
    "batch": lambda p: p.batch(7),
    "map-filter-take": lambda p: p.map(lambda x: x * 2).filter(lambda x: x % 3).take(500),
}


def _reference(name: str, values: range) -> list[object]:
    items = list(values)
    if name == "map":
        return [x + 1 for x in items]
    if name == "filter":
        return [x for x in items if x % 3 != 0]
    if name == "take":
        return items[:700]
    if name == "skip":
        return items[300:]
    if name == "batch":
        return [items[i : i + 7] for i in range(0, len(items), 7)]
    return [y for y in (x * 2 for x in items) if y % 3][:500]


@pytest.mark.parametrize("name", list(OPERATORS))
@pytest.mark.parametrize("demand", [1, 5, 64, rs.MAX_DEMAND])
def test_a_chain_keeps_lists_end_to_end_when_its_source_emits_lists(name: str, demand: int) -> None:
    spy = Spy(rs.from_iterable(range(1_000)), bulk=True)
    probe = BatchProbe(demand)
    OPERATORS[name](spy).subscribe(probe)
    while not probe.done.is_set():
        probe.request(demand)
    assert probe.items == _reference(name, range(1_000)) and probe.completed
    assert probe.batches and sum(probe.batches) == len(probe.items)  # nothing one by one
    probe.assert_rules_held()  # §1.1: never more than requested, counted in elements


@pytest.mark.parametrize("name", list(OPERATORS))
def test_a_chain_goes_one_by_one_when_its_source_does(name: str) -> None:
    probe = BatchProbe(rs.MAX_DEMAND)
    OPERATORS[name](Spy(rs.from_iterable(range(1_000)))).subscribe(probe)  # Spy: one by one
    assert probe.items == _reference(name, range(1_000)) and probe.completed
    assert probe.batches == []
    probe.assert_rules_held()


@pytest.mark.parametrize("name", list(OPERATORS))
def test_a_chain_of_lists_into_a_subscriber_of_elements_stops_at_a_cancel(name: str) -> None:
    probe = Probe(rs.MAX_DEMAND, on_next_hook=lambda p, item: len(p.items) == 3 and p.cancel())
    spy = Spy(rs.from_iterable(range(1_000)), bulk=True)
    OPERATORS[name](spy).subscribe(probe)
    assert len(probe.items) == 3 and probe.signals_after_cancel == 0  # §3.12
    assert spy.cancels == 1  # §3.7: once, even where take had cancelled before the last


def test_filter_of_lists_asks_again_for_what_it_dropped_and_no_more() -> None:
    spy = Spy(rs.from_iterable(range(10_000)), bulk=True)
    probe = BatchProbe(10)
    spy.filter(lambda x: x % 4 == 0).subscribe(probe)
    assert probe.items == list(range(0, 40, 4))  # exactly the demand
    assert spy.requested == 37  # 10, then 7 for the 7 dropped, then 20 for what that dropped...
    probe.assert_rules_held()


def test_map_of_lists_delivers_what_came_before_a_failure_then_the_failure() -> None:
    def f(x: int) -> int:
        if x == 300:
            raise Boom("bad element")
        return x

    spy = Spy(rs.from_iterable(range(1_000)), bulk=True)
    probe = BatchProbe(rs.MAX_DEMAND)
    spy.map(f).subscribe(probe)
    assert probe.items == list(range(300)) and isinstance(probe.error, Boom)
    assert spy.cancels == 1


def test_map_of_lists_returning_none_ends_with_the_2_13_error_after_the_results_before() -> None:
    spy = Spy(rs.from_iterable(range(1_000)), bulk=True)
    probe = BatchProbe(rs.MAX_DEMAND)
    spy.map(lambda x: None if x == 10 else x).subscribe(probe)
    assert probe.items == list(range(10)) and isinstance(probe.error, rs.NullElementError)
    assert "§2.13" in str(probe.error) and spy.cancels == 1


def test_filter_of_lists_delivers_what_passed_before_a_failure_then_the_failure() -> None:
    def keep(x: int) -> bool:
        if x == 300:
            raise Boom("bad element")
        return x % 2 == 0

    spy = Spy(rs.from_iterable(range(1_000)), bulk=True)
    probe = BatchProbe(rs.MAX_DEMAND)
    spy.filter(keep).subscribe(probe)
    assert probe.items == list(range(0, 300, 2)) and isinstance(probe.error, Boom)
    assert spy.cancels == 1


def test_map_of_lists_checks_none_by_identity_when_elements_compare_oddly() -> None:
    class Odd:
        def __eq__(self, other: object) -> bool:
            raise Boom("no comparing")

        __hash__ = object.__hash__

    odd = [Odd() for _ in range(5)]
    probe = BatchProbe(rs.MAX_DEMAND)
    rs.from_iterable(range(6)).map(lambda i: odd[i] if i < 5 else None).subscribe(probe)
    assert probe.items == odd and isinstance(probe.error, rs.NullElementError)


# -- one element at a time: what a source that does not send lists delivers ---------------------


class Manual(rs.Publisher[Any]):
    """A source the test drives: each ``on_next`` (or ``on_next_batch``) is the test's call."""

    def __init__(self) -> None:
        self.subscriber: Any = None
        self.cancels = 0
        outer = self

        class _Subscription(rs.Subscription):
            def request(self, n: int) -> None:
                pass

            def cancel(self) -> None:
                outer.cancels += 1

        self._subscription = _Subscription()

    def subscribe(self, subscriber: rs.Subscriber[Any]) -> None:
        self.subscriber = subscriber
        subscriber.on_subscribe(self._subscription)


def _raise_boom(probe: Probe, item: Any) -> None:
    raise Boom("downstream")


# Each operator as an identity: map, filter, and the counting ones (whose elements go out by _emit).
IDENTITIES: dict[str, Any] = {"map": lambda x: x, "filter": lambda x: True, "take": 10, "skip": 0}


@pytest.mark.parametrize("operator", list(IDENTITIES))
@pytest.mark.parametrize("signal", ["on_next", "on_next_batch", "on_next_batch to a batch subscriber"])
def test_a_downstream_raising_is_cancelled_and_logged_naming_the_method(
    operator: str, signal: str, caplog: pytest.LogCaptureFixture
) -> None:
    source = Manual()
    identity = getattr(source, operator)(IDENTITIES[operator])
    probe = (BatchProbe if "batch subscriber" in signal else Probe)(initial=10, on_next_hook=_raise_boom)
    identity.subscribe(probe)
    if signal == "on_next":
        source.subscriber.on_next(1)
    else:
        source.subscriber.on_next_batch([1, 2])
    method = "on_next_batch" if "batch subscriber" in signal else "on_next"
    failures = [r for r in caplog.records if r.levelname == "ERROR"]
    assert [r.getMessage() for r in failures] == [
        f"§2.13: {type(probe).__name__}.{method} raised Boom; its subscription is cancelled and it gets "
        "no further signal"
    ]
    assert failures[0].exc_info is not None and str(failures[0].exc_info[1]) == "downstream"
    assert source.cancels == 1 and probe.items == [1]
    source.subscriber.on_next(3)  # §2.8: a late element, dropped
    assert probe.items == [1] and len(caplog.records) == 1


@pytest.mark.parametrize("signal", ["on_next", "on_next_batch"])
def test_map_returning_none_names_the_rule_on_either_path(signal: str) -> None:
    source = Manual()
    probe = Probe(initial=10)
    source.map(lambda x: None).subscribe(probe)
    getattr(source.subscriber, signal)(1 if signal == "on_next" else [1])
    assert isinstance(probe.error, rs.NullElementError)
    assert str(probe.error) == "§2.13: the map function returned None"
    assert source.cancels == 1


def test_filter_predicate_failure_one_element_at_a_time_cancels_and_signals_it() -> None:
    source = Manual()
    probe = Probe(initial=10)
    failure = Boom("predicate")

    def predicate(x: int) -> bool:
        raise failure

    source.filter(predicate).subscribe(probe)
    source.subscriber.on_next(1)
    assert probe.error is failure and source.cancels == 1


def test_an_operator_refuses_a_none_error_naming_the_rule() -> None:
    source = Manual()
    source.map(lambda x: x).subscribe(Probe())
    with pytest.raises(rs.NullElementError, match=r"^§2\.13: error must not be None$"):
        source.subscriber.on_error(None)


@pytest.mark.parametrize("operator", ["map", "filter"])
def test_after_a_cancel_a_late_element_reaches_no_user_function(operator: str) -> None:
    source = Manual()
    seen: list[int] = []

    def function(x: int) -> Any:
        seen.append(x)
        return x if operator == "map" else True

    probe = Probe(initial=10)
    getattr(source, operator)(function).subscribe(probe)
    source.subscriber.on_next(1)
    assert probe.subscription is not None
    probe.subscription.cancel()
    source.subscriber.on_next(2)  # §2.8: sent before the source saw the cancel
    assert seen == [1] and probe.items == [1] and source.cancels == 1


@pytest.mark.parametrize("operator", list(IDENTITIES))
def test_a_downstream_raising_in_on_subscribe_is_cancelled_and_logged(
    operator: str, caplog: pytest.LogCaptureFixture
) -> None:
    class Refusing(Probe):
        def on_subscribe(self, subscription: rs.Subscription) -> None:
            raise Boom("on_subscribe")

    source = Manual()
    getattr(source, operator)(IDENTITIES[operator]).subscribe(Refusing())
    assert [r.getMessage() for r in caplog.records if r.levelname == "ERROR"] == [
        "§2.13: Refusing.on_subscribe raised Boom; its subscription is cancelled and it gets "
        "no further signal"
    ]
    assert str(caplog.records[-1].exc_info[1]) == "on_subscribe"  # type: ignore[index]
    assert source.cancels == 1
