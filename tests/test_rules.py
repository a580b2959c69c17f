"""One test per rule the core can show, each run over every reference publisher and operator."""

from __future__ import annotations

import gc
import logging
import sys
import threading
import weakref
from typing import Any

import pytest

import reactive_streams as rs

from .support import SOURCE_IDS, SOURCES, WAIT, Boom, Probe, Source, Upstream, run_threads, wait_for

pytestmark = pytest.mark.parametrize("source", SOURCES, ids=SOURCE_IDS)


def subscribe(
    source: Source, count: int, initial: int = 0, upstream: Upstream | None = None, **kwargs: Any
) -> Probe:
    """A probe subscribed through its relay, so that `Probe.await_released` can tell when the
    publisher has let go of it."""
    probe = Probe(initial, **kwargs)
    source(count, upstream=upstream).subscribe(probe.relay())
    probe.await_subscribed()
    return probe


def received(source: Source, probe: Probe, count: int) -> None:
    expected = source.expected(count)
    items = probe.items if source.ordered else sorted(probe.items)
    assert items == expected


def test_rule_1_1_never_more_on_next_than_requested(source: Source) -> None:
    probe = subscribe(source, 50)
    for step in (1, 2, 3, 5, 8):
        probe.request(step)
        probe.await_items(probe.requested)
        assert len(probe.items) == probe.requested
    probe.cancel()
    probe.assert_rules_held()


def test_rule_1_2_fewer_elements_then_complete(source: Source) -> None:
    probe = subscribe(source, 3, initial=10)
    probe.await_done()
    assert probe.completed and probe.error is None
    received(source, probe, 3)
    probe.assert_rules_held()


def test_rule_1_3_signals_are_serial_under_concurrent_requests(source: Source) -> None:
    probe = subscribe(source, 400)
    serial = threading.Lock()  # §2.7: the callers make requests serially, from many threads

    def requester() -> None:
        for _ in range(50):
            with serial:
                probe.request(2)

    run_threads(requester, 4)
    probe.await_items(400)
    probe.request(1)
    probe.await_done()
    received(source, probe, 400)
    probe.assert_rules_held()


def test_rule_1_4_failure_is_signalled_with_on_error(source: Source) -> None:
    probe = Probe(initial=100)
    source(5, Boom("source failed")).subscribe(probe)
    probe.await_done()
    assert isinstance(probe.error, Boom)
    received(source, probe, 5)
    probe.assert_rules_held()


def test_rule_1_5_completion_is_signalled(source: Source) -> None:
    probe = subscribe(source, 20, initial=rs.MAX_DEMAND)
    probe.await_done()
    assert probe.completed
    received(source, probe, 20)


def test_rule_1_7_no_signal_after_terminal(source: Source) -> None:
    probe = subscribe(source, 5, initial=5)
    probe.request(5)
    probe.await_done()
    probe.request(5)  # §3.6 after terminal: nothing may follow
    probe.cancel()
    probe.assert_rules_held()
    assert probe.completed and probe.error is None


def test_rule_1_8_cancel_stops_signals_and_reaches_upstream(source: Source) -> None:
    upstream = Upstream()
    probe = subscribe(source, 1000, initial=10, upstream=upstream)
    probe.await_items(10)
    probe.cancel()
    probe.request(100)  # §3.6: a no-op now
    upstream.await_cancelled()
    probe.await_released()  # nothing can signal the probe any more: count what it got
    assert len(probe.items) == 10  # §1.1 bounds what may still arrive (§2.8)
    assert not probe.done.is_set()
    probe.assert_rules_held()


def test_rule_1_9_subscribe_none_raises_type_error(source: Source) -> None:
    with pytest.raises(TypeError, match=r"§1\.9"):
        source(3).subscribe(None)  # type: ignore[arg-type]


def test_rule_1_9_on_subscribe_comes_first(source: Source) -> None:
    probe = subscribe(source, 3, initial=4)
    probe.await_done()
    probe.assert_rules_held()


def test_rule_2_13_none_element_is_refused(source: Source) -> None:
    if source.name in ("submission", "processor", "from_async_iterable", "async_iterable"):
        publisher: rs.Publisher[Any] = {
            "submission": lambda: _submit_none(),
            "processor": lambda: _processor_of([1, None]),
            "from_async_iterable": lambda: rs.from_async_iterable(_async_values([1, None]), _loop()),
            "async_iterable": lambda: rs.AsyncIterablePublisher([1, None]),
        }[source.name]()
        expected_items = 0 if source.name == "submission" else 1
    else:
        publisher = _through(source, [1, None])
        expected_items = 1
    probe = Probe(initial=10)
    if isinstance(publisher, _Raises):
        with pytest.raises(TypeError, match=r"§2\.13"):
            publisher.run()
        return
    publisher.subscribe(probe)
    probe.await_done()
    assert isinstance(probe.error, rs.NullElementError) and isinstance(probe.error, TypeError)
    assert "§2.13" in str(probe.error)
    assert len(probe.items) == expected_items


def test_rule_2_13_raising_subscriber_is_cancelled_and_logged(
    source: Source, caplog: pytest.LogCaptureFixture
) -> None:
    pulled: list[int] = []

    def counting() -> Any:
        for i in range(1000):
            pulled.append(i)
            yield i

    def explode(probe: Probe, item: Any) -> None:
        raise Boom("subscriber failed")

    with caplog.at_level(logging.ERROR, logger="reactive_streams"):
        probe = Probe(initial=100, on_next_hook=explode)
        publisher = _through(source, counting()) if source.name not in _NOT_WRAPPABLE else source(1000)
        publisher.subscribe(probe)
        probe.await_items(1)
        # The log comes once the publisher has cancelled (its record's traceback holds the
        # subscriber, so await_released cannot serve here).
        wait_for(
            lambda: any("§2.13" in r.getMessage() and r.exc_info for r in caplog.records),
            "the §2.13 failure to be logged with its traceback",
        )
    assert len(probe.items) == 1
    assert not probe.done.is_set()
    if source.name not in _NOT_WRAPPABLE and source.synchronous:
        ahead = 32 if source.name in ("concat", "flat_map", "concat_map") else 0  # their prefetch
        if source.name not in ("from_iterable", "concat", "flat_map", "concat_map", "generate", "defer"):
            ahead = 100  # they take from_iterable's lists: one pull of what was requested, no more
        if source.name == "on_backpressure_buffer":
            ahead = 1000  # it asks for everything: what a strategy for hot sources is for
        assert len(pulled) <= 2 + ahead  # cancelled at once: the source was not drained


def test_rule_3_2_and_3_3_request_inside_on_next_does_not_recurse(source: Source) -> None:
    depths: list[int] = []

    def one_more(probe: Probe, item: Any) -> None:
        depths.append(_depth())
        probe.request(1)

    probe = Probe(initial=1, on_next_hook=one_more)
    source(3000).subscribe(probe)
    probe.await_done()
    received(source, probe, 3000)
    assert max(depths) - min(depths) < 100, "the stack grew with each element (§3.3)"
    probe.assert_rules_held()


def test_rule_3_5_and_3_7_cancel_is_idempotent_and_thread_safe(source: Source) -> None:
    upstream = Upstream()
    probe = subscribe(source, 1000, initial=5, upstream=upstream)
    assert probe.subscription is not None
    run_threads(probe.subscription.cancel, 8)
    probe.cancel()
    probe.cancel()
    probe.request(10)
    upstream.await_cancelled()
    probe.await_released()
    assert len(probe.items) <= 5
    assert not probe.done.is_set()
    probe.assert_rules_held()


def test_rule_3_6_request_after_cancel_is_a_no_op(source: Source) -> None:
    probe = subscribe(source, 100)
    probe.cancel()
    probe.request(10)
    probe.request(0)  # not even a §3.9 error after cancel
    probe.await_released()
    assert probe.items == [] and not probe.done.is_set()


@pytest.mark.parametrize("bad", [0, -1, -(2**63)])
def test_rule_3_9_non_positive_request_signals_value_error(source: Source, bad: int) -> None:
    probe = subscribe(source, 100)
    probe.request(bad)
    probe.await_done()
    assert isinstance(probe.error, rs.IllegalDemandError)
    assert isinstance(probe.error, ValueError)
    assert "§3.9" in str(probe.error)
    probe.assert_rules_held()


def test_rule_3_9_after_elements_and_with_a_non_integer(source: Source) -> None:
    probe = subscribe(source, 100, initial=3)
    probe.await_items(3)
    probe.subscription.request("seven")  # type: ignore[arg-type,union-attr]
    probe.await_done()
    assert isinstance(probe.error, ValueError)
    assert len(probe.items) == 3


def test_rule_3_9_a_bool_is_not_demand(source: Source) -> None:
    probe = subscribe(source, 100, initial=2)
    probe.await_items(2)
    probe.subscription.request(True)  # type: ignore[union-attr]
    probe.await_done()
    assert isinstance(probe.error, rs.IllegalDemandError)
    assert (
        str(probe.error)
        == "§3.9: request(n) needs a positive int; a bool is not accepted as demand, got True"
    )
    assert len(probe.items) == 2


def test_rule_3_13_subscriber_is_released_after_cancel(source: Source) -> None:
    probe = Probe(2)
    source(100).subscribe(probe)
    probe.await_items(2)
    ref = weakref.ref(probe)
    publisher_side = probe.subscription
    probe.cancel()
    del probe
    _await_collected(ref, "the publisher still holds the subscriber after cancel")
    del publisher_side


def test_rule_3_13_subscriber_is_released_after_completion(source: Source) -> None:
    probe = Probe(10)
    source(3).subscribe(probe)
    probe.await_done()
    ref = weakref.ref(probe)
    publisher_side = probe.subscription
    del probe
    _await_collected(ref, "the publisher still holds the subscriber after on_complete")
    del publisher_side


def test_rule_3_17_demand_sums_up_to_long_max(source: Source) -> None:
    probe = subscribe(source, 50)
    probe.request(rs.MAX_DEMAND - 1)
    probe.request(rs.MAX_DEMAND)
    probe.request(1)
    probe.await_done()
    assert probe.completed
    received(source, probe, 50)
    probe.assert_rules_held()


def test_rule_3_17_demand_asked_of_upstream_fits_a_java_long(source: Source) -> None:
    # Summed demand is capped at 2**63-1: an operator that sums without the cap asks its
    # upstream for more than a Java long holds, which no JVM publisher can be asked for.
    upstream = Upstream()
    probe = subscribe(source, 50, upstream=upstream)
    probe.request(rs.MAX_DEMAND - 1)
    probe.request(rs.MAX_DEMAND)
    probe.request(1)
    probe.await_done()
    too_big = [n for spy in upstream.spies for n in spy.requests if n > rs.MAX_DEMAND]
    assert not too_big, f"asked upstream for {too_big}, more than 2**63-1"
    received(source, probe, 50)


# Helpers.

_NOT_WRAPPABLE = ("submission", "processor", "from_async_iterable", "async_iterable", "merge")


def _through(source: Source, values: Any) -> rs.Publisher[Any]:
    """``values`` through the operator under test (or from_iterable itself)."""
    base = rs.from_iterable(values)
    return {
        "from_iterable": lambda: base,
        "map": lambda: base.map(lambda x: x),
        "filter": lambda: base.filter(lambda x: True),
        "take": lambda: base.take(1000),
        "skip": lambda: base.skip(0),
        "batch": lambda: base.batch(1).map(lambda x: x[0]),
        "concat": lambda: rs.concat(rs.from_iterable([]), base),
        "merge": lambda: rs.merge(base),
        "flat_map": lambda: rs.from_iterable([0]).flat_map(lambda _: base),
        "generate": lambda: rs.generate(iter(values), lambda it: next(((x, it) for x in it), None)),
        "defer": lambda: rs.defer(lambda: base),
        "scan": lambda: base.scan(lambda a, x: x),
        "scan_initial": lambda: base.scan(lambda a, x: x, -1).skip(1),
        "take_while": lambda: base.take_while(lambda x: True),
        "skip_while": lambda: base.skip_while(lambda x: False),
        "distinct": lambda: base.distinct_until_changed(),
        "start_with": lambda: base.start_with(-1).skip(1),
        "end_with": lambda: base.end_with(-1).take_while(lambda x: x != -1),
        "prepend": lambda: base.prepend(rs.empty()),
        "append": lambda: rs.empty().append(base),
        "switch_if_empty": lambda: rs.empty().switch_if_empty(base),
        "concat_map": lambda: rs.from_iterable([0]).concat_map(lambda _: base),
        "tap": lambda: base.tap(on_next=lambda x: None),
        "zip": lambda: rs.zip(base, rs.repeat(0)).map(lambda t: t[0]),
        "catch": lambda: rs.error(Boom("caught")).catch(lambda _: base),
        "retry": lambda: _fails_first(base).retry(1),
        "subscribe_on": lambda: base.subscribe_on(rs.default_scheduler()),
        "publish_on": lambda: base.publish_on(rs.default_scheduler()),
        "delay": lambda: base.delay(0.0005),
        "delay_subscription": lambda: base.delay_subscription(0.0005),
        "timeout": lambda: base.timeout(WAIT),
        "buffer": lambda: base.buffer(1, WAIT).map(lambda items: items[0]),
        "retry_backoff": lambda: _fails_first(base).retry(1, backoff=0.0005),
        "on_backpressure_buffer": lambda: base.on_backpressure_buffer(10_000),
        "share": lambda: base.share(prefetch=8),
        "replay": lambda: base.replay(2, prefetch=8).ref_count(),
    }[source.name]()


def _fails_first(then: rs.Publisher[Any]) -> rs.Publisher[Any]:
    """A publisher whose first subscriber gets an error, and the next ones ``then``."""
    attempts: list[int] = []

    def make() -> rs.Publisher[Any]:
        attempts.append(1)
        return rs.error(Boom("the first attempt fails")) if len(attempts) == 1 else then

    return rs.defer(make)


class _Raises:
    def __init__(self, action: Any) -> None:
        self.run = action


def _submit_none() -> Any:
    publisher: rs.SubmissionPublisher[Any] = rs.SubmissionPublisher()
    return _Raises(lambda: publisher.submit(None))


def _processor_of(values: list[Any]) -> rs.Publisher[Any]:
    processor: rs.IdentityProcessor[Any] = rs.IdentityProcessor()
    rs.from_iterable(values).subscribe(processor)
    return processor


def _loop() -> Any:
    from .support import shared_loop

    return shared_loop()


class _async_values:
    def __init__(self, values: list[Any]) -> None:
        self._values = values

    def __aiter__(self) -> Any:
        async def gen() -> Any:
            for v in self._values:
                yield v

        return gen().__aiter__()


def _await_collected(ref: weakref.ref[Any], what: str) -> None:
    def collected() -> bool:
        gc.collect()
        return ref() is None

    wait_for(collected, what)


def _depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1  # type: ignore[assignment]
    return depth


# A second thread acts while the drain is inside a slow on_next (§2.7 aside, as tests/test_demand.py).


def _inside_on_next(
    source: Source, count: int, initial: int
) -> tuple[Probe, threading.Event, threading.Thread]:
    """Subscribe, request ``initial`` on another thread, and return once the first on_next is
    blocked; set the returned event to let it go on."""
    entered, release = threading.Event(), threading.Event()

    def slow(probe: Probe, item: Any) -> None:
        if len(probe.items) == 1:
            entered.set()
            assert release.wait(WAIT)

    probe = subscribe(source, count, on_next_hook=slow)
    emitter = threading.Thread(target=probe.request, args=(initial,))
    emitter.start()
    assert entered.wait(WAIT)
    return probe, release, emitter


def test_rule_1_3_a_3_9_error_from_another_thread_during_on_next_comes_after_it(source: Source) -> None:
    probe, release, emitter = _inside_on_next(source, 100, 5)
    probe.request(0)
    release.set()
    emitter.join(WAIT)
    probe.await_done()
    assert isinstance(probe.error, rs.IllegalDemandError) and not probe.completed
    assert len(probe.items) <= 5
    probe.assert_rules_held()  # §1.3: on_error never overlapped on_next


def test_rule_3_3_a_request_from_another_thread_during_on_next_is_emitted(source: Source) -> None:
    probe, release, emitter = _inside_on_next(source, 20, 1)
    probe.request(20)  # one more than is left: an unsized source completes on finding its end
    release.set()
    emitter.join(WAIT)
    probe.await_done()
    assert probe.completed
    received(source, probe, 20)
    probe.assert_rules_held()


def test_rule_1_8_a_cancel_from_another_thread_during_on_next_stops_signals(source: Source) -> None:
    probe, release, emitter = _inside_on_next(source, 100, 50)
    probe.cancel()
    release.set()
    emitter.join(WAIT)
    probe.await_released()  # nothing can signal the probe now
    assert not probe.done.is_set() and probe.signals_after_cancel <= 1  # the one in flight
    probe.assert_rules_held()
