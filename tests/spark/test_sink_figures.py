"""A partitioned sink's figures without Spark: a write task's wait for its subscriber, timed by
`_sink.Watched` over a `TaskPublisher` in this process, and the commits' sums in the figures'
file (`_sink_figures`). With Spark, classic and Connect: test_partitioned.py,
test_connect_partitioned.py."""

from __future__ import annotations

import logging
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql.types import LongType, StructField, StructType

import reactive_streams as rs
from reactive_streams.spark.partitioned import SinkCommit
from reactive_streams.spark.partitioned import _sink_figures as figures
from reactive_streams.spark.partitioned._sink import Watched
from reactive_streams.spark.partitioned._task_publisher import TaskPublisher

from . import partitioned_kit as kit

SCHEMA = StructType([StructField("id", LongType())])


def batches(count: int, rows: int, pause: float = 0.0) -> Iterator[pa.RecordBatch]:
    """``count`` Arrow batches of ``rows`` ids, each made ``pause`` seconds after the one before
    (Spark's rows arriving slowly: the producer's time, not the subscriber's)."""
    for b in range(count):
        time.sleep(pause)
        yield pa.record_batch([pa.array(range(b * rows, (b + 1) * rows), pa.int64())], names=["id"])


def run_task(subscriber: rs.Subscriber[Any], source: Iterator[pa.RecordBatch]) -> tuple[int, int, float]:
    """A write task's pass in this process: rows delivered, its wait in ms, its seconds."""
    started = time.monotonic()
    watched = Watched(subscriber)
    TaskPublisher(source, SCHEMA, rows=True).subscribe(watched)
    delivered = watched.wait_for_end("the test's task")
    return delivered, watched.wait_ms(), time.monotonic() - started


class Eager(rs.Subscriber[Any]):
    """Asks for everything at once and takes each row at no cost."""

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        subscription.request(1 << 40)

    def on_next(self, item: Any) -> None:
        pass

    def on_error(self, exc: BaseException) -> None:
        pass

    def on_complete(self) -> None:
        pass


def test_a_task_waits_for_a_subscriber_that_holds_its_demand_and_for_one_slow_per_row() -> None:
    """Demand held 300 ms from another thread, then 20 ms a row over 10 rows: the task's wait
    counts both, the pause from the demand's side and the rows from the signals'."""
    delivered, wait_ms, _ = run_task(kit.Held(0.3, 0.02), batches(2, 5))
    assert delivered == 10
    assert wait_ms >= 300 + 10 * 20


def test_a_task_does_not_count_the_time_spark_takes_to_hand_it_rows() -> None:
    """A subscriber with all its demand outstanding waits for nobody: the 3 x 150 ms the task's
    rows took to arrive are the producer's, not the subscriber's."""
    delivered, wait_ms, seconds = run_task(Eager(), batches(3, 5, pause=0.15))
    assert delivered == 15 and seconds >= 0.45
    assert wait_ms < 0.3 * seconds * 1000, (wait_ms, seconds)


def commit(query: str, partition: int, delivered: int, wait_ms: int, batch: int = 0) -> SinkCommit:
    return SinkCommit(partition, batch, delivered, wait_ms, query)


def test_the_commits_of_a_query_add_up_in_its_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)  # gettempdir() reads TMPDIR again
    query = str(uuid.uuid4())
    assert figures.read_figures(query) is None
    figures.record_commit("audit", [commit(query, 0, 10, 40), commit(query, 1, 7, 90)], 0)
    figures.record_commit("audit", [commit(query, 0, 3, 5, 1), commit(query, 1, 0, 1, 1)], 1)
    read = figures.read_figures(query)
    assert read is not None
    assert {k: v for k, v in read.items() if k != "timestamp"} == {
        "queryId": query,
        "sink": "audit",
        "batchId": 1,
        "lastBatchRows": 3,
        "lastBatchTasks": 2,
        "lastBatchWaitMs": 5,
        "lastBatchTaskWaitMs": 6,
        "deliveredRows": 20,
        "totalWaitMs": 95,
        "batches": 2,
    }
    path = figures.figures_path(query)
    assert path.parent == tmp_path / f"reactive-streams-sinks-{os.getuid()}"
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert sorted(p.name for p in path.parent.iterdir()) == [f"{query}.json"]  # nothing staged left

    figures.record_commit("audit", [SinkCommit(0, None, 5)], 0)  # a batch write's: no query
    assert sorted(p.name for p in path.parent.iterdir()) == [f"{query}.json"]


def test_a_folder_of_another_user_is_not_written_and_the_commit_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    query = str(uuid.uuid4())
    real_uid = os.getuid()
    (tmp_path / f"reactive-streams-sinks-{real_uid + 1}").mkdir(mode=0o700)  # real_uid's
    monkeypatch.setattr(figures.os, "getuid", lambda: real_uid + 1)  # so another user's to us
    with caplog.at_level(logging.WARNING, "reactive_streams.spark"):
        figures.record_commit("audit", [commit(query, 0, 10, 40)], 0)
    assert "the figures of batch 0 were not written" in caplog.text
    assert "belongs to another user" in caplog.text
    assert list((tmp_path / f"reactive-streams-sinks-{real_uid + 1}").iterdir()) == []


@pytest.mark.parametrize("bad", ["../etc/passwd", "not-a-uuid", "57593709-D404-4273-9467-8B3E56F369A8"])
def test_a_query_id_that_is_not_one_names_itself(bad: str) -> None:
    with pytest.raises(ValueError, match="a query id is a UUID in its canonical form"):
        figures.figures_path(bad)


def test_a_commit_on_a_driver_whose_python_lacks_the_library_goes_on_without_figures(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from reactive_streams.spark.partitioned import _shipped

    def missing(module: str, where: str) -> None:
        raise RuntimeError(f"{where}: this worker's Python cannot import reactive_streams")

    monkeypatch.setattr(_shipped, "_library", missing)
    writer = _shipped.ShippedStreamWriter("audit", b"", "{}")
    with caplog.at_level(logging.WARNING, "reactive_streams.spark"):
        writer.commit([commit(str(uuid.uuid4()), 0, 10, 40)], 3)
    assert "no figures of batch 3: sink 'audit': this worker's Python cannot import" in caplog.text
