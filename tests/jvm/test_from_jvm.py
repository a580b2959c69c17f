"""JVM publishers (Reactor, Pekko Streams, RxJava, the JDK's Flow) seen from Python."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import reactive_streams as rs
from reactive_streams.jvm import Bridge

from ..support import WAIT, Probe
from .kit import Kit, py


def test_flux_range_arrives_with_exact_demand(bridge: Bridge) -> None:
    kit = Kit(bridge)
    recorded = kit.recording_range(1000)
    probe = kit.probe_of(recorded)
    probe.await_subscribed()
    for n in (1, 5, 100):
        probe.request(n)
        probe.await_items(probe.requested)
    assert probe.items == list(range(106))
    assert int(recorded.requested()) == 106  # upstream saw exactly what Python asked for (§1.1)
    assert int(recorded.maxOutstanding()) <= 100
    probe.request(10_000)
    probe.await_done()
    assert probe.completed and probe.items == list(range(1000))
    probe.assert_rules_held()
    assert kit.live_adapters() == 0


def test_flux_interval_with_a_backpressure_strategy(bridge: Bridge) -> None:
    kit = Kit(bridge)
    ticks = kit.recording_publisher(kit.Flux.interval(kit.millis(1)).onBackpressureDrop())
    received = list(rs.iterate(bridge.from_jvm(ticks).take(20), prefetch=4))
    assert len(received) == 20 and received == sorted(received)
    assert kit.live_adapters() == 0  # the cancel has reached the JVM side
    assert int(ticks.cancels()) == 1


def test_flux_error_arrives_as_jvm_error_with_class_message_and_stack(bridge: Bridge) -> None:
    kit = Kit(bridge)
    probe = kit.probe_of(kit.Flux.error(kit.runtime_exception("boom")), 1)
    probe.await_done()
    error = probe.error
    assert isinstance(error, rs.JvmError)
    assert error.java_class == "java.lang.RuntimeException" and error.java_message == "boom"
    assert error.java_stack.startswith("java.lang.RuntimeException: boom")


def test_an_exception_thrown_in_the_jvm_keeps_its_stack(bridge: Bridge) -> None:
    kit = Kit(bridge)
    integer = bridge.jvm.java.lang.Class.forName("java.lang.Integer")
    probe = kit.probe_of(kit.Flux.just("not a number").cast(integer), 5)
    probe.await_done()
    error = probe.error
    assert isinstance(error, rs.JvmError) and error.java_class == "java.lang.ClassCastException"
    assert "\tat reactor.core.publisher." in error.java_stack


def test_flux_never_can_be_cancelled_without_a_hang(bridge: Bridge) -> None:
    kit = Kit(bridge)
    never = kit.recording_publisher(kit.Flux.never())
    probe = kit.probe_of(never, 10)
    probe.await_subscribed()
    probe.cancel()
    assert kit.live_adapters() == 0
    assert int(never.cancels()) == 1 and not probe.done.is_set()


def test_rxjava_flowable(bridge: Bridge) -> None:
    kit = Kit(bridge)
    assert list(bridge.from_jvm(kit.Flowable.range(0, 500)).iterate(prefetch=64)) == list(range(500))


def test_pekko_streams_source_as_publisher(bridge: Bridge, pekko: Any) -> None:
    jvm = bridge.jvm
    javadsl = jvm.org.apache.pekko.stream.javadsl
    publisher = javadsl.Source.range(1, 300).runWith(
        javadsl.Sink.asPublisher(javadsl.AsPublisher.WITHOUT_FANOUT), pekko(bridge)
    )
    assert list(bridge.from_jvm(publisher).iterate(prefetch=16)) == list(range(1, 301))


def test_jdk_submission_publisher_is_a_flow_publisher(bridge: Bridge) -> None:
    jdk = bridge.jvm.java.util.concurrent.SubmissionPublisher()
    probe = Probe(rs.MAX_DEMAND)
    bridge.from_jvm(jdk).subscribe(probe)
    probe.await_subscribed()
    for i in range(100):
        jdk.submit(i)
    jdk.close()
    probe.await_done()
    assert [py(x) for x in probe.items] == list(range(100)) and probe.completed


def test_jvm_objects_cross_as_usable_references(bridge: Bridge) -> None:
    kit = Kit(bridge)
    builder = bridge.jvm.java.lang.StringBuilder("jvm")
    [received] = list(bridge.from_jvm(kit.Flux.just(builder)).iterate())
    received.append("!")  # a live reference: the call goes to the JVM object
    assert str(builder.toString()) == "jvm!"


def test_each_python_subscriber_gets_its_own_jvm_subscription(bridge: Bridge) -> None:
    kit = Kit(bridge)
    publisher = bridge.from_jvm(kit.Flux.range(0, 50))
    assert list(publisher.iterate()) == list(publisher.iterate()) == list(range(50))


@pytest.mark.parametrize("value", [None, 42, "Flux", object()])
def test_from_jvm_refuses_what_is_not_a_jvm_publisher(bridge: Bridge, value: Any) -> None:
    with pytest.raises(TypeError, match=r"org\.reactivestreams\.Publisher or Flow\.Publisher"):
        bridge.from_jvm(value)


def test_from_jvm_refuses_a_jvm_object_that_is_not_a_publisher(bridge: Bridge) -> None:
    with pytest.raises(TypeError, match="Publisher"):
        bridge.from_jvm(bridge.jvm.java.lang.StringBuilder("x"))


def test_a_batch_aware_subscriber_gets_lists(bridge: Bridge) -> None:
    kit = Kit(bridge)

    class Bulk(Probe):
        def __init__(self) -> None:
            super().__init__(1000)
            self.batches: list[list[Any]] = []

        def on_next_batch(self, items: list[Any]) -> None:
            self.batches.append(items)
            self.items.extend(items)

    bulk = Bulk()
    bridge.from_jvm(kit.Flux.range(0, 1000)).subscribe(bulk)
    bulk.await_done()
    assert bulk.items == list(range(1000)) and bulk.completed
    assert len(bulk.batches) < 1000 and all(isinstance(b, list) for b in bulk.batches)


class _Counter(rs.Subscriber[Any]):
    """Requests 64 at a time and counts; ``block`` makes its first on_next wait for ``release``."""

    def __init__(self, block: bool = False) -> None:
        self.block, self.count = block, 0
        self.blocked, self.release, self.done = threading.Event(), threading.Event(), threading.Event()

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        self.subscription = subscription
        subscription.request(64)

    def on_next(self, item: Any) -> None:
        if self.block and self.count == 0:
            self.blocked.set()
            self.release.wait(WAIT)
        self.count += 1
        if self.count % 64 == 0:
            self.subscription.request(64)

    def on_error(self, exc: BaseException) -> None:
        self.done.set()

    def on_complete(self) -> None:
        self.done.set()


def test_a_subscriber_blocking_in_on_next_holds_up_no_other_stream(bridge: Bridge) -> None:
    # §2.2 recommends against blocking in on_next, but one subscriber that does must not stall the
    # bridge's other streams (on JPype, whose deliveries take turns on one thread, another thread
    # takes the rest of the turns while one is stuck).
    sources = bridge.jvm.io.github.rspy.bridge.testing.Sources
    stuck = _Counter(block=True)
    bridge.from_jvm(sources.longs(1_000)).subscribe(stuck)
    assert stuck.blocked.wait(WAIT)
    others = [_Counter() for _ in range(20)]
    for other in others:
        bridge.from_jvm(sources.parallelLongs(2_000)).subscribe(other)
    try:
        for other in others:
            assert other.done.wait(WAIT) and other.count == 2_000
        assert not stuck.done.is_set() and stuck.count == 0  # still inside its first on_next
    finally:
        stuck.release.set()
    assert stuck.done.wait(WAIT) and stuck.count == 1_000


# Rows from publishers that emit on threads of their own, one onNext at a time, as database
# drivers, network clients and Reactor's publishOn do (issue 34): Reactor's publishOn on its
# parallel workers, and a JDK SubmissionPublisher fed by a JVM thread (delivering on the common
# fork-join pool). Each onNext schedules the drain from a foreign thread; the rows must still
# arrive whole, in order, as tuples, nearly all of them in Arrow batches, and never more queued
# than requested.

THREADED = ["publishOn", "submission"]
THREADED_ROWS = 20_000
CHUNK = 500  # requested at a time, two chunks ahead: never more than 1,000 outstanding
ARROW_SHARE = 0.9  # of the rows; only a burst's first few rows may cross pickled, before the rest arrive


def _expected_rows(count: int) -> list[tuple[int, float, str]]:
    return [(index, index / 2, str(100_000_000_000 + index)) for index in range(count)]


def _threaded_rows(bridge: Bridge, kind: str, rows: Any) -> Any:
    """An org.reactivestreams.Publisher of ``rows``, emitted on threads other than the bridge's."""
    testing = bridge.jvm.io.github.rspy.bridge.testing
    if kind == "publishOn":
        return testing.ThreadedRows.publishOn(rows, 256)
    return bridge.jvm.org.reactivestreams.FlowAdapters.toPublisher(testing.ThreadedRows.submission(rows, 256))


def _chunked_probe() -> Probe:
    """A Probe that asks for `CHUNK` more each time `CHUNK` have arrived, `CHUNK` * 2 ahead."""

    def ask(probe: Probe, item: Any) -> None:
        if len(probe.items) % CHUNK == 0:
            probe.request(CHUNK)

    return Probe(2 * CHUNK, ask)


@pytest.mark.parametrize("consumer", ["subscriber", "iterate"])
@pytest.mark.parametrize("kind", THREADED)
def test_rows_emitted_on_jvm_threads_arrive_whole_in_order_as_tuples_through_arrow(
    bridge: Bridge, kind: str, consumer: str
) -> None:
    kit = Kit(bridge)
    rows = bridge.jvm.io.github.rspy.bridge.testing.ThreadedRows.rows(THREADED_ROWS)
    batches, arrow_rows = int(bridge.runtime.arrowBatches()), int(bridge.runtime.arrowRows())
    publisher = bridge.from_jvm(_threaded_rows(bridge, kind, rows))
    if consumer == "iterate":
        received = list(rs.iterate(publisher, prefetch=2 * CHUNK))
    else:
        probe = _chunked_probe()
        publisher.subscribe(probe)
        probe.await_done()
        assert probe.completed and probe.error is None, probe.error
        probe.assert_rules_held()
        received = probe.items
    assert len(received) == THREADED_ROWS
    assert received == _expected_rows(THREADED_ROWS)  # whole and in order
    assert all(type(row) is tuple for row in received)  # values, not references to Java arrays
    assert int(bridge.runtime.arrowBatches()) > batches
    as_arrow = int(bridge.runtime.arrowRows()) - arrow_rows
    assert as_arrow >= ARROW_SHARE * THREADED_ROWS, (
        f"only {as_arrow:,} of {THREADED_ROWS:,} rows crossed as Arrow"
    )
    assert kit.live_adapters() == 0
    assert int(bridge.runtime.arrowAllocatedBytes()) == 0


@pytest.mark.parametrize("kind", THREADED)
def test_rows_emitted_on_jvm_threads_keep_demand_exact(own_bridge: Bridge, kind: str) -> None:
    bridge = own_bridge
    kit = Kit(bridge)
    rows = bridge.jvm.io.github.rspy.bridge.testing.ThreadedRows.rows(THREADED_ROWS)
    recorded = kit.recording_publisher(_threaded_rows(bridge, kind, rows))
    probe = _chunked_probe()
    bridge.from_jvm(recorded).subscribe(probe)
    probe.await_done()
    assert probe.completed and len(probe.items) == THREADED_ROWS
    probe.assert_rules_held()  # never an element beyond the demand (§1.1), signals serial (§1.3)
    outstanding = 2 * CHUNK  # the most the probe ever asked for and did not have
    # Upstream was asked for no more than Python asked for (§1.1), never more than that ahead,
    # and neither side held more than that.
    assert THREADED_ROWS <= int(recorded.requested()) <= probe.requested
    assert int(recorded.maxOutstanding()) <= outstanding
    assert int(bridge.runtime.maxQueued()) <= outstanding
    assert bridge.max_buffered <= outstanding
    assert kit.live_adapters() == 0


def test_rows_reach_iterate_unmade_and_a_close_inside_the_loop_stops_them(bridge: Bridge) -> None:
    """iterate's subscriber takes the bridge's rows as a lazy batch: each row is made as the loop
    reaches it (so thousands of buffered rows do not wake the garbage collector), and a close()
    inside the loop ends the batch being handed out at once (RowBatch.clear)."""
    threaded_rows = bridge.jvm.io.github.rspy.bridge.testing.ThreadedRows
    rows = threaded_rows.rows(THREADED_ROWS)

    class Lazy(Probe):
        lazy_batches = True  # as iterate's subscriber says

        def on_next_batch(self, items: Any) -> None:
            kinds[type(items).__name__] = kinds.get(type(items).__name__, 0) + len(items)
            for item in items:
                self.on_next(item)

    kinds: dict[str, int] = {}  # rows by the kind of batch they came in
    probe = Lazy(THREADED_ROWS)
    bridge.from_jvm(threaded_rows.sync(rows)).subscribe(probe)
    probe.await_done()
    assert probe.items == _expected_rows(THREADED_ROWS)
    # The Arrow batches' rows unmade; a batch under Arrow's 16-row minimum crosses pickled, a list.
    unmade = kinds.get("RowBatch", 0)
    assert set(kinds) <= {"RowBatch", "list"} and unmade >= ARROW_SHARE * THREADED_ROWS, kinds
    assert list(rs.iterate(bridge.from_jvm(threaded_rows.sync(rows)), prefetch=4_096)) == probe.items
    seen = []
    with rs.iterate(bridge.from_jvm(threaded_rows.sync(rows)), prefetch=4_096) as iterator:
        for row in iterator:
            seen.append(row)
            if len(seen) == 5:
                iterator.close()  # the rest of this batch of up to 4,096 rows is not handed out
    assert seen == _expected_rows(5)
    assert Kit(bridge).live_adapters() == 0
