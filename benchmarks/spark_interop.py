"""Spark interop throughput, in one run (issues 5 and 22), in local Spark.

DataFrame (10^7 rows, a few columns) -> Python: ``df.toLocalIterator()`` (the baseline) against
``publisher_from_dataframe`` into a counting subscriber, and the Arrow form (rows/s), with peak
RSS. Publisher -> DataFrame: PySpark's own ``spark.createDataFrame(pyarrow.Table)`` (the
baseline, Arrow enabled; the table built beforehand, untimed) and ``createDataFrame(list)``
against ``dataframe_from_publisher`` for the same 10^7 (long, double, 12-character string)
tuples, each built and counted (and, as the anchor starts, the table's RecordBatches), with
the ceiling from tuples: making their Arrow in Python alone; while ours runs, the driver JVM's
heap and this Python's RSS are sampled, and the blocks it stored are reported (memory and disk).

    python benchmarks/spark_interop.py [--rows N] [--partitions P] [--publish-rows N]
"""

from __future__ import annotations

import argparse
import gc
import threading
import time
from pathlib import Path
from typing import Any

import reactive_streams as rs
from reactive_streams import spark as rss

try:
    from . import _report
except ImportError:
    import _report  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent


def drain(publisher: rs.Publisher[Any], rows_of: Any = None) -> int:
    counter = _report.CountingSubscriber(1024, rows_of)
    publisher.subscribe(counter)
    counter.done.wait()
    if counter.error is not None:
        raise counter.error
    return counter.count


def timed(run: Any) -> tuple[float, Any]:
    gc.collect()
    start = time.perf_counter()
    result = run()
    return time.perf_counter() - start, result


class Sampler:
    """Samples, every 50 ms while in its ``with`` block, the driver JVM's heap in use and this
    Python's RSS; keeps the largest of each."""

    def __init__(self, spark: Any) -> None:
        self._runtime = spark.sparkContext._jvm.java.lang.Runtime.getRuntime()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.heap_before_mib = self.heap_mib = self._heap()
        self.heap_max_mib = int(self._runtime.maxMemory()) / 2**20
        self.rss_before_mib = self.rss_mib = _report.rss_mib()

    def _heap(self) -> float:
        return (int(self._runtime.totalMemory()) - int(self._runtime.freeMemory())) / 2**20

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            self.heap_mib = max(self.heap_mib, self._heap())
            self.rss_mib = max(self.rss_mib, _report.rss_mib())

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def stored_blocks(spark: Any) -> tuple[int, int, int]:
    """The blocks of the most recent dataframe_from_publisher still held: count, memory, disk."""
    chunks = spark.sparkContext._jvm.io.github.rspy.spark.dataframe.ArrowChunks
    ids = [
        int(rdd_id)
        for rdd_id, rdd in spark.sparkContext._jsc.getPersistentRDDs().items()
        if rdd.rdd().getClass().getSimpleName() == "StoredBatches"
    ]
    if not ids:
        return (0, 0, 0)
    count, memory, disk = (int(v) for v in chunks.storedBlocks(max(ids)))
    return (count, memory, disk)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--publish-rows", type=int, default=10_000_000)
    args = parser.parse_args()

    from pyspark.sql import SparkSession

    spark = (
        rss.configure(SparkSession.builder.master("local[2]"))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "8g")  # PySpark's own createDataFrame of 10^7 rows fails in 2g
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    n = args.rows
    df = spark.range(0, n, numPartitions=args.partitions).selectExpr(
        "id", "id * 0.5 AS x", "CAST(id % 1000 AS STRING) AS s"
    )
    df.cache().count()

    rows: list[dict[str, Any]] = []

    def measure(scenario: str, expected: int, run: Any, baseline: float | None = None) -> float:
        """Time ``run`` (which returns a row count), add a table row, return rows/s."""
        seconds, count = timed(run)
        assert count == expected, f"{scenario}: {count} rows, expected {expected}"
        rate = expected / seconds
        rows.append(
            {
                "scenario": scenario if baseline else f"{scenario} (baseline)",
                "rows/s": rate,
                "ratio": rate / baseline if baseline else 1.0,
                "peak RSS MiB": _report.peak_rss_mib(),
            }
        )
        return rate

    baseline = measure("df.toLocalIterator()", n, lambda: sum(1 for _ in df.toLocalIterator()))
    row_rate = measure(
        "publisher_from_dataframe → subscriber, request(1024), prefetch 1",
        n,
        lambda: drain(rss.publisher_from_dataframe(df, prefetch_partitions=1)),
        baseline,
    )
    to_pylist_rate = measure(
        "df.toArrow().to_pylist() (PySpark's Arrow path, dicts)",
        n,
        lambda: len(df.toArrow().to_pylist()),
    )
    rows_vs_arrow = measure(
        "publisher_from_dataframe → subscriber (against toArrow().to_pylist())",
        n,
        lambda: drain(rss.publisher_from_dataframe(df, prefetch_partitions=1)),
        to_pylist_rate,
    )
    arrow_rate = measure(
        "arrow_batches_from_dataframe (Arrow record batches)",
        n,
        lambda: drain(rss.arrow_batches_from_dataframe(df, 1), lambda b: b.num_rows),
        baseline,
    )

    m = args.publish_rows
    import pyarrow as pa

    data = [(i, i * 0.5, f"name-{i:07d}") for i in range(m)]
    schema = "id long, x double, s string"
    table = pa.table(
        {
            "id": pa.array([r[0] for r in data], pa.int64()),
            "x": pa.array([r[1] for r in data], pa.float64()),
            "s": pa.array([r[2] for r in data], pa.string()),
        }
    )
    for _ in range(2):  # both paths warmed (the JVM compiles them), unmeasured
        spark.createDataFrame(table.slice(0, 2_000_000)).count()
        rss.dataframe_from_publisher(spark, rs.from_iterable(data[:2_000_000]), schema).count()
    table_rate = measure(
        "spark.createDataFrame(pyarrow.Table).count() (Arrow on)",
        m,
        lambda: spark.createDataFrame(table).count(),
    )
    published: list[Any] = []  # the DataFrame, kept: its blocks are reported after

    def publish() -> int:
        published.append(rss.dataframe_from_publisher(spark, rs.from_iterable(data), schema))
        return int(published[-1].count())

    memory = Sampler(spark)
    with memory:
        publish_rate = measure(
            "dataframe_from_publisher(from_iterable(list_of_tuples)).count()", m, publish, table_rate
        )
    blocks = stored_blocks(spark)
    # What bounds ours from tuples: making Arrow of them in Python, with no JVM at all.
    from pyspark.sql.pandas.types import to_arrow_schema

    from reactive_streams.spark._convert import arrow_batches_of

    struct = published[-1].schema
    arrow_schema = to_arrow_schema(struct, timezone=spark.conf.get("spark.sql.session.timeZone"))
    convert_rate = measure(
        "the same tuples → Arrow in Python alone, in chunks of 10,000 (no JVM: our ceiling)",
        m,
        lambda: sum(
            b.num_rows
            for i in range(0, m, 10_000)
            for b in arrow_batches_of(data[i : i + 10_000], struct, arrow_schema)
        ),
        table_rate,
    )
    batches = table.to_batches(max_chunksize=100_000)
    batches_rate = measure(
        "dataframe_from_publisher(from_iterable(RecordBatches of 100,000 rows), chunk_size=4).count()",
        m,
        lambda: rss.dataframe_from_publisher(spark, rs.from_iterable(batches), schema, chunk_size=4).count(),
        table_rate,
    )
    list_rate = measure(
        "spark.createDataFrame(list_of_tuples).count()",
        m,
        lambda: spark.createDataFrame(data, schema).count(),
    )
    spark.stop()

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    _report.write(
        "spark",
        "Spark interop (issues 5 and 22)",
        rows,
        [
            f"DataFrame of {n:,} rows (long, double, string) in {args.partitions} cached partitions, "
            f"local[2]; Publisher → DataFrame over {m:,} rows. Ratios are to the baseline above each.",
            f"Rows ≥ toLocalIterator: {row_rate / baseline:.1f}× — {verdict(row_rate >= baseline)}. "
            f"Rows ≥ toArrow().to_pylist(): {rows_vs_arrow / to_pylist_rate:.2f}× — "
            f"{verdict(rows_vs_arrow >= to_pylist_rate)}. "
            f"Arrow ≥ 10× toLocalIterator: {arrow_rate / baseline:.1f}× — "
            f"{verdict(arrow_rate >= 10 * baseline)}. "
            f"dataframe_from_publisher ≥ 2× createDataFrame(pyarrow.Table) and ≥ 2 M rows/s: "
            f"{publish_rate / table_rate:.2f}×, {publish_rate / 1e6:.2f} M rows/s — "
            f"{verdict(publish_rate >= 2 * table_rate and publish_rate >= 2e6)} "
            f"(and {publish_rate / list_rate:.1f}× createDataFrame(list_of_tuples)). Making Arrow of "
            f"the tuples in Python alone runs at {convert_rate / 1e6:.2f} M rows/s, "
            f"{convert_rate / table_rate:.2f}× the anchor, the ceiling from tuples; ours runs at "
            f"{publish_rate / convert_rate:.0%} of it. From "
            f"RecordBatches, as the anchor starts: {batches_rate / table_rate:.2f}× "
            f"({batches_rate / 1e6:.2f} M rows/s) — {verdict(batches_rate >= 2 * table_rate)}.",
            f"While dataframe_from_publisher ran: the driver JVM's heap in use at most "
            f"{memory.heap_mib:,.0f} MiB (of {memory.heap_max_mib:,.0f}; "
            f"{memory.heap_before_mib:,.0f} before), this Python's RSS at most {memory.rss_mib:,.0f} MiB "
            f"({memory.rss_before_mib:,.0f} before, the {m:,} tuples included); its blocks: {blocks[0]} "
            f"of them, {blocks[1] / 2**20:,.0f} MiB in memory and {blocks[2] / 2**20:,.0f} MiB on disk.",
            "Memory: at most 1 + prefetch_partitions partitions are held at once; peak RSS is this "
            "Python process's (the JVM is separate).",
        ],
        {"rows": n, "partitions": args.partitions, "publish_rows": m, "blocks": list(blocks)},
    )


if __name__ == "__main__":
    main()
