"""Run in a subprocess by test_arrow_memory.py: ``STOPS`` queries that read a Python publisher
through the ``reactive-streams`` source, each stopped at a random moment of its batches (0 to
``MOST`` seconds after its first progress, or before it), for what the driver logs. The
queries write to the ``reactive-streams`` sink, into a JVM subscriber that keeps nothing: its
ordinary stop logs nothing of its own (Spark's ``noop`` sink logs ``is aborting`` ERRORs for every
stopped write). The stops are framed on stderr by ``PHASE stops BEGIN`` / ``PHASE stops END``;
the outcome is a JSON line on stdout.

    python source_stop_script.py STOPS MOST SEED JAR...
"""

from __future__ import annotations

import itertools
import json
import random
import sys
import tempfile
import time

from pyspark.sql import SparkSession
from stopped import wait_until_stopped_and_quiet  # beside this script, which runs as a file

import reactive_streams as rs
from reactive_streams import spark as rss

STOPS, MOST, SEED = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
DATA = [(i, f"name {i % 1000}") for i in range(20_000)]


def main() -> None:
    spark = (
        rss.configure(SparkSession.builder.master("local[2]"), sys.argv[4:])
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("WARN")
    counting = spark._jvm.io.github.rspy.bridge.testing.CountingSubscriber
    chance = random.Random(SEED)
    stopped_after: list[float] = []
    print("PHASE stops BEGIN", file=sys.stderr, flush=True)
    for n in range(STOPS):
        publisher, subscriber = f"stop_source_{n}", f"stop_sink_{n}"
        rss.register_publisher(spark, publisher, rs.from_iterable(itertools.cycle(DATA)))
        rss.register_subscriber(spark, subscriber, counting(1 << 40))
        query = (
            spark.readStream.format("reactive-streams")
            .option("publisher", publisher)
            .option("maxRecordsPerTrigger", chance.choice([1_000, 10_000, 50_000]))
            .schema("id LONG, name STRING")
            .load()
            .writeStream.format("reactive-streams")
            .option("subscriber", subscriber)
            .option("checkpointLocation", tempfile.mkdtemp())
            .start()
        )
        if chance.random() < 0.8:  # most stops fall inside the batches, a few before the first
            deadline = time.monotonic() + 30
            while query.lastProgress is None and time.monotonic() < deadline:
                time.sleep(0.02)
        wait = chance.uniform(0, MOST)
        time.sleep(wait)
        stopped_after.append(round(wait, 3))
        query.stop()
        wait_until_stopped_and_quiet(spark, query)
        rss.unregister(spark, publisher)
        rss.unregister(spark, subscriber)
    print("PHASE stops END", file=sys.stderr, flush=True)
    registry = spark._jvm.io.github.rspy.spark.StreamRegistry
    outcome = {
        "stops": len(stopped_after),
        "live_broadcasts": int(registry.liveSourceBroadcasts()),
        "arrow_bytes": int(spark._jvm.io.github.rspy.bridge.BridgeRuntime.jvmArrowAllocatedBytes()),
    }
    print(json.dumps(outcome), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
