"""`register_source`: a partitioned, replayable source read in the executors, like a Kafka topic.

The driver decides offsets only (PySpark's Python Data Source API runs ``latestOffset`` and
``partitions`` in a planner worker); each partition of a micro-batch is read in an executor's
Python worker by `read_partition`, which subscribes to ``factory(partition, start)`` and
requests exactly the batch's elements. Spark's read limit (``maxRecordsPerTrigger``) is the
batch's demand, split across the partitions; offsets live in Spark's checkpoint.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from pyspark import cloudpickle
from pyspark.sql.datasource import InputPartition

from ..._errors import ReactiveStreamsError
from ..._rules import describe
from ._read import PartitionError, read_partition
from ._registering import check_name, check_picklable, parse_schema, pickled
from ._shipped import source_class

__all__ = ["DEFAULT_RECORDS_PER_PARTITION", "register_source"]

DEFAULT_RECORDS_PER_PARTITION = 10_000
"""Elements a micro-batch admits per partition of an unbounded source (no ``latest=``) when the
query sets no ``maxRecordsPerTrigger``."""
MAX_RECORDS_OPTION = "maxRecordsPerTrigger"


def register_source(
    spark: Any,
    name: str,
    factory: Callable[[int, int], Any],
    partitions: int,
    schema: Any,
    *,
    latest: Callable[[int], int] | None = None,
    prefetch: int = 8_192,
) -> None:
    """Register ``name`` as a streaming source of ``partitions`` replayable publishers, read by
    ``spark.readStream.format(name).load()`` in the executors, in classic mode and over Spark
    Connect.

    Each micro-batch's partition runs in an executor's Python worker: it subscribes to
    ``factory(partition, start_offset)``, requests exactly the elements the batch admits (at most
    ``prefetch`` ahead of those handed to Spark, §1.1), and cancels (§3.5). The offset of a
    partition counts its elements, so the factory must give the same elements from the same
    offset, as a Kafka partition does; a restart resumes each partition at the offset Spark's
    checkpoint committed, with no gap and no duplicate.

    Admission control is demand: the query's ``maxRecordsPerTrigger`` option (or the read limit
    Spark passes) is split across the partitions, fairly, and no partition is asked for more
    than it has (``latest``). Without ``maxRecordsPerTrigger``, a bounded source reads all it
    has; an unbounded one admits `DEFAULT_RECORDS_PER_PARTITION` per partition per batch.
    A record is an element: a ``pyarrow.RecordBatch`` element counts as one.

    Args:
        spark: the SparkSession (classic or Connect).
        name: the format name for ``readStream.format(name)``.
        factory: ``(partition, start_offset) -> Publisher``, picklable (cloudpickle: a lambda
            or a closure will do). Its elements are tuples, lists or ``Row``s (by position),
            dicts (by field name), or ``pyarrow.RecordBatch``es of the schema's columns.
        partitions: how many partitions, numbered from 0.
        schema: a ``StructType`` or a DDL string (``"id long, v string"``).
        latest: ``(partition) -> offset``: where each partition ends now, for a bounded or
            growing source; it makes ``Trigger.AvailableNow`` possible. Without it the source
            is unbounded: its publishers never run dry.
        prefetch: the most elements a partition holds, requested or received and not yet
            handed to Spark; they go to Spark as Arrow batches of a third of it.

    Raises:
        TypeError / ValueError: an argument is the wrong kind or out of range, or the factory
            cannot be pickled, named here rather than in a task.

    Python workers need this package and pyarrow: `configure` makes local and local-cluster
    workers use the driver's interpreter; see docs/spark.md for a cluster.
    """
    check_name(name, "register_source()")
    if not callable(factory):
        raise TypeError(
            "register_source(): factory must be callable (partition, offset) -> Publisher, "
            f"got {describe(factory)}"
        )
    if isinstance(partitions, bool) or not isinstance(partitions, int) or partitions < 1:
        raise ValueError(f"register_source(): partitions must be an int >= 1, got {partitions!r}")
    if latest is not None and not callable(latest):
        raise TypeError(
            f"register_source(): latest must be callable (partition) -> offset, got {describe(latest)}"
        )
    if isinstance(prefetch, bool) or not isinstance(prefetch, int) or prefetch < 3:
        raise ValueError(
            f"register_source(): prefetch must be an int >= 3 (a chunk being converted and two more), "
            f"got {prefetch!r}"
        )
    struct = parse_schema(spark, schema, "register_source()")
    check_picklable("register_source()", factory=factory, latest=latest)
    spec = SourceSpec(name, factory, latest, partitions, prefetch)
    source = source_class(name, struct.json(), pickled(spec))
    spark.dataSource.register(source)


def _read_limit(options: Any, partitions: int, bounded: bool) -> Any:
    from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

    value = options.get(MAX_RECORDS_OPTION)
    if value is None:
        return ReadAllAvailable() if bounded else ReadMaxRows(partitions * DEFAULT_RECORDS_PER_PARTITION)
    try:
        limit = int(value)
    except ValueError:
        limit = 0
    if limit < 1:
        raise ValueError(f"option {MAX_RECORDS_OPTION} must be an int >= 1, got {value!r}")
    return ReadMaxRows(limit)


def split_limit(budget: float, available: Sequence[float]) -> list[int]:
    """``budget`` elements shared across partitions that have ``available`` each: as evenly as
    possible, a partition never given more than it has, what one cannot take going to the
    others (water-filling); the lower partitions get the remainder of an uneven split."""
    shares = [0] * len(available)
    remaining = budget
    open_ = [p for p in range(len(available)) if available[p] > 0]
    while open_ and remaining >= 1:
        each = remaining / len(open_)
        if math.isinf(each):
            raise ValueError("an unbounded source needs a read limit")
        each_floor = int(each)
        full = [p for p in open_ if available[p] - shares[p] <= each_floor]
        if full:  # these take all they have; the rest is shared again
            for p in full:
                remaining -= available[p] - shares[p]
                shares[p] = int(available[p])
            open_ = [p for p in open_ if p not in full]
            continue
        extra = int(remaining) - each_floor * len(open_)
        for rank, p in enumerate(open_):
            shares[p] += each_floor + (1 if rank < extra else 0)
        break
    return shares


class SourceSpec:
    """A source's arguments, as its reader reads them; pickled into the registered data source
    (`_shipped.source_class`), read in the workers once this library is found there."""

    def __init__(
        self,
        name: str,
        factory: Callable[[int, int], Any],
        latest: Callable[[int], int] | None,
        partitions: int,
        prefetch: int,
    ) -> None:
        self._name, self._factory, self._latest = name, factory, latest
        self._partitions, self._prefetch = partitions, prefetch


def source_reader(spec: bytes, options: Any, schema: Any) -> _PartitionedReader:
    """The reader a `_shipped.ReaderMethods` calls: of the pickled `SourceSpec` ``spec``."""
    return _PartitionedReader(cloudpickle.loads(spec), options, schema)


class _PartitionedReader:
    """Offsets ``{"0": n0, "1": n1, ...}``: each partition's next element. The stream reader
    Spark calls is `_shipped.ReaderMethods`, which calls this."""

    def __init__(self, source: SourceSpec, options: Any, schema: Any) -> None:
        self._source = source
        self._options = options
        self._spark_schema = schema
        self._target: dict[str, int] | None = None  # Trigger.AvailableNow's end
        self._latest_seen: dict[str, int] | None = None  # what latest() said at the last batch

    def _where(self, partition: int) -> str:
        return f"partition {partition} of source {self._source._name!r}"

    def initialOffset(self) -> dict[str, int]:
        return {str(p): 0 for p in range(self._source._partitions)}

    def getDefaultReadLimit(self) -> Any:
        return _read_limit(self._options, self._source._partitions, self._source._latest is not None)

    def _starts(self, start: dict[str, Any]) -> list[int]:
        count = self._source._partitions
        if len(start) > count:
            raise ReactiveStreamsError(
                f"source {self._source._name!r}: the checkpoint holds offsets of {len(start)} partitions, "
                f"the source has {count}: partitions may be added, not removed"
            )
        return [int(start.get(str(p), 0)) for p in range(count)]

    def _latest_now(self, starts: list[int]) -> list[float]:
        latest = self._source._latest
        if latest is None:
            return [math.inf] * len(starts)
        ends: list[float] = []
        for p, begin in enumerate(starts):
            try:
                end = latest(p)
            except Exception as exc:
                raise PartitionError(
                    f"{self._where(p)}: latest({p}) raised {type(exc).__name__}: {exc}"
                ) from exc
            if isinstance(end, bool) or not isinstance(end, int):
                raise PartitionError(
                    f"{self._where(p)}: latest({p}) must return an int offset, got {describe(end)}"
                )
            if end < begin:
                raise PartitionError(
                    f"{self._where(p)}: latest({p}) is {end}, before the committed offset {begin}: "
                    "a partition's offsets never go back"
                )
            ends.append(end)
        return ends

    def latestOffset(self, start: dict[str, Any], limit: Any) -> dict[str, int]:
        from pyspark.sql.streaming.datasource import ReadMaxRows

        starts = self._starts(start)
        ends = self._latest_now(starts)
        if self._source._latest is not None:
            self._latest_seen = {str(p): int(e) for p, e in enumerate(ends)}
        if self._target is not None:
            ends = [min(e, self._target.get(str(p), e)) for p, e in enumerate(ends)]
        available = [max(0.0, e - s) for s, e in zip(starts, ends, strict=True)]
        if isinstance(limit, ReadMaxRows):
            budget: float = limit.max_rows
        elif self._source._latest is None:
            budget = self._source._partitions * DEFAULT_RECORDS_PER_PARTITION
        else:
            budget = math.inf
        if math.isinf(budget):
            shares = [int(a) for a in available]
        else:
            shares = split_limit(budget, available)
        return {str(p): s + n for p, (s, n) in enumerate(zip(starts, shares, strict=True))}

    def prepareForTriggerAvailableNow(self) -> None:
        if self._source._latest is None:
            raise ReactiveStreamsError(
                f"source {self._source._name!r} is unbounded: Trigger.AvailableNow needs "
                "register_source(..., latest=) to say where each partition ends"
            )
        starts = [0] * self._source._partitions
        self._target = {str(p): int(e) for p, e in enumerate(self._latest_now(starts))}

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[Any]:
        starts, ends = self._starts(start), self._starts(end)
        return [InputPartition((p, s, e)) for p, (s, e) in enumerate(zip(starts, ends, strict=True)) if e > s]

    def read(self, partition: Any) -> Any:
        from pyspark.sql.pandas.types import to_arrow_schema

        p, start, end = partition.value
        source = self._source
        where = f"{self._where(p)} (offsets {start} to {end})"
        schema = self._spark_schema
        return read_partition(
            where,
            lambda: source._factory(p, start),
            end - start,
            start,
            schema,
            to_arrow_schema(schema),
            source._prefetch,
        )

    def reportLatestOffset(self) -> dict[str, int] | None:
        """Where each partition ended (``latest``) when the last batch was planned: the
        progress's ``latestOffset`` (PySpark 4.2+), beside its ``endOffset``, which
        `source_progress` turns into the offsets behind ``latest``. None without ``latest``."""
        return self._latest_seen

    def commit(self, end: dict[str, Any]) -> None:
        pass  # the offsets are Spark's checkpoint; a publisher holds nothing to release

    def stop(self) -> None:
        pass
