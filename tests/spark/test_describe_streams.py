"""`rss.describe_streams(spark)`: a session's live streams as `reactive_streams.StreamState`s,
on Spark Connect (the client's streams, read with no call to the server) and on a classic
session (its bridge's), issue 47: a stuck stream names its side."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import reactive_streams as rs
from reactive_streams import spark as rss

from ..support import Probe
from .connect_kit import wait_for

pytestmark = pytest.mark.timeout(300)


def _longs(spark: Any) -> list[rs.StreamState]:
    return [state for state in rss.describe_streams(spark) if state.name.startswith("longs ")]


def test_a_connect_subscriber_that_stops_requesting_names_the_consumer(connect: Any) -> None:
    probe = Probe(10)
    rss.jvm_publisher(connect, "longs", "1000").subscribe(probe)
    probe.await_items(10)
    wait_for(lambda: len(_longs(connect)) == 1, 30, "the stream to be described")
    (state,) = _longs(connect)
    assert (state.kind, state.waiting_on, state.outstanding, state.held, state.delivered) == (
        "connect",
        "consumer",
        0,
        0,
        10,
    )
    probe.cancel()
    wait_for(lambda: not _longs(connect), 30, "the cancelled stream to go")


def test_a_connect_subscriber_busy_with_a_run_holds_it_and_names_the_consumer(connect: Any) -> None:
    release = threading.Event()

    def hold_the_first(probe: Probe, item: Any) -> None:
        if len(probe.items) == 1:
            release.wait(60)

    probe = Probe(100, hold_the_first)
    rss.jvm_publisher(connect, "longs", "1000").subscribe(probe)
    try:
        wait_for(lambda: [s.held for s in _longs(connect)] == [100], 30, "the run of 100 held")
        (state,) = _longs(connect)
        assert (state.waiting_on, state.outstanding, state.delivered) == ("consumer", 0, 0)
    finally:
        release.set()
    probe.await_items(100)
    probe.cancel()


def test_a_connect_stream_waiting_for_the_server_names_the_producer(connect: Any) -> None:
    probe = Probe(5)
    rss.jvm_publisher(connect, "longs", "3").subscribe(probe)  # three, then the end: not yet asked
    probe.await_done()
    assert not _longs(connect), "an ended stream is described no more"
    never = Probe(7)
    rss.jvm_publisher(connect, "never").subscribe(never)
    wait_for(
        lambda: [s.outstanding for s in rss.describe_streams(connect) if s.name.startswith("never ")] == [7],
        30,
        "the silent stream with its demand",
    )
    (state,) = [s for s in rss.describe_streams(connect) if s.name.startswith("never ")]
    assert (state.waiting_on, state.held, state.delivered) == ("producer", 0, 0)
    never.cancel()


def test_a_classic_session_describes_its_bridge_streams(spark_session: Any) -> None:
    bridge = rss.bridge(spark_session)
    probe = Probe(4)
    bridge.from_jvm(spark_session._jvm.reactor.core.publisher.Flux.never()).subscribe(probe)
    try:
        wait_for(
            lambda: any(
                s.kind == "from_jvm" and s.outstanding == 4 for s in rss.describe_streams(spark_session)
            ),
            30,
            "the stream on the session's bridge",
        )
    finally:
        probe.cancel()


def test_anything_but_a_session_is_a_type_error_naming_it(spark_session: Any, connect: Any) -> None:
    expected = r"^describe_streams\(spark\) needs a pyspark\.sql\.SparkSession, got "
    for wrong in (None, "local[2]", spark_session.range(1), connect.range(1)):
        with pytest.raises(TypeError, match=expected):
            rss.describe_streams(wrong)
