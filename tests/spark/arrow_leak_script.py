"""Run in a subprocess by test_arrow_memory.py: issue 35's sequence, which once left 133,120 bytes
of Arrow memory that ``spark.stop()`` reported as leaked. Each round: two streaming queries read
Python publishers through the ``reactive-streams`` source (100,000 and 10,000 rows a trigger), each
stopped ``seconds`` after its first batch is done and its publisher unregistered; ``counts`` calls of
``dataframe_from_publisher(...).count()``; ``bridge.close()``. Then ``spark.stop()``.

Rounds from ``quiet`` on run while two processes burn a core each. After each step the outcome
records the bytes every Arrow allocator of the bridge and the Spark connectors holds
(``BridgeRuntime.jvmArrowAllocatedBytes()``), once it settles: a batch a stop left in the bridge's
queue is closed by the bridge's drain a moment later, a leaked one never. The outcome is a JSON
line on stdout; ``spark.stop()`` is framed on stderr by ``PHASE stop BEGIN`` / ``PHASE stop END``.

    python arrow_leak_script.py ROUNDS QUIET SECONDS COUNTS JAR...
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import sys
import tempfile
import time
from typing import Any

from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss

ROUNDS, QUIET, SECONDS, COUNTS = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
SCHEMA = "id LONG, name STRING"
DATA = [(i, f"name {i % 1000}") for i in range(100_000)]


def burn() -> None:
    while True:
        sum(i * i for i in range(10_000))


def settled(read: Any, patience: float = 10.0) -> int:
    """``read()`` once it is 0, or what it still is after ``patience`` seconds."""
    deadline = time.monotonic() + patience
    value = int(read())
    while value != 0 and time.monotonic() < deadline:
        time.sleep(0.05)
        value = int(read())
    return value


def main() -> None:
    spark = (
        rss.configure(SparkSession.builder.master("local[2]"), sys.argv[5:])
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("WARN")
    runtime = spark._jvm.io.github.rspy.bridge.BridgeRuntime

    def held() -> int:
        return settled(runtime.jvmArrowAllocatedBytes)

    steps: list[list[Any]] = []
    burners: list[multiprocessing.Process] = []
    for r in range(ROUNDS):
        if r == QUIET:
            burners = [multiprocessing.Process(target=burn, daemon=True) for _ in range(2)]
            for p in burners:
                p.start()
        for rows in (100_000, 10_000):
            name = f"leak_{r}_{rows}"
            registration = rss.register_publisher(spark, name, rs.from_iterable(itertools.cycle(DATA)))
            query = (
                spark.readStream.format("reactive-streams")
                .option("publisher", name)
                .option("maxRecordsPerTrigger", rows)
                .schema(SCHEMA)
                .load()
                .writeStream.format("noop")
                .option("checkpointLocation", tempfile.mkdtemp())
                .start()
            )
            # Stopped mid-stream: `SECONDS` after its first batch is done, whatever the machine's
            # load (a fixed pause from the start stopped a third of them before any batch).
            deadline = time.monotonic() + 120
            while query.lastProgress is None:
                if time.monotonic() > deadline:
                    raise SystemExit(f"query {name}: no batch done within 120 s")
                time.sleep(0.05)
            time.sleep(SECONDS)
            progressed = query.lastProgress is not None
            query.stop()
            registration.unregister()
            steps.append([r, f"query {rows}", progressed, held()])
        for k in range(COUNTS):
            rows = 1_000 + 997 * k
            counted = rss.dataframe_from_publisher(spark, rs.from_iterable(DATA[:rows]), SCHEMA).count()
            assert counted == rows, (counted, rows)
        steps.append([r, "counts", True, held()])
        rss.bridge(spark).close()
        steps.append([r, "bridge.close()", True, held()])
    for p in burners:
        p.terminate()
    print(json.dumps({"steps": steps}), flush=True)
    print("PHASE stop BEGIN", file=sys.stderr, flush=True)
    spark.stop()
    print("PHASE stop END", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
