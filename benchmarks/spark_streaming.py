"""Structured Streaming through the ``reactive-streams`` source and sink, in one run (issue 8).

Each layer against the one beneath it, in local[2], on (long, string) rows:

- the bridge, Python → JVM, for the same tuples (the source's ratio base), and JVM → Python
  (the sink's);
- Spark's own ``rate`` source → ``noop`` (the reference), and ``rate-micro-batch`` at the same
  rows per batch (Spark's own floor for that batch size);
- a Python publisher → the ``reactive-streams`` source → ``noop``, with ``maxRecordsPerTrigger``
  at 10k, 100k and unset; rows are counted from the source's offsets over a fixed window after
  a warm-up (never ``recentProgress``, which keeps 100 batches);
- ``rate`` → the ``reactive-streams`` sink → a Python subscriber, and the source → the sink;
- a soak of 10^7 rows through the source, with threads and RSS at its start and end.

    python benchmarks/spark_streaming.py [--window S] [--warmup S] [--soak-rows N]
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import reactive_streams as rs
from reactive_streams import spark as rss

try:
    from . import _report
except ImportError:
    import _report  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
TEST_JARS = sorted(str(p) for p in (ROOT / "build" / "test-jars").glob("*.jar"))
SCHEMA = "id LONG, name STRING"
DATA = [(i, f"name {i % 1000}") for i in range(100_000)]  # the rows every scenario moves


def tuples(count: int | None = None) -> rs.Publisher[Any]:
    """A Python publisher of the benchmark's rows, ``count`` of them or without end."""
    rows = itertools.cycle(DATA)
    return rs.from_iterable(rows if count is None else itertools.islice(rows, count))


def checkpoint() -> str:
    return tempfile.mkdtemp(prefix="rs-bench-")


def timestamp(progress: dict[str, Any]) -> float:
    return datetime.fromisoformat(progress["timestamp"].replace("Z", "+00:00")).timestamp()


# The bridge beneath.


def bridge_to_jvm(spark: Any, n: int) -> float:
    """Python → JVM: the tuples into Reactor's count() (unbounded demand, windowed by the bridge)."""
    bridge = rss.bridge(spark)
    flux = bridge.jvm.reactor.core.publisher.Flux
    gc.collect()
    start = time.perf_counter()
    counted = int(getattr(flux, "from")(bridge.to_jvm(tuples(n))).count().block())
    elapsed = time.perf_counter() - start
    assert counted == n, counted
    return n / elapsed


def bridge_to_python(spark: Any, n: int) -> float:
    """JVM → Python: the same rows (Object[]{Long, String}) into a counting subscriber."""
    bridge = rss.bridge(spark)
    counter = _report.CountingSubscriber(1024)
    gc.collect()
    start = time.perf_counter()
    bridge.from_jvm(bridge.jvm.io.github.rspy.bridge.testing.Sources.rows(n)).subscribe(counter)
    counter.done.wait()
    elapsed = time.perf_counter() - start
    assert counter.error is None and counter.count == n, (counter.error, counter.count)
    return n / elapsed


# Queries, measured over a window.


class Window:
    """A running query measured between two progress reports taken ``window`` seconds apart,
    after ``warmup`` seconds: rows from the offsets the source reports, batches from batch ids."""

    def __init__(self, query: Any, rows_at: Any) -> None:
        self.query = query
        self.rows_at = rows_at

    def measure(self, warmup: float, window: float) -> dict[str, Any]:
        query = self.query
        deadline = time.monotonic() + warmup + 120
        while query.lastProgress is None or query.lastProgress["batchId"] < 2:
            if query.exception() is not None:
                raise query.exception()
            assert time.monotonic() < deadline, "the query made no progress"
            time.sleep(0.05)
        time.sleep(warmup)
        first = query.lastProgress
        time.sleep(window)
        last = query.lastProgress
        if query.exception() is not None:
            raise query.exception()
        rows = self.rows_at(last) - self.rows_at(first)
        seconds = timestamp(last) - timestamp(first)
        batches = last["batchId"] - first["batchId"]
        return {"rows": rows, "seconds": seconds, "rate": rows / seconds, "batches": batches, "last": last}


def start_offset(progress: dict[str, Any]) -> int:
    """Where the reported batch starts: every row before it was processed by then."""
    return int(progress["sources"][0]["startOffset"])


def micro_batch_offset(progress: dict[str, Any]) -> int:
    offset = progress["sources"][0]["startOffset"]
    return int((json.loads(offset) if isinstance(offset, str) else offset)["offset"])


class RowCounter:
    """Rows of every batch of the query, from a listener (the ``rate`` source's offsets are not
    row counts); ``rows_at(progress)`` is the count when that progress was reported."""

    def __init__(self, spark: Any) -> None:
        from pyspark.sql.streaming import StreamingQueryListener

        self.by_batch: dict[int, int] = {}
        counter = self

        class Listener(StreamingQueryListener):
            def onQueryStarted(self, event: Any) -> None:
                pass

            def onQueryProgress(self, event: Any) -> None:
                counter.by_batch[event.progress.batchId] = event.progress.numInputRows

            def onQueryIdle(self, event: Any) -> None:
                pass

            def onQueryTerminated(self, event: Any) -> None:
                pass

        self.listener = Listener()
        self.spark = spark
        spark.streams.addListener(self.listener)

    def rows_at(self, progress: dict[str, Any]) -> int:
        return sum(n for batch, n in self.by_batch.items() if batch < progress["batchId"])

    def close(self) -> None:
        self.spark.streams.removeListener(self.listener)


def source_query(spark: Any, name: str, max_records: int | None, sink: Any = None) -> Any:
    reader = spark.readStream.format(rss.FORMAT).option("publisher", name).schema(SCHEMA)
    if max_records is not None:
        reader = reader.option("maxRecordsPerTrigger", max_records)
    df = reader.load()
    writer = df.writeStream.format("noop") if sink is None else sink(df.writeStream)
    return writer.option("checkpointLocation", checkpoint()).start()


def through_source(spark: Any, max_records: int | None, args: argparse.Namespace) -> dict[str, Any]:
    name = f"bench_source_{max_records}"
    with rss.register_publisher(spark, name, tuples()):
        query = source_query(spark, name, max_records)
        try:
            result = Window(query, start_offset).measure(args.warmup, args.window)
        finally:
            query.stop()
    metrics = result["last"]["sources"][0]["metrics"]
    result["bound"] = int(metrics["demandBound"])
    result["max_buffered"] = int(metrics["maxBufferedElements"])
    result["fill"] = result["rows"] / result["batches"] / max_records if max_records else None
    return result


def rate_micro_batch(spark: Any, rows_per_batch: int, args: argparse.Namespace) -> dict[str, Any]:
    df = (
        spark.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", rows_per_batch)
        .load()
        .selectExpr("value AS id", "concat('name ', value % 1000) AS name")
    )
    query = df.writeStream.format("noop").option("checkpointLocation", checkpoint()).start()
    try:
        return Window(query, micro_batch_offset).measure(args.warmup, args.window)
    finally:
        query.stop()


def rate(spark: Any, args: argparse.Namespace, sink: Any = None) -> dict[str, Any]:
    df = (
        spark.readStream.format("rate")
        .option("rowsPerSecond", args.rate_rows_per_second)
        .load()
        .selectExpr("value AS id", "concat('name ', value % 1000) AS name")
    )
    counter = RowCounter(spark)
    writer = df.writeStream.format("noop") if sink is None else sink(df.writeStream)
    query = writer.option("checkpointLocation", checkpoint()).start()
    try:
        return Window(query, counter.rows_at).measure(args.warmup, args.window)
    finally:
        query.stop()
        counter.close()


# The sink.


def into_subscriber(spark: Any, name: str) -> tuple[Any, _report.CountingSubscriber]:
    counter = _report.CountingSubscriber(1024)
    rss.register_subscriber(spark, name, counter)
    return (lambda writer: writer.format(rss.FORMAT).option("subscriber", name)), counter


def through_sink(spark: Any, fed_by: str, args: argparse.Namespace) -> dict[str, Any]:
    sink, counter = into_subscriber(spark, f"bench_sink_{fed_by}")
    try:
        if fed_by == "rate":
            result = rate(spark, args, sink)
        else:
            with rss.register_publisher(spark, "bench_sink_source", tuples()):
                query = source_query(spark, "bench_sink_source", None, sink)
                try:
                    result = Window(query, start_offset).measure(args.warmup, args.window)
                finally:
                    query.stop()
        result["delivered"] = counter.count
        return result
    finally:
        rss.unregister(spark, f"bench_sink_{fed_by}")


# Threads and memory over a long run.


def resources(spark: Any) -> dict[str, float]:
    jvm = spark._jvm
    pid = int(jvm.java.lang.ProcessHandle.current().pid())
    return {
        "python_threads": threading.active_count(),
        "jvm_threads": int(jvm.java.lang.management.ManagementFactory.getThreadMXBean().getThreadCount()),
        "python_rss_mib": _report.rss_mib(),
        "jvm_rss_mib": _report.rss_mib(pid),
    }


def soak(spark: Any, rows: int) -> dict[str, Any]:
    """``rows`` through the source (no per-trigger limit) into noop, in two halves: resources
    after a warm-up, after the first half and at the end."""
    name = "bench_soak"
    with rss.register_publisher(spark, name, tuples(rows)):
        query = source_query(spark, name, None)
        try:
            seen = [resources(spark)]
            start = time.perf_counter()
            for target in (rows // 2, rows):
                while True:
                    progress = query.lastProgress
                    if query.exception() is not None:
                        raise query.exception()
                    if progress is not None and progress["sources"][0]["endOffset"] is not None:
                        if int(progress["sources"][0]["endOffset"]) >= target:
                            break
                    time.sleep(0.1)
                seen.append(resources(spark))
            elapsed = time.perf_counter() - start
        finally:
            query.stop()
    return {"rows": rows, "seconds": elapsed, "resources": seen}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--window", type=float, default=10.0, help="seconds measured per query")
    parser.add_argument("--warmup", type=float, default=4.0, help="seconds before the window")
    parser.add_argument("--bridge-rows", type=int, default=2_000_000)
    parser.add_argument("--soak-rows", type=int, default=10_000_000)
    parser.add_argument("--rate-rows-per-second", type=int, default=5_000_000)
    args = parser.parse_args()

    from pyspark.sql import SparkSession

    spark = (
        rss.configure(SparkSession.builder.master("local[2]"), TEST_JARS)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    rows: list[dict[str, Any]] = []
    extra: dict[str, Any] = {}

    def row(scenario: str, rate: float, base: float | None, note: str = "") -> None:
        rows.append(
            {
                "scenario": scenario,
                "rows/s": rate,
                "ratio": f"{rate / base:.2f}" if base else "1.00",
                "notes": note,
            }
        )

    bridge_to_jvm(spark, args.bridge_rows // 4)  # warm-up: JIT, the callback server
    to_jvm = max(bridge_to_jvm(spark, args.bridge_rows) for _ in range(3))
    row("bridge, Python → JVM (from_iterable → Reactor count()) — source base", to_jvm, None)
    bridge_to_python(spark, args.bridge_rows // 4)
    to_python = max(bridge_to_python(spark, args.bridge_rows) for _ in range(3))
    row("bridge, JVM → Python (Object[] rows → subscriber, request(1024)) — sink base", to_python, None)

    reference = rate(spark, args)
    row("Spark rate → noop (reference)", reference["rate"], to_jvm, f"{reference['batches']} batches")
    floors = {}
    for per_batch in (10_000, 100_000):
        floors[per_batch] = rate_micro_batch(spark, per_batch, args)
        row(
            f"Spark rate-micro-batch, {per_batch:,} rows/batch → noop (Spark's own floor)",
            floors[per_batch]["rate"],
            to_jvm,
            f"{floors[per_batch]['seconds'] / max(1, floors[per_batch]['batches']) * 1000:.0f} ms/batch",
        )
    sources = {}
    for max_records in (10_000, 100_000, None):
        result = sources[max_records] = through_source(spark, max_records, args)
        fill = f", batches {result['fill']:.0%} full" if result["fill"] is not None else ""
        row(
            f"Python publisher → reactive-streams source → noop, maxRecordsPerTrigger "
            f"{'unset' if max_records is None else f'{max_records:,}'}",
            result["rate"],
            to_jvm,
            f"{result['rows'] / max(1, result['batches']):,.0f} rows/batch{fill}; held ≤ "
            f"{result['max_buffered']:,} of bound {result['bound']:,}",
        )
    sinks = {}
    for fed_by in ("rate", "source"):
        result = sinks[fed_by] = through_sink(spark, fed_by, args)
        row(
            f"{'Spark rate' if fed_by == 'rate' else 'reactive-streams source'} → reactive-streams sink → "
            "Python subscriber",
            result["rate"],
            to_python,
            f"{result['rows'] / max(1, result['batches']):,.0f} rows/batch",
        )
    soaked = soak(spark, args.soak_rows)
    spark.stop()

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    ratio = {k: v["rate"] / to_jvm for k, v in sources.items()}
    fills = {k: v["fill"] for k, v in sources.items() if v["fill"] is not None}
    sink_ratio = {k: v["rate"] / to_python for k, v in sinks.items()}
    first, half, end = soaked["resources"]
    notes = [
        f"local[2], 2 cores; rows (long, string); each query measured over {args.window:.0f} s after a "
        f"{args.warmup:.0f} s warm-up; bridge figures best of 3 over {args.bridge_rows:,} rows.",
        f"Source ≥ 50% of the bridge at 100k and unset, ≥ 25% at 10k: 10k {ratio[10_000]:.0%} — "
        f"{verdict(ratio[10_000] >= 0.25)}; 100k {ratio[100_000]:.0%} — {verdict(ratio[100_000] >= 0.5)}; "
        f"unset {ratio[None]:.0%} — {verdict(ratio[None] >= 0.5)}.",
        "Micro-batches ≥ 90% of maxRecordsPerTrigger: "
        + "; ".join(f"{k:,}: {v:.0%} — {verdict(v >= 0.9)}" for k, v in fills.items())
        + ".",
        f"Spark's own floor at 10k rows/batch is {floors[10_000]['rate']:,.0f} rows/s "
        f"({floors[10_000]['rate'] / to_jvm:.0%} of the bridge): the source at 10k reaches "
        f"{sources[10_000]['rate'] / floors[10_000]['rate']:.0%} of it, and at 100k "
        f"{sources[100_000]['rate'] / floors[100_000]['rate']:.0%} of Spark's 100k floor.",
        f"Sink ≥ 50% of the bridge's JVM → Python rate: fed by rate {sink_ratio['rate']:.0%} — "
        f"{verdict(sink_ratio['rate'] >= 0.5)}; fed by the source {sink_ratio['source']:.0%} — "
        f"{verdict(sink_ratio['source'] >= 0.5)}.",
        f"Soak: {soaked['rows']:,} rows through the source in {soaked['seconds']:.0f} s "
        f"({soaked['rows'] / soaked['seconds']:,.0f} rows/s). Python threads {first['python_threads']} → "
        f"{half['python_threads']} → {end['python_threads']}, JVM threads {first['jvm_threads']} → "
        f"{half['jvm_threads']} → {end['jvm_threads']}; RSS Python {first['python_rss_mib']:.0f} → "
        f"{half['python_rss_mib']:.0f} → {end['python_rss_mib']:.0f} MiB, JVM {first['jvm_rss_mib']:.0f} → "
        f"{half['jvm_rss_mib']:.0f} → {end['jvm_rss_mib']:.0f} MiB (start, half, end).",
    ]
    extra.update(
        {
            "bridge_to_jvm": to_jvm,
            "bridge_to_python": to_python,
            "rate": reference["rate"],
            "rate_micro_batch": {str(k): v["rate"] for k, v in floors.items()},
            "source": {
                str(k): {x: v[x] for x in ("rate", "rows", "batches", "fill", "bound", "max_buffered")}
                for k, v in sources.items()
            },
            "sink": {
                k: {x: v[x] for x in ("rate", "rows", "batches", "delivered")} for k, v in sinks.items()
            },
            "soak": soaked,
        }
    )
    _report.write("spark_streaming", "Spark Structured Streaming (issue 8)", rows, notes, extra)


if __name__ == "__main__":
    main()
