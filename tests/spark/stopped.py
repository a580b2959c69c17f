"""For the stop scripts (run in subprocesses by test_sink.py): the end of a stopped query's work
as Spark reports it, rather than a fixed pause a busy machine can outlast (issue 48)."""

from __future__ import annotations

import time
from typing import Any


def wait_until_stopped_and_quiet(spark: Any, query: Any, within: float = 60.0) -> None:
    """Returns once ``query`` (stopped) has no work left: inactive, no job of the driver
    active (its killed tasks have ended, and logged as they did), and every event posted so far
    handled by the listeners. Raises if that does not happen within ``within`` seconds, so a
    script that did not watch the stop ends in failure rather than passing."""
    deadline = time.monotonic() + within
    tracker = spark.sparkContext.statusTracker()
    while query.isActive or tracker.getActiveJobsIds():
        if time.monotonic() > deadline:
            raise AssertionError(
                f"the stopped query's work never ended: active {query.isActive}, "
                f"jobs {tracker.getActiveJobsIds()}"
            )
        time.sleep(0.05)
    left_ms = int(max(0.1, deadline - time.monotonic()) * 1000)
    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(left_ms)  # a TimeoutException if not
