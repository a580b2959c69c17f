"""The demo's pipeline over Spark Connect (``./run-demo --connect``), in an embedded Connect
server (``SparkSession.builder.remote("local[2]")``) with reactive-streams' server plugin.

A Connect client has no JVM gateway, so the JVM source is a publisher registered on the server
(the test-support registrar's ``longs``, a JVM publisher of 0..n-1) read with
``rss.jvm_publisher``; the rest is the classic demo's:

1. JVM publisher → Python map/filter under backpressure → a DataFrame on the server.
2. The DataFrame back out as Arrow batches, partitions computed as demand reaches them.
3. A streaming query fed by a Python publisher (``register_publisher``), writing each
   micro-batch to a Python subscriber (``register_subscriber``) that takes rows on demand.
"""

from __future__ import annotations

import glob
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss

ROOT = Path(__file__).resolve().parent.parent
ELEMENTS = 1_000_000
EVENTS = 500_000
REGISTRAR = "io.github.rspy.spark.testing.ConnectTestStreams"
LOGGING = Path(__file__).resolve().with_name("log4j2.properties")


class KindCounter(rs.Subscriber[Any]):
    """Counts rows by kind, requesting 10,000 at a time: each micro-batch's commit waits for it."""

    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()
        self.rows = 0
        self.done = threading.Event()
        self.error: BaseException | None = None
        self._subscription: rs.Subscription | None = None

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        self._subscription = subscription
        subscription.request(10_000)

    def on_next(self, row: Any) -> None:  # a pyspark.sql.Row
        self.kinds[row.kind] += 1
        self.rows += 1
        if self.rows % 10_000 == 0 and self._subscription is not None:
            self._subscription.request(10_000)

    def on_error(self, exc: BaseException) -> None:
        self.error = exc
        self.done.set()

    def on_complete(self) -> None:
        self.done.set()


def main() -> None:
    support = glob.glob(str(ROOT / "build" / "test-jars" / "reactive-streams-py-spark-test-support.jar"))
    if not support:
        raise SystemExit("build/test-jars has no test-support jar: run ./run-demo (it builds the JVM side)")
    start = time.perf_counter()
    spark = (
        rss.configure(
            SparkSession.builder.remote("local[2]").appName("reactive-streams demo, Connect"), support
        )
        .config("spark.rspy.connect.registrars", REGISTRAR)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={LOGGING.as_uri()}")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
    print(
        f"reactive-streams {rs.__version__} on Spark {spark.version}, over Spark Connect "
        f"(an embedded server with our plugin, up in {time.perf_counter() - start:.1f} s)"
    )

    # 1: a JVM publisher on the server, processed in Python under backpressure, back to a DataFrame.
    readings = (
        rss.jvm_publisher(spark, "longs", str(ELEMENTS))
        .map(lambda i: (i, i % 97, (i * 7919) % 1000 / 10.0))  # (id, sensor, value)
        .filter(lambda reading: reading[2] < 90.0)
    )
    start = time.perf_counter()
    df = rss.dataframe_from_publisher(spark, readings, "id long, sensor int, value double", chunk_size=20_000)
    kept = df.count()
    elapsed = time.perf_counter() - start
    print(
        f"1. the server's JVM publisher of {ELEMENTS:,} longs → Python map/filter → DataFrame: {kept:,} rows "
        f"in {elapsed:.1f} s ({ELEMENTS / elapsed:,.0f} elements/s through Python)"
    )
    top = df.groupBy("sensor").avg("value").orderBy("avg(value)", ascending=False).first()
    assert top is not None
    print(f"   hottest sensor: {top['sensor']} (average {top['avg(value)']:.2f})")

    # 2: the DataFrame back out as Arrow batches, partitions computed as demand reaches them.
    start = time.perf_counter()
    rows = sum(batch.num_rows for batch in rss.arrow_batches_from_dataframe(df).iterate(prefetch=4))
    elapsed = time.perf_counter() - start
    print(
        f"2. DataFrame → Arrow-batch publisher: {rows:,} rows in {elapsed:.2f} s "
        f"({rows / elapsed:,.0f} rows/s)"
    )

    # 3: a streaming query from a Python publisher to a Python subscriber, both in this client.
    streaming(spark)
    spark.stop()


def streaming(spark: Any) -> None:
    events = rs.from_iterable((i, f"event-{i % 10}") for i in range(EVENTS))
    counter = KindCounter()
    with (
        rss.register_publisher(spark, "demo-events", events),
        rss.register_subscriber(spark, "demo-kinds", counter),
        tempfile.TemporaryDirectory() as checkpoint,
    ):
        start = time.perf_counter()
        query = (
            spark.readStream.format("reactive-streams")
            .option("publisher", "demo-events")
            .option("maxRecordsPerTrigger", 50_000)
            .schema("id long, kind string")
            .load()
            .writeStream.format("reactive-streams")
            .option("subscriber", "demo-kinds")
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)  # every event the publisher has, then the query ends
            .start()
        )
        query.awaitTermination()
        counter.done.wait(60)
        elapsed = time.perf_counter() - start
        batches = [p.numInputRows for p in query.recentProgress if p.numInputRows]
        source = rss.stream_stats(spark, "demo-events")
        sink = rss.stream_stats(spark, "demo-kinds")
    if counter.error is not None:
        raise counter.error
    assert counter.rows == EVENTS, counter.rows
    print(
        f"3. streaming query, Python publisher → server → Python subscriber (Trigger.AvailableNow): "
        f"{EVENTS:,} events in {len(batches)} micro-batches of at most {max(batches):,} rows, "
        f"{EVENTS / elapsed:,.0f} events/s; the source held at most {source['max_buffered']:,} "
        f"(bound: 50,000 × (1 + prefetch 1)), the client pushed {source['elements']:,} for "
        f"{source['requested']:,} requested; the subscriber asked for {sink['requested']:,} in steps of "
        f"10,000; by kind: {sorted(counter.kinds.items())[:3]} ..."
    )
