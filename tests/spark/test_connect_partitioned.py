"""Reactive Streams where the data is, over Spark Connect: the same `register_source`,
`register_sink` and `map_partitions` as in classic mode (test_partitioned.py), registered from a
Connect client and run in the server's Python workers, none in this process."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import StreamingQueryException

import reactive_streams as rs
from reactive_streams import spark as rss

from . import partitioned_kit as kit

SCHEMA = "p int, offset long, pid int"
TIMEOUT = 180


@pytest.fixture(scope="module", autouse=True)
def _kit_by_value() -> None:
    kit.by_value()


def test_a_processor_gets_the_rows_collect_gives_over_connect(connect: Any) -> None:
    """As in classic mode (test_partitioned.py), with no call for the input's schema."""
    df = connect.sql(
        "SELECT 1L AS id, TIMESTAMP'2024-01-02 03:04:05.5' AS ts, TIMESTAMP_NTZ'2024-01-02 03:04:05' AS ntz, "
        "BINARY('ab') AS b, NAMED_STRUCT('x', 1, 'y', 'z') AS s, MAP('k', ARRAY(1.5D)) AS m, 1.25BD AS d"
    )
    seen = rss.map_partitions(df, kit.described, "values string, names string").collect()
    row = df.collect()[0]
    assert [(r.values, r.names) for r in seen] == [(kit.values_repr(row), repr(row.__fields__))]


def test_the_lag_behind_latest_over_connect(connect: Any, tmp_path: Path) -> None:
    """As in classic mode (test_partitioned.py): the client's progress has the offsets, and
    `source_progress` the lag."""
    name = f"behind_{uuid.uuid4().hex[:8]}"
    rss.register_source(connect, name, kit.numbered, 2, "p int, offset long", latest=lambda p: 300)
    query = kit.read_to_the_end(connect, name, str(tmp_path / "ck"), 100, TIMEOUT)
    reports = [r for r in query.recentProgress if r.numInputRows]
    lags = [rss.source_progress(r)[0]["maxOffsetsBehindLatest"] for r in reports]
    assert lags == [250, 200, 150, 100, 50, 0]


def test_a_source_through_a_processor_into_a_sink_over_connect(connect: Any, tmp_path: Path) -> None:
    """Two partitions of 40, 25 a trigger, each row doubled by a processor and handed to a
    subscriber per task: every element once, made, processed and delivered outside this process."""
    folder = tmp_path / "records"
    folder.mkdir()
    source, sink = f"orders_{uuid.uuid4().hex[:8]}", f"audit_{uuid.uuid4().hex[:8]}"
    rss.register_source(connect, source, kit.counting(str(folder)), 2, SCHEMA, latest=lambda p: 40)
    records = str(folder)
    rss.register_sink(connect, sink, lambda p, b: kit.Audit(records, p, b))
    stream = connect.readStream.format(source).option("maxRecordsPerTrigger", 25).load().selectExpr("offset")
    doubled = rss.map_partitions(stream, kit.doubling, "id long, pid int")
    query = (
        doubled.writeStream.format(sink)
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(TIMEOUT)

    audits = kit.records(folder, "sink")
    assert sum(r["count"] for r in audits) == 80
    assert sum(r["sum"] for r in audits) == 2 * 2 * sum(range(40))  # doubled, two partitions
    assert {r["batch_id"] for r in audits} == {0, 1, 2, 3}
    demand = kit.records(folder, "demand")
    assert sum(sum(d["requests"]) for d in demand) == 80  # exactly the batches' elements
    assert {r["pid"] for r in audits + demand}.isdisjoint({os.getpid()})


def test_the_sink_progress_over_connect(connect: Any, tmp_path: Path) -> None:
    """As in classic mode (test_partitioned.py): the figures the server's commits wrote, read
    by the client through the plugin's ``sink_progress`` op; a query id that is not one is refused
    by the server, naming it."""
    source, sink = f"numbers_{uuid.uuid4().hex[:8]}", f"held_{uuid.uuid4().hex[:8]}"
    kit.held_sink_figures(connect, source, sink, str(tmp_path / "ck"), TIMEOUT)

    into_noop = kit.read_to_the_end(connect, source, str(tmp_path / "noop"), 20, TIMEOUT)
    assert rss.sink_progress(into_noop) is None
    from reactive_streams.spark._connect._streaming import sink_figures

    with pytest.raises(
        rs.ReactiveStreamsError, match=r"a query id is a UUID in its canonical form, got '\.\./etc'"
    ):
        sink_figures(connect, "../etc")


def test_a_failing_factory_fails_the_query_naming_its_partition_over_connect(
    connect: Any, tmp_path: Path
) -> None:
    def factory(partition: int, start: int) -> Any:
        if partition == 1:
            raise RuntimeError("partition one is down")
        return rs.from_iterable([(partition, o, 0) for o in range(start, 5)])

    source = f"broken_{uuid.uuid4().hex[:8]}"
    rss.register_source(connect, source, factory, 2, SCHEMA, latest=lambda p: 5)
    query = (
        connect.readStream.format(source)
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True)
        .start()
    )
    with pytest.raises(
        StreamingQueryException,
        match=r"partition 1 of source '\w+' \(offsets 0 to 5\): "
        r"the factory raised RuntimeError: partition one is down",
    ):
        query.awaitTermination(TIMEOUT)


def test_a_restart_over_connect_resumes_at_the_committed_offsets(connect: Any, tmp_path: Path) -> None:
    """Two runs of one checkpoint from a Connect client, the source grown between them: the
    Parquet files hold every element once, the second run having begun where the first stopped."""
    end = tmp_path / "end"
    end.write_text("30")
    folder = tmp_path / "records"
    folder.mkdir()
    bound = str(end)
    source = f"growing_{uuid.uuid4().hex[:8]}"

    def latest(partition: int) -> int:
        return int(Path(bound).read_text())

    rss.register_source(connect, source, kit.counting(str(folder)), 2, SCHEMA, latest=latest)

    def run() -> None:
        query = (
            connect.readStream.format(source)
            .load()
            .writeStream.format("parquet")
            .option("path", str(tmp_path / "out"))
            .option("checkpointLocation", str(tmp_path / "ck"))
            .trigger(availableNow=True)
            .start()
        )
        assert query.awaitTermination(TIMEOUT)

    run()
    end.write_text("70")
    run()
    rows = connect.read.parquet(str(tmp_path / "out")).orderBy("p", "offset").collect()
    assert [(r.p, r.offset) for r in rows] == [(p, o) for p in range(2) for o in range(70)]
    assert sorted((d["partition"], d["start"]) for d in kit.records(folder, "demand")) == [
        (0, 0),
        (0, 30),
        (1, 0),
        (1, 30),
    ]
