"""Orders read by a partitioned reactive source, doubled by a processor per partition, kept in
streaming tables and handed to a sink's subscribers. The CLI runs this file with the folder of
spark-pipeline.yml as the current directory and ``spark`` set to the pipeline's session."""

from __future__ import annotations

import json
from pathlib import Path

from pyspark import pipelines as dp

import reactive_streams as rs
from reactive_streams import spark as rss

ORDERS = Path(spark.conf.get("rspy.example.orders")).resolve()  # noqa: F821 (spark: set by the CLI)
AUDIT = Path(spark.conf.get("rspy.example.audit")).resolve()  # noqa: F821


def orders(partition: int, start: int) -> rs.Publisher:
    """Partition ``partition``'s orders from offset ``start``: the same lines each time, as a
    replayable source must give them (a restart resumes at the committed offset)."""
    lines = (ORDERS / f"{partition}.csv").read_text().splitlines()[start:]
    return rs.from_iterable(lines).map(lambda line: (partition, *_order(line)))


def _order(line: str) -> tuple[int, float]:
    order, amount = line.split(",")
    return int(order), float(amount)


def arrived(partition: int) -> int:
    """How many orders partition ``partition`` has now: where its next batch ends."""
    file = ORDERS / f"{partition}.csv"
    return len(file.read_text().splitlines()) if file.exists() else 0


# Registered at the top of the file, in the pipeline's session, and left registered for the run.
rss.register_source(spark, "orders", orders, 2, "p int, id long, amount double", latest=arrived)  # noqa: F821


@dp.table
def orders_raw():
    return spark.readStream.format("orders").option("maxRecordsPerTrigger", 400).load()  # noqa: F821


def doubling(partition: int) -> rs.Processor:
    return rs.MapProcessor(lambda row: (row.p, row.id, row.amount * 2))


# map_partitions is built here, outside the query function: PySpark's mapInArrow asks the server
# for the input's columns, which a query function may not (docs/deploy.md, Declarative Pipelines).
DOUBLED = rss.map_partitions(
    spark.readStream.format("orders").option("maxRecordsPerTrigger", 400).load(),  # noqa: F821
    doubling,
    "p int, id long, doubled double",
)


@dp.table
def orders_doubled():
    return DOUBLED


class Audit(rs.SyncSubscriber):
    """One per write task: writes its rows to a file named after the task's (batch, partition),
    so a task that Spark runs again writes the same file (exactly once)."""

    def __init__(self, partition: int, batch_id: int) -> None:
        super().__init__(batch=256)
        self.file = AUDIT / f"{batch_id}-{partition}.json"
        self.rows: list[list[object]] = []

    def when_next(self, row) -> None:
        self.rows.append([row.p, row.id, row.doubled])

    def when_complete(self) -> None:
        AUDIT.mkdir(parents=True, exist_ok=True)
        self.file.write_text(json.dumps(self.rows))


rss.register_sink(spark, "audit", Audit)  # noqa: F821
dp.create_sink("audit_sink", format="audit")


@dp.append_flow(target="audit_sink")
def doubled_to_audit():
    return spark.readStream.table("orders_doubled")  # noqa: F821
