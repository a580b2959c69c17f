"""Run in a subprocess by test_scala.py: docs/spark.md's Scala ⇄ PySpark example, in a session built
with ``rss.configure`` alone (only the jars that page names: no Pekko, no test jars). Prints the
outcome as a JSON line on stdout. Its working directory is the table's warehouse."""

from __future__ import annotations

import json
from typing import Any

from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss

spark = rss.configure(SparkSession.builder.master("local[1]")).getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
bridge = rss.bridge(spark)
outcome: dict[str, Any] = {"spark_jars": spark.conf.get("spark.jars").split(",")}
try:
    spark._jvm.java.lang.Class.forName("org.apache.pekko.actor.ActorSystem")
    outcome["pekko_on_classpath"] = True
except Exception:
    outcome["pekko_on_classpath"] = False

# The page's block, as written.
df = spark.range(0, 5).selectExpr("id", "concat('name ', CAST(id AS STRING)) AS name")
pairs = [(i, f"name {i}") for i in range(3000)]

scala = spark._jvm.io.github.rspy.spark.ScalaStreams
rows = bridge.from_jvm(scala.datasetRows(df._jdf))  # Scala → Python
writer = scala.tableWriter(spark._jsparkSession, "t", "id long, name string", 1000)
bridge.to_jvm(rs.from_iterable(pairs)).subscribe(writer)  # Python → Scala → table
writer.completion().get()

outcome["rows"] = [[row.id, row.name] for row in rs.iterate(rows)]  # pyspark.sql.Row
outcome["written"] = int(writer.completion().get())
outcome["table"] = sorted([row.id, row.name] for row in spark.table("t").collect())
print(json.dumps(outcome))
spark.stop()
