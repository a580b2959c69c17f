"""`register_sink`: a subscriber per write task, made and run in the executors.

A write task (one partition of one micro-batch) makes ``factory(partition, batch_id)`` and
hands it the task's rows under its own demand: `TaskPublisher` pulls Spark's Arrow batches only
as the subscriber requests (§1.1, §3.4). The task returns (Spark commits it) once the
subscriber has finished ``on_complete`` and its `completion`, if it has one; an error fails
the task, and Spark retries it or aborts the batch.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import Any

from pyspark import cloudpickle
from pyspark.sql.datasource import WriterCommitMessage

from ..._api import Subscriber, Subscription
from ..._rules import describe
from .._checks import is_connect
from ._read import PartitionError
from ._registering import check_name, check_picklable, pickled, reached
from ._shipped import sink_class
from ._task_publisher import TaskPublisher

__all__ = ["SinkCommit", "register_sink"]

BATCH_ID_PROPERTY = "streaming.sql.batchId"
"""The local property Spark's micro-batch execution sets on its jobs: the batch's id."""
QUERY_ID_PROPERTY = "sql.streaming.queryId"
"""The local property Spark's stream execution sets on its jobs: the query's id."""


def register_sink(
    spark: Any, name: str, factory: Callable[[int, int | None], Any], *, batches: bool = False
) -> None:
    """Register ``name`` as a sink whose write tasks each deliver their rows to a subscriber
    made in the executor: ``df.writeStream.format(name).option("checkpointLocation", path)
    .start()`` (and ``df.write.format(name).mode("append").save()``), classic and Connect.

    Each task calls ``factory(partition, batch_id)`` (``batch_id`` is None for a batch write),
    subscribes the subscriber to its rows (``pyspark.sql.Row``, or ``pyarrow.RecordBatch``es
    with ``batches=True``; demand then counts batches), and pulls Spark's rows only as the
    subscriber requests. The task succeeds once the subscriber's ``on_complete`` has returned,
    and, if it has a ``completion`` future (`SyncSubscriber`, `AsyncSubscriber`), once that
    has resolved. It fails, and Spark retries it or aborts the batch, when the factory or a
    signal method raises, when ``completion`` holds an error, or when the subscriber cancels
    before the last row (its rows would be lost).

    Delivery is at least once: a retried task, or a batch replayed after a restart, delivers
    the same rows again to a new subscriber with the same ``(partition, batch_id)`` (for a
    deterministic query). A subscriber that writes idempotently under that key gets exactly
    once.

    Raises:
        TypeError: ``name`` is not a name, ``factory`` is not callable or cannot be pickled.
    """
    check_name(name, "register_sink()")
    if not callable(factory):
        raise TypeError(
            "register_sink(): factory must be callable (partition, batch_id) -> Subscriber, "
            f"got {describe(factory)}"
        )
    check_picklable("register_sink()", factory=factory)
    sink = sink_class(name, pickled(SinkSpec(name, factory, bool(batches))))
    reached(spark)
    spark.dataSource.register(sink)
    _quiet_stops(spark, name)


def _quiet_stops(spark: Any, name: str) -> None:
    """Keep an ordinary ``stop()`` of a query writing to ``name`` out of the driver's ERROR log
    (the JVM's ``PartitionedSinkStops``), in a classic session whose driver has the connectors'
    jar (``configure``). Else Spark logs such a stop's aborted write as it always does."""
    if is_connect(spark):
        return
    from py4j.java_gateway import JavaClass

    stops = spark._jvm.io.github.rspy.spark.sink.PartitionedSinkStops
    if isinstance(stops, JavaClass):
        stops.watch(spark._jsparkSession, name)


class SinkCommit(WriterCommitMessage):
    """What a write task reports: its partition, batch and the elements its subscriber took,
    how long the task waited for its subscriber (``wait_ms``: in its signal methods, with no
    demand outstanding, and for its ``completion``), and its streaming query's id (None for a
    batch write). The streaming write's commit adds them to the query's figures
    (`rss.sink_progress`)."""

    def __init__(
        self,
        partition: int,
        batch_id: int | None,
        delivered: int,
        wait_ms: int = 0,
        query_id: str | None = None,
    ) -> None:
        self.partition, self.batch_id, self.delivered = partition, batch_id, delivered
        self.wait_ms, self.query_id = wait_ms, query_id


class SinkSpec:
    """A sink's arguments, as its write tasks read them; pickled into the registered data
    source (`_shipped.sink_class`), read in the executors once this library is found there."""

    def __init__(self, name: str, factory: Callable[[int, int | None], Any], batches: bool) -> None:
        self._name, self._factory, self._batches = name, factory, batches


def write_task(spec: bytes, schema_json: str, batches: Iterator[Any]) -> SinkCommit:
    """A write task of the sink of the pickled `SinkSpec` ``spec`` (`_shipped`'s writers call it)."""
    from pyspark import TaskContext
    from pyspark.sql.types import StructType

    sink: SinkSpec = cloudpickle.loads(spec)
    context = TaskContext.get()
    partition = context.partitionId() if context is not None else 0
    property_ = context.getLocalProperty(BATCH_ID_PROPERTY) if context is not None else None
    batch_id = None if property_ is None else int(property_)
    query_id = context.getLocalProperty(QUERY_ID_PROPERTY) if context is not None else None
    where = f"partition {partition} of sink {sink._name!r}" + (
        "" if batch_id is None else f", batch {batch_id}"
    )
    try:
        subscriber = sink._factory(partition, batch_id)
    except Exception as exc:
        raise PartitionError(f"{where}: the factory raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(subscriber, Subscriber):
        raise PartitionError(
            f"{where}: the factory must return a reactive_streams.Subscriber, got {describe(subscriber)}"
        )
    schema = StructType.fromJson(json.loads(schema_json))
    watched = Watched(subscriber)
    TaskPublisher(batches, schema, rows=not sink._batches).subscribe(watched)
    delivered = watched.wait_for_end(where)
    return SinkCommit(partition, batch_id, delivered, watched.wait_ms(), query_id)


class Watched(Subscriber[Any]):
    """Stands between a publisher and the user's subscriber, passing every signal on, to learn
    when the subscriber is through: its terminal signal has returned, or it cancelled, or a
    signal method raised (§2.13: the publisher then cancels). It also times the task's wait for
    the subscriber: the time in its signal methods, and the time with none of its demand left
    (from the last element it asked for to its next ``request``)."""

    def __init__(self, subscriber: Subscriber[Any]) -> None:
        self._subscriber = subscriber
        self._ended = threading.Event()
        self._failure: BaseException | None = None
        self._cancelled = False
        self._completed = False
        self.delivered = 0
        self.lazy_batches = getattr(subscriber, "lazy_batches", False)
        self._batch = getattr(subscriber, "on_next_batch", None)
        self._lock = threading.Lock()  # demand comes on the subscriber's threads, elements on the pass's
        self._outstanding = 0
        self._idle_since: float | None = None  # when the demand ran out, while it stays out
        self._waited = 0.0  # seconds

    def _raised(self, exc: BaseException) -> None:
        if self._failure is None:
            self._failure = exc
        self._ended.set()

    def _requested(self, n: int) -> None:
        with self._lock:
            self._outstanding += max(n, 0)  # n <= 0 is the publisher's §3.9 error to give
            if n > 0 and self._idle_since is not None:
                self._waited += time.monotonic() - self._idle_since
                self._idle_since = None

    def _took(self, count: int, started: float) -> None:
        """``count`` elements handed over in a signal that started at ``started``."""
        now = time.monotonic()
        with self._lock:
            self._waited += now - started
            self._outstanding -= count
            if self._outstanding <= 0 and self._idle_since is None and not self._ended.is_set():
                self._idle_since = now

    def wait_ms(self) -> int:
        """How long the task has waited for the subscriber, in milliseconds."""
        with self._lock:
            idle = 0.0 if self._idle_since is None else time.monotonic() - self._idle_since
            return int((self._waited + idle) * 1000)

    def on_subscribe(self, subscription: Subscription) -> None:
        started = time.monotonic()
        try:
            self._subscriber.on_subscribe(_Cancels(subscription, self))
        except BaseException as exc:
            self._raised(exc)
            raise
        self._took(0, started)

    def on_next(self, item: Any) -> None:
        started = time.monotonic()
        try:
            self._subscriber.on_next(item)
        except BaseException as exc:
            self._raised(exc)
            raise
        self.delivered += 1
        self._took(1, started)

    def on_next_batch(self, items: Any) -> None:
        started = time.monotonic()
        try:
            if self._batch is not None:
                self._batch(items)
            else:
                for item in items:
                    self._subscriber.on_next(item)
        except BaseException as exc:
            self._raised(exc)
            raise
        self.delivered += len(items)
        self._took(len(items), started)

    def on_error(self, exc: BaseException) -> None:
        try:
            self._subscriber.on_error(exc)
        finally:
            self._raised(exc)

    def on_complete(self) -> None:
        started = time.monotonic()
        self._stop_idle(started)
        try:
            self._subscriber.on_complete()
        except BaseException as exc:
            self._raised(exc)
            raise
        self._took(0, started)
        self._completed = True
        self._ended.set()

    def _stop_idle(self, now: float) -> None:
        """The stream ended: no more waiting for demand (the subscriber needs none for its end)."""
        with self._lock:
            if self._idle_since is not None:
                self._waited += now - self._idle_since
                self._idle_since = None
            self._outstanding = 1 << 62  # keeps the idle clock stopped from here on

    def wait_for_end(self, where: str) -> int:
        """Block until the subscriber is through, and its ``completion`` (if it has one) has
        resolved; the elements it took, or a `PartitionError` saying why not."""
        self._ended.wait()
        delivered = self.delivered
        completion = getattr(self._subscriber, "completion", None)
        if isinstance(completion, Future) and self._failure is None:
            started = time.monotonic()
            try:  # a hook's failure shows here: the base cancels, then runs when_error
                completion.result()
            except Exception as exc:
                self._failure = exc
            self._took(0, started)  # the subscriber's own work still: the task waits on it
        if self._failure is not None:
            failure = self._failure
            raise PartitionError(
                f"{where}: the subscriber failed after {delivered} elements: "
                f"{type(failure).__name__}: {failure}"
            ) from failure
        if not self._completed:
            raise PartitionError(
                f"{where}: the subscriber cancelled after {delivered} elements; "
                "the task's other rows would be lost"
            )
        return delivered


class _Cancels(Subscription):
    """The publisher's subscription, telling `Watched` of a cancel."""

    def __init__(self, subscription: Subscription, watched: Watched) -> None:
        self._subscription, self._watched = subscription, watched

    def request(self, n: int) -> None:
        self._watched._requested(n)  # first: the pass may deliver inside the request
        self._subscription.request(n)

    def cancel(self) -> None:
        self._subscription.cancel()
        self._watched._cancelled = True
        self._watched._ended.set()
