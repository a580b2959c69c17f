"""Scala ⇄ PySpark: Scala 2.13 code compiled by the build hands PySpark publishers (a Dataset's
rows, a Pekko Source), and a Scala subscriber writes a Python publisher into a Spark table. The
example of docs/spark.md also runs in a session that has only the jars that page names (no Pekko)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import reactive_streams as rs

from ..support import Boom
from .kit import run_script


@pytest.fixture(scope="module")
def scala(spark_session: Any) -> Any:
    return spark_session.sparkContext._jvm.io.github.rspy.spark.ScalaStreams


def test_a_scala_publisher_of_a_datasets_rows(spark_session: Any, spark_bridge: Any, scala: Any) -> None:
    df = spark_session.range(0, 50, numPartitions=3).selectExpr("id", "CAST(id AS STRING) AS name")
    publisher = spark_bridge.from_jvm(scala.datasetRows(df._jdf))
    rows = list(publisher.map(lambda row: (row.id, row.name)).iterate(prefetch=8))  # pyspark.sql.Row
    assert rows == [(i, str(i)) for i in range(50)]


def test_a_scala_publisher_keeps_demand(spark_session: Any, spark_bridge: Any, scala: Any) -> None:
    from ..support import Probe

    probe = Probe(0)
    spark_bridge.from_jvm(scala.datasetRows(spark_session.range(0, 100)._jdf)).subscribe(probe)
    probe.await_subscribed()
    probe.request(3)
    probe.await_items(3)
    assert len(probe.items) == 3
    probe.request(0)  # §3.9 through the Scala publisher
    probe.await_done()
    assert isinstance(probe.error, ValueError)


def test_rule_3_8_a_scala_publisher_adds_demand_requested_in_on_next(spark_session: Any, scala: Any) -> None:
    # 5, then one more inside each onNext, while the emit loop runs: added to the demand left,
    # not kept with max, or the loop stops after 5. (The loop runs inside onSubscribe's request,
    # synchronously, which RecordingSubscriber counts as overlapping signals: not checked here.)
    subscriber = spark_session._jvm.io.github.rspy.bridge.testing.RecordingSubscriber(5, 1)
    scala.datasetRows(spark_session.range(0, 100)._jdf).subscribe(subscriber)
    assert subscriber.awaitDone(10_000) and subscriber.isComplete()
    assert [int(x) for x in subscriber.items()] == list(range(100))


def test_rule_3_9_a_jvm_request_of_zero_to_a_scala_publisher(spark_session: Any, scala: Any) -> None:
    # A JVM subscriber, so the request reaches the Scala subscription itself (a Python one's is
    # refused by the bridge first): the kit's error, and no element.
    jvm = spark_session._jvm
    subscriber = jvm.io.github.rspy.bridge.testing.RecordingSubscriber(0, 0)
    scala.datasetRows(spark_session.range(0, 10)._jdf).subscribe(subscriber)
    subscriber.request(0)
    assert subscriber.awaitDone(10_000)
    assert subscriber.errorClass() == "java.lang.IllegalArgumentException"
    assert subscriber.errorMessage() == jvm.io.github.rspy.bridge.Demand.illegalRequest(0).getMessage()
    assert subscriber.count() == 0


def test_a_pekko_source_from_scala(spark_session: Any, spark_bridge: Any, pekko: Any) -> None:
    pekko_streams = spark_session.sparkContext._jvm.io.github.rspy.spark.PekkoStreams
    publisher = pekko_streams.range(200, pekko(spark_bridge))
    assert list(spark_bridge.from_jvm(publisher).iterate(prefetch=16)) == list(range(1, 201))


def test_a_scala_subscriber_writes_a_python_publisher_into_a_table(
    spark_session: Any, spark_bridge: Any, scala: Any
) -> None:
    spark_session.sql("DROP TABLE IF EXISTS rs_scala_written")
    elements = [(i, f"name {i}") for i in range(1, 1001)]
    writer = scala.tableWriter(spark_session._jsparkSession, "rs_scala_written", "id long, name string", 128)
    spark_bridge.to_jvm(rs.from_iterable(elements)).subscribe(writer)
    assert int(writer.completion().get()) == 1000
    table = spark_session.table("rs_scala_written")
    assert sorted((r.id, r.name) for r in table.collect()) == elements
    spark_session.sql("DROP TABLE rs_scala_written")


def test_the_scala_subscriber_sees_the_python_publishers_error(
    spark_session: Any, spark_bridge: Any, scala: Any
) -> None:
    def failing() -> Any:
        yield (1, "one")
        raise Boom("python publisher failed")

    writer = scala.tableWriter(spark_session._jsparkSession, "rs_scala_failed", "id long, name string", 10)
    spark_bridge.to_jvm(rs.from_iterable(failing())).subscribe(writer)
    with pytest.raises(Exception, match="python publisher failed"):
        writer.completion().get()


@pytest.mark.timeout(660)  # its script, given up to 600 s
def test_the_readmes_scala_example_runs_with_only_the_jars_the_readme_names(tmp_path: Path) -> None:
    """A fresh session built with ``rss.configure(SparkSession.builder.master("local[1]"))`` alone:
    no test jars, so ``ScalaStreams`` must load without Pekko (it once named Pekko's ActorSystem
    in a signature, and failed with NoClassDefFoundError)."""
    outcome, _ = run_script("readme_scala_script.py", [], timeout=600, cwd=tmp_path)
    assert outcome["pekko_on_classpath"] is False
    assert not any("pekko" in jar.lower() or "reactor" in jar.lower() for jar in outcome["spark_jars"])
    assert outcome["rows"] == [[i, f"name {i}"] for i in range(5)]
    assert outcome["written"] == 3000
    assert outcome["table"] == [[i, f"name {i}"] for i in range(3000)]


def test_a_scala_subscriber_writes_python_record_batches_into_a_table(
    spark_session: Any, spark_bridge: Any, scala: Any
) -> None:
    pyarrow = pytest.importorskip("pyarrow")
    spark_session.sql("DROP TABLE IF EXISTS rs_scala_batches")
    batches = [
        pyarrow.record_batch(
            {"name": [f"name {i}" for i in range(n, n + 100)], "id": list(range(n, n + 100))}
        )
        for n in range(0, 1000, 100)
    ]
    writer = scala.tableWriter(spark_session._jsparkSession, "rs_scala_batches", "id long, name string", 2)
    spark_bridge.to_jvm(rs.from_iterable(batches)).subscribe(writer)
    assert int(writer.completion().get()) == 1000
    table = spark_session.table("rs_scala_batches")
    assert sorted((r.id, r.name) for r in table.collect()) == [(i, f"name {i}") for i in range(1000)]
    assert int(spark_bridge.runtime.arrowAllocatedBytes()) == 0  # the writer closed every batch
    spark_session.sql("DROP TABLE rs_scala_batches")
