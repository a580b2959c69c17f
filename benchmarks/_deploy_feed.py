"""Run by deploy_cluster.py in a thin client, on the kit's client host or on the Connect
server's own host: a publisher of this client feeds the driver-side source over Spark Connect
(through the TLS proxy), into ``noop``. Prints a JSON line: the rows/s of each measured run
(rows over the query's wall time, start to end).

    python _deploy_feed.py CONNECT_URL ROWS RUNS CHECKPOINTS_FOLDER
"""

from __future__ import annotations

import json
import sys
import time

from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss

url, rows, runs, folder = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
spark = SparkSession.builder.remote(url).getOrCreate()
rates: list[float] = []
for run in range(runs + 1):  # the first unmeasured
    events = rs.from_iterable((i, f"e{i}") for i in range(rows))
    with rss.register_publisher(spark, f"feed{run}", events):
        started = time.perf_counter()
        query = (
            spark.readStream.format("reactive-streams")
            .option("publisher", f"feed{run}")
            .option("maxRecordsPerTrigger", 20_000)
            .schema("id LONG, name STRING")
            .load()
            .writeStream.format("noop")
            .option("checkpointLocation", f"{folder}/ck{run}-{time.time_ns()}")
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(600)
        elapsed = time.perf_counter() - started
        assert query.exception() is None, query.exception()
        assert sum(p.numInputRows for p in query.recentProgress) == rows
    if run:
        rates.append(rows / elapsed)
spark.stop()
print(json.dumps({"rates": rates}), flush=True)
