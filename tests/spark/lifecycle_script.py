"""Run in a subprocess by test_lifecycle.py: stopping the SparkSession ends live streams."""

from __future__ import annotations

import json
import sys
import threading
import time

from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss


class Probe(rs.Subscriber[object]):
    def __init__(self) -> None:
        self.error: BaseException | None = None
        self.items = 0
        self.done = threading.Event()

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        subscription.request(rs.MAX_DEMAND)

    def on_next(self, item: object) -> None:
        self.items += 1

    def on_error(self, exc: BaseException) -> None:
        self.error = exc
        self.done.set()

    def on_complete(self) -> None:
        self.done.set()


spark = rss.configure(SparkSession.builder.master("local[1]"), sys.argv[1:]).getOrCreate()
bridge = rss.bridge(spark)  # the session's shared bridge: it closes with the session
flux = bridge.jvm.reactor.core.publisher.Flux
never, ticking = Probe(), Probe()
bridge.from_jvm(flux.never()).subscribe(never)
bridge.from_jvm(flux.interval(bridge.jvm.java.time.Duration.ofMillis(5))).subscribe(ticking)
while ticking.items < 3:
    time.sleep(0.01)
rows = Probe()
rss.publisher_from_dataframe(spark.range(0, 10**8, numPartitions=1000)).subscribe(rows)
while rows.items == 0:
    time.sleep(0.01)
spark.stop()
ended = all(p.done.wait(30) for p in (never, ticking))
print(
    json.dumps(
        {
            "ended": ended,
            "errors": [type(p.error).__name__ for p in (never, ticking)],
            "messages": [str(p.error) for p in (never, ticking)],
            "bridge_closed": bridge.closed,
            "rows_ended": rows.done.wait(30),
        }
    )
)
