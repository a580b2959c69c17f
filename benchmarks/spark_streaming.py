"""Structured Streaming through the ``reactive-streams`` source and sink, in one run (issues 8 and 22).

Each layer against the one beneath it, in local[2], on (long, string) rows:

- the bridge, Python → JVM, for the same tuples (the source's ratio base), and JVM → Python
  (the sink's);
- Spark's own ``rate`` source → ``noop`` (the reference), and ``rate-micro-batch`` at the same
  rows per batch (Spark's own floor for that batch size);
- a Python publisher → the ``reactive-streams`` source → ``noop``, with ``maxRecordsPerTrigger``
  at 10k, 100k (its default) and 1M (as near unlimited as a bounded source gets), of tuples, and
  at 1M of ``pyarrow.RecordBatch``es of 10,000 rows (read by Spark as columns); rows are
  counted from the source's offsets over a fixed window after a warm-up (never
  ``recentProgress``, which keeps 100 batches);
- ``rate-micro-batch`` → the ``reactive-streams`` sink → a Python subscriber of rows (at 100k and
  1M rows a batch) and of Arrow batches (1M), and the source → the sink;
- soaks of 10^7 tuples and 10^8 rows in Arrow batches through the source, with threads and RSS
  at their start, half-way and end.

Each query runs twice: with Spark's own checkpoint manager, and with the library's
``LocalCheckpointFileManager`` (``rss.configure(..., fast_local_checkpoints=True)``), which spares
Hadoop's ~20 child processes per micro-batch.

    python benchmarks/spark_streaming.py [--window S] [--warmup S] [--soak-rows N]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import itertools
import json
import tempfile
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
TEST_JARS = sorted(str(p) for p in (ROOT / "build" / "test-jars").glob("*.jar"))
SCHEMA = "id LONG, name STRING"
DATA = [(i, f"name {i % 1000}") for i in range(100_000)]  # the rows every scenario moves
ARROW_ROWS = 10_000  # rows in each RecordBatch element


def tuples(count: int | None = None) -> rs.Publisher[Any]:
    """A Python publisher of the benchmark's rows, ``count`` of them or without end."""
    rows = itertools.cycle(DATA)
    return rs.from_iterable(rows if count is None else itertools.islice(rows, count))


def record_batches(rows: int | None = None) -> rs.Publisher[Any]:
    """A Python publisher of the same rows in ``pyarrow.RecordBatch``es of `ARROW_ROWS`, covering
    ``rows`` rows (rounded up to a batch) or without end."""
    import pyarrow as pa

    made = [
        pa.record_batch(
            [pa.array([r[0] for r in part], pa.int64()), pa.array([r[1] for r in part])], names=["id", "name"]
        )
        for part in (DATA[i : i + ARROW_ROWS] for i in range(0, len(DATA), ARROW_ROWS))
    ]
    cycle = itertools.cycle(made)
    return rs.from_iterable(cycle if rows is None else itertools.islice(cycle, -(-rows // ARROW_ROWS)))


def checkpoint() -> str:
    return tempfile.mkdtemp(prefix="rs-bench-")


MANAGERS = {"Spark's": None, "fast local": rss.LOCAL_CHECKPOINTS}


@contextlib.contextmanager
def checkpoints(spark: Any, manager: str | None) -> Any:
    """Queries started inside use ``manager`` (None: Spark's own) for their checkpoints."""
    key = "spark.sql.streaming.checkpointFileManagerClass"
    if manager is None:
        spark.conf.unset(key)
    else:
        spark.conf.set(key, manager)
    try:
        yield
    finally:
        spark.conf.unset(key)


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


def python_rows_floors(n: int) -> tuple[float, float]:
    """Rows/s of the Python side's own work alone, no JVM and no channel, for 1,024-row Arrow
    batches of the benchmark's rows (id, name) as the JVM sends them: decoded into tuples for a
    counting subscriber (the bridge's JVM → Python rows), and decoded and made into Rows by the
    sink's row subscriber wrapper, as the bridge hands them to it (the sink's rows)."""
    import pyarrow

    from reactive_streams.jvm._arrow import decode_rows
    from reactive_streams.spark._sink import RowSubscriber

    rows = 1024
    one = pyarrow.record_batch({"id": list(range(rows)), "name": [f"name {i % 1000}" for i in range(rows)]})
    sink = pyarrow.BufferOutputStream()
    with pyarrow.ipc.new_stream(sink, one.schema) as writer:
        writer.write_batch(one)
    payload = memoryview(b"t" + sink.getvalue().to_pybytes())

    class Link:  # the sink's SinkLink, as the row subscriber reads it
        def fieldNames(self) -> list[str]:
            return ["id", "name"]

        def epoch(self) -> int:
            return 0

        def queryId(self) -> str:
            return "benchmark"

        def processed(self, count: int) -> None:
            pass

    def rate(deliver: Any) -> float:
        batches = n // rows
        gc.collect()
        start = time.perf_counter()
        for _ in range(batches):
            deliver()
        return batches * rows / (time.perf_counter() - start)

    tuples = _report.CountingSubscriber(rows)
    tuples.on_subscribe(_report.NoSubscription())
    counted = _report.CountingSubscriber(rows)
    wrapped = RowSubscriber(counted, Link())
    wrapped.on_subscribe(_report.NoSubscription())

    def to_tuples() -> None:
        for item in decode_rows(payload):
            tuples.on_next(item)

    def to_rows() -> None:
        wrapped.on_next_batch(list(decode_rows(payload)))  # the bridge lists a batch for on_next_batch

    rate(to_tuples), rate(to_rows)  # warm-up
    return max(rate(to_tuples) for _ in range(3)), max(rate(to_rows) for _ in range(3))


# Queries, measured over a window.


def per_batch(result: dict[str, Any]) -> str:
    batches = max(1, result["batches"])
    return f"{result['rows'] / batches:,.0f} rows/batch, {result['seconds'] / batches * 1000:.0f} ms/batch"


def start_offset(progress: dict[str, Any]) -> int:
    """Where the reported batch starts: every row before it was processed by then."""
    return int(progress["sources"][0]["startOffset"])


def seconds_offset(rows_per_second: int) -> Any:
    """The ``rate`` source's offsets count seconds, each ``rows_per_second`` rows."""
    return lambda progress: int(progress["sources"][0]["startOffset"]) * rows_per_second


def micro_batch_offset(progress: dict[str, Any]) -> int:
    offset = progress["sources"][0]["startOffset"]
    return int((json.loads(offset) if isinstance(offset, str) else offset)["offset"])


def source_query(spark: Any, name: str, max_records: int | None, sink: Any = None) -> Any:
    reader = spark.readStream.format(rss.FORMAT).option("publisher", name).schema(SCHEMA)
    if max_records is not None:
        reader = reader.option("maxRecordsPerTrigger", max_records)
    df = reader.load()
    writer = df.writeStream.format("noop") if sink is None else sink(df.writeStream)
    return writer.option("checkpointLocation", checkpoint()).start()


def through_source(
    spark: Any, max_records: int | None, args: argparse.Namespace, arrow: bool = False
) -> dict[str, Any]:
    name = f"bench_source_{max_records}_{'arrow' if arrow else 'tuples'}"
    with rss.register_publisher(spark, name, record_batches() if arrow else tuples()):
        query = source_query(spark, name, max_records)
        try:
            result = _report.query_window(query, start_offset, args.warmup, args.window)
        finally:
            query.stop()
    metrics = result["last"]["sources"][0]["metrics"]
    result["bound"] = int(metrics["demandBound"])
    result["max_buffered"] = int(metrics["maxBufferedElements"])
    result["fill"] = result["rows"] / result["batches"] / max_records if max_records else None
    return result


def rate_micro_batch(
    spark: Any, rows_per_batch: int, args: argparse.Namespace, sink: Any = None
) -> dict[str, Any]:
    df = (
        spark.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", rows_per_batch)
        .load()
        .selectExpr("value AS id", "concat('name ', value % 1000) AS name")
    )
    writer = df.writeStream.format("noop") if sink is None else sink(df.writeStream)
    query = writer.option("checkpointLocation", checkpoint()).start()
    try:
        return _report.query_window(query, micro_batch_offset, args.warmup, args.window)
    finally:
        query.stop()


def rate(spark: Any, args: argparse.Namespace) -> dict[str, Any]:
    df = (
        spark.readStream.format("rate")
        .option("rowsPerSecond", args.rate_rows_per_second)
        .load()
        .selectExpr("value AS id", "concat('name ', value % 1000) AS name")
    )
    query = df.writeStream.format("noop").option("checkpointLocation", checkpoint()).start()
    try:
        rows_at = seconds_offset(args.rate_rows_per_second)
        return _report.query_window(query, rows_at, args.warmup, args.window)
    finally:
        query.stop()


# The sink.


def into_subscriber(spark: Any, name: str, arrow: bool) -> tuple[Any, _report.CountingSubscriber]:
    """Rows, 1,024 requested at a time; or Arrow batches (Spark's 10,000 rows), 4 at a time."""
    if arrow:
        counter = _report.CountingSubscriber(1, weigh=lambda batch: batch.num_rows, ahead=4)
    else:
        counter = _report.CountingSubscriber(1024)
    rss.register_subscriber(spark, name, counter, arrow_batches=arrow)
    return (lambda writer: writer.format(rss.FORMAT).option("subscriber", name)), counter


def through_sink(
    spark: Any, fed_by: str, args: argparse.Namespace, rows_per_batch: int = 100_000, arrow: bool = False
) -> dict[str, Any]:
    name = f"bench_sink_{fed_by}_{rows_per_batch}_{'arrow' if arrow else 'rows'}"
    sink, counter = into_subscriber(spark, name, arrow)
    try:
        if fed_by == "rate":  # bounded batches: a batch's rows are on the driver at commit
            result = rate_micro_batch(spark, rows_per_batch, args, sink)
        else:
            with rss.register_publisher(spark, "bench_sink_feed", tuples()):
                query = source_query(spark, "bench_sink_feed", 100_000, sink)
                try:
                    result = _report.query_window(query, start_offset, args.warmup, args.window)
                finally:
                    query.stop()
        result["delivered"] = counter.count
        return result
    finally:
        rss.unregister(spark, name)


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


def soak(spark: Any, rows: int, arrow: bool = False) -> dict[str, Any]:
    """``rows`` through the source into noop (tuples: no per-trigger limit; Arrow batches: 1M a
    trigger), in two halves: resources after a warm-up, after the first half and at the end."""
    name = f"bench_soak_{'arrow' if arrow else 'tuples'}"
    with rss.register_publisher(spark, name, record_batches(rows) if arrow else tuples(rows)):
        query = source_query(spark, name, 1_000_000 if arrow else None)
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
    parser.add_argument("--arrow-soak-rows", type=int, default=100_000_000)
    parser.add_argument("--rate-rows-per-second", type=int, default=8_000_000)
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
    # Spark's noop sink logs a write cut short by stop() as ERROR ("is aborting", "Aborting
    # task"), rate source included; the measurements stop queries mid-batch on purpose, and a
    # real failure still raises out of the query.
    spark.sparkContext.setLogLevel("FATAL")
    rows: list[dict[str, Any]] = []
    extra: dict[str, Any] = {}

    def row(scenario: str, manager: str, rate: float, base: float | None, note: str = "") -> None:
        rows.append(
            {
                "scenario": scenario,
                "checkpoints": manager,
                "rows/s": rate,
                "ratio": f"{rate / base:.2f}" if base else "1.00",
                "notes": note,
            }
        )

    bridge_to_jvm(spark, args.bridge_rows // 4)  # warm-up: JIT, the callback server
    to_jvm = max(bridge_to_jvm(spark, args.bridge_rows) for _ in range(3))
    row("bridge, Python → JVM (from_iterable → Reactor count()): the source's base", "-", to_jvm, None)
    bridge_to_python(spark, args.bridge_rows // 4)
    to_python = max(bridge_to_python(spark, args.bridge_rows) for _ in range(3))
    row(
        "bridge, JVM → Python (Object[] rows → subscriber, request(1024)): the sink's base",
        "-",
        to_python,
        None,
    )
    tuples_alone, rows_alone = python_rows_floors(args.bridge_rows)
    row(
        "Python alone: Arrow rows → tuples → subscriber (the bridge's Python work)",
        "-",
        tuples_alone,
        to_python,
    )
    row(
        "Python alone: Arrow rows → the sink's Rows → subscriber (the sink's Python work)",
        "-",
        rows_alone,
        to_python,
    )

    references: dict[str, dict[str, Any]] = {}
    floors: dict[str, dict[int, dict[str, Any]]] = {}
    sources: dict[str, dict[int | None, dict[str, Any]]] = {}
    sinks: dict[str, dict[str, dict[str, Any]]] = {}
    for manager, manager_class in MANAGERS.items():
        with checkpoints(spark, manager_class):
            reference = references[manager] = rate(spark, args)
            row("Spark rate → noop (reference)", manager, reference["rate"], to_jvm, per_batch(reference))
            floors[manager] = {}
            for size in (10_000, 100_000, 1_000_000):
                floor = floors[manager][size] = rate_micro_batch(spark, size, args)
                row(
                    f"Spark rate-micro-batch, {size:,} rows/batch → noop",
                    manager,
                    floor["rate"],
                    to_jvm,
                    per_batch(floor),
                )
            sources[manager] = {}
            for max_records, arrow in (
                (10_000, False),
                (100_000, False),
                (1_000_000, False),
                (1_000_000, True),
            ):
                key = f"{max_records}{' arrow' if arrow else ''}"
                result = sources[manager][key] = through_source(spark, max_records, args, arrow)
                fill = f", {result['fill']:.0%} full" if result["fill"] is not None else ""
                row(
                    f"Python publisher of {'RecordBatches' if arrow else 'tuples'} → reactive-streams source "
                    "→ "
                    f"noop, maxRecordsPerTrigger {max_records:,}",
                    manager,
                    result["rate"],
                    reference["rate"] if arrow else to_jvm,
                    f"{per_batch(result)}{fill}; held ≤ {result['max_buffered']:,} "
                    f"of bound {result['bound']:,}" + ("; ratio to rate → noop" if arrow else ""),
                )
            sinks[manager] = {}
            for fed_by, size, arrow in (
                ("rate", 100_000, False),
                ("rate", 1_000_000, False),
                ("rate", 1_000_000, True),
                ("source", 100_000, False),
            ):
                key = f"{fed_by} {size}{' arrow' if arrow else ''}"
                result = sinks[manager][key] = through_sink(spark, fed_by, args, size, arrow)
                row(
                    f"{'Spark rate-micro-batch' if fed_by == 'rate' else 'reactive-streams source'} → "
                    f"reactive-streams sink → Python subscriber of {'Arrow batches' if arrow else 'rows'}",
                    manager,
                    result["rate"],
                    reference["rate"] if arrow else to_python,
                    per_batch(result) + ("; ratio to rate → noop" if arrow else ""),
                )
    with checkpoints(spark, rss.LOCAL_CHECKPOINTS):
        soaked = soak(spark, args.soak_rows)
        soaked_arrow = soak(spark, args.arrow_soak_rows, arrow=True)
    spark.stop()

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    def fill_verdict(size: int, fill: float, result: dict[str, Any], bridge: float) -> str:
        batch_seconds = result["seconds"] / max(1, result["batches"])
        if size > bridge * batch_seconds * 1.5:  # the bridge cannot bring that many while a batch runs
            return (
                f"{size:,}: {fill:.0%} (not ready: the bridge brings about {bridge * batch_seconds:,.0f} "
                f"in a batch's {batch_seconds * 1000:.0f} ms, and the source waits at most 500 ms for more)"
            )
        return f"{size:,}: {fill:.0%} — {verdict(fill >= 0.9)}"

    notes = [
        f"local[2], 2 cores; rows (long, string); each query measured over {args.window:.0f} s after a "
        f"{args.warmup:.0f} s warm-up, rows counted from the source's offsets; bridge figures best of 3 "
        f"over {args.bridge_rows:,} rows; Spark's rate source asked for "
        f"{args.rate_rows_per_second:,} rows/s. "
        "Checkpoints: Spark's own manager, or the library's LocalCheckpointFileManager "
        "(rss.configure(..., fast_local_checkpoints=True)).",
    ]
    for manager in MANAGERS:
        src, snk, floor, rate_ = (
            sources[manager],
            sinks[manager],
            floors[manager],
            references[manager]["rate"],
        )
        arrow_source = src["1000000 arrow"]["rate"]
        tuple_source = src["1000000"]["rate"]
        batch_sink = snk["rate 1000000 arrow"]["rate"]
        row_sink = snk["rate 1000000"]["rate"]
        # Micro-batches run one after another: a batch's rows are made, then delivered. With Spark's
        # own rate-micro-batch → noop time per row at that size, the best a sink delivering at the
        # bridge's rate can do is 1 / (1/bridge + that time).
        floor_per_row = 1 / floor[1_000_000]["rate"]
        serial_best = 1 / (1 / to_python + floor_per_row)
        # The sink's rows are Rows, which cost Python more than the bridge's tuples (measured alone,
        # no JVM): delivering at the bridge's rate plus that, after Spark's own time, is the most a
        # row sink can reach while each commit waits for its subscriber.
        rows_extra = 1 / rows_alone - 1 / tuples_alone
        rows_best = 1 / (1 / to_python + rows_extra + floor_per_row)
        notes += [
            f"{manager} checkpoints (issue 22) — RecordBatch elements → source → noop at 1M/trigger "
            f"≥ 50% of rate → noop and ≥ 3 M rows/s: {arrow_source / 1e6:.2f} M, "
            f"{arrow_source / rate_:.0%} — "
            f"{verdict(arrow_source >= 0.5 * rate_ and arrow_source >= 3e6)}; tuple elements ≥ 25%: "
            f"{tuple_source / 1e6:.2f} M, {tuple_source / rate_:.0%} — "
            f"{verdict(tuple_source >= 0.25 * rate_)}; "
            f"rate-micro-batch (1M a batch) → sink → batch subscriber ≥ 30% of rate → noop and ≥ 2 M rows/s: "
            f"{batch_sink / 1e6:.2f} M, {batch_sink / rate_:.0%} — "
            f"{verdict(batch_sink >= 0.3 * rate_ and batch_sink >= 2e6)}; the same with a row subscriber "
            "≥ 80% "
            f"of the bridge's JVM → Python rows: {row_sink / 1e6:.2f} M, {row_sink / to_python:.0%} — "
            f"{verdict(row_sink >= 0.8 * to_python)} (100k a batch: "
            f"{snk['rate 100000']['rate'] / to_python:.0%}). Spark's own rate-micro-batch → noop takes "
            f"{1e9 / floor[1_000_000]['rate']:.0f} ms per 1M rows; a sink that delivered at the "
            f"bridge's rate after it could reach {serial_best / 1e6:.2f} M rows/s, "
            f"{serial_best / to_python:.0%} of the bridge; but its rows are Rows, which take Python "
            f"alone {1e9 / rows_alone:.0f} ms per 1M (decoded and handed over; tuples "
            f"{1e9 / tuples_alone:.0f} ms), so the most it can reach is {rows_best / 1e6:.2f} M rows/s, "
            f"{rows_best / to_python:.0%} of the bridge.",
            f"{manager} checkpoints — micro-batches ≥ 90% of maxRecordsPerTrigger once the publisher has "
            "that "
            "many ready: "
            + "; ".join(
                (
                    f"{int(k.split()[0]):,} of RecordBatches: {v['fill']:.0%} — {verdict(v['fill'] >= 0.9)}"
                    if "arrow" in k  # whole batches of 10,000: the tuples' bridge rate says nothing of them
                    else fill_verdict(int(k.split()[0]), v["fill"], v, to_jvm)
                )
                for k, v in src.items()
                if v["fill"] is not None
            )
            + ".",
        ]
    for label, soaked_run in (("tuples", soaked), ("Arrow batches", soaked_arrow)):
        first, half, end = soaked_run["resources"]
        notes.append(
            f"Soak (fast local checkpoints), {label}: {soaked_run['rows']:,} rows through the source in "
            f"{soaked_run['seconds']:.0f} s ({soaked_run['rows'] / soaked_run['seconds']:,.0f} rows/s). "
            f"Python threads {first['python_threads']} → {half['python_threads']} → {end['python_threads']}, "
            f"JVM threads {first['jvm_threads']} → {half['jvm_threads']} → {end['jvm_threads']}; RSS Python "
            f"{first['python_rss_mib']:.0f} → {half['python_rss_mib']:.0f} → "
            f"{end['python_rss_mib']:.0f} MiB, "
            f"JVM {first['jvm_rss_mib']:.0f} → {half['jvm_rss_mib']:.0f} → {end['jvm_rss_mib']:.0f} MiB "
            "(start, half, end)."
        )
    keep = ("rate", "rows", "seconds", "batches", "fill", "bound", "max_buffered", "delivered")
    extra.update(
        {
            "bridge_to_jvm": to_jvm,
            "bridge_to_python": to_python,
            "rate": {m: v["rate"] for m, v in references.items()},
            "rate_micro_batch": {m: {str(k): v["rate"] for k, v in f.items()} for m, f in floors.items()},
            "source": {
                m: {str(k): {x: v[x] for x in keep if x in v} for k, v in d.items()}
                for m, d in sources.items()
            },
            "sink": {
                m: {k: {x: v[x] for x in keep if x in v} for k, v in d.items()} for m, d in sinks.items()
            },
            "soak": soaked,
            "soak_arrow": soaked_arrow,
        }
    )
    _report.write("spark_streaming", "Spark Structured Streaming (issues 8 and 22)", rows, notes, extra)


if __name__ == "__main__":
    main()
