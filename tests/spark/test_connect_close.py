"""Closing a Connect session ends our streams' operations first: ``spark.stop()`` right after the
demo's streaming path, and with streams of every kind still open, leaves the server's log (the
child's stderr) without a WARN or ERROR line or a stack trace, where it once ended with Spark's
``Got detached from opId``, ``SessionHolder not found`` and ``INVALID_CURSOR.DISCONNECTED``."""

from __future__ import annotations

import pytest

from ..quiet_logs import noisy_lines
from .kit import run_script

# Spark's own, whatever the source and sink: no concern of ours.
SPARKS = {
    r" WARN ResolveWriteToStream: spark\.sql\.adaptive\.enabled is not supported": "every streaming query",
    r" WARN DAGScheduler: Failed to cancel job group [-\w]+\. Cannot find active jobs for it\.": (
        "query.stop() of a query between batches (StreamExecution.stop cancels its job group)"
    ),
    # A DataFrame fetch's job, cancelled by the close mid-partition: Spark's own ArrowConverters
    # iterator closes its allocator with the batch it was making still open (Spark's task
    # completion listener logs it; the memory is Spark's allocator's, freed with the task).
    r" ERROR BaseAllocator: Memory was leaked by query\. Memory leaked: \(\d+\)$": "toArrowBatchIterator's",
    r"^Allocator\(toArrowBatchIterator\) ": "its allocator's line",
    r" ERROR TaskContextImpl: Error in TaskCompletionListener$": "the listener that closes it",
    r"^java\.lang\.IllegalStateException: Memory was leaked by query\. Memory leaked: \(\d+\)$": "the same",
    # The scheduler's word on that fetch's task, killed by the cancel of our own job tag.
    r" WARN TaskSetManager: Lost task [\d.]+ in stage [\d.]+ \(TID \d+\) \(.*\): TaskKilled \(Stage "
    r"cancelled: \[SPARK_JOB_CANCELLED\] Job \d+ cancelled part of cancelled job tags rspy-connect-": (
        "the fetch's task, cancelled"
    ),
}


@pytest.mark.timeout(400)
def test_stopping_the_session_after_the_demos_streaming_path_logs_nothing() -> None:
    _, log = run_script("connect_close_script.py", ["finished"], timeout=360)
    assert noisy_lines(log, SPARKS) == [], log[-6000:]


@pytest.mark.timeout(400)
def test_stopping_the_session_with_streams_of_every_kind_open_ends_them_first() -> None:
    outcome, log = run_script("connect_close_script.py", ["live"], timeout=360)
    assert noisy_lines(log, SPARKS) == [], log[-6000:]
    assert outcome["taken"] == [10, 10, 10]
    # The query stopped first: its sink completed its subscriber; the JVM publisher's subscriber
    # heard why its stream ended.
    assert outcome["sink"] == "complete"
    assert outcome["jvm"] == "error: the Spark Connect session closed while the stream was open"
