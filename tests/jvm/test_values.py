"""What crosses by value, and as what (`_codec`, `_values`; Java's ``Codec``, ``PickledValues``):
Python's values as Java's and back, dates, times, decimals and UUIDs included, and a JVM object
with no Python equivalent as a reference where it is, its row still a row."""

from __future__ import annotations

import datetime
import decimal
import uuid
from typing import Any

import pytest

import reactive_streams as rs
from reactive_streams.jvm import Bridge

from ..support import Spy, wait_for
from .kit import Kit, java_row

VALUES: list[tuple[Any, str]] = [
    (True, "java.lang.Boolean"),
    (7, "java.lang.Integer"),
    (2**40, "java.lang.Long"),
    (2**70, "java.math.BigInteger"),
    (1.5, "java.lang.Double"),
    ("text ✓", "java.lang.String"),
    (b"\x00\xffbytes", "[B"),
    ([1, [2, "x"]], "java.util.ArrayList"),
    ((1, "two"), "[Ljava.lang.Object;"),
    ({"a": 1, "b": [None]}, "java.util.HashMap"),
    (datetime.date(2024, 2, 29), "java.time.LocalDate"),
    (datetime.datetime(1969, 12, 31, 23, 59, 59, 999999), "java.time.LocalDateTime"),
    (
        datetime.datetime(2024, 6, 1, 12, tzinfo=datetime.timezone(datetime.timedelta(hours=2))),
        "java.time.Instant",
    ),
    (decimal.Decimal("-12.50"), "java.math.BigDecimal"),
    (uuid.UUID("f81d4fae-7dec-11d0-a765-00a0c91e6bf6"), "java.util.UUID"),
]


def test_python_values_arrive_in_java_as_java_values(bridge: Bridge) -> None:
    kit = Kit(bridge)
    java_items = kit.flux_from(bridge.to_jvm(rs.from_iterable([v for v, _ in VALUES]))).collectList().block()
    classes = [str(name) for name in kit.jvm.io.github.rspy.bridge.testing.Types.classNames(java_items)]
    assert classes == [cls for _, cls in VALUES]


def test_values_round_trip_through_the_jvm_unchanged(bridge: Bridge) -> None:
    values = [v for v, _ in VALUES]
    kit = Kit(bridge)
    through_java = kit.flux_from(bridge.to_jvm(rs.from_iterable(values)))
    assert list(bridge.from_jvm(through_java).iterate()) == values


def test_a_jvm_object_goes_to_python_and_back_as_the_same_object(bridge: Bridge) -> None:
    kit = Kit(bridge)
    original = kit.jvm.java.util.ArrayList()
    original.add(kit.jvm.java.lang.StringBuilder("x"))  # not a value: the list crosses as a reference
    marker = kit.jvm.java.lang.Thread.currentThread()
    from_java = list(bridge.from_jvm(kit.Flux.just(marker)).iterate())
    back = kit.flux_from(bridge.to_jvm(rs.from_iterable(from_java))).collectList().block()
    assert back.get(0).equals(marker)


def test_an_element_that_cannot_cross_fails_the_java_stream_clearly(bridge: Bridge) -> None:
    kit = Kit(bridge)
    subscriber = kit.recorder_of(rs.from_iterable([1, object()]), 10)
    assert subscriber.awaitDone(10_000)
    assert "cannot cross to the JVM" in str(subscriber.errorMessage())


class _PicklingFails:
    """A value inside a list whose pickling raises what the codec does not expect."""

    def __reduce__(self) -> Any:
        raise ValueError("this element cannot be pickled")


def test_a_batch_this_side_cannot_make_fails_the_java_stream_instead_of_hanging_it(bridge: Bridge) -> None:
    kit = Kit(bridge)
    spy = Spy(rs.from_iterable([[1], [_PicklingFails()]]))
    subscriber = kit.recorder_of(spy, 10)
    assert subscriber.awaitDone(10_000)  # it hung here: the Java side was never told
    assert "this element cannot be pickled" in str(subscriber.errorMessage())
    assert spy.cancels == 1  # and the Python publisher was cancelled
    wait_for(lambda: kit.live_adapters() == 0, "both ends ended")


@pytest.mark.parametrize("count", [1, 8192, 8193, 50_000])
def test_batches_are_split_and_joined_at_any_size(bridge: Bridge, count: int) -> None:
    kit = Kit(bridge)
    assert list(bridge.from_jvm(kit.Flux.range(0, count)).iterate(prefetch=10_000)) == list(range(count))
    total = kit.flux_from(bridge.to_jvm(rs.from_iterable(range(count)))).count().block()
    assert int(total) == count


def value_rows(bridge: Bridge) -> Any:
    return bridge.jvm.io.github.rspy.bridge.testing.ValueRows


def take_all(bridge: Bridge, publisher: Any, prefetch: int = 4096) -> list[Any]:
    return list(rs.iterate(bridge.from_jvm(publisher), prefetch=prefetch))


@pytest.mark.parametrize("prefetch", [4096, 1], ids=["batches", "one by one"])
def test_a_row_holding_an_object_with_no_python_equivalent_is_a_tuple_with_only_that_a_reference(
    bridge: Bridge, prefetch: int
) -> None:
    """A Java array is never a row handed to Python: the row is a tuple of Python values, and the
    thread in it the one reference (a pickle with persistent ids and the references beside it)."""
    rows = take_all(bridge, value_rows(bridge).withThread("long,date,string", 40, 8, 1), prefetch)
    assert all(type(row) is tuple for row in rows)
    assert bridge._host.backend.is_jvm_object(rows[8][1])
    assert str(rows[8][1].getClass().getName()) == "java.lang.Thread"  # a reference you can call
    assert rows[8][0] == 8 and rows[8][2] == "s8"
    assert rows[:8] + rows[9:] == [java_row("long,date,string", i) for i in range(40) if i != 8]
    assert Kit(bridge).live_adapters() == 0


def test_a_map_holding_such_an_object_is_a_dict_with_only_that_a_reference(bridge: Bridge) -> None:
    rows = take_all(bridge, value_rows(bridge).mapsWithThread("long,date,string", 40, 13, "date"))
    assert all(type(row) is dict for row in rows)
    assert bridge._host.backend.is_jvm_object(rows[13]["date"])
    assert {k: v for k, v in rows[13].items() if k != "date"} == {"long": 13, "string": "s13"}
    assert rows[14] == dict(zip(["long", "date", "string"], java_row("long,date,string", 14), strict=True))


def test_lists_arrive_as_lists_of_python_values_with_only_the_unconvertible_a_reference(
    bridge: Bridge,
) -> None:
    """A java.util.List is a list, as it always was (a list of values round-trips as one): its
    values convert as a row's do, and only what has no Python equivalent stays a reference."""
    lists = take_all(bridge, value_rows(bridge).lists("long,date,instant,decimal", 30))
    assert lists == [list(java_row("long,date,instant,decimal", i)) for i in range(30)]
    assert all(type(row) is list for row in lists)
    holding = take_all(bridge, value_rows(bridge).lists("long,thread", 5))  # row 1's thread: null
    assert [row[0] for row in holding] == [None, 1, 2, 3, 4] and holding[1][1] is None
    assert all(bridge._host.backend.is_jvm_object(row[1]) for i, row in enumerate(holding) if i != 1)


def test_a_date_past_pythons_year_9999_stays_a_reference_in_its_row(bridge: Bridge) -> None:
    for prefetch in (4096, 1):
        rows = take_all(bridge, value_rows(bridge).rows("long,farDate", 30), prefetch)
        assert all(type(row) is tuple for row in rows)
        assert [row[0] for row in rows[:3]] == [None, 1, 2]
        far = rows[2][1]
        assert bridge._host.backend.is_jvm_object(far) and str(far.toString()) == "+10002-01-01"
