"""The demo the README's first command runs: Reactive Streams between the JVM, Python and
Spark, end to end, in an embedded local Spark (no cluster).

1. A JVM source (Reactor's Flux, in Spark's own JVM) is seen from Python through the bridge.
2. Python processes it under backpressure (map, filter, batch), never buffering more than it
   asked for.
3. The result goes back into Spark as a DataFrame, and as a Structured Streaming query fed by a
   publisher (whose micro-batches take only what they can), run with Trigger.AvailableNow so
   that it ends with its input.
With ``--connect`` it runs the same pipeline over an embedded Spark Connect server instead
(examples/connect_demo.py). It prints throughput and the largest buffers seen on each side;
Spark's own logging is kept to errors (examples/log4j2.properties) and its progress bars off.
"""

from __future__ import annotations

import glob
import sys
import tempfile
import time
from pathlib import Path

from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss
from reactive_streams.jvm import Bridge

ROOT = Path(__file__).resolve().parent.parent
ELEMENTS = 1_000_000
EVENTS = 1_000_000
LOGGING = Path(__file__).resolve().with_name("log4j2.properties")


def main() -> None:
    reactor = sorted(glob.glob(str(ROOT / "build" / "test-jars" / "reactor-core-*.jar")))
    if not reactor:
        sys.exit("build/test-jars has no Reactor jar: run ./run-demo (it builds the JVM side first)")
    spark = (
        rss.configure(SparkSession.builder.master("local[2]").appName("reactive-streams demo"), reactor)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={LOGGING.as_uri()}")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    bridge = rss.bridge(spark)  # the session's own bridge, which every rss function shares
    flux = bridge.jvm.reactor.core.publisher.Flux
    print(f"reactive-streams {rs.__version__} on Spark {spark.version}, in Spark's own Py4J gateway")

    # 1 + 2: a JVM publisher, processed in Python under backpressure.
    readings = (
        bridge.from_jvm(flux.range(0, ELEMENTS))
        .map(lambda i: (i, i % 97, (i * 7919) % 1000 / 10.0))  # (id, sensor, value)
        .filter(lambda reading: reading[2] < 90.0)
    )

    # 3a: back into Spark as a DataFrame, consumed in chunks of 20,000.
    start = time.perf_counter()
    df = rss.dataframe_from_publisher(spark, readings, "id long, sensor int, value double", chunk_size=20_000)
    kept = df.count()
    elapsed = time.perf_counter() - start
    print(
        f"1. Flux.range({ELEMENTS:,}) → Python map/filter → DataFrame: {kept:,} rows in {elapsed:.1f} s "
        f"({ELEMENTS / elapsed:,.0f} elements/s through Python)"
    )
    top = df.groupBy("sensor").avg("value").orderBy("avg(value)", ascending=False).first()
    print(f"   hottest sensor: {top['sensor']} (average {top['avg(value)']:.2f})")

    # 3b: the DataFrame back out as a publisher, Arrow batches, demand-driven.
    start = time.perf_counter()
    rows = sum(batch.num_rows for batch in rss.arrow_batches_from_dataframe(df).iterate(prefetch=4))
    elapsed = time.perf_counter() - start
    print(
        f"2. DataFrame → Arrow-batch publisher: {rows:,} rows in {elapsed:.2f} s "
        f"({rows / elapsed:,.0f} rows/s)"
    )

    # 3c: a streaming query fed by a publisher, micro-batches of at most 5,000.
    streaming(spark, bridge)

    print(
        f"Largest buffer seen: JVM side {int(bridge.runtime.maxQueued()):,} elements, Python side "
        f"{bridge.max_buffered:,} (the demand signalled was at most 20,000 per chunk)"
    )
    spark.stop()  # closes the session's bridge too


def streaming(spark: SparkSession, bridge: Bridge) -> None:
    flux = bridge.jvm.reactor.core.publisher.Flux
    events = bridge.from_jvm(flux.range(0, EVENTS)).map(lambda i: (i, f"event-{i % 10}"))
    with rss.register_publisher(spark, "demo-events", events), tempfile.TemporaryDirectory() as checkpoint:
        start = time.perf_counter()
        query = (
            spark.readStream.format("reactive-streams")
            .option("publisher", "demo-events")
            .option("maxRecordsPerTrigger", 100_000)
            .schema("id long, kind string")
            .load()
            .groupBy("kind")
            .count()
            .writeStream.outputMode("complete")
            .format("memory")
            .queryName("demo_counts")
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)  # every event the publisher has, then the query ends
            .start()
        )
        query.awaitTermination()
        elapsed = time.perf_counter() - start
        batches = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
        held = rss.stream_stats(spark, "demo-events")["max_buffered"]
    counts = sorted((r["kind"], r["count"]) for r in spark.table("demo_counts").collect())
    assert sum(n for _, n in counts) == EVENTS, counts
    print(
        f"3. streaming query over a publisher (Trigger.AvailableNow): {EVENTS:,} events in {len(batches)} "
        f"micro-batches of at most {max(batches):,} rows, {EVENTS / elapsed:,.0f} events/s; the source held "
        f"at most {held:,} (bound: 100,000 × (1 + prefetch 1)); counts by kind: {counts[:3]} ..."
    )


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="The reactive-streams demo, in a local Spark.")
    parser.add_argument("--connect", action="store_true", help="run it over an embedded Spark Connect server")
    if parser.parse_args().connect:
        from connect_demo import main as connect_main

        connect_main()
    else:
        main()
