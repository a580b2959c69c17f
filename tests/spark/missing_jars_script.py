"""Run in a subprocess by test_missing_jars.py: every entry point that needs the library's jars,
on a session built without `configure`, then, after ``spark.stop()``, on a session built with it
in the same process (whose JVM started without them). Prints each one's error, as JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss
from reactive_streams.jvm import Bridge


def errors(spark: Any) -> dict[str, str]:
    df = spark.range(3)
    calls: dict[str, Callable[[], object]] = {
        "dataframe_from_publisher()": lambda: rss.dataframe_from_publisher(spark, rs.just((1,)), "id long"),
        "publisher_from_dataframe()": lambda: rss.publisher_from_dataframe(df),
        "arrow_batches_from_dataframe()": lambda: rss.arrow_batches_from_dataframe(df),
        "jvm_publisher()": lambda: rss.jvm_publisher(spark, "any"),
        "reactive_streams.spark.bridge()": lambda: rss.bridge(spark),
        "register_publisher()": lambda: rss.register_publisher(spark, "p", rs.just(1)),
        "register_subscriber()": lambda: rss.register_subscriber(spark, "s", rs.SyncSubscriber()),
        "Bridge.spark()": lambda: Bridge.spark(spark),
    }
    found = {}
    for name, call in calls.items():
        try:
            call()
            found[name] = "no error"
        except Exception as exc:
            found[name] = f"{type(exc).__name__}: {exc}"
    return found


def session(builder: Any) -> Any:
    spark = builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    spark.sparkContext.setLogLevel("OFF")
    return spark


spark = session(SparkSession.builder)
unconfigured = errors(spark)
spark.stop()
spark = session(rss.configure(SparkSession.builder))
restarted = errors(spark)
spark.stop()
print(json.dumps({"unconfigured": unconfigured, "restarted": restarted}))
