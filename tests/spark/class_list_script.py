"""The suite's Spark workload for its class-data-sharing archive (tests/spark_share.py): what a
classic session (``classic``) or a Connect server (``connect``) loads for the queries the tests
run, each JVM listing its classes (``SPARK_SUBMIT_OPTS=-XX:DumpLoadedClassList=...``). ``classic``
prints the driver's class path last."""

from __future__ import annotations

import sys
import time

import pyarrow as pa
from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss


def queries(spark: SparkSession) -> None:
    spark.range(1000).selectExpr("sum(id)", "count(*)").collect()
    frame = spark.createDataFrame([(1, "a", 1.5), (2, None, None)], "id LONG, name STRING, x DOUBLE")
    frame.groupBy("name").count().toArrow()
    frame.mapInArrow(lambda batches: (b for b in batches), frame.schema).collect()
    stream = spark.readStream.format("rate").option("rowsPerSecond", 100).load()
    query = stream.writeStream.format("memory").queryName(f"warm_{int(time.time())}").start()
    try:
        deadline = time.monotonic() + 60
        while query.lastProgress is None and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        query.stop()


def classic() -> None:
    builder = rss.configure(SparkSession.builder.master("local[2]")).config("spark.ui.enabled", "false")
    spark = builder.getOrCreate()
    queries(spark)
    rows = rs.from_iterable([(i, str(i)) for i in range(100)])
    rss.dataframe_from_publisher(spark, rows, "id LONG, s STRING").count()
    pa.table({"id": [1]})
    print(spark.sparkContext._jvm.java.lang.System.getProperty("java.class.path"))
    spark.stop()


def connect() -> None:
    from reactive_streams.spark.connect_server import ConnectServer

    server = ConnectServer.start(0, master="local[2]")
    try:
        spark = SparkSession.builder.remote(server.url).create()
        queries(spark)
        spark.stop()
    finally:
        server.stop()


if __name__ == "__main__":
    {"classic": classic, "connect": connect}[sys.argv[1]]()
