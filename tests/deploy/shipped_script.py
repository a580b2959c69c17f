"""Run on the cluster's client host by test_shipped_python.py: classic PySpark with
``--master spark://...``, the driver on the client host with its own Python, the executors on
the two worker hosts running the Python of an archive the application ships
(``spark.archives``, ``PYSPARK_PYTHON=./environment/bin/python``). A partitioned source's
rows say where they were made: the host, the worker's ``sys.prefix`` and the file its
``reactive_streams`` came from. The outcome is a JSON line on stdout.

    python shipped_script.py MASTER_URL MASTER_ADDRESS ARCHIVE WORK_FOLDER
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss

master, master_address, archive, work = sys.argv[1:5]
PARTITIONS, ROWS = 4, 50
# What the executors start, relative to their work folder (PySpark reads this when the
# session's SparkContext starts, not spark.pyspark.python). The driver's own Python workers (the
# data source's planning) start it too, relative to the driver's folder: the same archive is
# unpacked there, as docs/deploy.md says.
os.chdir(work)
os.makedirs("environment")
subprocess.run(["tar", "-xzf", archive, "-C", "environment"], check=True)
os.environ["PYSPARK_PYTHON"] = "./environment/bin/python"

spark = (
    rss.configure(SparkSession.builder.master(master).appName("shipped-python"))
    .config("spark.archives", f"{archive}#environment")
    .config("spark.executor.cores", "1")
    .config("spark.executor.memory", "768m")
    .config("spark.cores.max", "2")
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
deadline = time.monotonic() + 180
while spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() < 3 and time.monotonic() < deadline:
    time.sleep(0.5)


def made_where(partition: int, offset: int) -> rs.Publisher[tuple[int, int, str, str, str]]:
    import socket
    import sys

    import reactive_streams

    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.connect((master_address, 7077))
    host = probe.getsockname()[0]
    probe.close()
    return rs.from_iterable(
        (partition, i, host, sys.prefix, reactive_streams.__file__) for i in range(offset, ROWS)
    )


rss.register_source(
    spark,
    "shipped",
    made_where,
    PARTITIONS,
    "p int, i long, host string, prefix string, library string",
    latest=lambda p: ROWS,
)
query = (
    spark.readStream.format("shipped")
    .load()
    .writeStream.format("parquet")
    .option("path", f"{work}/out")
    .option("checkpointLocation", f"{work}/checkpoint")
    .trigger(availableNow=True)
    .start()
)
query.awaitTermination(600)
written = spark.read.parquet(f"{work}/out").collect()
print(
    json.dumps(
        {
            "exception": str(query.exception()) if query.exception() else None,
            "rows": sorted((r.p, r.i) for r in written),
            "hosts": sorted({r.host for r in written}),
            "prefixes": sorted({r.prefix for r in written}),
            "libraries": sorted({r.library for r in written}),
            "driver_prefix": sys.prefix,
        }
    )
)
spark.stop()
