"""Spark interop throughput, in one run (issue 5), in local Spark.

DataFrame (10^7 rows, a few columns) -> Python: ``df.toLocalIterator()`` (the baseline) against
``publisher_from_dataframe`` into a counting subscriber, and the Arrow form (rows/s), with peak
RSS. Publisher -> DataFrame: ``spark.createDataFrame(list_of_tuples)`` (the baseline) against
``dataframe_from_publisher`` for the same rows, each built and counted.

    python benchmarks/spark_interop.py [--rows N] [--partitions P] [--publish-rows N]
"""

from __future__ import annotations

import argparse
import gc
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--publish-rows", type=int, default=1_000_000)
    args = parser.parse_args()

    from pyspark.sql import SparkSession

    spark = (
        rss.configure(SparkSession.builder.master("local[2]"))
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "2g")
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
    arrow_rate = measure(
        "arrow_batches_from_dataframe (Arrow record batches)",
        n,
        lambda: drain(rss.arrow_batches_from_dataframe(df, 1), lambda b: b.num_rows),
        baseline,
    )

    m = args.publish_rows
    data = [(i, i * 0.5, str(i % 1000)) for i in range(m)]
    schema = "id long, x double, s string"
    create_rate = measure(
        "spark.createDataFrame(list_of_tuples).count()",
        m,
        lambda: spark.createDataFrame(data, schema).count(),
    )
    publish_rate = measure(
        "dataframe_from_publisher(from_iterable(list)).count()",
        m,
        lambda: rss.dataframe_from_publisher(spark, rs.from_iterable(data), schema).count(),
        create_rate,
    )
    spark.stop()

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    _report.write(
        "spark",
        "Spark interop (issue 5)",
        rows,
        [
            f"DataFrame of {n:,} rows (long, double, string) in {args.partitions} cached partitions, "
            f"local[2]; Publisher → DataFrame over {m:,} rows. Ratios are to the baseline above each.",
            f"Rows ≥ toLocalIterator: {row_rate / baseline:.1f}× — {verdict(row_rate >= baseline)}. "
            f"Arrow ≥ 10× toLocalIterator: {arrow_rate / baseline:.1f}× — "
            f"{verdict(arrow_rate >= 10 * baseline)}. "
            f"Publisher → DataFrame ≥ createDataFrame: {publish_rate / create_rate:.1f}× — "
            f"{verdict(publish_rate >= create_rate)}.",
            "Memory: at most 1 + prefetch_partitions partitions are held at once; peak RSS is this "
            "Python process's (the JVM is separate).",
        ],
        {"rows": n, "partitions": args.partitions, "publish_rows": m},
    )


if __name__ == "__main__":
    main()
