"""Values by default, as Arrow (`_arrow`: its `_columns`; Java's ``InferredColumn``): without a
schema, rows of decimals, dates, times, UUIDs and Java's smaller numbers cross as one Arrow record
batch and arrive as Python's own values, the same as a batch too small for Arrow gives them
(pickled); a column mixing kinds crosses pickled, each value as itself; Python's dates, times,
decimals and UUIDs arrive in Java as Java's own. A real reactive database driver's rows
(R2DBC's H2) arrive as tuples of int, Decimal, date, datetime, str and None."""

from __future__ import annotations

import datetime
import decimal
import gc
import threading
import uuid
from typing import Any

import pytest

import reactive_streams as rs
from reactive_streams.jvm import Bridge
from reactive_streams.jvm._arrow import arrow_array, python_values

from ..support import WAIT, wait_for
from .kit import Kit, java_row

pa = pytest.importorskip("pyarrow")

EVERY_KIND = (
    "decimal,date,sqlDate,localDateTime,instant,timestamp,offsetDateTime,zonedDateTime,utilDate,"
    "bigInteger,short,byte,character,uuid"
)
UTC = datetime.timezone.utc


def sources(bridge: Bridge) -> Any:
    return bridge.jvm.io.github.rspy.bridge.testing


def take_all(bridge: Bridge, publisher: Any, prefetch: int = 4096) -> list[Any]:
    return list(rs.iterate(bridge.from_jvm(publisher), prefetch=prefetch))


class Crossings(rs.Subscriber[Any]):
    """Requests everything at once and keeps the elements as they crossed: one list per batch
    (``on_next_batch``, which the bridge calls once per crossing)."""

    def __init__(self) -> None:
        self.batches: list[list[Any]] = []
        self.done = threading.Event()
        self.error: BaseException | None = None

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        subscription.request(2**63 - 1)

    def on_next(self, item: Any) -> None:
        self.batches.append([item])

    def on_next_batch(self, items: list[Any]) -> None:
        self.batches.append(items)

    def on_error(self, exc: BaseException) -> None:
        self.error = exc
        self.done.set()

    def on_complete(self) -> None:
        self.done.set()


def crossings(bridge: Bridge, publisher: Any) -> list[list[Any]]:
    """The elements of ``publisher`` as they crossed, batch by batch."""
    subscriber = Crossings()
    bridge.from_jvm(publisher).subscribe(subscriber)
    assert subscriber.done.wait(WAIT) and subscriber.error is None, subscriber.error
    return subscriber.batches


def arrow_batches(bridge: Bridge) -> int:
    return int(bridge.runtime.arrowBatches())


def assert_nothing_left(bridge: Bridge) -> None:
    wait_for(lambda: bridge.live_streams == 0, "the Python side to end its streams")
    assert Kit(bridge).live_adapters() == 0
    gc.collect()
    assert int(bridge.runtime.arrowAllocatedBytes()) == 0


def kinds_of(values: Any) -> list[Any]:
    """Each value's type, and a datetime's tzinfo too (naive and aware must never swap)."""
    return [(type(v), v.tzinfo) if isinstance(v, datetime.datetime) else type(v) for v in values]


# JVM -> Python, without a schema.


def test_every_kind_of_value_arrives_as_pythons_own_in_an_arrow_batch_and_pickled_alike(
    bridge: Bridge,
) -> None:
    """Decimals, dates (LocalDate, java.sql.Date), naive times (LocalDateTime), instants
    (Instant, Timestamp, OffsetDateTime, ZonedDateTime, java.util.Date: aware, in UTC), BigInteger,
    Short, Byte, Character and UUID, each column null in every fifth row."""
    rows = sources(bridge).ValueRows.rows(EVERY_KIND, 100)
    before = arrow_batches(bridge)
    as_arrow = take_all(bridge, rows)
    assert arrow_batches(bridge) > before
    pickled = take_all(bridge, rows, prefetch=1)  # batches of one row: never Arrow
    expected = [java_row(EVERY_KIND, i) for i in range(100)]
    assert as_arrow == expected
    assert pickled == expected
    for got in (as_arrow, pickled):
        assert all(type(row) is tuple for row in got)
        assert [kinds_of(row) for row in got] == [kinds_of(row) for row in expected]
    assert [str(row[0]) for row in pickled[1:5]] == ["741.9", "153.38", "23.257", "31176"]  # their own scales

    assert_nothing_left(bridge)


def test_maps_and_records_of_such_values_arrive_as_dicts(bridge: Bridge) -> None:
    kinds = "long,decimal,date,instant,uuid"
    maps = take_all(bridge, sources(bridge).ValueRows.maps(kinds, 30))
    assert maps == [dict(zip(kinds.split(","), java_row(kinds, i), strict=True)) for i in range(30)]
    events = take_all(bridge, sources(bridge).RowSources.events(20))  # a record: id, day, at, amount
    assert events[3] == {
        "id": 3,
        "day": datetime.date(2024, 1, 4),
        "at": datetime.datetime(2024, 1, 1, 0, 0, 3, 3, tzinfo=UTC),
        "amount": decimal.Decimal("0.03"),
    }


@pytest.mark.parametrize(
    "kinds",
    ["long|double", "localDateTime|instant", "date|localDateTime", "decimal|long", "string|character|uuid"],
)
def test_a_column_mixing_kinds_crosses_pickled_each_value_as_itself(bridge: Bridge, kinds: str) -> None:
    """No inference merges kinds: ints stay ints among floats, a naive time stays naive among aware
    ones (neither is read as the other), a date stays a date among datetimes."""
    before = arrow_batches(bridge)
    rows = take_all(bridge, sources(bridge).ValueRows.rows(f"{kinds},long", 40))
    assert arrow_batches(bridge) == before
    expected = [java_row(f"{kinds},long", i) for i in range(40)]
    assert rows == expected
    assert [kinds_of(row) for row in rows] == [kinds_of(row) for row in expected]


def decimal_rows(bridge: Bridge, texts: list[str]) -> list[Any]:
    return [row[0] for row in take_all(bridge, sources(bridge).ValueRows.decimals(",".join(texts)))]


def test_a_decimal_column_takes_the_largest_scale_and_the_most_integer_digits(bridge: Bridge) -> None:
    """Precision = the most digits before the point + the most after it, whichever values have
    them: 1.5, 12.25, -0.001 and a 33-digit integer part need decimal128(36, 3); every value of a
    batch that crossed as Arrow has its column's scale, a pickled one (a batch too small) its own."""
    texts = ["1.5", "12.25", "-0.001", "123456789012345678901234567890123.5", "1E+3", "0"] * 20
    before = arrow_batches(bridge)
    batches = crossings(bridge, sources(bridge).ValueRows.decimals(",".join(texts)))
    assert arrow_batches(bridge) > before
    values = [row[0] for batch in batches for row in batch]
    assert values == [decimal.Decimal(t) for t in texts]
    unit, wide = decimal.Decimal("0.001"), decimal.Context(prec=50)
    for batch in batches:
        arrow = len(batch) >= 16  # the bridge's ARROW_MIN_ROWS
        assert [str(row[0]) for row in batch] == [
            str(wide.quantize(row[0], unit) if arrow else row[0]) for row in batch
        ]
    assert any(len(batch) >= 16 for batch in batches)
    assert "123456789012345678901234567890123.500" in {str(row[0]) for batch in batches for row in batch}


def test_decimals_past_38_digits_cross_as_decimal256_and_past_76_pickled_exactly(bridge: Bridge) -> None:
    wide = ["1" * 39, "-" + "9" * 30 + "." + "1" * 9] * 50  # 39 and 39 digits: decimal256(48, 9)
    before = arrow_batches(bridge)
    assert decimal_rows(bridge, wide) == [decimal.Decimal(t) for t in wide]
    assert arrow_batches(bridge) > before
    before = arrow_batches(bridge)
    widest = ["7" * 70 + "." + "1" * 7] * 100  # 77 digits: no Arrow type holds them
    assert decimal_rows(bridge, widest) == [decimal.Decimal(t) for t in widest]
    assert arrow_batches(bridge) == before


def test_a_reactive_database_drivers_rows_arrive_as_python_values_without_a_schema(bridge: Bridge) -> None:
    """R2DBC's H2 driver: BIGINT, DECIMAL(12, 3), DATE, TIMESTAMP, VARCHAR and nullable columns,
    mapped with ``row.get(i)``, arrive as exactly what was inserted (R2dbcRows' formulas)."""
    table = sources(bridge).R2dbcRows(300)
    try:
        rows = take_all(bridge, table.select())  # live: batched however the driver's pace allows
        before = arrow_batches(bridge)
        assert take_all(bridge, table.selectedFirst()) == rows  # all ready: they cross as Arrow
        assert arrow_batches(bridge) > before
        assert rows == [
            (
                i,
                None if i % 7 == 3 else decimal.Decimal(1_234_567 * i - 5_000_000).scaleb(-3),
                None if i % 11 == 5 else datetime.date(2024, 2, 29) + datetime.timedelta(days=i - 500),
                datetime.datetime(2024, 1, 1) + datetime.timedelta(seconds=61 * i, microseconds=i),
                f"name {i}",
                None if i % 3 == 0 else f"note {i}",
            )
            for i in range(300)
        ]
        assert {tuple(map(type, row)) for row in rows if None not in row} == {
            (int, decimal.Decimal, datetime.date, datetime.datetime, str, str)
        }
        assert all(row[3].tzinfo is None for row in rows)  # SQL's TIMESTAMP: a LocalDateTime, naive
    finally:
        table.close()
    assert_nothing_left(bridge)


# Python -> JVM, without a schema.


def java_classes(bridge: Bridge, rows: Any) -> list[str]:
    return [str(name) for name in sources(bridge).Types.rowValueClassNames(rows)]


def collected(bridge: Bridge, rows: list[Any]) -> Any:
    return Kit(bridge).flux_from(bridge.to_jvm(rs.from_iterable(rows))).collectList().block()


PARIS_SUMMER = datetime.timezone(datetime.timedelta(hours=2))


def python_row(i: int) -> tuple[Any, ...]:
    return (
        datetime.date(2024, 1, 1) + datetime.timedelta(days=i),
        datetime.datetime(2024, 1, 1, 12, 0, 0, i),
        datetime.datetime(2024, 6, 1, 12, 0, 0, i, tzinfo=PARIS_SUMMER),
        decimal.Decimal(i).scaleb(-2),
        uuid.UUID(int=i << 64 | i),
        None if i % 2 else i,
    )


PYTHON_ROW_CLASSES = [
    "java.time.LocalDate",
    "java.time.LocalDateTime",
    "java.time.Instant",
    "java.math.BigDecimal",
    "java.util.UUID",
]


def test_pythons_dates_times_decimals_and_uuids_arrive_in_java_as_javas_own(bridge: Bridge) -> None:
    rows = [python_row(i) for i in range(40)]
    before = int(bridge.runtime.arrowBatchesFromPython())
    java = collected(bridge, rows)
    assert int(bridge.runtime.arrowBatchesFromPython()) > before  # as Arrow
    assert java_classes(bridge, java)[:6] == [*PYTHON_ROW_CLASSES, "java.lang.Integer"]
    assert [str(v) for v in java.get(3)] == [
        "2024-01-04",
        "2024-01-01T12:00:00.000003",
        "2024-06-01T10:00:00.000003Z",  # the instant, in UTC
        "0.03",
        "00000000-0000-0003-0000-000000000003",
        "None",
    ]
    one = collected(bridge, rows[:1])  # a batch of one: pickled, the same classes
    assert java_classes(bridge, one)[:5] == PYTHON_ROW_CLASSES
    back = take_all(bridge, bridge.to_jvm(rs.from_iterable(rows)))
    assert back == rows  # an aware datetime comes back the same instant, in UTC
    assert all(row[2].tzinfo is UTC for row in back)
    assert_nothing_left(bridge)


def test_a_python_column_mixing_naive_and_aware_times_crosses_pickled_each_as_itself(bridge: Bridge) -> None:
    """pyarrow would make one of the other; pickled, a naive datetime is a LocalDateTime and an
    aware one an Instant, and a date among datetimes stays a LocalDate."""
    times = [
        (datetime.datetime(2024, 1, 1, i) if i % 2 else datetime.datetime(2024, 1, 1, i, tzinfo=UTC),)
        for i in range(20)
    ]
    days = [(datetime.date(2024, 1, 1) if i % 2 else datetime.datetime(2024, 1, 1, i),) for i in range(20)]
    for rows, classes in (
        (times, ["java.time.LocalDateTime", "java.time.Instant"]),
        (days, ["java.time.LocalDate", "java.time.LocalDateTime"]),
    ):
        before = int(bridge.runtime.arrowBatchesFromPython())
        java = collected(bridge, rows)
        assert int(bridge.runtime.arrowBatchesFromPython()) == before
        assert java_classes(bridge, java) == [classes[0] if i % 2 else classes[1] for i in range(20)]


# The conversions themselves (no JVM).


def column_cases() -> list[Any]:
    d, utc = decimal.Decimal, UTC
    return [
        pa.array([None, d("1.50"), d("-12.25"), d("0.00")], pa.decimal128(10, 2)),
        pa.array([d(10**17), None, d(-(10**17))], pa.decimal128(18, 0)),
        pa.array([d("1" * 30 + ".123"), None], pa.decimal128(38, 3)),
        pa.array([d("1" * 70 + ".123"), None], pa.decimal256(76, 3)),
        pa.array([datetime.date(1, 1, 1), None, datetime.date(9999, 12, 31)], pa.date32()),
        pa.array([datetime.datetime(1, 1, 1), None, datetime.datetime(9999, 12, 31, 23, 59, 59, 999999)]),
        pa.array(
            [datetime.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=utc), None],
            pa.timestamp("us", "+00:00"),
        ),
        pa.array([datetime.datetime(2024, 1, 1, tzinfo=utc), None], pa.timestamp("ms", "UTC")),
        pa.array([datetime.datetime(2024, 1, 1, 0, 0, 1), None], pa.timestamp("s")),
        pa.array([1, None, 2**62]),
        pa.array(["a", None]),
    ]


@pytest.mark.parametrize("column", column_cases(), ids=lambda c: str(c.type))
def test_columns_are_made_as_pyarrow_makes_them(column: Any) -> None:
    for part in (column, column.slice(1)):
        made, pyarrows = python_values(part), part.to_pylist()
        assert made == pyarrows
        assert [str(v) for v in made] == [str(v) for v in pyarrows]
        assert kinds_of(made) == kinds_of(pyarrows)


def test_python_columns_cross_as_arrow_only_of_one_kind() -> None:
    aware = datetime.datetime(2024, 1, 1, tzinfo=UTC)
    naive = datetime.datetime(2024, 1, 1)
    assert str(arrow_array([aware, None]).type) == "timestamp[us, tz=UTC]"
    assert str(arrow_array([uuid.UUID(int=1), None]).type) == "extension<arrow.uuid>"
    assert str(arrow_array([decimal.Decimal("1.5"), decimal.Decimal("12.25")]).type) == "decimal128(4, 2)"
    for mixed in (
        [naive, aware],
        [aware, naive],
        [datetime.date(2024, 1, 1), naive],
        [decimal.Decimal(1), 2],
        [1, 2.5],
        [b"x", "y"],
        [uuid.UUID(int=1), "x"],
    ):
        assert arrow_array(mixed) is None, mixed
