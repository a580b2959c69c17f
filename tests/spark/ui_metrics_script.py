"""Run in a subprocess by test_streaming.py: a query over a registered publisher in a classic
session with Spark's UI on, then what the UI shows of the scan's custom metrics: its REST API's
SQL executions, the HTML page of one of them, and that page in a headless browser once its
scripts have drawn the plan and a click on the scan's node has opened its metrics. Prints
them, as JSON.

    python ui_metrics_script.py WORK_FOLDER TESTS_FOLDER
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
sys.path.insert(0, sys.argv[2])
from browser import Browser  # noqa: E402 (the tests' folder, given)

#: The rows of the metrics table the UI shows beside the plan for the node clicked.
SHOWN_METRICS = """Array.from(document.querySelectorAll('tr'))
  .map(r => Array.from(r.cells).map(c => c.innerText.trim()))
  .filter(c => c.length === 2 && c[0].startsWith('reactive-streams:'))"""
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
page, before_click, shown = "", [], []
if with_rows:
    url = f"{ui}/SQL/execution/?id={with_rows[-1]['execution']}"
    page = urlopen(url).read().decode()
    with Browser.start() as browser:
        tab = browser.open(url)
        node = tab.wait_for(
            "(Array.from(document.querySelectorAll('svg g.node'))"
            ".find(n => n.textContent.includes('MicroBatchScan')) || {}).id"
        )
        before_click = tab.evaluate(SHOWN_METRICS)
        tab.click(f"#{node}")
        shown = tab.wait_for(f"(rows => rows.length ? rows : null)({SHOWN_METRICS})")
print(
    json.dumps(
        {
            "scans": scans,
            "page_names": [
                n for n in ("outstanding demand", "elements held", "elements emitted") if n in page
            ],
            "last_scan": with_rows[-1]["metrics"] if with_rows else {},
            "browser_before_click": before_click,
            "browser_after_click": dict(shown),
        }
    )
)
spark.stop()
