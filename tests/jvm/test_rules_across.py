"""The core's rule tests, across the boundary, on every backend."""

from __future__ import annotations

import sys
from typing import Any

import reactive_streams as rs
from reactive_streams.jvm import Bridge

from ..support import Probe, Spy, run_threads, wait_for
from .kit import WAIT_MS, Kit


def test_rule_1_1_python_demand_is_what_the_jvm_publisher_sees(bridge: Bridge) -> None:
    kit = Kit(bridge)
    upstream = kit.recording_range(10_000)
    probe = kit.probe_of(upstream)
    probe.await_subscribed()
    for n in (3, 1, 250, 4096):
        probe.request(n)
        probe.await_items(probe.requested)
        assert int(upstream.requested()) == probe.requested == len(probe.items)
    probe.cancel()
    probe.assert_rules_held()


def test_rule_3_2_and_3_3_request_inside_on_next_does_not_recurse_across(bridge: Bridge) -> None:
    kit = Kit(bridge)
    depths: list[int] = []

    def one_more(probe: Probe, item: Any) -> None:
        frame, depth = sys._getframe(), 0
        while frame is not None:
            frame, depth = frame.f_back, depth + 1  # type: ignore[assignment]
        depths.append(depth)
        probe.request(1)

    upstream = kit.recording_range(3000)
    probe = kit.probe_of(upstream, 1, on_next_hook=one_more)
    probe.await_done()
    assert probe.items == list(range(3000))
    assert max(depths) - min(depths) < 10, "the stack grew with each element (§3.3)"
    probe.assert_rules_held()


def test_rule_3_5_and_3_7_cancel_is_idempotent_and_thread_safe_across(bridge: Bridge) -> None:
    kit = Kit(bridge)
    upstream = kit.recording_range(1_000_000)
    probe = kit.probe_of(upstream, 5)
    probe.await_items(5)
    assert probe.subscription is not None
    run_threads(probe.subscription.cancel, 8)
    probe.cancel()
    probe.request(10)  # §3.6: a no-op
    assert kit.live_adapters() == 0
    assert int(upstream.cancels()) == 1 and len(probe.items) == 5 and not probe.done.is_set()


def test_rule_3_17_demand_up_to_long_max_across(bridge: Bridge) -> None:
    kit = Kit(bridge)
    upstream = kit.recording_range(100)
    probe = kit.probe_of(upstream)
    probe.await_subscribed()
    probe.request(rs.MAX_DEMAND)
    probe.request(rs.MAX_DEMAND)
    probe.request(1)
    probe.await_done()
    assert probe.completed and probe.items == list(range(100))
    assert all(0 < int(n) <= rs.MAX_DEMAND for n in upstream.requests())


def test_rule_3_17_java_demand_up_to_long_max_reaches_python(bridge: Bridge) -> None:
    kit = Kit(bridge)
    spy = Spy(rs.from_iterable(range(100)))
    subscriber = kit.recorder_of(spy)
    assert subscriber.awaitSubscribed(WAIT_MS)
    subscriber.request(rs.MAX_DEMAND)
    subscriber.request(rs.MAX_DEMAND)
    assert subscriber.awaitDone(WAIT_MS) and subscriber.isComplete()
    assert spy.requested >= 100 and all(0 < n <= rs.MAX_DEMAND for n in spy.requests)


def test_rule_1_3_signals_to_python_are_serial_from_a_multithreaded_jvm_source(bridge: Bridge) -> None:
    kit = Kit(bridge)
    schedulers = kit.jvm.reactor.core.scheduler.Schedulers
    merged = (
        kit.Flux.range(0, 2000)
        .subscribeOn(schedulers.parallel())
        .mergeWith(kit.Flux.range(2000, 2000).subscribeOn(schedulers.boundedElastic()))
    )
    probe = kit.probe_of(merged, 64, on_next_hook=lambda p, item: p.request(1))
    probe.await_done()
    assert sorted(probe.items) == list(range(4000))
    probe.assert_rules_held()


def test_describe_names_each_live_stream_with_its_demand_and_then_none(bridge: Bridge) -> None:
    kit = Kit(bridge)
    upstream = kit.recording_range(100)
    probe = kit.probe_of(upstream, 7)
    probe.await_items(7)
    described = str(bridge.runtime.describe())
    assert described.startswith("pool: ") and "closed: false" in described
    assert "ToPythonSubscriber" in described and "forwarded 7" in described and "polled 7" in described

    def streams() -> int:
        return str(bridge.runtime.describe()).count("ToPythonSubscriber")

    live = streams()
    probe.cancel()
    wait_for(lambda: streams() == live - 1, "the cancelled stream to leave the description")
