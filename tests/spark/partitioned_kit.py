"""Publishers, subscribers and processors that the partitioned tests have made in the executors'
Python workers. The tests pickle this module by value (`by_value`), so the workers need not
import the tests. Each records what it saw, with its process id, as a JSON file in a folder the
test gives (the workers are other processes: files are how they report)."""

from __future__ import annotations

import itertools
import json
import os
import uuid
from pathlib import Path
from typing import Any

import reactive_streams as rs


def by_value() -> None:
    """Have Spark's cloudpickle carry this module's functions and classes by value."""
    import sys

    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])


def read_available_now(
    spark: Any, reader: Any, checkpoint: Path, timeout: float = 120
) -> tuple[list[Any], Any]:
    """In the driver: ``reader`` (a configured ``readStream``) with Trigger.AvailableNow into a
    memory table; its rows and the query."""
    table = f"rows_{uuid.uuid4().hex[:8]}"
    query = (
        reader.load()
        .writeStream.format("memory")
        .queryName(table)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(timeout), "the query did not end"
    return spark.table(table).collect(), query


def record(folder: str, kind: str, **facts: Any) -> None:
    facts.update(kind=kind, pid=os.getpid())
    path = Path(folder) / f"{kind}-{uuid.uuid4().hex}.json"
    path.write_text(json.dumps(facts))


def records(folder: str | Path, kind: str) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(Path(folder).glob(f"{kind}-*.json"))]


class Recorded(rs.Publisher[Any]):
    """``inner``'s elements; each subscription's requests and cancel are recorded at its end
    (``kind="demand"``, with the partition and start offset)."""

    def __init__(self, inner: rs.Publisher[Any], folder: str, partition: int, start: int) -> None:
        self._inner, self._folder, self._partition, self._start = inner, folder, partition, start

    def subscribe(self, subscriber: rs.Subscriber[Any]) -> None:
        self._inner.subscribe(_RecordedSubscription(subscriber, self))


class _RecordedSubscription(rs.Subscriber[Any], rs.Subscription):
    def __init__(self, downstream: rs.Subscriber[Any], publisher: Recorded) -> None:
        self._downstream, self._publisher = downstream, publisher
        self._upstream: rs.Subscription | None = None
        self._requests: list[int] = []
        self._emitted = 0
        self._recorded = False

    def _record(self, cancelled: bool) -> None:
        if self._recorded:
            return
        self._recorded = True
        p = self._publisher
        record(
            p._folder,
            "demand",
            partition=p._partition,
            start=p._start,
            requests=self._requests,
            emitted=self._emitted,
            cancelled=cancelled,
        )

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        self._upstream = subscription
        self._downstream.on_subscribe(self)

    def on_next(self, item: Any) -> None:
        self._emitted += 1
        self._downstream.on_next(item)

    def on_error(self, exc: BaseException) -> None:
        self._record(False)
        self._downstream.on_error(exc)

    def on_complete(self) -> None:
        self._record(False)
        self._downstream.on_complete()

    def request(self, n: int) -> None:
        self._requests.append(n)
        assert self._upstream is not None
        self._upstream.request(n)

    def cancel(self) -> None:
        self._record(True)
        assert self._upstream is not None
        self._upstream.cancel()


def counting(folder: str) -> Any:
    """A factory: partition ``p`` from offset ``start`` is ``(p, offset, pid)`` for every offset
    from ``start`` on, recorded."""

    def factory(partition: int, start: int) -> rs.Publisher[Any]:
        pid = os.getpid()
        elements = rs.from_iterable(range(start, 1 << 62)).map(lambda offset: (partition, offset, pid))
        return Recorded(elements, folder, partition, start)

    return factory


class Breaking(rs.Publisher[Any]):
    """Breaks a rule once asked for elements: ``"past-demand"`` emits five more than the first
    request, ``"none"`` emits one element and then None, ``"early"`` completes after three
    (within demand, however it is asked)."""

    def __init__(self, how: str, start: int) -> None:
        self._how, self._start = how, start

    def subscribe(self, subscriber: rs.Subscriber[Any]) -> None:
        how, start = self._how, self._start
        state = {"next": start, "ended": False}

        class Subscription(rs.Subscription):
            def request(self, n: int) -> None:
                if state["ended"]:
                    return
                if how == "past-demand":
                    state["ended"] = True
                    for offset in range(start, start + n + 5):
                        subscriber.on_next((0, offset, 0))
                elif how == "none":
                    state["ended"] = True
                    subscriber.on_next((0, start, 0))
                    subscriber.on_next(None)  # type: ignore[arg-type]
                else:
                    for _ in range(min(n, start + 3 - state["next"])):
                        subscriber.on_next((0, state["next"], 0))
                        state["next"] += 1
                    if state["next"] == start + 3:
                        state["ended"] = True
                        subscriber.on_complete()

            def cancel(self) -> None:
                state["ended"] = True

        subscriber.on_subscribe(Subscription())


class Audit(rs.SyncSubscriber[Any]):
    """Counts and sums the task's first column, records it (``kind="sink"``) when complete."""

    def __init__(self, folder: str, partition: int, batch_id: int | None, batch: int = 100) -> None:
        super().__init__(batch=batch)
        self._folder, self._partition, self._batch_id = folder, partition, batch_id
        self._count = 0
        self._sum = 0
        self._types: set[str] = set()

    def when_next(self, item: Any) -> None:
        self._count += 1
        self._sum += item[0]
        self._types.add(type(item).__name__)

    def when_complete(self) -> None:
        from pyspark import TaskContext

        context = TaskContext.get()
        record(
            self._folder,
            "sink",
            partition=self._partition,
            batch_id=self._batch_id,
            count=self._count,
            sum=self._sum,
            types=sorted(self._types),
            attempt=None if context is None else context.attemptNumber(),
        )


class SlowAudit(rs.AsyncSubscriber[Any]):
    """An `AsyncSubscriber` whose hooks run on its executor: it records (``kind="sink"``) only
    after a pause, once ``on_complete`` has long returned. Arrow batches are its elements."""

    def __init__(self, folder: str, partition: int, batch_id: int | None) -> None:
        super().__init__(batch=4)
        self._folder, self._partition, self._batch_id = folder, partition, batch_id
        self._count = 0

    def when_next(self, item: Any) -> None:
        import pyarrow as pa

        assert isinstance(item, pa.RecordBatch)
        self._count += item.num_rows

    def when_complete(self) -> None:
        import time

        time.sleep(0.5)
        record(self._folder, "sink", partition=self._partition, batch_id=self._batch_id, count=self._count)


class Failing(rs.SyncSubscriber[Any]):
    """Raises in ``when_next`` at the element numbered ``at``; ``cancel=True`` cancels instead."""

    def __init__(self, at: int, cancel: bool = False) -> None:
        super().__init__(batch=16)
        self._at, self._cancel, self._seen = at, cancel, 0

    def when_next(self, item: Any) -> bool:
        self._seen += 1
        if self._seen == self._at:
            if self._cancel:
                return False
            raise ValueError(f"no row {self._seen} today")
        return True

    def when_error(self, exc: BaseException) -> None:
        pass  # the task fails with it: no log line of ours needed


class Held(rs.Subscriber[Any]):
    """Holds its demand: asks for everything ``pause`` seconds after ``on_subscribe``, from
    another thread, then takes ``per_row`` seconds over each row. A task with it waits at least
    ``pause`` plus ``per_row`` times its rows for its subscriber."""

    def __init__(self, pause: float, per_row: float) -> None:
        self._pause, self._per_row = pause, per_row

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        import threading

        threading.Timer(self._pause, subscription.request, (1 << 40,)).start()

    def on_next(self, item: Any) -> None:
        import time

        time.sleep(self._per_row)

    def on_error(self, exc: BaseException) -> None:
        pass  # the task fails with it

    def on_complete(self) -> None:
        pass


def run_into_sink(
    spark: Any, source: str, sink: str, checkpoint: str, max_records: int, timeout: float
) -> Any:
    """A query of ``source`` into ``sink``, ``max_records`` a batch, run to its end (``availableNow``)."""
    query = (
        spark.readStream.format(source)
        .option("maxRecordsPerTrigger", max_records)
        .load()
        .writeStream.format(sink)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(timeout)
    return query


def held_sink_figures(spark: Any, source: str, sink: str, checkpoint: str, timeout: float) -> Any:
    """Two partitions of 30, 20 rows a batch, into `Held(0.3, 0.02)` subscribers: the query, once
    it has run to its end, after its figures (`rss.sink_progress`) were checked against what that
    run must show: each 10-row task waited at least 300 + 10 x 20 ms for its subscriber."""
    from reactive_streams import spark as rss

    rss.register_source(spark, source, numbered, 2, "p int, offset long", latest=lambda p: 30)
    rss.register_sink(spark, sink, lambda p, b: Held(0.3, 0.02))
    query = run_into_sink(spark, source, sink, checkpoint, 20, timeout)
    figures = rss.sink_progress(query)
    assert figures is not None
    assert (figures["queryId"], figures["sink"]) == (query.id, sink)
    assert (figures["batchId"], figures["batches"]) == (2, 3)
    assert (figures["deliveredRows"], figures["lastBatchRows"], figures["lastBatchTasks"]) == (60, 20, 2)
    assert figures["lastBatchWaitMs"] >= 500, figures
    assert figures["lastBatchTaskWaitMs"] >= 2 * 500, figures
    assert figures["totalWaitMs"] >= 3 * 500, figures
    return query


def numbered(partition: int, start: int) -> rs.Publisher[Any]:
    """``(partition, offset)`` from ``start`` on, without end."""
    return rs.from_iterable((partition, offset) for offset in itertools.count(start))


def read_to_the_end(spark: Any, name: str, checkpoint: str, max_records: int, timeout: float) -> Any:
    """A query of ``name`` into ``noop``, ``max_records`` a batch, run to its end (``availableNow``)."""
    query = (
        spark.readStream.format(name)
        .option("maxRecordsPerTrigger", max_records)
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(timeout)
    return query


def doubling(partition: int) -> rs.Processor[Any, Any]:
    """A processor of rows ``(id,)`` into ``(id * 2, pid)``."""
    pid = os.getpid()
    return rs.MapProcessor(lambda row: (row[0] * 2, pid))


def described(partition: int) -> rs.Processor[Any, Any]:
    """A processor of each row into ``(values_repr(row), repr of its field names)``."""
    return rs.MapProcessor(lambda row: (values_repr(row), repr(row.__fields__)))


def values_repr(row: Any) -> str:
    """The repr of a row's values, binary as ``bytes``: PySpark 4.1+ collects binary as bytes,
    a task's rows (as PySpark 4.0 collected them) hold bytearrays."""
    return repr(tuple(bytes(v) if isinstance(v, bytearray) else v for v in row))


def batch_sizes(partition: int) -> rs.Processor[Any, Any]:
    """A processor of Arrow batches into one row each: ``(partition, rows in the batch)``."""
    return rs.MapProcessor(lambda batch: (partition, batch.num_rows))


def failing_processor(partition: int) -> rs.Processor[Any, Any]:
    def boom(row: Any) -> Any:
        if row[0] == 7:
            raise ValueError("seven is not allowed")
        return (row[0],)

    return rs.MapProcessor(boom)
