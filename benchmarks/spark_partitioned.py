"""Reactive Streams where the data is: the partitioned source, sink and processor, in one run,
each against Spark's own on the same partitions and rows per batch, with Python's own bound.

In local[2] with four partitions and 1,000,000 rows a micro-batch (counted from the sources'
offsets over a fixed window after a warm-up):

- ``register_source`` → ``noop``, of ints (one per row) and of ``pyarrow.RecordBatch``es of
  8,192 longs, against ``rate-micro-batch`` → ``noop``;
- ``rate-micro-batch`` → ``register_sink`` with a counting subscriber of rows and of Arrow
  batches, against ``rate-micro-batch`` → ``noop``;
- ``map_partitions`` with an identity processor (of rows, and of Arrow batches) against
  ``mapInArrow`` with an identity function, on a cached 10^7-row DataFrame;
- the JVM factory source (``LongPartitions``) → ``noop`` against ``rate-micro-batch`` → ``noop``;
- Python's own bound for each: the same elements made (or taken) and converted to Arrow in this
  process, with no Spark, times the two cores Spark runs tasks on;
- on ``local-cluster`` (``--cluster``), the partitioned source with two executors against one,
  and the driver's CPU seconds (its JVM and this process) per 10^6 rows;
- the workers' peak RSS and the most elements any partition held against its prefetch (the
  partition reads' ``RS_PARTITION_STATS`` diagnostic).

    python benchmarks/spark_partitioned.py [--window S] [--warmup S] [--cluster]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

import reactive_streams as rs
from reactive_streams import spark as rss

try:
    from . import _report
except ImportError:
    import _report  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
TEST_JARS = sorted(str(p) for p in (ROOT / "build" / "test-jars").glob("*.jar"))
PARTITIONS = 4
ROWS_PER_BATCH = 1_000_000
ARROW_ROWS = 8_192
STATS = Path(tempfile.mkdtemp(prefix="rs-partitioned-stats-")) / "reads.jsonl"


def ints(partition: int, start: int) -> rs.Publisher[Any]:
    return rs.from_iterable(range(start, 1 << 62))


def arrow_batches(partition: int, start: int) -> rs.Publisher[Any]:
    """Element ``k`` is a batch of the longs ``k * 8192`` to ``(k + 1) * 8192 - 1``."""

    def batches() -> Any:
        k = start
        while True:
            yield pa.record_batch(
                [pa.array(range(k * ARROW_ROWS, (k + 1) * ARROW_ROWS), pa.int64())], names=["id"]
            )
            k += 1

    return rs.from_iterable(batches())


class Counting(rs.SyncSubscriber[Any]):
    """Counts what the task hands it: rows, or an Arrow batch's rows."""

    def __init__(self, partition: int, batch_id: int | None) -> None:
        super().__init__(batch=8_192)
        self.rows = 0

    def when_next(self, item: Any) -> None:
        self.rows += item.num_rows if isinstance(item, pa.RecordBatch) else 1


def identity(partition: int) -> rs.Processor[Any, Any]:
    return rs.IdentityProcessor()


def bare_python_source(spark: Any, name: str) -> None:
    """The Python Data Source API's own floor for the source: a bare streaming reader with the
    same partitions, offsets and read limit, whose ``read`` yields each partition's longs as
    Arrow batches made by Arrow, not by Python (no Reactive Streams, no Python objects per row)."""
    from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
    from pyspark.sql.streaming.datasource import ReadMaxRows

    class Reader(DataSourceStreamReader):
        def initialOffset(self) -> dict[str, int]:
            return {str(p): 0 for p in range(PARTITIONS)}

        def getDefaultReadLimit(self) -> Any:
            return ReadMaxRows(ROWS_PER_BATCH)

        def latestOffset(self, start: dict[str, int], limit: Any) -> dict[str, int]:
            return {p: n + limit.max_rows // PARTITIONS for p, n in start.items()}

        def partitions(self, start: dict[str, int], end: dict[str, int]) -> list[Any]:
            return [InputPartition((start[p], end[p])) for p in sorted(start)]

        def read(self, partition: Any) -> Any:
            import numpy as np
            import pyarrow as pa

            first, end = partition.value
            for at in range(first, end, 8_192):
                longs = np.arange(at, min(at + 8_192, end), dtype=np.int64)
                yield pa.record_batch([pa.array(longs)], names=["id"])

    class Bare(DataSource):
        @classmethod
        def name(cls) -> str:
            return name

        def schema(self) -> str:
            return "id long"

        def streamReader(self, schema: Any) -> Any:
            return Reader()

    spark.dataSource.register(Bare)


def bare_python_sink(spark: Any, name: str) -> None:
    """The Python Data Source API's own floor for the sink: a bare Arrow stream writer that counts
    each task's rows (no Reactive Streams, no rows made)."""
    from pyspark.sql.datasource import DataSource, DataSourceStreamArrowWriter, WriterCommitMessage

    class Writer(DataSourceStreamArrowWriter):
        def write(self, iterator: Any) -> Any:
            sum(batch.num_rows for batch in iterator)
            return WriterCommitMessage()

        def commit(self, messages: Any, batchId: int) -> None:
            pass

        def abort(self, messages: Any, batchId: int) -> None:
            pass

    class Bare(DataSource):
        @classmethod
        def name(cls) -> str:
            return name

        def streamWriter(self, schema: Any, overwrite: bool) -> Any:
            return Writer()

    spark.dataSource.register(Bare)


def offsets_sum(field: str, per_element: int = 1) -> Any:
    def rows_at(progress: dict[str, Any]) -> int:
        offset = progress["sources"][0][field]
        value = json.loads(offset) if isinstance(offset, str) else offset
        if "offset" in value:  # rate-micro-batch
            return int(value["offset"])
        return sum(int(v) for v in value.values()) * per_element

    return rows_at


def measure(
    query: Any, rows_at: Any, warmup: float, window: float, pids: tuple[int, ...] = ()
) -> dict[str, Any]:
    """Rows per second between two progress reports ``window`` apart, after ``warmup``; with
    ``pids``, their CPU seconds over the same span. Stops the query."""
    result = _report.query_window(query, rows_at, warmup, window, patience=180, meter=lambda: _cpu(pids))
    query.stop()
    return {**result, "cpu": result["metered"]}


def _cpu(pids: tuple[int, ...]) -> float:
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def start(df: Any, sink: str = "noop") -> Any:
    return (
        df.writeStream.format(sink).option("checkpointLocation", tempfile.mkdtemp(prefix="rs-bench-")).start()
    )


def rate_micro_batch(spark: Any) -> Any:
    return (
        spark.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", ROWS_PER_BATCH)
        .option("numPartitions", PARTITIONS)
        .load()
        .selectExpr("value AS id")
    )


def python_source_bound(factory: Any, rows: int, per_element: int) -> float:
    """The source's Python work with no Spark: a partition's elements read and converted to
    Arrow (``read_partition``, as a worker does), in rows/s of one process."""
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import LongType, StructField, StructType

    from reactive_streams.spark.partitioned._read import read_partition

    schema = StructType([StructField("id", LongType())])
    count = rows // per_element
    began = time.perf_counter()
    got = sum(
        b.num_rows
        for b in read_partition(
            "bound", lambda: factory(0, 0), count, 0, schema, to_arrow_schema(schema), 8_192
        )
    )
    assert got == rows
    return rows / (time.perf_counter() - began)


def python_sink_bound(rows: int, batches: bool) -> float:
    """The sink's Python work with no Spark: Arrow batches (Spark's 10,000 rows) handed to the
    counting subscriber as rows or batches by a task publisher, in rows/s of one process."""
    from pyspark.sql.types import LongType, StructField, StructType

    from reactive_streams.spark.partitioned._sink import Watched
    from reactive_streams.spark.partitioned._task_publisher import TaskPublisher

    schema = StructType([StructField("id", LongType())])
    data = [
        pa.record_batch([pa.array(range(i, i + 10_000), pa.int64())], names=["id"])
        for i in range(0, rows, 10_000)
    ]
    subscriber = Counting(0, 0)
    began = time.perf_counter()
    watched = Watched(subscriber)
    TaskPublisher(iter(data), schema, rows=not batches).subscribe(watched)
    watched.wait_for_end("bound")
    assert subscriber.rows == rows
    return rows / (time.perf_counter() - began)


def python_processor_bound(rows: int, batches: bool) -> float:
    """``map_partitions``'s Python work with no Spark: a partition's Arrow batches through an
    identity processor and back to Arrow, in rows/s of one process."""
    from pyspark import cloudpickle

    from reactive_streams.spark.partitioned._processor import run_partition

    data = [
        pa.record_batch([pa.array(range(i, i + 10_000), pa.int64())], names=["id"])
        for i in range(0, rows, 10_000)
    ]
    schema = '{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}'
    began = time.perf_counter()
    spec = cloudpickle.dumps(identity)
    got = sum(b.num_rows for b in run_partition(spec, iter(data), schema, not batches, 8_192))
    assert got == rows
    return rows / (time.perf_counter() - began)


def worker_stats() -> dict[str, Any]:
    lines = [json.loads(line) for line in STATS.read_text().splitlines()] if STATS.exists() else []
    STATS.unlink(missing_ok=True)
    if not lines:
        return {"reads": 0}
    return {
        "reads": len(lines),
        "max_held": max(line["held"] for line in lines),
        "prefetch": max(line["prefetch"] for line in lines),
        "max_worker_rss_mib": max(line["rss_mib"] for line in lines),
        "workers": len({line["pid"] for line in lines}),
    }


def session(master: str) -> Any:
    from pyspark.sql import SparkSession

    builder = (
        rss.configure(SparkSession.builder.master(master), TEST_JARS, fast_local_checkpoints=True)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.shuffle.partitions", "4")
    )
    if master.startswith("local-cluster"):
        builder = builder.config("spark.executor.memory", "1g")
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("FATAL")  # the measurements stop queries mid-batch on purpose
    return spark


def cluster(args: argparse.Namespace, executors: int) -> dict[str, Any]:
    """The partitioned source of ints on ``local-cluster[executors,1,1024]``, in a child process."""
    out = subprocess_run(
        [
            sys.executable,
            __file__,
            "--child-cluster",
            str(executors),
            "--window",
            str(args.window),
            "--warmup",
            str(args.warmup),
        ]
    )
    return json.loads(out.strip().splitlines()[-1])


def subprocess_run(command: list[str]) -> str:
    import subprocess

    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{command} exited {done.returncode}\n{done.stderr[-3000:]}")
    return done.stdout


def child_cluster(args: argparse.Namespace) -> None:
    executors = args.child_cluster
    spark = session(f"local-cluster[{executors},1,1024]")
    deadline = time.monotonic() + 180
    while spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() < executors + 1:
        assert time.monotonic() < deadline, "the executors did not register"
        time.sleep(0.5)
    rss.register_source(spark, "bench_cluster", ints, PARTITIONS, "id long")
    driver_jvm = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
    df = spark.readStream.format("bench_cluster").option("maxRecordsPerTrigger", ROWS_PER_BATCH).load()
    result = measure(
        start(df), offsets_sum("startOffset"), args.warmup, args.window, (driver_jvm, os.getpid())
    )
    print(
        json.dumps({"rate": result["rate"], "driver_cpu_per_million": result["cpu"] / result["rows"] * 1e6})
    )
    spark.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--window", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=4.0)
    parser.add_argument("--cluster", action="store_true", help="also local-cluster, 2 executors against 1")
    parser.add_argument("--child-cluster", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ["RS_PARTITION_STATS"] = str(STATS)  # the workers inherit it
    if args.child_cluster:
        child_cluster(args)
        return

    spark = session("local[2]")
    cores = 2
    rows: list[dict[str, Any]] = []
    extra: dict[str, Any] = {}

    def row(
        scenario: str,
        rate: float,
        anchor: float,
        bound: float | None,
        target: float,
        floor: float | None = None,
    ) -> None:
        of_bound = None if bound is None else rate / bound
        # Python's work and Spark's Python channel run one after the other in a task: in series,
        # they bound the rate at 1 / (1/bound + 1/floor).
        series = None if bound is None or floor is None else 1 / (1 / bound + 1 / floor)
        if rate / anchor >= target:
            verdict = "meets the target"
        elif of_bound is not None and of_bound >= 0.8:
            verdict = "meets 80% of Python's bound"
        elif floor is not None and floor / anchor < target:
            reached = f"; reaches {rate / series:.2f} of both in series" if series else ""
            verdict = f"blocked: Spark's Python floor is {floor / anchor:.2f} of the anchor{reached}"
        else:
            verdict = "misses both"
        rows.append(
            {
                "scenario": scenario,
                "rows/s": rate,
                "anchor rows/s": anchor,
                "ratio": f"{rate / anchor:.2f} (target {target:.2f})",
                "Python bound rows/s": "-" if bound is None else bound,
                "of bound": "-" if of_bound is None else f"{of_bound:.2f}",
                "Python DS floor rows/s": "-" if floor is None else floor,
                "of floor": "-" if floor is None else f"{rate / floor:.2f}",
                "verdict": verdict,
            }
        )

    # Spark's own, the anchor: rate-micro-batch → noop, four partitions, 10^6 rows a batch
    anchor = measure(start(rate_micro_batch(spark)), offsets_sum("startOffset"), args.warmup, args.window)[
        "rate"
    ]

    # The Python Data Source API's own floors: bare readers and writers, no Reactive Streams
    bare_python_source(spark, "bench_bare_source")
    df = spark.readStream.format("bench_bare_source").load()
    source_floor = measure(start(df), offsets_sum("startOffset"), args.warmup, args.window)["rate"]
    bare_python_sink(spark, "bench_bare_sink")
    sink_floor = measure(
        start(rate_micro_batch(spark), "bench_bare_sink"),
        offsets_sum("startOffset"),
        args.warmup,
        args.window,
    )["rate"]
    extra["floors"] = {"source": source_floor, "sink": sink_floor}

    # 1. The partitioned source → noop
    rss.register_source(spark, "bench_ints", ints, PARTITIONS, "id long")
    df = spark.readStream.format("bench_ints").option("maxRecordsPerTrigger", ROWS_PER_BATCH).load()
    source = measure(start(df), offsets_sum("startOffset"), args.warmup, args.window)
    extra["source_ints_workers"] = worker_stats()
    bound = python_source_bound(ints, 2_000_000, 1) * cores
    row("partitioned source of ints → noop", source["rate"], anchor, bound, 0.6, source_floor)

    rss.register_source(spark, "bench_arrow", arrow_batches, PARTITIONS, "id long")
    per_trigger = ROWS_PER_BATCH // ARROW_ROWS
    df = spark.readStream.format("bench_arrow").option("maxRecordsPerTrigger", per_trigger).load()
    arrow = measure(start(df), offsets_sum("startOffset", ARROW_ROWS), args.warmup, args.window)
    extra["source_arrow_workers"] = worker_stats()
    bound = python_source_bound(arrow_batches, 400 * ARROW_ROWS, ARROW_ROWS) * cores
    row(
        f"partitioned source of RecordBatches ({ARROW_ROWS:,} rows) → noop",
        arrow["rate"],
        anchor,
        bound,
        0.6,
        source_floor,
    )

    # 2. rate-micro-batch → the partitioned sink, a counting subscriber
    for batches in (False, True):
        name = f"bench_sink_{batches}"
        rss.register_sink(spark, name, Counting, batches=batches)
        sink = measure(
            start(rate_micro_batch(spark), name), offsets_sum("startOffset"), args.warmup, args.window
        )
        bound = python_sink_bound(2_000_000, batches) * cores
        what = "Arrow batches" if batches else "rows"
        row(
            f"rate-micro-batch → partitioned sink, counting {what}",
            sink["rate"],
            anchor,
            bound,
            0.5,
            sink_floor,
        )

    # 3. map_partitions with an identity processor against mapInArrow with an identity function
    data = spark.range(0, 10_000_000, numPartitions=PARTITIONS).cache()
    data.count()

    def timed(df: Any) -> float:
        began = time.perf_counter()
        df.write.format("noop").mode("overwrite").save()
        return 10_000_000 / (time.perf_counter() - began)

    timed(data.mapInArrow(lambda it: it, data.schema))  # warm-up: the workers start
    in_arrow = max(timed(data.mapInArrow(lambda it: it, data.schema)) for _ in range(3))
    for batches in (True, False):
        processed = max(
            timed(rss.map_partitions(data, identity, "id long", batches=batches))
            for _ in range(2 if batches else 1)
        )
        bound = python_processor_bound(2_000_000, batches) * cores
        what = "Arrow batches" if batches else "rows"
        row(
            f"map_partitions, identity processor of {what} (anchor: mapInArrow identity)",
            processed,
            in_arrow,
            bound,
            0.7,
        )
    data.unpersist()

    # 4. A JVM factory → noop
    df = (
        spark.readStream.format(rss.FORMAT)
        .option("factory", "io.github.rspy.spark.testing.LongPartitions")
        .option("maxRecordsPerTrigger", ROWS_PER_BATCH)
        .schema("id LONG")
        .load()
    )
    jvm = measure(start(df), offsets_sum("startOffset"), args.warmup, args.window)
    row("JVM factory source (LongPartitions) → noop", jvm["rate"], anchor, None, 0.8)
    spark.stop()

    notes = [
        f"Four partitions, {ROWS_PER_BATCH:,} rows (or elements) a micro-batch, local[2], fast local "
        "checkpoints; the anchor is rate-micro-batch → noop with the same partitions and rows per batch, "
        "in the same run.",
        "Python DS floor: Spark's Python Data Source API with no Reactive Streams (a bare reader yielding "
        "Arrow-made batches of the same offsets; a bare Arrow writer counting rows), in the same run: the "
        "channel under the partitioned source and sink.",
        "In series: Python's bound and Spark's floor one after the other (1 / (1/bound + 1/floor)), as a "
        "task runs them; a row blocked by the floor says how much of that it reaches.",
        "Python bound: the same elements made (or taken) and converted to Arrow in this process with "
        f"no Spark, times the {cores} cores Spark runs tasks on. A row meets its target, or 80% of that "
        "bound.",
        f"Workers (from RS_PARTITION_STATS): {json.dumps(extra)}; `held` is the most elements a partition "
        "held at once (received, not yet handed to Spark), against its prefetch.",
    ]
    if args.cluster:
        one, two = cluster(args, 1), cluster(args, 2)
        extra["cluster"] = {"one": one, "two": two}
        ratio = two["rate"] / one["rate"]
        notes.append(
            f"local-cluster, partitioned source of ints → noop: two executors {two['rate']:,.0f} rows/s, "
            f"one {one['rate']:,.0f} ({ratio:.2f}×, on two cores shared with the driver); the driver (its "
            f"JVM and Python) used {two['driver_cpu_per_million']:.3f} and "
            f"{one['driver_cpu_per_million']:.3f} CPU seconds per 10^6 rows."
        )
    _report.write("partitioned", "Partitions in the executors", rows, notes, extra)


if __name__ == "__main__":
    main()
