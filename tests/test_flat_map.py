"""flat_map, merge and concat: ordering, the concurrency and prefetch bounds, failures."""

from __future__ import annotations

import threading

import pytest

import reactive_streams as rs

from .support import BatchProbe, Boom, Probe, Spy


def test_concat_keeps_order_and_subscribes_lazily() -> None:
    spies = [Spy(rs.from_iterable(range(i * 10, i * 10 + 3))) for i in range(3)]
    probe = Probe(4)
    rs.concat(*spies).subscribe(probe)
    assert probe.items == [0, 1, 2, 10]
    assert spies[2].requests == []  # not subscribed before its turn
    probe.request(100)
    assert probe.items == [0, 1, 2, 10, 11, 12, 20, 21, 22] and probe.completed


def test_concat_with_is_the_fluent_form() -> None:
    assert list(rs.from_iterable([1]).concat_with(rs.from_iterable([2, 3])).iterate()) == [1, 2, 3]


def test_concat_of_nothing_completes() -> None:
    probe = Probe(1)
    rs.concat().subscribe(probe)
    assert probe.completed and probe.items == []


def test_concat_of_many_synchronous_sources_does_not_recurse() -> None:  # §3.3
    sources = [rs.from_iterable([i]) for i in range(5000)]
    assert list(rs.concat(*sources).iterate()) == list(range(5000))


def test_merge_takes_elements_from_threads_serially() -> None:
    sources = [rs.AsyncIterablePublisher(range(i * 1000, i * 1000 + 1000)) for i in range(4)]
    probe = Probe(rs.MAX_DEMAND)
    rs.merge(*sources).subscribe(probe)
    probe.await_done()
    probe.assert_rules_held()
    assert sorted(probe.items) == list(range(4000))


def test_flat_map_subscribes_at_most_concurrency_inners() -> None:
    active = 0
    peak = 0
    lock = threading.Lock()

    class Tracked(rs.Publisher[int]):
        def __init__(self, value: int) -> None:
            self.value = value

        def subscribe(self, subscriber: rs.Subscriber[int]) -> None:
            nonlocal active, peak
            with lock:
                active += 1
                peak = max(peak, active)

            def done() -> None:
                nonlocal active
                with lock:
                    active -= 1

            rs.AsyncIterablePublisher([self.value] * 5).subscribe(_OnEnd(subscriber, done))

    upstream = Spy(rs.from_iterable(range(50)))
    probe = Probe(rs.MAX_DEMAND)
    upstream.flat_map(Tracked, concurrency=3).subscribe(probe)
    probe.await_done()
    assert len(probe.items) == 250 and peak <= 3
    assert upstream.requests[0] == 3 and all(n <= 3 for n in upstream.requests)


def test_flat_map_buffers_at_most_prefetch_per_inner() -> None:
    inner = Spy(rs.from_iterable(range(1000)))
    probe = Probe(0)
    rs.from_iterable([0]).flat_map(lambda _: inner, prefetch=8).subscribe(probe)
    assert inner.requested == 8
    probe.request(6)  # 6 of 8 consumed: 3/4 of prefetch, so 6 more are asked for
    assert inner.requested == 14 and len(probe.items) == 6


def test_flat_map_function_failure_cancels_upstream() -> None:
    upstream = Spy(rs.from_iterable(range(100)))

    def f(x: int) -> rs.Publisher[int]:
        if x == 1:
            raise Boom()
        return rs.from_iterable([x])

    probe = Probe(rs.MAX_DEMAND)
    upstream.flat_map(f).subscribe(probe)
    assert isinstance(probe.error, Boom) and upstream.cancels == 1


def test_inner_failure_cancels_the_other_inners() -> None:
    def failing():  # type: ignore[no-untyped-def]
        yield 1
        raise Boom()

    other = Spy(rs.from_iterable(range(10**6)))
    probe = Probe(rs.MAX_DEMAND)
    rs.merge(other, rs.from_iterable(failing())).subscribe(probe)
    probe.await_done()
    assert isinstance(probe.error, Boom) and other.cancels == 1


def test_cancel_reaches_every_source() -> None:
    a, b = Spy(rs.from_iterable(range(100))), Spy(rs.from_iterable(range(100)))
    probe = Probe(3)
    rs.merge(a, b).subscribe(probe)
    probe.cancel()
    assert a.cancels == 1 and b.cancels == 1


class _OnEnd(rs.Subscriber[int]):
    def __init__(self, target: rs.Subscriber[int], on_end) -> None:  # type: ignore[no-untyped-def]
        self.target, self.on_end = target, on_end

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        self.target.on_subscribe(subscription)

    def on_next(self, item: int) -> None:
        self.target.on_next(item)

    def on_error(self, exc: BaseException) -> None:
        self.on_end()
        self.target.on_error(exc)

    def on_complete(self) -> None:
        self.on_end()
        self.target.on_complete()


def test_a_list_of_publishers_is_refused_saying_to_unpack_it() -> None:
    publishers = [rs.from_iterable([1]), rs.from_iterable([2])]
    for combine in (rs.merge, rs.concat):
        name = combine.__name__
        with pytest.raises(
            TypeError, match=rf"^{name}\(\*publishers\) needs a reactive_streams.Publisher, got list"
        ):
            combine(publishers)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=rf"unpack it: {name}\(\*publishers\)$"):
            combine(publishers)  # type: ignore[arg-type]
        assert sorted(rs.iterate(combine(*publishers))) == [1, 2]
    with pytest.raises(TypeError, match=r"got int 1$"):
        rs.merge(rs.from_iterable([1]), 1)  # type: ignore[arg-type]


class Hot(rs.Publisher[str]):
    """One subscriber; the test pushes elements (within its demand, §1.1) and the end."""

    def __init__(self) -> None:
        self.subscriber: rs.Subscriber[str] | None = None
        self.demand = 0

    def subscribe(self, subscriber: rs.Subscriber[str]) -> None:
        hot = self

        class Counted(rs.Subscription):
            def request(self, n: int) -> None:
                hot.demand += n

            def cancel(self) -> None:
                hot.subscriber = None

        self.subscriber = subscriber
        subscriber.on_subscribe(Counted())

    def push(self, item: str) -> None:
        assert self.subscriber is not None and self.demand > 0
        self.demand -= 1
        self.subscriber.on_next(item)

    def complete(self) -> None:
        assert self.subscriber is not None
        self.subscriber.on_complete()


@pytest.mark.parametrize("operator", ["merge", "concat", "flat_map"])
def test_an_inner_that_sends_its_last_element_and_completes_during_on_next_loses_nothing(
    operator: str,
) -> None:
    # The pass that delivers "a1" is still running when "a2" and the completion arrive: the
    # inner must stay until a later pass has delivered "a2", and only then count as done.
    first, second = Hot(), Hot()

    def during_on_next(probe: Probe, item: str) -> None:
        if item == "a1":
            first.push("a2")
            first.complete()
        elif item == "b1":
            second.push("b2")
            second.complete()

    probe = Probe(10, on_next_hook=during_on_next)
    if operator == "flat_map":
        publisher = rs.from_iterable([first, second]).flat_map(lambda p: p, concurrency=2)
    else:
        publisher = getattr(rs, operator)(first, second)
    publisher.subscribe(probe)
    first.push("a1")
    if operator == "concat":
        assert probe.items == ["a1", "a2"]  # the second is subscribed once the first is done
    second.push("b1")
    probe.await_done()
    probe.assert_rules_held()
    assert sorted(probe.items) == ["a1", "a2", "b1", "b2"] and probe.completed


COMBINERS = {
    "merge": lambda *ps: rs.merge(*ps, prefetch=64),
    "concat": lambda *ps: rs.concat(*ps, prefetch=64),
    "flat_map": lambda *ps: rs.from_iterable(ps).flat_map(lambda p: p, concurrency=2, prefetch=64),
}


@pytest.mark.parametrize("name", list(COMBINERS))
@pytest.mark.parametrize("demand", [1, 50, rs.MAX_DEMAND])
def test_lists_from_the_inners_go_downstream_as_lists_within_demand(name: str, demand: int) -> None:
    inners = [Spy(rs.from_iterable(range(i * 1_000, i * 1_000 + 500)), bulk=True) for i in range(3)]
    probe = BatchProbe(demand)
    COMBINERS[name](*inners).subscribe(probe)
    while not probe.done.is_set():
        probe.request(demand)
    expected = [x for i in range(3) for x in range(i * 1_000, i * 1_000 + 500)]
    assert sorted(probe.items) == expected and probe.completed
    if name == "concat":
        assert probe.items == expected
    assert probe.batches and sum(probe.batches) == len(expected)
    assert all(spy.batches for spy in inners)  # the inners took lists too
    probe.assert_rules_held()  # §1.1 in elements


def test_flat_map_of_lists_buffers_at_most_prefetch_per_inner() -> None:
    inner = Spy(rs.from_iterable(range(1000)), bulk=True)
    probe = BatchProbe(0)
    rs.from_iterable([0]).flat_map(lambda _: inner, prefetch=8).subscribe(probe)
    assert inner.requested == 8 and inner.batches == 1
    probe.request(6)  # 6 of 8 consumed, as one list: 6 more are asked for
    assert inner.requested == 14 and probe.items == list(range(6)) and probe.batches == [6]
    probe.request(100)
    assert inner.requested - len(probe.items) <= 8  # buffered plus outstanding, per inner


@pytest.mark.parametrize("operator", ["flat_map", "concat_map"])
def test_a_function_that_returns_no_publisher_ends_the_stream_with_a_clear_error(operator: str) -> None:
    spy = Spy(rs.from_iterable(range(10**6)))  # still live when the first result comes
    probe = Probe(rs.MAX_DEMAND)
    getattr(spy, operator)(lambda x: [x, x]).subscribe(probe)
    probe.await_done()
    assert isinstance(probe.error, TypeError) and spy.cancels == 1
    assert str(probe.error) == (
        f"{operator}(function)'s result needs a reactive_streams.Publisher, got list [0, 0]; "
        "for the elements of a list or another iterable, pass rs.from_iterable(...)"
    )
