"""The ``reactive-streams`` source and sink fed from, and delivering to, a Spark Connect client
(`register_publisher`, `register_subscriber` on a Connect session), on the shared standalone
server: micro-batches bounded by the server's demand, which the client never exceeds, a slow
subscriber slowing its query, names kept to their session, and what a lost client or a lost
server does."""

from __future__ import annotations

import collections
import itertools
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import StreamingQueryException

import reactive_streams as rs
from reactive_streams import spark as rss

from ..conftest import ROOT
from ..support import Probe, Spy
from .connect_kit import (
    IDLE_TIMEOUT,
    THREADS_END_WITHIN,
    all_streams,
    connect_session,
    server_stats,
    shared_server,
    start_server,
    stop_session,
    wait_for,
)

pytestmark = pytest.mark.timeout(300)


def read(session: Any, name: str, most: int, **options: Any) -> Any:
    reader = session.readStream.format(rss.FORMAT).option("publisher", name)
    for key, value in {"maxRecordsPerTrigger": most, **options}.items():
        reader = reader.option(key, value)
    return reader.schema("id LONG, name STRING").load()


def query_state(session: Any, query_id: str) -> str:
    """``active``, ``stopped`` or ``failed: ...``, as a listener on the server saw the query."""
    probe = Probe(initial=1)
    rss.jvm_publisher(session, "query", query_id).subscribe(probe)
    probe.await_done()
    return str(probe.items[0])


def test_a_client_publisher_feeds_micro_batches_within_the_demand(connect: Any, tmp_path: Path) -> None:
    rows = [(i, f"n{i}") for i in range(25_000)]
    publisher = Spy(rs.from_iterable(rows))
    with rss.register_publisher(connect, "feed", publisher):
        query = (
            read(connect, "feed", 4_000)
            .writeStream.format("memory")
            .queryName("fed")
            .option("checkpointLocation", str(tmp_path / "cp"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(120)
        stats = rss.stream_stats(connect, "feed")
        batches = [p.numInputRows for p in query.recentProgress]
    got = [tuple(r) for r in connect.table("fed").orderBy("id").collect()]
    assert got == rows
    assert max(batches) <= 4_000 and sum(batches) == 25_000
    # Every request(n) the source made reached the Python publisher as it was (§3.8), and
    # the source never held more than its bound maxRecordsPerTrigger x (1 + prefetch).
    assert publisher.requests and max(publisher.requests) <= 8_000
    assert publisher.requested == stats["requested"] >= stats["elements"] == publisher.delivered == 25_000
    assert stats["max_buffered"] <= 8_000
    assert stats["arrow_rows"] >= 20_000  # the pushes crossed as Arrow and stayed columns
    assert not rss.unregister(connect, "feed")  # the with block freed it


def test_a_client_publisher_of_record_batches_feeds_the_source_as_columns(
    connect: Any, tmp_path: Path
) -> None:
    import pyarrow as pa

    batches = [
        pa.record_batch(
            [pa.array(range(i, i + 1_000), pa.int64()), pa.array([f"n{j}" for j in range(i, i + 1_000)])],
            names=["id", "name"],
        )
        for i in range(0, 10_000, 1_000)
    ]
    with rss.register_publisher(connect, "arrow-feed", rs.from_iterable(batches)):
        query = (
            read(connect, "arrow-feed", 2_500)
            .writeStream.format("memory")
            .queryName("fed_arrow")
            .option("checkpointLocation", str(tmp_path / "cp"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(120)
        stats = rss.stream_stats(connect, "arrow-feed")
        sizes = [p.numInputRows for p in query.recentProgress if p.numInputRows]
    got = [tuple(r) for r in connect.table("fed_arrow").orderBy("id").collect()]
    assert got == [(i, f"n{i}") for i in range(10_000)]
    assert sum(sizes) == 10_000 and all(
        size % 1_000 == 0 and size <= 2_500 for size in sizes
    )  # whole batches
    assert stats["elements"] == 10 and stats["arrow_rows"] == 10_000


def test_megabytes_of_record_batches_cross_in_pushes_of_a_few_and_are_read_to_the_end(
    connect: Any, tmp_path: Path
) -> None:
    import pyarrow as pa

    ids = pa.array(range(2_000_000), pa.int64())
    table = pa.table([ids, ids.cast(pa.string())], names=["id", "name"])  # about 30 MB
    with rss.register_publisher(connect, "big-feed", rs.from_iterable(table.to_batches(50_000))):
        query = (
            read(connect, "big-feed", 1_000_000)
            .writeStream.format("noop")
            .option("checkpointLocation", str(tmp_path / "cp"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(120)
        stats = rss.stream_stats(connect, "big-feed")
    # Pushes of about 4 MiB (PUSH_BYTES): one push of a bound's worth (30 MB here) can take long
    # enough that the source, seeing nothing arrive for 500 ms, ends the AvailableNow query early.
    assert stats["arrow_rows"] == 2_000_000 and query.exception() is None


def test_a_client_push_of_batches_and_rows_fails_the_query_naming_it(connect: Any, tmp_path: Path) -> None:
    import pyarrow as pa

    mixed = [(0, "a"), pa.record_batch([pa.array([1], pa.int64()), pa.array(["b"])], names=["id", "name"])]
    with rss.register_publisher(connect, "mixed-feed", rs.from_iterable(mixed)):
        query = (
            read(connect, "mixed-feed", 10)
            .writeStream.format("memory")
            .queryName("fed_mixed")
            .option("checkpointLocation", str(tmp_path / "cp"))
            .start()
        )
        with pytest.raises(StreamingQueryException, match="element 1 is an Arrow batch, after rows"):
            query.awaitTermination(120)


def test_a_client_subscriber_gets_rows_on_demand_and_slows_the_query(connect: Any, tmp_path: Path) -> None:
    epochs: list[tuple[int, str | None]] = []

    def epoch_of(probe: Probe, row: Any) -> None:
        epochs.append((probe.subscription.epoch, probe.subscription.query_id))  # type: ignore[union-attr]

    subscriber = Probe(initial=10, on_next_hook=epoch_of)
    with (
        rss.register_publisher(connect, "numbers", rs.from_iterable([(i, str(i)) for i in range(3_000)])),
        rss.register_subscriber(connect, "rows", subscriber),
    ):
        query = (
            read(connect, "numbers", 1_000)
            .writeStream.format(rss.FORMAT)
            .option("subscriber", "rows")
            .option("checkpointLocation", str(tmp_path / "cp"))
            .trigger(availableNow=True)
            .start()
        )
        subscriber.await_items(10)
        time.sleep(3.0)  # a batch's commit waits for the subscriber's demand
        assert len(subscriber.items) == 10 and query.isActive
        # No batch committed rows the subscriber has not taken. (A batch is what the source has
        # ready: a publisher that pauses 100 ms on a busy machine makes a first batch of fewer.)
        assert sum(p["numInputRows"] for p in query.recentProgress) <= 10, query.recentProgress
        stats = rss.stream_stats(connect, "rows")
        assert stats["max_buffered"] <= 10  # the sink handed over no more than was requested
        subscriber.request(5_000)
        query.awaitTermination(120)
        subscriber.await_done()
        # The rows crossed as Arrow columns (ColumnRows), each counted against the demand.
        assert rss.stream_stats(connect, "rows")["arrow_rows"] > 2_000
        relay = [
            v for v in all_streams(connect).values() if v.get("name") == "rows" and v["kind"] == "publisher"
        ][-1]
        assert relay["sent"] == 3_000 and relay["max_buffered"] <= 5_010 and relay["arrow_replies"] > 0
    # The client's progress has the sink's metrics: the first batch waited the 3 s the
    # subscriber held its demand back; every row handed over; what the publisher emitted
    progress = [p for p in query.recentProgress if p.numInputRows]
    assert int(progress[0].sink.metrics["lastBatchWaitMs"]) >= 2_500, progress[0].sink.metrics
    assert int(progress[-1].sink.metrics["deliveredRows"]) == 3_000, progress[-1].sink.metrics
    assert int(progress[-1].sources[0].metrics["emittedElements"]) == 3_000
    assert subscriber.completed
    assert [(r.id, r.name) for r in subscriber.items] == [(i, str(i)) for i in range(3_000)]
    assert type(subscriber.items[0]).__fields__ == ["id", "name"]  # pyspark Rows with the columns
    subscriber.assert_rules_held()
    # Each row's epoch and query id, from its subscription (rss.SinkSubscription): at most 1,000
    # rows a batch (maxRecordsPerTrigger), the epochs in order from 0
    in_order = [epoch for epoch, _ in epochs]
    counts = collections.Counter(in_order)
    assert len(epochs) == 3_000 and in_order[0] == 0 and in_order == sorted(in_order)
    assert max(counts.values()) <= 1_000 and len(counts) >= 3, counts
    assert {query for _, query in epochs} == {str(query.id)}


def test_a_client_subscriber_of_arrow_batches_gets_record_batches_on_demand(
    connect: Any, tmp_path: Path
) -> None:
    import pyarrow as pa

    epochs: list[int] = []
    subscriber = Probe(initial=2, on_next_hook=lambda probe, _: epochs.append(probe.subscription.epoch))  # type: ignore[union-attr]
    with (
        rss.register_publisher(
            connect, "arrow-numbers", rs.from_iterable([(i, str(i)) for i in range(3_000)])
        ),
        rss.register_subscriber(
            connect, "arrow-rows", subscriber, arrow_batches=True, max_records_per_batch=250
        ),
    ):
        query = (
            read(connect, "arrow-numbers", 1_000)
            .writeStream.format(rss.FORMAT)
            .option("subscriber", "arrow-rows")
            .option("checkpointLocation", str(tmp_path / "cp"))
            .trigger(availableNow=True)
            .start()
        )
        subscriber.await_items(2)
        time.sleep(2.0)  # the first batch's commit waits: a unit of demand is a batch
        assert len(subscriber.items) == 2 and query.isActive
        stats = rss.stream_stats(connect, "arrow-rows")
        assert (stats["elements"], stats["max_buffered"]) == (2, 1)
        subscriber.request(100)
        query.awaitTermination(120)
        subscriber.await_done()
    assert subscriber.completed
    assert all(isinstance(batch, pa.RecordBatch) for batch in subscriber.items)
    # Batches of at most 250 rows, full but for each micro-batch's last (a micro-batch is what the
    # source had ready, at most 1,000: on a busy machine the first may hold one row), in order
    sizes = [batch.num_rows for batch in subscriber.items]
    by_epoch: dict[int, list[int]] = {}
    for epoch, size in zip(epochs, sizes, strict=True):
        by_epoch.setdefault(epoch, []).append(size)
    assert epochs == sorted(epochs) and epochs[0] == 0, epochs
    for epoch, epoch_sizes in by_epoch.items():
        assert all(n == 250 for n in epoch_sizes[:-1]) and 0 < epoch_sizes[-1] <= 250, (epoch, sizes)
        assert sum(epoch_sizes) <= 1_000, (epoch, sizes)
    table = pa.Table.from_batches(subscriber.items)
    assert table.column_names == ["id", "name"] and table.to_pylist() == [
        {"id": i, "name": str(i)} for i in range(3_000)
    ]
    subscriber.assert_rules_held()


def test_a_restart_continues_where_the_stopped_query_left(connect: Any, tmp_path: Path) -> None:
    rows = [(i, str(i)) for i in range(5_000)]
    first, second = Probe(initial=500), Probe(initial=1 << 62)
    remaining = iter(rows)  # each subscription continues where the last one left the iterator

    def start(subscriber: str, **trigger: Any) -> Any:
        return (
            read(connect, "resumed", 1_000)
            .writeStream.format(rss.FORMAT)
            .option("subscriber", subscriber)
            .option("checkpointLocation", str(tmp_path / "cp"))
            .trigger(**trigger)
            .start()
        )

    with rss.register_publisher(connect, "resumed", rs.from_iterable(remaining)):
        with rss.register_subscriber(connect, "first-run", first):
            query = start("first-run", processingTime="0 seconds")
            first.await_items(500)  # mid-batch: the commit waits for more demand
            query.stop()
        parked = rss.stream_stats(connect, "resumed")["parked"]
        with rss.register_subscriber(connect, "second-run", second):
            start("second-run", availableNow=True).awaitTermination(120)
    delivered = [(r.id, r.name) for r in first.items + second.items]
    assert len(first.items) == 500 and parked >= 500  # the rest of the batch, at least, waited
    assert delivered == rows  # nothing lost, nothing twice, in order across the restart


def test_names_belong_to_their_session(connect: Any, tmp_path: Path) -> None:
    other = connect_session()
    try:
        with rss.register_publisher(connect, "mine", rs.from_iterable([(1, "a")])):
            with pytest.raises(rs.ReactiveStreamsError, match="already registered"):
                rss.register_publisher(connect, "mine", rs.from_iterable([]))
            with pytest.raises(rs.ReactiveStreamsError, match="nothing is registered as 'mine'"):
                rss.stream_stats(other, "mine")
            assert not rss.unregister(other, "mine")  # nor can it free it
            # Refused at start(), before a query runs, naming the session's registered ones.
            with pytest.raises(
                Exception, match=r"no publisher is registered as 'mine'; registered publishers: \["
            ):
                read(other, "mine", 10).writeStream.format("noop").start(
                    checkpointLocation=str(tmp_path / "cp")
                )
            with rss.register_publisher(other, "mine", rs.from_iterable([])):  # its own, apart
                assert rss.stream_stats(connect, "mine")["elements"] == 0
    finally:
        stop_session(other)
    with pytest.raises(TypeError, match=r"reactive_streams\.Publisher"):
        rss.register_publisher(connect, "x", [1, 2])
    with pytest.raises(TypeError, match=r"reactive_streams\.Subscriber"):
        rss.register_subscriber(connect, "x", object())
    with pytest.raises(TypeError, match="non-empty str"):
        rss.register_publisher(connect, "", rs.from_iterable([]))


CHILD = """
import itertools, sys, time
from pyspark.sql import SparkSession
import reactive_streams as rs
from reactive_streams import spark as rss
from tests.support import Probe
spark = SparkSession.builder.remote(sys.argv[1]).create()
checkpoints = sys.argv[2]
rss.register_publisher(spark, "endless", rs.from_iterable((i, str(i)) for i in itertools.count()))
stopping = (spark.readStream.format("reactive-streams").option("publisher", "endless")
            .option("maxRecordsPerTrigger", 1000).option("onClientLoss", "stop")
            .schema("id LONG, name STRING").load()
            .writeStream.format("noop").option("checkpointLocation", checkpoints + "/a").start())
rss.register_subscriber(spark, "sink", Probe(initial=1 << 62))
failing = (spark.readStream.format("rate").option("rowsPerSecond", 1000).load()
           .writeStream.format("reactive-streams").option("subscriber", "sink")
           .option("checkpointLocation", checkpoints + "/b").start())
while not (stopping.recentProgress and failing.recentProgress):
    time.sleep(0.1)
print(stopping.id, failing.id, flush=True)
time.sleep(600)
"""


def test_a_killed_client_stops_or_fails_its_queries_and_frees_its_names(connect: Any, tmp_path: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, shared_server().url, str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=str(ROOT),
    )
    try:
        assert child.stdout is not None
        stopping, failing = child.stdout.readline().split()
        assert query_state(connect, stopping) == query_state(connect, failing) == "active"
        child.kill()
        child.wait()
        killed = time.monotonic()
        wait_for(lambda: query_state(connect, stopping) != "active", IDLE_TIMEOUT + 20, "the stop")
        wait_for(lambda: query_state(connect, failing) != "active", IDLE_TIMEOUT + 20, "the failure")
        assert time.monotonic() - killed <= IDLE_TIMEOUT + 20
        assert query_state(connect, stopping) == "stopped"  # option onClientLoss=stop
        failure = query_state(connect, failing)
        assert "ClientLostException" in failure and "subscriber 'sink' is gone (idle timeout)" in failure
        registrations = [v for v in all_streams(connect).values() if v.get("name") in ("endless", "sink")]
        assert registrations and {v["state"] for v in registrations} == {"cancelled"}
        assert {v["reason"] for v in registrations} == {"idle timeout"}
        wait_for(
            lambda: not {"endless", "sink"} & set(server_stats(connect)["all"]["registered"]),
            10,
            "the names to be freed",
        )
    finally:
        child.kill()


@pytest.fixture
def own_server() -> Iterator[Any]:
    server = start_server()
    yield server
    server.stop()


def test_a_lost_server_cancels_publisher_and_errors_subscriber(own_server: Any, tmp_path: Path) -> None:
    session = connect_session(own_server.url)
    try:
        publisher = Spy(rs.from_iterable((i, str(i)) for i in itertools.count()))
        subscriber = Probe(initial=1 << 62)
        unclaimed = Probe()
        rss.register_publisher(session, "endless", publisher)
        rss.register_subscriber(session, "rows", subscriber)
        rss.register_subscriber(session, "unclaimed", unclaimed)
        (
            read(session, "endless", 500)
            .writeStream.format(rss.FORMAT)
            .option("subscriber", "rows")
            .option("checkpointLocation", str(tmp_path / "cp"))
            .start()
        )
        subscriber.await_items(600)
        own_server.kill()
        killed = time.monotonic()
        subscriber.await_done(timeout=30)
        unclaimed.await_done(timeout=30)
        wait_for(lambda: publisher.cancels, 30, "the publisher's cancel")
        assert time.monotonic() - killed < 10
        assert isinstance(subscriber.error, rss.ConnectionLostError)
        assert isinstance(unclaimed.error, rss.ConnectionLostError)  # after its on_subscribe (§1.9)
        subscriber.assert_rules_held()
        unclaimed.assert_rules_held()
        wait_for(  # after the reply path's linger and a round trip to the server (connect_kit)
            lambda: not [t for t in threading.enumerate() if t.name.startswith("rs-connect-")],
            THREADS_END_WITHIN,
            "the rs-connect threads to end",
            lambda: str([t.name for t in threading.enumerate()]),
        )
    finally:
        stop_session(session, server_gone=True)
