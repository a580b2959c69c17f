"""`map_partitions`: a Reactive Streams processor over each partition of a DataFrame, in the
executors, through ``mapInArrow``: the partition's rows are its upstream (pulled within its
demand, `TaskPublisher`), and its output is iterated back with a bounded buffer and handed to
Spark as Arrow batches."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from pyspark import cloudpickle

from ..._api import Processor
from ..._errors import ReactiveStreamsError
from ..._rules import describe
from ._read import PartitionError, read_partition
from ._registering import check_picklable, in_query_function, parse_schema, pickled
from ._shipped import partition_function
from ._task_publisher import TaskPublisher

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

__all__ = ["map_partitions"]


def map_partitions(
    df: DataFrame,
    processor_factory: Callable[[int], Any],
    schema: Any,
    *,
    batches: bool = False,
    prefetch: int = 8_192,
) -> DataFrame:
    """``df`` through a `Processor` per partition, made by ``processor_factory(partition)`` in
    the executor that holds the partition (classic and Connect: ``DataFrame.mapInArrow``).

    The processor subscribes to the partition's rows (``pyspark.sql.Row``, or
    ``pyarrow.RecordBatch``es with ``batches=True``), which are read from Spark only as it
    requests them; its output (rows as tuples, lists, Rows or dicts, or ``RecordBatch``es of
    ``schema``) is requested at most ``prefetch`` ahead of what Spark has taken, and must end
    with ``on_complete``. A processor that fails, breaks §1.1 or §2.13, or whose factory raises
    fails the task with a `PartitionError` naming the partition.

    Args:
        df: the input DataFrame.
        processor_factory: ``(partition) -> Processor``, picklable.
        schema: the output's ``StructType`` or DDL string.
        batches: give the processor ``pyarrow.RecordBatch``es instead of rows.
        prefetch: output elements requested ahead.

    Raises:
        TypeError / ValueError: a bad argument, or a factory that cannot be pickled.
    """
    if not callable(processor_factory):
        raise TypeError(
            "map_partitions(): processor_factory must be callable (partition) -> Processor, "
            f"got {describe(processor_factory)}"
        )
    if isinstance(prefetch, bool) or not isinstance(prefetch, int) or prefetch < 3:
        raise ValueError(
            f"map_partitions(): prefetch must be an int >= 3 (a chunk being converted and two more), "
            f"got {prefetch!r}"
        )
    out = parse_schema(df.sparkSession, schema, "map_partitions()")
    check_picklable("map_partitions()", processor_factory=processor_factory)
    out_json, rows = out.json(), not batches

    # df's schema is not asked for (on Connect a call, and none is allowed in a pipeline's query
    # function): the task reads its rows by its batches' Arrow schema
    run = partition_function(pickled(processor_factory), out_json, rows, prefetch)
    try:
        return df.mapInArrow(run, out)
    except Exception as exc:
        if not in_query_function(exc):
            raise
        raise ReactiveStreamsError(
            "map_partitions(): PySpark's mapInArrow asks the server for the DataFrame's columns, which a "
            "pipeline's query function may not do: build the DataFrame at the top of the file, from its "
            "source (DOUBLED = map_partitions(spark.readStream.format(...).load(), ...)), and return it "
            "from the query function"
        ) from None


def run_partition(
    spec: bytes,
    inputs: Iterator[pa.RecordBatch],
    out_json: str,
    rows: bool,
    prefetch: int,
) -> Iterator[pa.RecordBatch]:
    """A task of `map_partitions` (`_shipped.partition_function`'s function calls it): the
    pickled processor factory ``spec``'s processor over ``inputs``."""
    import json

    from pyspark import TaskContext
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType

    factory: Callable[[int], Any] = cloudpickle.loads(spec)
    context = TaskContext.get()
    partition = context.partitionId() if context is not None else 0
    where = f"partition {partition} of map_partitions"
    out = StructType.fromJson(json.loads(out_json))

    def make() -> object:
        processor = factory(partition)
        if not isinstance(processor, Processor):
            raise PartitionError(
                f"{where}: processor_factory must return a reactive_streams.Processor, "
                f"got {describe(processor)}"
            )
        TaskPublisher(inputs, None, rows=rows).subscribe(processor)
        return processor

    return read_partition(where, make, None, 0, out, to_arrow_schema(out), prefetch)
