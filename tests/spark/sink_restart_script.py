"""Run in a subprocess by test_sink.py: one driver's run of a query from ``rate-micro-batch``
(10 rows a batch, values 10 * epoch to 10 * epoch + 9) to the sink, on a checkpoint that
outlives it. Each row the Python subscriber receives is appended to a log at once, with the
epoch and query id its subscription gives, so that the test sees what a driver delivered even
if it was killed.

    python sink_restart_script.py MODE CHECKPOINT LOG ROWS JARS...

MODE ``deliver``: request without bound, for ever (the test kills this driver; the environment
makes Spark's commit of one epoch block, see ``BlockingCommitFileManager``). ``stop``: request
one row at a time, stop the query after ROWS rows, and exit. ``resume``: request without bound,
stop the query once ROWS rows arrived, and exit. The outcome is a JSON line on stdout.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss

mode, checkpoint, log, rows, *jars = sys.argv[1:]
expected = int(rows)
builder = (
    rss.configure(SparkSession.builder.master("local[2]"), jars)
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
)
if mode == "deliver":
    builder = builder.config(
        "spark.sql.streaming.checkpointFileManagerClass",
        "io.github.rspy.spark.testing.BlockingCommitFileManager",
    )
spark = builder.getOrCreate()
spark.sparkContext.setLogLevel("ERROR")


class Logging(rs.Subscriber[Any]):
    def __init__(self, one_at_a_time: bool) -> None:
        self.one_at_a_time = one_at_a_time
        self.received = 0
        self.done = threading.Event()
        self.file = open(log, "a", encoding="utf-8")  # open as long as the driver
        self.subscription: Any = None

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        self.subscription = subscription
        subscription.request(1 if self.one_at_a_time else 2**62)

    def on_next(self, row: Any) -> None:
        s = self.subscription
        self.file.write(f"{row.value} {s.epoch} {s.query_id}\n")
        self.file.flush()
        self.received += 1
        if self.received == expected:
            self.done.set()
        elif self.one_at_a_time:
            s.request(1)

    def on_error(self, exc: BaseException) -> None:
        print(f"on_error: {exc!r}", file=sys.stderr)
        self.done.set()

    def on_complete(self) -> None:
        pass


subscriber = Logging(one_at_a_time=mode == "stop")
rss.register_subscriber(spark, "logged", subscriber)
source = (
    spark.readStream.format("rate-micro-batch")
    .option("rowsPerBatch", 10)
    .option("numPartitions", 1)
    .load()
    .selectExpr("value")
)
query = (
    source.writeStream.format("reactive-streams")
    .option("subscriber", "logged")
    .option("checkpointLocation", checkpoint)
    .start()
)
if not subscriber.done.wait(300):
    raise SystemExit(f"{mode}: {subscriber.received} rows in 300 s, {expected} expected")
query.stop()
print(json.dumps({"received": subscriber.received, "query": str(query.id)}))
spark.stop()
