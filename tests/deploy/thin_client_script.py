"""Run on the cluster's client host by test_thin_client.py, with the Python of a virtual
environment that has `pyspark-client` (no `pyspark`, no jars), this library's wheel and pyarrow,
and no Java on PATH: every Spark Connect feature of the library against Spark's own Connect
server on another host. The outcome is a JSON line on stdout, one entry per feature.

    python thin_client_script.py CONNECT_URL WORK_FOLDER
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import shutil
import sys
import uuid
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss

url, work = sys.argv[1:3]
outcome: dict[str, Any] = {
    "java": shutil.which("java"),
    "java_home": os.environ.get("JAVA_HOME"),
    "pyspark_jars": importlib.util.find_spec("pyspark") is not None
    and Path(importlib.util.find_spec("pyspark").origin or "").parent.joinpath("jars").exists(),
}


class Noted(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


noted = Noted()  # the library's own: whether it fell back to the client's channel
logging.getLogger("reactive_streams.spark").addHandler(noted)
logging.getLogger("reactive_streams.spark").setLevel(logging.DEBUG)
spark = SparkSession.builder.remote(url).getOrCreate()
outcome["server"] = spark.version

# DataFrames to and from publishers
rows = [(i, f"r{i}") for i in range(1000)]
frame = rss.dataframe_from_publisher(spark, rs.from_iterable(rows), "id long, name string")
outcome["dataframe_rows"] = frame.count()
back = sorted(tuple(row) for row in rs.iterate(rss.publisher_from_dataframe(frame.orderBy("id"))))
outcome["publisher_from_dataframe"] = back == rows

# A JVM publisher the server's registrar registered
outcome["jvm_publisher"] = list(rs.iterate(rss.jvm_publisher(spark, "longs", "100"))) == list(range(100))


# Driver-side streaming: a client's publisher into a client's subscriber, through a query
class Collect(rs.SyncSubscriber[Any]):
    def __init__(self) -> None:
        super().__init__(batch=500)
        self.rows: list[Any] = []

    def when_next(self, item: Any) -> None:
        self.rows.append(tuple(item))


class Counted(rs.Publisher[Any]):
    """A publisher's requests, as they reached it on this host."""

    def __init__(self, inner: rs.Publisher[Any]) -> None:
        self.inner = inner
        self.requests: list[int] = []

    def subscribe(self, subscriber: rs.Subscriber[Any]) -> None:
        requests = self.requests

        class Relay(rs.Subscriber[Any]):
            def on_subscribe(self, subscription: rs.Subscription) -> None:
                class Noted(rs.Subscription):
                    def request(self, n: int) -> None:
                        requests.append(n)
                        subscription.request(n)

                    def cancel(self) -> None:
                        subscription.cancel()

                subscriber.on_subscribe(Noted())

            def on_next(self, item: Any) -> None:
                subscriber.on_next(item)

            def on_error(self, exc: BaseException) -> None:
                subscriber.on_error(exc)

            def on_complete(self) -> None:
                subscriber.on_complete()

        self.inner.subscribe(Relay())


collected = Collect()
events = Counted(rs.from_iterable((i, f"e{i}") for i in range(5000)))
with rss.register_publisher(spark, "events", events), rss.register_subscriber(spark, "out", collected):
    query = (
        spark.readStream.format("reactive-streams")
        .option("publisher", "events")
        .option("maxRecordsPerTrigger", 1000)
        .schema("id LONG, name STRING")
        .load()
        .writeStream.format("reactive-streams")
        .option("subscriber", "out")
        .option("checkpointLocation", f"{work}/driver_ck")
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    collected.completion.result(60)
    stats = rss.stream_stats(spark, "events")
outcome["driver_streaming"] = sorted(collected.rows) == [(i, f"e{i}") for i in range(5000)]
# Demand reached the client's publisher across the link, and the server's source held no more
# than maxRecordsPerTrigger x (1 + prefetch) = 2,000 (prefetch 1, the default).
outcome["driver_demand"] = {
    "largest_request": max(events.requests),
    "requested_here": sum(events.requests),
    "requested_there": stats["requested"],
    "max_buffered": stats["max_buffered"],
}


# Where the data is: a partitioned source, a processor per partition, a partitioned sink and
# Parquet. Each element says on which host (the executor's SPARK_LOCAL_IP) it was made and processed.
def source(partition: int, start: int) -> rs.Publisher[Any]:
    host = os.environ.get("SPARK_LOCAL_IP", "?")
    return rs.from_iterable((partition, offset, host) for offset in range(start, 200))


def doubling(partition: int) -> rs.Processor[Any, Any]:
    host = os.environ.get("SPARK_LOCAL_IP", "?")
    return rs.MapProcessor(lambda row: (row[0], row[1] * 2, row[2], host))


audits = Path(work) / "audits"
audits.mkdir()
folder = str(audits)


class Audit(rs.SyncSubscriber[Any]):
    def __init__(self, partition: int, batch_id: Any) -> None:
        super().__init__(batch=100)
        self.key, self.rows = f"{batch_id}-{partition}", []

    def when_next(self, item: Any) -> None:
        self.rows.append(list(item))

    def when_complete(self) -> None:
        Path(folder, f"{self.key}-{uuid.uuid4().hex}.json").write_text(json.dumps(self.rows))


name = f"orders_{uuid.uuid4().hex[:8]}"
rss.register_source(spark, name, source, 2, "p int, offset long, made_on string", latest=lambda p: 200)
sink = f"audit_{uuid.uuid4().hex[:8]}"
rss.register_sink(spark, sink, Audit)
doubled_schema = "p int, doubled long, made_on string, processed_on string"
for target in ("sink", "parquet"):
    stream = spark.readStream.format(name).option("maxRecordsPerTrigger", 150).load()
    writer = rss.map_partitions(stream, doubling, doubled_schema).writeStream
    writer = (
        writer.format(sink)
        if target == "sink"
        else writer.format("parquet").option("path", f"{work}/doubled")
    )
    query = writer.option("checkpointLocation", f"{work}/{target}_ck").trigger(availableNow=True).start()
    query.awaitTermination(300)
expected = sorted((p, 2 * o) for p in range(2) for o in range(200))
landed = [tuple(r) for f in audits.iterdir() for r in json.loads(f.read_text())]
written = [tuple(r) for r in spark.read.parquet(f"{work}/doubled").collect()]
outcome["partitioned"] = {
    target: {
        "each_once": sorted((p, d) for p, d, _, _ in rows) == expected,
        "made_on": sorted({made for _, _, made, _ in rows}),
        "processed_on": sorted({processed for _, _, _, processed in rows}),
    }
    for target, rows in (("sink", landed), ("parquet", written))
}

# A JVM factory's partitions, read in the executors' JVMs
query = (
    spark.readStream.format("reactive-streams")
    .option("factory", "io.github.rspy.spark.testing.OffsetPartitions")
    .option("maxRecordsPerTrigger", 1500)
    .schema("p INT, offset LONG, pid LONG")
    .load()
    .writeStream.format("parquet")
    .option("path", f"{work}/jvm_out")
    .option("checkpointLocation", f"{work}/jvm_ck")
    .trigger(availableNow=True)
    .start()
)
query.awaitTermination(300)
made = spark.read.parquet(f"{work}/jvm_out")
outcome["jvm_factory"] = [made.count(), made.select("p", "offset").distinct().count()]
outcome["bridge_modules_loaded"] = sorted(m for m in ("py4j", "jpype", "_jpype") if m in sys.modules)
outcome["own_channel_fell_back"] = [m for m in noted.messages if "no channel of our own" in m]
outcome["first_check_failed"] = [m for m in noted.messages if "first call's check failed" in m]
spark.stop()
print(json.dumps(outcome))
