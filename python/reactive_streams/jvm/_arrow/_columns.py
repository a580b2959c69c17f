"""The columns of rows without a schema, both ways (the Java ``InferredColumn`` and
``RowsFromPython``): an Arrow column as Python's values (`python_values`), and Python's values as
an Arrow column, if they share a type (`arrow_array`).

pyarrow's own conversion of dates, times and decimals costs about a microsecond a value (5 for a
time zone), ten times what a number or a string costs, so those columns are made here the fast
way: dates and naive times through NumPy when it is installed (50 ns a value), times in UTC as
the epoch plus a ``timedelta`` (400 ns), decimals of up to 18 digits from their unscaled
integers (140 ns), longer ones from Arrow's own text of them (300 ns). Each gives the values
pyarrow would.
"""

from __future__ import annotations

import datetime
import decimal
import importlib.util
import operator
import sys
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
_LONG_DIGITS = 18  # an unscaled decimal of this many digits fits an int64
_LITTLE_ENDIAN = sys.byteorder == "little"
_EXACT = decimal.Context(prec=38)  # products of at most 18 digits by a power of ten: exact
_UNITS = [decimal.Decimal(1).scaleb(-scale) for scale in range(_LONG_DIGITS + 1)]  # 1, 0.1, 0.01, ...


def python_values(column: pa.Array) -> list[Any]:
    """The values of ``column``, as ``column.to_pylist()`` gives them."""
    convert = _converters().get(column.type.id)
    return column.to_pylist() if convert is None else convert(column)


def as_pyarrow_gives(schema: pa.Schema) -> bool:
    """Whether pyarrow's own ``to_pylist()`` gives every column's values as `python_values` does."""
    converters = _converters()
    return not any(field.type.id in converters for field in schema)


_CONVERTERS: dict[int, Callable[[pa.Array], list[Any]]] = {}


def _converters() -> dict[int, Callable[[pa.Array], list[Any]]]:
    """The columns made here, by type id (one lookup per column: numbers and strings pay no more)."""
    if not _CONVERTERS:
        import pyarrow

        _CONVERTERS.update(
            {
                pyarrow.date32().id: _dates,
                pyarrow.timestamp("us").id: _timestamps_of,
                pyarrow.decimal128(1, 0).id: _decimals_of,
                pyarrow.decimal256(1, 0).id: _decimals_of,
            }
        )
    return _CONVERTERS


def _timestamps_of(column: pa.Array) -> list[Any]:
    arrow_type = column.type
    if arrow_type.unit == "ns":
        return column.to_pylist()  # type: ignore[no-any-return]  # pandas.Timestamps, with pandas
    if arrow_type.tz is None:
        return _naive(column)
    if arrow_type.tz == UTC and arrow_type.unit == "us":
        return _utc(column)
    return column.to_pylist()  # type: ignore[no-any-return]  # a zone of the schema's: pyarrow's tzinfo


def _decimals_of(column: pa.Array) -> list[Any]:
    return column.to_pylist() if column.type.scale < 0 else _decimals(column)


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
    arrow_type = column.type
    if arrow_type.precision <= _LONG_DIGITS and arrow_type.bit_width == 128 and _LITTLE_ENDIAN:
        return _small_decimals(column, arrow_type.scale)
    import pyarrow

    texts = column.cast(pyarrow.string()).to_pylist()  # what pyarrow's own conversion parses
    if column.null_count:
        return [None if text is None else decimal.Decimal(text) for text in texts]
    return list(map(decimal.Decimal, texts))


def _small_decimals(column: pa.Array, scale: int) -> list[Any]:
    """Decimals of at most 18 digits: each its unscaled value (the low half of its 128 bits, an
    int64) times 10**-scale, exactly (in a context of 38 digits, not the thread's own)."""
    import pyarrow

    halves = pyarrow.Array.from_buffers(
        pyarrow.int64(), 2 * len(column), [None, column.buffers()[1]], offset=2 * column.offset
    )
    unscaled = halves.to_pylist()[::2]
    if scale == 0:
        values = list(map(decimal.Decimal, unscaled))
    else:
        with decimal.localcontext(_EXACT):  # Decimal * int: one Decimal made, not two
            values = list(map(operator.mul, repeat(_UNITS[scale]), unscaled))
    if column.null_count:
        valid = column.is_valid().to_pylist()
        return [value if ok else None for value, ok in zip(values, valid, strict=True)]
    return values


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
