"""`jvm_publisher`, the DataFrame functions and their failures on a real standalone Spark
Connect server with the plugin (`connect_kit`): demand exact end to end, sessions kept apart,
streams of a client that goes away cancelled, a server that goes away an ``on_error``."""

from __future__ import annotations

import concurrent.futures
import itertools
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

import reactive_streams as rs
from reactive_streams import spark as rss
from reactive_streams.jvm import JvmValueError
from reactive_streams.spark._connect._connection import connection
from reactive_streams.spark._connect._wire import LOST_AFTER, new_stream_id

from ..conftest import ROOT
from ..support import Boom, Probe
from .connect_kit import (
    REAPED_WITHIN,
    THREADS_END_WITHIN,
    AskingBy64,
    all_streams,
    client_state,
    connect_session,
    server_stats,
    server_threads,
    shared_server,
    sockets,
    start_server,
    stop_session,
    stream_threads,
    wait_for,
)

pytestmark = pytest.mark.timeout(300)


def test_longs_arrive_exactly_in_order_and_every_request_reaches_the_jvm(connect: Any) -> None:
    probe = Probe(initial=3)
    rss.jvm_publisher(connect, "longs", "10000").subscribe(probe)
    probe.await_items(3)
    for n in (1, 996, 9000):
        probe.request(n)
    probe.await_done()
    assert probe.completed and probe.items == list(range(10_000))
    probe.assert_rules_held()
    streams = all_streams(connect).values()
    (stream,) = [v for v in streams if v.get("requests") == [3, 1, 996, 9000]] or [list(streams)]
    assert stream["sent"] == 10_000 and stream["state"] == "complete"  # each request(n) as it was made


def test_demand_met_by_many_replies_gets_them_all_taking_turns_with_other_streams(connect: Any) -> None:
    """A request of 300,000 is met by five replies of at most 65,536: the reply path sends one,
    then the other streams' turns, then the next, until none is left."""
    probes = [Probe(initial=300_000) for _ in range(3)]
    for probe in probes:
        rss.jvm_publisher(connect, "longs", "300000").subscribe(probe)
    for probe in probes:
        probe.await_done()
        assert probe.completed and probe.items == list(range(300_000))


def test_the_server_holds_no_more_than_the_outstanding_demand(connect: Any) -> None:
    probe = Probe(initial=5)
    publisher = rss.jvm_publisher(connect, "longs")  # unbounded
    publisher.subscribe(probe)
    probe.await_items(5)
    time.sleep(0.5)  # a server that pushed ahead of demand would have more by now
    assert len(probe.items) == 5
    probe.request(7)
    probe.await_items(12)
    streams = all_streams(connect)
    mine = [s for s in streams.values() if s.get("name") == "longs" and s.get("requests") == [5, 7]]
    assert mine, streams
    assert mine[0]["max_buffered"] <= 7 and mine[0]["sent"] == 12
    probe.cancel()
    wait_for(lambda: all_streams(connect)[_id_of(connect, [5, 7])]["state"] == "cancelled", 10, "the cancel")


def test_elements_a_publisher_emits_inside_request_go_out_as_one_reply(connect: Any) -> None:
    # The longs publisher emits inside request(n): each request's elements cross as one reply,
    # not as many as the server's sender happened to wake up for.
    probe = Probe(initial=1000)
    rss.jvm_publisher(connect, "longs", "6000").subscribe(probe)
    probe.await_items(1000)
    probe.request(2000)
    probe.await_items(3000)
    probe.request(3000)
    probe.await_done()
    assert probe.completed and probe.items == list(range(6000))
    stream = all_streams(connect)[_id_of(connect, [1000, 2000, 3000])]
    assert stream["batches"] == 3 and stream["sent"] == 6000


def test_a_cancel_inside_on_next_stops_the_reply_under_way(connect: Any) -> None:
    def cancel_at_ten(probe: Probe, item: Any) -> None:
        if item == 9:
            probe.cancel()

    probe = Probe(initial=5000, on_next_hook=cancel_at_ten)  # one reply of 5,000 for it
    rss.jvm_publisher(connect, "longs", "10000").subscribe(probe.relay())
    probe.await_released("the cancelled subscription to let go of its subscriber")
    assert probe.items == list(range(10)) and probe.signals_after_cancel == 0  # §3.6
    probe.assert_rules_held()


def test_streams_one_after_another_and_at_once_leave_no_thread_or_socket(connect: Any) -> None:
    def run(count: int) -> list[Probe]:
        probes = [Probe(initial=100) for _ in range(count)]
        for probe in probes:
            rss.jvm_publisher(connect, "longs", "100").subscribe(probe)
        for probe in probes:
            probe.await_done()
        return probes

    run(1)  # PySpark's own channel and threads, made once
    wait_for(
        lambda: not stream_threads(),
        THREADS_END_WITHIN,
        "the streams' threads to end",
        lambda: client_state(connect),
    )
    before = sockets()
    for _ in range(20):
        assert all(p.completed for p in run(1))
    assert all(p.completed and p.items == list(range(100)) for p in run(50))
    wait_for(
        lambda: not stream_threads() and sockets() <= before,
        THREADS_END_WITHIN,
        "the threads and sockets to go",
        lambda: f"{client_state(connect)}; sockets {sockets()}, {before} before",
    )


def test_a_subscriber_blocked_in_on_next_holds_up_none_of_99_others(connect: Any) -> None:
    release = threading.Event()
    slow = AskingBy64(block=release)
    rss.jvm_publisher(connect, "longs", "1000").subscribe(slow)
    assert slow.started.wait(30), "the slow subscriber's first element"
    others = [AskingBy64() for _ in range(99)]
    for subscriber in others:
        rss.jvm_publisher(connect, "longs", "2000").subscribe(subscriber)
    try:
        for subscriber in others:
            assert subscriber.done.wait(30), "a stream stalled"
        assert slow.items == []  # all while it was still blocked in its first on_next
        assert all(s.error is None and s.items == list(range(2000)) for s in others)  # exact, in order
        readers = [name for name in stream_threads() if name == "rs-connect-replies"]
        assert 1 <= len(readers) <= 2, readers  # the stuck one, and the one that took over
    finally:
        release.set()
    assert slow.done.wait(30) and slow.error is None and slow.items == list(range(1000))


def test_a_thousand_streams_at_once_share_one_reading_thread_and_one_server_thread(connect: Any) -> None:
    server = shared_server()
    run = [AskingBy64() for _ in range(2)]  # the session's reply path open, PySpark's threads made
    for subscriber in run:
        rss.jvm_publisher(connect, "longs", "100").subscribe(subscriber)
        assert subscriber.done.wait(30)
    idle = server_threads(server)
    peaks = {"client": 0, "server": 0, "paths": 0}
    watching = True

    def watch() -> None:
        for sample in itertools.count():
            if not watching:
                return
            peaks["client"] = max(peaks["client"], threading.active_count())
            if sample % 5 == 0:  # reading /proc for each server thread's name takes a few ms
                peaks["server"] = max(peaks["server"], server_threads(server))
            peaks["paths"] = max(peaks["paths"], connection(connect).reply_paths)
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    before = threading.active_count()
    subscribers = [AskingBy64() for _ in range(1000)]
    try:
        for subscriber in subscribers:
            rss.jvm_publisher(connect, "longs", "1000").subscribe(subscriber)
        for subscriber in subscribers:
            assert subscriber.done.wait(120), "a stream did not end"
    finally:
        watching = False
        watcher.join()
    assert all(s.error is None and s.items == list(range(1000)) for s in subscribers)
    assert peaks["paths"] == 1  # one reply path for all of them
    assert peaks["client"] - before <= 8, peaks  # a reader, its watchdog, the lease thread; none per stream
    assert peaks["server"] - idle <= 16, (peaks, idle)  # not a thread per stream (they were 2 each)


def test_streams_of_rows_as_arrow_one_after_another_and_at_once_free_what_they_encoded(connect: Any) -> None:
    def run(count: int, kind: str) -> list[Probe]:
        probes = [Probe(initial=1000) for _ in range(count)]
        for probe in probes:
            rss.jvm_publisher(connect, "table_rows", f"{kind}:100").subscribe(probe)
        for probe in probes:
            probe.await_done()
        return probes

    run(1, "tuples")  # PySpark's own channel and threads, made once
    wait_for(
        lambda: not stream_threads(),
        THREADS_END_WITHIN,
        "the streams' threads to end",
        lambda: client_state(connect),
    )
    before = sockets()
    for kind in ("tuples", "maps", "records", "spark", "mixed") * 20:
        (probe,) = run(1, kind)
        assert probe.completed and len(probe.items) == (103 if kind == "mixed" else 100)
    assert all(p.completed and p.items[-1] == (99, 49.5, "r99") for p in run(50, "tuples"))
    wait_for(
        lambda: not stream_threads() and sockets() <= before,
        THREADS_END_WITHIN,
        "the threads and sockets to go",
        lambda: f"{client_state(connect)}; sockets {sockets()}, {before} before",
    )
    assert server_stats(connect)["all"]["arrow_allocated"] == 0  # every batch encoded was freed


@pytest.mark.timeout(600)
def test_ten_thousand_requests_add_fewer_than_100_lines_to_the_servers_log(connect: Any) -> None:
    # ServerPlugin sets Spark Connect's per-call INFO loggers to WARN: one line per call before.
    log = shared_server().log_path

    def lines() -> int:
        with open(log, "rb") as text:
            return sum(1 for _ in text)

    def one_more(probe: Probe, item: Any) -> None:
        if item >= 1:  # the first element came before the count began
            probe.request(1)  # each request once the last was met: one call each, not a batch of them

    probe = Probe(initial=1, on_next_hook=one_more)
    rss.jvm_publisher(connect, "longs", "10001").subscribe(probe)
    probe.await_items(1)
    before = lines()
    probe.request(1)
    probe.await_done(timeout=300)
    assert probe.completed and probe.items == list(range(10_001))
    added = lines() - before
    assert added < 100, f"{added} lines for 10,000 calls"


@pytest.mark.parametrize("op", ["subscribe", "register_publisher", "register_subscriber"])
@pytest.mark.parametrize("max_batch", [0, -1, 2**31])
def test_every_op_refuses_a_max_batch_out_of_range_alike(connect: Any, op: str, max_batch: Any) -> None:
    from reactive_streams.spark._connect._wire import new_stream_id

    header = {"op": op, "stream": new_stream_id(), "name": f"max-batch-{op}", "max_batch": max_batch}
    expected = f"{op} needs max_batch from 1 to 2147483647, got {max_batch}"
    replies = connection(connect).execute(header)
    try:
        with pytest.raises(rs.JvmError, match=re.escape(expected)):
            next(replies)  # the call's first reply: its error, not "opened"
    finally:
        replies.close()
    assert rss.unregister(connect, f"max-batch-{op}") is False  # nothing was registered


@pytest.mark.parametrize("rows", [-1, 2**31])
def test_register_subscriber_refuses_arrow_batch_rows_out_of_range(connect: Any, rows: int) -> None:
    from reactive_streams.spark._connect._wire import new_stream_id

    live = Probe(initial=1)  # keeps the session's reply path open, for the op to name
    rss.jvm_publisher(connect, "never").subscribe(live)
    wait_for(
        lambda: any(v["kind"] == "mux" for v in server_stats(connect)["streams"].values()), 10, "the path"
    )
    path = next(i for i, v in server_stats(connect)["streams"].items() if v["kind"] == "mux")
    name = f"arrow-rows-{rows}"
    header = {"op": "register_subscriber", "stream": new_stream_id(), "mux": path, "name": name}
    replies = connection(connect).execute({**header, "arrow_batch_rows": rows})
    expected = f"'arrow_batch_rows' from 0 (Spark's default) to 2147483647, got {rows}"
    try:
        with pytest.raises(rs.JvmError, match=re.escape(expected)):
            next(replies)
    finally:
        replies.close()
        live.cancel()
    assert rss.unregister(connect, name) is False  # nothing was registered


def _raw_status(session: Any, anys: list[Any]) -> list[dict[str, Any]]:
    """GetStatus with these extensions, as they are: the plugin's Status replies."""
    import pyspark.sql.connect.proto as pb2

    from reactive_streams.spark._connect._wire import STATUS, decode_status

    client = session.client
    request = pb2.GetStatusRequest(session_id=client._session_id, client_type=client._builder.userAgent)
    if client._server_session_id:
        request.client_observed_server_side_session_id = client._server_session_id
    request.extensions.extend(anys)
    response = client._stub.GetStatus(request, metadata=client._builder.metadata(), timeout=60)
    return [decode_status(r.value) for r in response.extensions if r.type_url == STATUS]


def _expect_command_refused(session: Any, call: Any, expected: str) -> None:
    """``call`` (an ``Any``) as an ExecutePlan command: it fails naming ``expected``, as a Status
    ``error`` or ``unknown`` reply or as the call's own error."""
    import pyspark.sql.connect.proto as pb2

    from reactive_streams.spark._connect._wire import decode_reply

    client = session.client
    request = client._execute_plan_request_with_metadata()
    request.request_options.append(
        pb2.ExecutePlanRequest.RequestOption(reattach_options=pb2.ReattachOptions(reattachable=False))
    )
    client._set_command_in_plan(request.plan, pb2.Command(extension=call))
    try:
        call_replies = client._stub.ExecutePlan(request, metadata=client._builder.metadata())
        replies = [decode_reply(r) for r in call_replies]
    except Exception as exc:  # the call failed: its details say why
        assert expected in str(exc), (expected, exc)
        return
    statuses = [r.status for r in replies if r is not None and r.kind == "status"]
    if expected == "unknown":
        assert [s["event"] for s in statuses] == ["unknown"], statuses
    else:
        assert [s["event"] for s in statuses] == ["error"] and expected in statuses[0]["message"], statuses


def _varint_field(number: int, value: int) -> bytes:
    """A protobuf varint field, encoded by hand: what a client with fields this one lacks sends."""
    out = bytearray()
    for part in (number << 3, value):  # wire type 0
        while part >= 0x80:
            out.append(part & 0x7F | 0x80)
            part >>= 7
        out.append(part)
    return bytes(out)


@pytest.mark.timeout(600)
def test_a_thousand_malformed_calls_each_get_a_clear_error_and_the_server_serves_on(connect: Any) -> None:
    import random

    from google.protobuf import any_pb2

    from reactive_streams.spark._connect._wire import CALL, encode_call, new_stream_id

    connection(connect).command({"op": "stats"})  # the session exists on the server
    other = connect_session()
    try:
        theirs = Probe(initial=3)
        rss.jvm_publisher(other, "longs", "100").subscribe(theirs)
        theirs.await_items(3)
        (their_stream,) = [
            i for i, v in all_streams(other).items() if v.get("requests") == [3] and v["state"] == "open"
        ]
        their_path = next(i for i, v in server_stats(other)["streams"].items() if v["kind"] == "mux")
        chance = random.Random(22)
        kinds: list[tuple[Any, str]] = [
            (
                lambda: any_pb2.Any(type_url=CALL, value=chance.randbytes(chance.randrange(1, 200))),
                "rspy Call",
            ),
            (lambda: any_pb2.Any(type_url=CALL, value=b""), "rspy Call without an op this server knows"),
            (  # a stream and a body, but no op
                lambda: any_pb2.Any(type_url=CALL, value=b"\x0a\x05{oops\x12\x01\x00"),
                "rspy Call without an op this server knows",
            ),
            (  # the stream as an integer: not the stream field, so no op either
                lambda: any_pb2.Any(type_url=CALL, value=b"\x08\x07"),
                "rspy Call without an op this server knows",
            ),
            (  # an op of a newer client: a field number this server does not know
                lambda: any_pb2.Any(type_url=CALL, value=_varint_field(chance.randrange(29, 2**29), 1)),
                "rspy Call without an op this server knows",
            ),
            (lambda: encode_call({"op": "demand", "stream": new_stream_id(), "n": -5}), "unknown"),
            (lambda: encode_call({"op": "demand", "stream": new_stream_id(), "n": 2**63 - 1}), "unknown"),
            (lambda: encode_call({"op": "demand", "n": 1}), "the demand call needs a stream"),
            (lambda: encode_call({"op": "cancel", "stream": new_stream_id()}), "unknown"),
            (lambda: encode_call({"op": "cancel", "stream": their_stream}), "unknown"),  # another session's
            (lambda: encode_call({"op": "demand", "stream": their_stream, "n": 10**6}), "unknown"),
            (
                lambda: encode_call(
                    {"op": "push", "stream": new_stream_id(), "sub": 1}, chance.randbytes(64)
                ),
                "unknown",
            ),
            (lambda: encode_call({"op": "mux", "stream": new_stream_id()}), "runs as an ExecutePlan command"),
            (  # a stream on a reply path that is not open, or is another session's
                lambda: encode_call(
                    {
                        "op": "subscribe",
                        "stream": new_stream_id(),
                        "name": "longs",
                        "max_batch": 8,
                        "mux": chance.choice([new_stream_id(), their_path]),
                    }
                ),
                "which is not open in this session",
            ),
            (
                lambda: encode_call(
                    {"op": "subscribe", "stream": new_stream_id(), "name": "longs", "max_batch": 8}
                ),
                "the subscribe call needs 'mux'",
            ),
        ]
        sent = 0
        while sent < 1000:
            batch = [chance.choice(kinds) for _ in range(50)]
            replies = _raw_status(connect, [make() for make, _ in batch])
            assert len(replies) == len(batch)  # one reply each, in order: none dropped
            for (_, expected), reply in zip(batch, replies, strict=True):
                if expected == "unknown":
                    assert reply["event"] == "unknown", reply
                else:
                    assert reply["event"] == "error" and expected in reply["message"], (expected, reply)
            sent += len(batch)
        # The command path (ExecutePlan): each malformed call fails with its reason, the server goes on.
        as_commands = [kind for kind in kinds if "ExecutePlan" not in kind[1]]  # a mux command is no error
        for make, expected in chance.sample(as_commands, len(as_commands)) * 4:
            _expect_command_refused(connect, make(), expected)
        theirs.request(97)  # the other session's stream was never touched
        theirs.await_done()
        assert theirs.completed and theirs.items == list(range(100))
    finally:
        stop_session(other)
    # An oversized body (beyond gRPC's default 128 MiB a message): refused, by gRPC or by the op
    # naming what is wrong with it, and the server goes on.
    from reactive_streams.spark._connect._wire import new_stream_id as fresh

    with pytest.raises(Exception, match=r"RESOURCE_EXHAUSTED|larger than max|not an Arrow IPC record batch"):
        connection(connect).command({"op": "upload_append", "stream": fresh()}, b"\0" * (129 << 20))
    probe = Probe(initial=1000)
    rss.jvm_publisher(connect, "longs", "1000").subscribe(probe)
    probe.await_done()
    assert probe.completed and probe.items == list(range(1000))


def test_a_channel_builder_of_another_kind_makes_the_streams_channel_too(connect: Any) -> None:
    # A vendor's builder keeps its own way to authenticate: the connection's own channel is
    # made by the builder itself (here: the default builder's channel, counted).
    from pyspark.sql.connect.client import DefaultChannelBuilder
    from pyspark.sql.connect.session import SparkSession

    class CountingBuilder(DefaultChannelBuilder):
        made = 0

        def toChannel(self) -> Any:
            CountingBuilder.made += 1
            return super().toChannel()

    session = SparkSession.builder.channelBuilder(CountingBuilder(shared_server().url)).create()
    os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)  # as connect_session does
    try:
        probe = Probe(initial=1000)
        rss.jvm_publisher(session, "longs", "1000").subscribe(probe)
        probe.await_done()
        assert probe.completed and probe.items == list(range(1000))
        assert CountingBuilder.made == 2  # PySpark's channel, and the connection's own
    finally:
        stop_session(session)


def _id_of(session: Any, requests: list[int]) -> str:
    for stream_id, stream in all_streams(session).items():
        if stream.get("requests") == requests and stream.get("name") == "longs":
            return stream_id
    raise AssertionError(f"no stream with requests {requests}")


def test_values_cross_and_non_values_are_a_clear_error(connect: Any) -> None:
    values = list(rss.jvm_publisher(connect, "values").iterate())
    assert values == ["a", 1.5, True, [None, 2], 7]
    probe = Probe(initial=5)
    rss.jvm_publisher(connect, "objects").subscribe(probe)
    probe.await_done()
    assert isinstance(probe.error, rs.ReactiveStreamsError)
    assert "java.lang.Object" in str(probe.error) and "Spark Connect" in str(probe.error)


@pytest.mark.parametrize("kind", ["tuples", "maps", "records", "spark"])
def test_rows_cross_as_arrow_with_the_types_of_the_classic_bridge(connect: Any, kind: str) -> None:
    n = 5_000
    probe = Probe(initial=7)
    rss.jvm_publisher(connect, "table_rows", f"{kind}:{n}").subscribe(probe)
    probe.await_items(7)
    probe.request(n)  # the rest, and more
    probe.await_done()
    assert probe.completed and len(probe.items) == n
    probe.assert_rules_held()
    expected = [(i, i / 2.0, f"r{i}") for i in range(n)]
    if kind == "tuples":
        assert probe.items == expected
    elif kind in ("maps", "records"):
        assert probe.items == [{"id": i, "half": h, "name": s} for i, h, s in expected]
    else:
        from pyspark.sql import Row

        assert all(isinstance(r, Row) for r in probe.items)
        assert [r.asDict() for r in probe.items] == [{"id": i, "half": h, "name": s} for i, h, s in expected]
    streams = [v for v in all_streams(connect).values() if v.get("name") == "table_rows" and v["sent"] == n]
    assert (
        streams and streams[-1]["arrow_replies"] >= 1
    )  # the first 7 rows pickled (fewer cost less), then Arrow


def test_a_run_of_rows_breaks_at_other_elements_and_every_element_keeps_its_type(connect: Any) -> None:
    n = 300
    items = list(rss.jvm_publisher(connect, "table_rows", f"mixed:{n}").iterate())
    expected: list[Any] = []
    for i in range(n):
        expected.append([i, i / 2.0, f"r{i}"] if i == n // 2 else (i, i / 2.0, f"r{i}"))
        if i % 30 == 29:
            expected.append(i)
    assert items == expected
    assert [type(x) for x in items] == [type(x) for x in expected]
    streams = [
        v
        for v in all_streams(connect).values()
        if v.get("name") == "table_rows" and v["sent"] == len(expected)
    ]
    assert streams and streams[-1]["arrow_replies"] >= 1


def test_a_failing_jvm_publisher_is_on_error_with_its_class_and_message(connect: Any) -> None:
    probe = Probe(initial=1)
    rss.jvm_publisher(connect, "failing").subscribe(probe)
    probe.await_done()
    assert isinstance(probe.error, rs.JvmError)
    assert probe.error.java_class == "java.lang.IllegalStateException"
    assert probe.error.java_message == "failing on purpose"


def test_a_publisher_that_sends_more_than_requested_is_an_error_after_what_was(connect: Any) -> None:
    probe = Probe(initial=10)  # "overflowing" emits 11 inside request(10)
    rss.jvm_publisher(connect, "overflowing").subscribe(probe)
    probe.await_done()
    assert probe.items == list(range(10))  # what was requested, then the error (§1.1)
    assert isinstance(probe.error, rs.JvmError) and "§1.1" in str(probe.error)
    probe.assert_rules_held()


def test_an_unknown_name_is_on_error_listing_the_registered_names(connect: Any) -> None:
    probe = Probe(initial=1)
    rss.jvm_publisher(connect, "no-such-stream").subscribe(probe)
    probe.await_done()
    assert isinstance(probe.error, JvmValueError)
    assert (
        "no-such-stream" in str(probe.error) and "longs" in str(probe.error) and "failing" in str(probe.error)
    )


def test_request_of_zero_is_rule_3_9_and_cancels_the_server_stream(connect: Any) -> None:
    probe = Probe(initial=2)
    rss.jvm_publisher(connect, "longs").subscribe(probe)
    probe.await_items(2)
    probe.request(0)
    probe.await_done()
    assert isinstance(probe.error, ValueError) and "3.9" in str(probe.error)
    wait_for(lambda: all_streams(connect)[_id_of(connect, [2])]["state"] == "cancelled", 10, "the cancel")


@pytest.mark.parametrize("path", ["GetStatus", "command"])
def test_a_quick_op_the_server_refuses_ends_its_stream_alone_on_either_path(connect: Any, path: str) -> None:
    wire = connection(connect)
    mark = 41 if path == "GetStatus" else 43  # its first request: how the test finds its stream
    refused, bystander = Probe(initial=mark), Probe(initial=42)
    rss.jvm_publisher(connect, "never").subscribe(refused)
    rss.jvm_publisher(connect, "longs", "100").subscribe(bystander)
    bystander.await_items(42)
    wait_for(
        lambda: [v for v in all_streams(connect).values() if v.get("requests") == [mark]], 10, "the stream"
    )
    (stream,) = [
        i for i, v in all_streams(connect).items() if v.get("requests") == [mark] and v["state"] == "open"
    ]
    was = wire._status_path
    # The command path is what a server without the status plugin gets.
    wire._status_path = path == "GetStatus"
    try:
        wire.send({"op": "sink_epoch", "stream": stream})  # a subscription is no sink: the server refuses it
        refused.await_done()
    finally:
        wire._status_path = was
    assert isinstance(refused.error, rs.JvmError)
    assert "which is not a registered subscriber" in str(refused.error)
    wait_for(lambda: all_streams(connect)[stream]["state"] == "cancelled", 10, "the server's side to go")
    bystander.request(100)  # the other stream goes on (the command path used to end every live call)
    bystander.await_done()
    assert bystander.completed and bystander.items == list(range(100))


def test_keepalive_tells_ended_from_unknown_and_a_stream_the_server_does_not_know_ends(
    connect: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    wire = connection(connect)
    done = Probe(initial=10)
    rss.jvm_publisher(connect, "longs", "10").subscribe(done)
    done.await_done()
    (ended,) = [k for k, v in server_stats(connect)["ended"].items() if v.get("requested") == 10][-1:]
    never = new_stream_id()
    (reply,) = wire.quick([{"op": "keepalive", "streams": [ended, never]}])
    assert (reply["event"], reply["ended"], reply["unknown"]) == ("ok", [ended], [never]), reply

    class Receiver:
        def __init__(self) -> None:
            self.ended = threading.Event()
            self.error: BaseException | None = None

        def on_reply(self, reply: Any) -> None:
            pass

        def on_end(self, error: BaseException) -> None:
            self.error = error
            self.ended.set()

    # A stream the client has on its reply path, which the server never opened (the op that
    # opens it never reaches the server): the keepalives say twice it is unknown, and it ends
    # with an error.
    send = wire.send
    monkeypatch.setattr(wire, "send", lambda op: None if op.get("stream") == never else send(op))
    lost = Receiver()
    wire.join(never, lost, {"op": "subscribe", "stream": never, "name": "longs", "max_batch": 8})
    assert lost.ended.wait(10), "the unknown stream did not end"
    assert isinstance(lost.error, rs.ReactiveStreamsError) and "no longer knows stream" in str(lost.error)
    # Streams the server has are untouched by it.
    probe = Probe(initial=1000)
    rss.jvm_publisher(connect, "longs", "1000").subscribe(probe)
    probe.await_done()
    assert probe.items == list(range(1000)) and probe.error is None


def test_another_session_can_neither_see_nor_cancel_a_stream(connect: Any) -> None:
    other = connect_session()
    try:
        probe = Probe(initial=1)
        rss.jvm_publisher(connect, "longs", "100").subscribe(probe)
        probe.await_items(1)
        mine = connection(connect).quick([{"op": "stats"}])[0]["streams"]
        (stream_id,) = [s for s, v in mine.items() if v.get("requests") == [1]]
        theirs = connection(other).quick([{"op": "stats"}])[0]["streams"]
        assert stream_id not in theirs
        replies = connection(other).quick(
            [{"op": "cancel", "stream": stream_id}, {"op": "demand", "stream": stream_id, "n": 5}]
        )
        assert [r["event"] for r in replies] == ["unknown", "unknown"]
        probe.request(99)
        probe.await_done()
        assert probe.completed and probe.items == list(range(100))
        # Both sessions subscribe at once, each to its own stream.
        both = [Probe(initial=1000), Probe(initial=1000)]
        rss.jvm_publisher(connect, "longs", "500").subscribe(both[0])
        rss.jvm_publisher(other, "longs", "500").subscribe(both[1])
        for p in both:
            p.await_done()
            assert p.completed and p.items == list(range(500))
    finally:
        stop_session(other)


@pytest.mark.parametrize("closing", ["stop", "released-behind-its-back"])
def test_a_closed_session_has_its_streams_cancelled_at_once(connect: Any, closing: str) -> None:
    """``spark.stop()`` cancels the session's streams itself before it releases the session; a
    session released without the client's knowledge (its class's ``release_session``, which
    the connection does not hook) has them cancelled by the server's session listener."""
    other = connect_session()
    probe = Probe(initial=1)
    earlier = set(_streams_named(connect, "never", "open"))  # other tests' (their idle timeout ends them)
    rss.jvm_publisher(other, "never").subscribe(probe)
    wait_for(lambda: set(_streams_named(connect, "never", "open")) - earlier, 10, "the stream to open")
    before = set(_streams_named(connect, "never", "open")) - earlier
    if closing == "released-behind-its-back":
        type(other.client).release_session(other.client)
    stop_session(other)
    wait_for(lambda: not (before & set(_streams_named(connect, "never", "open"))), 30, "the cancel")
    reasons = {all_streams(connect)[s]["reason"] for s in before}
    if closing == "stop":
        # The client cancels them, then closes its reply path; on a loaded server the closed
        # path may be seen first. Either way the client ended them, not the session listener.
        assert reasons <= {"cancelled by the client", "the client is gone: its reply path closed"}, reasons
        wait_for(lambda: probe.error is not None, 10, "the subscriber to hear the end")
        assert "session closed" in str(probe.error)
    else:
        assert reasons & {"session closed", "interrupted"}, reasons


def test_a_stop_lets_the_clients_execution_releases_end_before_it_releases_the_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """PySpark's ``stop()`` releases the session, then waits for the ReleaseExecute calls its
    pool still sends: one arriving after the session was released is an ERROR in the server's log
    (``INVALID_HANDLE.SESSION_CLOSED``; the demo met it). Ours waits for them first."""
    session = connect_session()
    order: list[str] = []
    release_session = type(session.client).release_session

    def recorded(client: Any, *args: Any, **kwargs: Any) -> Any:
        order.append("session released")
        return release_session(client, *args, **kwargs)

    monkeypatch.setattr(type(session.client), "release_session", recorded)
    connection(session)  # hooks this client's release_session (it calls the class's, recorded)
    in_flight: concurrent.futures.Future[None] = concurrent.futures.Future()
    session.client._release_futures.add(in_flight)  # a ReleaseExecute still on its way

    def sent() -> None:
        order.append("execution released")
        in_flight.set_result(None)

    threading.Timer(0.5, sent).start()
    stop_session(session)
    assert order == ["execution released", "session released"]


def _streams_named(session: Any, name: str, state: str) -> list[str]:
    return [s for s, v in all_streams(session).items() if v.get("name") == name and v.get("state") == state]


CHILD = """
import faulthandler, os, sys, time
from pyspark.sql import SparkSession
from reactive_streams import spark as rss
from tests.support import Probe
spark = SparkSession.builder.remote(sys.argv[1]).create()
probe = Probe(initial=1)
rss.jvm_publisher(spark, "never").subscribe(probe)
slow = spark.range(0, 4, 1, 2).selectExpr("reflect('java.lang.Thread', 'sleep', cast(60000 as long)) AS s")
batches = rss.arrow_batches_from_dataframe(slow, prefetch_partitions=0)
batches.subscribe(Probe(initial=1))
print("ready", flush=True)
faulthandler.dump_traceback_later(40)  # where it waits, should the test still wait for it then
time.sleep(600)
"""


def test_a_killed_client_has_its_streams_and_jobs_cancelled_within_the_idle_timeout(
    connect: Any, tmp_path: Any
) -> None:
    log = tmp_path / "child.log"
    with log.open("w") as stderr:
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, shared_server().url],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            cwd=str(ROOT),
        )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        try:
            wait_for(lambda: _streams_named(connect, "never", "open"), 30, "the child's stream")
            wait_for(
                lambda: [
                    v for v in all_streams(connect).values() if v["kind"] == "dataframe" and v["jobs_started"]
                ],
                60,
                "the child's partition job",
            )
        except AssertionError as exc:  # seen once in CI: say where the child and the server were
            raise AssertionError(
                f"{exc}\nthe server's streams: {all_streams(connect)}\n"
                f"the child's log (its threads at 40 s):\n{log.read_text()[-8000:]}"
            ) from None
        mine = set(server_stats(connect)["streams"])  # this session's (its reply path, say) stay
        opened = {s for s, v in all_streams(connect).items() if v["state"] == "open"} - mine
        child.kill()
        child.wait()
        killed = time.monotonic()
        wait_for(
            lambda: not (opened & {s for s, v in all_streams(connect).items() if v["state"] == "open"}),
            REAPED_WITHIN,
            "the killed client's streams to be cancelled",
        )
        assert time.monotonic() - killed <= REAPED_WITHIN
        ended = all_streams(connect)
        assert {ended[s]["reason"] for s in opened} == {"idle timeout"}
        frames = [s for s in opened if ended[s]["kind"] == "dataframe"]
        assert frames
        # The fetch worker counts the job's cancel when Spark reports its end.
        wait_for(
            lambda: all(all_streams(connect)[s]["jobs_cancelled"] >= 1 for s in frames), 30, "the job cancel"
        )
    finally:
        child.kill()


def test_dataframe_rows_and_batches_equal_connects_own(connect: Any) -> None:
    df = connect.range(0, 10_000, 1, 4).selectExpr("id", "id * 2 AS twice", "cast(id AS string) AS text")
    rows = list(rss.publisher_from_dataframe(df).iterate())
    assert rows == df.collect()
    batches = list(rss.arrow_batches_from_dataframe(df, max_records_per_batch=1000).iterate())
    assert all(b.num_rows <= 1000 for b in batches)
    import pyarrow as pa

    assert pa.Table.from_batches(batches).equals(df.toArrow())


def test_dataframe_from_a_publisher_of_record_batches_on_connect(connect: Any) -> None:
    import pyarrow as pa

    ids = pa.array(range(5000), pa.int64())
    batches = [pa.record_batch([ids.slice(i, 1000)], names=["id"]) for i in range(0, 5000, 1000)]
    df = rss.dataframe_from_publisher(connect, rs.from_iterable(batches), "id long", chunk_size=2)
    assert sorted(r.id for r in df.collect()) == list(range(5000))


@pytest.mark.parametrize("prefetch", [0, 2])
def test_partitions_are_fetched_only_as_demand_requires(connect: Any, prefetch: int) -> None:
    df = connect.range(0, 800, 1, 8)
    probe = Probe(initial=1)
    rss.arrow_batches_from_dataframe(df, prefetch_partitions=prefetch).subscribe(probe)
    probe.await_items(1)
    time.sleep(1.0)  # time to fetch more, had it been allowed to
    streams = [
        v
        for v in connection(connect).quick([{"op": "stats"}])[0]["streams"].values()
        if v["kind"] == "dataframe"
    ]
    assert len(streams) == 1 and streams[0]["jobs_started"] <= 1 + prefetch
    probe.cancel()


def test_a_dataframe_stream_the_server_no_longer_has_is_an_error_not_an_empty_partition(
    connect: Any,
) -> None:
    df = connect.range(0, 800, 1, 8)
    probe = Probe(initial=1)
    rss.arrow_batches_from_dataframe(df, prefetch_partitions=0).subscribe(probe)
    probe.await_items(1)
    wire = connection(connect)
    streams = wire.quick([{"op": "stats"}])[0]["streams"]
    (stream,) = [k for k, v in streams.items() if v["kind"] == "dataframe"]
    wire.quick([{"op": "close", "stream": stream}])  # gone on the server, as after its lease ran out
    probe.request(100)
    probe.await_done()
    assert isinstance(probe.error, rs.ReactiveStreamsError) and "no longer has" in str(probe.error)
    assert sum(batch.num_rows for batch in probe.items) < 800


def test_a_close_lets_a_fetch_in_flight_answer_in_full_and_a_cancel_stops_it(connect: Any) -> None:
    """A close ends the stream, but the fetch already running replies all its batches, as it would
    have without it (it once became ``cancelled``); a cancel stops the fetch's job."""
    wire = connection(connect)
    # One partition whose job takes seconds: millions of hashes, few rows kept.
    hashes = connect.range(0, 6_000_000, 1, 1).selectExpr("sha2(cast(id as string), 256) AS h")
    df = hashes.where("h LIKE 'fff%'")
    relation = df._plan.plan(connect.client).SerializeToString()

    def fetch_with(op: str) -> list[Any]:
        stream = new_stream_id()
        wire.command({"op": "open_dataframe", "stream": stream}, relation)
        replies: list[Any] = []
        fetching = threading.Thread(
            target=lambda: replies.extend(wire.execute({"op": "fetch", "stream": stream, "partition": 0}))
        )
        fetching.start()
        wait_for(  # running as Spark's status tracker lists it, not just about to be submitted
            lambda: wire.quick([{"op": "stats"}])[0]["streams"].get(stream, {}).get("jobs_running"),
            30,
            "the fetch's job to run",
        )
        assert fetching.is_alive(), "the partition's job ended before the op: make it slower"
        (reply,) = wire.quick([{"op": op, "stream": stream}])
        assert reply["event"] == "ok"
        fetching.join(60)
        return replies

    closed = fetch_with("close")
    events = [r.status.get("event") for r in closed if r.kind == "status"]
    assert events == ["partition_done"], events
    rows = sum(pa.ipc.open_stream(r.data).read_next_batch().num_rows for r in closed if r.kind == "arrow")
    assert rows == df.count()
    cancelled = fetch_with("cancel")
    assert [r.status.get("event") for r in cancelled if r.kind == "status"] == ["cancelled"]
    assert not [r for r in cancelled if r.kind == "arrow"]


def test_a_dataframe_analysis_error_is_pysparks_own_at_once(connect: Any) -> None:
    from pyspark.errors import AnalysisException

    with pytest.raises(AnalysisException, match="no_such_column"):
        rss.publisher_from_dataframe(connect.range(3).selectExpr("no_such_column"))


def test_a_failing_partition_job_is_on_error(connect: Any) -> None:
    df = connect.range(0, 10, 1, 2).selectExpr("raise_error(concat('bad row ', id)) AS r")
    probe = Probe(initial=1)
    rss.publisher_from_dataframe(df).subscribe(probe)
    probe.await_done()
    assert isinstance(probe.error, rs.JvmError) and "bad row" in str(probe.error)


def test_dataframe_from_publisher_on_connect(connect: Any) -> None:
    elements = [(i, f"n{i}") for i in range(2500)]
    df = rss.dataframe_from_publisher(
        connect, rs.from_iterable(elements), "id long, name string", chunk_size=1000
    )
    assert [tuple(r) for r in df.orderBy("id").collect()] == elements
    longs = rss.dataframe_from_publisher(connect, rss.jvm_publisher(connect, "longs", "300"), "v long")
    assert longs.count() == 300
    with pytest.raises(TypeError, match="jvm_publisher"):
        rss.dataframe_from_publisher(connect, [1, 2], "v long")
    failing = rs.from_iterable(range(3)).map(lambda x: 1 // (x - 2))
    with pytest.raises(ZeroDivisionError):
        rss.dataframe_from_publisher(connect, failing, "v long")
    swapped = rs.from_iterable([(1, "a"), ("b", 2)])  # the row and the column named, as on classic
    with pytest.raises(
        TypeError, match=r"^row 1 \('b', 2\), column 'id' \(bigint\): a str \('b'\), which does"
    ):
        rss.dataframe_from_publisher(connect, swapped, "id long, name string")


@pytest.mark.parametrize("sizes", [[3, 0, 5], [0, 0], [7], [100_000, 200_000, 1, 150_000]])
def test_uploaded_chunks_are_combined_into_messages_of_a_few_mib_in_order(sizes: list[int]) -> None:
    import pyarrow as pa

    from reactive_streams.spark._connect._dataframe import UPLOAD_BYTES, _upload_messages

    schema = pa.schema([("id", pa.int64()), ("name", pa.string())])
    start = [sum(sizes[:i]) for i in range(len(sizes))]
    chunks = [
        pa.record_batch(
            [pa.array(range(a, a + n), pa.int64()), pa.array([f"n{i}" for i in range(a, a + n)])], schema
        )
        for a, n in zip(start, sizes, strict=True)
    ]
    messages = list(_upload_messages(iter(chunks)))
    batches = [pa.ipc.read_record_batch(pa.py_buffer(m), schema) for m in messages]
    assert pa.Table.from_batches(batches, schema).to_pylist() == pa.Table.from_batches(chunks).to_pylist()
    total = sum(b.nbytes for b in chunks)
    assert len(messages) <= max(1, -(-total // UPLOAD_BYTES))  # a message per few MiB, not per chunk


def test_a_failing_upload_leaves_no_block_on_the_server(connect: Any) -> None:
    """50 MB of rows, then the publisher fails: the server had stored a 32 MiB block of the
    upload in its block manager, and removes it when the client closes the upload."""

    def stored() -> set[str]:
        probe = Probe(initial=1)
        rss.jvm_publisher(connect, "stored_blocks").subscribe(probe)
        probe.await_done()
        return set(str(probe.items[0]).split())

    pad = "x" * 1000

    def failing() -> Any:
        yield from ((i, pad) for i in range(50_000))
        raise Boom("after the rows")

    before = stored()
    with pytest.raises(Boom, match="after the rows"):
        rss.dataframe_from_publisher(
            connect, rs.from_iterable(failing()), "v long, pad string", chunk_size=5_000
        )
    wait_for(lambda: stored() <= before, 30, "the upload's blocks to be removed")  # unpersist is asynchronous


def test_bridge_spark_on_connect_names_the_connect_functions(connect: Any) -> None:
    from reactive_streams.jvm import Bridge

    with pytest.raises(rs.ReactiveStreamsError, match="jvm_publisher"):
        Bridge.spark(connect)


@pytest.fixture
def own_server() -> Iterator[Any]:
    server = start_server()
    yield server
    server.stop()


def test_a_killed_server_ends_streams_with_on_error_within_seconds(own_server: Any) -> None:
    session = connect_session(own_server.url)
    try:
        probe = Probe(initial=10)
        rss.jvm_publisher(session, "longs").subscribe(probe)
        probe.await_items(10)
        df = session.range(0, 4, 1, 2).selectExpr(
            "reflect('java.lang.Thread', 'sleep', cast(60000 as long)) AS s"
        )
        rows = Probe(initial=1)
        rss.publisher_from_dataframe(df, prefetch_partitions=0).subscribe(rows)
        time.sleep(2.0)  # the partition's job is running
        own_server.kill()
        killed = time.monotonic()
        probe.await_done(timeout=30)
        rows.await_done(timeout=30)
        assert time.monotonic() - killed < 10
        assert isinstance(probe.error, rss.ConnectionLostError)
        assert isinstance(rows.error, rss.ConnectionLostError)
    finally:
        stop_session(session, server_gone=True)


def test_a_frozen_server_ends_streams_with_on_error_within_seconds(own_server: Any) -> None:
    session = connect_session(own_server.url)
    try:
        probe = Probe(initial=10)
        rss.jvm_publisher(session, "longs").subscribe(probe)
        probe.await_items(10)
        os.killpg(own_server.pid, signal.SIGSTOP)  # alive, connected, silent
        try:
            stopped = time.monotonic()
            probe.await_done(timeout=30)
            assert time.monotonic() - stopped < LOST_AFTER + 5
            # Whichever sees it first: the watchdog (no heartbeat for LOST_AFTER) or a keepalive
            # left unanswered for as long.
            assert isinstance(probe.error, rss.ConnectionLostError)
            assert "sent nothing for 5 s" in str(probe.error) or "DEADLINE_EXCEEDED" in str(probe.error)
        finally:
            os.killpg(own_server.pid, signal.SIGCONT)
    finally:
        own_server.kill()
        stop_session(session, server_gone=True)
