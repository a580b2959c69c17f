"""Run in a subprocess by test_dataframe.py: a publisher of 1.5 million rows (long, double,
12-character string, about 45 MB as Arrow) becomes a DataFrame with ``dataframe_from_publisher``
and is counted, then the same rows through PySpark's own ``createDataFrame(pyarrow.Table)``, the
driver logging at WARN. Each is framed on stderr by ``PHASE <name> BEGIN`` / ``END``, so that the
test sees which one Spark warned about ("Stage ... contains a task of very large size"); the
outcome is a JSON line on stdout."""

from __future__ import annotations

import json
import sys

import pyarrow as pa
from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss

ROWS = 1_500_000
spark = (
    rss.configure(SparkSession.builder.master("local[2]"), sys.argv[1:])
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .config("spark.sql.execution.arrow.pyspark.enabled", "true")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("WARN")


def phase(name: str, edge: str) -> None:
    sys.stderr.flush()
    print(f"PHASE {name} {edge}", file=sys.stderr, flush=True)


rows = ((i, i * 0.5, f"name-{i:07d}") for i in range(ROWS))
phase("publisher", "BEGIN")
df = rss.dataframe_from_publisher(spark, rs.from_iterable(rows), "id long, x double, name string", 50_000)
count = df.count()
total = df.groupBy().sum("id").first()[0]
chunks = spark.sparkContext._jvm.io.github.rspy.spark.dataframe.ArrowChunks
storage = [
    list(chunks.storedBlocks(int(rdd_id)))  # blocks, bytes in memory, on disk
    for rdd_id, rdd in spark.sparkContext._jsc.getPersistentRDDs().items()
    if rdd.rdd().getClass().getSimpleName() == "StoredBatches"
]
partitions = df.rdd.getNumPartitions()
phase("publisher", "END")

table = pa.table(
    {
        "id": pa.array(range(ROWS), pa.int64()),
        "x": pa.array([i * 0.5 for i in range(ROWS)], pa.float64()),
        "name": pa.array([f"name-{i:07d}" for i in range(ROWS)], pa.string()),
    }
)
phase("pyspark", "BEGIN")
anchor = spark.createDataFrame(table).count()
phase("pyspark", "END")
print(
    json.dumps({"count": count, "sum": total, "storage": storage, "partitions": partitions, "anchor": anchor})
)
spark.stop()
