"""Rows against a schema the user gave, ``bridge.from_jvm(p, schema=...)`` and
``bridge.to_jvm(p, schema=...)``: the option checked when it is given, and Python's rows encoded
with it (the JVM's side is the Java ``SchemaRows``). Every element must then be a row of the
schema, and every batch, however small, crosses as Arrow with exactly its names and types; a
row that does not fit fails the stream naming the row (counted from 0 in the stream) and the
column, after the rows before it.
"""

from __future__ import annotations

import datetime
import decimal
import numbers
import operator
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..._errors import ReactiveStreamsError
from ..._rules import describe
from ._batches import ipc_stream

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "SUPPORTED",
    "RowSchemaError",
    "SchemaEncoder",
    "column_label",
    "describe_value",
    "first_misfit",
    "schema_bytes",
    "short_repr",
]

SUPPORTED = (
    "bool, int8, int16, int32, int64, float32, float64, string, large_string, binary, large_binary, "
    "date32, timestamp (any unit, any or no time zone), decimal128"
)
TYPED_TUPLES = b"T"  # to Java as Object[], each value of its column's Java type
TYPED_DICTS = b"D"  # to Java as HashMap
_NONE = type(None)


class RowSchemaError(ReactiveStreamsError, ValueError, TypeError):
    """A row that does not fit the schema its stream was given (or a DataFrame's schema): the
    message names the row and the column. The Java subscriber gets it as an
    ``IllegalArgumentException`` (a ``ValueError`` always does); it is a ``TypeError`` too, what
    `dataframe_from_publisher` raises for an element that does not fit."""


def column_label(name: str, type_text: str, nullable: bool = True) -> str:
    """A column as errors name it: ``column 'id' (int64, not null)``."""
    null = "" if nullable else ", not null"
    return f"column {name!r} ({type_text}{null})"


def first_misfit(values: Sequence[Any], arrow_type: pa.DataType) -> tuple[int, str] | None:
    """The first of ``values`` that pyarrow refuses as ``arrow_type`` on its own: its index and
    why, naming the value; None if each fits alone. For the failing path only: one array per
    value."""
    import pyarrow

    for index, value in enumerate(values):
        try:
            pyarrow.array([value], type=arrow_type)
        except (pyarrow.ArrowException, ArithmeticError, ValueError, TypeError) as exc:
            return index, f"{describe_value(value)}, which does not fit: {exc}"
    return None


def schema_bytes(schema: object) -> bytes:
    """``schema`` (the ``schema=`` option) checked and in Arrow's IPC format, for the JVM.

    Raises:
        ImportError: pyarrow is not installed.
        TypeError: ``schema`` is not a ``pyarrow.Schema``.
        ValueError: it has no columns, two columns of one name, or a type rows cannot carry.
    """
    try:
        import pyarrow
    except ImportError as exc:
        raise ImportError(
            "schema= needs pyarrow, which is not installed: pip install pyarrow "
            "(or the package's 'spark' extra)"
        ) from exc
    if not isinstance(schema, pyarrow.Schema):
        raise TypeError(f"schema must be a pyarrow.Schema (pyarrow.schema([...])), got {describe(schema)}")
    if len(schema) == 0:
        raise ValueError("schema has no columns")
    names = schema.names
    for name in names:
        if names.count(name) > 1:
            raise ValueError(f"schema has two columns named {name!r}")
    for field in schema:
        if _accepted(field.type) is None:
            raise ValueError(
                f"schema: column {field.name!r} has type {field.type}, which rows cannot carry "
                f"(supported: {SUPPORTED})"
            )
    return schema.serialize().to_pybytes()  # type: ignore[no-any-return]


def type_name(arrow_type: pa.DataType) -> str:
    """The type as error messages name it (the Java side's names)."""
    import pyarrow

    if pyarrow.types.is_float32(arrow_type):
        return "float32"
    if pyarrow.types.is_float64(arrow_type):
        return "float64"
    if pyarrow.types.is_date32(arrow_type):
        return "date32"
    return str(arrow_type)


def _accepted(arrow_type: pa.DataType) -> tuple[frozenset[type], Callable[[Any], bool]] | None:
    """The Python types a column of ``arrow_type`` takes as they are (a fast check of a whole
    column), and a test for each value that is not of one of them (subclasses, NumPy's
    numbers); None if rows cannot carry the type."""
    import pyarrow.types as t

    if t.is_boolean(arrow_type):
        return frozenset({bool}), lambda v: isinstance(v, bool)
    if t.is_int8(arrow_type) or t.is_int16(arrow_type) or t.is_int32(arrow_type) or t.is_int64(arrow_type):
        return frozenset({int}), lambda v: isinstance(v, numbers.Integral) and not isinstance(v, bool)
    if t.is_float32(arrow_type) or t.is_float64(arrow_type):
        return frozenset({float, int}), lambda v: isinstance(v, numbers.Real) and not isinstance(v, bool)
    if t.is_string(arrow_type) or t.is_large_string(arrow_type):
        return frozenset({str}), lambda v: isinstance(v, str)
    if t.is_binary(arrow_type) or t.is_large_binary(arrow_type):
        return frozenset({bytes, bytearray}), lambda v: isinstance(v, (bytes, bytearray))
    if t.is_date32(arrow_type):
        return frozenset({datetime.date}), _is_date
    if t.is_timestamp(arrow_type):
        return frozenset({datetime.datetime}), lambda v: isinstance(v, datetime.datetime)
    if t.is_decimal128(arrow_type):
        return frozenset({decimal.Decimal, int}), _is_decimal
    return None


def _is_date(value: Any) -> bool:
    return isinstance(value, datetime.date) and not isinstance(value, datetime.datetime)


def _is_decimal(value: Any) -> bool:
    return isinstance(value, (decimal.Decimal, numbers.Integral)) and not isinstance(value, bool)


class _Column:
    """One column of the schema: which values it takes, and its values as an Arrow array."""

    def __init__(self, field: pa.Field) -> None:
        accepted = _accepted(field.type)
        assert accepted is not None  # schema_bytes checked the schema
        self.type = field.type
        self.nullable = field.nullable
        self.fast = accepted[0] | {_NONE} if field.nullable else accepted[0]
        self.fits = accepted[1]
        self.name = column_label(field.name, type_name(field.type), field.nullable)

    def array(self, values: Sequence[Any], limit: int) -> tuple[pa.Array, int, str]:
        """The first ``limit`` values as an array, ``limit`` and ""; or, if one of them does not
        fit, the array of those before it, its row and why."""
        import pyarrow

        refusals = (pyarrow.ArrowException, ArithmeticError, ValueError, TypeError)
        values = values[:limit]
        stop, problem = len(values), ""
        if not set(map(type, values)) <= self.fast:
            for index, value in enumerate(values):
                if value is None:
                    if not self.nullable:
                        stop, problem = index, "None, in a column that is not nullable"
                        break
                elif not self.fits(value):
                    stop, problem = index, f"{describe_value(value)}, which the column cannot hold"
                    break
        try:
            return pyarrow.array(values[:stop], type=self.type), stop, problem
        except refusals:
            pass
        misfit = first_misfit(values[:stop], self.type)  # which one: only on this failing path
        if misfit is None:
            raise AssertionError("pyarrow refused a column, but none of its values alone")
        index, problem = misfit
        return pyarrow.array(values[:index], type=self.type), index, problem


class SchemaEncoder:
    """One stream's rows for the JVM against ``schema``: tuples and lists by position (as many
    values as columns), dicts by key (exactly the column names); it counts the stream's rows, so
    that an error names the row."""

    def __init__(self, schema: pa.Schema) -> None:
        self._schema = schema
        self._names = list(schema.names)
        self._keys = frozenset(self._names)
        self._columns = [_Column(field) for field in schema]
        self.rows = 0  # rows of the stream before the next batch

    def encode(self, batch: list[Any]) -> tuple[list[bytes], RowSchemaError | None]:
        """The batch as tagged Arrow streams (one per run of tuples or of dicts), up to the first
        row that does not fit; and that row's error, or None."""
        import pyarrow

        width = len(self._names)
        rows: list[Sequence[Any]] = []
        kinds: list[bytes] = []
        error = ""
        for row in batch:
            if isinstance(row, dict):
                if row.keys() != self._keys:
                    error = f"a dict with keys {list(row)}, but the schema's columns are {self._names}"
                    break
                rows.append([row[name] for name in self._names])
                kinds.append(TYPED_DICTS)
            elif isinstance(row, (tuple, list)):
                if len(row) != width:
                    error = (
                        f"a {type(row).__qualname__} of {len(row)} values, "
                        f"but the schema has {width} columns {self._names}"
                    )
                    break
                rows.append(row)
                kinds.append(TYPED_TUPLES)
            else:
                error = f"{describe_value(row)}, not a row (a tuple, list or dict)"
                break
        good = len(rows)
        bad = f"row {self.rows + good}: {error}" if error else ""
        # By column with itemgetter, not zip(*rows): no iterator per row for the garbage collector
        columns = [list(map(operator.itemgetter(index), rows)) for index in range(width)]
        arrays = []
        for column, values in zip(self._columns, columns, strict=True):
            array, index, problem = column.array(values, good)  # only rows before the first bad one
            if problem:
                good, bad = index, f"row {self.rows + index}, {column.name}: {problem}"
            arrays.append(array)
        arrays = [array.slice(0, good) for array in arrays]
        self.rows += good
        payloads = []
        start = 0
        while start < good:  # runs of one kind: tuples or dicts
            end = start + 1
            while end < good and kinds[end] == kinds[start]:
                end += 1
            record_batch = pyarrow.RecordBatch.from_arrays(
                [array.slice(start, end - start) for array in arrays],
                schema=self._schema,
            )
            payloads.append(b"A" + kinds[start] + ipc_stream(record_batch))
            start = end
        return payloads, RowSchemaError(bad) if bad else None


def short_repr(value: Any, width: int = 40) -> str:
    """``repr(value)``, cut to ``width`` characters."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def describe_value(value: Any) -> str:
    """``a str ('name-0')``: a value's type and its repr, cut at 40 characters, for messages."""
    text = short_repr(value)
    article = "an" if type(value).__qualname__[:1] in "aeiou" else "a"
    return f"{article} {type(value).__qualname__} ({text})"
