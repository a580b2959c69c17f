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
    def __init__(self, request_after: float = 0.0) -> None:
        self.request_after = request_after  # seconds on_subscribe waits before it requests
        self.error: BaseException | None = None
        self.items = 0
        self.done = threading.Event()

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        time.sleep(self.request_after)
        subscription.request(rs.MAX_DEMAND)

    def on_next(self, item: object) -> None:
        self.items += 1

    def on_error(self, exc: BaseException) -> None:
        self.error = exc
        self.done.set()

    def on_complete(self) -> None:
        self.done.set()


def wait_for_items(probe: Probe, count: int, what: str) -> None:
    """Until ``probe`` has ``count`` items; a stream that ends before that fails the script
    (with its error) instead of keeping it waiting for good."""
    while probe.items < count:
        if probe.done.is_set():
            sys.exit(f"{what} ended before its first {count} items: {probe.error!r}")
        time.sleep(0.01)


spark = rss.configure(SparkSession.builder.master("local[1]"), sys.argv[1:]).getOrCreate()
bridge = rss.bridge(spark)  # the session's shared bridge: it closes with the session
flux = bridge.jvm.reactor.core.publisher.Flux
never, ticking = Probe(), Probe(request_after=0.05)  # late, as on a loaded machine
bridge.from_jvm(flux.never()).subscribe(never)
# Flux.interval fails (OverflowException) when a tick finds no demand, and the first request
# arrives only after the Python subscriber's on_subscribe, a callback round trip that on a
# loaded machine can take longer than a 5 ms period (`ticking` makes it so): ticks with no
# demand are dropped instead.
ticking_flux = flux.interval(bridge.jvm.java.time.Duration.ofMillis(5)).onBackpressureDrop()
bridge.from_jvm(ticking_flux).subscribe(ticking)
wait_for_items(ticking, 3, "the Flux.interval stream")
rows = Probe()
rss.publisher_from_dataframe(spark.range(0, 10**8, numPartitions=1000)).subscribe(rows)
wait_for_items(rows, 1, "the DataFrame's rows")
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
