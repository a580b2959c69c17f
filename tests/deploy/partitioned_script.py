"""Run on the cluster's client host by test_cluster.py and test_faults.py: classic PySpark with
``--master spark://...``, the driver on the client host and the executors on the two worker
hosts. A partitioned source whose factory records, in each row, the address of the host that
made it (the executor's own, on the test subnet), read with Trigger.AvailableNow into Parquet in
small micro-batches, read back. The outcome is a JSON line on stdout.

With a victim's address, the test kills that worker host while its tasks run (its processes
SIGKILLed, its link cut: the driver hears nothing). Its factory, once past the first rows, says
so (a file the test waits for) and then works slowly, so that the host dies with tasks under
way; the driver drops its executor after ``spark.network.timeout`` (8 s here), and the tasks
rerun on the other worker's.

    python partitioned_script.py MASTER_URL MASTER_ADDRESS WORK_FOLDER [VICTIM_ADDRESS]
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from pyspark.errors import StreamingQueryException
from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss

master, master_address, work = sys.argv[1:4]
victim = sys.argv[4] if len(sys.argv) > 4 else None
PARTITIONS, ROWS = 4, 400

builder = (
    rss.configure(SparkSession.builder.master(master).appName("partitioned-on-two-hosts"))
    .config("spark.executor.cores", "1")
    .config("spark.executor.memory", "768m")
    .config("spark.cores.max", "2")
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
)
if victim:  # a host gone without a reset is found by heartbeats only
    builder = (
        builder.config("spark.executor.heartbeatInterval", "1s")
        .config("spark.network.timeout", "8s")
        .config("spark.network.timeoutInterval", "2s")
    )
spark = builder.getOrCreate()
spark.sparkContext.setLogLevel("OFF" if victim else "ERROR")

# Both executors registered (the driver's block manager and one per worker host)
deadline = time.monotonic() + 180
while spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() < 3 and time.monotonic() < deadline:
    time.sleep(0.5)


def made_on(partition: int, offset: int) -> rs.Publisher[tuple[int, int, str]]:
    """The partition's rows from ``offset``, each with the address this host reaches the master
    from (a UDP socket's own end: no packet is sent)."""
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

#: Spark's own limit, not the library's: a Python worker the driver starts (here the streaming
#: source's runner, as the query starts) must connect back within a fixed 10 s, which two shared
#: cores under the whole suite's load have missed. The query then fails before its first batch.
NOT_CONNECTED_BACK = "Python worker failed to connect back"


def run() -> Any:
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
    try:
        query.awaitTermination(600)
    except StreamingQueryException:
        pass  # read from query.exception() below
    return query


query, restarts = run(), 0
if query.exception() is not None and NOT_CONNECTED_BACK in str(query.exception()):
    print(f"restarting the query once: {NOT_CONNECTED_BACK}", file=sys.stderr)
    query, restarts = run(), 1  # once, from the checkpoint, as its user would: each row still once
ended = not query.isActive
written = spark.read.parquet(f"{work}/out").collect()
print(
    json.dumps(
        {
            "ended": ended,
            "restarts": restarts,
            "exception": str(query.exception()) if ended and query.exception() else None,
            "rows": sorted((r.p, r.i) for r in written),
            "hosts": sorted({r.host for r in written}),
            "late_rows_from": sorted({r.host for r in written if r.i >= 300}),
            "executors": int(spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size()) - 1,
        }
    )
)
spark.stop()
