"""``Bridge.describe()``: each live stream of a bridge as a `reactive_streams.StreamState`, both
directions, on every backend (issue 47): the demand outstanding, what the side before the
consumer holds, and whether the stream waits on its producer or its consumer, since when."""

from __future__ import annotations

import threading
import time
from typing import Any

import reactive_streams as rs
from reactive_streams.jvm import Bridge

from ..support import Probe, wait_for
from .kit import Kit


def _only(bridge: Bridge) -> rs.StreamState:
    states = bridge.describe()
    assert len(states) == 1, states
    return states[0]


def _figures(state: rs.StreamState) -> tuple[Any, ...]:
    return state.kind, state.waiting_on, state.outstanding, state.held, state.delivered


def test_a_jvm_publisher_that_never_emits_names_the_producer(own_bridge: Bridge) -> None:
    bridge = own_bridge
    probe = Probe(10)
    bridge.from_jvm(Kit(bridge).Flux.never()).subscribe(probe)
    wait_for(lambda: len(bridge.describe()) == 1, "the stream to be listed")
    time.sleep(0.2)
    state = _only(bridge)
    assert _figures(state) == ("from_jvm", "producer", 10, 0, 0)
    assert state.waiting_seconds >= 0.15
    probe.cancel()
    wait_for(lambda: not bridge.describe(), "the cancelled stream to go")


def test_a_python_subscriber_that_stops_requesting_shows_no_demand_and_a_growing_wait(
    own_bridge: Bridge,
) -> None:
    bridge = own_bridge
    probe = Probe(10)
    bridge.from_jvm(Kit(bridge).Flux.range(0, 1_000)).subscribe(probe)
    wait_for(lambda: len(probe.items) == 10, "the ten requested")
    first = _only(bridge)
    time.sleep(0.2)
    later = _only(bridge)
    assert _figures(first) == _figures(later) == ("from_jvm", "consumer", 0, 0, 10)
    assert later.waiting_since == first.waiting_since
    assert later.waiting_seconds >= first.waiting_seconds + 0.15
    probe.request(990)
    probe.await_done()
    assert probe.items == list(range(1_000))
    wait_for(lambda: not bridge.describe(), "the completed stream to go")


def test_what_the_jvm_holds_while_python_takes_a_batch_names_the_consumer(own_bridge: Bridge) -> None:
    bridge = own_bridge
    release = threading.Event()

    def hold_the_first(probe: Probe, item: Any) -> None:
        if len(probe.items) == 1:
            release.wait(30)

    probe = Probe(100, hold_the_first)
    bridge.from_jvm(Kit(bridge).Flux.range(0, 1_000)).subscribe(probe)
    try:
        wait_for(lambda: _only(bridge).held == 100, "the hundred requested held for Python")
        assert _figures(_only(bridge)) == ("from_jvm", "consumer", 0, 100, 0)
    finally:
        release.set()
    wait_for(lambda: len(probe.items) == 100, "the hundred delivered")
    assert _figures(_only(bridge)) == ("from_jvm", "consumer", 0, 0, 100)
    probe.cancel()


def test_a_python_publisher_a_java_subscriber_waits_on_names_the_producer(own_bridge: Bridge) -> None:
    bridge = own_bridge
    kit = Kit(bridge)
    subscriber = kit.recording_subscriber(5)
    bridge.to_jvm(rs.never()).subscribe(subscriber)
    wait_for(lambda: len(bridge.describe()) == 1 and bridge.describe()[0].outstanding == 5, "the demand")
    assert _figures(_only(bridge)) == ("to_jvm", "producer", 5, 0, 0)
    subscriber.cancel()
    wait_for(lambda: not bridge.describe(), "the cancelled stream to go")


def test_a_java_subscriber_that_stops_requesting_names_the_consumer(own_bridge: Bridge) -> None:
    bridge = own_bridge
    subscriber = Kit(bridge).recording_subscriber(3)
    bridge.to_jvm(rs.from_iterable(range(100))).subscribe(subscriber)
    assert subscriber.awaitItems(3, 10_000)
    wait_for(lambda: _only(bridge).delivered == 3, "three pushed")
    assert _figures(_only(bridge)) == ("to_jvm", "consumer", 0, 0, 3)
    subscriber.cancel()
    wait_for(lambda: not bridge.describe(), "the cancelled stream to go")
