"""Run in a subprocess by test_connect_embedded.py: an embedded Connect server (one per
process), with the plugin (``configure``) or without it (argv[1] == "plain")."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss
from reactive_streams.jvm import Bridge

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.support import Probe

builder = SparkSession.builder.remote("local[1]")
if sys.argv[1] != "plain":
    builder = rss.configure(builder)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    spark = builder.getOrCreate()
outcome: dict[str, object] = {"session": type(spark).__module__}
outcome["warnings"] = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
for name, attempt in {
    "bridge": lambda: Bridge.spark(spark),
    "register_publisher": lambda: rss.register_publisher(spark, "p", rs.from_iterable([1])),
}.items():
    try:
        attempt()
        outcome[name] = "accepted"
    except rs.ReactiveStreamsError as exc:
        outcome[name] = str(exc)
probe = Probe(initial=10)
rss.jvm_publisher(spark, "no-such-stream").subscribe(probe)
probe.await_done()
outcome["error"] = str(probe.error)
if sys.argv[1] != "plain":
    rows = list(rss.publisher_from_dataframe(spark.range(0, 1000, 1, 3)).iterate())
    outcome["rows"] = [r.id for r in rows] == list(range(1000))
    df = rss.dataframe_from_publisher(spark, rss.publisher_from_dataframe(spark.range(50)), "id long")
    outcome["round_trip"] = df.count()
    # Structured Streaming: the client's publisher into the source, the sink into its subscriber.
    import tempfile

    sink = Probe(initial=1 << 62)
    with (
        rss.register_publisher(spark, "numbers", rs.from_iterable([(i,) for i in range(2_500)])),
        rss.register_subscriber(spark, "rows", sink),
    ):
        query = (
            spark.readStream.format("reactive-streams")
            .option("publisher", "numbers")
            .option("maxRecordsPerTrigger", 1_000)
            .schema("id LONG")
            .load()
            .writeStream.format("reactive-streams")
            .option("subscriber", "rows")
            .option("checkpointLocation", tempfile.mkdtemp())
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(120)
        sink.await_done()
    outcome["streamed"] = [r.id for r in sink.items] == list(range(2_500)) and sink.completed
spark.stop()
print(json.dumps(outcome))
