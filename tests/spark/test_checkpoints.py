"""`LocalCheckpointFileManager`: local checkpoints written whole and atomically, without
Hadoop's child processes; queries restart from them as from Spark's own."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from py4j.protocol import Py4JJavaError
from pyspark.sql import SparkSession

from reactive_streams import spark as rss

MANAGER_CONF = "spark.sql.streaming.checkpointFileManagerClass"


@pytest.fixture
def fast_checkpoints(spark_session: Any) -> Iterator[Any]:
    """The session's streaming queries use the manager while the test runs."""
    spark_session.conf.set(MANAGER_CONF, rss.LOCAL_CHECKPOINTS)
    yield spark_session
    spark_session.conf.unset(MANAGER_CONF)


def manager(spark: Any, folder: Path) -> Any:
    jvm = spark._jvm
    path = jvm.org.apache.hadoop.fs.Path(folder.as_uri())
    return jvm.io.github.rspy.spark.LocalCheckpointFileManager(path, spark._jsc.hadoopConfiguration())


def write(stream: Any, data: bytes) -> None:
    stream.write(data)
    stream.close()


def test_configure_sets_the_manager_only_when_asked() -> None:
    assert MANAGER_CONF not in rss.configure(SparkSession.Builder())._options
    builder = rss.configure(SparkSession.Builder(), fast_local_checkpoints=True)
    assert builder._options[MANAGER_CONF] == rss.LOCAL_CHECKPOINTS


@pytest.mark.parametrize("master", ["spark://10.213.7.10:7077", "yarn", "k8s://https://k8s.example:6443"])
def test_fast_local_checkpoints_on_a_cluster_warns_what_a_file_checkpoint_then_needs(master: str) -> None:
    with pytest.warns(UserWarning, match=r"fast_local_checkpoints on a cluster \(master ") as warned:
        builder = rss.configure(SparkSession.Builder().master(master), fast_local_checkpoints=True)
    assert builder._options[MANAGER_CONF] == rss.LOCAL_CHECKPOINTS  # still set: safe on a shared mount
    (warning,) = warned
    assert master in str(warning.message) and "every host mounts" in str(warning.message)
    assert warning.filename == __file__  # the caller's line, not the library's


def test_fast_local_checkpoints_on_one_host_does_not_warn(recwarn: pytest.WarningsRecorder) -> None:
    for master in ("local[2]", "local-cluster[2,1,1024]"):
        rss.configure(SparkSession.Builder().master(master), fast_local_checkpoints=True)
    rss.configure(SparkSession.Builder().master("spark://10.213.7.10:7077"))  # not asked for
    assert [str(w.message) for w in recwarn if "fast_local_checkpoints" in str(w.message)] == []


def test_a_file_appears_whole_once_closed_and_not_at_all_if_cancelled(
    spark_session: Any, tmp_path: Path
) -> None:
    files = manager(spark_session, tmp_path)
    target = spark_session._jvm.org.apache.hadoop.fs.Path((tmp_path / "offsets" / "0").as_uri())

    stream = files.createAtomic(target, False)
    stream.write(b"v1\n{}")
    assert not (tmp_path / "offsets" / "0").exists()  # only the temporary file so far
    stream.close()
    cancelled = files.createAtomic(
        spark_session._jvm.org.apache.hadoop.fs.Path((tmp_path / "x").as_uri()), False
    )
    cancelled.write(b"never")
    cancelled.cancel()

    assert (tmp_path / "offsets" / "0").read_bytes() == b"v1\n{}"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["0", "offsets"]  # no .crc, no .tmp, no x
    assert files.exists(target) and files.isLocal()


def test_a_file_that_exists_is_not_overwritten_unless_asked(spark_session: Any, tmp_path: Path) -> None:
    files = manager(spark_session, tmp_path)
    target = spark_session._jvm.org.apache.hadoop.fs.Path((tmp_path / "commits" / "3").as_uri())
    write(files.createAtomic(target, False), b"first")

    with pytest.raises(Py4JJavaError) as refused:
        write(files.createAtomic(target, False), b"second")

    assert "org.apache.hadoop.fs.FileAlreadyExistsException" in str(refused.value)
    assert (tmp_path / "commits" / "3").read_bytes() == b"first"
    write(files.createAtomic(target, True), b"third")
    assert (tmp_path / "commits" / "3").read_bytes() == b"third"
    assert sorted(p.name for p in (tmp_path / "commits").iterdir()) == ["3"]


def test_a_query_checkpoints_and_restarts_with_it(fast_checkpoints: Any, tmp_path: Path) -> None:
    spark = fast_checkpoints
    df = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 10).load()

    def run(batches: int) -> Any:
        query = df.writeStream.format("noop").option("checkpointLocation", str(tmp_path)).start()
        deadline = time.monotonic() + 120
        while (query.lastProgress or {}).get("batchId", -1) < batches and time.monotonic() < deadline:
            time.sleep(0.05)
        query.stop()
        return query

    first = run(3)
    written = {p.name for p in (tmp_path / "offsets").iterdir()}
    second = run(first.lastProgress["batchId"] + 2)

    assert {"0", "1", "2", "3"} <= written
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith((".crc", ".tmp"))]
    assert second.lastProgress["batchId"] > first.lastProgress["batchId"]  # went on from the checkpoint
    assert second.recentProgress[0]["batchId"] > first.lastProgress["batchId"] - 1
