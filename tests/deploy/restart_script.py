"""Run on the cluster's client host by test_restart.py, in a thin client: a partitioned source
(`register_source`) into Parquet with a checkpoint every host sees; once some batches are
committed the test restarts the Connect server (Spark's own stop and start scripts), which ends
the query with the session; a new session registers the source again and restarts the query
from the same checkpoint. What the restarted query started from, and every row's count, are a
JSON line on stdout.

    python restart_script.py CONNECT_URL WORK_FOLDER
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss

url, work = sys.argv[1], Path(sys.argv[2])
PARTITIONS, END = 2, 3000
outcome: dict[str, Any] = {}


def source(partition: int, start: int) -> rs.Publisher[Any]:
    return rs.from_iterable((partition, offset) for offset in range(start, END))


def start_query(spark: Any, trigger: dict[str, Any]) -> Any:
    rss.register_source(spark, "numbers", source, PARTITIONS, "p int, offset long", latest=lambda p: END)
    return (
        spark.readStream.format("numbers")
        .option("maxRecordsPerTrigger", 200)
        .load()
        .writeStream.format("parquet")
        .option("path", str(work / "out"))
        .option("checkpointLocation", str(work / "ck"))
        .trigger(**trigger)
        .start()
    )


spark = SparkSession.builder.remote(url).getOrCreate()
query = start_query(spark, {"processingTime": "500 milliseconds"})
deadline = time.monotonic() + 180
while not ((work / "ck" / "commits").exists() and len(list((work / "ck" / "commits").glob("[0-9]*"))) >= 3):
    if time.monotonic() > deadline or not query.isActive:
        raise SystemExit(f"no three committed batches: {query.exception()}")
    time.sleep(0.2)
(work / "ready").write_text("")

deadline = time.monotonic() + 180
while not (work / "restarted").exists() and time.monotonic() < deadline:
    time.sleep(0.1)
outcome["committed_before"] = sorted(int(p.name) for p in (work / "ck" / "commits").glob("[0-9]*"))

# The old session is still PySpark's active one, which its functions use (F.col asks it for a
# conf): stopped first, as docs/deploy.md tells, the new one becomes active.
try:
    spark.stop()
except Exception as exc:  # its server is not the one that made it
    outcome["old_session_stop"] = type(exc).__name__
again = SparkSession.builder.remote(url).getOrCreate()
query = start_query(again, {"availableNow": True})
query.awaitTermination(300)
outcome["exception"] = None if query.exception() is None else str(query.exception())
first = query.recentProgress[0]
outcome["first_batch_again"] = first["batchId"]
start = first["sources"][0]["startOffset"]
outcome["start_offset_again"] = json.loads(start) if isinstance(start, str) else start
rows = again.read.parquet(str(work / "out")).groupBy("p", "offset").count()
counts = [tuple(r) for r in rows.collect()]
outcome["rows"] = len(counts)
outcome["repeated"] = sorted([p, o] for p, o, n in counts if n != 1)[:10]
outcome["missing"] = PARTITIONS * END - len(counts)
again.stop()
print(json.dumps(outcome), flush=True)
