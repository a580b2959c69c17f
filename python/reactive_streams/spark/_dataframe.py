"""DataFrames as publishers (rows, or Arrow record batches), computed partition by partition as
demand requires; and finite publishers as DataFrames, in bounded chunks.

Partitions travel as Arrow (Spark's own conversion, as ``toPandas`` uses), one Spark job per
partition, started only when the subscriber's demand reaches past what is buffered, with at most
``prefetch_partitions`` more computed ahead, as ``toLocalIterator`` does.
"""

from __future__ import annotations

import os
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from queue import Empty, SimpleQueue
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from .._api import Publisher, Subscriber, Subscription
from .._chunks import RowColumns
from .._demand import Demand, Drain, subscribe_and_start
from .._rules import describe, log_subscriber_failure, require_not_none, signal_terminal
from ._checks import is_connect, iterable_hint, require_classic_session, require_java_dataframe
from ._convert import arrow_batch_to_row_columns, arrow_batches_of, read_batches, spark_error
from ._partitions import PartitionFetcher

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, Row

__all__ = ["arrow_batches_from_dataframe", "dataframe_from_publisher", "publisher_from_dataframe"]

T = TypeVar("T")


def publisher_from_dataframe(df: DataFrame, prefetch_partitions: int = 1) -> Publisher[Row]:
    """A cold publisher of ``df``'s rows (``pyspark.sql.Row``), in order.

    Each subscriber gets its own pass over the DataFrame. A partition is computed (one Spark
    job) only when the subscriber's demand reaches past the rows already fetched, with at most
    ``prefetch_partitions`` partitions computed ahead; so memory holds at most
    ``1 + prefetch_partitions`` partitions, as compact Arrow data, plus the rows of the one Arrow
    batch being delivered. Cancelling stops further Spark jobs and cancels the
    one running. A Spark failure arrives as ``on_error`` (`JvmError`).
    """
    return _DataFramePublisher(df, prefetch_partitions, 0, rows=True)


def arrow_batches_from_dataframe(
    df: DataFrame, prefetch_partitions: int = 1, max_records_per_batch: int = 0
) -> Publisher[pa.RecordBatch]:
    """The bulk form of `publisher_from_dataframe`: ``pyarrow.RecordBatch`` elements, each of at
    most ``max_records_per_batch`` rows (0: Spark's ``spark.sql.execution.arrow.maxRecordsPerBatch``).
    Demand counts batches."""
    return _DataFramePublisher(df, prefetch_partitions, max_records_per_batch, rows=False)


class _DataFramePublisher(Publisher[Any]):
    def __init__(
        self, df: DataFrame, prefetch_partitions: int, max_records_per_batch: int, *, rows: bool
    ) -> None:
        caller = "publisher_from_dataframe()" if rows else "arrow_batches_from_dataframe()"
        # The DataFrame first: it is the argument most often wrong.
        self._connect = df if is_connect(df) else None
        self._jdf = None if self._connect is not None else require_java_dataframe(df, caller)
        if (
            isinstance(prefetch_partitions, bool)
            or not isinstance(prefetch_partitions, int)
            or prefetch_partitions < 0
        ):
            raise ValueError(f"prefetch_partitions must be an int >= 0, got {prefetch_partitions!r}")
        if isinstance(max_records_per_batch, bool) or not isinstance(max_records_per_batch, int):
            raise ValueError(f"max_records_per_batch must be an int, got {max_records_per_batch!r}")
        self._session = df.sparkSession
        self._schema = df.schema
        self._prefetch = prefetch_partitions
        self._per_batch = max_records_per_batch
        self._rows = rows

    def subscribe(self, subscriber: Subscriber[Any]) -> None:
        """Start a pass over the DataFrame for ``subscriber`` (§1.9); nothing is computed before
        its first request."""
        require_not_none(subscriber, "subscriber", "§1.9")
        subscription = _PartitionSubscription(subscriber, self)
        subscribe_and_start(subscriber, subscription)  # §1.9, §2.13

    def open(self) -> PartitionFetcher:
        if self._connect is not None:
            from ._connect import ConnectPartitions

            return ConnectPartitions(self._connect, self._prefetch, self._per_batch)
        jvm = self._session.sparkContext._jvm
        assert jvm is not None
        partitions = jvm.io.github.rspy.spark.DatasetPartitions(self._jdf, self._per_batch)
        return _Partitions(self._session, partitions, self._prefetch)

    def items(self, batches: Iterable[pa.RecordBatch]) -> Iterator[RowColumns[Any] | list[Any]]:
        """A partition's elements, a batch at a time: an Arrow batch's values are made only when
        the previous batch's rows are delivered, so a partition is held as compact Arrow data,
        and each row only as its subscriber takes it (`RowColumns`)."""
        for batch in batches:
            yield arrow_batch_to_row_columns(batch, self._schema) if self._rows else [batch]


class _Partitions(PartitionFetcher):
    """A classic DataFrame's partitions, fetched through the driver's JVM; the Spark jobs run
    under their own job group, so that cancel can stop them."""

    def __init__(self, session: Any, jpartitions: Any, prefetch: int) -> None:
        import pyarrow as pa

        super().__init__(prefetch, initializer=self._join_group)
        self._context = session.sparkContext
        self._jpartitions = jpartitions
        self.count = int(jpartitions.numPartitions())
        self.arrow_schema = pa.ipc.read_schema(pa.py_buffer(bytes(jpartitions.schema())))
        self.group = f"reactive-streams-{uuid.uuid4().hex}"

    def _join_group(self) -> None:
        self._context.setJobGroup(self.group, "reactive_streams publisher_from_dataframe", True)

    def fetch(self, index: int) -> list[pa.RecordBatch]:
        handle, path = tempfile.mkstemp(prefix="rs-partition-", suffix=".arrow")
        os.close(handle)
        try:
            self._jpartitions.fetchToFile(index, path)  # a local file, as Spark's own Arrow path
            with open(path, "rb") as file:
                return read_batches(file.read(), self.arrow_schema)
        finally:
            os.unlink(path)

    def cancel(self) -> None:
        super().cancel()
        try:
            self._context.cancelJobGroup(self.group)
        except Exception:  # the SparkContext is already stopped: nothing runs any more
            pass


class _PassThread:
    """Where a pass over a DataFrame runs its drain's passes: a daemon thread of its own, which
    may block while a partition's job runs and never holds up the interpreter's exit (a live
    pass over a stopped SparkContext must not hang it). The thread stays while requests keep
    coming (starting one for each request cost more than delivering the rows it asked for), and
    ends `LINGER` seconds after the last, or as soon as the pass is over (`close`)."""

    LINGER = 2.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._work: SimpleQueue[Callable[[], None]] = SimpleQueue()
        self._thread: threading.Thread | None = None
        self._closed = False

    def __call__(self, passes: Callable[[], None]) -> None:
        """The drain's ``run_on``: run ``passes`` on the thread (started if it is not running)."""
        with self._lock:
            self._work.put(passes)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="rs-dataframe", daemon=True)
                self._thread.start()

    def close(self) -> None:
        """The pass is over: the thread ends once it has nothing left to run."""
        with self._lock:
            self._closed = True

    def _run(self) -> None:
        work = self._work
        while True:
            try:
                passes = work.get(timeout=self.LINGER)
            except Empty:
                idle = True
            else:
                idle = False
                passes()
                del passes  # what it holds goes before the wait for the next
            with self._lock:
                if work.empty() and (self._closed or idle):
                    self._thread = None
                    return


class _PartitionSubscription(Subscription, Generic[T]):
    """One pass over the DataFrame: a `Drain` on a daemon thread fetches and delivers,
    serially (§1.3), only while there is demand (§1.1); ``request`` and ``cancel`` only record
    and signal it (§3.4, §3.5). Fetching a partition blocks that thread, never a caller."""

    def __init__(self, subscriber: Subscriber[T], publisher: _DataFramePublisher) -> None:
        self._subscriber: Subscriber[T] | None = subscriber  # None once ended (§3.13)
        self._publisher = publisher
        self._demand = Demand()
        self._error: BaseException | None = None  # a §3.9 error waiting for the drain
        self._cancelled = False
        self._partitions: PartitionFetcher | None = None
        self._items: RowColumns[T] | list[T] = []  # the current Arrow batch's, not yet delivered
        self._batches: Iterator[RowColumns[Any] | list[Any]] = iter(())
        self._runner = _PassThread()
        self._drain = Drain(self._pass, run_on=self._runner)

    def start(self) -> None:
        """Nothing to do: the first request starts the pass."""

    @property
    def job_group(self) -> str | None:
        """The Spark job group of this pass's partition jobs (None before the first request)."""
        partitions = self._partitions
        return None if partitions is None else partitions.group

    def request(self, n: int) -> None:
        """Add demand (§3.8, §3.17); ``n <= 0`` ends the stream with §3.9's error."""
        drain = self._drain
        with drain.lock:
            if self._cancelled or self._subscriber is None:
                return  # §3.6
            error = self._demand.add(n)
            if error is not None and self._error is None:
                self._error = error
            run = drain.signal_locked()
        if run:
            drain.passes()

    def cancel(self) -> None:
        """Stop: no more partitions are computed, a running job is cancelled (§3.5, §3.13)."""
        drain = self._drain
        with drain.lock:
            if self._cancelled:
                return
            self._cancelled = True
            partitions = self._partitions
            run = drain.signal_locked()
        if partitions is not None:
            partitions.cancel()  # a fetch under way in the pass fails, and the pass ends
        if run:
            drain.passes()

    def _pass(self) -> None:
        subscriber = self._subscriber
        if subscriber is None:
            return
        try:
            while True:
                with self._drain.lock:
                    error, cancelled, want = self._error, self._cancelled, self._demand.outstanding
                if error is not None:
                    self._end(subscriber, error)  # §3.9
                    return
                if cancelled:
                    self._end(None, None)
                    return
                if want == 0:
                    return  # a request signals the drain again
                if self._items:
                    self._deliver(subscriber, want)
                elif not self._next_items():
                    self._end(subscriber, None)  # §1.5: after the last partition
                    return
        except Exception as exc:
            with self._drain.lock:
                stopped = self._cancelled and self._error is None
            self._end(None if stopped else subscriber, spark_error(exc))

    def _next_items(self) -> bool:
        """Refill ``_items`` from the current partition's next Arrow batch, or the next
        partition (blocking while its job runs); False after the last."""
        partitions = self._partitions
        if partitions is None:
            partitions = self._publisher.open()
            with self._drain.lock:
                self._partitions = partitions
                cancelled = self._cancelled
            if cancelled:
                partitions.cancel()
                return True  # the loop sees the cancel
        while True:
            batch = next(self._batches, None)
            if batch is not None:
                self._items = batch
                return True
            data = partitions.next()
            if data is None:
                return False
            self._batches = self._publisher.items(data)

    def _deliver(self, subscriber: Subscriber[T], want: int) -> None:
        """Up to ``want`` of the rows at hand (§1.1): in one ``on_next_batch`` to a subscriber
        that takes many at once (unmade, as a `LazyChunk`, if it takes those: `iterate`'s), else
        one ``on_next`` each."""
        items, count, sent = self._items, min(want, len(self._items)), 0
        part: Iterable[T]
        if isinstance(items, RowColumns):
            part = items.take(count)
        else:
            part, items[:count] = items[:count], []
        on_next_batch = getattr(subscriber, "on_next_batch", None)
        try:
            if on_next_batch is not None:
                sent = count
                lazy = getattr(subscriber, "lazy_batches", False)
                on_next_batch(part if lazy or isinstance(part, list) else list(part))
            else:
                for item in part:
                    if self._cancelled:
                        break
                    subscriber.on_next(item)  # §1.1
                    sent += 1
        except Exception as exc:
            self.cancel()
            method = "on_next" if on_next_batch is None else "on_next_batch"
            log_subscriber_failure(subscriber, method, exc)  # §2.13
        with self._drain.lock:
            self._demand.produced(sent)

    def _end(self, subscriber: Subscriber[T] | None, error: BaseException | None) -> None:
        """Release the pass (partitions, subscriber); signal ``subscriber``, if given."""
        with self._drain.lock:
            self._cancelled = True  # §1.6
            self._subscriber = None  # §3.13
            partitions = self._partitions
        self._items = []
        self._runner.close()
        if partitions is not None:
            partitions.close()
        if subscriber is not None:
            signal_terminal(subscriber, error)


def dataframe_from_publisher(spark: Any, publisher: Any, schema: Any, chunk_size: int = 10_000) -> DataFrame:
    """A DataFrame of a finite publisher's elements (a Python `Publisher`, or a JVM
    ``org.reactivestreams``/``Flow`` publisher), for ``schema`` (a ``StructType`` or a DDL
    string such as ``"id long, name string"``).

    The publisher is consumed ``chunk_size`` elements at a time (that is all it is asked for at
    once); each chunk becomes an Arrow batch and goes to the driver JVM over the bridge's data
    channel, so Python never holds more than a few chunks. The driver keeps the batches in
    Spark's block manager (blocks of about 32 MiB, memory then disk, as a cached DataFrame's
    partitions), never all in its heap and never inside tasks; they go when the DataFrame is
    unreachable. Elements are tuples, lists or Rows (positional), dicts (by
    field name), or, for a one-column schema, the values themselves; or they are all
    ``pyarrow.RecordBatch``es of the schema's columns (cast if their types differ), which go as
    they are: ``chunk_size`` then counts batches, so give a small one. The publisher's error is
    raised as it is; an element that does not fit the schema raises ``TypeError`` (the
    publisher is then cancelled): a value its column cannot hold raises
    ``reactive_streams.ReactiveStreamsError`` that is a ``TypeError`` and a ``ValueError``,
    naming the row (its index in the stream, and the row) and the column (its name and type).
    """
    from pyspark.sql import DataFrame as PySparkDataFrame
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType, _parse_datatype_string

    from .._iterate import iterate

    connect = is_connect(spark)
    if not connect:
        require_classic_session(spark, "dataframe_from_publisher()")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"chunk_size must be an int >= 1, got {chunk_size!r}")
    if isinstance(schema, str):
        schema = spark._parse_ddl(schema) if connect else _parse_datatype_string(schema)
    if not isinstance(schema, StructType):
        raise TypeError(f"schema must be a StructType or a DDL string, got {schema!r}")
    if not isinstance(publisher, Publisher):
        publisher = _jvm_publisher(spark, publisher, "dataframe_from_publisher()")
    timezone = spark.conf.get("spark.sql.session.timeZone")
    arrow_schema = to_arrow_schema(schema, timezone=timezone)
    batches = iterate(publisher.batch(chunk_size), prefetch=2)

    def arrow_chunks() -> Iterator[pa.RecordBatch]:
        first_row = 0  # of the stream, for errors that name a row
        for rows in batches:
            yield from arrow_batches_of(rows, schema, arrow_schema, first_row)
            first_row += len(rows)

    try:
        chunks = arrow_chunks()
        if connect:
            from ._connect import upload_dataframe

            return upload_dataframe(spark, chunks, schema)
        stored = _stored_in_blocks(spark, chunks)
        return PySparkDataFrame(stored.toDataFrame(schema.json(), spark._jsparkSession), spark)
    finally:
        batches.close()


def _stored_in_blocks(spark: Any, chunks: Iterator[pa.RecordBatch]) -> Any:
    """The Java ``ArrowChunks`` holding ``chunks``, in Spark's block manager: they cross the
    session's bridge's data channel as Arrow IPC messages, a few batches ahead of what is stored. An
    error of the publisher, or of an element that does not fit, is raised as it is."""
    from .._iterable import from_iterable
    from ._session import bridge

    failure: list[BaseException] = []

    def captured() -> Iterator[bytes]:
        try:
            for batch in chunks:  # as IPC messages, which the blocks hold as they are
                yield batch.serialize().to_pybytes()
        except Exception as exc:  # not GeneratorExit: the JVM's cancel closes this generator
            failure.append(exc)
            raise

    stored = spark.sparkContext._jvm.io.github.rspy.spark.ArrowChunks()
    try:
        stored.collect(bridge(spark).to_jvm(from_iterable(captured())))
    except Exception:
        if failure:
            raise failure[0] from None
        raise
    return stored


def _jvm_publisher(spark: Any, publisher: object, caller: str) -> Publisher[Any]:
    """``publisher``, a JVM publisher of ``spark``'s JVM, as a Python one; anything else is
    refused before the session's bridge is made."""
    if is_connect(spark):
        raise TypeError(
            f"{caller}: publisher must be a reactive_streams.Publisher, got {describe(publisher)}"
            f"{iterable_hint(publisher)}; for a JVM publisher registered on the Spark Connect server, "
            "pass reactive_streams.spark.jvm_publisher(spark, name)"
        )
    from py4j.java_gateway import JavaObject

    from ._session import bridge

    if isinstance(publisher, JavaObject):
        try:
            return bridge(spark).from_jvm(publisher)
        except TypeError:
            pass
    raise TypeError(
        f"{caller}: publisher must be a Publisher: a reactive_streams.Publisher, or a JVM "
        "org.reactivestreams.Publisher or Flow.Publisher; got "
        f"{describe(publisher)}{iterable_hint(publisher)}"
    )
