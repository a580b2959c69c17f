"""DataFrames as publishers (rows, or Arrow record batches), computed partition by partition as
demand requires; and finite publishers as DataFrames, in bounded chunks.

Partitions travel as Arrow (Spark's own conversion, as ``toPandas`` uses), one Spark job per
partition, started only when the subscriber's demand reaches past what is buffered, with at most
``prefetch_partitions`` more computed ahead, as ``toLocalIterator`` does.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from .._api import Publisher, Subscriber
from .._chunks import RowColumns
from .._demand import subscribe_and_start
from .._rules import describe, require_not_none
from ._checks import (
    is_connect,
    iterable_hint,
    require_classic_session,
    require_java_dataframe,
    require_library_jars,
)
from ._convert import arrow_batch_to_row_columns, arrow_batches_of, read_batches
from ._partitions import PartitionFetcher, PartitionSubscription

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
        if self._jdf is not None:
            require_library_jars(df.sparkSession, caller)
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
        subscription = PartitionSubscription(subscriber, self)
        subscribe_and_start(subscriber, subscription)  # §1.9, §2.13

    def open(self) -> PartitionFetcher:
        if self._connect is not None:
            from ._connect import ConnectPartitions

            return ConnectPartitions(self._connect, self._prefetch, self._per_batch)
        jvm = self._session.sparkContext._jvm
        assert jvm is not None
        partitions = jvm.io.github.rspy.spark.dataframe.DatasetPartitions(self._jdf, self._per_batch)
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
    from pyspark.sql.types import StructType, _parse_datatype_string

    from .._iterate import iterate
    from ._connect import reach_server, server_refusals_named

    connect = is_connect(spark)
    if not connect:
        require_classic_session(spark, "dataframe_from_publisher()")
        require_library_jars(spark, "dataframe_from_publisher()")
    else:
        reach_server(spark)
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"chunk_size must be an int >= 1, got {chunk_size!r}")
    if isinstance(schema, str):
        with server_refusals_named():  # on Connect, the server parses it
            schema = spark._parse_ddl(schema) if connect else _parse_datatype_string(schema)
    if not isinstance(schema, StructType):
        raise TypeError(f"schema must be a StructType or a DDL string, got {schema!r}")
    if not isinstance(publisher, Publisher):
        publisher = _jvm_publisher(spark, publisher, "dataframe_from_publisher()")
    with server_refusals_named():
        timezone = spark.conf.get("spark.sql.session.timeZone")
    arrow_schema = _arrow_schema(schema, timezone)
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

    stored = spark.sparkContext._jvm.io.github.rspy.spark.dataframe.ArrowChunks()
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


def _arrow_schema(schema: Any, timezone: str) -> pa.Schema:
    """``schema`` in Arrow as PySpark 4.2 and later make it (timestamps in the session's zone),
    with earlier clients' PySpark too (a Connect client may be older than its server): they give
    timestamps in UTC, re-zoned here."""
    from pyspark.sql.pandas.types import to_arrow_schema

    try:
        return to_arrow_schema(schema, timezone=timezone)
    except TypeError:  # before 4.2: `timestamp_utc`, not `timezone`
        import pyarrow

        made = to_arrow_schema(schema)
        return pyarrow.schema([field.with_type(_zoned(field.type, timezone)) for field in made])


def _zoned(arrow_type: pa.DataType, timezone: str) -> pa.DataType:
    """``arrow_type`` with each time zone of its timestamps (nested ones too) set to ``timezone``."""
    import pyarrow

    types = pyarrow.types
    if types.is_timestamp(arrow_type) and arrow_type.tz is not None:
        return pyarrow.timestamp(arrow_type.unit, tz=timezone)
    if types.is_struct(arrow_type):
        return pyarrow.struct([f.with_type(_zoned(f.type, timezone)) for f in arrow_type])
    if types.is_map(arrow_type):
        return pyarrow.map_(_zoned(arrow_type.key_type, timezone), _zoned(arrow_type.item_type, timezone))
    if types.is_list(arrow_type) or types.is_large_list(arrow_type):
        item = arrow_type.value_field.with_type(_zoned(arrow_type.value_type, timezone))
        return pyarrow.list_(item) if types.is_list(arrow_type) else pyarrow.large_list(item)
    return arrow_type
