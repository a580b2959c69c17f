"""catch, on_error_return and retry: what continues the stream after an error, and that what
takes over is asked for exactly the demand outstanding: never again for what was delivered."""

from __future__ import annotations

import logging
from typing import Any

import pytest

import reactive_streams as rs

from .support import Boom, Probe, Spy


def run(publisher: rs.Publisher[Any], initial: int = rs.MAX_DEMAND) -> Probe:
    probe = Probe(initial)
    publisher.subscribe(probe)
    return probe


def failing_after(count: int, message: str = "failed") -> rs.Publisher[int]:
    return rs.range(0, count).append(rs.error(Boom(message)))


class Attempts:
    """A source whose first ``failures`` subscriptions fail after ``count`` elements; the next
    ones complete after ``count`` more (each from where its elements left off)."""

    def __init__(self, failures: int, count: int = 3) -> None:
        self.failures, self.count = failures, count
        self.spies: list[Spy] = []
        self.publisher: rs.Publisher[int] = rs.defer(self._next)

    def _next(self) -> rs.Publisher[int]:
        start = len(self.spies) * self.count
        elements = rs.range(start, self.count)
        if len(self.spies) < self.failures:
            elements = elements.append(rs.error(Boom(f"attempt {len(self.spies) + 1}")))
        spy = Spy(elements)
        self.spies.append(spy)
        return spy


def test_catch_continues_with_the_handlers_publisher() -> None:
    caught: list[BaseException] = []

    def handler(error: BaseException) -> rs.Publisher[str]:
        caught.append(error)
        return rs.just("recovered")

    assert list(failing_after(2).catch(handler).iterate()) == [0, 1, "recovered"]
    assert isinstance(caught[0], Boom)
    assert list(rs.range(0, 2).catch(handler).iterate()) == [0, 1] and len(caught) == 1  # no error


def test_catch_asks_the_fallback_for_the_demand_outstanding() -> None:
    fallback = Spy(rs.range(100, 50))
    probe = run(failing_after(3).catch(lambda e: fallback), initial=5)
    assert probe.items == [0, 1, 2, 100, 101] and fallback.requests == [2]


def test_catch_recovers_once_and_the_fallbacks_error_ends_the_stream() -> None:
    probe = run(failing_after(1, "first").catch(lambda e: failing_after(1, "second")))
    assert probe.items == [0, 0] and str(probe.error) == "second"


def test_a_handler_that_raises_ends_the_stream_with_its_exception_in_context() -> None:
    def handler(error: BaseException) -> rs.Publisher[Any]:
        raise KeyError("handler failed")

    probe = run(failing_after(1).catch(handler))
    assert isinstance(probe.error, KeyError) and isinstance(probe.error.__context__, Boom)
    passed_on = run(failing_after(1).catch(lambda e: (_ for _ in ()).throw(e)))
    assert isinstance(passed_on.error, Boom)
    wrong = run(failing_after(1).catch(lambda e: [1, 2]))  # type: ignore[arg-type,return-value]
    assert isinstance(wrong.error, TypeError)
    assert "catch(handler)'s handler result needs a reactive_streams.Publisher, got list" in str(wrong.error)


def test_a_3_9_error_is_never_recovered_from() -> None:
    recovered: list[BaseException] = []
    probe = run(rs.range(0, 100).catch(lambda e: recovered.append(e) or rs.just(-1)), initial=2)  # type: ignore[func-returns-value]
    probe.request(0)
    assert isinstance(probe.error, rs.IllegalDemandError) and recovered == [] and probe.items == [0, 1]
    retried = run(rs.range(0, 100).retry(5), initial=2)
    retried.request(-3)
    assert isinstance(retried.error, rs.IllegalDemandError) and retried.items == [0, 1]


def test_on_error_return_ends_with_one_last_element() -> None:
    assert list(failing_after(2).on_error_return(-1).iterate()) == [0, 1, -1]
    assert list(failing_after(1).on_error_return(lambda e: f"after {e}").iterate()) == [0, "after failed"]
    assert list(rs.just(1).on_error_return(-1).iterate()) == [1]
    probe = run(failing_after(1).on_error_return(-1), initial=1)
    assert probe.items == [0] and not probe.done.is_set()  # the element waits for demand (§1.1)
    probe.request(1)
    assert probe.items == [0, -1] and probe.completed


def test_on_error_return_of_none() -> None:
    with pytest.raises(rs.NullElementError, match=r"§2\.13"):
        rs.on_error_return(None)
    probe = run(failing_after(1).on_error_return(lambda e: None))
    assert isinstance(probe.error, rs.NullElementError) and isinstance(probe.error.__cause__, Boom)


def test_retry_subscribes_again_and_never_asks_again_for_what_was_delivered() -> None:
    attempts = Attempts(failures=2)
    probe = run(attempts.publisher.retry(2), initial=8)
    assert probe.items == [0, 1, 2, 3, 4, 5, 6, 7] and not probe.done.is_set()
    assert [spy.requests for spy in attempts.spies] == [[8], [5], [2]]  # the outstanding demand
    probe.request(10)
    assert probe.items == list(range(9)) and probe.completed


def test_retry_gives_up_after_times_and_signals_the_last_error() -> None:
    attempts = Attempts(failures=5)
    probe = run(attempts.publisher.retry(2))
    assert probe.items == list(range(9)) and str(probe.error) == "attempt 3" and len(attempts.spies) == 3
    assert str(run(failing_after(0).retry(0)).error) == "failed"


def test_retry_when_the_predicate_says_so() -> None:
    attempts = Attempts(failures=5)
    probe = run(attempts.publisher.retry(None, when=lambda e: str(e) != "attempt 4"))
    assert str(probe.error) == "attempt 4" and len(attempts.spies) == 4
    raising = run(Attempts(failures=1).publisher.retry(3, when=lambda e: 1 / 0))
    assert isinstance(raising.error, ZeroDivisionError) and isinstance(raising.error.__context__, Boom)


def test_retry_of_a_source_that_fails_at_once_loops_without_recursion() -> None:  # §3.3
    probe = run(rs.error(Boom("always")).retry(5000))
    assert str(probe.error) == "always"


def test_retry_without_limit_until_it_succeeds() -> None:
    attempts = Attempts(failures=50, count=1)
    assert list(attempts.publisher.retry(None).iterate()) == list(range(51))


def test_cancel_reaches_the_current_attempt() -> None:
    attempts = Attempts(failures=1, count=100)
    probe = run(attempts.publisher.retry(1), initial=150)
    probe.cancel()
    assert attempts.spies[1].cancels == 1 and not probe.done.is_set()


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda: rs.catch("x"), TypeError, r"^catch\(handler\) needs a callable, got str 'x'$"),
        (lambda: rs.retry(-1), ValueError, r"^retry\(times\) needs times >= 0, got -1$"),
        (lambda: rs.retry("3"), TypeError, r"^retry\(times\) needs an int or None, got str '3'$"),
        (lambda: rs.retry(1, when=5), TypeError, r"^retry\(when=\) needs a callable, got int 5$"),
    ],
)
def test_bad_arguments_fail_at_once_with_a_clear_message(build: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        build()


def test_a_subscriber_that_raises_is_cancelled_and_logged(caplog: pytest.LogCaptureFixture) -> None:  # §2.13
    attempts = Attempts(failures=1, count=100)

    def explode(probe: Probe, item: Any) -> None:
        raise Boom("subscriber failed")

    with caplog.at_level(logging.ERROR, logger="reactive_streams"):
        probe = Probe(200, on_next_hook=explode)
        attempts.publisher.retry(1).subscribe(probe)
    assert len(probe.items) == 1 and not probe.done.is_set()
    assert attempts.spies[0].cancels == 1 and len(attempts.spies) == 1
    assert any("§2.13" in r.getMessage() for r in caplog.records)
