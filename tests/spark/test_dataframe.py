"""DataFrames as publishers (rows and Arrow batches, partition by partition on demand), and
finite publishers as DataFrames (in bounded chunks), in the session's local Spark."""

from __future__ import annotations

import datetime
import decimal
import threading
import time
from typing import Any

import pytest

import reactive_streams as rs
from reactive_streams import spark as rss

from ..conftest import TEST_JARS
from ..support import WAIT, BatchProbe, Boom, Probe, Spy
from .kit import run_script


@pytest.fixture(scope="module")
def spark(spark_session: Any) -> Any:
    return spark_session


def jobs_of(spark: Any, probe: Probe) -> list[str]:
    """The status of each Spark job of the probe's pass (its job group), once Spark's listener
    bus has caught up: the status tracker learns of jobs from it, asynchronously."""
    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty()
    group = probe.subscription.job_group  # type: ignore[union-attr]
    if group is None:
        return []
    tracker = spark.sparkContext.statusTracker()
    return [str(getattr(tracker.getJobInfo(job), "status", "?")) for job in tracker.getJobIdsForGroup(group)]


def wait_for(condition: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def test_rows_arrive_as_collect_gives_them(spark: Any) -> None:
    df = spark.sql(
        """SELECT id, id * 1.5 AS x, CAST(id AS STRING) AS s, id % 2 = 0 AS b,
                  DATE '2024-01-02' AS d, TIMESTAMP '2024-01-02 03:04:05' AS ts,
                  CAST(id AS DECIMAL(10, 2)) AS dec, CAST('ab' AS BINARY) AS bin,
                  array(id, id + 1) AS arr, map('k', id) AS m, named_struct('a', id, 'b', 'z') AS st,
                  IF(id = 3, NULL, id) AS maybe
           FROM range(0, 10, 1, 3)"""
    )
    rows = list(rss.publisher_from_dataframe(df).iterate())
    assert rows == df.collect()
    row = rows[1]
    assert row.s == "1" and row.d == datetime.date(2024, 1, 2) and row.dec == decimal.Decimal("1.00")
    assert row.ts == datetime.datetime(2024, 1, 2, 3, 4, 5) and row.bin == bytearray(b"ab")
    assert row.m == {"k": 1} and row.st.a == 1 and row.st.b == "z" and rows[3].maybe is None
    assert len({type(r) for r in rows}) == 1  # one Row class for the names, not one per batch


def test_partitions_are_computed_only_as_demand_requires(spark: Any) -> None:
    df = spark.range(0, 400, numPartitions=4)
    probe = Probe(0)
    rss.publisher_from_dataframe(df, prefetch_partitions=0).subscribe(probe)
    probe.await_subscribed()
    assert len(jobs_of(spark, probe)) == 0  # nothing before the first request
    probe.request(1)
    probe.await_items(1)
    assert len(jobs_of(spark, probe)) == 1
    probe.request(99)  # the rest of the first partition: no new job
    probe.await_items(100)
    assert len(jobs_of(spark, probe)) == 1
    probe.request(1)
    probe.await_items(101)
    assert len(jobs_of(spark, probe)) == 2
    probe.cancel()


@pytest.mark.parametrize("prefetch", [0, 2])
def test_prefetch_computes_at_most_that_many_partitions_ahead(spark: Any, prefetch: int) -> None:
    # Walk the DataFrame a partition at a time. At each step the partition being read and
    # `prefetch` after it must be computed. Once they are, the rest of the partition is read
    # (rows only, no job) and a Spark job of the test's own runs, before the pass's jobs are
    # counted: a job too many, which its fetcher would start right after the last allowed one,
    # has by then reached Spark's scheduler, and is counted.
    partitions, size = 7, 40
    df = spark.range(0, partitions * size, numPartitions=partitions)
    probe = Probe(0)
    rss.publisher_from_dataframe(df, prefetch_partitions=prefetch).subscribe(probe)
    probe.await_subscribed()
    counted: list[int] = []
    for current in range(partitions):
        allowed = min(partitions, current + 1 + prefetch)
        probe.request(1)  # the first row of partition `current`
        probe.await_items(current * size + 1)
        wait_for(
            lambda allowed=allowed: jobs_of(spark, probe).count("SUCCEEDED") >= allowed,
            f"{allowed} partitions computed",
        )
        probe.request(size - 1)
        probe.await_items((current + 1) * size)
        spark.sparkContext.parallelize([0], 1).count()  # through the scheduler after any queued fetch
        counted.append(len(jobs_of(spark, probe)))
        expected = [min(partitions, c + 1 + prefetch) for c in range(current + 1)]
        assert counted == expected, f"Spark jobs after each partition read: {counted}, at most {expected}"
    probe.request(1)
    probe.await_done()
    assert probe.completed and [r.id for r in probe.items] == list(range(partitions * size))
    probe.assert_rules_held()


def test_cancel_stops_further_spark_jobs(spark: Any) -> None:
    df = spark.range(0, 1000, numPartitions=10)
    probe = Probe(150)
    rss.publisher_from_dataframe(df, prefetch_partitions=0).subscribe(probe.relay())
    probe.await_items(150)
    assert len(jobs_of(spark, probe)) == 2
    probe.cancel()
    probe.request(1000)  # §3.6
    probe.await_released()  # the pass is over: no job can start now
    assert len(jobs_of(spark, probe)) == 2 and len(probe.items) == 150


def test_completion_and_exact_demand(spark: Any) -> None:
    probe = Probe(0)
    rss.publisher_from_dataframe(spark.range(0, 50, numPartitions=3)).subscribe(probe)
    probe.await_subscribed()
    for n in (7, 13, 30):
        probe.request(n)
        probe.await_items(probe.requested)
        assert len(probe.items) == probe.requested
    probe.request(1)
    probe.await_done()
    assert probe.completed and [r.id for r in probe.items] == list(range(50))
    probe.assert_rules_held()


def test_a_subscriber_that_takes_lists_gets_them_within_demand(spark: Any) -> None:
    df = spark.range(0, 5_000, 1, 4)
    probe = BatchProbe(700)
    rss.publisher_from_dataframe(df).subscribe(probe)
    probe.await_items(700)
    time.sleep(0.2)  # nothing beyond the demand comes (§1.1)
    assert len(probe.items) == 700 and probe.batches and sum(probe.batches) == 700
    while not probe.done.is_set():
        probe.request(1_234)
        probe.await_items(min(5_000, len(probe.items) + 1))
    assert [row.id for row in probe.items] == list(range(5_000)) and probe.completed
    probe.assert_rules_held()


def test_iterate_gets_rows_unmade_and_a_close_inside_the_loop_stops_them(spark: Any) -> None:
    df = spark.range(0, 20_000, 1, 2).selectExpr("id", "CAST(id AS STRING) AS s")
    kinds: dict[str, int] = {}

    class Lazy(Probe):
        lazy_batches = True  # as iterate's subscriber says

        def on_next_batch(self, items: Any) -> None:
            kinds[type(items).__name__] = kinds.get(type(items).__name__, 0) + len(items)
            for item in items:
                self.on_next(item)

    probe = Lazy(rs.MAX_DEMAND)
    rss.publisher_from_dataframe(df).subscribe(probe)
    probe.await_done()
    assert [(row.id, row.s) for row in probe.items] == [(i, str(i)) for i in range(20_000)]
    assert kinds == {"LazyChunk": 20_000}  # each row made as it was reached, none in a list
    seen = []
    with rs.iterate(rss.publisher_from_dataframe(df), prefetch=4_096) as rows:
        for row in rows:
            seen.append(row.id)
            if len(seen) == 5:
                rows.close()  # the rest of the 4,096 rows handed over is not handed out
    assert seen == [0, 1, 2, 3, 4]


def test_a_pass_keeps_one_thread_across_requests_and_ends_it_with_the_pass(spark: Any) -> None:
    def pass_threads() -> set[int | None]:
        return {thread.ident for thread in threading.enumerate() if thread.name == "rs-dataframe"}

    df = spark.range(0, 3_000, 1, 3)
    before = pass_threads()  # another test's pass may linger a while: not this one's
    seen: set[int | None] = set()
    ids = []
    for row in rs.iterate(rss.publisher_from_dataframe(df), prefetch=8):  # 500 requests of 6
        ids.append(row.id)
        seen |= pass_threads() - before
    assert ids == list(range(3_000))
    assert len(seen) == 1  # one thread, not one per request
    wait_for(lambda: not pass_threads() & seen, "the pass's thread to end with the pass")


def test_request_zero_is_a_value_error(spark: Any) -> None:  # §3.9
    probe = Probe(0)
    rss.publisher_from_dataframe(spark.range(10)).subscribe(probe)
    probe.await_subscribed()
    probe.request(0)
    probe.await_done()
    assert isinstance(probe.error, rs.IllegalDemandError)


def test_a_failing_spark_job_is_signalled_as_jvm_error(spark: Any) -> None:
    df = spark.sql("SELECT IF(id = 5, raise_error('boom in spark'), id) AS v FROM range(10)")
    probe = Probe(rs.MAX_DEMAND)
    rss.publisher_from_dataframe(df).subscribe(probe)
    probe.await_done()
    assert isinstance(probe.error, rs.JvmError) and "boom in spark" in str(probe.error)
    assert "\tat org.apache.spark" in probe.error.java_stack


def test_arrow_batches_are_bounded_and_cover_every_row(spark: Any) -> None:
    df = spark.range(0, 2500, numPartitions=2).selectExpr("id", "id * 2 AS twice")
    batches = list(rss.arrow_batches_from_dataframe(df, max_records_per_batch=400).iterate())
    assert all(b.num_rows <= 400 for b in batches) and sum(b.num_rows for b in batches) == 2500
    assert [v for b in batches for v in b.column("twice").to_pylist()] == [2 * i for i in range(2500)]


def test_bad_arguments(spark: Any) -> None:
    with pytest.raises(ValueError, match="prefetch_partitions"):
        rss.publisher_from_dataframe(spark.range(1), prefetch_partitions=-1)
    with pytest.raises(
        TypeError, match=r"^publisher_from_dataframe\(\) expects a pyspark.sql.DataFrame, got object <"
    ):
        rss.publisher_from_dataframe(object())  # type: ignore[arg-type]


def test_what_is_not_a_dataframe_is_named_and_not_taken_for_spark_connect() -> None:
    for convert in (rss.publisher_from_dataframe, rss.arrow_batches_from_dataframe):
        with pytest.raises(TypeError) as refused:
            convert(None)  # type: ignore[arg-type]
        assert str(refused.value) == f"{convert.__name__}() expects a pyspark.sql.DataFrame, got None"
        assert "Connect" not in str(refused.value)


# Publisher -> DataFrame.


def test_dataframe_from_a_python_publisher(spark: Any) -> None:
    elements = [(i, f"n{i}", i * 0.5) for i in range(2500)]
    df = rss.dataframe_from_publisher(spark, rs.from_iterable(elements), "id long, name string, x double")
    assert [tuple(r) for r in df.orderBy("id").collect()] == elements


def test_elements_may_be_rows_dicts_lists_or_scalars(spark: Any) -> None:
    from pyspark.sql import Row

    mixed = [Row(a=1, b="x"), {"b": "y", "a": 2}, [3, "z"]]
    df = rss.dataframe_from_publisher(spark, rs.from_iterable(mixed), "a int, b string")
    assert [tuple(r) for r in df.collect()] == [(1, "x"), (2, "y"), (3, "z")]
    single = rss.dataframe_from_publisher(spark, rs.from_iterable(range(5)), "v long")
    assert [r.v for r in single.collect()] == list(range(5))


def test_record_batches_go_as_they_are_and_are_cast_to_the_schemas_types(spark: Any) -> None:
    import pyarrow as pa

    ids = pa.array(range(3000), pa.int64())
    exact = [
        pa.record_batch([ids.slice(i, 1000), ids.slice(i, 1000).cast(pa.string())], names=["id", "s"])
        for i in (0, 1000)
    ]
    narrower = pa.record_batch(
        [ids.slice(2000).cast(pa.int32()), ids.slice(2000).cast(pa.string())], names=["id", "s"]
    )
    df = rss.dataframe_from_publisher(
        spark, rs.from_iterable([*exact, narrower]), "id long, s string", chunk_size=2
    )
    assert [tuple(r) for r in df.orderBy("id").collect()] == [(i, str(i)) for i in range(3000)]


@pytest.mark.parametrize(
    ("elements", "message"),
    [
        ("other names", r"columns \(id, t\), the schema \(id, s\)"),
        ("no cast", "does not fit the schema"),
        ("mixed", "rows or record batches, not both"),
    ],
)
def test_record_batches_that_do_not_fit_raise_type_error_and_cancel(
    spark: Any, elements: str, message: str
) -> None:
    import pyarrow as pa

    good = pa.record_batch([pa.array([1], pa.int64()), pa.array(["a"])], names=["id", "s"])
    bad: Any = {
        "other names": pa.record_batch([pa.array([1], pa.int64()), pa.array(["a"])], names=["id", "t"]),
        "no cast": pa.record_batch([pa.array([1], pa.int64()), pa.array([[1, 2]])], names=["id", "s"]),
        "mixed": (2, "b"),
    }[elements]
    spy = Spy(rs.from_iterable([good, bad] + [good] * 100))  # more than is asked for: a cancel ends it
    with pytest.raises(TypeError, match=message):
        rss.dataframe_from_publisher(spark, spy, "id long, s string", chunk_size=2)
    assert spy.cancels == 1


def test_the_publisher_is_consumed_in_bounded_chunks(spark: Any) -> None:
    spy = Spy(rs.from_iterable((i,) for i in range(10_000)))
    df = rss.dataframe_from_publisher(spark, spy, "v long", chunk_size=1000)
    assert df.count() == 10_000
    assert max(spy.requests) <= 2000  # prefetch 2 chunks of 1000: never more outstanding


def test_a_jvm_publisher_becomes_a_dataframe(spark: Any) -> None:
    flux = spark.sparkContext._jvm.reactor.core.publisher.Flux.range(0, 100)
    df = rss.dataframe_from_publisher(spark, flux, "v int")
    assert sorted(r.v for r in df.collect()) == list(range(100))


def test_the_publishers_error_is_raised_as_it_is(spark: Any) -> None:
    def failing() -> Any:
        yield (1,)
        raise Boom("publisher failed mid-stream")

    with pytest.raises(Boom, match="mid-stream"):
        rss.dataframe_from_publisher(spark, rs.from_iterable(failing()), "v long", chunk_size=1)


def test_an_element_that_does_not_fit_raises_type_error_and_cancels(spark: Any) -> None:
    spy = Spy(rs.from_iterable([(1, "a"), "not a row", (3, "c")] + [(i, "x") for i in range(10**6)]))
    with pytest.raises(TypeError, match="tuple, list, Row or dict"):
        rss.dataframe_from_publisher(spark, spy, "a long, b string", chunk_size=2)
    assert spy.cancels == 1


def test_what_is_not_a_publisher_is_refused_saying_what_to_do(spark: Any) -> None:
    with pytest.raises(TypeError) as refused:
        rss.dataframe_from_publisher(spark, [1, 2], "v long")
    assert str(refused.value) == (
        "dataframe_from_publisher(): publisher must be a Publisher: a reactive_streams.Publisher, or a JVM "
        "org.reactivestreams.Publisher or Flow.Publisher; got list [1, 2]; for the elements of a list or "
        "another iterable, pass rs.from_iterable([...])"
    )
    with pytest.raises(TypeError, match=r"Flow\.Publisher; got py4j\.java_gateway\.JavaObject"):
        rss.dataframe_from_publisher(spark, spark._jvm.java.lang.Object(), "v long")  # not a publisher
    with pytest.raises(
        TypeError, match=r"^dataframe_from_publisher\(\) needs a pyspark.sql.SparkSession, got None$"
    ):
        rss.dataframe_from_publisher(None, rs.from_iterable([1]), "v long")


def test_bad_schema_and_chunk_size(spark: Any) -> None:
    with pytest.raises(TypeError, match="schema"):
        rss.dataframe_from_publisher(spark, rs.from_iterable([]), 42)
    with pytest.raises(ValueError, match="chunk_size"):
        rss.dataframe_from_publisher(spark, rs.from_iterable([]), "v long", chunk_size=0)


@pytest.mark.timeout(660)  # a child process, given up to 600 s
def test_the_rows_live_in_the_block_manager_never_in_tasks() -> None:
    """1.5 million rows: Spark warns that PySpark's own createDataFrame(pyarrow.Table) ships a
    task of very large size, and never for dataframe_from_publisher, whose rows are blocks."""
    outcome, stderr = run_script("dataframe_blocks_script.py", TEST_JARS, timeout=600)

    def warned(phase: str) -> list[str]:
        text = stderr.split(f"PHASE {phase} BEGIN", 1)[1].split(f"PHASE {phase} END", 1)[0]
        return [line for line in text.splitlines() if "task of very large size" in line]

    assert outcome["count"] == outcome["anchor"] == 1_500_000
    assert outcome["sum"] == 1_500_000 * 1_499_999 // 2
    assert not warned("publisher") and warned("pyspark")  # the anchor shows the warning is seen
    # One RDD of blocks, a block per partition, holding about the rows' Arrow size
    ((blocks, memory, disk),) = outcome["storage"]
    assert blocks == outcome["partitions"] >= 2 and memory + disk > 30_000_000


def test_a_failing_publisher_leaves_no_block_behind(spark: Any) -> None:
    pad = "x" * 1000

    def failing() -> Any:
        yield from ((i, pad) for i in range(50_000))  # 50 MB: a block of 32 MB is stored first
        raise Boom("after the rows")

    def stored() -> dict[int, list[int]]:
        chunks = spark._jvm.io.github.rspy.spark.dataframe.ArrowChunks
        return {
            int(rdd_id): list(chunks.storedBlocks(int(rdd_id)))
            for rdd_id, rdd in spark.sparkContext._jsc.getPersistentRDDs().items()
            if rdd.rdd().getClass().getSimpleName() == "StoredBatches"
        }

    before = stored()
    with pytest.raises(Boom, match="after the rows"):
        rss.dataframe_from_publisher(
            spark, rs.from_iterable(failing()), "v long, pad string", chunk_size=5_000
        )
    assert set(stored()) <= set(before)  # its RDD unpersisted, its blocks removed (others may go too)


def test_the_jvm_collector_refuses_what_is_not_an_ipc_message_and_keeps_no_block(spark: Any) -> None:
    # ArrowChunks.collect is public: a Java caller's publisher of anything but IPC messages is
    # refused, naming what it got, and cancelled.
    spy = Spy(rs.from_iterable(range(100)))
    chunks = spark._jvm.io.github.rspy.spark.dataframe.ArrowChunks()
    with pytest.raises(
        Exception, match=r"takes Arrow IPC record batch messages \(byte\[\]\), got java.lang.Integer"
    ):
        chunks.collect(rss.bridge(spark).to_jvm(spy))
    assert spy.cancels == 1 and chunks.size() == 0
    assert chunks.storedBlocks(chunks.rddId())[0] == 0  # no block kept


def test_a_value_its_column_cannot_hold_names_the_row_and_the_column(spark: Any) -> None:
    # Tuples in the wrong column order said only "ArrowInvalid: Could not convert 'name-5' with
    # type str: tried to convert to int64": now the row (its index in the stream, and the row)
    # and the column (its name and type), as the bridge's schema= error does.
    rows = [(i, f"name-{i}") for i in range(5)] + [("name-5", 5)] + [(i, "x") for i in range(6, 10**6)]
    spy = Spy(rs.from_iterable(rows))
    with pytest.raises(TypeError) as refused:
        rss.dataframe_from_publisher(spark, spy, "id long, name string", chunk_size=4)
    assert str(refused.value) == (
        "row 5 ('name-5', 5), column 'id' (bigint): a str ('name-5'), which does not fit: "
        "Could not convert 'name-5' with type str: tried to convert to int64"
    )
    assert isinstance(refused.value, rs.ReactiveStreamsError) and isinstance(refused.value, ValueError)
    assert spy.cancels == 1


def test_a_dict_row_that_does_not_fit_is_named_too(spark: Any) -> None:
    rows = [{"id": 1, "when": "yesterday"}]
    with pytest.raises(
        TypeError, match=r"^row 0 \{'id': 1, 'when': 'yesterday'\}, column 'when' \(date\): a str"
    ):
        rss.dataframe_from_publisher(spark, rs.from_iterable(rows), "id long, when date")


def test_an_older_pysparks_arrow_schema_gets_the_sessions_zone_as_a_newer_one_gives_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Connect client before PySpark 4.2 has `to_arrow_schema(schema, timestamp_utc=True)`, not
    `timezone=`: its timestamps, nested ones too, are re-zoned to the session's zone, which is the
    schema PySpark 4.3 gives. (The real 4.1 client runs in tests/deploy/test_thin_client.py.)"""
    import pyarrow
    import pyspark.sql.pandas.types as pandas_types
    from pyspark.sql.types import ArrayType, StructField, StructType, TimestampNTZType, TimestampType

    from reactive_streams.spark import _dataframe

    schema = StructType(
        [
            StructField("t", TimestampType()),
            StructField("n", TimestampNTZType()),
            StructField("s", StructType([StructField("a", TimestampType())])),
            StructField("l", ArrayType(TimestampType())),
        ]
    )
    newer = pandas_types.to_arrow_schema(schema, timezone="Europe/Paris")
    real = pandas_types.to_arrow_schema

    def before_4_2(schema: Any, error_on_duplicated_field_names_in_struct: bool = False) -> Any:
        made = real(schema, timezone="UTC")  # what timestamp_utc=True gave
        assert made.field("t").type == pyarrow.timestamp("us", tz="UTC")
        return made

    monkeypatch.setattr(pandas_types, "to_arrow_schema", before_4_2)
    assert _dataframe._arrow_schema(schema, "Europe/Paris") == newer
    assert newer.field("n").type == pyarrow.timestamp("us")  # no zone stays none
    assert newer.field("s").type.field("a").type.tz == "Europe/Paris"
