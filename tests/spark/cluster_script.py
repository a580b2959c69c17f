"""Run in a subprocess by test_cluster.py: the Spark connectors on a real multi-JVM cluster,
``local-cluster[2,1,1024]`` (a master, two worker JVMs and their executors, beside the driver),
the library's jars shipped to the executors with ``spark.jars``:

- ``dataframe_from_publisher``: its blocks are in the driver's block manager, and the
  executors fetch them from there;
- the ``reactive-streams`` source: a Python publisher's rows read by the executors' tasks, and
  its Arrow batches, read as columns from broadcasts;
- the ``reactive-streams`` sink: rows the executors wrote, delivered to a Python subscriber
  on the driver, with their epochs, as rows and as Arrow batches.

The outcome is a JSON line on stdout.

    python cluster_script.py JARS...
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import threading
import time
from typing import Any

from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss

spark = (
    rss.configure(SparkSession.builder.master("local-cluster[2,1,1024]"), sys.argv[1:])
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .config("spark.executor.memory", "512m")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
outcome: dict[str, Any] = {}

# Executors: two JVMs other than the driver's, registered once their workers have started them
deadline = time.monotonic() + 180
while spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() < 3 and time.monotonic() < deadline:
    time.sleep(0.5)
outcome["block_managers"] = int(spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size())


def _executor_jvm() -> int:
    """In a Python worker: the pid of the JVM that runs its task (the parent of its daemon)."""
    import os

    with open(f"/proc/{os.getppid()}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[1])


# dataframe_from_publisher: 3 blocks of ~32 MiB (rows of ~1 KB), read by the executors
pad = "x" * 1000
rows = ((i, pad) for i in range(100_000))
df = rss.dataframe_from_publisher(spark, rs.from_iterable(rows), "id long, pad string", 5_000)
outcome["dataframe"] = {
    "partitions": df.rdd.getNumPartitions(),
    "count": df.count(),
    "sum": df.groupBy().sum("id").first()[0],
    "jvms": sorted(set(df.rdd.mapPartitions(lambda _: [_executor_jvm()]).collect())),
    "driver": int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()),
}

# The source: a Python publisher's rows, through the executors, into the memory sink
with tempfile.TemporaryDirectory() as checkpoint:
    with rss.register_publisher(spark, "numbers", rs.from_iterable((i, f"n{i}") for i in range(50_000))):
        query = (
            spark.readStream.format("reactive-streams")
            .option("publisher", "numbers")
            .option("maxRecordsPerTrigger", 10_000)
            .schema("id LONG, name STRING")
            .load()
            .writeStream.format("memory")
            .queryName("from_python")
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(300)
    got = spark.table("from_python").selectExpr("count(*)", "sum(id)", "count(distinct name)").first()
    sizes = [progress["numInputRows"] for progress in query.recentProgress if progress["numInputRows"]]
    outcome["source"] = {"rows": got[0], "sum": got[1], "names": got[2], "batch_sizes": sizes}


# The source fed Arrow batches: their streams reach the executors' tasks through broadcasts
import pyarrow as pa  # noqa: E402

batches = (
    pa.record_batch([pa.array(range(i, i + 5_000), pa.int64())], names=["id"])
    for i in range(0, 50_000, 5_000)
)
with tempfile.TemporaryDirectory() as checkpoint:
    with rss.register_publisher(spark, "arrow_numbers", rs.from_iterable(batches)):
        query = (
            spark.readStream.format("reactive-streams")
            .option("publisher", "arrow_numbers")
            .option("maxRecordsPerTrigger", 10_000)
            .schema("id LONG")
            .load()
            .writeStream.format("memory")
            .queryName("from_arrow")
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(300)
        plan = str(query._jsq.streamingQuery().lastExecution().executedPlan().toString())
    got = spark.table("from_arrow").selectExpr("count(*)", "sum(id)").first()
    outcome["arrow_source"] = {"rows": got[0], "sum": got[1], "columnar": "ColumnarToRow" in plan}


# The sink: rate-micro-batch on the executors -> a Python subscriber on the driver
class Epochs(rs.Subscriber[Any]):
    def __init__(self) -> None:
        self.seen: list[tuple[int, int]] = []
        self.enough = threading.Event()
        self.subscription: Any = None

    def on_subscribe(self, subscription: Any) -> None:
        self.subscription = subscription
        subscription.request(2**62)

    def on_next(self, row: Any) -> None:
        self.seen.append((row.value, self.subscription.epoch))
        if len(self.seen) >= 3_000:
            self.enough.set()

    def on_error(self, exc: BaseException) -> None:
        self.enough.set()

    def on_complete(self) -> None:
        pass


subscriber = Epochs()
with tempfile.TemporaryDirectory() as checkpoint, rss.register_subscriber(spark, "epochs", subscriber):
    query = (
        spark.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", 1_000)
        .option("numPartitions", 2)
        .load()
        .selectExpr("value")
        .writeStream.format("reactive-streams")
        .option("subscriber", "epochs")
        .option("checkpointLocation", checkpoint)
        .start()
    )
    subscriber.enough.wait(300)
    query.stop()
first = subscriber.seen[:3_000]
outcome["sink"] = {
    "values": sorted(v for v, _ in first) == list(range(3_000)),
    "epochs": all(epoch == value // 1_000 for value, epoch in first),
}
# The executors' rows came in their tasks' results: none was handed over in the driver's memory.
outcome["sink_rows_in_memory"] = int(spark._jvm.io.github.rspy.spark.sink.SinkLink.handedOverRows())


# The sink, to a subscriber of Arrow batches
class Batches(Epochs):
    def on_next(self, batch: Any) -> None:
        epoch = self.subscription.epoch
        self.seen.extend((value, epoch) for value in batch.column(0).to_pylist())
        if len(self.seen) >= 3_000:
            self.enough.set()


subscriber = Batches()
with (
    tempfile.TemporaryDirectory() as checkpoint,
    rss.register_subscriber(spark, "arrow_epochs", subscriber, arrow_batches=True, max_records_per_batch=300),
):
    query = (
        spark.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", 1_000)
        .option("numPartitions", 2)
        .load()
        .selectExpr("value")
        .writeStream.format("reactive-streams")
        .option("subscriber", "arrow_epochs")
        .option("checkpointLocation", checkpoint)
        .start()
    )
    subscriber.enough.wait(300)
    query.stop()
first = subscriber.seen[:3_000]
outcome["arrow_sink"] = {
    "values": sorted(v for v, _ in first) == list(range(3_000)),
    "epochs": all(epoch == value // 1_000 for value, epoch in first),
}


# Partitioned: a source of 3 partitions read in the executors' Python workers, into Parquet;
# a Python worker killed in batch 0 and an executor JVM killed in batch 1, mid-partition: the
# tasks are retried, and the files hold every element exactly once.
import partitioned_kit  # noqa: E402

partitioned_kit.by_value()
with tempfile.TemporaryDirectory() as work:
    records, markers = f"{work}/records", f"{work}/markers"
    os.makedirs(records)
    os.makedirs(markers)
    counting = partitioned_kit.counting(records)

    def factory(partition: int, start: int) -> Any:
        """Partition 1 in the first batch kills its Python worker, partition 0 in the second its
        executor's JVM, once each, ten elements in."""
        victim = {(1, 0): "worker", (0, 300): "executor"}.get((partition, start))

        def maybe_kill(element: Any) -> Any:
            if victim and element[1] == start + 10 and not os.path.exists(f"{markers}/{victim}"):
                open(f"{markers}/{victim}", "w").close()
                os.kill(os.getpid() if victim == "worker" else _executor_jvm(), signal.SIGKILL)
            return element

        return counting(partition, start).map(maybe_kill)

    end = f"{work}/end"
    with open(end, "w") as bound:
        bound.write("1000")

    def latest(partition: int) -> int:
        with open(end) as bound:
            return int(bound.read())

    rss.register_source(spark, "orders", factory, 3, "p int, offset long, pid int", latest=latest)

    def run_orders() -> None:
        query = (
            spark.readStream.format("orders")
            .option("maxRecordsPerTrigger", 900)
            .load()
            .writeStream.format("parquet")
            .option("path", f"{work}/out")
            .option("checkpointLocation", f"{work}/ck")
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(300)

    run_orders()
    # Restarted from its checkpoint after the partitions grew: it goes on at the committed offsets
    with open(end, "w") as bound:
        bound.write("1200")
    run_orders()
    written = spark.read.parquet(f"{work}/out")
    demand = partitioned_kit.records(records, "demand")
    outcome["partitioned_source"] = {
        "rows": written.count(),
        "distinct": written.select("p", "offset").distinct().count(),
        "killed": sorted(os.listdir(markers)),
        "pids": len({r.pid for r in written.select("pid").distinct().collect()}),
        "driver_made": written.where(f"pid = {os.getpid()}").count(),
        "exact_demand": all(sum(d["requests"]) <= 300 for d in demand),
        "restarts_at": sorted({d["start"] for d in demand if d["start"] >= 1_000}),
    }

    # A factory that raises in one partition: the query fails naming it, and nothing runs on
    def broken(partition: int, start: int) -> Any:
        if partition == 2:
            raise RuntimeError("partition two is down")
        return counting(partition, start)

    rss.register_source(spark, "broken", broken, 3, "p int, offset long, pid int", latest=lambda p: 100)
    query = (
        spark.readStream.format("broken")
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", f"{work}/broken_ck")
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination(300)
        failure = ""
    except Exception as exc:
        failure = str(exc)
    outcome["partitioned_failure"] = {
        "named": "partition 2 of source 'broken' (offsets 0 to 100): the factory raised RuntimeError"
        in failure,
        "active": len(spark.streams.active),
    }

    # A subscriber per task, and a processor per partition, in the executors
    rss.register_sink(spark, "audit", lambda p, b: partitioned_kit.Audit(records, p, b))
    doubled = rss.map_partitions(
        spark.range(0, 10_000, numPartitions=4), partitioned_kit.doubling, "id long, pid int"
    )
    doubled.write.format("audit").mode("append").save()
    # and from a stream: the partitioned source through a processor into the sink, per batch
    rss.register_source(
        spark,
        "numbers",
        lambda p, s: partitioned_kit.Recorded(rs.from_iterable([(o,) for o in range(s, 500)]), records, p, s),
        2,
        "id long",
        latest=lambda p: 500,
    )
    streamed = rss.map_partitions(
        spark.readStream.format("numbers").load(), partitioned_kit.doubling, "id long, pid int"
    )
    query = (
        streamed.writeStream.format("audit")
        .option("checkpointLocation", f"{work}/audit_ck")
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    audits = partitioned_kit.records(records, "sink")
    batch = [a for a in audits if a["batch_id"] is None]
    streaming = [a for a in audits if a["batch_id"] is not None]
    outcome["partitioned_sink"] = {
        "count": sum(a["count"] for a in batch),
        "sum": sum(a["sum"] for a in batch),
        "tasks": len(batch),
        "driver_made": sum(1 for a in audits if a["pid"] == os.getpid()),
        "streamed": {"count": sum(a["count"] for a in streaming), "sum": sum(a["sum"] for a in streaming)},
    }

    # A JVM factory's partitions, read in the executors' JVMs
    table = "jvm_partitioned"
    query = (
        spark.readStream.format("reactive-streams")
        .option("factory", "io.github.rspy.spark.testing.OffsetPartitions")
        .option("maxRecordsPerTrigger", 1_500)
        .schema("p INT, offset LONG, pid LONG")
        .load()
        .writeStream.format("memory")
        .queryName(table)
        .option("checkpointLocation", f"{work}/jvm_ck")
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    made = spark.table(table)
    jvms = {r.pid for r in made.select("pid").distinct().collect()}
    outcome["jvm_partitioned"] = {
        "rows": made.count(),
        "distinct": made.select("p", "offset").distinct().count(),
        "in_driver_jvm": outcome["dataframe"]["driver"] in jvms,
        "jvms": len(jvms),
    }

print(json.dumps(outcome))
spark.stop()
