"""`TaskPublisher`: a Spark task's input (an iterator of Arrow batches, in an executor's Python
worker) as a publisher, pulled only as its subscriber requests: the upstream of a partitioned
sink's subscriber and of a `map_partitions` processor."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ..._api import Publisher, Subscriber
from ..._chunks import RowColumns
from ..._demand import subscribe_and_start
from ..._errors import ReactiveStreamsError
from ..._operators import CANCELLED
from ..._rules import require_not_none, signal_terminal
from .._convert import arrow_batch_to_row_columns, spark_schema_of
from .._partitions import PartitionFetcher, PartitionSubscription

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.types import StructType

__all__ = ["TaskPublisher"]


class TaskPublisher(Publisher[Any]):
    """The task's rows (``pyspark.sql.Row``, made as they are taken) or, with ``rows=False``,
    its ``pyarrow.RecordBatch``es, delivered on a thread of the pass within demand (§1.1, §1.3).
    The iterator is Spark's and can be read once: one subscriber only (§1.9 allows refusing
    more; a second gets ``on_error``). Without a ``schema``, rows are read by the batches' own
    Arrow schema, as Spark types (`spark_schema_of`)."""

    def __init__(self, batches: Iterator[pa.RecordBatch], schema: StructType | None, *, rows: bool) -> None:
        self._batches: Iterator[pa.RecordBatch] | None = batches
        self._schema = schema
        self._rows = rows

    def subscribe(self, subscriber: Subscriber[Any]) -> None:
        """Start the pass for ``subscriber``; nothing is read before its first request (§1.9)."""
        require_not_none(subscriber, "subscriber", "§1.9")
        batches, self._batches = self._batches, None
        if batches is None:  # §1.9: on_subscribe first, then the refusal
            subscriber.on_subscribe(CANCELLED)
            signal_terminal(subscriber, ReactiveStreamsError("a Spark task's rows can be read once"))
            return
        subscribe_and_start(
            subscriber, PartitionSubscription(subscriber, _OneTask(batches, self._schema, self._rows))
        )


class _OneTask:
    """The `PartitionSource` of a task: one partition, Spark's iterator."""

    def __init__(self, batches: Iterator[pa.RecordBatch], schema: StructType | None, rows: bool) -> None:
        self._batches, self._schema, self._rows = batches, schema, rows

    def open(self) -> PartitionFetcher:
        return _TaskFetcher(self._batches)

    def items(self, batches: Iterable[pa.RecordBatch]) -> Iterator[RowColumns[Any] | list[Any]]:
        for batch in batches:
            if not batch.num_rows:
                continue
            if not self._rows:
                yield [batch]
                continue
            if self._schema is None:
                self._schema = spark_schema_of(batch.schema)
            yield arrow_batch_to_row_columns(batch, self._schema)


class _TaskFetcher(PartitionFetcher):
    """Hands out the task's iterator once: it is read lazily, on the pass's thread."""

    def __init__(self, batches: Iterator[pa.RecordBatch]) -> None:  # no fetch threads: Spark feeds it
        self._next: Iterator[pa.RecordBatch] | None = batches
        self.count = 1
        self.group = "task"
        self.jobs_started = 0

    def next(self) -> Iterable[pa.RecordBatch] | None:
        batches, self._next = self._next, None
        return batches

    def cancel(self) -> None:
        self._next = None

    def close(self) -> None:
        self._next = None
