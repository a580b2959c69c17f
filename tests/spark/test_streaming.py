"""The ``reactive-streams`` Structured Streaming source and sink: micro-batches and buffers
bounded by demand, publisher errors failing the query with the original error, rows delivered
in order to Python and JVM subscribers."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql import Row

import reactive_streams as rs
from reactive_streams import spark as rss
from reactive_streams.spark._streaming import (
    FORMAT,
    register_publisher,
    register_subscriber,
    stream_stats,
    unregister,
)

from ..conftest import ROOT
from ..support import steady
from .kit import (
    TIMEOUT,
    Collector,
    Sink,
    Source,
    count,
    flux,
    jvm_publisher,
    jvm_subscriber,
    read,
    run_script,
    table_name,
    to_memory,
    to_subscriber,
)


def wait_for(query: Any, condition: Callable[[], bool], what: str) -> None:
    """Let the query process what is available until ``condition`` holds (elements of an
    asynchronous publisher may arrive after a trigger found none)."""
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        error = query.exception()
        if error is not None:
            raise error
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        query.processAllAvailable()
        time.sleep(0.02)


def batch_sizes(query: Any) -> list[int]:
    return [p.numInputRows for p in query.recentProgress if p.numInputRows > 0]


def cause_class(error: Any) -> str:
    """The Java class of what failed a query (PySpark keeps the Java exception as ``_origin``)."""
    return str(error._origin.getCause().getClass().getName())


# The source.


def test_python_publisher_feeds_micro_batches_of_at_most_max_records(
    spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path
) -> None:
    spark, publisher, table = spark_session, name("py_source"), table_name()
    elements = [(i, f"name {i}", i / 2, i % 2 == 0, bytes([i]), None if i % 3 == 0 else i) for i in range(25)]
    register_publisher(spark, publisher, rs.from_iterable(elements))
    schema = "id LONG, name STRING, half DOUBLE, even BOOLEAN, raw BINARY, maybe INT"
    query = to_memory(read(spark, publisher, schema, max_records=10), table, tmp_path, started)

    wait_for(query, lambda: count(spark, table) == 25, "25 rows")

    rows = [tuple(r) for r in spark.table(table).orderBy("id").collect()]
    assert [(*r[:4], bytes(r[4]), r[5]) for r in rows] == elements
    sizes = batch_sizes(query)
    assert sum(sizes) == 25 and max(sizes) <= 10 and len(sizes) >= 3
    stats = stream_stats(spark, publisher)
    assert stats["elements"] == 25 and 0 < stats["max_buffered"] <= 10 * (1 + 1)  # prefetch 1
    assert stats["requested"] <= 25 + 20  # what finished batches released, plus the bound


def test_dicts_fill_columns_by_name_and_single_values_a_one_column_schema(
    spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path
) -> None:
    spark = spark_session
    by_name, single = name("dicts"), name("single")
    register_publisher(
        spark, by_name, rs.from_iterable([{"id": i, "text": f"t{i}", "other": 0} for i in range(4)])
    )
    register_publisher(spark, single, flux(spark).range(0, 4))  # Integer elements, a bigint column
    dicts, singles = table_name(), table_name()
    q1 = to_memory(
        read(spark, by_name, "id INT, text STRING, missing DOUBLE"), dicts, tmp_path / "a", started
    )
    q2 = to_memory(read(spark, single, "value BIGINT"), singles, tmp_path / "b", started)

    wait_for(q1, lambda: count(spark, dicts) == 4, "4 rows from dicts")
    wait_for(q2, lambda: count(spark, singles) == 4, "4 single values")

    assert [tuple(r) for r in spark.table(dicts).orderBy("id").collect()] == [
        (i, f"t{i}", None) for i in range(4)
    ]
    assert sorted(r.value for r in spark.table(singles).collect()) == [0, 1, 2, 3]


@pytest.mark.parametrize("prefetch", [0, 1, 3])
def test_the_source_holds_at_most_max_records_times_one_plus_prefetch(
    spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path, prefetch: int
) -> None:
    spark, publisher, table = spark_session, name("jvm_source"), table_name()
    bound = 7 * (1 + prefetch)
    recording = jvm_publisher(spark, 50)
    register_publisher(spark, publisher, recording)
    df = read(spark, publisher, "value LONG", max_records=7, prefetch=prefetch)
    query = to_memory(df, table, tmp_path, started)

    wait_for(query, lambda: count(spark, table) == 50, "50 rows")

    assert sorted(r.value for r in spark.table(table).collect()) == list(range(50))
    requests = list(recording.requests())
    assert all(0 < n <= bound for n in requests), requests
    assert recording.maxOutstanding() <= bound  # asked for no more than the bound
    assert sum(requests) <= 50 + bound  # what finished batches released, plus the bound
    sizes = batch_sizes(query)
    assert sum(sizes) == 50 and max(sizes) <= 7 and len(sizes) >= 8
    stats = stream_stats(spark, publisher)
    assert stats["max_buffered"] <= bound and stats["elements"] == 50
    metrics = query.lastProgress["sources"][0]["metrics"]
    assert int(metrics["demandBound"]) == bound and int(metrics["maxBufferedElements"]) <= bound


def test_a_jvm_publisher_error_fails_the_query_with_that_error(
    spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path
) -> None:
    spark, publisher, table = spark_session, name("jvm_error"), table_name()
    boom = spark._jvm.java.lang.IllegalStateException("boom from the JVM publisher")
    register_publisher(spark, publisher, flux(spark).range(0, 5).concatWith(flux(spark).error(boom)))
    query = to_memory(read(spark, publisher, "value LONG"), table, tmp_path, started)

    with pytest.raises(StreamingQueryException) as failure:
        assert not query.awaitTermination(TIMEOUT), "the query should have failed"

    assert "boom from the JVM publisher" in str(failure.value)
    assert cause_class(failure.value) == "java.lang.IllegalStateException"  # the very exception
    assert count(spark, table) == 5  # the elements before the error were processed


def test_a_python_publisher_error_fails_the_query_with_that_error(
    spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path
) -> None:
    spark, publisher, table = spark_session, name("py_error"), table_name()

    def failing() -> Iterator[int]:
        yield from range(3)
        raise RuntimeError("boom from the Python publisher")

    register_publisher(spark, publisher, rs.from_iterable(failing()))
    query = to_memory(read(spark, publisher, "value LONG"), table, tmp_path, started)

    with pytest.raises(StreamingQueryException) as failure:
        assert not query.awaitTermination(TIMEOUT), "the query should have failed"

    message = str(failure.value)
    assert "RuntimeError" in message and "boom from the Python publisher" in message
    assert cause_class(failure.value) == "io.github.rspy.bridge.PythonException"
    assert count(spark, table) == 3


def test_a_failed_query_ends_its_subscriber_with_on_error(
    spark_session: Any, source: Source, sink: Sink
) -> None:
    spark = spark_session
    boom = spark._jvm.java.lang.IllegalStateException("boom before the sink")
    recording = jvm_subscriber(spark, 100, 0)
    query, _ = sink(source(flux(spark).range(0, 4).concatWith(flux(spark).error(boom))), recording)

    with pytest.raises(StreamingQueryException):
        assert not query.awaitTermination(TIMEOUT), "the query should have failed"

    assert recording.awaitDone(int(TIMEOUT * 1000))
    assert recording.count() == 4 and "boom before the sink" in recording.errorMessage()
    assert list(recording.violations()) == []


def test_a_restart_subscribes_again_and_counts_on_from_the_checkpoint(
    spark_session: Any, source: Source, sink: Sink
) -> None:
    spark = spark_session
    first, second = jvm_subscriber(spark, 100, 100), jvm_subscriber(spark, 100, 100)
    df = source(rs.from_iterable(range(6)), max_records=4)

    run, _ = sink(df, first)
    wait_for(run, lambda: first.count() == 6, "the first run's 6 rows")
    run.stop()
    rerun, _ = sink(df, second)  # the same checkpoint
    wait_for(rerun, lambda: second.count() == 6, "the second run's 6 rows")

    # rs.from_iterable is cold: the new subscription starts over, numbered from the checkpoint on.
    assert [r.getLong(0) for r in second.items()] == list(range(6))
    offsets = [
        (p.sources[0].startOffset, p.sources[0].endOffset) for p in rerun.recentProgress if p.numInputRows
    ]
    assert offsets[0][0] == "6" and offsets[-1][1] == "12"
    assert first.awaitDone(int(TIMEOUT * 1000)) and first.isComplete()
    rerun.stop()


def test_rule_2_5_a_subscriber_serves_one_query_run(
    spark_session: Any,
    source: Source,
    sink: Sink,
    started: list[Any],
    tmp_path: Path,
) -> None:
    spark = spark_session
    recording = jvm_subscriber(spark, 10, 0)
    df = source(flux(spark).range(0, 3))
    run, subscriber = sink(df, recording)
    wait_for(run, lambda: recording.count() == 3, "3 rows")
    run.stop()

    rerun = to_subscriber(df, subscriber, tmp_path, started)

    with pytest.raises(
        StreamingQueryException, match=re.escape("§2.5: a Subscriber is subscribed at most once")
    ):
        assert not rerun.awaitTermination(TIMEOUT), "the second run should have failed"
    assert recording.count() == 3 and recording.isComplete()


# The sink.


def test_sink_delivers_rows_in_order_to_a_jvm_subscriber_and_completes(
    spark_session: Any, source: Source, sink: Sink
) -> None:
    spark = spark_session
    recording = jvm_subscriber(spark, 16, 16)
    df = source(flux(spark).range(0, 40), max_records=15).selectExpr("value", "concat('row ', value) AS text")
    query, subscriber = sink(df, recording)

    wait_for(query, lambda: recording.count() == 40, "40 rows delivered")

    assert [(r.getLong(0), r.getString(1)) for r in recording.items()] == [(i, f"row {i}") for i in range(40)]
    assert list(recording.violations()) == []
    stats = stream_stats(spark, subscriber)
    assert stats["elements"] == 40 and stats["max_buffered"] <= 16 and stats["dropped"] == 0
    query.stop()
    assert recording.awaitDone(int(TIMEOUT * 1000)) and recording.isComplete()
    assert list(recording.violations()) == []


def test_sink_delivers_pyspark_rows_to_a_python_subscriber_and_completes(source: Source, sink: Sink) -> None:
    collector = Collector(8, 8)
    df = source(rs.from_iterable(range(30)), max_records=12).selectExpr(
        "value", "concat('row ', value) AS text"
    )
    query, _ = sink(df, collector)

    wait_for(query, lambda: len(collector.items) == 30, "30 rows delivered")

    assert all(isinstance(r, Row) for r in collector.items)
    assert [r.asDict() for r in collector.items] == [{"value": i, "text": f"row {i}"} for i in range(30)]
    query.stop()
    assert collector.done.wait(TIMEOUT) and collector.completed and collector.error is None


def test_a_slow_subscriber_holds_the_commit_instead_of_growing_a_buffer(
    spark_session: Any, source: Source, sink: Sink
) -> None:
    spark = spark_session
    recording = jvm_subscriber(spark, 5, 0)  # requests 5, then nothing until told
    query, subscriber = sink(source(flux(spark).range(0, 20)), recording)

    assert recording.awaitItems(5, int(TIMEOUT * 1000))
    # The one batch of 20 waits in its commit: 5 delivered, none queued beyond the demand.
    stats = stream_stats(spark, subscriber)
    assert recording.count() == 5 and stats["elements"] == 5 and stats["requested"] == 5
    assert stats["max_buffered"] <= 5 and stats["buffered"] == 0
    assert batch_sizes(query) == []  # the batch has not finished

    recording.request(15)
    wait_for(query, lambda: recording.count() == 20, "the other 15 rows")

    assert [r.getLong(0) for r in recording.items()] == list(range(20))
    stats = stream_stats(spark, subscriber)
    assert stats["elements"] == 20 and stats["requested"] == 20 and stats["max_buffered"] <= 15
    assert list(recording.violations()) == []


def test_stopping_a_query_whose_commit_waits_for_demand_ends_it_cleanly(
    spark_session: Any, source: Source, sink: Sink
) -> None:
    spark = spark_session
    recording = jvm_subscriber(spark, 2, 0)  # takes 2 of the batch's 10, then nothing
    query, subscriber = sink(source(flux(spark).range(0, 10)), recording)
    assert recording.awaitItems(2, int(TIMEOUT * 1000))

    query.stop()  # interrupts the commit waiting for demand

    assert query.exception() is None
    assert recording.awaitDone(int(TIMEOUT * 1000)) and recording.isComplete() and recording.count() == 2
    assert stream_stats(spark, subscriber)["dropped"] == 8


def test_a_python_subscriber_requesting_one_at_a_time_gets_one_at_a_time(
    spark_session: Any, source: Source, sink: Sink
) -> None:
    spark = spark_session
    collector = Collector(1, 1)
    query, subscriber = sink(source(flux(spark).range(0, 30)), collector)

    wait_for(query, lambda: len(collector.items) == 30, "30 rows, one at a time")

    assert [r.value for r in collector.items] == list(range(30))
    stats = stream_stats(spark, subscriber)
    assert stats["max_buffered"] == 1 and stats["requested"] == 31  # one, then one per row


def test_rule_3_9_request_zero_signals_illegal_argument_and_drops_later_rows(
    spark_session: Any, source: Source, sink: Sink
) -> None:
    spark = spark_session
    recording = jvm_subscriber(spark, 0, 0)
    query, subscriber = sink(source(flux(spark).range(0, 10)), recording)
    assert recording.awaitSubscribed(int(TIMEOUT * 1000))

    recording.request(0)

    assert recording.awaitDone(int(TIMEOUT * 1000))
    assert (
        recording.errorClass() == "java.lang.IllegalArgumentException" and "§3.9" in recording.errorMessage()
    )
    query.processAllAvailable()  # the query goes on; the batch's rows are dropped
    assert query.isActive and recording.count() == 0
    assert stream_stats(spark, subscriber)["dropped"] == 10


def test_rule_3_17_unbounded_demand_requested_inside_on_next_of_the_sink(
    spark_session: Any, source: Source, sink: Sink
) -> None:
    # 5, then 2**63-1 twice inside every onNext: the sink adds it to the 4 it still holds, and
    # then to 2**63-1, capped each time, so every row arrives and `requested` reads 2**63-1.
    spark = spark_session
    recording = jvm_subscriber(spark, 5, 0).alsoRequestOnNext(rs.MAX_DEMAND, 2)
    query, subscriber = sink(source(flux(spark).range(0, 30)), recording)

    wait_for(query, lambda: recording.count() == 30, "30 rows delivered")

    assert [r.getLong(0) for r in recording.items()] == list(range(30))
    assert list(recording.violations()) == []
    assert stream_stats(spark, subscriber)["requested"] == rs.MAX_DEMAND


def test_cancel_drops_the_rest_and_the_query_goes_on(spark_session: Any, source: Source, sink: Sink) -> None:
    spark = spark_session
    recording = jvm_subscriber(spark, 3, 0)
    query, subscriber = sink(source(flux(spark).range(0, 12)), recording)
    assert recording.awaitItems(3, int(TIMEOUT * 1000))

    recording.cancel()  # wakes the commit waiting for demand

    query.processAllAvailable()
    assert query.isActive and recording.count() == 3 and not recording.isComplete()
    stats = stream_stats(spark, subscriber)
    assert stats["elements"] == 3 and stats["dropped"] == 9


# Registration.


def test_registration_refuses_taken_names_and_wrong_objects(
    spark_session: Any, name: Callable[[str], str]
) -> None:
    spark, taken = spark_session, name("taken")
    register_publisher(spark, taken, rs.from_iterable([1]))
    with pytest.raises(rs.ReactiveStreamsError, match="already registered"):
        register_subscriber(spark, taken, Collector(1))
    with pytest.raises(TypeError, match=r"got list \[1, 2, 3\]; for the elements .* rs\.from_iterable"):
        register_publisher(spark, name("wrong"), [1, 2, 3])
    with pytest.raises(TypeError, match=r"^register_subscriber\(\) needs a reactive_streams\.Subscriber"):
        register_subscriber(spark, name("wrong"), print)
    with pytest.raises(TypeError, match="Subscriber"):
        register_subscriber(spark, name("wrong"), spark._jvm.java.util.ArrayList())
    with pytest.raises(
        TypeError, match=r"^register_publisher\(\) needs a pyspark\.sql\.SparkSession, got None$"
    ):
        register_publisher(None, name("no session"), rs.from_iterable([1]))
    with pytest.raises(TypeError, match="non-empty str"):
        register_publisher(spark, "", rs.from_iterable([1]))
    with pytest.raises(rs.ReactiveStreamsError, match="nothing is registered"):
        stream_stats(spark, name("absent"))
    assert unregister(spark, taken) and not unregister(spark, taken)


def test_an_unregistered_name_fails_at_load_or_start_naming_the_registered_ones(
    spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path, capfd: Any
) -> None:
    # It failed inside the running query: its clear message came with a 25-line Java stack
    # trace from MicroBatchExecution in the log. Now load() and start() refuse it at once.
    spark, known, known_sink, absent = spark_session, name("known"), name("known_sink"), name("absent")
    register_publisher(spark, known, rs.from_iterable([(1,)]))
    register_subscriber(spark, known_sink, Collector(1))
    capfd.readouterr()
    with pytest.raises(Exception) as at_load:
        read(spark, absent, "value LONG")
    message = str(at_load.value)
    assert f"no publisher is registered as '{absent}'; registered publishers: [" in message
    assert known in message.split("registered publishers: ")[1]
    rows = read(spark, known, "value LONG")
    with pytest.raises(Exception) as at_start:
        started.append(
            rows.writeStream.format(FORMAT)
            .option("subscriber", absent)
            .option("checkpointLocation", str(tmp_path / "cp"))
            .start()
        )
    message = str(at_start.value)
    assert f"no subscriber is registered as '{absent}'; registered subscribers: [" in message
    assert known_sink in message.split("registered subscribers: ")[1]
    assert not started  # no query ran
    time.sleep(0.5)  # a query that ran would have logged by now
    logged = "".join(capfd.readouterr())
    assert "\tat " not in logged and "MicroBatchExecution" not in logged, logged[-3000:]


def test_a_source_needs_a_schema_of_supported_types(spark_session: Any, name: Callable[[str], str]) -> None:
    spark, publisher = spark_session, name("schema")
    register_publisher(spark, publisher, rs.from_iterable([1]))
    with pytest.raises(Exception, match="needs a schema"):
        spark.readStream.format(FORMAT).option("publisher", publisher).load()
    with pytest.raises(Exception, match="column 'when' has type date"):
        read(spark, publisher, "when DATE")


# The source, fed Arrow batches.


def arrow_batch(first: int, rows: int) -> pa.RecordBatch:
    ids = range(first, first + rows)
    return pa.record_batch(
        [pa.array(ids, pa.int64()), pa.array([f"n{i}" for i in ids])], names=["id", "name"]
    )


def plan_of(query: Any) -> str:
    return str(query._jsq.streamingQuery().lastExecution().executedPlan().toString())


def test_record_batches_reach_spark_as_columns_in_whole_batches_of_at_most_max_records(
    spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path
) -> None:
    spark, publisher, table = spark_session, name("arrow_source"), table_name()
    elements = [arrow_batch(i * 10, 10) for i in range(10)] + [arrow_batch(100, 40)]
    register_publisher(spark, publisher, rs.from_iterable(elements))
    query = to_memory(
        read(spark, publisher, "id LONG, name STRING", max_records=25), table, tmp_path, started
    )

    wait_for(query, lambda: count(spark, table) == 140, "140 rows")

    assert [tuple(r) for r in spark.table(table).orderBy("id").collect()] == [
        (i, f"n{i}") for i in range(140)
    ]
    sizes = batch_sizes(query)
    assert sum(sizes) == 140 and sizes[-1] == 40  # a batch larger than the limit crosses whole, alone
    assert all(size % 10 == 0 and size <= 25 for size in sizes[:-1])  # whole batches within the limit
    assert "ColumnarToRow" in plan_of(query)  # Spark read columns: no row was made on the way
    metrics = query.lastProgress["sources"][0]["metrics"]
    assert int(metrics["maxBufferedElements"]) <= 50 + 40  # the bound (rows), passed by at most one batch
    stats = stream_stats(spark, publisher)
    assert stats["elements"] == 11 and stats["requested"] <= 11 + 5  # batches: one first, then what fits
    assert int(rss.bridge(spark).runtime.arrowAllocatedBytes()) == 0  # every batch from Python closed
    registry = spark._jvm.io.github.rspy.spark.StreamRegistry
    assert int(registry.liveSourceBroadcasts()) <= 2  # the last batch's: the committed ones are gone
    query.stop()
    assert int(registry.liveSourceBroadcasts()) == 0  # and the stop destroys the rest


def test_a_python_publishers_rows_reach_spark_in_the_arrow_batches_they_crossed_in(
    spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path
) -> None:
    spark, publisher, table = spark_session, name("arrow_rows"), table_name()
    elements = [(i, f"n{i}", i / 2, i % 2 == 0, bytes([i % 256]), None if i % 7 else i) for i in range(3_000)]
    register_publisher(spark, publisher, rs.from_iterable(elements))
    schema = "id LONG, name STRING, half DOUBLE, even BOOLEAN, raw BINARY, maybe LONG"
    query = to_memory(read(spark, publisher, schema, max_records=1_000), table, tmp_path, started)

    wait_for(query, lambda: count(spark, table) == 3_000, "3,000 rows")

    rows = [tuple(r) for r in spark.table(table).orderBy("id").collect()]
    assert [(*r[:4], bytes(r[4]), r[5]) for r in rows] == elements
    sizes = batch_sizes(query)
    assert sum(sizes) == 3_000 and max(sizes) <= 1_000  # the limit, exactly: batches are cut to it
    assert "ColumnarToRow" in plan_of(query)
    stats = stream_stats(spark, publisher)
    assert stats["elements"] == 3_000 and stats["arrow_rows"] >= 2_000  # most crossed as columns
    assert 0 < stats["max_buffered"] <= 2_000


def test_rows_whose_columns_are_not_the_sources_are_written_one_by_one(
    spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path
) -> None:
    spark, publisher, table = spark_session, name("arrow_misfit_rows"), table_name()
    elements = [{"id": i, "other": "x", "text": f"t{i}"} for i in range(500)]
    register_publisher(spark, publisher, rs.from_iterable(elements))
    query = to_memory(read(spark, publisher, "id INT, text STRING, missing DOUBLE"), table, tmp_path, started)

    wait_for(query, lambda: count(spark, table) == 500, "500 rows")

    assert [tuple(r) for r in spark.table(table).orderBy("id").collect()] == [
        (i, f"t{i}", None) for i in range(500)
    ]
    assert stream_stats(spark, publisher)["arrow_rows"] == 0  # an int column and a missing key: as values


def test_a_jvm_publisher_may_refill_its_batch_the_source_copies_it(
    spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path
) -> None:
    spark, publisher, table = spark_session, name("arrow_refilled"), table_name()
    register_publisher(
        spark, publisher, spark._jvm.io.github.rspy.bridge.testing.ArrowSources.reusedRoot(6, 50)
    )
    query = to_memory(
        read(spark, publisher, "id LONG, value DOUBLE, name STRING", max_records=100),
        table,
        tmp_path,
        started,
    )

    wait_for(query, lambda: count(spark, table) == 300, "300 rows")

    assert [tuple(r) for r in spark.table(table).orderBy("id").collect()] == [
        (i, i / 2, f"name {i}") for i in range(300)
    ]


@pytest.mark.parametrize(
    ("elements", "error"),
    [
        ([(0, "a"), arrow_batch(1, 2)], "element 1 is an Arrow batch, after rows"),
        ([arrow_batch(0, 2), (2, "c")], "element 2 is a row (java.lang.Object[]), after Arrow batches"),
        (
            [pa.record_batch([pa.array([1], pa.int32()), pa.array(["x"])], names=["id", "name"])],
            "the Arrow batch at element 0 has the columns",
        ),
        ([pa.record_batch([pa.array([1]), pa.array(["x"])], names=["key", "name"])], "not the source's"),
    ],
)
def test_batches_that_do_not_fit_fail_the_query_naming_them(
    spark_session: Any,
    name: Callable[[str], str],
    started: list[Any],
    tmp_path: Path,
    elements: list[Any],
    error: str,
) -> None:
    spark, publisher, table = spark_session, name("arrow_misfit"), table_name()
    register_publisher(spark, publisher, rs.from_iterable(elements))
    query = to_memory(read(spark, publisher, "id LONG, name STRING"), table, tmp_path, started)

    with pytest.raises(StreamingQueryException, match=re.escape(error)):
        assert not query.awaitTermination(TIMEOUT), "the query should have failed"
    assert eventually_zero(lambda: int(rss.bridge(spark).runtime.arrowAllocatedBytes()))


def eventually_zero(read_bytes: Callable[[], int]) -> bool:
    deadline = time.monotonic() + TIMEOUT
    while read_bytes() != 0:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_stopped_query_of_batches_goes_on_from_its_checkpoint(
    spark_session: Any, source: Source, sink: Sink
) -> None:
    spark = spark_session
    first, second = jvm_subscriber(spark, 100, 100), jvm_subscriber(spark, 100, 100)
    values = [
        pa.record_batch([pa.array(range(i * 5, i * 5 + 5), pa.int64())], names=["value"]) for i in range(4)
    ]
    df = source(rs.from_iterable(values), max_records=10)

    run, _ = sink(df, first)
    wait_for(run, lambda: first.count() == 20, "the first run's 20 rows")
    run.stop()
    rerun, _ = sink(df, second)  # the same checkpoint
    wait_for(rerun, lambda: second.count() == 20, "the second run's 20 rows")

    # A cold publisher starts over; its rows are numbered on from the checkpoint, in whole batches.
    assert [r.getLong(0) for r in second.items()] == list(range(20))
    offsets = [
        (p.sources[0].startOffset, p.sources[0].endOffset) for p in rerun.recentProgress if p.numInputRows
    ]
    assert offsets[0] == ("20", "30") and offsets[-1][1] == "40"
    rerun.stop()


def test_an_element_that_does_not_fit_fails_the_query_naming_it(
    spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path
) -> None:
    spark, publisher, table = spark_session, name("misfit"), table_name()
    register_publisher(spark, publisher, rs.from_iterable([(1, "a"), ("two", "b")]))
    query = to_memory(read(spark, publisher, "id LONG, text STRING"), table, tmp_path, started)

    misfit = re.escape("element at offset 1: column 'id' (bigint) cannot hold java.lang.String two")
    with pytest.raises(StreamingQueryException, match=misfit):
        assert not query.awaitTermination(TIMEOUT), "the query should have failed"


def test_a_subscriber_unregistered_before_any_query_took_it_is_let_go_of(
    spark_session: Any, name: Callable[[str], str]
) -> None:
    """The bridge held it for good (a live stream on the session's bridge, and the subscriber
    with it); now unregistering lets go of it, and it hears nothing: no query subscribed it."""
    import gc
    import weakref

    bridge = rss.bridge(spark_session)
    live = steady(lambda: bridge.live_streams, "the session bridge's live streams")  # earlier tests' end
    sink = name("untaken")
    collector = Collector(1)
    register_subscriber(spark_session, sink, collector)
    assert bridge.live_streams == live + 1
    assert unregister(spark_session, sink)
    assert bridge.live_streams == live
    assert collector._subscription is None and collector.items == [] and not collector.done.is_set()
    gone = weakref.ref(collector)
    del collector
    gc.collect()
    assert gone() is None


@pytest.mark.timeout(360)
def test_the_scans_figures_are_in_sparks_ui(tmp_path: Path) -> None:
    """The scan's custom metrics (DSv2 ``CustomMetric``, reported by the driver for each
    micro-batch) on its node in Spark's SQL tab: read from the UI's REST API, found in the
    execution's HTML page, and shown by a headless browser as a user sees them: the plan drawn,
    the scan's node clicked, its metrics beside it (the same values as the REST API's)."""
    outcome, _ = run_script("ui_metrics_script.py", [str(tmp_path), str(ROOT / "tests")], timeout=300)
    reported = [
        s["metrics"] for s in outcome["scans"] if "reactive-streams: elements emitted" in s["metrics"]
    ]
    # One scan a micro-batch, each within maxRecordsPerTrigger: three, or more where a batch was
    # planned before the publisher had sent its thousand (a loaded machine's runs)
    rows = [int(m["number of output rows"].replace(",", "")) for m in reported]
    assert sum(rows) == 3_000 and all(0 < r <= 1_000 for r in rows), outcome["scans"]
    emitted = [int(m["reactive-streams: elements emitted"].replace(",", "")) for m in reported]
    held = [int(m["reactive-streams: elements held"].replace(",", "")) for m in reported]
    assert emitted == sorted(emitted) and emitted[-1] == 3_000
    assert all(0 < h <= 2_000 for h in held)  # within the demand bound, 1,000 x (1 + prefetch 1)
    assert outcome["page_names"] == ["outstanding demand", "elements held", "elements emitted"]
    assert outcome["browser_before_click"] == []  # shown by the click, not in the page as sent
    shown = outcome["browser_after_click"]
    assert list(shown) == [
        "reactive-streams: outstanding demand",
        "reactive-streams: elements held",
        "reactive-streams: elements emitted",
    ]
    assert {k: v.replace(",", "") for k, v in shown.items()} == {
        k: v.replace(",", "") for k, v in outcome["last_scan"].items() if k in shown
    }
