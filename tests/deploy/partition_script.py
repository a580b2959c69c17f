"""Run on the cluster's client host by test_faults.py, in a thin client: streams open against
the Connect server on another host, then the test takes the client's link down, or the
server's host (no packet passes, nobody gets a reset). What the client saw, and when (the
machine's clock, which every host shares): a JVM publisher's subscriber's error, the cancel of
the client's publisher a server query read, and the library's threads still alive once the
streams had ended. Once the test brings the link (or the server) back, a new session streams
again. The outcome is a JSON line on stdout.

    python partition_script.py CONNECT_URL WORK_FOLDER
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss

url, work = sys.argv[1], Path(sys.argv[2])
outcome: dict[str, Any] = {}
spark = SparkSession.builder.remote(url).getOrCreate()


class Watch(rs.Subscriber[Any]):
    """Asks for 10 of a publisher that never emits: waits, until its stream ends."""

    def __init__(self) -> None:
        self.subscribed = threading.Event()
        self.ended = threading.Event()
        self.error: BaseException | None = None
        self.at = 0.0

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        subscription.request(10)
        self.subscribed.set()

    def on_next(self, item: Any) -> None:
        pass

    def on_error(self, exc: BaseException) -> None:
        self.error, self.at = exc, time.time()
        self.ended.set()

    def on_complete(self) -> None:
        self.at = time.time()
        self.ended.set()


class Endless(rs.Publisher[tuple[int]]):
    """Rows for as long as they are asked for; the time of its cancel."""

    def __init__(self) -> None:
        self.cancelled_at = 0.0
        self.cancelled = threading.Event()

    def subscribe(self, subscriber: rs.Subscriber[Any]) -> None:
        source = self

        class Counting(rs.Subscription):
            next = 0

            def request(self, n: int) -> None:
                for i in range(self.next, self.next + n):
                    subscriber.on_next((i,))
                self.next += n

            def cancel(self) -> None:
                source.cancelled_at = time.time()
                source.cancelled.set()

        subscriber.on_subscribe(Counting())


watch, endless = Watch(), Endless()
rss.jvm_publisher(spark, "never").subscribe(watch)
registration = rss.register_publisher(spark, "events", endless)
query = (
    spark.readStream.format("reactive-streams")
    .option("publisher", "events")
    .option("maxRecordsPerTrigger", 100)
    .schema("id LONG")
    .load()
    .writeStream.format("noop")
    .option("checkpointLocation", str(work / "ck"))
    .trigger(processingTime="200 milliseconds")
    .start()
)
deadline = time.monotonic() + 120
while (query.lastProgress is None or not watch.subscribed.is_set()) and time.monotonic() < deadline:
    time.sleep(0.2)
(work / "ready").write_text(str(time.time()))

outcome["ended"] = watch.ended.wait(120)
outcome["error"] = type(watch.error).__name__
outcome["error_message"] = str(watch.error)
outcome["error_at"] = watch.at
outcome["cancelled"] = endless.cancelled.wait(60)
outcome["cancelled_at"] = endless.cancelled_at


def library_threads() -> list[str]:
    """The library's threads of this session's streams (not its process-wide finalizer and timer)."""
    kept = {"rs-finalizer", "rs-timer"}
    return sorted(t.name for t in threading.enumerate() if t.name.startswith("rs-") and t.name not in kept)


outcome["threads_at_loss"] = library_threads()
deadline = time.monotonic() + 30
while library_threads() and time.monotonic() < deadline:
    time.sleep(0.1)
outcome["threads_left"] = library_threads()
(work / "lost").write_text("")

deadline = time.monotonic() + 120
while not (work / "mended").exists() and time.monotonic() < deadline:
    time.sleep(0.1)
again = SparkSession.builder.remote(url).create()
outcome["again"] = list(rs.iterate(rss.jvm_publisher(again, "longs", "10"))) == list(range(10))
again.stop()
print(json.dumps(outcome), flush=True)
