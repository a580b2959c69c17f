"""Spark Connect throughput, memory and resources, in one run (issues 12 and 13).

One standalone Connect server (`ConnectServer`, local[2], the plugin and the test streams); each
variant runs in a fresh Python child process, a Connect client of that server, so that each
one's RSS growth is its own and no variant inherits another's heap:

- DataFrame → Python: ``--rows`` rows (long, double, string) in ``--partitions`` partitions,
  cached on the server, as ``arrow_batches_from_dataframe(df, prefetch)`` into a counting
  subscriber, against Connect's own ``df.toArrow()`` (the baseline) and ``df.toLocalIterator()``:
  rows/s, time to the first batch (row), and the growth of the client's RSS;
- JVM publisher → Python: the server's ``longs`` publisher (``jvm_publisher``) into a
  ``CountingSubscriber`` requesting 8,192 at a time (and 65,536), against Connect's own
  ``spark.range(N).toArrow()``;
- Structured Streaming: a client publisher → ``register_publisher`` → the ``reactive-streams``
  source → ``noop``, against Connect's own transport of the same rows (``createDataFrame(rows)``
  → ``noop``); the server's ``rate-micro-batch`` source → the sink → a ``register_subscriber``
  subscriber; the demand bounds each side reports against their limits;
- each client's threads and sockets before and after its stream, how soon the ``rs-connect-*``
  threads end after it, the server's open streams, threads and RSS, and its start time.

Before the children run, the parent warms the server's JIT: it runs each operation at full size
until two rounds in a row agree within 10% (at most ``--warmup-rounds``), so that every variant,
the baselines too, is measured on a server in its steady state. With ``--runs`` above 1 the
variants alternate (forwards, then backwards); the table gives each one's median rate and its
largest RSS growth.

    python benchmarks/spark_connect.py [--rows N] [--longs N] [--partitions P] [--prefetch K] [--runs R]

A thousand streams at once against one, three runs (issue 23; see ``_connect_concurrent.py``):

    python benchmarks/spark_connect.py --concurrent [--streams N] [--each N] [--one N] [--runs R]

One variant alone, against a server already running (what the parent runs; handy under py-spy):

    RSPY_CONNECT_URL=sc://... python benchmarks/spark_connect.py --child longs_8192
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import reactive_streams as rs
from reactive_streams import spark as rss

try:
    from . import _connect_concurrent, _report
except ImportError:
    import _connect_concurrent  # type: ignore[no-redef]
    import _report  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
TEST_JAR = ROOT / "build" / "test-jars" / "reactive-streams-py-spark-test-support.jar"
REGISTRARS = "io.github.rspy.spark.testing.ConnectTestStreams"
URL_ENV = "RSPY_CONNECT_URL"
RESULT = "RESULT "  # the child's last line of output: its result as JSON
REQUEST_BATCHES = 64  # Arrow batches the DataFrame subscriber requests at a time
MIB = 1 << 20


# The DataFrame and the variants, each run in a child process.


def frame(spark: Any, rows: int, partitions: int) -> Any:
    return spark.range(0, rows, 1, partitions).selectExpr(
        "id", "id * 0.5 AS x", "CAST(id % 1000 AS STRING) AS s"
    )


class FirstTimed(_report.CountingSubscriber):
    """A `CountingSubscriber` of Arrow batches that also notes when the first one arrived and
    what they weigh (the Arrow bytes)."""

    def __init__(self, batch: int) -> None:
        super().__init__(batch, lambda b: b.num_rows)
        self.first: float | None = None
        self.nbytes = 0

    def on_next(self, item: Any) -> None:
        if self.first is None:
            self.first = time.perf_counter()
        self.nbytes += item.nbytes
        super().on_next(item)


def drain(publisher: rs.Publisher[Any], counter: _report.CountingSubscriber) -> float:
    """Subscribe ``counter`` and wait for its end: the seconds from subscribe to the end."""
    start = time.perf_counter()
    publisher.subscribe(counter)
    counter.done.wait()
    elapsed = time.perf_counter() - start
    if counter.error is not None:
        raise counter.error
    return elapsed


def df_to_arrow(spark: Any, rows: int, args: argparse.Namespace) -> dict[str, Any]:
    df = frame(spark, rows, args.partitions)
    start = time.perf_counter()
    table = df.toArrow()
    seconds = time.perf_counter() - start
    return {"count": table.num_rows, "seconds": seconds, "first": seconds, "arrow_bytes": table.nbytes}


def df_local_iterator(spark: Any, rows: int, args: argparse.Namespace) -> dict[str, Any]:
    df = frame(spark, rows, args.partitions)
    start = time.perf_counter()
    iterator = df.toLocalIterator()
    next(iterator)
    first = time.perf_counter() - start
    count = 1 + sum(1 for _ in iterator)
    return {"count": count, "seconds": time.perf_counter() - start, "first": first}


def df_publisher(spark: Any, rows: int, args: argparse.Namespace) -> dict[str, Any]:
    df = frame(spark, rows, args.partitions)
    counter = FirstTimed(REQUEST_BATCHES)
    start = time.perf_counter()
    seconds = drain(rss.arrow_batches_from_dataframe(df, args.prefetch), counter)
    assert counter.first is not None
    return {
        "count": counter.count,
        "seconds": seconds,
        "first": counter.first - start,
        "arrow_bytes": counter.nbytes,
    }


def range_to_arrow(spark: Any, count: int, args: argparse.Namespace) -> dict[str, Any]:
    start = time.perf_counter()
    table = spark.range(count).toArrow()
    seconds = time.perf_counter() - start
    return {"count": table.num_rows, "seconds": seconds, "first": seconds}


class AheadCounting(_report.CountingSubscriber):
    """Requests ``batch`` at a time too, but one request ahead: two batches outstanding at the
    start, one more each time a batch has arrived (as `iterate`'s replenishing does), so demand
    never runs dry while a request crosses to the server."""

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        super().on_subscribe(subscription)
        subscription.request(self.batch)


def longs(batch: int, ahead: bool = False) -> Any:
    def run(spark: Any, count: int, args: argparse.Namespace) -> dict[str, Any]:
        counter = (AheadCounting if ahead else _report.CountingSubscriber)(batch)
        seconds = drain(rss.jvm_publisher(spark, "longs", str(count)), counter)
        return {"count": counter.count, "seconds": seconds}

    return run


# Structured Streaming over Connect (issue 13): the client's publisher into the source, the
# sink into the client's subscriber.

STREAM_SCHEMA = "id LONG, x DOUBLE"


def stream_rows(count: int) -> list[tuple[int, float]]:
    return [(i, i * 0.5) for i in range(count)]


class RequestLog(rs.Publisher[Any]):
    """A publisher over ``rows`` that records what its subscriber requested and got: the
    client never pushes more than the source asked for (§1.1 end to end)."""

    def __init__(self, rows: list[Any]) -> None:
        self._rows = rows
        self.requested = 0
        self.emitted = 0
        self.most_ahead = 0  # the most emitted beyond the requests, at any time: must be 0

    def subscribe(self, subscriber: rs.Subscriber[Any]) -> None:
        log = self

        class Logged(rs.Subscriber[Any]):
            def on_subscribe(self, subscription: rs.Subscription) -> None:
                class Counted(rs.Subscription):
                    def request(self, n: int) -> None:
                        log.requested += n
                        subscription.request(n)

                    def cancel(self) -> None:
                        subscription.cancel()

                subscriber.on_subscribe(Counted())

            def on_next(self, item: Any) -> None:
                log.emitted += 1
                log.most_ahead = max(log.most_ahead, log.emitted - log.requested)
                subscriber.on_next(item)

            def on_next_batch(self, items: list[Any]) -> None:  # from_iterable's bulk delivery
                log.emitted += len(items)
                log.most_ahead = max(log.most_ahead, log.emitted - log.requested)
                subscriber.on_next_batch(items)  # type: ignore[attr-defined]

            def on_error(self, exc: BaseException) -> None:
                subscriber.on_error(exc)

            def on_complete(self) -> None:
                subscriber.on_complete()

        rs.from_iterable(self._rows).subscribe(Logged())


def stream_source(spark: Any, count: int, args: argparse.Namespace) -> dict[str, Any]:
    """A client publisher → register_publisher → the reactive-streams source → noop."""
    name = f"bench-{time.monotonic_ns()}"
    publisher = RequestLog(stream_rows(count))
    with rss.register_publisher(spark, name, publisher):
        start = time.perf_counter()
        query = (
            spark.readStream.format(rss.FORMAT)
            .option("publisher", name)
            .option("maxRecordsPerTrigger", args.trigger_rows)
            .schema(STREAM_SCHEMA)
            .load()
            .writeStream.format("noop")
            .option("checkpointLocation", checkpoint())
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        seconds = time.perf_counter() - start
        stats = rss.stream_stats(spark, name)
    return {
        "count": stats["elements"],
        "seconds": seconds,
        "bound": args.trigger_rows * 2,  # maxRecordsPerTrigger x (1 + prefetch 1)
        "max_buffered": stats["max_buffered"],
        "requested": stats["requested"],
        "client_requested": publisher.requested,
        "client_most_ahead": publisher.most_ahead,
        "batches": len(query.recentProgress),
    }


def stream_transport(spark: Any, count: int, args: argparse.Namespace) -> dict[str, Any]:
    """Connect's own transport for the same rows: createDataFrame(rows) (Arrow, a local
    relation) → noop."""
    rows = stream_rows(count)
    start = time.perf_counter()
    spark.createDataFrame(rows, STREAM_SCHEMA).write.format("noop").mode("overwrite").save()
    return {"count": count, "seconds": time.perf_counter() - start}


class CappedCounting(_report.CountingSubscriber):
    """Counts up to ``most`` rows, requesting ``batch`` at a time one request ahead, timing from the tenth of
    them (the query is running) to the last, then cancels. As cheap per row as it can be: the
    subscriber's own work is not what is measured."""

    def __init__(self, batch: int, most: int) -> None:
        super().__init__(batch)
        self.most = most
        self.started: float | None = None
        self.ended: float | None = None
        self._mark = most // 10

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        super().on_subscribe(subscription)
        subscription.request(self.batch)  # one request ahead: demand never runs dry

    def on_next(self, item: Any) -> None:
        self.count += 1
        self.pending += 1
        if self.pending == self.batch or self.count == self._mark or self.count >= self.most:
            self._step()

    def _step(self) -> None:
        if self.count == self._mark:
            self.started = time.perf_counter()
        if self.count >= self.most:
            if self.ended is None:
                self.count = self.most
                self.ended = time.perf_counter()
                self.subscription.cancel()
                self.done.set()
            return
        if self.pending == self.batch:
            self.pending = 0
            self.subscription.request(self.batch)


#: The sink's rows, as spark_streaming.py's: a long and a string (rate's timestamp is not what is measured).
SINK_COLUMNS = ("value AS id", "concat('name ', value % 1000) AS name")


def stream_sink(spark: Any, count: int, args: argparse.Namespace) -> dict[str, Any]:
    """The server's rate-micro-batch source → the reactive-streams sink → register_subscriber's
    counting subscriber (65,536 at a time, one ahead)."""
    name = f"bench-{time.monotonic_ns()}"
    counter = CappedCounting(65_536, count)
    with rss.register_subscriber(spark, name, counter):
        query = (
            spark.readStream.format("rate-micro-batch")
            .option("rowsPerBatch", args.sink_batch_rows)
            .load()
            .selectExpr(*SINK_COLUMNS)
            .writeStream.format(rss.FORMAT)
            .option("subscriber", name)
            .option("checkpointLocation", checkpoint())
            .start()
        )
        counter.done.wait()
        stats = rss.stream_stats(spark, name)
        server = stream_stats(spark)
        streams = [*server["streams"].values(), *server["ended"].values()]
        held = max((v.get("max_buffered", 0) for v in streams if v.get("name") == name), default=-1)
        query.stop()
    if counter.error is not None:
        raise counter.error
    assert counter.started is not None and counter.ended is not None
    return {
        "count": counter.count,
        "seconds": (counter.ended - counter.started) * 10 / 9,  # the rate of the last 90%, over all rows
        "bound": 2 * 65_536,  # the most demand outstanding: one request ahead
        "max_buffered": stats["max_buffered"],
        "stream_max_buffered": held,  # what the registration's stream held for the client
        "requested": stats["requested"],
    }


# Issue 22: the same over Arrow, against Connect's createDataFrame(pyarrow.Table) → noop.

ARROW_BATCH_ROWS = 10_000


def stream_table(count: int) -> Any:
    import pyarrow as pa

    ids = pa.array(range(count), pa.int64())
    return pa.table([ids, pa.compute.multiply(ids.cast(pa.float64()), 0.5)], names=["id", "x"])


def stream_transport_arrow(spark: Any, count: int, args: argparse.Namespace) -> dict[str, Any]:
    """Connect's own transport of the rows as a pyarrow.Table (made before the clock starts):
    createDataFrame(table) → noop."""
    table = stream_table(count)
    start = time.perf_counter()
    spark.createDataFrame(table).write.format("noop").mode("overwrite").save()
    return {"count": count, "seconds": time.perf_counter() - start}


def stream_source_arrow(spark: Any, count: int, args: argparse.Namespace) -> dict[str, Any]:
    """A client publisher of pyarrow.RecordBatches of 10,000 rows → the source (1M rows a
    trigger) → noop."""
    name = f"bench-{time.monotonic_ns()}"
    batches = stream_table(count).to_batches(ARROW_BATCH_ROWS)
    with rss.register_publisher(spark, name, rs.from_iterable(batches)):
        start = time.perf_counter()
        query = (
            spark.readStream.format(rss.FORMAT)
            .option("publisher", name)
            .option("maxRecordsPerTrigger", args.arrow_trigger_rows)
            .schema(STREAM_SCHEMA)
            .load()
            .writeStream.format("noop")
            .option("checkpointLocation", checkpoint())
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        seconds = time.perf_counter() - start
        stats = rss.stream_stats(spark, name)
    return {"count": stats["arrow_rows"], "seconds": seconds, "batches": len(query.recentProgress)}


class CappedBatches(CappedCounting):
    """`CappedCounting` for a subscriber of Arrow batches: counts their rows, requests 4 batches
    at a time, one request ahead."""

    def __init__(self, most: int) -> None:
        super().__init__(4, most)

    def on_next(self, item: Any) -> None:
        before = self.count
        self.count += item.num_rows
        self.pending += 1
        if self.started is None and before < self._mark <= self.count:
            self.started = time.perf_counter()
        if self.pending == self.batch or self.count >= self.most:
            self._step()

    def _step(self) -> None:
        if self.count >= self.most:
            if self.ended is None:
                self.count = self.most
                self.ended = time.perf_counter()
                self.subscription.cancel()
                self.done.set()
            return
        if self.pending == self.batch:
            self.pending = 0
            self.subscription.request(self.batch)


def stream_sink_arrow(spark: Any, count: int, args: argparse.Namespace) -> dict[str, Any]:
    """The server's rate-micro-batch source (1M rows a batch) → the sink → a subscriber of Arrow
    batches (Spark's 10,000 rows each), 4 requested at a time, one request ahead."""
    name = f"bench-{time.monotonic_ns()}"
    counter = CappedBatches(count)
    with rss.register_subscriber(spark, name, counter, arrow_batches=True):
        query = (
            spark.readStream.format("rate-micro-batch")
            .option("rowsPerBatch", args.arrow_sink_batch_rows)
            .load()
            .selectExpr(*SINK_COLUMNS)
            .writeStream.format(rss.FORMAT)
            .option("subscriber", name)
            .option("checkpointLocation", checkpoint())
            .start()
        )
        counter.done.wait()
        query.stop()
    if counter.error is not None:
        raise counter.error
    assert counter.started is not None and counter.ended is not None
    return {"count": counter.count, "seconds": (counter.ended - counter.started) * 10 / 9}


def checkpoint() -> str:
    import tempfile

    return tempfile.mkdtemp(prefix="rspy-bench-")


#: name: (the table's label, what it runs, whether it moves the DataFrame (else longs)).
VARIANTS: dict[str, tuple[str, Any, bool]] = {
    "to_arrow": ("df.toArrow() (baseline)", df_to_arrow, True),
    "publisher": ("arrow_batches_from_dataframe → subscriber", df_publisher, True),
    "local_iterator": ("df.toLocalIterator()", df_local_iterator, True),
    "range_to_arrow": ("spark.range(N).toArrow() (baseline)", range_to_arrow, False),
    "longs_8192": ('jvm_publisher("longs") → CountingSubscriber(8192)', longs(8192), False),
    "longs_8192_ahead": ('jvm_publisher("longs") → request(8192), one ahead', longs(8192, ahead=True), False),
    "longs_65536": ('jvm_publisher("longs") → CountingSubscriber(65536)', longs(65536), False),
    "stream_transport": ("createDataFrame(rows) → noop (baseline)", stream_transport, False),
    "stream_source": ("publisher → register_publisher → source → noop", stream_source, False),
    "stream_sink": (
        "rate-micro-batch → sink → register_subscriber (request 65536, one ahead)",
        stream_sink,
        False,
    ),
    "stream_transport_arrow": (
        "createDataFrame(pyarrow.Table) → noop (baseline)",
        stream_transport_arrow,
        False,
    ),
    "stream_source_arrow": (
        "RecordBatch publisher → register_publisher → source (1M/trigger) → noop",
        stream_source_arrow,
        False,
    ),
    "stream_sink_arrow": (
        "rate-micro-batch (1M/batch) → sink → register_subscriber(arrow_batches=True)",
        stream_sink_arrow,
        False,
    ),
}
STREAMING = (
    "stream_transport",
    "stream_source",
    "stream_sink",
    "stream_transport_arrow",
    "stream_source_arrow",
    "stream_sink_arrow",
)
ARROW_STREAMING = ("stream_transport_arrow", "stream_source_arrow", "stream_sink_arrow")


# Resources.


sockets = _report.sockets


def os_threads(pid: int | str = "self") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return 0


def rs_threads() -> list[str]:
    return sorted(t.name for t in threading.enumerate() if t.name.startswith("rs-"))


def live_threads() -> list[threading.Thread]:
    """Python's threads that still run. A thread gRPC made in C that once ran Python code (its
    token plugin, a future's callback) stays in ``threading.enumerate()`` as a ``Dummy-*`` entry
    after it has ended (Python 3.11 never drops them): those count only while their OS thread
    lives."""
    tasks = {int(task) for task in os.listdir("/proc/self/task")}
    return [t for t in threading.enumerate() if type(t).__name__ != "_DummyThread" or t.native_id in tasks]


def resources() -> dict[str, Any]:
    live = live_threads()
    return {
        "python_threads": len(live),
        "os_threads": os_threads(),
        "sockets": sockets(),
        "rs_threads": rs_threads(),
        "thread_names": sorted(t.name for t in live),
        "ended_dummies": threading.active_count() - len(live),
        "rss_mib": _report.rss_mib(),
    }


def rs_threads_end(prefix: str = "rs-connect", timeout: float = 10.0) -> float | None:
    """Seconds until no thread named ``prefix*`` is left (None: some still run after ``timeout``)."""
    start = time.perf_counter()
    while any(name.startswith(prefix) for name in rs_threads()):
        if time.perf_counter() - start > timeout:
            return None
        time.sleep(0.01)
    return time.perf_counter() - start


def settle(before: dict[str, Any], timeout: float = 5.0) -> dict[str, Any]:
    """The resources once the Python threads and sockets are back to ``before``'s counts, or
    after ``timeout`` seconds (PySpark's own threads take a moment to end too)."""
    deadline = time.perf_counter() + timeout
    while True:
        now = resources()
        back = now["python_threads"] <= before["python_threads"] and now["sockets"] <= before["sockets"]
        if back or time.perf_counter() > deadline:
            return now
        time.sleep(0.05)


def stream_stats(spark: Any) -> dict[str, Any]:
    """The server's ``stats`` for this session (the plugin's quick op): its open and ended streams."""
    from reactive_streams.spark._connect._connection import connection

    return connection(spark).quick([{"op": "stats"}])[0]


def session(url: str) -> Any:
    from pyspark.sql import SparkSession

    return SparkSession.builder.remote(url).create()


# The child: one variant, measured.


def child(args: argparse.Namespace) -> None:
    label, run, dataframe = VARIANTS[args.child]
    count = count_of(args.child, args)
    load = [os.getloadavg()[0]]
    start = time.perf_counter()
    spark = session(os.environ[URL_ENV])
    session_seconds = time.perf_counter() - start
    run(spark, max(1, count // 100), args)  # warm-up: imports, this session's first plans
    settled = rs_threads_end("rs-")
    time.sleep(0.5)  # PySpark's threads of the warm-up's call
    gc.collect()
    before = resources()
    peak_before = _report.peak_rss_mib()
    with _report.RssSampler() as sampler:
        result = run(spark, count, args)
    peak_after = _report.peak_rss_mib()
    # ru_maxrss is exact, but counts the warm-up too: the sampler's peak when it did not grow.
    peak = peak_after if peak_after > peak_before else max(sampler.peak["self"], before["rss_mib"])
    ended = rs_threads_end()
    rs_threads_end("rs-")
    after = settle(before)
    stats = stream_stats(spark)
    measured = list(stats["ended"].values())[-1] if stats["ended"] else {}
    cached = dataframe and "InMemoryTableScan" in frame(spark, count, args.partitions)._explain_string()
    spark.stop()
    assert result["count"] == count, (args.child, result["count"], count)
    load.append(os.getloadavg()[0])
    result.update(
        {
            "variant": args.child,
            "label": label,
            "rate": count / result["seconds"],
            "session_seconds": session_seconds,
            "warmup_threads_ended_s": settled,
            "rss_start_mib": before["rss_mib"],
            "rss_peak_mib": peak,
            "rss_growth_mib": peak - before["rss_mib"],
            "before": before,
            "after": after,
            "rs_threads_ended_s": ended,
            "open_streams_after": len(stats["streams"]),
            "server_stream": {k: v for k, v in measured.items() if k != "requests"},
            "cached": cached,
            "load": load,
        }
    )
    print(RESULT + json.dumps(result), flush=True)


def count_of(name: str, args: argparse.Namespace) -> int:
    """How many rows (elements) variant ``name`` moves."""
    if name in ARROW_STREAMING:
        return int(args.arrow_rows)
    if name == "stream_sink":
        return int(args.sink_rows)
    if name in STREAMING:
        return int(args.stream_rows)
    return int(args.rows if VARIANTS[name][2] else args.longs)


def run_child(name: str, url: str, args: argparse.Namespace) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--child", name]
    command += ["--rows", str(args.rows), "--longs", str(args.longs)]
    command += ["--partitions", str(args.partitions), "--prefetch", str(args.prefetch)]
    command += ["--stream-rows", str(args.stream_rows), "--sink-rows", str(args.sink_rows)]
    command += ["--trigger-rows", str(args.trigger_rows), "--sink-batch-rows", str(args.sink_batch_rows)]
    command += ["--arrow-rows", str(args.arrow_rows), "--arrow-trigger-rows", str(args.arrow_trigger_rows)]
    command += ["--arrow-sink-batch-rows", str(args.arrow_sink_batch_rows)]
    done = subprocess.run(
        command, env={**os.environ, URL_ENV: url}, capture_output=True, text=True, timeout=args.child_timeout
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith(RESULT)]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{name} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(lines[-1][len(RESULT) :])  # type: ignore[no-any-return]


# The parent: the server, the warm-up, the children, the report.


def server_resources(pid: int) -> dict[str, Any]:
    """The server's threads (how many, and how many of each kind by name) and RSS."""
    kinds: dict[str, int] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
        except OSError:
            continue
        kind = re.sub(r"[-#_ ]*\d+$", "", name) or name  # names are cut to 15 characters
        kinds[kind] = kinds.get(kind, 0) + 1
    return {"threads": sum(kinds.values()), "rss_mib": _report.rss_mib(pid), "kinds": kinds}


def grown(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """The kinds of thread there are more of ``after``, and how many more."""
    return {k: n - before.get(k, 0) for k, n in sorted(after.items()) if n > before.get(k, 0)}


def process_group(pgid: int) -> list[str]:
    """The processes of group ``pgid`` ("pid state name"), zombies included."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name_end = text.rindex(")")
        fields = text[name_end + 2 :].split()  # state, ppid, pgrp, ...
        if int(fields[2]) == pgid:
            found.append(f"{stat.parent.name} {fields[0]} {text[text.index('(') + 1 : name_end]}")
    return found


def group_left(pgid: int, timeout: float = 5.0) -> tuple[list[str], float]:
    """What is left of process group ``pgid`` once it is empty or after ``timeout`` seconds
    (a zombie reparented to init lasts until init reaps it), and how long that took."""
    start = time.perf_counter()
    while True:
        left = process_group(pgid)
        if not left or time.perf_counter() - start > timeout:
            return left, time.perf_counter() - start
        time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000, help="rows of the DataFrame")
    parser.add_argument("--longs", type=int, default=10_000_000, help="elements of the longs publisher")
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--prefetch", type=int, default=1, help="arrow_batches_from_dataframe's prefetch")
    # Tuples and rows at the Arrow runs' sizes (1M rows a trigger or a batch): one comparison.
    parser.add_argument("--stream-rows", type=int, default=4_000_000, help="rows the client publisher sends")
    parser.add_argument("--sink-rows", type=int, default=4_000_000, help="rows the sink delivers")
    parser.add_argument("--trigger-rows", type=int, default=1_000_000, help="maxRecordsPerTrigger")
    parser.add_argument(
        "--sink-batch-rows", type=int, default=1_000_000, help="rate-micro-batch's rowsPerBatch"
    )
    parser.add_argument("--arrow-rows", type=int, default=4_000_000, help="rows of the Arrow streaming runs")
    parser.add_argument("--arrow-trigger-rows", type=int, default=1_000_000)
    parser.add_argument("--arrow-sink-batch-rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--warmup-rounds", type=int, default=6, help="full-size warm-up rounds at most")
    parser.add_argument("--server-memory", default="4g", help="the server's spark.driver.memory")
    parser.add_argument("--child-timeout", type=float, default=900.0)
    parser.add_argument("--child", choices=sorted(VARIANTS), help=argparse.SUPPRESS)
    parser.add_argument(
        "--concurrent", action="store_true", help="a thousand streams at once against one (issue 23) instead"
    )
    parser.add_argument("--streams", type=int, default=_connect_concurrent.STREAMS, help="with --concurrent")
    parser.add_argument("--each", type=int, default=_connect_concurrent.EACH, help="with --concurrent")
    parser.add_argument("--one", type=int, default=_connect_concurrent.ONE, help="with --concurrent")
    args = parser.parse_args()
    if args.child:
        child(args)
        return

    from reactive_streams.spark.connect_server import ConnectServer

    if args.concurrent:
        args.runs = max(args.runs, 3)
        server = ConnectServer.start(
            0,
            master="local[2]",
            extra_jars=[str(TEST_JAR)],
            conf={"spark.rspy.connect.registrars": REGISTRARS, "spark.driver.memory": args.server_memory},
        )
        try:
            _connect_concurrent.main(args, server, session)
        finally:
            server.stop()
        return

    load = {"start": os.getloadavg()}
    parent_before = resources()
    start = time.perf_counter()
    server = ConnectServer.start(
        0,
        master="local[2]",
        extra_jars=[str(TEST_JAR)],
        conf={
            "spark.rspy.connect.registrars": REGISTRARS,
            "spark.rspy.connect.diagnostics": "true",  # stats lists every session's streams
            "spark.driver.memory": args.server_memory,
            "spark.sql.shuffle.partitions": "2",
        },
    )
    server_start = time.perf_counter() - start
    print(f"server started in {server_start:.1f} s (pid {server.pid}); load {load['start'][0]:.2f}")
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in VARIANTS}
    try:
        spark = session(server.url)
        start = time.perf_counter()
        df = frame(spark, args.rows, args.partitions)
        df.cache()
        assert df.count() == args.rows
        cache_seconds = time.perf_counter() - start
        start = time.perf_counter()
        warmup_rates: dict[str, list[float]] = {}
        for name, (_, run, _) in VARIANTS.items():
            if name in ARROW_STREAMING:
                run(spark, 2 * args.arrow_trigger_rows, args)
            elif name in STREAMING:  # a query each: its start, not its rows, is what warms
                run(spark, 4 * args.trigger_rows, args)
            elif name != "local_iterator":  # the same server path as toArrow, and slow in Python
                warmup_rates[name] = warm_up(spark, name, run, args)
        warmup_seconds = time.perf_counter() - start
        rs_threads_end()
        server_warm = server_resources(server.pid)
        print(f"cached the DataFrame in {cache_seconds:.1f} s; warmed up in {warmup_seconds:.1f} s")
        for run_index in range(args.runs):
            order = list(VARIANTS) if run_index % 2 == 0 else list(reversed(VARIANTS))
            for name in order:
                result = run_child(name, server.url, args)
                result["server_after"] = server_resources(server.pid)
                result["server_after"].pop("kinds")
                results[name].append(result)
                print(
                    f"run {run_index + 1}/{args.runs} {name:15} {result['rate']:>13,.0f} /s  "
                    f"{result['seconds']:6.2f} s  RSS +{result['rss_growth_mib']:.0f} MiB  "
                    f"load {result['load'][0]:.2f}→{result['load'][1]:.2f}",
                    flush=True,
                )
        parent_ended = rs_threads_end()
        everything = stream_stats(spark)["all"]
        server_end = server_resources(server.pid)
        spark.stop()
    finally:
        start = time.perf_counter()
        server.stop()
        server_stop = time.perf_counter() - start
    load["end"] = os.getloadavg()
    parent_after = resources()
    leftover, group_seconds = group_left(server.pid)

    report(
        args,
        results,
        {
            "load": load,
            "server_start_s": server_start,
            "server_stop_s": server_stop,
            "cache_s": cache_seconds,
            "warmup_s": warmup_seconds,
            "warmup_rates": warmup_rates,
            "server_warm": server_warm,
            "server_end": server_end,
            "server_open_streams_end": len(everything["streams"]),
            "server_leftover_processes": leftover,
            "server_group_gone_s": group_seconds,
            "parent_before": parent_before,
            "parent_after": parent_after,
            "parent_rs_threads_ended_s": parent_ended,
        },
    )


WARM_WITHIN = 0.10  # two warm-up rounds whose rates differ less than this: a warm server


def warm_up(spark: Any, name: str, run: Any, args: argparse.Namespace) -> list[float]:
    """Run variant ``name``'s operation at full size until its rate settles (two rounds in a
    row within `WARM_WITHIN`), at most ``--warmup-rounds`` times: the rates of the rounds. A
    path taken once per request (the server's GetStatus handling) needs thousands of calls
    before the JIT has compiled it; a stream of elements warms within its first round."""
    count = count_of(name, args)
    rates: list[float] = []
    while len(rates) < max(1, args.warmup_rounds):
        rates.append(count / run(spark, count, args)["seconds"])
        if len(rates) >= 2 and abs(rates[-1] - rates[-2]) <= WARM_WITHIN * rates[-2]:
            break
    print(f"warmed {name}: " + ", ".join(f"{rate:,.0f}" for rate in rates) + " /s", flush=True)
    return rates


def median(results: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in results)


def report(args: argparse.Namespace, results: dict[str, list[dict[str, Any]]], facts: dict[str, Any]) -> None:
    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    rate = {name: median(r, "rate") for name, r in results.items()}
    warmed = ", ".join(f"{name} {len(rates)}" for name, rates in facts["warmup_rates"].items())
    first = {name: median(r, "first") for name, r in results.items() if "first" in r[0]}
    seconds = {name: median(r, "seconds") for name, r in results.items()}
    growth = {name: max(x["rss_growth_mib"] for x in r) for name, r in results.items()}
    base_df, base_longs = rate["to_arrow"], rate["range_to_arrow"]
    rows: list[dict[str, Any]] = []
    for name, (label, _, dataframe) in VARIANTS.items():
        base = base_df if dataframe else base_longs
        if name in ARROW_STREAMING:
            base = rate["stream_transport_arrow"]
        elif name in STREAMING:
            base = rate["stream_transport"] if name != "stream_sink" else 200_000  # the sink: its target
        rows.append(
            {
                "scenario": label,
                "rows/s": rate[name],
                "ratio": rate[name] / base,
                "seconds": seconds[name],
                "first batch s": f"{first[name]:.2f}" if name in first else "-",
                "client RSS growth MiB": growth[name],
            }
        )

    arrow_mib = median(results["to_arrow"], "arrow_bytes") / MIB
    partition_mib = arrow_mib / args.partitions
    allowance = (2 + args.prefetch) * partition_mib + 32
    ttfb = first["publisher"] / seconds["to_arrow"]
    df_ok = rate["publisher"] >= base_df
    longs_ratio = rate["longs_8192"] / base_longs
    longs_ok = longs_ratio >= 0.5 and rate["longs_8192"] >= 1e6
    ahead_ratio = rate["longs_8192_ahead"] / base_longs
    ahead_ok = ahead_ratio >= 0.5 and rate["longs_8192_ahead"] >= 1e6
    source, sink = results["stream_source"], results["stream_sink"]
    source_ratio = rate["stream_source"] / rate["stream_transport"]
    source_ok = rate["stream_source"] >= 100_000 and source_ratio >= 0.3
    sink_ok = rate["stream_sink"] >= 200_000
    source_held = max(x["max_buffered"] for x in source)
    bound_ok = (
        all(x["max_buffered"] <= x["bound"] and x["client_most_ahead"] == 0 for x in source)
        and all(0 <= x["stream_max_buffered"] <= x["bound"] for x in sink)
        and all(x["client_requested"] == x["requested"] for x in source)
    )
    anchor = rate["stream_transport_arrow"]
    arrow_source_ok = rate["stream_source_arrow"] >= max(anchor, 2e6)
    arrow_sink_ok = rate["stream_sink_arrow"] >= max(anchor, 2e6)
    every = [x for r in results.values() for x in r]
    leaked = [
        x["variant"]
        for x in every
        if x["after"]["python_threads"] > x["before"]["python_threads"]
        or x["after"]["sockets"] > x["before"]["sockets"]
        or x["rs_threads_ended_s"] is None
        or x["open_streams_after"]
    ]
    streams = [
        x
        for x in every
        if x["variant"] in ("publisher", "longs_8192", "longs_8192_ahead", "longs_65536", *STREAMING)
    ]
    slowest_end = max(x["rs_threads_ended_s"] or float("inf") for x in streams)
    held = max(x["server_stream"].get("max_buffered", 0) for x in results["longs_8192"])
    pb, pa = facts["parent_before"], facts["parent_after"]
    sw, se = facts["server_warm"], facts["server_end"]
    loads = [x["load"] for x in every]
    more_threads = ", ".join(f"{k} +{n}" for k, n in grown(sw["kinds"], se["kinds"]).items())
    ours = {
        when: sum(n for k, n in x["kinds"].items() if k.startswith("rspy"))
        for when, x in (("warm", sw), ("end", se))
    }
    clients = "; ".join(
        f"{name} "
        + ", ".join(f"{x['before'][k]}→{x['after'][k]}" for k in ("python_threads", "os_threads", "sockets"))
        for name, r in results.items()
        for x in r[:1]
    )
    cached = all(x["cached"] for x in every if VARIANTS[x["variant"]][2])
    sample = results["publisher"][0]
    targets = {
        "df_rate": df_ok,
        "df_first_batch": ttfb < 0.1,
        "df_memory": growth["publisher"] <= allowance,
        "longs": longs_ok,
        "longs_ahead": ahead_ok,
        "stream_source": source_ok,
        "stream_sink": sink_ok,
        "stream_demand_bound": bound_ok,
        "arrow_source": arrow_source_ok,
        "arrow_sink": arrow_sink_ok,
        "no_leaks": not leaked
        and facts["server_open_streams_end"] == 0
        and ours["end"] <= ours["warm"]
        and not facts["server_leftover_processes"],
    }
    notes = [
        f"One Connect server (local[2], driver memory {args.server_memory}) on this 2-core machine, "
        "shared with the client; each variant in a fresh Python client process (a Connect session of "
        f"its own, one warm-up pass over 1% of the rows first); the server's JIT warmed beforehand by "
        f"running each operation at full size until two rounds in a row agreed within {WARM_WITHIN:.0%} "
        f"(rounds: {warmed}). {args.runs} run(s), variants alternating; "
        "rates and times are medians, RSS growth the largest (peak minus start, this client process "
        "only). Load average (1 min): "
        f"{facts['load']['start'][0]:.2f} at the start, {facts['load']['end'][0]:.2f} at the end, "
        f"{max(max(x) for x in loads):.2f} at most around a variant.",
        f"DataFrame: {args.rows:,} rows (id long, x double, s string) in {args.partitions} partitions, "
        f"{'cached on the server' if cached else 'NOT cached (the plans did not hit the cache)'}; "
        f"{arrow_mib:.0f} MiB as Arrow, {partition_mib:.1f} MiB a partition. "
        f"arrow_batches_from_dataframe with prefetch_partitions={args.prefetch}, Spark's own batch size, "
        f"requesting {REQUEST_BATCHES} batches at a time; the server ran "
        f"{sample['server_stream'].get('jobs_started', '?')} partition jobs for it. "
        f"Ratios: to toArrow() for the DataFrame rows, to spark.range(N).toArrow() "
        f"({args.longs:,} rows) for the longs.",
        f"Arrow publisher ≥ 1× toArrow()'s rows/s: {rate['publisher'] / base_df:.2f}× — {verdict(df_ok)}. "
        f"Time to first batch < 10% of toArrow()'s total: {first['publisher']:.2f} s of "
        f"{seconds['to_arrow']:.2f} s = {ttfb:.0%} — {verdict(targets['df_first_batch'])}. "
        f"Client RSS growth bounded by the prefetch (≤ (2 + prefetch) partitions + 32 MiB = "
        f"{allowance:.0f} MiB): {growth['publisher']:.0f} MiB — {verdict(targets['df_memory'])}; "
        f"toArrow() grew {growth['to_arrow']:.0f} MiB, toLocalIterator() {growth['local_iterator']:.0f} MiB.",
        f"longs, request(8192): {rate['longs_8192'] / 1e6:.2f} M/s, {longs_ratio:.0%} of "
        f"spark.range(N).toArrow()'s {base_longs / 1e6:.2f} M rows/s (targets ≥ 50% and ≥ 1 M/s) — "
        f"{verdict(longs_ok)}: the subscriber asks again only once all 8,192 have arrived, so each "
        "batch waits for a request's round trip (stop-and-wait); the server held at most "
        f"{held:,} elements for it. request(8192) one request ahead (16,384 outstanding at most): "
        f"{rate['longs_8192_ahead'] / 1e6:.2f} M/s, {ahead_ratio:.0%} — {verdict(ahead_ok)}. request(65536): "
        f"{rate['longs_65536'] / 1e6:.2f} M/s ({rate['longs_65536'] / base_longs:.0%}).",
        f"Streaming (issue 13): a client publisher of {args.stream_rows:,} (long, double) tuples "
        "→ register_publisher → readStream.format('reactive-streams') with maxRecordsPerTrigger="
        f"{args.trigger_rows:,} → noop, Trigger.AvailableNow: {rate['stream_source']:,.0f} rows/s = "
        f"{source_ratio:.0%} of Connect's own transport for the same rows (createDataFrame(rows) → noop, "
        f"{rate['stream_transport']:,.0f} rows/s), from the query's start to its end, "
        f"{source[0]['batches']} micro-batches (targets ≥ 100k rows/s and ≥ 30%) — {verdict(source_ok)}. "
        f"The server's rate-micro-batch source ({args.sink_batch_rows:,} rows a batch) → the "
        "reactive-streams sink → a register_subscriber counting subscriber requesting 65,536 at a "
        "time, one request ahead: "
        f"{rate['stream_sink']:,.0f} rows/s over "
        f"the last 90% of {args.sink_rows:,} rows (target ≥ 200k) — {verdict(sink_ok)}. "
        f"Demand bound — {verdict(bound_ok)}: the source held at most {source_held:,} elements against "
        f"its limit maxRecordsPerTrigger × (1 + prefetch) = {source[0]['bound']:,}; the client pushed "
        f"{max(x['client_most_ahead'] for x in source)} elements beyond the requests that reached its "
        f"publisher, whose sum ({source[0]['client_requested']:,}) equals the source's "
        f"({source[0]['requested']:,}); the server held at most "
        f"{max(x['stream_max_buffered'] for x in sink):,} rows for the sink's subscriber against its "
        "outstanding demand (≤ 131,072: 65,536 at a time, one request ahead).",
        f"Streaming over Arrow (issue 22), against Connect's createDataFrame(pyarrow.Table) → noop of "
        f"{args.arrow_rows:,} (long, double) rows, {anchor / 1e6:.2f} M rows/s (targets ≥ 1× and ≥ 2 M "
        f"rows/s): a client publisher of pyarrow.RecordBatches ({ARROW_BATCH_ROWS:,} rows each) → the "
        f"source ({args.arrow_trigger_rows:,} rows a trigger) → noop, "
        f"{rate['stream_source_arrow'] / 1e6:.2f} M "
        f"rows/s, {rate['stream_source_arrow'] / anchor:.2f}× — {verdict(arrow_source_ok)}; rate-micro-batch "
        f"({args.arrow_sink_batch_rows:,} rows a batch) → the sink → a subscriber of Arrow batches, "
        f"{rate['stream_sink_arrow'] / 1e6:.2f} M rows/s, {rate['stream_sink_arrow'] / anchor:.2f}× — "
        f"{verdict(arrow_sink_ok)}. With tuples and rows (the issue-13 runs above, now crossing as Arrow "
        f"too): the source {rate['stream_source'] / 1e6:.2f} M rows/s, "
        f"{rate['stream_source'] / anchor:.2f}× — "
        f"{verdict(rate['stream_source'] >= max(anchor, 2e6))}; the sink to a subscriber of rows "
        f"{rate['stream_sink'] / 1e6:.2f} M rows/s, {rate['stream_sink'] / anchor:.2f}× — "
        f"{verdict(rate['stream_sink'] >= max(anchor, 2e6))}.",
        f"Leaks — {verdict(targets['no_leaks'])}. Each client (Python threads, OS threads, sockets before → "
        f"after its stream, run 1): {clients}"
        f"{'' if not leaked else '; MORE AFTER, or streams left open, in ' + ', '.join(leaked)}. "
        f"The rs-connect-* threads ended at most {slowest_end:.2f} s after a stream's end; "
        f"{facts['server_open_streams_end']} stream(s) open on the server at the end (every session's). "
        f"The server's threads {sw['threads']} → {se['threads']} (after the warm-up → after the "
        f"children), ours (rspy-*) {ours['warm']} → {ours['end']}; more of {more_threads or 'no kind'} "
        "(Spark's block-manager-ask/storage-async pools are cached pools of at most 100 threads that "
        f"idle 60 s). Its RSS {sw['rss_mib']:.0f} → {se['rss_mib']:.0f} MiB. The parent: Python threads "
        f"{pb['python_threads']} → {pa['python_threads']} ({', '.join(pa['thread_names'])}; Dummy-* is a "
        f"gRPC thread that ran Python code), sockets {pb['sockets']} → {pa['sockets']} (before the "
        "server → after it stopped). Python threads count while their OS thread lives: gRPC's threads "
        "that ran Python code and ended stay listed by threading.enumerate() on Python 3.11 "
        f"({max(x['after']['ended_dummies'] for x in every)} in a client at most, "
        f"{pa['ended_dummies']} in the parent).",
        f"Server start (ConnectServer.start until it accepts clients): {facts['server_start_s']:.1f} s; "
        f"stop {facts['server_stop_s']:.1f} s; its process group "
        + (
            f"empty {facts['server_group_gone_s']:.1f} s later."
            if not facts["server_leftover_processes"]
            else f"NOT empty 5 s later: {', '.join(facts['server_leftover_processes'])}."
        ),
    ]
    extra = {
        "args": {k: v for k, v in vars(args).items() if k != "child"},
        "targets": targets,
        "rates": rate,
        "facts": facts,
        "runs": results,
    }
    _report.write("spark_connect", "Spark Connect (issues 12, 13 and 22)", rows, notes, extra)
    for target, ok in targets.items():
        print(f"{target:15} {verdict(ok)}")


if __name__ == "__main__":
    main()
