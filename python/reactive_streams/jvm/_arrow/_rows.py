"""Rows as Arrow on the Python side, both ways (the Java ``ArrowRows``): a batch of JVM rows
arrives as one Arrow record batch in Arrow's IPC stream format, and leaves here as tuples (from
``Object[]``, the values the pickled path gives), dicts (from ``Map``, the same; and from records)
or ``pyspark.sql.Row``s (from Spark's ``Row``); Python's tuples and dicts leave for the JVM the
same way when they fit (`encode_rows`). Each column's values are `_columns`'. Record batches as
elements are `_batches`'; rows against a schema a subscriber gave are `_schema`'s. pyarrow is
optional: without it the JVM is told to pickle rows as before."""

from __future__ import annotations

import functools
import importlib.util
import operator
from collections.abc import Callable
from itertools import repeat
from typing import Any

from ..._chunks import LazyChunk
from ._batches import ipc_stream
from ._columns import arrow_array, as_pyarrow_gives, python_values

__all__ = [
    "RowBatch",
    "available",
    "decode_rows",
    "encode_rows",
    "named_row_type",
    "rows_batch",
    "rows_bytes",
]

MIN_ROWS = 16  # as the JVM's ARROW_MIN_ROWS: below this a pickle costs less

TUPLES = 0x74  # 't'
DICTS = 0x64  # 'd'
ROWS = 0x72  # 'r': Spark's rows, as pyspark.sql.Row


def available() -> bool:
    """Whether pyarrow can be imported here."""
    return importlib.util.find_spec("pyarrow") is not None


class RowBatch(LazyChunk[Any]):
    """A decoded batch's rows, each made as it is iterated (once): a row its subscriber does
    not keep is freed before the next is made, so a batch makes no list of its rows, and the
    garbage collector, which counts the objects alive, is not woken for every 700 of them.
    ``clear()`` ends an iteration under way (a cancel), by emptying the first column."""

    __slots__ = ()


def decode_rows(view: memoryview) -> RowBatch:
    """The rows of a tagged Arrow batch (``view`` after its ``A`` tag: the kind, then the stream):
    tuples, dicts, or ``pyspark.sql.Row``s (Spark's rows; tuples without PySpark)."""
    import pyarrow

    kind = view[0]
    with pyarrow.ipc.open_stream(pyarrow.py_buffer(view[1:])) as reader:
        batch = reader.read_next_batch()
    if kind == DICTS and as_pyarrow_gives(batch.schema):
        # pyarrow's C++ makes them all at once: Python's own cost (the bound benchmarks measure).
        dicts = batch.to_pylist()
        return RowBatch(iter(dicts), len(dicts), dicts)
    columns = [python_values(column) for column in batch.columns]
    # Not strict: the columns of one batch are as long as each other, and RowBatch.clear ends
    # the rows by emptying the first.
    rows = zip(*columns, strict=False)
    first, count = columns[0], batch.num_rows
    if kind == TUPLES:
        return RowBatch(rows, count, first)
    if kind == ROWS:
        make = named_row_type(tuple(batch.schema.names))
        return RowBatch(rows if make is None else map(make, rows), count, first)
    if kind != DICTS:
        raise ValueError(f"unknown kind of Arrow rows {kind!r} from the JVM")
    # Each dict made by C loops (no generator frame a row): dict(zip(names, values)).
    return RowBatch(map(dict, map(zip, repeat(batch.schema.names), rows)), count, first)


@functools.lru_cache(maxsize=64)
def named_row_type(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]] | None:
    """What makes a ``pyspark.sql.Row`` with the field ``names`` of a tuple of values, or None
    without PySpark. The names live on a subclass (as ``reactive_streams.spark``'s sink does it):
    a row is then just the tuple, and still a Row in every way users look at it (``asDict()``,
    ``row.name``, equality, pickling as a plain Row)."""
    try:
        from pyspark.sql import Row
    except ImportError:
        return None
    return functools.partial(tuple.__new__, type("Row", (Row,), {"__fields__": list(names)}))


def encode_rows(batch: list[Any], kinds: set[type] | None = None) -> bytes | None:
    """Rows for the JVM as bytes (``A``, the kind, an IPC stream), or None: `rows_batch`'s."""
    made = rows_batch(batch, kinds)
    return None if made is None else rows_bytes(*made)


def rows_bytes(kind: int, record_batch: Any) -> bytes:
    """`rows_batch`'s rows as the JVM reads them from bytes: ``A``, the kind, an IPC stream."""
    return b"A" + bytes((kind,)) + ipc_stream(record_batch)


def rows_batch(batch: list[Any], kinds: set[type] | None = None) -> tuple[int, Any] | None:
    """Rows for the JVM: their kind (`TUPLES` or `DICTS`) and one ``pyarrow.RecordBatch``, or
    None if they fit no schema: every element a tuple of one width, or a dict of the same str
    keys; each column of one type `arrow_array` takes (int within int64, float, str, bool,
    bytes, date, datetime, Decimal, UUID), or None. Java then sees what the pickle gives (for
    ints, floats, strs and bools of numpy's or subclasses too, which it would refuse).
    ``kinds``: the set of the elements' types, if the caller has it."""
    if len(batch) < MIN_ROWS:
        return None
    first = batch[0]
    if kinds is None:
        kinds = set(map(type, batch))  # the checks loop in C: this is the hot path
    if kinds == {tuple}:
        width = len(first)
        if width == 0 or set(map(len, batch)) != {width}:
            return None  # rows of different widths
        # By column with itemgetter: zip(*batch) would make an iterator per row, and the garbage
        # collector, called for every 700 of them, walks every live object of the process.
        columns: list[Any] = [list(map(operator.itemgetter(index), batch)) for index in range(width)]
        names = [f"_{index}" for index in range(width)]
        kind = TUPLES
    elif kinds == {dict}:
        names = list(first)
        if not names or any(type(name) is not str for name in names):
            return None
        keys = first.keys()
        if any(row.keys() != keys for row in batch):
            return None
        columns = [list(map(operator.itemgetter(name), batch)) for name in names]
        kind = DICTS
    else:
        return None
    import pyarrow

    arrays = []
    for column in columns:
        array = arrow_array(column)
        if array is None:
            return None  # a column of mixed types crosses pickled: each value as itself
        arrays.append(array)
    return kind, pyarrow.RecordBatch.from_arrays(arrays, names=names)
