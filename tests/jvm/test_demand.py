"""Demand across the bridge, as the JVM side's kit (``Demand``, ``DemandWindow``) keeps it, on
every backend: demand requested inside a callback is added to what is outstanding (§3.8), sums
are capped at 2**63-1 and then never used up (§3.17), and a request of n <= 0 gets the kit's
one §3.9 message.

The adapters forward demand through a window of ``max_batch`` elements, so the JVM side holds
demand of its own only when more than a window is outstanding: the tests ask for more than a
window, or a plain ``max`` or an uncapped sum would go unseen (0 + n == max(0, n))."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import reactive_streams as rs
from reactive_streams.jvm import Bridge

from ..support import Probe, Spy, wait_for
from .kit import WAIT_MS, Kit, py


def kit_message(bridge: Bridge, n: int) -> str:
    """The JVM kit's §3.9 message for ``request(n)``."""
    return str(bridge.jvm.io.github.rspy.bridge.Demand.illegalRequest(n).getMessage())


@contextmanager
def cancel_if_stalled(cancel: Callable[[], Any]) -> Iterator[None]:
    """Cancel a stream that failed the test, so its adapters do not outlive it and fail the
    later tests' checks that none is left."""
    try:
        yield
    except BaseException:
        cancel()
        raise


def test_rule_3_17_unbounded_demand_requested_inside_on_next_jvm_to_python(bridge: Bridge) -> None:
    # Two windows requested: the JVM side still holds one back when the first batch's callbacks
    # return unbounded demand (one window + 2**63-1), and the second batch's adds 2**63-1 to
    # 2**63-1. Either sum, uncapped, wraps negative and the stream stalls after a window.
    kit = Kit(bridge)
    window = bridge.max_batch
    count = 3 * window + 5
    upstream = kit.recording_range(count)

    def unbounded_twice(probe: Probe, item: Any) -> None:
        probe.request(rs.MAX_DEMAND)
        probe.request(rs.MAX_DEMAND)

    probe = kit.probe_of(upstream, 2 * window, on_next_hook=unbounded_twice)
    with cancel_if_stalled(probe.cancel):
        probe.await_done()
    assert probe.completed and probe.items == list(range(count))
    assert all(0 < int(n) <= window for n in upstream.requests())  # through the window, never wrapped
    probe.assert_rules_held()


class HoldsItsFirstBatch(rs.Subscriber[Any]):
    """Requests ``first``, then holds its first batch until the JVM ``upstream`` stops emitting
    (asking for ``then`` more from another thread first, if any: a second thread's demand while
    the delivery holds), records the batch's size and what was emitted in ``held``, and cancels."""

    def __init__(self, upstream: Any, first: int, then: int = 0) -> None:
        self.upstream, self.first, self.then = upstream, first, then
        self.held: dict[str, int] = {}

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        self.subscription = subscription
        subscription.request(self.first)

    def on_next_batch(self, items: list[Any]) -> None:
        if not self.held:
            if self.then:
                asking = threading.Thread(target=self.subscription.request, args=(self.then,))
                asking.start()
                asking.join()
            settled, last = 0, -1
            while settled < 20:  # the JVM makes what it may meanwhile: wait until it stops
                emitted = int(self.upstream.emitted())
                settled, last = (settled + 1, last) if emitted == last else (0, emitted)
                time.sleep(0.01)
            self.held.update(first=len(items), emitted=last)
        self.subscription.cancel()

    def on_next(self, item: Any) -> None:
        raise AssertionError("on_next_batch is the bridge's path")

    def on_error(self, exc: BaseException) -> None:
        self.held["error"] = 1

    def on_complete(self) -> None:
        self.held["complete"] = 1


def test_while_python_holds_a_batch_the_jvm_makes_exactly_one_window_ahead(jpype_bridge: Bridge) -> None:
    """Python asks for two windows and holds its first batch: the upstream drain goes on asking
    (in slices) while it waits, up to exactly the window beyond what was handed over, and no
    further (§1.1 end to end: what the JVM side holds stays within ``demand_window``). In process
    only: on Py4J a delivery writes its frame and goes on, so the JVM never waits for Python."""
    bridge = jpype_bridge
    kit = Kit(bridge)
    window = bridge.settings.window
    upstream = kit.recording_range(3 * window)
    holder = HoldsItsFirstBatch(upstream, 2 * window)
    held = holder.held
    bridge.from_jvm(upstream).subscribe(holder)
    wait_for(
        lambda: "emitted" in held and int(upstream.cancels()) == 1, "the first batch held, then cancelled"
    )
    # The window's room is the held batch: asked for again only once it is half the window.
    first = held["first"]
    assert held["emitted"] == window + (first if first >= window // 2 else 0), held
    assert all(0 < int(n) <= window for n in upstream.requests())
    assert Kit(bridge).live_adapters() == 0


SLICE = 512  # BridgeRuntime.REQUEST_SLICE: the most one request upstream asks for


def test_a_batch_taken_ahead_counts_against_the_window(test_jars: list[str]) -> None:
    """Python asks for a slice and holds its first batch (the slice, or what of it had arrived)
    while more demand comes from another thread: rows that arrive meanwhile are taken ahead (their
    encoding begun on the pool), and the window counts them as still held by the JVM, so the JVM
    side holds exactly ``demand_window`` beyond that batch, and no more. (It counted
    it as gone: the JVM then held a slice more, and the test above failed in CI when its timing
    let a slice be taken ahead before the window reopened.) In process only: see above."""
    window = 2 * SLICE  # its half is one slice: each taken-ahead slice would reopen it
    with Bridge.jpype(test_jars, demand_window=window) as bridge:
        upstream = Kit(bridge).recording_range(8 * window)
        ahead_before = int(bridge.runtime.encodedAhead())
        holder = HoldsItsFirstBatch(upstream, SLICE, then=4 * window)
        held = holder.held
        bridge.from_jvm(upstream).subscribe(holder)
        wait_for(
            lambda: "emitted" in held and int(upstream.cancels()) == 1, "the first batch held, then cancelled"
        )
        assert int(bridge.runtime.encodedAhead()) > ahead_before, (
            "no slice was taken ahead: the test saw nothing"
        )
        assert held["emitted"] - held["first"] == window, held  # in the JVM's queue and ahead: the window
        wait_for(lambda: Kit(bridge).live_adapters() == 0, "the stream let go")


def test_rule_3_17_unbounded_demand_requested_inside_on_next_python_to_jvm(bridge: Bridge) -> None:
    # The Java subscriber of a Python publisher does the same: two windows, then 2**63-1 twice
    # inside every onNext, while the adapter holds demand not yet delivered and not yet forwarded.
    kit = Kit(bridge)
    window = bridge.max_batch
    count = 3 * window + 5
    spy = Spy(rs.from_iterable(range(count)))
    subscriber = kit.recording_subscriber(2 * window, 0).alsoRequestOnNext(rs.MAX_DEMAND, 2)
    bridge.to_jvm(spy).subscribe(subscriber)
    with cancel_if_stalled(subscriber.cancel):
        assert subscriber.awaitDone(WAIT_MS)
    assert subscriber.isComplete() and subscriber.error() is None
    assert int(subscriber.count()) == count and list(subscriber.violations()) == []
    assert all(0 < n <= window for n in spy.requests)


def test_rule_3_8_demand_requested_inside_on_next_is_added_jvm_to_python(bridge: Bridge) -> None:
    # A window and 10 more requested, then one more inside each of the first `extra` on_next
    # calls: each callback returns its batch's sum, which the JVM side adds to the 10 it holds.
    # Kept with max instead, on either side, some of it is lost and fewer elements arrive.
    kit = Kit(bridge)
    window = bridge.max_batch
    initial, extra = window + 10, 2 * window + 3
    upstream = kit.recording_range(4 * window)

    def one_more(probe: Probe, item: Any) -> None:
        if item < extra:
            probe.request(1)

    probe = kit.probe_of(upstream, initial, on_next_hook=one_more)
    probe.await_items(initial + extra)
    with cancel_if_stalled(probe.cancel):
        assert len(probe.items) == initial + extra, "demand requested inside on_next was lost"
    assert int(upstream.requested()) == initial + extra  # all of it, and no more (§1.1)
    assert probe.items == list(range(initial + extra))
    probe.cancel()
    assert kit.live_adapters() == 0
    probe.assert_rules_held()


def test_rule_3_8_demand_requested_inside_on_next_is_added_python_to_jvm(bridge: Bridge) -> None:
    # 5, then one more inside each onNext, while the adapter's delivery loop is running: the
    # adapter must add each to the demand left, or it stops after the first 5.
    kit = Kit(bridge)
    count = 1000
    subscriber = kit.recorder_of(rs.from_iterable(range(count)), 5, 1)
    with cancel_if_stalled(subscriber.cancel):
        assert subscriber.awaitDone(WAIT_MS)
    assert subscriber.isComplete()
    assert int(subscriber.count()) == count and list(subscriber.violations()) == []


def test_rule_3_9_a_java_request_of_zero_gets_the_kits_message_python_to_jvm(bridge: Bridge) -> None:
    kit = Kit(bridge)
    spy = Spy(rs.from_iterable(range(10)))
    subscriber = kit.recorder_of(spy)
    assert subscriber.awaitSubscribed(WAIT_MS)
    subscriber.request(0)
    assert subscriber.awaitDone(WAIT_MS)
    assert str(subscriber.errorClass()) == "java.lang.IllegalArgumentException"
    assert str(subscriber.errorMessage()) == kit_message(bridge, 0)  # "got 0", the argument itself
    assert int(subscriber.count()) == 0 and spy.cancels == 1 and kit.live_adapters() == 0


def test_rule_3_9_a_jvm_side_request_of_minus_three_reaches_python_as_the_kits_error(bridge: Bridge) -> None:
    # The JVM side of a Python subscriber refuses request(-3) itself: the Python subscriber gets
    # the kit's IllegalArgumentException as a ValueError, and upstream is cancelled.
    kit = Kit(bridge)
    upstream = kit.recording_range(10)
    probe = Probe(0)
    java_subscriber = bridge.subscriber_to_jvm(probe)
    upstream.subscribe(java_subscriber)
    probe.await_subscribed()
    java_subscriber.request(-3)
    probe.await_done()
    assert isinstance(probe.error, rs.JvmError) and isinstance(probe.error, ValueError)
    assert probe.error.java_class == "java.lang.IllegalArgumentException"
    assert probe.error.java_message == kit_message(bridge, -3)
    # The cancel may land after the error: the thread then running upstream's drain sends it
    wait_for(lambda: int(upstream.cancels()) >= 1, "upstream cancelled")
    assert probe.items == [] and int(upstream.cancels()) == 1
    probe.assert_rules_held()


def test_the_kits_message_is_the_one_python_signals(bridge: Bridge) -> None:
    # One wording of §3.9 on both sides of the bridge.
    probe = Probe(0)
    rs.from_iterable([1]).subscribe(probe)
    probe.request(0)
    probe.await_done()
    assert str(probe.error) == kit_message(bridge, 0)
    assert py(bridge.jvm.io.github.rspy.bridge.Demand.UNBOUNDED) == rs.MAX_DEMAND
