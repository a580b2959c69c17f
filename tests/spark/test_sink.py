"""The ``reactive-streams`` sink: rows as values for Python and JVM subscribers, at most one
delivery per (query id, epoch) across re-runs, failures that stop the query naming the
subscriber, refusals at start(), and quiet stops. (Pacing by demand: test_streaming.py.)"""

from __future__ import annotations

import datetime
import decimal
import json
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql import Row

import reactive_streams as rs
from reactive_streams import spark as rss
from reactive_streams.spark._streaming import FORMAT, register_subscriber

from ..conftest import ROOT, TEST_JARS
from .kit import TIMEOUT, Collector, Sink, jvm_subscriber, run_script, to_subscriber

ERROR_LINE = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d ERROR ")


def batches(spark: Any, rows: int = 10, partitions: int = 1) -> Any:
    """Micro-batches of ``rows`` rows, values 0, 1, 2, ... (in order with one partition; with
    more, value v in partition v % partitions), the same rows for the same batch id on every run."""
    return (
        spark.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", rows)
        .option("numPartitions", partitions)
        .load()
        .selectExpr("value")
    )


def listeners(spark: Any) -> int:
    """SparkListeners on the driver's bus (the session's streaming query manager, which adds
    one when it is made, is made first)."""
    assert spark.streams is not None
    return int(spark.sparkContext._jsc.sc().listenerBus().listeners().size())


def live(spark: Any) -> tuple[int, int]:
    bridge = rss.bridge(spark)
    return bridge.live_streams, int(bridge.runtime.liveAdapters())


def query_threads(spark: Any, query: Any) -> list[str]:
    threads = spark._jvm.java.lang.Thread.getAllStackTraces().keySet().toArray()
    return [str(t.getName()) for t in threads if str(query.runId) in str(t.getName()) and t.isAlive()]


def eventually(condition: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def values_of(subscriber: Any) -> list[int]:
    if isinstance(subscriber, Collector):
        return [row.value for row in subscriber.items]
    return [int(row.getLong(0)) for row in subscriber.items()]


# Rows.


def test_a_python_subscriber_gets_rows_of_plain_values(spark_session: Any, sink: Sink) -> None:
    collector = Collector(100)
    df = batches(spark_session, 3).selectExpr(
        "value AS id",
        "CAST(value AS INT) AS small",
        "value / 2 AS half",
        "concat('row ', value) AS text",
        "value % 2 = 0 AS even",
        "CAST(concat('b', value) AS BINARY) AS raw",
        "IF(value = 1, NULL, value) AS maybe",
        "named_struct('a', value, 'b', 'x') AS pair",
        "array(value, value + 1) AS both",
        "map('k', value) AS keyed",
        "CAST(value + 1.5 AS DECIMAL(5, 2)) AS money",
        "DATE'2024-02-29' AS day",
    )
    query, _ = sink(df, collector, once=True)
    query.awaitTermination(TIMEOUT)

    assert all(isinstance(row, Row) for row in collector.items)
    assert [row.asDict() for row in collector.items] == [
        {
            "id": i,
            "small": i,
            "half": i / 2,
            "text": f"row {i}",
            "even": i % 2 == 0,
            "raw": f"b{i}".encode(),
            "maybe": None if i == 1 else i,
            "pair": {"a": i, "b": "x"},  # nested structs as dicts, arrays as lists
            "both": [i, i + 1],
            "keyed": {"k": i},
            "money": decimal.Decimal(i) + decimal.Decimal("1.50"),
            "day": datetime.date(2024, 2, 29).isoformat(),  # dates as ISO-8601 strings
        }
        for i in range(3)
    ]
    first = collector.items[0]
    assert first.text == "row 0" and first["id"] == 0 and "text" in first
    assert first == Row(**first.asDict()) and repr(first).startswith("Row(id=0, small=0, ")
    copied = pickle.loads(pickle.dumps(first))
    assert type(copied) is Row and copied.asDict() == first.asDict()
    assert collector.done.wait(TIMEOUT) and collector.completed


def two_hundred_rows_to(
    spark: Any,
    subscriber: rs.Subscriber[Any],
    name: Callable[[str], str],
    started: list[Any],
    checkpoint: Path,
    max_records: int | None = None,
) -> Any:
    """A query, run to its end (``availableNow``), of a publisher of 200 rows into ``subscriber``."""
    publisher, registered = name("numbers"), name("sink")
    rss.register_publisher(spark, publisher, rs.from_iterable((i,) for i in range(200)))
    register_subscriber(spark, registered, subscriber)
    reader = spark.readStream.format(FORMAT).option("publisher", publisher).schema("n LONG")
    if max_records is not None:
        reader = reader.option("maxRecordsPerTrigger", max_records)
    query = (
        reader.load()
        .writeStream.format(FORMAT)
        .option("subscriber", registered)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    started.append(query)
    assert query.awaitTermination(TIMEOUT)
    return query


class Slow(rs.SyncSubscriber[Any]):
    """Takes ``pause`` seconds a row: its demand holds each batch's commit back."""

    def __init__(self, pause: float) -> None:
        super().__init__(batch=10)
        self.pause, self.rows = pause, 0

    def when_next(self, row: Any) -> None:
        time.sleep(self.pause)
        self.rows += 1


def test_the_progress_shows_what_the_sink_handed_over_and_how_long_its_subscriber_held_the_query(
    spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path
) -> None:
    """Two batches of 100 rows to a subscriber that takes 2 ms a row: each commit waits for it at
    least 200 ms, and the progress says so (``lastBatchWaitMs``, ``totalWaitMs``) beside the rows
    handed over; the source's progress counts what its publisher emitted."""
    slow = Slow(0.002)
    query = two_hundred_rows_to(spark_session, slow, name, started, tmp_path, max_records=100)

    progress = [p for p in query.recentProgress if p["numInputRows"]]
    assert [p["numInputRows"] for p in progress] == [100, 100]
    first, last = (p["sink"]["metrics"] for p in progress)
    assert (int(first["deliveredRows"]), int(last["deliveredRows"])) == (100, 200)
    assert int(first["lastBatchWaitMs"]) >= 200 and int(last["lastBatchWaitMs"]) >= 200
    assert int(last["totalWaitMs"]) >= int(first["totalWaitMs"]) + int(last["lastBatchWaitMs"]) - 1
    assert int(last["waitingMs"]) == 0  # no commit waits between batches
    assert int(last["outstandingDemand"]) >= 0
    assert int(progress[-1]["sources"][0]["metrics"]["emittedElements"]) == 200
    assert slow.rows == 200
    # docs/spark.md's "Watching a stream" names these figures, and shows them in two progresses
    source_names, sink_names = set(progress[-1]["sources"][0]["metrics"]), set(last)
    for excerpt in watching_a_stream()["excerpts"]:
        assert set(excerpt["sources"][0]["metrics"]) == source_names
        assert set(excerpt["sink"]["metrics"]) == sink_names
    assert watching_a_stream()["figures"] == {("source", n) for n in source_names} | {
        ("sink", n) for n in sink_names
    }


def watching_a_stream() -> dict[str, Any]:
    """docs/spark.md's "Watching a stream": its progress excerpts, and the figures its table names."""
    page = (ROOT / "docs" / "spark.md").read_text()
    section = page[page.index("### Watching a stream") :]
    section = section[: section.index("\n## ")]
    excerpts = [json.loads(block) for block in re.findall(r"```json\n(.*?)```", section, re.DOTALL)]
    figures = set()
    for side, names in re.findall(r"^\| (source|sink) ([^|]+) \|", section, re.MULTILINE):
        figures |= {(side, name) for name in re.findall(r"`(\w+)`", names)}
    assert len(excerpts) == 2 and figures, section[:200]
    return {"excerpts": excerpts, "figures": figures}


class AsksOnce(rs.Subscriber[Any]):
    """Requests ``n`` when subscribed, and never again."""

    def __init__(self, n: int) -> None:
        self.n, self.rows = n, 0

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        subscription.request(self.n)

    def on_next(self, item: Any) -> None:
        self.rows += 1

    def on_error(self, exc: BaseException) -> None:
        pass

    def on_complete(self) -> None:
        pass


def test_the_sinks_outstanding_demand_is_its_subscribers(
    spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path
) -> None:
    """A subscriber that asked for 250 once, after 200 rows: 50 outstanding, 200 handed over."""
    asks = AsksOnce(250)
    query = two_hundred_rows_to(spark_session, asks, name, started, tmp_path)
    metrics = [p for p in query.recentProgress if p["numInputRows"]][-1]["sink"]["metrics"]
    assert (int(metrics["deliveredRows"]), int(metrics["outstandingDemand"])) == (200, 50)
    assert asks.rows == 200


def test_a_batch_aware_python_subscriber_gets_lists_of_rows(spark_session: Any, sink: Sink) -> None:
    class Batches(Collector):
        def __init__(self) -> None:
            super().__init__(100)
            self.batches: list[list[Any]] = []

        def on_next_batch(self, rows: list[Any]) -> None:
            self.batches.append(rows)
            self.items.extend(rows)

    batched = Batches()
    query, _ = sink(batches(spark_session, 5), batched, once=True)
    query.awaitTermination(TIMEOUT)

    assert values_of(batched) == list(range(5)) and all(isinstance(r, Row) for r in batched.items)
    assert batched.batches and all(isinstance(b, list) for b in batched.batches)
    assert batched.done.wait(TIMEOUT) and batched.completed


def test_a_jvm_subscriber_gets_spark_rows(spark_session: Any, sink: Sink) -> None:
    spark = spark_session
    rows = jvm_subscriber(spark, 100, 0)
    df = batches(spark, 3).selectExpr("value", "named_struct('a', value) AS nested", "array(value) AS list")
    query, _ = sink(df, rows, once=True)
    query.awaitTermination(TIMEOUT)

    items = list(rows.items())
    assert [item.getClass().getName() for item in items] == [
        "org.apache.spark.sql.catalyst.expressions.GenericRowWithSchema"
    ] * 3
    assert [(r.getLong(0), r.getStruct(1).getLong(0), r.getList(2).get(0)) for r in items] == [
        (i, i, i) for i in range(3)
    ]
    assert rows.awaitDone(int(TIMEOUT * 1000)) and list(rows.violations()) == []


# Pacing.


def test_a_batch_commits_only_once_a_python_subscriber_processed_its_rows(
    spark_session: Any, sink: Sink, tmp_path: Path
) -> None:
    spark = spark_session
    gate = threading.Event()

    class Blocking(Collector):
        def on_next(self, item: Any) -> None:
            super().on_next(item)
            if len(self.items) == 3:
                gate.wait(TIMEOUT)

    blocking = Blocking(100)  # demand for the whole batch: all 10 rows may be handed over
    query, subscriber = sink(batches(spark), blocking)
    assert eventually(lambda: len(blocking.items) == 3)
    time.sleep(0.5)  # room for a wrong commit to happen (not a timing assertion)

    assert not (tmp_path / "commits" / "0").exists() and query.lastProgress is None
    gate.set()
    assert eventually(lambda: (tmp_path / "commits" / "0").exists())
    assert values_of(blocking)[:10] == list(range(10))
    stats = rss.stream_stats(spark, subscriber)
    assert stats["max_buffered"] <= 1  # rows become values only as they are handed over


# At most once per (query id, epoch).


@pytest.mark.parametrize("kind", ["jvm", "python"])
def test_a_restart_delivers_the_rest_of_a_batch_a_stop_interrupted(
    spark_session: Any, sink: Sink, tmp_path: Path, kind: str
) -> None:
    spark = spark_session
    first: Any = jvm_subscriber(spark, 4, 0) if kind == "jvm" else Collector(4)  # 4 of 10, then nothing
    second: Any = jvm_subscriber(spark, 100, 0) if kind == "jvm" else Collector(100)
    run, _ = sink(batches(spark), first)
    assert eventually(lambda: len(values_of(first)) == 4)
    time.sleep(0.5)  # the commit of batch 0 waits for demand (not asserted: a stop at any time must do)

    run.stop()
    # The same checkpoint, a new subscriber: Spark re-runs batch 0, and only batch 0 (Once).
    rerun, _ = sink(batches(spark), second, once=True)
    rerun.awaitTermination(TIMEOUT)

    assert run.exception() is None and rerun.exception() is None
    assert values_of(first) == [0, 1, 2, 3]
    assert values_of(second) == [4, 5, 6, 7, 8, 9]  # the rest, none twice, none lost
    assert (tmp_path / "commits" / "0").exists()


def test_a_batch_delivered_in_full_is_not_delivered_again(
    spark_session: Any, sink: Sink, tmp_path: Path
) -> None:
    spark = spark_session
    runs = [jvm_subscriber(spark, 100, 0) for _ in range(3)]

    run, _ = sink(batches(spark), runs[0], once=True)
    run.awaitTermination(TIMEOUT)
    for entry in ("0", ".0.crc"):  # as if the driver had died before Spark committed batch 0
        (tmp_path / "commits" / entry).unlink(missing_ok=True)
    rerun, _ = sink(batches(spark), runs[1], once=True)
    rerun.awaitTermination(TIMEOUT)
    last, _ = sink(batches(spark), runs[2], once=True)
    last.awaitTermination(TIMEOUT)

    assert [values_of(r) for r in runs] == [list(range(10)), [], list(range(10, 20))]
    assert rerun.lastProgress["batchId"] == 0 and rerun.lastProgress["numInputRows"] == 10  # it did re-run
    assert all(r.awaitDone(int(TIMEOUT * 1000)) and r.isComplete() for r in runs)


def handover(spark: Any) -> tuple[int, int, int]:
    """The sink's in-memory handover (local mode): rows taken by commits in all, rows parked
    and not taken, writes open."""
    link = spark._jvm.io.github.rspy.spark.sink.SinkLink
    return int(link.handedOverRows()), int(link.parkedRows()), int(link.openWrites())


def test_in_local_mode_the_tasks_hand_their_rows_to_the_commit_in_memory_and_leave_none(
    spark_session: Any, sink: Sink
) -> None:
    spark = spark_session
    taken_before = handover(spark)[0]
    subscriber = jvm_subscriber(spark, 2**62, 0)
    query, _ = sink(batches(spark, 1_000, partitions=3), subscriber)
    assert eventually(lambda: len(values_of(subscriber)) >= 5_000)
    query.stop()

    delivered = values_of(subscriber)
    assert sorted(delivered[:5_000]) == list(range(5_000)) and len(set(delivered)) == len(delivered)
    taken, parked, open_writes = handover(spark)
    assert taken - taken_before >= len(delivered)  # every row went through memory, not a task result
    assert (parked, open_writes) == (0, 0)


def test_a_write_job_that_fails_leaves_no_rows_parked(spark_session: Any, sink: Sink) -> None:
    spark = spark_session
    subscriber = jvm_subscriber(spark, 2**62, 0)
    # Partition 1's last row fails, a second late: partition 0 has committed and parked its rows.
    df = batches(spark, 1_000, partitions=2).selectExpr(
        "IF(value = 999 AND reflect('java.lang.Thread', 'sleep', 1000L) = 'null', "
        "raise_error('boom at 999'), value) AS value"
    )
    query, _ = sink(df, subscriber)

    with pytest.raises(StreamingQueryException, match="boom at 999"):
        query.awaitTermination(TIMEOUT)

    assert values_of(subscriber) == []  # nothing of the failed batch was delivered
    assert handover(spark)[1:] == (0, 0)  # the abort dropped what partition 0 parked


def _as_a_new_query(checkpoint: Path) -> Path:
    """A copy of ``checkpoint`` under a query id this driver has never seen (its memory has no
    record of it, as a new driver's has none), without Spark's commit of batch 0."""
    copy = checkpoint.parent / f"{checkpoint.name}-copy"
    shutil.copytree(checkpoint, copy)
    metadata = json.loads((copy / "metadata").read_text())
    (copy / "metadata").write_text(json.dumps({**metadata, "id": str(uuid.uuid4())}))
    (copy / ".metadata.crc").unlink(missing_ok=True)  # the checksum of what it was
    for entry in ("0", ".0.crc"):
        (copy / "commits" / entry).unlink(missing_ok=True)
    return copy


def test_the_record_in_the_checkpoint_is_what_a_new_driver_goes_on_from(
    spark_session: Any, sink: Sink, tmp_path: Path
) -> None:
    """The record in the checkpoint alone, as a new driver finds it: this driver's memory has no
    record of the query id a copied checkpoint carries."""
    spark = spark_session
    first = jvm_subscriber(spark, 100, 0)
    run, _ = sink(batches(spark), first, once=True)
    run.awaitTermination(TIMEOUT)
    record = tmp_path / "reactive-streams-sink" / "0"
    assert record.read_text().split() == ["v1", "epoch=0", "rows=10", "complete=true"]
    copy = _as_a_new_query(tmp_path)
    second = jvm_subscriber(spark, 100, 0)
    rerun, _ = sink(batches(spark), second, once=True, checkpoint=copy)
    rerun.awaitTermination(TIMEOUT)
    last = jvm_subscriber(spark, 100, 0)
    after, _ = sink(batches(spark), last, once=True, checkpoint=copy)
    after.awaitTermination(TIMEOUT)

    assert [values_of(r) for r in (first, second, last)] == [list(range(10)), [], list(range(10, 20))]
    assert rerun.lastProgress["batchId"] == 0 and rerun.lastProgress["numInputRows"] == 10
    records = (copy / "reactive-streams-sink").iterdir()
    assert sorted(p.name for p in records if not p.name.startswith(".")) == ["1"]  # the latest only


def test_a_damaged_record_fails_the_query_naming_the_file(
    spark_session: Any, sink: Sink, tmp_path: Path
) -> None:
    spark = spark_session
    run, _ = sink(batches(spark), jvm_subscriber(spark, 100, 0), once=True)
    run.awaitTermination(TIMEOUT)
    (tmp_path / "reactive-streams-sink" / "0").write_text("v1\nepoch=zero\n")
    (tmp_path / "reactive-streams-sink" / ".0.crc").unlink(missing_ok=True)
    copy = _as_a_new_query(tmp_path)
    rerun, _ = sink(batches(spark), jvm_subscriber(spark, 100, 0), once=True, checkpoint=copy)
    with pytest.raises(StreamingQueryException, match="reactive-streams-sink/0 is damaged"):
        rerun.awaitTermination(TIMEOUT)


@pytest.mark.parametrize("kind", ["jvm", "python"])
def test_the_subscriber_reads_each_rows_epoch_and_query_id_from_its_subscription(
    spark_session: Any, sink: Sink, kind: str
) -> None:
    spark = spark_session
    if kind == "python":
        seen: list[tuple[int, int, str | None]] = []

        class Epochs(Collector):
            def on_next(self, item: Any) -> None:
                subscription: Any = self._subscription
                seen.append((item.value, subscription.epoch, subscription.query_id))
                super().on_next(item)

        subscriber: Any = Epochs(30)
    else:
        subscriber = spark._jvm.io.github.rspy.spark.testing.EpochRecorder(30)
    run, _ = sink(batches(spark), subscriber)
    assert eventually(lambda: (len(seen) if kind == "python" else int(subscriber.size())) >= 30)
    run.stop()

    if kind == "jvm":
        seen = [(int(v), int(e), str(q)) for v, e, q in (str(x).split() for x in subscriber.lines())]
    assert [(value, epoch) for value, epoch, _ in seen[:30]] == [(v, v // 10) for v in range(30)]
    assert {query for _, _, query in seen} == {str(run.id)}


# Arrow batches, and rows as Arrow columns.


def arrow_bytes(spark: Any) -> int:
    return int(spark._jvm.io.github.rspy.spark.sink.SinkLink.arrowAllocatedBytes())


class Demanded(Collector):
    """A `Collector` that also records how much it had requested when each element came."""

    def __init__(self, initial: int, each: int = 0, fail_on: int = 0) -> None:
        super().__init__(initial, each, fail_on)
        self.requested = initial
        self.received = 0
        self.over: list[int] = []  # received counts above what was requested (§1.1)

    def on_next(self, item: Any) -> None:
        self.received += 1
        if self.received > self.requested:
            self.over.append(self.received)
        if self.each and (len(self.items) + 1) % self.each == 0:
            self.requested += self.each
        super().on_next(item)


def test_a_subscriber_of_arrow_batches_gets_record_batches_of_the_types_to_arrow_gives(
    spark_session: Any, sink: Sink
) -> None:
    spark = spark_session
    columns = (
        "value AS id",
        "concat('row ', value) AS text",
        "value / 2 AS half",
        "IF(value = 1, NULL, CAST(value AS INT)) AS maybe",
        "TIMESTAMP'2024-02-29 12:00:00' AS at",
        "named_struct('a', value, 'b', array(value)) AS nested",
        "CAST(value AS DECIMAL(5, 2)) AS money",
    )
    collector = Collector(100)
    query, name = sink(
        batches(spark, 25).selectExpr(*columns),
        collector,
        once=True,
        arrow_batches=True,
        max_records_per_batch=10,
    )
    query.awaitTermination(TIMEOUT)

    assert query.exception() is None and collector.done.wait(TIMEOUT) and collector.completed
    assert all(isinstance(batch, pa.RecordBatch) for batch in collector.items)
    assert [batch.num_rows for batch in collector.items] == [10, 10, 5]
    expected = spark.range(25).withColumnRenamed("id", "value").selectExpr(*columns).toArrow()
    got = pa.Table.from_batches(collector.items)

    def types(
        table: Any,
    ) -> list[tuple[str, str]]:  # the sink's columns may be nullable where the range's are not
        return [(f.name, str(f.type).replace(" not null", "")) for f in table.schema]

    assert types(got) == types(expected)
    assert got.to_pylist() == expected.to_pylist()
    stats = rss.stream_stats(spark, name)
    assert (stats["elements"], stats["requested"], stats["arrow_rows"]) == (
        3,
        100,
        25,
    )  # demand counts batches
    assert eventually(lambda: arrow_bytes(spark) == 0)  # every batch the sink made was closed


def test_a_subscriber_of_arrow_batches_gets_no_more_batches_than_it_requested(
    spark_session: Any, sink: Sink
) -> None:
    spark = spark_session
    collector = Demanded(2)
    query, name = sink(batches(spark, 100), collector, arrow_batches=True, max_records_per_batch=7)
    assert eventually(lambda: len(collector.items) == 2)
    time.sleep(0.5)  # the commit waits: nothing more comes without demand
    assert len(collector.items) == 2 and query.isActive and not query.recentProgress
    stats = rss.stream_stats(spark, name)
    assert (stats["elements"], stats["max_buffered"]) == (2, 1)

    assert collector._subscription is not None
    collector.requested += 13
    collector._subscription.request(13)
    assert eventually(lambda: len(collector.items) == 15)  # batch 0's 100 rows: 14 of 7, and 2
    assert eventually(lambda: query.lastProgress is not None)  # ... and its commit
    query.stop()

    assert collector.over == []
    rows = [value for batch in collector.items for value in batch.column(0).to_pylist()]
    assert rows == list(range(len(rows))) and len(rows) >= 100
    assert [batch.num_rows for batch in collector.items[:15]] == [7] * 14 + [2]


def test_a_subscriber_of_arrow_batches_reads_each_batchs_epoch_and_gets_spark_default_sizes(
    spark_session: Any, sink: Sink
) -> None:
    spark = spark_session
    seen: list[tuple[int, int, str | None]] = []

    class Epochs(Collector):
        def on_next(self, item: Any) -> None:
            subscription: Any = self._subscription
            seen.append((item.num_rows, subscription.epoch, subscription.query_id))
            super().on_next(item)

    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    spark.conf.set(key, "4")
    try:
        run, _ = sink(batches(spark), Epochs(100), arrow_batches=True)
        assert eventually(lambda: len(seen) >= 9)
        run.stop()
    finally:
        spark.conf.unset(key)

    assert [(rows, epoch) for rows, epoch, _ in seen[:9]] == [
        (4, 0),
        (4, 0),
        (2, 0),
        (4, 1),
        (4, 1),
        (2, 1),
        (4, 2),
        (4, 2),
        (2, 2),
    ]
    assert {query for _, _, query in seen} == {str(run.id)}


def test_a_subscriber_of_arrow_batches_that_raises_stops_the_query_and_the_batch_counts_as_delivered(
    spark_session: Any, sink: Sink
) -> None:
    spark = spark_session
    failing = Collector(100, fail_on=2)
    query, subscriber = sink(batches(spark), failing, arrow_batches=True, max_records_per_batch=4)
    with pytest.raises(StreamingQueryException) as failure:
        assert not query.awaitTermination(TIMEOUT), "the query should have failed"
    message = str(failure.value)
    assert (
        f"the subscriber registered as '{subscriber}'" in message and "ValueError: boom at row 2" in message
    )

    rest = jvm_subscriber(spark, 100, 0)  # the rows of the batch it raised on (4-7) count as delivered
    restart, _ = sink(batches(spark), rest, once=True)
    restart.awaitTermination(TIMEOUT)
    assert values_of(rest) == [8, 9]
    assert eventually(lambda: arrow_bytes(spark) == 0)


def test_a_restart_delivers_the_rest_of_a_micro_batch_in_arrow_batches(
    spark_session: Any, sink: Sink, tmp_path: Path
) -> None:
    spark = spark_session
    first, second = Collector(1), Collector(100)
    run, _ = sink(batches(spark), first, arrow_batches=True, max_records_per_batch=4)
    assert eventually(lambda: len(first.items) == 1)
    time.sleep(0.5)
    run.stop()
    rerun, _ = sink(batches(spark), second, once=True, arrow_batches=True, max_records_per_batch=4)
    rerun.awaitTermination(TIMEOUT)

    def values(collector: Collector) -> list[int]:
        return [v for batch in collector.items for v in batch.column(0).to_pylist()]

    assert values(first) == [0, 1, 2, 3] and values(second) == [4, 5, 6, 7, 8, 9]
    assert [batch.num_rows for batch in second.items] == [4, 2]


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"arrow_batches": "yes"}, "arrow_batches must be a bool, got 'yes'"),
        ({"arrow_batches": True, "max_records_per_batch": -1}, "max_records_per_batch must be an int >= 0"),
        ({"arrow_batches": True, "max_records_per_batch": True}, "max_records_per_batch must be an int >= 0"),
        (
            {"arrow_batches": True, "max_records_per_batch": 2**31},
            "max_records_per_batch must be an int >= 0",
        ),
        ({"max_records_per_batch": 5}, "max_records_per_batch needs arrow_batches=True"),
    ],
)
def test_bad_arrow_batch_options_are_refused_naming_them(
    spark_session: Any, options: dict[str, Any], error: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(error)):
        register_subscriber(spark_session, "never-registered", Collector(1), **options)
    assert not rss.bridge(spark_session).jvm.io.github.rspy.spark.StreamRegistry.isRegistered(
        "never-registered"
    )


def test_arrow_batches_are_refused_for_a_jvm_subscriber(spark_session: Any) -> None:
    with pytest.raises(ValueError, match=r"arrow_batches=True\) is for Python subscribers"):
        register_subscriber(
            spark_session, "jvm-batches", jvm_subscriber(spark_session, 1, 0), arrow_batches=True
        )
    assert not rss.bridge(spark_session).jvm.io.github.rspy.spark.StreamRegistry.isRegistered("jvm-batches")


def test_a_link_refuses_column_rows_of_fewer_than_one_row(spark_session: Any) -> None:
    link = rss.bridge(spark_session).jvm.io.github.rspy.spark.sink.SinkLink()
    for most in (0, -1):
        with pytest.raises(Exception, match=rf"the most column rows in one element must be >= 1, got {most}"):
            link.takeColumnRows(most)


def test_rows_of_plain_columns_cross_as_arrow_columns_within_the_demand(
    spark_session: Any, sink: Sink
) -> None:
    spark = spark_session
    collector = Demanded(37, each=37)
    columns = ("value AS id", "concat('row ', value) AS text", "value / 2 AS half", "value % 2 = 0 AS even")
    query, name = sink(batches(spark, 10_000).selectExpr(*columns), collector)
    # More rows than the bridge's demand window (8,192): the window counts each row of a batch
    assert eventually(lambda: len(collector.items) >= 20_000)
    query.stop()

    assert collector.over == []  # no more rows than requested, however the columns were cut
    assert [tuple(row) for row in collector.items[:20_000]] == [
        (i, f"row {i}", i / 2, i % 2 == 0) for i in range(20_000)
    ]
    assert all(type(row).__fields__ == ["id", "text", "half", "even"] for row in collector.items)
    stats = rss.stream_stats(spark, name)
    assert stats["arrow_rows"] > stats["elements"] // 2  # most of them, in runs the demand allowed
    assert stats["arrow_rows"] > 0


def test_rows_of_other_columns_cross_as_values(spark_session: Any, sink: Sink) -> None:
    spark = spark_session
    collector = Collector(100)
    query, name = sink(
        batches(spark, 50).selectExpr("value AS id", "DATE'2024-02-29' AS day"), collector, once=True
    )
    query.awaitTermination(TIMEOUT)
    assert [tuple(row) for row in collector.items] == [(i, "2024-02-29") for i in range(50)]
    assert rss.stream_stats(spark, name)["arrow_rows"] == 0


# Failures.


@pytest.mark.parametrize("kind", ["jvm", "python"])
def test_a_subscriber_that_raises_stops_the_query_naming_it_and_leaves_nothing_behind(
    spark_session: Any, sink: Sink, kind: str
) -> None:
    spark = spark_session
    before = (listeners(spark), live(spark))
    failing: Any = jvm_subscriber(spark, 100, 0).failOn(3) if kind == "jvm" else Collector(100, fail_on=3)
    query, subscriber = sink(batches(spark), failing)

    with pytest.raises(StreamingQueryException) as failure:
        assert not query.awaitTermination(TIMEOUT), "the query should have failed"

    message = str(failure.value)
    assert f"the subscriber registered as '{subscriber}'" in message and "§2.13" in message
    assert (
        "IllegalStateException: boom from RecordingSubscriber.onNext #3"
        if kind == "jvm"
        else "ValueError: boom at row 3"
    ) in message
    if kind == "jvm":
        assert not failing.awaitDone(1000) and list(failing.violations()) == []  # cancelled: no signal
    else:
        assert failing.error is None and not failing.completed
    assert eventually(lambda: (listeners(spark), live(spark)) == before), (
        before,
        listeners(spark),
        live(spark),
    )
    assert eventually(lambda: query_threads(spark, query) == [])

    # The row it raised on counts as delivered: a restart delivers the rest of the batch.
    rest = jvm_subscriber(spark, 100, 0)
    restart, _ = sink(batches(spark), rest, once=True)
    restart.awaitTermination(TIMEOUT)
    assert values_of(rest) == list(range(3, 10))


def test_an_unknown_sink_option_fails_start_naming_it(
    spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path
) -> None:
    spark, subscriber = spark_session, name("options")
    register_subscriber(spark, subscriber, Collector(10))
    before = (listeners(spark), live(spark))

    def writer() -> Any:
        return (
            batches(spark)
            .writeStream.format(FORMAT)
            .option("subscriber", subscriber)
            .option("checkpointLocation", str(tmp_path))
        )

    with pytest.raises(
        Exception,
        match=r"the reactive-streams sink has no option 'bogus'; its options are "
        r"\[onClientLoss, subscriber\]",
    ):
        started.append(writer().option("bogus", 5).start())
    with pytest.raises(Exception, match="has no option 'path'"):
        started.append(writer().start(str(tmp_path / "out")))  # start(path) passes a path option

    assert (listeners(spark), live(spark)) == before  # nothing claimed, nothing left behind
    query = to_subscriber(batches(spark), subscriber, tmp_path, started, once=True)  # the subscriber is free
    assert query.awaitTermination(TIMEOUT) is not False and query.exception() is None


def test_a_continuous_trigger_is_refused_naming_the_supported_triggers(
    spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path
) -> None:
    spark, subscriber = spark_session, name("continuous")
    collector = Collector(10)
    register_subscriber(spark, subscriber, collector)
    before = (listeners(spark), live(spark))
    rate = spark.readStream.format("rate").load()  # a source that supports continuous processing
    writer = rate.writeStream.format(FORMAT).option("subscriber", subscriber).trigger(continuous="1 second")

    with pytest.raises(
        Exception,
        match=re.escape(
            "micro-batch queries only: use the default trigger, Trigger.ProcessingTime, "
            "Trigger.AvailableNow or Trigger.Once, not Trigger.Continuous"
        ),
    ):
        started.append(writer.option("checkpointLocation", str(tmp_path)).start())

    assert (listeners(spark), live(spark)) == before and collector.items == []


@pytest.mark.timeout(660)  # a child process, given up to 600 s
def test_an_ordinary_stop_logs_no_error_and_a_failure_still_does() -> None:
    outcome, stderr = run_script("sink_stop_script.py", TEST_JARS, timeout=600)

    def logged(phase: str) -> list[str]:
        text = stderr.split(f"PHASE {phase} BEGIN", 1)[1].split(f"PHASE {phase} END", 1)[0]
        return [line for line in text.splitlines() if ERROR_LINE.match(line)]

    # A stop while the commit waits for demand, and one while the write tasks run: no ERROR.
    assert outcome["commit"] == {"exception": "None", "delivered": 2} and not logged("commit")
    assert outcome["job"] == {"exception": "None"} and not logged("job")
    # A real failure is still logged, and raised with the subscriber's name and error.
    for phase, registered, error in [
        ("jvm_failure", "throwing", "IllegalStateException: boom from RecordingSubscriber.onNext #3"),
        ("python_failure", "raising", "ValueError: boom from a Python subscriber"),
    ]:
        assert f"the subscriber registered as '{registered}'" in outcome[phase] and error in outcome[phase]
        assert any("is aborting" in line for line in logged(phase)), logged(phase)


# A driver that dies.


def _restart_run(mode: str, checkpoint: Path, log: Path, rows: int) -> list[str]:
    return [
        sys.executable,
        str(Path(__file__).with_name("sink_restart_script.py")),
        mode,
        str(checkpoint),
        str(log),
        str(rows),
        *TEST_JARS,
    ]


def _logged(log: Path) -> list[tuple[int, int, str]]:
    return [(int(v), int(e), q) for v, e, q in (line.split() for line in log.read_text().splitlines())]


@pytest.mark.timeout(900)
def test_a_driver_killed_after_delivery_and_before_the_commit_delivers_nothing_twice(tmp_path: Path) -> None:
    """The first driver delivers epochs 0 to 2, then is killed (SIGKILL, Python and its JVM)
    while Spark writes ``commits/2``; a new driver on the checkpoint re-runs epoch 2, which the
    record in the checkpoint says was delivered, and goes on with epoch 3."""
    checkpoint, log, marker = tmp_path / "checkpoint", tmp_path / "rows.log", tmp_path / "blocked"
    env = {**os.environ, "RSPY_TEST_BLOCK_COMMIT": "2", "RSPY_TEST_BLOCKED_MARKER": str(marker)}
    with subprocess.Popen(
        _restart_run("deliver", checkpoint, log, 10**9),
        env=env,
        start_new_session=True,  # its own process group: the JVM dies with it
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ) as first:
        deadline = time.monotonic() + 300
        while not marker.exists() and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        os.killpg(first.pid, signal.SIGKILL)
        _, stderr = first.communicate()
    assert marker.exists(), stderr[-3000:]
    assert not (checkpoint / "commits" / "2").exists()
    assert (checkpoint / "reactive-streams-sink" / "2").read_text().split() == [
        "v1",
        "epoch=2",
        "rows=10",
        "complete=true",
    ]
    delivered = _logged(log)
    assert [v for v, _, _ in delivered] == list(range(30))

    resume = ["resume", str(checkpoint), str(log), "20", *TEST_JARS]
    outcome, _ = run_script("sink_restart_script.py", resume, 600)

    logged = _logged(log)
    assert [v for v, _, _ in logged] == list(range(50))  # epoch 2 not again, nothing lost
    assert [e for _, e, _ in logged] == [v // 10 for v in range(50)]
    assert {q for _, _, q in logged} == {outcome["query"]}  # the query id the checkpoint keeps


@pytest.mark.timeout(900)
def test_a_batch_a_stop_interrupted_goes_on_in_a_new_driver(tmp_path: Path) -> None:
    """A stop interrupts the delivery of epoch 2 after 5 of its rows, and the driver exits; a
    new driver on the checkpoint delivers that epoch's other 5 rows, then the next epochs."""
    checkpoint, log = tmp_path / "checkpoint", tmp_path / "rows.log"
    run_script("sink_restart_script.py", ["stop", str(checkpoint), str(log), "25", *TEST_JARS], 600)
    assert (checkpoint / "reactive-streams-sink" / "2").read_text().split() == [
        "v1",
        "epoch=2",
        "rows=5",
        "complete=false",
    ]
    run_script("sink_restart_script.py", ["resume", str(checkpoint), str(log), "15", *TEST_JARS], 600)

    logged = _logged(log)
    assert [v for v, _, _ in logged] == list(range(40))
    assert [e for _, e, _ in logged] == [v // 10 for v in range(40)]
