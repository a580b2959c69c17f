"""Sources: just, empty, never, error, range, repeat, defer and generate: what each emits, that
it emits only on demand, and its clear errors for bad arguments."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest

import reactive_streams as rs

from .support import Boom, Probe


def run(publisher: rs.Publisher[Any], initial: int = rs.MAX_DEMAND) -> Probe:
    probe = Probe(initial)
    publisher.subscribe(probe)
    return probe


def test_just_emits_its_values_to_every_subscriber() -> None:
    numbers = rs.just(1, 2, 3)
    assert list(numbers.iterate()) == list(numbers.iterate()) == [1, 2, 3]
    assert list(rs.just().iterate()) == []


def test_just_refuses_none_at_once() -> None:
    with pytest.raises(rs.NullElementError, match=r"§2\.13"):
        rs.just(1, None)


def test_empty_completes_without_a_request() -> None:  # §1.2, §2.9
    probe = run(rs.empty(), initial=0)
    assert probe.completed and probe.items == []


def test_never_signals_nothing_but_a_3_9_error_and_lets_go_after_cancel() -> None:
    probe = run(rs.never(), initial=5)
    assert probe.subscription is not None and not probe.done.is_set() and probe.items == []
    probe.request(0)
    assert isinstance(probe.error, rs.IllegalDemandError)
    quiet = Probe(3)
    rs.never().subscribe(quiet.relay())
    quiet.cancel()
    quiet.await_released()  # §3.13
    assert not quiet.done.is_set()


def test_error_is_signalled_without_a_request() -> None:  # §1.4, §2.10
    boom = Boom("no data")
    probe = run(rs.error(boom), initial=0)
    assert probe.error is boom and probe.items == []


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda: rs.error(Boom), TypeError, r"^error\(exception\) needs an exception instance, got type"),
        (lambda: rs.error("x"), TypeError, "needs an exception instance, got str 'x'"),
        (lambda: rs.range(0, -1), ValueError, r"^range\(start, count\) needs count >= 0, got -1$"),
        (lambda: rs.range(0.5, 3), TypeError, "needs an int start, got float 0.5"),
        (lambda: rs.range(0, True), TypeError, "needs an int, got bool True"),
        (lambda: rs.repeat(None), rs.NullElementError, "§2.13"),
        (lambda: rs.repeat(1, -2), ValueError, "count >= 0"),
        (lambda: rs.defer(5), TypeError, r"^defer\(factory\) needs a callable, got int 5$"),
        (lambda: rs.generate(0, None), rs.NullElementError, r"^generate\(state, step\): the function"),
    ],
)
def test_bad_source_arguments_fail_at_once(build: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        build()


def test_range_counts_from_start_and_completes_with_the_last() -> None:
    probe = run(rs.range(5, 3), initial=3)
    assert probe.items == [5, 6, 7] and probe.completed  # sized: no extra request (§1.5)
    assert list(rs.range(2**63, 2).iterate()) == [2**63, 2**63 + 1]
    assert list(rs.range(-3, 0).iterate()) == []


def test_repeat_counted_and_endless() -> None:
    assert list(rs.repeat("a", 3).iterate()) == ["a", "a", "a"]
    probe = run(rs.repeat("b", 2), initial=2)
    assert probe.completed  # sized: completes with the last
    assert list(rs.repeat("c").take(5).iterate()) == ["c"] * 5
    endless = run(rs.repeat(1), initial=7)
    assert len(endless.items) == 7 and not endless.done.is_set()  # §1.1: only what was requested
    endless.cancel()


def test_defer_makes_a_publisher_per_subscriber() -> None:
    made: list[int] = []

    def factory() -> rs.Publisher[int]:
        made.append(len(made))
        return rs.just(len(made))

    deferred = rs.defer(factory)
    assert made == []  # nothing until a subscriber comes
    assert list(deferred.iterate()) == [1]
    assert list(deferred.iterate()) == [2]


def test_defer_signals_a_failing_factory_after_on_subscribe() -> None:  # §1.9
    probe = run(rs.defer(lambda: 1 / 0), initial=0)  # type: ignore[arg-type,return-value]
    assert probe.subscription is not None and isinstance(probe.error, ZeroDivisionError)
    wrong = run(rs.defer(lambda: [1, 2]), initial=0)  # type: ignore[arg-type,return-value]
    assert isinstance(wrong.error, TypeError)
    assert "defer(factory)'s factory() result needs a reactive_streams.Publisher, got list [1, 2]" in str(
        wrong.error
    )


def test_generate_calls_step_only_when_there_is_demand() -> None:  # §1.1
    calls: list[int] = []

    def step(n: int) -> tuple[int, int] | None:
        calls.append(n)
        return (n, n + 1) if n < 10 else None

    probe = run(rs.generate(0, step), initial=0)
    assert calls == []
    probe.request(3)
    assert probe.items == [0, 1, 2] and calls == [0, 1, 2]
    probe.request(100)
    assert probe.items == list(range(10)) and probe.completed
    assert calls == list(range(11))  # the last call said: the end


def test_generate_starts_every_subscriber_from_the_same_state() -> None:
    fib = rs.generate((0, 1), lambda s: (s[0], (s[1], s[0] + s[1])))
    assert list(fib.take(8).iterate()) == list(fib.take(8).iterate()) == [0, 1, 1, 2, 3, 5, 8, 13]


def test_generate_ends_with_what_step_raises_after_the_elements_before() -> None:  # §1.4
    def step(n: int) -> tuple[int, int]:
        if n == 3:
            raise Boom("step failed")
        return n, n + 1

    probe = run(rs.generate(0, step))
    assert probe.items == [0, 1, 2] and isinstance(probe.error, Boom)


def test_generate_says_what_step_should_return() -> None:
    probe = run(rs.generate(0, lambda n: n + 1))  # type: ignore[arg-type,return-value]
    assert isinstance(probe.error, TypeError)
    assert str(probe.error) == (
        "generate(state, step): step(state) must return (element, next_state), or None to end, got int 1"
    )


def test_generate_lets_go_of_a_subscribers_state_after_cancel() -> None:  # §3.13
    class State:
        pass

    made: list[weakref.ref[State]] = []

    def step(state: State) -> tuple[int, State]:
        following = State()
        made.append(weakref.ref(following))
        return 1, following

    probe = run(rs.generate(State(), step), initial=3)
    assert len(made) == 3 and made[-1]() is not None
    probe.cancel()
    gc.collect()
    assert [ref() for ref in made] == [None, None, None]
