"""No Arrow memory outlives its owner, and a source query's ordinary stop logs no ERROR (issue 35).

``BridgeRuntime.jvmArrowAllocatedBytes()`` counts every allocator the bridge and the Spark
connectors make (each runtime's, the sink's, the source's and its partitions', the Connect
plugin's): all are children of one root."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reactive_streams.spark._streaming import register_publisher

from ..conftest import TEST_JARS
from ..support import steady, wait_for
from .kit import read, run_script

ERROR_LINE = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d ERROR ")


def jvm_arrow_bytes(spark: Any) -> int:
    return int(spark._jvm.io.github.rspy.bridge.BridgeRuntime.jvmArrowAllocatedBytes())


@pytest.mark.timeout(660)  # a child process, given up to 600 s
def test_the_issues_sequence_ten_times_over_leaves_no_arrow_memory_quiet_or_busy() -> None:
    """Ten rounds of: two source queries of Python publishers stopped mid-stream and unregistered,
    four ``dataframe_from_publisher(...).count()``, ``bridge.close()``; the last five while two
    processes burn the machine's cores. Then ``spark.stop()``, which reports an allocator closed
    holding memory as ``ERROR BaseAllocator: Memory was leaked by query``."""
    outcome, stderr = run_script("arrow_leak_script.py", ["10", "5", "0.5", "4", *TEST_JARS], timeout=600)

    steps = outcome["steps"]
    assert len(steps) == 10 * 4
    assert [step for step in steps if step[3] != 0] == []  # every allocator back at 0 after each step
    assert all(step[2] for step in steps if step[1].startswith("query"))  # each stopped after a batch
    assert "Memory was leaked" not in stderr
    stopping = stderr.split("PHASE stop BEGIN", 1)[1]
    assert [line for line in stopping.splitlines() if ERROR_LINE.match(line)] == []


def test_a_batch_handed_over_as_the_query_stops_is_closed(
    spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path
) -> None:
    """A publisher that hands its batches over (as the bridge's Python publishers do) may deliver
    one more as the cancel takes effect (§3.12): the stopped source owns it and closes it."""
    spark, publisher = spark_session, name("late_handover")
    # The worker's other tests share this JVM: what they hold, once their streams have ended.
    before = steady(lambda: jvm_arrow_bytes(spark), "the shared JVM's Arrow bytes")
    late = spark._jvm.io.github.rspy.bridge.testing.LateHandover(1_000)
    register_publisher(spark, publisher, late)
    df = read(spark, publisher, "id LONG, value DOUBLE, name STRING", max_records=5_000)
    query = df.writeStream.format("noop").option("checkpointLocation", str(tmp_path)).start()
    started.append(query)
    deadline = time.monotonic() + 60
    while query.lastProgress is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert query.lastProgress is not None

    query.stop()

    assert late.lateBatches() == 1 and late.emitted() > 1
    # The late batch too: nothing else would ever close it (a deadline that fails, not a value
    # read whatever it is after a while).
    wait_for(lambda: jvm_arrow_bytes(spark) <= before, "the late batch's Arrow bytes to be freed")


@pytest.mark.timeout(300)
def test_stopping_a_source_query_at_random_moments_logs_no_error() -> None:
    """Fifty queries of a Python publisher, through the source into the sink, each stopped at a
    random moment of its batches: no ERROR (once, ``[INTERNAL_ERROR_BROADCAST] Attempted to use
    Broadcast(N) after it was destroyed``, ``Failed to serialize task``, ``Store broadcast ...
    fail``), no broadcast held, no Arrow memory left."""
    outcome, stderr = run_script("source_stop_script.py", ["50", "1.0", "35", *TEST_JARS], timeout=240)

    text = stderr.split("PHASE stops BEGIN", 1)[1].split("PHASE stops END", 1)[0]
    assert [line for line in text.splitlines() if ERROR_LINE.match(line)] == []  # Hadoop's WARNs may come
    assert outcome == {"stops": 50, "live_broadcasts": 0, "arrow_bytes": 0}
