"""Run in a subprocess by test_streaming.py: a query over a registered publisher in a classic
session with Spark's UI on, then what the UI shows of the scan's custom metrics: its REST API's
SQL executions and the HTML page of one of them. Prints them, as JSON.

    python ui_metrics_script.py WORK_FOLDER
"""

from __future__ import annotations

import json
import sys
from typing import Any
from urllib.request import urlopen

from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss

work = sys.argv[1]
builder = (
    SparkSession.builder.master("local[2]").config("spark.ui.enabled", "true").config("spark.ui.port", "0")
)
spark = rss.configure(builder).getOrCreate()
with rss.register_publisher(spark, "orders", rs.from_iterable((i,) for i in range(3_000))):
    query = (
        spark.readStream.format("reactive-streams")
        .option("publisher", "orders")
        .option("maxRecordsPerTrigger", 1_000)
        .schema("id LONG")
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", f"{work}/ck")
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)

ui, app = spark.sparkContext.uiWebUrl, spark.sparkContext.applicationId
executions: list[Any] = json.load(urlopen(f"{ui}/api/v1/applications/{app}/sql?details=true&length=100"))
scans = []
for execution in executions:
    for node in execution.get("nodes", []):
        if "reactive-streams" in node.get("nodeName", "") or "MicroBatchScan" in node.get("nodeName", ""):
            metrics = {m["name"]: m["value"] for m in node.get("metrics", [])}
            scans.append({"execution": execution["id"], "node": node["nodeName"], "metrics": metrics})
with_rows = [s for s in scans if any(k.startswith("reactive-streams:") for k in s["metrics"])]
page = ""
if with_rows:
    page = urlopen(f"{ui}/SQL/execution/?id={with_rows[-1]['execution']}").read().decode()
print(
    json.dumps(
        {
            "scans": scans,
            "page_names": [
                n for n in ("outstanding demand", "elements held", "elements emitted") if n in page
            ],
        }
    )
)
spark.stop()
