"""Failures are signals: errors cross both ways, subscriber failures cancel, a dead JVM or a
closed bridge ends every live stream, and nothing is left behind."""

from __future__ import annotations

import gc
import logging
import re
import threading
import time
import weakref
from typing import Any

import pytest

import reactive_streams as rs
from reactive_streams.jvm import Bridge, BridgeClosedError

from ..support import WAIT, Boom, OnRequest, Probe, Spy
from .kit import WAIT_MS, Kit


def failing(count: int, error: BaseException) -> Any:
    yield from range(count)
    raise error


def test_a_python_publisher_error_reaches_the_java_subscriber(bridge: Bridge) -> None:
    kit = Kit(bridge)
    subscriber = kit.recorder_of(rs.from_iterable(failing(3, Boom("python failed"))), 100)
    assert subscriber.awaitDone(WAIT_MS)
    assert str(subscriber.errorClass()) == "io.github.rspy.bridge.PythonException"
    assert "Boom: python failed" in str(subscriber.errorMessage())
    assert "Traceback" in str(subscriber.error().getPythonTraceback())
    assert int(subscriber.count()) == 3


@pytest.mark.parametrize(
    ("error", "java_class"),
    [
        (ValueError("§3.9: bad request"), "java.lang.IllegalArgumentException"),
        (rs.NullElementError("§2.13: null"), "java.lang.NullPointerException"),
    ],
)
def test_python_value_and_null_errors_become_what_the_tck_expects(
    bridge: Bridge, error: BaseException, java_class: str
) -> None:
    kit = Kit(bridge)
    subscriber = kit.recorder_of(rs.from_iterable(failing(0, error)), 5)
    assert subscriber.awaitDone(WAIT_MS)
    assert str(subscriber.errorClass()) == java_class


def test_a_python_publisher_emitting_none_fails_the_java_stream(bridge: Bridge) -> None:
    def none(subscriber: rs.Subscriber[Any], n: int) -> None:
        try:
            subscriber.on_next(None)
        except TypeError:
            pass  # §2.13: the subscriber raised, as it must

    subscriber = Kit(bridge).recorder_of(OnRequest(none), 1)
    assert subscriber.awaitDone(WAIT_MS)
    assert str(subscriber.errorClass()) == "java.lang.NullPointerException"


def test_a_python_publisher_emitting_more_than_requested_is_reported(bridge: Bridge) -> None:
    def one_too_many(subscriber: rs.Subscriber[Any], n: int) -> None:
        for i in range(n + 1):  # one more than requested: breaks §1.1
            subscriber.on_next(i)

    subscriber = Kit(bridge).recorder_of(OnRequest(one_too_many), 2)
    assert subscriber.awaitDone(WAIT_MS)
    assert str(subscriber.errorClass()) == "java.lang.IllegalStateException"
    assert "§1.1" in str(subscriber.errorMessage())


def test_a_raising_python_subscriber_is_cancelled_on_the_jvm_and_logged(
    bridge: Bridge, caplog: pytest.LogCaptureFixture
) -> None:
    kit = Kit(bridge)
    upstream = kit.recording_range(1_000_000)

    def explode(probe: Probe, item: Any) -> None:
        if item == 2:
            raise Boom("subscriber failed")

    with caplog.at_level(logging.ERROR, logger="reactive_streams"):
        probe = kit.probe_of(upstream, 10, on_next_hook=explode)
        probe.await_items(3)
        assert kit.live_adapters() == 0
    assert int(upstream.cancels()) == 1
    assert probe.items == [0, 1, 2] and not probe.done.is_set()
    assert any("§2.13" in r.getMessage() and r.exc_info for r in caplog.records)


def test_an_element_the_bridge_cannot_read_ends_the_stream_with_an_error_after_the_ones_before_it(
    bridge: Bridge,
) -> None:  # §1.4, §2.13: the JVM side's failure is signalled, upstream cancelled, nothing hangs
    kit = Kit(bridge)
    upstream = kit.recording_publisher(kit.jvm.io.github.rspy.bridge.testing.Sources.thenUnreadable(5))
    probe = kit.probe_of(upstream, 100)
    probe.await_done()
    assert probe.items == [0, 1, 2, 3, 4]
    assert isinstance(probe.error, rs.JvmError)
    assert "could not be read" in str(probe.error)
    assert "failed to lazily initialize a collection: no session" in str(probe.error)
    assert kit.live_adapters() == 0 and int(upstream.cancels()) == 1


def test_request_zero_from_python_to_a_jvm_publisher_is_a_value_error(bridge: Bridge) -> None:  # §3.9
    kit = Kit(bridge)
    upstream = kit.recording_range(100)
    probe = kit.probe_of(upstream)
    probe.await_subscribed()
    probe.request(0)
    probe.await_done()
    assert isinstance(probe.error, rs.IllegalDemandError) and isinstance(probe.error, ValueError)
    assert "§3.9" in str(probe.error)
    assert kit.live_adapters() == 0 and int(upstream.cancels()) == 1


def test_request_true_to_a_jvm_publisher_says_a_bool_is_not_demand(bridge: Bridge) -> None:  # §3.9
    kit = Kit(bridge)
    upstream = kit.recording_range(100)
    probe = kit.probe_of(upstream)
    probe.await_subscribed()
    probe.request(True)
    probe.await_done()
    assert isinstance(probe.error, rs.IllegalDemandError)
    assert str(probe.error) == (
        "§3.9: request(n) needs a positive int; a bool is not accepted as demand, got True"
    )
    assert probe.items == [] and kit.live_adapters() == 0 and int(upstream.cancels()) == 1


@pytest.mark.parametrize("end", ["cancel", "complete", "error"])
def test_rule_3_13_subscriber_is_collected_and_the_jvm_holds_no_proxy(bridge: Bridge, end: str) -> None:
    kit = Kit(bridge)
    source = {
        "cancel": kit.Flux.never(),
        "complete": kit.Flux.range(0, 3),
        "error": kit.Flux.error(kit.runtime_exception("x")),
    }[end]
    probe = kit.probe_of(source, 5)
    probe.await_subscribed()
    if end == "cancel":
        probe.cancel()
    else:
        probe.await_done()
    ref = weakref.ref(probe)
    del probe
    assert kit.live_adapters() == 0
    gc.collect()
    assert ref() is None, "the bridge still holds the Python subscriber"
    assert bridge.live_streams == 0


def test_rule_3_13_python_publisher_side_is_released(bridge: Bridge) -> None:
    kit = Kit(bridge)
    subscriber = kit.recording_subscriber(2, 0)
    publisher = rs.from_iterable(range(100))
    bridge.to_jvm(publisher).subscribe(subscriber)
    assert subscriber.awaitItems(2, WAIT_MS)
    subscriber.cancel()
    assert kit.live_adapters() == 0
    deadline = time.monotonic() + WAIT
    while bridge.live_streams and time.monotonic() < deadline:
        time.sleep(0.01)
    assert bridge.live_streams == 0


# Closing a bridge and losing its JVM.


def _bridge_threads(gateway_is_sparks: bool = False) -> set[str]:
    """The bridge's threads, and those of a gateway it owns. Spark's gateway (``spark``) outlives
    every bridge: a connection it opened for two callbacks at once (its thread ``Thread-N (run)``)
    stays open until Spark's own pool closes it, and is not the bridge's to end."""
    names = {t.name for t in threading.enumerate() if t.name.startswith(("rs-bridge", "Thread-"))}
    if gateway_is_sparks:
        names = {name for name in names if not re.fullmatch(r"Thread-\d+ \(run\)", name)}
    return names


def _own_bridge(backend: str, spark_session: Any, test_jars: list[str]) -> Bridge:
    if backend == "spark":
        return Bridge.spark(spark_session)
    if backend == "py4j":
        return Bridge.py4j(test_jars)
    return Bridge.jpype(test_jars)


@pytest.mark.parametrize("backend", ["spark", "py4j", "jpype"])
def test_close_ends_live_streams_and_releases_everything(
    backend: str, request: pytest.FixtureRequest, test_jars: list[str]
) -> None:
    spark_session = request.getfixturevalue("spark_session") if backend == "spark" else None
    if spark_session is not None:  # Spark's own callback server (and its thread) outlives any bridge
        from pyspark.java_gateway import ensure_callback_server_started

        ensure_callback_server_started(spark_session.sparkContext._gateway)
    before = _bridge_threads(backend == "spark")
    own = _own_bridge(backend, spark_session, test_jars)
    kit = Kit(own)
    incoming = kit.probe_of(kit.Flux.never(), 1)
    outgoing_source = Spy(rs.from_iterable(range(10**9)))
    java_subscriber = kit.recorder_of(outgoing_source, 1)
    incoming.await_subscribed()
    assert java_subscriber.awaitItems(1, WAIT_MS)
    runtime = own.runtime
    late_publisher = own.from_jvm(kit.Flux.range(0, 3))
    own.close()
    incoming.await_done()
    assert isinstance(incoming.error, BridgeClosedError)
    assert outgoing_source.cancels == 1
    assert own.live_streams == 0 and own.closed
    if backend != "py4j":  # the JVM lives on; its side of this bridge is gone
        assert int(runtime.liveAdapters()) == 0 and runtime.isClosed()
    else:
        assert own.jvm_process is not None and own.jvm_process.poll() is not None
    with pytest.raises(BridgeClosedError):
        own.to_jvm(rs.from_iterable([1]))
    late = Probe(1)
    late_publisher.subscribe(late)  # made before close, subscribed after: §1.9, then on_error
    assert isinstance(late.error, BridgeClosedError)
    _wait_for(lambda: _bridge_threads(backend == "spark") <= before, "threads were left behind", before)
    own.close()  # idempotent


@pytest.mark.parametrize("backend", ["spark", "jpype"])
def test_close_returns_once_the_drain_threads_made_their_last_call_to_python(
    backend: str, request: pytest.FixtureRequest, test_jars: list[str]
) -> None:
    """Each drain thread calls Python as it ends (its thread state; its Py4J connection): one
    still ending after ``close()`` returned met a JPype shutting down at the interpreter's exit,
    and JPype aborted the process (``Fatal error in exception handling``, seen in CI)."""
    spark_session = request.getfixturevalue("spark_session") if backend == "spark" else None
    for _ in range(5):
        own = _own_bridge(backend, spark_session, test_jars)
        kit = Kit(own)
        streams = [own.from_jvm(kit.Flux.range(0, 2000)) for _ in range(4)]
        iterators = [s.iterate(prefetch=16) for s in streams]
        assert [sum(1 for _ in it) for it in iterators] == [2000] * 4
        runtime = own.runtime
        assert int(runtime.drainThreads()) > 0  # what close must wait for
        own.close()
        assert int(runtime.drainThreads()) == 0


def test_killing_the_gateway_jvm_ends_live_streams_with_on_error(test_jars: list[str]) -> None:
    before = _bridge_threads()
    own = Bridge.py4j(test_jars)
    kit = Kit(own)
    probes = [Probe(5) for _ in range(3)]
    for probe in probes:
        own.from_jvm(kit.Flux.interval(kit.millis(5)).onBackpressureDrop()).subscribe(probe)
    outgoing = Spy(rs.from_iterable(range(10**9)))
    java_subscriber = kit.recorder_of(outgoing, 3)
    for probe in probes:
        probe.await_items(1)
    assert java_subscriber.awaitItems(3, WAIT_MS)
    assert own.jvm_process is not None
    own.jvm_process.kill()
    for probe in probes:
        probe.await_done(WAIT)
        assert isinstance(probe.error, BridgeClosedError) and "died" in str(probe.error)
        probe.assert_rules_held()
    assert own.closed and own.live_streams == 0
    _wait_for(lambda: outgoing.cancels == 1, "the Python publisher feeding the dead JVM was not cancelled")
    _wait_for(lambda: _bridge_threads() <= before, "threads were left behind", before)
    own.close()


def _wait_for(condition: Any, message: str, before: set[str] | None = None) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            now = _bridge_threads()
            raise AssertionError(f"{message}: {sorted(now - before if before is not None else now)}")
        time.sleep(0.02)


def test_rule_3_13_the_jvm_handle_is_released_off_the_collecting_thread(
    bridge: Bridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A finalizer runs wherever the collector struck, maybe mid-reply on a Py4J connection:
    # the release is handed to the finalizer thread instead.
    from reactive_streams.jvm import _to_jvm

    released_on: list[str] = []
    monkeypatch.setattr(
        _to_jvm, "_python_released", lambda handle: released_on.append(threading.current_thread().name)
    )
    kit = Kit(bridge)
    subscriber = kit.recorder_of(rs.from_iterable(range(100)), 2)
    assert subscriber.awaitItems(2, WAIT_MS)
    subscriber.cancel()
    deadline = time.monotonic() + WAIT
    while not released_on and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.01)
    assert released_on == ["rs-finalizer"]
