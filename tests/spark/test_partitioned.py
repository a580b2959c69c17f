"""Reactive Streams where the data is (classic mode, ``local[2]``): `register_source`'s
partitions read in the executors' Python workers within Spark's read limit, offsets that resume
from the checkpoint, `register_sink`'s subscribers and `map_partitions`'s processors per task,
and failures that name their partition. (A multi-JVM cluster: test_cluster.py; Connect:
test_connect_partitioned.py.)"""

from __future__ import annotations

import json
import os
import re
import threading
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.errors import StreamingQueryException

import reactive_streams as rs
from reactive_streams import spark as rss

from ..conftest import TEST_JARS
from . import partitioned_kit as kit
from .kit import run_script

SCHEMA = "p int, offset long, pid int"
ERROR_LINE = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d ERROR ")
TIMEOUT = 120


@pytest.fixture(autouse=True)
def _kit_by_value() -> None:
    kit.by_value()


@pytest.fixture
def folder(tmp_path: Path) -> str:
    made = tmp_path / "records"
    made.mkdir()
    return str(made)


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def run_available_now(spark: Any, name: str, checkpoint: Path, **options: Any) -> tuple[list[Any], Any]:
    """Read source ``name`` with Trigger.AvailableNow into a memory table; its rows and the query."""
    reader = spark.readStream.format(name)
    for key, value in options.items():
        reader = reader.option(key, value)
    return kit.read_available_now(spark, reader, checkpoint, TIMEOUT)


def run_into_parquet(spark: Any, name: str, checkpoint: Path, output: Path) -> list[Any]:
    """Read source ``name`` with Trigger.AvailableNow into Parquet files; all the rows there, in
    the order of the batches that wrote them."""
    query = (
        spark.readStream.format(name)
        .load()
        .writeStream.format("parquet")
        .option("path", str(output))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(TIMEOUT), "the query did not end"
    return spark.read.parquet(str(output)).orderBy("p", "offset").collect()


def test_each_partition_is_read_in_a_worker_within_the_read_limit(
    spark_session: Any, folder: str, tmp_path: Path
) -> None:
    """Three partitions of 100 elements, 60 a trigger: every element once, made in a Python
    worker (not this process), each batch at most 60 split 20/20/20, and each partition's
    publisher asked for exactly its batch's elements, then cancelled (§3.5)."""
    name = unique("orders")
    rss.register_source(spark_session, name, kit.counting(folder), 3, SCHEMA, latest=lambda p: 100)
    rows, query = run_available_now(spark_session, name, tmp_path / "ck", maxRecordsPerTrigger=60)

    assert sorted((r.p, r.offset) for r in rows) == [(p, o) for p in range(3) for o in range(100)]
    assert {r.pid for r in rows}.isdisjoint({os.getpid()})  # the driver's Python made none
    sizes = [progress["numInputRows"] for progress in query.recentProgress if progress["numInputRows"]]
    assert sizes == [60, 60, 60, 60, 60]
    assert json.loads(query.lastProgress["sources"][0]["endOffset"]) == {"0": 100, "1": 100, "2": 100}

    demand = kit.records(folder, "demand")
    assert len(demand) == 15  # 5 batches x 3 partitions
    for subscription in demand:
        assert sum(subscription["requests"]) == 20 == subscription["emitted"]  # exactly the batch's
        assert subscription["cancelled"] and subscription["pid"] != os.getpid()
    assert sorted(d["start"] for d in demand if d["partition"] == 1) == [0, 20, 40, 60, 80]


def test_a_restart_resumes_each_partition_at_its_committed_offset(
    spark_session: Any, folder: str, tmp_path: Path
) -> None:
    """A bounded source that grows between two runs of one checkpoint: the second run reads
    exactly the new elements of each partition, from where the first stopped."""
    end = tmp_path / "end"
    end.write_text("50")
    name = unique("growing")

    def latest(partition: int) -> int:
        return int(Path(str(end)).read_text()) + partition

    rss.register_source(spark_session, name, kit.counting(folder), 2, SCHEMA, latest=latest)
    output = tmp_path / "parquet"
    first = run_into_parquet(spark_session, name, tmp_path / "ck", output)
    end.write_text("80")
    both = run_into_parquet(spark_session, name, tmp_path / "ck", output)

    assert [(r.p, r.offset) for r in first] == [(p, o) for p in range(2) for o in range(50 + p)]
    assert [(r.p, r.offset) for r in both] == [(p, o) for p in range(2) for o in range(80 + p)]  # once each
    starts = sorted((d["partition"], d["start"]) for d in kit.records(folder, "demand"))
    assert starts == [(0, 0), (0, 50), (1, 0), (1, 51)]  # the second run began at the committed offsets


def test_an_unbounded_source_admits_the_default_per_partition(
    spark_session: Any, folder: str, tmp_path: Path
) -> None:
    """No latest=, no maxRecordsPerTrigger: each batch admits DEFAULT_RECORDS_PER_PARTITION a
    partition; Trigger.AvailableNow is refused, naming latest=."""
    name = unique("endless")
    rss.register_source(spark_session, name, kit.counting(folder), 2, SCHEMA)
    table = unique("rows")
    query = (
        spark_session.readStream.format(name)
        .load()
        .writeStream.format("memory")
        .queryName(table)
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(once=True)
        .start()
    )
    assert query.awaitTermination(TIMEOUT)
    assert spark_session.table(table).count() == 2 * rss.DEFAULT_RECORDS_PER_PARTITION

    with pytest.raises(
        Exception, match=r"unbounded: Trigger.AvailableNow needs register_source\(\.\.\., latest=\)"
    ):
        run_available_now(spark_session, name, tmp_path / "ck2")


@pytest.mark.parametrize("kind", ["tuple", "dict", "row", "arrow"])
def test_elements_may_be_tuples_dicts_rows_or_arrow_batches(
    spark_session: Any, tmp_path: Path, kind: str
) -> None:
    from pyspark.sql import Row

    def factory(partition: int, start: int) -> Any:
        offsets = range(start, 10)
        if kind == "tuple":
            return rs.from_iterable([(partition, o, None) for o in offsets])
        if kind == "dict":
            return rs.from_iterable([{"offset": o, "p": partition, "pid": None} for o in offsets])
        if kind == "row":
            return rs.from_iterable([Row(p=partition, offset=o, pid=None) for o in offsets])
        return rs.from_iterable(
            [pa.RecordBatch.from_pydict({"p": [partition], "offset": [o], "pid": [None]}) for o in offsets]
        )

    name = unique(kind)
    rss.register_source(spark_session, name, factory, 2, SCHEMA, latest=lambda p: 10)
    rows, _ = run_available_now(spark_session, name, tmp_path / "ck")
    assert sorted((r.p, r.offset, r.pid) for r in rows) == [(p, o, None) for p in range(2) for o in range(10)]


@pytest.mark.parametrize(
    ("how", "message"),
    [
        (
            "raise",
            r"partition 0 of source '\w+' \(offsets 0 to 5\): the factory raised RuntimeError: no publisher",
        ),
        ("past-demand", r"partition 0 of source '\w+' \(offsets 0 to 5\): the publisher broke §1.1"),
        (
            "none",
            r"partition 0 of source '\w+' \(offsets 0 to 5\): the publisher broke §2.13: it emitted None",
        ),
        (
            "early",
            r"partition 0 of source '\w+' \(offsets 0 to 5\): the publisher completed after 3 of the 5",
        ),
        ("not-a-publisher", r"partition 0 of source '\w+' \(offsets 0 to 5\): the factory must return a "),
    ],
    ids=["raise", "past-demand", "none", "early", "not-a-publisher"],
)
def test_a_broken_partition_fails_the_query_naming_it(
    spark_session: Any, tmp_path: Path, how: str, message: str
) -> None:
    def factory(partition: int, start: int) -> Any:
        if how == "raise":
            raise RuntimeError("no publisher")
        if how == "not-a-publisher":
            return [1, 2]
        return kit.Breaking(how, start)

    name = unique("broken")
    # prefetch 4: the first request (2) is less than the batch (5), so an excess is seen before
    # take(5) has cancelled (after a cancel, a few more elements are allowed, §2.8)
    rss.register_source(spark_session, name, factory, 1, SCHEMA, latest=lambda p: 5, prefetch=4)
    with pytest.raises(StreamingQueryException, match=message):
        run_available_now(spark_session, name, tmp_path / "ck")
    assert not spark_session.streams.active


def test_a_sink_subscriber_runs_per_task_with_its_partition_and_batch(
    spark_session: Any, folder: str, tmp_path: Path
) -> None:
    """Rows reach a subscriber made in a worker for each (partition, batch); the sums add up,
    the batch ids are the query's; with batches=True an AsyncSubscriber gets Arrow batches and
    the task waits for its completion (its record is written after on_complete returned)."""
    source = unique("numbers")
    rss.register_source(
        spark_session,
        source,
        lambda p, s: rs.from_iterable([(p, o, 0) for o in range(s, 30)]),
        2,
        SCHEMA,
        latest=lambda p: 30,
    )
    for sink, factory in (
        (unique("audit"), lambda p, b: kit.Audit(folder, p, b)),
        (unique("slow"), lambda p, b: kit.SlowAudit(folder, p, b)),
    ):
        rss.register_sink(spark_session, sink, factory, batches=sink.startswith("slow"))
        query = (
            spark_session.readStream.format(source)
            .option("maxRecordsPerTrigger", 20)
            .load()
            .selectExpr("offset")
            .writeStream.format(sink)
            .option("checkpointLocation", str(tmp_path / sink))
            .trigger(availableNow=True)
            .start()
        )
        assert query.awaitTermination(TIMEOUT)
    audits = [r for r in kit.records(folder, "sink") if "sum" in r]
    slow = [r for r in kit.records(folder, "sink") if "sum" not in r]
    assert sum(r["count"] for r in audits) == sum(r["count"] for r in slow) == 60
    assert sum(r["sum"] for r in audits) == 2 * sum(range(30))
    assert {r["batch_id"] for r in audits} == {r["batch_id"] for r in slow} == {0, 1, 2}
    assert all(r["types"] == ["Row"] for r in audits if r["count"])
    assert {r["pid"] for r in audits + slow}.isdisjoint({os.getpid()})


@pytest.mark.parametrize(
    ("cancel", "message"),
    [
        (
            False,
            r"partition \d of sink '\w+', batch 0: the subscriber failed after \d+ elements: "
            r"ValueError: no row 5",
        ),
        (True, r"partition \d of sink '\w+', batch 0: the subscriber cancelled after \d+ elements"),
    ],
    ids=["raises", "cancels"],
)
def test_a_failing_sink_subscriber_fails_the_task_naming_it(
    spark_session: Any, tmp_path: Path, cancel: bool, message: str
) -> None:
    source, sink = unique("numbers"), unique("failing")
    rss.register_source(
        spark_session,
        source,
        lambda p, s: rs.from_iterable([(p, o, 0) for o in range(s, 30)]),
        1,
        SCHEMA,
        latest=lambda p: 30,
    )
    rss.register_sink(spark_session, sink, lambda p, b: kit.Failing(5, cancel))
    query = (
        spark_session.readStream.format(source)
        .load()
        .writeStream.format(sink)
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True)
        .start()
    )
    with pytest.raises(StreamingQueryException, match=message):
        query.awaitTermination(TIMEOUT)


@pytest.mark.timeout(660)  # a child process, given up to 600 s
def test_an_ordinary_stop_of_a_sink_query_logs_no_error_and_a_failure_still_does() -> None:
    """As the ``reactive-streams`` sink's stop (test_sink.py): stopping a query while its write
    tasks' subscribers take rows logs no ERROR; a subscriber that raises still fails the query
    with Spark's ERROR lines, and so does stopping a query on another Python data source."""
    outcome, stderr = run_script("partitioned_stop_script.py", TEST_JARS, timeout=600)

    def logged(phase: str) -> list[str]:
        text = stderr.split(f"PHASE {phase} BEGIN", 1)[1].split(f"PHASE {phase} END", 1)[0]
        return [line for line in text.splitlines() if ERROR_LINE.match(line)]

    assert outcome["stop"] == {"exception": "None", "batches": 0} and not logged("stop")
    assert "boom from a partitioned subscriber" in outcome["failure"]
    assert any("is aborting" in line for line in logged("failure")), logged("failure")
    assert outcome["other"]["exception"] == "None"
    assert any("is aborting" in line for line in logged("other")), logged("other")


def test_a_batch_write_hands_each_partition_to_a_subscriber(spark_session: Any, folder: str) -> None:
    sink = unique("audit")
    rss.register_sink(spark_session, sink, lambda p, b: kit.Audit(folder, p, b))
    spark_session.range(0, 1000, numPartitions=4).write.format(sink).mode("append").save()
    audits = kit.records(folder, "sink")
    assert sorted(r["partition"] for r in audits) == [0, 1, 2, 3]
    assert {r["batch_id"] for r in audits} == {None}
    assert sum(r["sum"] for r in audits) == sum(range(1000))


def test_the_progress_says_how_far_each_partition_is_behind_latest(
    spark_session: Any, tmp_path: Path
) -> None:
    """Two partitions of 1,000, 100 elements a batch: after the first batch each partition is 950
    behind its ``latest`` (min, avg and max alike), after the last none."""
    name = f"behind_{uuid.uuid4().hex[:8]}"
    rss.register_source(spark_session, name, kit.numbered, 2, "p int, offset long", latest=lambda p: 1_000)
    query = kit.read_to_the_end(spark_session, name, str(tmp_path / "ck"), 100, TIMEOUT)
    reports = [r for r in query.recentProgress if r["numInputRows"]]
    assert [r["numInputRows"] for r in reports] == [100] * 20
    first, last = rss.source_progress(reports[0])[0], rss.source_progress(query)[0]
    assert first["endOffset"] == {"0": 50, "1": 50} and first["latestOffset"] == {"0": 1_000, "1": 1_000}
    assert (
        first["minOffsetsBehindLatest"],
        first["avgOffsetsBehindLatest"],
        first["maxOffsetsBehindLatest"],
    ) == (
        950,
        950.0,
        950,
    )
    assert last["endOffset"] == {"0": 1_000, "1": 1_000} and last["maxOffsetsBehindLatest"] == 0
    with pytest.raises(TypeError, match="a StreamingQuery or a progress report, got SparkSession"):
        rss.source_progress(spark_session)


def test_map_partitions_runs_a_processor_per_partition(spark_session: Any) -> None:
    df = spark_session.range(0, 10_000, numPartitions=4)
    doubled = rss.map_partitions(df, kit.doubling, "id long, pid int").collect()
    assert sorted(r.id for r in doubled) == [2 * i for i in range(10_000)]
    assert {r.pid for r in doubled}.isdisjoint({os.getpid()})

    sizes = rss.map_partitions(df, kit.batch_sizes, "p int, rows long", batches=True).collect()
    assert sum(r.rows for r in sizes) == 10_000 and {r.p for r in sizes} == {0, 1, 2, 3}


def test_a_processor_gets_the_rows_collect_gives(spark_session: Any) -> None:
    """Without asking the session for the input's schema (a pipeline's query function may not),
    the task reads its rows by their Arrow schema: the same values and names as ``collect()``."""
    df = spark_session.sql(
        "SELECT 1L AS id, TIMESTAMP'2024-01-02 03:04:05.5' AS ts, TIMESTAMP_NTZ'2024-01-02 03:04:05' AS ntz, "
        "DATE'2024-01-02' AS day, BINARY('ab') AS b, NAMED_STRUCT('x', 1, 'y', 'z') AS s, "
        "ARRAY(1, NULL) AS a, MAP('k', 1.5D) AS m, 1.25BD AS d, CAST(NULL AS STRING) AS none"
    )
    seen = rss.map_partitions(df, kit.described, "values string, names string").collect()
    row = df.collect()[0]
    assert [(r.values, r.names) for r in seen] == [(kit.values_repr(row), repr(row.__fields__))]


def test_a_failing_processor_fails_the_job_naming_its_partition(spark_session: Any) -> None:
    df = spark_session.range(0, 100, numPartitions=1)
    with pytest.raises(
        Exception, match=r"partition 0 of map_partitions: ValueError after \d+ elements: seven"
    ):
        rss.map_partitions(df, kit.failing_processor, "id long").collect()
    with pytest.raises(Exception, match=r"partition 0 of map_partitions: processor_factory must return"):
        rss.map_partitions(df, lambda p: rs.from_iterable([1]), "id long").collect()


def test_bad_registrations_are_refused_naming_the_argument(spark_session: Any) -> None:
    lock = threading.Lock()

    def holds_a_lock(partition: int, start: int) -> Any:
        with lock:
            return rs.from_iterable([])

    factory = kit.counting("/nowhere")
    cases: list[tuple[Any, str]] = [
        (lambda: rss.register_source(spark_session, "", factory, 1, SCHEMA), "name must be a non-empty str"),
        (lambda: rss.register_source(spark_session, "x", 5, 1, SCHEMA), "factory must be callable"),
        (
            lambda: rss.register_source(spark_session, "x", factory, 0, SCHEMA),
            "partitions must be an int >= 1, got 0",
        ),
        (
            lambda: rss.register_source(spark_session, "x", factory, 1, 7),
            "schema must be a StructType or a DDL",
        ),
        (
            lambda: rss.register_source(spark_session, "x", factory, 1, SCHEMA, latest=3),
            "latest must be callable",
        ),
        (
            lambda: rss.register_source(spark_session, "x", factory, 1, SCHEMA, prefetch=0),
            "prefetch must be an int >= 3",
        ),
        (
            lambda: rss.register_source(spark_session, "x", holds_a_lock, 1, SCHEMA),
            "factory must be picklable",
        ),
        (lambda: rss.register_sink(spark_session, "x", None), "factory must be callable"),
        (lambda: rss.register_sink(spark_session, "x", holds_a_lock), "factory must be picklable"),
        (
            lambda: rss.map_partitions(spark_session.range(1), "no", "id long"),
            "processor_factory must be callable",
        ),
        (
            lambda: rss.map_partitions(spark_session.range(1), kit.doubling, "id long", prefetch=-1),
            "prefetch must be",
        ),
    ]
    for call, message in cases:
        with pytest.raises((TypeError, ValueError), match=message):
            call()


def test_the_read_limit_is_shared_fairly_and_never_beyond_what_a_partition_has() -> None:
    from reactive_streams.spark.partitioned._source import split_limit

    assert split_limit(100, [float("inf")] * 3) == [34, 33, 33]
    assert split_limit(11, [float("inf")] * 4) == [3, 3, 3, 2]  # one each of the remainder
    assert split_limit(100, [10, float("inf"), float("inf")]) == [10, 45, 45]
    assert split_limit(100, [10, 20, 30]) == [10, 20, 30]
    assert split_limit(7, [0, 5, 5]) == [0, 4, 3]
    assert split_limit(0, [5, 5]) == [0, 0]


@pytest.mark.parametrize("prefetch", [3, 4, 100, 8_192])
def test_a_partition_read_holds_at_most_prefetch_and_asks_for_exactly_its_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefetch: int
) -> None:
    """In-process (as a worker runs it): 10,000 elements read and converted, never more than
    ``prefetch`` held at once (RS_PARTITION_STATS), exactly 10,000 requested, then a cancel."""
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import LongType, StructField, StructType

    from reactive_streams.spark.partitioned._read import STATS_VARIABLE, read_partition

    stats = tmp_path / "stats.jsonl"
    monkeypatch.setenv(STATS_VARIABLE, str(stats))
    folder = tmp_path / "records"
    folder.mkdir()
    schema = StructType([StructField("id", LongType())])
    source = kit.Recorded(rs.from_iterable(range(1 << 40)), str(folder), 0, 0)
    batches = list(read_partition("p0", lambda: source, 10_000, 0, schema, to_arrow_schema(schema), prefetch))

    assert sum(b.num_rows for b in batches) == 10_000
    assert batches[-1].column(0)[-1].as_py() == 9_999
    read = json.loads(stats.read_text())
    assert read["read"] == 10_000 and 0 < read["held"] <= prefetch
    (demand,) = kit.records(folder, "demand")
    assert sum(demand["requests"]) == demand["emitted"] == 10_000 and demand["cancelled"]


def test_the_sink_progress_says_what_the_tasks_handed_over_and_how_long_their_subscribers_held_them(
    spark_session: Any, tmp_path: Path
) -> None:
    """Two partitions of 30, 20 rows a batch, into subscribers that hold their demand 300 ms,
    then take 20 ms a row: each task of each batch waited at least 300 + 10 x 20 ms for its
    subscriber, and `sink_progress` says so beside the rows handed over, summed over the three
    batches' commits."""
    source, sink = unique("numbers"), unique("held")
    kit.held_sink_figures(spark_session, source, sink, str(tmp_path / "ck"), TIMEOUT)

    into_noop = kit.read_to_the_end(spark_session, source, str(tmp_path / "noop"), 20, TIMEOUT)
    assert rss.sink_progress(into_noop) is None  # no partitioned sink: no figures
    with pytest.raises(TypeError, match=r"needs a StreamingQuery, got pyspark\.sql\.session\.SparkSession"):
        rss.sink_progress(spark_session)
