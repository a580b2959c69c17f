"""Dates, times and UUIDs in the bridge's pickles, both ways (the Java ``PickledValues``).

A pickle names a function to call for each such value, and these are those functions: the JVM's
pickles call them here to make Python's values (``local_date(days)`` for a ``LocalDate``,
``local_date_time(micros)`` for a ``LocalDateTime``, ``instant(micros)`` for an ``Instant``,
``uuid_of(high, low)`` for a ``UUID``), and Python's pickles for the JVM call them there, where
Pyrolite knows these names (`reducers`: a ``date`` becomes a ``LocalDate``, a naive ``datetime``
a ``LocalDateTime``, an aware one an ``Instant``, a ``uuid.UUID`` a ``UUID``). Their names and
arguments are the wire format: change them on both sides or not at all.
"""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Callable
from typing import Any

__all__ = ["instant", "local_date", "local_date_time", "reducers", "uuid_of"]

_EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()
_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_MICROSECOND = datetime.timedelta(microseconds=1)
_LOW = (1 << 64) - 1


def local_date(days: int) -> datetime.date:
    """The date ``days`` after 1970-01-01 (a Java ``LocalDate``)."""
    return datetime.date.fromordinal(_EPOCH_ORDINAL + days)


def local_date_time(micros: int) -> datetime.datetime:
    """The naive datetime ``micros`` after 1970-01-01T00:00 (a Java ``LocalDateTime``)."""
    return _EPOCH + datetime.timedelta(microseconds=micros)


def instant(micros: int) -> datetime.datetime:
    """The aware datetime, in UTC, ``micros`` after 1970-01-01T00:00Z (a Java ``Instant``)."""
    return _EPOCH_UTC + datetime.timedelta(microseconds=micros)


def uuid_of(high: int, low: int) -> uuid.UUID:
    """The UUID of a Java ``UUID``'s two halves, as Java's signed longs."""
    return uuid.UUID(int=((high & _LOW) << 64) | (low & _LOW))


def _reduce_date(value: datetime.date) -> tuple[Callable[..., Any], tuple[int]]:
    return local_date, (value.toordinal() - _EPOCH_ORDINAL,)


def _reduce_datetime(value: datetime.datetime) -> tuple[Callable[..., Any], tuple[int]]:
    if value.utcoffset() is None:
        return local_date_time, ((value - _EPOCH) // _MICROSECOND,)
    return instant, ((value - _EPOCH_UTC) // _MICROSECOND,)


def _reduce_uuid(value: uuid.UUID) -> tuple[Callable[..., Any], tuple[int, int]]:
    return uuid_of, (_signed(value.int >> 64), _signed(value.int & _LOW))


def _signed(half: int) -> int:
    """An unsigned 64-bit half as Java's signed long holds it."""
    return half - (1 << 64) if half >= 1 << 63 else half


def reducers() -> dict[type, Callable[[Any], Any]]:
    """A pickler's ``dispatch_table`` for pickles the JVM reads: these types as Java's own
    (``Decimal`` needs none: Pyrolite reads it as a ``BigDecimal``). Exact types only, as a
    dispatch table looks them up: a subclass (``pandas.Timestamp``) is pickled as it always was."""
    return {datetime.date: _reduce_date, datetime.datetime: _reduce_datetime, uuid.UUID: _reduce_uuid}
