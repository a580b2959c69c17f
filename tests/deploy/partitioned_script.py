"""Run on the cluster's client host by test_cluster.py: classic PySpark with ``--master
spark://...``, the driver on the client host and the executors on the two worker hosts. A
partitioned source whose factory records, in each row, the address of the host that made it
(the executor's own, on the test subnet), read with Trigger.AvailableNow into Parquet, read
back. The outcome is a JSON line on stdout.

    python partitioned_script.py MASTER_URL MASTER_ADDRESS WORK_FOLDER
"""

from __future__ import annotations

import json
import sys
import time

from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss

master, master_address, work = sys.argv[1:4]
PARTITIONS, ROWS = 4, 500

spark = (
    rss.configure(SparkSession.builder.master(master).appName("partitioned-on-two-hosts"))
    .config("spark.executor.cores", "1")
    .config("spark.executor.memory", "1g")
    .config("spark.cores.max", "2")
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")

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
    return rs.from_iterable((partition, i, host) for i in range(offset, ROWS))


rss.register_source(spark, "hosts", made_on, PARTITIONS, "p int, i long, host string", latest=lambda p: ROWS)
query = (
    spark.readStream.format("hosts")
    .option("maxRecordsPerTrigger", 400)
    .load()
    .writeStream.format("parquet")
    .option("path", f"{work}/out")
    .option("checkpointLocation", f"{work}/checkpoint")
    .trigger(availableNow=True)
    .start()
)
ended = query.awaitTermination(300)
written = spark.read.parquet(f"{work}/out").collect()
print(
    json.dumps(
        {
            "ended": ended,
            "exception": str(query.exception()) if ended and query.exception() else None,
            "rows": sorted((r.p, r.i) for r in written),
            "hosts": sorted({r.host for r in written}),
            "executors": int(spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size()) - 1,
        }
    )
)
spark.stop()
