"""Run on the cluster's client host by test_faults.py: classic PySpark with `--master spark://`,
a partitioned source read into Parquet in small micro-batches, while the test kills one worker
host (its processes SIGKILLed, its link cut: the driver hears nothing). The driver gives up on
that host's executor after `spark.network.timeout`, the tasks rerun on the other worker's, and
the query goes on. The outcome is a JSON line on stdout.

    python worker_lost_script.py MASTER_URL MASTER_ADDRESS VICTIM_ADDRESS WORK_FOLDER
"""

from __future__ import annotations

import json
import os
import sys
import time

from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss

master, master_address, victim, work = sys.argv[1:5]
PARTITIONS, ROWS = 4, 400

spark = (
    rss.configure(SparkSession.builder.master(master).appName("a-worker-host-lost"))
    .config("spark.executor.cores", "1")
    .config("spark.executor.memory", "768m")
    .config("spark.cores.max", "2")
    .config("spark.executor.heartbeatInterval", "1s")
    .config("spark.network.timeout", "8s")  # a host gone without a reset: found by heartbeats
    .config("spark.network.timeoutInterval", "2s")
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("OFF")
deadline = time.monotonic() + 180
while spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() < 3 and time.monotonic() < deadline:
    time.sleep(0.5)


def made_on(partition: int, offset: int) -> rs.Publisher[tuple[int, int, str]]:
    """The partition's rows from ``offset``, each with this host's address; on the victim's host,
    once past the first rows, it says so (a file the test waits for) and then works slowly, so
    that the host dies with tasks under way."""
    import socket

    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.connect((master_address, 7077))
    host = probe.getsockname()[0]
    probe.close()

    def row(i: int) -> tuple[int, int, str]:
        if host == victim and i >= 100:
            open(os.path.join(work, "victim-busy"), "w").close()
            time.sleep(0.05)
        return (partition, i, host)

    return rs.from_iterable(range(offset, ROWS)).map(row)


rss.register_source(spark, "hosts", made_on, PARTITIONS, "p int, i long, host string", latest=lambda p: ROWS)
query = (
    spark.readStream.format("hosts")
    .option("maxRecordsPerTrigger", 200)
    .load()
    .writeStream.format("parquet")
    .option("path", f"{work}/out")
    .option("checkpointLocation", f"{work}/checkpoint")
    .trigger(availableNow=True)
    .start()
)
ended = query.awaitTermination(600)
written = spark.read.parquet(f"{work}/out").collect()
print(
    json.dumps(
        {
            "ended": ended,
            "exception": str(query.exception()) if ended and query.exception() else None,
            "rows": sorted((r.p, r.i) for r in written),
            "hosts": sorted({r.host for r in written}),
            "after_the_loss": sorted({r.host for r in written if r.i >= 300}),
        }
    )
)
spark.stop()
