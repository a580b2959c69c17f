"""JVM publishers per partition, named from Python: ``format("reactive-streams")
.option("factory", CLASS)`` reads a ``PartitionedPublishers`` in the executors' JVMs, no Python
in the data path; a class that does not implement it is refused by name before it is made."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import StreamingQueryException

from reactive_streams import spark as rss

from . import partitioned_kit as kit

TESTING = "io.github.rspy.spark.testing"
SCHEMA = "p INT, offset LONG, pid LONG"
TIMEOUT = 120


def read(spark: Any, factory: str, checkpoint: Path, **options: Any) -> tuple[list[Any], Any]:
    reader = spark.readStream.format(rss.FORMAT).option("factory", factory).schema(SCHEMA)
    for key, value in options.items():
        reader = reader.option(key, value)
    return kit.read_available_now(spark, reader, checkpoint, TIMEOUT)


def subscriptions(spark: Any) -> list[list[str]]:
    testing = spark.sparkContext._jvm.io.github.rspy.spark.testing
    return [line.split() for line in testing.OffsetPartitions.subscriptions()]


def test_a_jvm_factory_is_read_in_partitions_within_the_read_limit(
    spark_session: Any, tmp_path: Path
) -> None:
    """Three partitions of 1,000, 600 a trigger: every element once, 200 a partition a batch,
    each publisher requested exactly its share and cancelled; the elements were made in a JVM."""
    spark_session.sparkContext._jvm.io.github.rspy.spark.testing.OffsetPartitions.clear()
    rows, query = read(
        spark_session, f"{TESTING}.OffsetPartitions", tmp_path / "ck", maxRecordsPerTrigger=600
    )

    assert sorted((r.p, r.offset) for r in rows) == [(p, o) for p in range(3) for o in range(1_000)]
    jvm = int(spark_session.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
    assert {r.pid for r in rows} == {jvm}  # local mode: the executor is the driver's JVM, not Python
    assert [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]] == [600] * 5
    assert json.loads(query.lastProgress["sources"][0]["endOffset"]) == {"0": 1000, "1": 1000, "2": 1000}
    recorded = subscriptions(spark_session)
    assert len(recorded) == 15
    for _partition, _start, requested, emitted, cancelled in recorded:
        assert requested == emitted == "200" and cancelled == "true"


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (
            "OffsetPartitions$PastDemand",
            r"partition \d of partition source '[\w.$]+' \(offsets 0 to 5\): the publisher broke §1.1",
        ),
        (
            "OffsetPartitions$Nulls",
            r"partition \d of partition source '[\w.$]+' \(offsets 0 to 5\): the publisher broke §2.13",
        ),
    ],
)
def test_a_jvm_partition_that_breaks_a_rule_fails_the_query_naming_it(
    spark_session: Any, tmp_path: Path, factory: str, message: str
) -> None:
    with pytest.raises(StreamingQueryException, match=message):
        read(spark_session, f"{TESTING}.{factory}", tmp_path / "ck", maxRecordsPerTrigger=15, prefetch=2)


def test_an_unbounded_jvm_factory_refuses_available_now(spark_session: Any, tmp_path: Path) -> None:
    with pytest.raises(StreamingQueryException, match=r"is unbounded .*Trigger.AvailableNow needs latest"):
        read(spark_session, f"{TESTING}.OffsetPartitions$Unbounded", tmp_path / "ck")


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (
            "java.lang.ProcessBuilder",
            r"option factory names java.lang.ProcessBuilder, which does not implement "
            r"io.github.rspy.spark.partitioned.PartitionedPublishers: "
            r"refused before it was initialized or constructed",
        ),
        (
            f"{TESTING}.NotAFactory",
            r"which does not implement io.github.rspy.spark.partitioned.PartitionedPublishers",
        ),
        (
            "no.such.Factory",
            r"option factory names no.such.Factory, which is not on the classpath: add its jar to spark.jars",
        ),
    ],
    ids=["ProcessBuilder", "NotAFactory", "missing"],
)
def test_a_class_that_is_not_a_factory_is_refused_at_load_before_it_is_made(
    spark_session: Any, factory: str, message: str
) -> None:
    made = spark_session.sparkContext._jvm.io.github.rspy.spark.testing.NotAFactory.Made
    before = made.count()
    with pytest.raises(Exception, match=message):
        spark_session.readStream.format(rss.FORMAT).option("factory", factory).schema(SCHEMA).load()
    assert made.count() == before  # neither its static initializer nor a constructor ran


def test_a_jvm_factory_over_connect(tmp_path: Path) -> None:
    """The same format and option from a Connect client: the server's executors read it."""
    from .connect_kit import connect_session, stop_session

    session = connect_session()
    try:
        rows, _ = read(session, f"{TESTING}.OffsetPartitions", tmp_path / "ck", maxRecordsPerTrigger=1_500)
        assert sorted((r.p, r.offset) for r in rows) == [(p, o) for p in range(3) for o in range(1_000)]
        assert os.getpid() not in {r.pid for r in rows}
        refused = session.readStream.format(rss.FORMAT).option("factory", "java.lang.ProcessBuilder")
        with pytest.raises(Exception, match=r"java\.lang\.ProcessBuilder, which does not implement"):
            # a Connect client's load() is lazy: the server refuses the class when the query starts
            refused.schema(SCHEMA).load().writeStream.format("noop").start()
    finally:
        stop_session(session)
