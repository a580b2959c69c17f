"""tap: each signal shown to its callback, in order and unchanged, and a callback that raises ends
the stream with its exception (on_cancel's is logged)."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

import reactive_streams as rs

from .support import WAIT, BatchProbe, Boom, Probe, Spy


def test_every_signal_is_shown_in_order_and_passed_on() -> None:
    seen: list[Any] = []
    tapped = rs.range(0, 3).tap(
        on_next=lambda x: seen.append(("next", x)),
        on_error=lambda e: seen.append(("error", e)),
        on_complete=lambda: seen.append("complete"),
        on_request=lambda n: seen.append(("request", n)),
        on_cancel=lambda: seen.append("cancel"),
    )
    probe = Probe(2)
    tapped.subscribe(probe)
    probe.request(5)
    assert probe.items == [0, 1, 2] and probe.completed
    assert seen == [("request", 2), ("next", 0), ("next", 1), ("request", 5), ("next", 2), "complete"]
    errors: list[BaseException] = []
    failed = Probe(1)
    rs.error(Boom("x")).tap(on_error=errors.append).subscribe(failed)
    assert isinstance(failed.error, Boom) and errors == [failed.error]
    cancels: list[int] = []
    cancelled = Probe(1)
    rs.never().tap(on_cancel=lambda: cancels.append(1)).subscribe(cancelled)
    cancelled.cancel()
    cancelled.cancel()
    assert cancels == [1]  # once (§3.7)


@pytest.mark.parametrize("bulk", [False, True], ids=["one by one", "lists"])
def test_an_on_next_that_raises_ends_the_stream_after_the_elements_before(bulk: bool) -> None:
    def check(x: int) -> None:
        if x == 3:
            raise Boom("bad element")

    spy = Spy(rs.from_iterable(range(10)), bulk=bulk)
    probe = BatchProbe(10) if bulk else Probe(10)
    spy.tap(on_next=check).subscribe(probe)
    assert probe.items == [0, 1, 2] and isinstance(probe.error, Boom) and spy.cancels == 1


def test_on_error_and_on_complete_that_raise() -> None:
    def fails(*args: Any) -> None:
        raise KeyError("callback failed")

    replaced = Probe(1)
    rs.error(Boom("x")).tap(on_error=fails).subscribe(replaced)
    assert isinstance(replaced.error, KeyError) and isinstance(replaced.error.__context__, Boom)
    failed = Probe(5)
    rs.just(1).tap(on_complete=fails).subscribe(failed)
    assert failed.items == [1] and isinstance(failed.error, KeyError) and not failed.completed


def test_an_on_request_that_raises_cancels_upstream_and_ends_the_stream() -> None:
    spy = Spy(rs.from_iterable(range(100)))
    probe = Probe(2)
    spy.tap(on_request=lambda n: 1 / (n - 7)).subscribe(probe)
    probe.request(7)
    assert probe.items == [0, 1] and isinstance(probe.error, ZeroDivisionError) and spy.cancels == 1
    assert spy.requests == [2]  # the failing request went no further


def test_an_on_request_that_raises_from_another_thread_while_elements_flow() -> None:  # §1.3
    source = rs.AsyncIterablePublisher(range(10**6), batch_size=64)
    flowing = threading.Event()

    def refuse(n: int) -> None:
        if n == 1:
            raise Boom("refused")

    probe = Probe(0, on_next_hook=lambda p, item: flowing.set())
    source.tap(on_request=refuse).subscribe(probe)
    probe.await_subscribed()  # on the publisher's executor
    probe.request(5000)
    assert flowing.wait(WAIT)
    probe.request(1)
    probe.await_done()
    assert isinstance(probe.error, Boom)
    probe.assert_rules_held()  # the error never overlapped an on_next


def test_an_on_cancel_that_raises_is_logged_and_the_cancel_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    spy = Spy(rs.never())
    probe = Probe(1)
    spy.tap(on_cancel=lambda: 1 / 0).subscribe(probe)
    with caplog.at_level(logging.ERROR, logger="reactive_streams"):
        probe.cancel()
    assert spy.cancels == 1
    assert any("tap(on_cancel=) raised" in r.getMessage() and r.exc_info for r in caplog.records)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: rs.tap(), r"^tap\(\) needs at least one callback of on_next, on_error"),
        (lambda: rs.tap(on_next=5), r"^tap\(on_next=\) needs a callable, got int 5$"),
        (lambda: rs.tap(on_cancel="x"), r"^tap\(on_cancel=\) needs a callable"),
    ],
)
def test_bad_arguments_fail_at_once_with_a_clear_message(build: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        build()
