"""Run by deploy_cluster.py on the kit's client host: classic PySpark with ``--master spark://...``
and ``spark.cores.max`` executors of one core each (spread over the worker hosts, Spark's
default), reading a partitioned source whose rows each cost some Python work, into ``noop``.
Prints a JSON line: the rows/s of each measured run (rows over the micro-batch's ``addBatch``
time) and the hosts whose executors ran.

    python _deploy_partitioned.py MASTER_URL CORES ROWS_PER_PARTITION RUNS
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss

master, cores, rows, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
PARTITIONS = 4

spark = (
    rss.configure(SparkSession.builder.master(master).appName(f"scale-out-{cores}"))
    .config("spark.executor.cores", "1")
    .config("spark.executor.memory", "768m")
    .config("spark.cores.max", str(cores))
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
deadline = time.monotonic() + 180
while spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() < cores + 1:
    assert time.monotonic() < deadline, "the executors did not register"
    time.sleep(0.5)
status = spark.sparkContext._jsc.sc().getExecutorMemoryStatus()
hosts = sorted({k.rsplit(":", 1)[0] for k in str(status.keys().mkString(",")).split(",")})


def worked(partition: int, offset: int) -> rs.Publisher[tuple[int, int, str]]:
    """The partition's rows from ``offset``, each made with some Python work (a digest), as a
    producer that parses or decodes does."""
    import hashlib

    def row(i: int) -> tuple[int, int, str]:
        digest = str(i).encode()
        for _ in range(8):
            digest = hashlib.sha256(digest).digest()
        return partition, i, digest.hex()

    return rs.from_iterable(row(i) for i in range(offset, rows))


rss.register_source(
    spark, "worked", worked, PARTITIONS, "p int, offset long, digest string", latest=lambda p: rows
)
rates: list[float] = []
for run in range(runs + 1):  # the first unmeasured: the executors' Python workers start
    query = (
        spark.readStream.format("worked")
        .option("maxRecordsPerTrigger", PARTITIONS * rows)
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", f"/tmp/scale-out-{cores}-{run}-{time.time_ns()}")
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(600)
    assert query.exception() is None, query.exception()
    progress: list[dict[str, Any]] = [p for p in query.recentProgress if p["numInputRows"]]
    assert sum(p["numInputRows"] for p in progress) == PARTITIONS * rows, progress
    seconds = sum(p["durationMs"]["addBatch"] for p in progress) / 1000
    if run:
        rates.append(PARTITIONS * rows / seconds)
spark.stop()
print(json.dumps({"rates": rates, "hosts": hosts}), flush=True)
