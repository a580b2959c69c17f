"""Helpers shared by the Spark tests: reading a registered publisher as a stream, starting queries
into memory or into a registered subscriber, recording JVM publishers and subscribers, a Python
subscriber that records, and running a script in a child process. (Fixtures: conftest.py.)"""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import reactive_streams as rs
from reactive_streams.spark._streaming import FORMAT

from ..conftest import ROOT, with_port_holders

TIMEOUT = 120.0  # seconds; a bound on waiting, never asserted
#: Spark's elastic pools, with their caps: the block manager's cached pools, which a burst of
#: block removals (the ContextCleaner's, of each unreachable DataFrame's stored batches, each
#: micro-batch's broadcasts) grows to the cap; an idle thread ends after 60 s. Thread counts that
#: say what our code leaves behind are taken without them.
SPARK_ELASTIC_POOLS = {"block-manager-ask-thread-pool": 100, "block-manager-storage-async-thread-pool": 100}
TESTING = "io.github.rspy.bridge.testing"

Source = Callable[..., Any]  # the `source` fixture: (publisher, **read options) -> DataFrame
Sink = Callable[..., tuple[Any, str]]  # the `sink` fixture: (df, subscriber, once=False) -> (query, name)


def read(
    spark: Any,
    publisher: str,
    schema: str,
    max_records: int | None = None,
    prefetch: int | None = None,
    fail_on_data_loss: bool | None = None,
) -> Any:
    reader = spark.readStream.format(FORMAT).option("publisher", publisher).schema(schema)
    for option, value in [
        ("maxRecordsPerTrigger", max_records),
        ("prefetch", prefetch),
        ("failOnDataLoss", fail_on_data_loss),
    ]:
        if value is not None:
            reader = reader.option(option, value)
    return reader.load()


def to_memory(df: Any, table: str, checkpoint: Path, started: list[Any]) -> Any:
    query = (
        df.writeStream.format("memory").queryName(table).option("checkpointLocation", str(checkpoint)).start()
    )
    started.append(query)
    return query


def to_subscriber(df: Any, subscriber: str, checkpoint: Path, started: list[Any], once: bool = False) -> Any:
    writer = df.writeStream.format(FORMAT).option("subscriber", subscriber)
    if once:
        writer = writer.trigger(once=True)
    query = writer.option("checkpointLocation", str(checkpoint)).start()
    started.append(query)
    return query


def table_name() -> str:
    return f"rs_{uuid.uuid4().hex[:8]}"


def count(spark: Any, table: str) -> int:
    return int(spark.table(table).count())


def flux(spark: Any) -> Any:
    return spark._jvm.reactor.core.publisher.Flux


def jvm_publisher(spark: Any, count: int) -> Any:
    """A Reactor ``Flux.range(0, count)`` wrapped to record the demand it gets."""
    return getattr(spark._jvm, TESTING).RecordingPublisher(flux(spark).range(0, count))


def jvm_subscriber(spark: Any, initial: int, each: int) -> Any:
    return getattr(spark._jvm, TESTING).RecordingSubscriber(initial, each)


class Collector(rs.Subscriber[Any]):
    """Requests ``initial``, then ``each`` more per ``each`` received (0: never); records;
    raises from the ``fail_on``-th ``on_next`` if given."""

    def __init__(self, initial: int, each: int = 0, fail_on: int = 0) -> None:
        self.initial, self.each, self.fail_on = initial, each, fail_on
        self.items: list[Any] = []
        self.completed = False
        self.error: BaseException | None = None
        self.done = threading.Event()
        self._subscription: rs.Subscription | None = None

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        self._subscription = subscription
        subscription.request(self.initial)

    def on_next(self, item: Any) -> None:
        self.items.append(item)
        if len(self.items) == self.fail_on:
            raise ValueError(f"boom at row {self.fail_on}")
        if self.each and len(self.items) % self.each == 0 and self._subscription is not None:
            self._subscription.request(self.each)

    def on_error(self, exc: BaseException) -> None:
        self.error = exc
        self.done.set()

    def on_complete(self) -> None:
        self.completed = True
        self.done.set()


def run_script(script: str, args: list[str], timeout: float, cwd: Path = ROOT) -> tuple[Any, str]:
    """Run ``script``, a file in this folder, in a child Python process (its own SparkContext)
    that must succeed: the JSON outcome on the last line of its stdout, and its stderr.

    A child still running after ``timeout`` seconds is sent SIGABRT, which makes it print every
    thread's stack (``PYTHONFAULTHANDLER``), and the test fails with them: a hang says where."""
    env = {**os.environ, "PYTHONFAULTHANDLER": "1"}
    with subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name(script)), *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        try:
            stdout, stderr = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            child.send_signal(signal.SIGABRT)
            try:
                stdout, stderr = child.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()
                stdout, stderr = child.communicate()
            raise AssertionError(
                f"{script} did not end within {timeout:.0f} s; its stdout:\n{stdout[-2000:]}\n"
                f"its stderr (the stacks at the end):\n{stderr[-12000:]}"
            ) from None
    assert child.returncode == 0, with_port_holders(stderr)[-3000:]
    return json.loads(stdout.strip().splitlines()[-1]), stderr


def settled(count: Any, limit: int, seconds: float = 90.0) -> int:
    """``count()`` once it is at most ``limit`` (threads of idle pools, streams and their buffers
    end a moment later), or its last value after ``seconds``."""
    deadline = time.monotonic() + seconds
    value = count()
    while value > limit and time.monotonic() < deadline:
        time.sleep(0.5)
        gc.collect()
        value = count()
    return int(value)
