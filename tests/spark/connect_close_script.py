"""Run in a subprocess by test_connect_close.py: an embedded Connect server with the plugin, the
demo's Connect streaming path (examples/connect_demo.py's ``streaming``: a registered publisher
and subscriber, a query run to its end), then, unless argv[1] == "finished", streams of every kind
left open (a JVM publisher's subscription, a DataFrame's publisher and its Arrow batches part-read,
a registered publisher and subscriber under a running query), and ``spark.stop()`` at once. The
server logs to this process's stderr (examples/log4j2.properties); the outcome is how each open
stream's subscriber heard the end."""

from __future__ import annotations

import json
import logging
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
from connect_demo import LOGGING, REGISTRAR  # noqa: E402
from connect_demo import streaming as demo_streaming  # noqa: E402

# Our Python loggers' warnings, with their level and name: the test looks for them.
logging.basicConfig(level=logging.WARNING, format="%(levelname)s:%(name)s:%(message)s")


class Taking(rs.Subscriber[Any]):
    """Requests 10 and takes them; how its stream ended, if it did."""

    def __init__(self) -> None:
        self.taken = 0
        self.ten = threading.Event()
        self.end: str | None = None

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        subscription.request(10)

    def on_next(self, item: Any) -> None:
        self.taken += 1
        if self.taken == 10:
            self.ten.set()

    def on_error(self, exc: BaseException) -> None:
        self.end = f"error: {exc}"

    def on_complete(self) -> None:
        self.end = "complete"


support = str(ROOT / "build" / "test-jars" / "reactive-streams-py-spark-test-support.jar")
builder = rss.configure(SparkSession.builder.remote("local[2]"), support)
if sys.argv[1:] != ["finished"]:  # the sink hears of its query's end a second after stop() returns
    builder = builder.config("spark.extraListeners", "io.github.rspy.spark.testing.SlowQueryEnds")
spark = (
    builder.config("spark.rspy.connect.registrars", REGISTRAR)
    .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={LOGGING.as_uri()}")
    .config("spark.ui.showConsoleProgress", "false")
    .getOrCreate()
)
demo_streaming(spark)  # finished streams: the demo's path, whose reply path outlives them briefly
outcome: dict[str, Any] = {}
if sys.argv[1:] != ["finished"]:
    jvm = Taking()
    rss.jvm_publisher(spark, "longs", "1000000").subscribe(jvm)
    df = spark.range(0, 1_000_000, 1, 8)
    rows = Taking()
    rss.publisher_from_dataframe(df).subscribe(rows)
    batches = iter(rss.arrow_batches_from_dataframe(df, prefetch_partitions=1).iterate())
    next(batches)
    events = rs.from_iterable((i, f"e{i}") for i in range(10_000_000))
    sink = Taking()
    rss.register_publisher(spark, "live-events", events)
    rss.register_subscriber(spark, "live-out", sink)
    query = (
        spark.readStream.format("reactive-streams")
        .option("publisher", "live-events")
        .option("maxRecordsPerTrigger", 1_000)
        .schema("id LONG, name STRING")
        .load()
        .writeStream.format("reactive-streams")
        .option("subscriber", "live-out")
        .option("checkpointLocation", tempfile.mkdtemp())
        .start()
    )
    for subscriber in (jvm, rows, sink):
        assert subscriber.ten.wait(120), "a stream delivered nothing"
    spark.stop()
    outcome = {"jvm": jvm.end, "sink": sink.end, "taken": [jvm.taken, rows.taken, sink.taken]}
else:
    spark.stop()
print(json.dumps(outcome))
