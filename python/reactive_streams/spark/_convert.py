"""Conversions between Spark's Arrow batches and Python values, and Spark errors."""

from __future__ import annotations

import datetime
import functools
import operator
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from .._chunks import RowColumns
from .._errors import JvmError, ReactiveStreamsError
from ..jvm import error_from_java
from ..jvm._arrow import RowSchemaError, column_label, first_misfit, short_repr

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Row
    from pyspark.sql.types import DataType, StructType

__all__ = [
    "arrow_batch_to_row_columns",
    "arrow_batches_of",
    "read_batches",
    "rows_to_arrow_batch",
    "spark_error",
]


def read_batches(data: bytes, schema: pa.Schema) -> list[pa.RecordBatch]:
    """Framed batches: an 8-byte big-endian length, an Arrow IPC message, padding to 8 bytes
    (the messages stay aligned, so Arrow reads them in place); a zero length ends."""
    import pyarrow as pa

    view = memoryview(data)
    batches: list[pa.RecordBatch] = []
    position = 0
    while True:
        length = int.from_bytes(view[position : position + 8], "big")
        position += 8
        if length == 0:
            return batches
        message = pa.ipc.read_message(pa.py_buffer(view[position : position + length]))
        batches.append(pa.ipc.read_record_batch(message, schema))
        position += length + (8 - length % 8) % 8


def row_type(fields: Sequence[str]) -> type:
    """A ``pyspark.sql.Row`` subclass whose instances have the column names ``fields``.

    ``tuple.__new__(Row, values)`` and ``row.__fields__ = fields`` give each row a dict of its
    own; with the names on the class, a row is just the tuple, made in C (about three times
    faster). Its instances are Rows in every way PySpark and users look at them: ``isinstance``,
    ``asDict()``, ``row.name``, ``row["name"]``, ``repr``, equality with ``Row(**fields)``, and
    pickling (as a plain ``Row``). One class for the same names (the last 256 kept), not one
    for every batch.
    """
    return _row_type(tuple(fields))


@functools.lru_cache(maxsize=256)
def _row_type(fields: tuple[str, ...]) -> type:
    from pyspark.sql import Row

    return type("Row", (Row,), {"__fields__": list(fields)})


def arrow_batch_to_row_columns(batch: pa.RecordBatch, schema: StructType) -> RowColumns[Row]:
    """A batch's rows as ``DataFrame.collect()`` gives them (naive local datetimes for
    timestamps, ``bytearray`` for binary, ``Row`` for structs, dicts for maps), held as columns
    of Python values, each row made only as it is taken: numbers and strings are not tracked by
    the garbage collector, rows are, and a row made then is freed as soon as its consumer is
    done with it."""
    columns = []
    for index, field in enumerate(schema.fields):
        values = batch.column(index).to_pylist()
        convert = _converter(field.dataType)
        columns.append(values if convert is None else [None if v is None else convert(v) for v in values])
    if not columns:
        from pyspark.sql import Row

        return RowColumns([[None] * batch.num_rows], lambda _: Row())
    # Rows of a class that holds the names, made in C: no dict per row (see row_type)
    return RowColumns(columns, partial(tuple.__new__, row_type(schema.names)))


def spark_schema_of(schema: pa.Schema) -> StructType:
    """An Arrow schema as the Spark types it carries (a timestamp without a zone is
    ``TIMESTAMP_NTZ``): how a task reads its input without asking the session for it."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema, prefer_timestamp_ntz=True)


def _converter(data_type: DataType) -> Callable[[Any], Any] | None:
    """How an Arrow value becomes what PySpark returns for ``data_type``; None: as it is."""
    from pyspark.sql.types import (
        ArrayType,
        BinaryType,
        MapType,
        StructType,
        TimestampType,
    )

    if isinstance(data_type, TimestampType):
        return _local_naive
    if isinstance(data_type, BinaryType):
        return bytearray
    if isinstance(data_type, StructType):
        return _struct_converter(data_type)
    if isinstance(data_type, ArrayType):
        element = _converter(data_type.elementType)
        if element is None:
            return None
        return lambda values: [None if v is None else element(v) for v in values]
    if isinstance(data_type, MapType):
        key, value = _converter(data_type.keyType), _converter(data_type.valueType)

        def to_dict(pairs: Sequence[tuple[Any, Any]]) -> dict[Any, Any]:
            return {
                (k if key is None else key(k)): (v if value is None or v is None else value(v))
                for k, v in pairs
            }

        return to_dict
    return None


def _struct_converter(schema: StructType) -> Callable[[dict[str, Any]], Row]:
    from pyspark.sql import Row

    fields = schema.names
    converters = [_converter(f.dataType) for f in schema.fields]

    def to_row(value: dict[str, Any]) -> Row:
        values = []
        for name, convert in zip(fields, converters, strict=True):
            item = value.get(name)
            values.append(item if convert is None or item is None else convert(item))
        row = tuple.__new__(Row, values)
        row.__fields__ = fields
        return row

    return to_row


def _local_naive(value: datetime.datetime) -> datetime.datetime:
    if value.tzinfo is None:
        return value
    return value.astimezone().replace(tzinfo=None)


def rows_to_arrow_batch(
    rows: Sequence[Any], schema: StructType, arrow_schema: pa.Schema, first_row: int = 0
) -> pa.RecordBatch:
    """Elements as an Arrow batch of ``schema``: tuples, lists and Rows are positional, dicts
    are by field name, and for a one-column schema any other value is the column's value.

    A value that does not fit its column raises `RowSchemaError` (a ``TypeError`` and a
    ``ValueError``) naming the row (``first_row`` is the index of ``rows[0]`` in the stream) and
    the column, as the bridge's ``schema=`` does.
    """
    import pyarrow as pa

    names = schema.names
    width = len(names)
    columns: Sequence[Sequence[Any]]
    if rows and isinstance(rows[0], tuple | dict) and not _local_times(schema):
        # Whole rows in Arrow's C++ at once, tuples (and Rows) by position, dicts by key, as
        # below but twice as fast. What does not fit is left to the path below, whose errors name it.
        try:
            struct = pa.array(rows, type=pa.struct(arrow_schema))
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            pass
        else:
            return pa.RecordBatch.from_arrays(struct.flatten(), schema=arrow_schema)
    kinds = set(map(type, rows))
    if kinds <= {tuple, list} and set(map(len, rows)) <= {width}:  # checked in C
        # Transposed in C with itemgetter: zip(*rows) would make an iterator per row, and the
        # garbage collector, run for every 700 of them, walks every live object of the process.
        columns = [list(map(operator.itemgetter(index), rows)) for index in range(width)]
    else:
        columns = _columns_of(rows, names)
    arrays = []
    for column, field, arrow_field in zip(columns, schema.fields, arrow_schema, strict=True):
        values = _for_arrow(column, field.dataType)
        try:
            arrays.append(pa.array(values, type=arrow_field.type))
        except (pa.ArrowException, ArithmeticError, ValueError, TypeError) as exc:
            raise _misfit(rows, values, field, arrow_field.type, first_row, exc) from exc
    return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema)


def _misfit(
    rows: Sequence[Any],
    values: Sequence[Any],
    field: Any,
    arrow_type: pa.DataType,
    first_row: int,
    exc: Exception,
) -> RowSchemaError:
    """The error for a column pyarrow refused: the row and the column, and which value."""
    column = column_label(field.name, field.dataType.simpleString(), field.nullable)
    found = first_misfit(values, arrow_type)
    if found is None:  # only the values together fail (an array too large): no one row to name
        return RowSchemaError(f"rows {first_row} to {first_row + len(rows) - 1}, {column}: {exc}")
    index, problem = found
    return RowSchemaError(f"row {first_row + index} {short_repr(rows[index], 60)}, {column}: {problem}")


def arrow_batches_of(
    chunk: Sequence[Any], schema: StructType, arrow_schema: pa.Schema, first_row: int = 0
) -> Sequence[pa.RecordBatch]:
    """A chunk of elements as Arrow batches of ``schema``: ``pyarrow.RecordBatch`` elements as
    they are (cast if their column types differ: ``TypeError`` if the names differ or no cast
    exists), other elements as one batch (`rows_to_arrow_batch`, ``first_row`` being the index
    of ``chunk[0]`` in the stream); a chunk may not mix them."""
    import pyarrow as pa

    if not chunk or not isinstance(chunk[0], pa.RecordBatch):  # the first tells (rows: the hot path)
        return [rows_to_arrow_batch(chunk, schema, arrow_schema, first_row)]
    batches = []
    for position, batch in enumerate(chunk):
        if not isinstance(batch, pa.RecordBatch):
            raise TypeError(
                f"element {position} of a chunk is a {type(batch).__qualname__} among pyarrow.RecordBatches: "
                "a publisher's elements may be rows or record batches, not both"
            )
        if batch.schema.names != arrow_schema.names:
            raise TypeError(
                f"a pyarrow.RecordBatch has the columns ({', '.join(batch.schema.names)}), "
                f"the schema ({', '.join(arrow_schema.names)})"
            )
        if not batch.schema.equals(arrow_schema, check_metadata=False):
            try:
                batch = batch.cast(arrow_schema)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError) as exc:
                raise TypeError(
                    f"a pyarrow.RecordBatch of {batch.schema.types} does not fit the schema's "
                    f"{arrow_schema.types}: {exc}"
                ) from exc
        batches.append(batch)
    return batches


def _columns_of(rows: Sequence[Any], names: list[str]) -> list[list[Any]]:
    width = len(names)
    columns: list[list[Any]] = [[] for _ in range(width)]
    for position, row in enumerate(rows):
        if isinstance(row, dict):
            values: Sequence[Any] = [row.get(name) for name in names]
        elif isinstance(row, tuple | list):
            values = row
        elif width == 1:
            values = (row,)
        else:
            raise TypeError(
                f"element {position} of a chunk is a {type(row).__qualname__}: a row of the schema "
                f"({', '.join(names)}) must be a tuple, list, Row or dict"
            )
        if len(values) != width:
            raise TypeError(f"element {position} has {len(values)} values, the schema {width} fields")
        for column, value in zip(columns, values, strict=True):
            column.append(value)
    return columns


def _local_times(schema: StructType) -> bool:
    """Whether a column holds timestamps, whose naive values `_for_arrow` makes local."""
    from pyspark.sql.types import TimestampType

    return any(isinstance(field.dataType, TimestampType) for field in schema.fields)


def _for_arrow(values: Sequence[Any], data_type: DataType) -> Sequence[Any]:
    from pyspark.sql.types import TimestampType

    if isinstance(data_type, TimestampType):  # naive datetimes are local time, as in PySpark
        return [
            v.astimezone() if isinstance(v, datetime.datetime) and v.tzinfo is None else v for v in values
        ]
    return values


def spark_error(exc: BaseException) -> BaseException:
    """A Spark failure as a `JvmError` with the Java class, message and stack; PySpark's own
    exception (``SparkRuntimeException``, ...) or Py4J's is kept as its ``__cause__``."""
    if isinstance(exc, JvmError | ReactiveStreamsError):
        return exc
    java = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)
    if java is None:
        return exc
    try:
        name = java.getClass().getName()
        message = java.getMessage()
        frames = [f"\tat {frame.toString()}" for frame in list(java.getStackTrace())[:50]]
        stack = "\n".join([f"{name}: {message}", *frames])
    except Exception:  # the gateway is gone: keep the Py4J error
        return exc
    error = error_from_java(name, message, stack, java)
    error.__cause__ = exc
    return error
