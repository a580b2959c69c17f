"""Run in a subprocess by test_sink.py: what the driver logs when a query on the sink stops or
fails. Each phase is framed on stderr by ``PHASE <name> BEGIN`` / ``PHASE <name> END``; the
outcome is a JSON line on stdout."""

from __future__ import annotations

import json
import sys
import tempfile
import time
from typing import Any

from pyspark.errors import StreamingQueryException
from pyspark.sql import SparkSession
from stopped import wait_until_stopped_and_quiet  # beside this script, which runs as a file

import reactive_streams as rs
from reactive_streams import spark as rss

TESTING = "io.github.rspy.bridge.testing"

spark = (
    rss.configure(SparkSession.builder.master("local[2]"), sys.argv[1:])
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("WARN")
recording = getattr(spark._jvm, TESTING).RecordingSubscriber
outcome: dict[str, Any] = {}


def phase(name: str, edge: str) -> None:
    sys.stderr.flush()
    print(f"PHASE {name} {edge}", file=sys.stderr, flush=True)


def start(df: Any, subscriber: str) -> Any:
    return (
        df.writeStream.format("reactive-streams")
        .option("subscriber", subscriber)
        .option("checkpointLocation", tempfile.mkdtemp())
        .start()
    )


def batches(rows: int) -> Any:
    return spark.readStream.format("rate-micro-batch").option("rowsPerBatch", rows).load().selectExpr("value")


class Raising(rs.Subscriber[Any]):
    def on_subscribe(self, subscription: rs.Subscription) -> None:
        subscription.request(100)

    def on_next(self, item: Any) -> None:
        raise ValueError("boom from a Python subscriber")

    def on_error(self, exc: BaseException) -> None:
        pass

    def on_complete(self) -> None:
        pass


def await_failure(query: Any) -> str:
    try:
        query.awaitTermination(120)
    except StreamingQueryException as error:
        return str(error)
    return ""


# 1. A stop while the commit waits for the subscriber's demand.
stalled = recording(2, 0)
rss.register_subscriber(spark, "stalled", stalled)
query = start(batches(10), "stalled")
assert stalled.awaitItems(2, 120_000)  # the rest of the batch now waits for demand that never comes
phase("commit", "BEGIN")
query.stop()
wait_until_stopped_and_quiet(spark, query)
phase("commit", "END")
outcome["commit"] = {"exception": str(query.exception()), "delivered": stalled.count()}

# 2. A stop while the batch's write tasks run (each row sleeps).
eager = recording(1_000_000, 0)
rss.register_subscriber(spark, "eager", eager)
slow = (
    spark.readStream.format("rate-micro-batch")
    .option("rowsPerBatch", 4)
    .option("numPartitions", 2)
    .load()
    .selectExpr("value", "reflect('java.lang.Thread', 'sleep', CAST(300 AS BIGINT)) AS slept")
)
query = start(slow, "eager")
assert eager.awaitItems(4, 120_000)
tracker = spark.sparkContext.statusTracker()
deadline = time.monotonic() + 120
while not any(  # the next batch's tasks run (and sleep), not a pause that may fall before them
    (tracker.getStageInfo(stage) or type("", (), {"numActiveTasks": 0})).numActiveTasks
    for stage in tracker.getActiveStageIds()
):
    assert time.monotonic() < deadline, "the next batch's tasks never ran"
    time.sleep(0.02)
phase("job", "BEGIN")
query.stop()
wait_until_stopped_and_quiet(spark, query)  # the killed tasks have ended, and logged as they did
phase("job", "END")
outcome["job"] = {"exception": str(query.exception())}

# 3. Real failures: a JVM subscriber that throws, a Python one that raises.
rss.register_subscriber(spark, "throwing", recording(100, 0).failOn(3))
phase("jvm_failure", "BEGIN")
outcome["jvm_failure"] = await_failure(start(batches(10), "throwing"))
phase("jvm_failure", "END")
rss.register_subscriber(spark, "raising", Raising())
phase("python_failure", "BEGIN")
outcome["python_failure"] = await_failure(start(batches(10), "raising"))
phase("python_failure", "END")

print(json.dumps(outcome))
spark.stop()
