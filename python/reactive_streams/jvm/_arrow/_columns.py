"""The columns of rows without a schema, both ways (the Java ``InferredColumn`` and
``RowsFromPython``): an Arrow column as Python's values (`python_values`), and Python's values as
an Arrow column, if they share a type (`arrow_array`).

pyarrow's own conversion of dates, times and decimals costs about a microsecond a value (5 for a
time zone), ten times what a number or a string costs, so those columns are made here the fast
way: dates and naive times through NumPy when it is installed (50 ns a value), times in UTC as
the epoch plus a ``timedelta``, decimals from Arrow's own text of them. Each gives what pyarrow
would.
"""

from __future__ import annotations

import datetime
import decimal
import importlib.util
import operator
import uuid
from collections.abc import Callable
from itertools import repeat
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["arrow_array", "python_values"]

UTC = "+00:00"  # the inferred columns' time zone: pyarrow gives datetime.timezone.utc for it
_NUMPY = importlib.util.find_spec("numpy") is not None
_EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()
_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_NONE = type(None)


def python_values(column: pa.Array) -> list[Any]:
    """The values of ``column``, as ``column.to_pylist()`` gives them."""
    import pyarrow.types as t

    arrow_type = column.type
    if t.is_date32(arrow_type):
        return _dates(column)
    if t.is_timestamp(arrow_type) and arrow_type.unit in ("s", "ms", "us"):
        if arrow_type.tz is None:
            return _naive(column)
        if arrow_type.tz == UTC and arrow_type.unit == "us":
            return _utc(column)
    elif t.is_decimal(arrow_type) and arrow_type.scale >= 0:
        return _decimals(column)
    return column.to_pylist()  # type: ignore[no-any-return]


def _dates(column: pa.Array) -> list[Any]:
    if _NUMPY:
        return column.to_numpy(zero_copy_only=False).tolist()  # type: ignore[no-any-return]  # NaT: None
    import pyarrow

    days = column.cast(pyarrow.int32()).to_pylist()
    if column.null_count:
        return [None if day is None else datetime.date.fromordinal(_EPOCH_ORDINAL + day) for day in days]
    return list(map(datetime.date.fromordinal, map(operator.add, repeat(_EPOCH_ORDINAL), days)))


def _naive(column: pa.Array) -> list[Any]:
    if _NUMPY:
        return column.to_numpy(zero_copy_only=False).tolist()  # type: ignore[no-any-return]
    return column.to_pylist()  # type: ignore[no-any-return]


def _utc(column: pa.Array) -> list[Any]:
    import pyarrow

    micros = column.cast(pyarrow.int64()).to_pylist()
    return _after(_EPOCH_UTC, micros, column.null_count)


def _after(epoch: datetime.datetime, micros: list[Any], nulls: int) -> list[Any]:
    if nulls:
        return [None if m is None else epoch + datetime.timedelta(0, 0, m) for m in micros]
    deltas = map(datetime.timedelta, repeat(0), repeat(0), micros)  # looped in C, as the add
    return list(map(operator.add, repeat(epoch), deltas))


def _decimals(column: pa.Array) -> list[Any]:
    import pyarrow

    texts = column.cast(pyarrow.string()).to_pylist()  # what pyarrow's own conversion parses
    if column.null_count:
        return [None if text is None else decimal.Decimal(text) for text in texts]
    return list(map(decimal.Decimal, texts))


def arrow_array(column: list[Any]) -> pa.Array | None:
    """``column`` as an Arrow array of one of the types rows carry, or None: int (within int64),
    float, str, bool, bytes, ``date`` (date32), ``datetime`` (timestamp[us], with a time zone if
    every one has one, without if none has), ``Decimal`` (decimal128 or decimal256), ``uuid.UUID``
    (Arrow's canonical UUID type), or None. Each type alone in its column, bar None: pyarrow
    alone would turn ints among floats into floats, a datetime among dates into a date, and a
    naive datetime among aware ones into UTC, where Java must see what the pickle gives."""
    import pyarrow

    try:
        array = pyarrow.array(column)
    except (OverflowError, pyarrow.ArrowException, UnicodeEncodeError):
        return _uuids(column)  # mixed types, an int beyond 64 bits, a lone surrogate: the pickle can
    check = _checks().get(array.type.id)
    if check is None or not check(array, column):
        return None
    return array


def _uuids(column: list[Any]) -> pa.Array | None:
    """A column of UUIDs, which pyarrow before 26 cannot infer."""
    import pyarrow

    if set(map(type, column)) - {_NONE} != {uuid.UUID}:
        return None
    storage = pyarrow.array([None if u is None else u.bytes for u in column], pyarrow.binary(16))
    return pyarrow.ExtensionArray.from_storage(pyarrow.uuid(), storage)


def _only(kind: type) -> Callable[[pa.Array, list[Any]], bool]:
    return lambda array, column: set(map(type, column)) - {_NONE} == {kind}


def _timestamps(array: pa.Array, column: list[Any]) -> bool:
    if set(map(type, column)) - {_NONE} != {datetime.datetime}:
        return False
    naive = {value.utcoffset() is None for value in column if value is not None}
    return naive == {array.type.tz is None}


def _is_uuid(array: pa.Array, column: list[Any]) -> bool:
    return getattr(array.type, "extension_name", None) == "arrow.uuid" and _only(uuid.UUID)(array, column)


_CHECKS: dict[int, Callable[[pa.Array, list[Any]], bool]] = {}


def _checks() -> dict[int, Callable[[pa.Array, list[Any]], bool]]:
    """Which inferred types rows carry (by type id), and what each needs of its column."""
    if not _CHECKS:
        import pyarrow

        def anything(array: pa.Array, column: list[Any]) -> bool:
            return True

        _CHECKS.update(
            {
                pyarrow.int64().id: anything,  # only ints infer as int64
                pyarrow.string().id: anything,
                pyarrow.bool_().id: anything,
                pyarrow.null().id: anything,
                pyarrow.float64().id: _only(float),  # not ints or bools among floats
                pyarrow.binary().id: _only(bytes),  # not strs among bytes
                pyarrow.date32().id: _only(datetime.date),
                pyarrow.timestamp("us").id: _timestamps,
                pyarrow.decimal128(1, 0).id: _only(decimal.Decimal),
                pyarrow.decimal256(1, 0).id: _only(decimal.Decimal),
                pyarrow.uuid().id: _is_uuid,  # an extension type: its id is every extension's
            }
        )
    return _CHECKS
