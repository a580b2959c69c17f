"""Run in a subprocess by test_partitioned.py: what the driver logs when a query on a
`register_sink` sink stops while its write tasks run, or fails, and when a query on another
Python data source stops. Each phase is framed on stderr by ``PHASE <name> BEGIN`` / ``PHASE
<name> END``; the outcome is a JSON line on stdout."""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pyspark.errors import StreamingQueryException
from pyspark.sql import SparkSession
from pyspark.sql.datasource import DataSource, DataSourceStreamWriter, WriterCommitMessage
from stopped import wait_until_stopped_and_quiet  # beside this script, which runs as a file

import reactive_streams as rs
from reactive_streams import spark as rss

spark = (
    rss.configure(SparkSession.builder.master("local[2]"), sys.argv[1:])
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("WARN")
outcome: dict[str, Any] = {}
TIMEOUT = 120


def phase(name: str, edge: str) -> None:
    sys.stderr.flush()
    print(f"PHASE {name} {edge}", file=sys.stderr, flush=True)


def mark(folder: str) -> None:
    """In a worker: say that a write task has begun its rows."""
    import uuid

    (Path(folder) / uuid.uuid4().hex).touch()


class Slow(rs.SyncSubscriber[Any]):
    """Marks its first row in ``folder``, then takes each row in 0.2 s."""

    def __init__(self, folder: str) -> None:
        super().__init__(batch=4)
        self._folder, self._marked = folder, False

    def when_next(self, item: Any) -> None:
        if not self._marked:
            self._marked = True
            mark(self._folder)
        time.sleep(0.2)


class Raising(rs.SyncSubscriber[Any]):
    def when_next(self, item: Any) -> None:
        raise ValueError("boom from a partitioned subscriber")

    def when_error(self, exc: BaseException) -> None:
        pass


class SlowWriter(DataSourceStreamWriter):
    def __init__(self, folder: str) -> None:
        self._folder = folder

    def write(self, iterator: Any) -> WriterCommitMessage:
        for i, _ in enumerate(iterator):
            if i == 0:
                mark(self._folder)
            time.sleep(0.2)
        return WriterCommitMessage()

    def commit(self, messages: Any, batchId: int) -> None:
        pass

    def abort(self, messages: Any, batchId: int) -> None:
        pass


class OtherSink(DataSource):
    """A Python data source that is not `register_sink`'s: its stops are Spark's to log."""

    @classmethod
    def name(cls) -> str:
        return "other_python_sink"

    def streamWriter(self, schema: Any, overwrite: bool) -> Any:
        return SlowWriter(self.options["folder"])


def start(sink: str, rows: int, **options: str) -> Any:
    writer = (
        spark.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", rows)
        .option("numPartitions", 2)
        .load()
        .selectExpr("value")
        .writeStream.format(sink)
        .option("checkpointLocation", tempfile.mkdtemp())
    )
    for key, value in options.items():
        writer = writer.option(key, value)
    return writer.start()


def stop_while_writing(name: str, sink: str, marks: str, **options: str) -> None:
    """Start a query on ``sink``, stop it once a write task is taking rows, frame the stop."""
    query = start(sink, 40, **options)  # 20 rows a task, 4 s each
    deadline = time.monotonic() + TIMEOUT
    while not any(Path(marks).iterdir()) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)  # the tasks are taking rows
    phase(name, "BEGIN")
    query.stop()
    wait_until_stopped_and_quiet(spark, query)  # the killed tasks have ended, and logged as they did
    phase(name, "END")
    outcome[name] = {"exception": str(query.exception()), "batches": len(query.recentProgress)}


# 1. A stop while the write tasks' subscribers take rows.
folder = tempfile.mkdtemp()
rss.register_sink(spark, "slow_partitioned", lambda p, b: Slow(folder))
stop_while_writing("stop", "slow_partitioned", folder)

# 2. A real failure: a subscriber that raises.
rss.register_sink(spark, "raising_partitioned", lambda p, b: Raising())
phase("failure", "BEGIN")
try:
    start("raising_partitioned", 10).awaitTermination(TIMEOUT)
    outcome["failure"] = ""
except StreamingQueryException as error:
    outcome["failure"] = str(error)
phase("failure", "END")

# 3. Another Python data source's stop, in the same session: logged as Spark logs it.
other = tempfile.mkdtemp()
spark.dataSource.register(OtherSink)
stop_while_writing("other", "other_python_sink", other, folder=other)

print(json.dumps(outcome))
spark.stop()
