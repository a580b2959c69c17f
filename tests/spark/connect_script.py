"""Run in a subprocess by test_connect.py: a Spark Connect session is refused at once."""

from __future__ import annotations

import json

from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss
from reactive_streams.jvm import Bridge

spark = SparkSession.builder.remote("local[1]").getOrCreate()
outcome: dict[str, str] = {"session": type(spark).__module__}
for name, attempt in {
    "bridge": lambda: Bridge.spark(spark),
    "publisher_from_dataframe": lambda: rss.publisher_from_dataframe(spark.range(3)),
    "dataframe_from_publisher": lambda: rss.dataframe_from_publisher(spark, rs.from_iterable([1]), "v long"),
}.items():
    try:
        attempt()
        outcome[name] = "accepted"
    except rs.ReactiveStreamsError as exc:
        outcome[name] = str(exc)
spark.stop()
print(json.dumps(outcome))
