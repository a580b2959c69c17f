"""Python publishers, subscribers and processors handed to JVM code as real Java objects."""

from __future__ import annotations

import itertools
import threading
import time
from typing import Any

import pytest

import reactive_streams as rs
from reactive_streams.jvm import Bridge

from ..support import Probe, Spy, steady, wait_for
from .kit import WAIT_MS, Kit, py


def test_reactor_limit_rate_take_gets_exactly_1000_and_python_sees_cancel(bridge: Bridge) -> None:
    kit = Kit(bridge)
    spy = Spy(rs.from_iterable(itertools.count()))
    flux = kit.flux_from(bridge.to_jvm(spy)).limitRate(7).take(1000)
    received = [py(x) for x in flux.collectList().block()]
    assert received == list(range(1000))
    assert kit.live_adapters() == 0  # the cancel has reached Python
    assert spy.cancels == 1
    assert spy.requested <= 1000 + 7  # what Reactor asked for, passed on exactly
    assert all(n <= 7 for n in spy.requests)


def test_a_java_subscriber_gets_exactly_what_it_requests(bridge: Bridge) -> None:
    kit = Kit(bridge)
    spy = Spy(rs.from_iterable(range(100)))
    subscriber = kit.recorder_of(spy, 3)
    assert subscriber.awaitItems(3, WAIT_MS)
    assert int(subscriber.count()) == 3 and spy.requested == 3
    subscriber.request(97)
    assert subscriber.awaitDone(WAIT_MS) and subscriber.isComplete()
    assert [py(x) for x in subscriber.items()] == list(range(100))
    assert list(subscriber.violations()) == []


def test_one_element_at_a_time_from_java_stays_serial_and_exact(bridge: Bridge) -> None:
    kit = Kit(bridge)
    subscriber = kit.recorder_of(rs.AsyncIterablePublisher(range(2000)), 1, 1)
    assert subscriber.awaitDone(WAIT_MS)
    assert [py(x) for x in subscriber.items()] == list(range(2000))
    assert list(subscriber.violations()) == []


def test_flux_range_into_a_python_subscriber(bridge: Bridge) -> None:
    kit = Kit(bridge)
    probe = Probe(rs.MAX_DEMAND)
    kit.Flux.range(0, 500).subscribe(bridge.subscriber_to_jvm(probe))
    probe.await_done()
    assert probe.items == list(range(500)) and probe.completed
    probe.assert_rules_held()


def test_a_subscriber_no_publisher_took_is_let_go_of_and_signals_nothing(bridge: Bridge) -> None:
    """`release_subscriber`: a proxy handed out (to a JVM registry, say) and withdrawn before
    any publisher subscribed it; the bridge no longer holds the subscriber, which hears nothing
    (§1.9: no subscription began), and a publisher offering it one later is cancelled (§2.5)."""
    kit = Kit(bridge)
    live = steady(lambda: bridge.live_streams, "the shared bridge's live streams")  # earlier tests' end
    probe = Probe(rs.MAX_DEMAND)
    java = bridge.subscriber_to_jvm(probe)
    assert bridge.live_streams == live + 1
    assert bridge.release_subscriber(probe) is True
    assert bridge.live_streams == live
    late = kit.recording_range(3)
    late.subscribe(java)
    wait_for(lambda: int(late.cancels()) == 1, "the late subscription cancelled")
    assert int(late.emitted()) == 0
    time.sleep(0.2)  # room for a signal that must not come
    assert not probe.subscribed.is_set() and probe.items == [] and probe.error is None
    assert bridge.release_subscriber(probe) is False  # nothing left to let go of


def test_release_subscriber_refuses_what_is_not_a_subscriber_and_is_false_after_close(
    bridge: Bridge, test_jars: list[str]
) -> None:
    with pytest.raises(
        TypeError, match=r"release_subscriber\(\) needs a reactive_streams\.Subscriber, got 42"
    ):
        bridge.release_subscriber(42)  # type: ignore[arg-type]
    own = Bridge.py4j(test_jars)
    probe = Probe(1)
    own.subscriber_to_jvm(probe)
    own.close()  # the subscriber heard the close: nothing is left to let go of
    assert own.release_subscriber(probe) is False


def test_a_subscribed_subscriber_is_not_let_go_of_and_its_stream_goes_on(bridge: Bridge) -> None:
    kit = Kit(bridge)
    probe = Probe(2)
    kit.Flux.range(0, 5).subscribe(bridge.subscriber_to_jvm(probe))
    probe.await_items(2)
    assert bridge.release_subscriber(probe) is False
    probe.request(3)
    probe.await_done()
    assert probe.items == list(range(5)) and probe.completed


def test_a_python_processor_in_the_middle_of_a_reactor_pipeline(bridge: Bridge) -> None:
    kit = Kit(bridge)
    processor: rs.MapProcessor[int, int] = rs.MapProcessor(lambda x: x * 2)
    java_processor = bridge.processor_to_jvm(processor)
    collected = kit.flux_from(java_processor).collectList()
    kit.Flux.range(0, 100).subscribe(java_processor)
    assert [py(x) for x in collected.block()] == [2 * i for i in range(100)]


class _SlowToSubscribe(rs.Publisher[Any]):
    """Takes ``seconds`` in ``subscribe`` before it has its subscriber."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.subscribed = threading.Event()

    def subscribe(self, subscriber: rs.Subscriber[Any]) -> None:
        time.sleep(self.seconds)
        self.subscribed.set()
        rs.from_iterable([]).subscribe(subscriber)


def test_the_python_publisher_has_its_subscriber_before_java_gets_on_subscribe(bridge: Bridge) -> None:
    """Once a Java subscriber holds its subscription, the Python publisher counts it (§1.9):
    a multicast processor's coordinated emission waits for it."""
    kit = Kit(bridge)
    publisher = _SlowToSubscribe(0.3)
    recorder = kit.recording_subscriber()
    bridge.to_jvm(publisher).subscribe(recorder)
    assert recorder.awaitSubscribed(WAIT_MS)
    assert publisher.subscribed.is_set()


def test_a_python_processor_waits_for_every_java_subscriber_it_has_handed_a_subscription(
    bridge: Bridge,
) -> None:
    """The TCK's §1.4 processor test, a hundred times: two Java subscribers with their
    subscriptions and one request each, then the element; coordinated emission gives it to both
    (it once reached one, the other's Python subscription still on its way)."""
    kit = Kit(bridge)
    for i in range(100):
        processor: rs.IdentityProcessor[int] = rs.IdentityProcessor()
        java = bridge.to_jvm(processor)
        first, second = kit.recording_subscriber(1), kit.recording_subscriber(1)
        java.subscribe(first)
        java.subscribe(second)
        assert first.awaitSubscribed(WAIT_MS) and second.awaitSubscribed(WAIT_MS)
        rs.from_iterable([i]).subscribe(processor)
        for recorder in (first, second):
            assert recorder.awaitDone(WAIT_MS), (i, list(recorder.items()))
            assert [py(x) for x in recorder.items()] == [i]


def test_pekko_streams_source_from_a_python_publisher(bridge: Bridge, pekko: Any) -> None:
    javadsl = bridge.jvm.org.apache.pekko.stream.javadsl
    source = javadsl.Source.fromPublisher(bridge.to_jvm(rs.from_iterable(range(250))))
    done = source.runWith(javadsl.Sink.seq(), pekko(bridge)).toCompletableFuture().get()
    assert [py(x) for x in done] == list(range(250))


def test_flow_variants(bridge: Bridge) -> None:
    jdk = bridge.jvm.java.util.concurrent
    flow_publisher = bridge.to_jvm(rs.from_iterable(range(10)), flow=True)
    assert bridge.jvm.java.lang.Class.forName("java.util.concurrent.Flow$Publisher").isInstance(
        flow_publisher
    )
    assert list(bridge.from_jvm(flow_publisher).iterate()) == list(range(10))
    probe = Probe(rs.MAX_DEMAND)
    submission = jdk.SubmissionPublisher()
    submission.subscribe(bridge.subscriber_to_jvm(probe, flow=True))
    for i in range(5):
        submission.submit(i)
    submission.close()
    probe.await_done()
    assert [py(x) for x in probe.items] == list(range(5))


def test_each_java_subscriber_gets_its_own_python_subscription(bridge: Bridge) -> None:
    kit = Kit(bridge)
    java = bridge.to_jvm(rs.from_iterable(range(20)))
    first = [py(x) for x in kit.flux_from(java).collectList().block()]
    second = [py(x) for x in kit.flux_from(java).collectList().block()]
    assert first == second == list(range(20))


@pytest.mark.parametrize("method", ["to_jvm", "subscriber_to_jvm", "processor_to_jvm"])
def test_the_wrong_kind_of_python_object_is_refused(bridge: Bridge, method: str) -> None:
    with pytest.raises(TypeError, match=method):
        getattr(bridge, method)(object())


class _BatchEmitter(rs.Publisher[Any]):
    """Emits ``items`` in one ``on_next_batch`` on the first request, then completes."""

    def __init__(self, items: list[Any]) -> None:
        self.items = items

    def subscribe(self, subscriber: rs.Subscriber[Any]) -> None:
        items = self.items

        class Once(rs.Subscription):
            def request(self, n: int) -> None:
                try:
                    subscriber.on_next_batch(items)  # type: ignore[attr-defined]
                except rs.NullElementError:
                    return  # §2.13: the subscriber raised and ended the stream
                subscriber.on_complete()

            def cancel(self) -> None:
                pass

        subscriber.on_subscribe(Once())


def test_elements_in_bulk_reach_java_in_order(bridge: Bridge) -> None:
    kit = Kit(bridge)
    subscriber = kit.recorder_of(_BatchEmitter(list(range(50))), 50)
    assert subscriber.awaitDone(WAIT_MS) and subscriber.isComplete()
    assert [py(x) for x in subscriber.items()] == list(range(50))
    assert list(subscriber.violations()) == []


def test_a_none_in_bulk_ends_the_java_stream_after_the_elements_before_it(bridge: Bridge) -> None:
    kit = Kit(bridge)
    subscriber = kit.recorder_of(_BatchEmitter([1, 2, None, 4]), 10)
    assert subscriber.awaitDone(WAIT_MS)
    assert [py(x) for x in subscriber.items()] == [1, 2]
    assert "None" in str(subscriber.errorMessage())
    assert kit.live_adapters() == 0


class _Mixed(rs.Publisher[Any]):
    """On its first request, from a thread of its own: on_next, on_next_batch, on_next, complete."""

    def subscribe(self, subscriber: rs.Subscriber[Any]) -> None:
        import threading

        class Once(rs.Subscription):
            def request(self, n: int) -> None:
                def emit() -> None:
                    subscriber.on_next(1)
                    subscriber.on_next_batch([2, 3, 4])  # type: ignore[attr-defined]
                    subscriber.on_next(5)
                    subscriber.on_next_batch(list(range(6, 40)))  # type: ignore[attr-defined]
                    subscriber.on_complete()

                threading.Thread(target=emit).start()

            def cancel(self) -> None:
                pass

        subscriber.on_subscribe(Once())


def test_single_elements_and_lists_from_another_thread_keep_their_order(bridge: Bridge) -> None:
    kit = Kit(bridge)
    subscriber = kit.recorder_of(_Mixed(), 100)
    assert subscriber.awaitDone(WAIT_MS) and subscriber.isComplete()
    assert [py(x) for x in subscriber.items()] == list(range(1, 40))
    assert list(subscriber.violations()) == []


# Arrow rows from Python: made into the JVM's rows on its pool while Python encodes the next batch.


class _Rows(rs.Publisher[tuple[int, str]]):
    """``total`` rows ``(i, f"row {i}")``, as many as asked emitted inside ``request`` (§1.1);
    ``before(k)`` runs as the k-th request begins, ``pace`` s are slept for each request."""

    def __init__(self, total: int, before: Any = None, pace: float = 0.0) -> None:
        self.total, self.before, self.pace = total, before, pace
        self.requests: list[int] = []

    def subscribe(self, subscriber: rs.Subscriber[Any]) -> None:
        source = self

        class Rows(rs.Subscription):
            sent = 0
            cancelled = False

            def request(self, n: int) -> None:
                source.requests.append(n)
                if source.before is not None:
                    source.before(len(source.requests))
                time.sleep(source.pace)
                end = min(source.total, self.sent + n)
                for i in range(self.sent, end):
                    if self.cancelled:
                        return
                    subscriber.on_next((i, f"row {i}"))
                self.sent = end
                if end == source.total and not self.cancelled:
                    subscriber.on_complete()

            def cancel(self) -> None:
                self.cancelled = True

        subscriber.on_subscribe(Rows())


def test_python_rows_are_made_into_java_rows_on_the_pool_while_python_makes_the_next(
    own_bridge: Bridge,
) -> None:
    """The JVM asks Python for the next batch before it makes Java rows of the one it has, and
    the pool makes them meanwhile: Python's second request waits for the pool to have made the
    first batch's rows, and never waits in vain. Every row arrives once, in order, as Arrow,
    and the loaded batches are freed. (A bridge of its own: two windows are queued at once here,
    one made and one arriving, and runtime-wide counters of the shared bridge stay other tests'.)"""
    bridge = own_bridge
    kit = Kit(bridge)
    window = bridge.settings.window
    assert window >= 16  # a batch as large crosses as Arrow (MIN_ROWS)
    made_ahead = int(bridge.runtime.rowsMadeAhead())
    waited: list[bool] = []

    def before(request: int) -> None:
        if request == 2:  # the first batch is pushed; the drain now asks for the second
            deadline = time.monotonic() + 10
            while int(bridge.runtime.rowsMadeAhead()) == made_ahead and time.monotonic() < deadline:
                time.sleep(0.001)
            waited.append(int(bridge.runtime.rowsMadeAhead()) > made_ahead)

    total = 3 * window
    before_arrow = int(bridge.runtime.arrowBatchesFromPython())
    rows = kit.flux_from(bridge.to_jvm(_Rows(total, before))).collectList().block()
    assert waited == [True], "the pool did not make the first batch's rows while Python was asked for more"
    assert [(py(row[0]), py(row[1])) for row in rows] == [(i, f"row {i}") for i in range(total)]
    assert int(bridge.runtime.arrowBatchesFromPython()) - before_arrow >= 3
    assert kit.live_adapters() == 0
    wait_for(lambda: int(bridge.runtime.arrowAllocatedBytes()) == 0, "the loaded batches freed")


@pytest.mark.parametrize("python", ["faster", "slower"])
def test_rows_made_ahead_stay_within_the_demand_the_java_subscriber_signalled(
    own_bridge: Bridge, python: str
) -> None:
    """A Java subscriber that asks for 2 chunks and one more each time one arrives: Python is
    asked for no more (§1.1) and the JVM holds no more, whether Python is faster than the JVM
    (it makes rows at once) or slower (it sleeps in each request). A cancel midway leaves no
    loaded batch behind."""
    bridge = own_bridge
    kit = Kit(bridge)
    chunk = 64
    outstanding = 2 * chunk
    source = _Rows(40 * chunk, pace=0.002 if python == "slower" else 0.0)
    subscriber = kit.recorder_of(source, outstanding, chunk)
    assert subscriber.awaitDone(WAIT_MS) and subscriber.isComplete()
    assert [py(row[0]) for row in subscriber.items()] == list(range(40 * chunk))
    assert list(subscriber.violations()) == []
    assert sum(source.requests) <= 40 * chunk + outstanding
    assert int(bridge.runtime.maxQueued()) <= outstanding
    assert int(bridge.runtime.arrowBatchesFromPython()) > 0
    assert kit.live_adapters() == 0
    assert int(bridge.runtime.arrowAllocatedBytes()) == 0


def test_a_cancel_frees_python_rows_loaded_and_not_yet_made(own_bridge: Bridge) -> None:
    """A Java subscriber that takes one row and cancels, while batches Python pushed are queued
    or being made: when the stream has ended the allocator has every byte back."""
    bridge = own_bridge
    kit = Kit(bridge)
    for _ in range(20):
        source = _Rows(20 * bridge.settings.window)
        first = kit.flux_from(bridge.to_jvm(source)).take(1, False).blockLast()
        assert py(first[0]) == 0
        assert kit.live_adapters() == 0
        assert int(bridge.runtime.arrowAllocatedBytes()) == 0
