"""Rows as Arrow beyond Object[] and Map (`_arrow`: its `_rows` and `_schema`; Java's ``ArrowRows``,
``RowReaders``, ``SchemaRows``): Java records cross as dicts by default; with an explicit
``schema=`` every element must be a row of it (JavaBeans too), both ways, with exactly its
names and types, and a row that does not fit ends the stream naming the row and the column,
after the rows before it, leaving nothing behind. Spark's rows: tests/spark/test_arrow_rows.py."""

from __future__ import annotations

import datetime
import decimal
import gc
import re
import sys
import threading
from typing import Any

import pytest

import reactive_streams as rs
from reactive_streams.jvm import Bridge, JvmValueError

from ..support import WAIT, Probe, wait_for
from .kit import WAIT_MS, Kit, assert_arrow_sources_released

pa = pytest.importorskip("pyarrow")

ID_NAME = pa.schema([pa.field("id", pa.int32(), nullable=False), pa.field("name", pa.string())])


def row_sources(bridge: Bridge) -> Any:
    return bridge.jvm.io.github.rspy.bridge.testing.RowSources


def take_all(bridge: Bridge, publisher: Any, prefetch: int = 4096, schema: Any = None) -> list[Any]:
    return list(rs.iterate(bridge.from_jvm(publisher, schema=schema), prefetch=prefetch))


def arrow_batches(bridge: Bridge) -> int:
    return int(bridge.runtime.arrowBatches())


def assert_nothing_left(bridge: Bridge) -> None:
    """No stream, adapter or Arrow buffer left on either side."""
    wait_for(lambda: bridge.live_streams == 0, "the Python side to end its streams")
    assert Kit(bridge).live_adapters() == 0
    gc.collect()
    assert int(bridge.runtime.arrowAllocatedBytes()) == 0


# Java records, by default.


def test_records_arrive_as_dicts_keyed_by_component_name(bridge: Bridge) -> None:
    before = arrow_batches(bridge)
    rows = take_all(bridge, row_sources(bridge).points(300))
    assert rows[:2] == [
        {"id": 0, "name": "p0", "score": 0.0, "even": True, "tag": b"\x00", "maybe": None},
        {"id": 1, "name": "p1", "score": 0.25, "even": False, "tag": b"\x01", "maybe": 1},
    ]
    assert [row["id"] for row in rows] == list(range(300))
    assert [type(v) for v in rows[1].values()] == [int, str, float, bool, bytes, int]
    assert arrow_batches(bridge) > before
    assert_nothing_left(bridge)


def test_records_are_dicts_in_batches_of_any_size(bridge: Bridge) -> None:
    """Nothing else gives a record by value: a batch of one crosses as Arrow too, so the type a
    subscriber sees never depends on how much it requested."""
    one_by_one = take_all(bridge, row_sources(bridge).points(5), prefetch=1)
    assert one_by_one == take_all(bridge, row_sources(bridge).points(5))
    assert all(type(row) is dict for row in one_by_one)


def test_a_record_class_that_is_not_public_is_read_too(bridge: Bridge) -> None:
    assert take_all(bridge, row_sources(bridge).hidden(20)) == [{"id": i, "name": f"h{i}"} for i in range(20)]


def test_records_with_values_rows_do_not_carry_cross_as_references_as_before(bridge: Bridge) -> None:
    rows = take_all(bridge, row_sources(bridge).tagged(20))
    assert len(rows) == 20
    assert all(bridge._host.backend.is_jvm_object(row) for row in rows)
    assert int(rows[3].id()) == 3


def test_java_beans_cross_as_references_without_a_schema(bridge: Bridge) -> None:
    """Objects with getters are not rows by default: code that receives them keeps its types."""
    people = take_all(bridge, row_sources(bridge).people(20))
    assert all(bridge._host.backend.is_jvm_object(person) for person in people)
    assert str(people[4].getName()) == "n4"


def test_demand_counts_records(bridge: Bridge) -> None:
    probe = Probe(initial=7)
    bridge.from_jvm(row_sources(bridge).points(50)).subscribe(probe)
    probe.await_items(7)
    assert len(probe.items) == 7
    probe.request(43)
    probe.await_done()
    assert probe.completed and len(probe.items) == 50
    probe.assert_rules_held()


# An explicit schema, JVM -> Python.


def test_object_arrays_with_a_schema_take_its_names_and_types(bridge: Bridge) -> None:
    schema = pa.schema([("id", pa.int16()), ("name", pa.large_string())])
    sources = bridge.jvm.io.github.rspy.bridge.testing.Sources
    before = arrow_batches(bridge)
    rows = take_all(bridge, sources.rows(40), prefetch=3, schema=schema)  # batches of 3 and fewer
    assert rows == [(i, f"name {i}") for i in range(40)]
    assert arrow_batches(bridge) - before >= 14  # every batch, however small
    assert_nothing_left(bridge)


def test_maps_with_a_schema_arrive_as_dicts_of_its_columns(bridge: Bridge) -> None:
    sources = bridge.jvm.io.github.rspy.bridge.testing.Sources
    rows = take_all(bridge, sources.mapRows(30), schema=ID_NAME)
    assert rows == [{"id": i, "name": f"name {i}"} for i in range(30)]


def test_records_with_a_schema_carry_dates_timestamps_and_decimals(bridge: Bridge) -> None:
    schema = pa.schema(
        [
            ("id", pa.int64()),
            ("day", pa.date32()),
            ("at", pa.timestamp("us", tz="UTC")),
            ("amount", pa.decimal128(10, 2)),
        ]
    )
    rows = take_all(bridge, row_sources(bridge).events(3), schema=schema)
    utc = datetime.timezone.utc
    assert rows[2] == {
        "id": 2,
        "day": datetime.date(2024, 1, 3),
        "at": datetime.datetime(2024, 1, 1, 0, 0, 2, 2, tzinfo=utc),
        "amount": decimal.Decimal("0.02"),
    }
    naive = pa.schema([("at", pa.timestamp("s")), ("id", pa.int8())])  # by name, in the schema's order
    assert take_all(bridge, row_sources(bridge).events(2), schema=naive)[1] == {
        "at": datetime.datetime(2024, 1, 1, 0, 0, 1),  # the instant's UTC wall time, to the second
        "id": 1,
    }


def test_java_beans_with_a_schema_arrive_as_dicts_of_the_properties_it_names(bridge: Bridge) -> None:
    schema = pa.schema([("name", pa.string()), ("active", pa.bool_()), ("id", pa.int64())])
    rows = take_all(bridge, row_sources(bridge).people(25), schema=schema)
    assert rows[:2] == [{"name": "n0", "active": True, "id": 0}, {"name": "n1", "active": False, "id": 1}]
    assert len(rows) == 25


def test_rows_of_several_kinds_keep_their_shapes_in_order(bridge: Bridge) -> None:
    rows = take_all(bridge, row_sources(bridge).mixedRows(9), schema=ID_NAME)
    expected: list[Any] = []
    for i in range(9):
        values = (i, f"name {i}")
        expected.append(values if i % 3 == 0 else dict(zip(("id", "name"), values, strict=True)))
    assert rows == expected


def test_rows_cross_python_to_java_and_back_with_every_type_a_schema_takes(bridge: Bridge) -> None:
    """Python -> Java values of each column's own type (Byte, Short, Float, LocalDate, Instant,
    BigDecimal, ...) -> the same schema back: the rows are the rows."""
    schema = pa.schema(
        [
            pa.field("i8", pa.int8(), nullable=False),
            ("i16", pa.int16()),
            ("i32", pa.int32()),
            ("i64", pa.int64()),
            ("f32", pa.float32()),
            ("f64", pa.float64()),
            ("flag", pa.bool_()),
            ("text", pa.string()),
            ("big_text", pa.large_string()),
            ("data", pa.binary()),
            ("big_data", pa.large_binary()),
            ("day", pa.date32()),
            ("seconds", pa.timestamp("s")),
            ("millis", pa.timestamp("ms", tz="UTC")),
            ("micros", pa.timestamp("us", tz="Europe/Paris")),
            ("nanos", pa.timestamp("ns")),
            ("amount", pa.decimal128(12, 3)),
        ]
    )
    paris = datetime.timezone(datetime.timedelta(hours=1))
    rows = [
        (
            i - 50,
            i * 300,
            -(2**31) + i,
            2**62 + i,
            i / 4,
            i / 3,
            i % 2 == 0,
            f"é {i} 𝄞",
            "x" * i,
            bytes([i, 0]),
            b"",
            datetime.date(1969, 12, 1) + datetime.timedelta(days=i),
            datetime.datetime(1960, 1, 1, 0, 0, i % 60),
            datetime.datetime(2024, 1, 1, 0, 0, 0, 1000 * i, tzinfo=datetime.timezone.utc),
            datetime.datetime(2024, 6, 1, 12, 0, 0, i, tzinfo=paris),
            datetime.datetime(2024, 1, 1, 0, 0, 0, i),
            decimal.Decimal(i) / 8,
        )
        for i in range(100)
    ] + [(1,) + (None,) * 16]
    back = take_all(bridge, bridge.to_jvm(rs.from_iterable(rows), schema=schema), prefetch=30, schema=schema)
    assert back == rows
    assert_nothing_left(bridge)


# Python -> JVM with a schema.


def java_value_classes(bridge: Bridge, rows: Any) -> list[str]:
    return [str(name) for name in bridge.jvm.io.github.rspy.bridge.testing.Types.rowValueClassNames(rows)]


def collected(bridge: Bridge, publisher: rs.Publisher[Any], schema: Any) -> Any:
    kit = Kit(bridge)
    return kit.flux_from(bridge.to_jvm(publisher, schema=schema)).collectList().block()


def test_python_rows_with_a_schema_arrive_in_java_as_its_types(bridge: Bridge) -> None:
    schema = pa.schema(
        [
            ("id", pa.int64()),
            ("small", pa.int8()),
            ("ratio", pa.float32()),
            ("day", pa.date32()),
            ("at", pa.timestamp("us", tz="UTC")),
            ("local", pa.timestamp("us")),
            ("amount", pa.decimal128(5, 2)),
        ]
    )
    moment = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
    rows = [(5, 1, 0.5, datetime.date(2024, 1, 1), moment, datetime.datetime(2024, 1, 1), decimal.Decimal(1))]
    java = collected(bridge, rs.from_iterable(rows), schema)  # one row: still Arrow, still typed
    assert java_value_classes(bridge, java) == [
        "java.lang.Long",  # the pickle would give an Integer
        "java.lang.Byte",
        "java.lang.Float",
        "java.time.LocalDate",
        "java.time.Instant",
        "java.time.LocalDateTime",
        "java.math.BigDecimal",
    ]
    assert str(java.get(0)[6]) == "1.00"
    dicts = collected(bridge, rs.from_iterable([{"name": "a", "id": 1}, {"id": 2, "name": None}]), ID_NAME)
    assert str(dicts.get(1).getClass().getName()) == "java.util.HashMap"
    assert java_value_classes(bridge, dicts) == [
        "java.lang.Integer",
        "java.lang.String",
        "java.lang.Integer",
        "null",
    ]


class Cancellable(rs.Publisher[Any]):
    """``rs.from_iterable(items)``, recording whether its subscriber cancelled."""

    def __init__(self, items: list[Any]) -> None:
        self._inner = rs.from_iterable(items)
        self.cancelled = threading.Event()

    def subscribe(self, subscriber: rs.Subscriber[Any]) -> None:
        publisher = self

        class Relay(rs.Subscriber[Any]):
            def on_subscribe(self, subscription: rs.Subscription) -> None:
                class Recorded(rs.Subscription):
                    def request(self, n: int) -> None:
                        subscription.request(n)

                    def cancel(self) -> None:
                        publisher.cancelled.set()
                        subscription.cancel()

                subscriber.on_subscribe(Recorded())

            def on_next(self, item: Any) -> None:
                subscriber.on_next(item)

            def on_error(self, exc: BaseException) -> None:
                subscriber.on_error(exc)

            def on_complete(self) -> None:
                subscriber.on_complete()

        self._inner.subscribe(Relay())


PYTHON_BAD_ROWS = [
    (
        "a tuple too wide",
        (12, "x", "y"),
        "row 12: a tuple of 3 values, but the schema has 2 columns ['id', 'name']",
    ),
    (
        "a dict of other keys",
        {"id": 12, "nom": "x"},
        "row 12: a dict with keys ['id', 'nom'], but the schema's",
    ),
    (
        "None in a column that is not nullable",
        (None, "x"),
        "row 12, column 'id' (int32, not null): None, in a",
    ),
    (
        "a str for an int",
        ("12", "x"),
        "row 12, column 'id' (int32, not null): a str ('12'), which the column",
    ),
    (
        "a bool for an int",
        (True, "x"),
        "row 12, column 'id' (int32, not null): a bool (True), which the column",
    ),
    (
        "an int beyond int32",
        (2**40, "x"),
        "row 12, column 'id' (int32, not null): an int (1099511627776), which",
    ),
    ("an int for a str", (12, 7), "row 12, column 'name' (string): an int (7), which the column cannot hold"),
    ("not a row", 12, "row 12: an int (12), not a row (a tuple, list or dict)"),
]


@pytest.mark.parametrize(
    ("name", "bad", "message"), PYTHON_BAD_ROWS, ids=[case[0] for case in PYTHON_BAD_ROWS]
)
def test_a_python_row_that_does_not_fit_fails_the_java_subscriber_after_the_rows_before_it(
    bridge: Bridge, name: str, bad: Any, message: str
) -> None:
    rows: list[Any] = [(i, f"n{i}") for i in range(20)]
    rows[12] = bad
    publisher = Cancellable(rows)
    recording = Kit(bridge).recording_subscriber(100, 0)
    bridge.to_jvm(publisher, schema=ID_NAME).subscribe(recording)
    assert recording.awaitDone(WAIT_MS)
    assert str(recording.errorClass()) == "java.lang.IllegalArgumentException", name
    assert str(recording.errorMessage()).startswith(message), str(recording.errorMessage())
    assert [tuple(row) for row in recording.items()] == rows[:12]  # nothing delivered is lost
    assert publisher.cancelled.wait(WAIT)
    assert_nothing_left(bridge)


def test_python_values_the_schema_takes_only_of_their_own_type(bridge: Bridge) -> None:
    """pyarrow alone would turn 1.5 into an int32 1, a datetime into a date, bytes into a str."""
    cases = [
        (pa.int32(), 1.5, "a float (1.5), which the column cannot hold"),
        (
            pa.date32(),
            datetime.datetime(2024, 1, 1),
            "a datetime (datetime.datetime(2024, 1, 1, 0, 0)), which",
        ),
        (pa.string(), b"x", "a bytes (b'x'), which the column cannot hold"),
        (pa.decimal128(4, 1), decimal.Decimal("1.25"), "a Decimal (Decimal('1.25')), which does not fit:"),
    ]
    for arrow_type, value, problem in cases:
        schema = pa.schema([("v", arrow_type)])
        recording = Kit(bridge).recording_subscriber(10, 0)
        bridge.to_jvm(rs.from_iterable([(value,)]), schema=schema).subscribe(recording)
        assert recording.awaitDone(WAIT_MS)
        column = f"column 'v' ({'date32' if arrow_type == pa.date32() else arrow_type})"
        assert str(recording.errorMessage()).startswith(f"row 0, {column}: {problem}"), str(
            recording.errorMessage()
        )
    assert_nothing_left(bridge)


# A JVM row that does not fit.

JVM_BAD_ROWS = [
    ("wide", "row 37: an Object[] of 3 values, but the schema has 2 columns [id, name]"),
    ("null", "row 37, column 'id' (int32, not null): null, in a column that is not nullable"),
    (
        "type",
        "row 37, column 'id' (int32, not null): a java.lang.String (\"seven\"), which the column cannot hold",
    ),
    ("range", "row 37, column 'id' (int32, not null): a java.lang.Long (1099511627776), which does not fit"),
    ("value", "row 37: a java.lang.Long, not a row (an Object[], List, Map, record, JavaBean or Spark Row)"),
    (
        "map",
        "row 37: a java.util.HashMap without the key 'name' (its keys: [id, nom]; the schema's: [id, name])",
    ),
    ("surrogate", "row 37, column 'name' (string): a java.lang.String (\"\\ud800\"), which does not fit"),
]


@pytest.mark.parametrize(("kind", "message"), JVM_BAD_ROWS, ids=[case[0] for case in JVM_BAD_ROWS])
def test_a_jvm_row_that_does_not_fit_ends_the_stream_after_the_rows_before_it(
    bridge: Bridge, kind: str, message: str
) -> None:
    kit = Kit(bridge)
    source = kit.recording_publisher(
        row_sources(bridge).withBadRow(1000, 37, kind)
    )  # not complete when row 37 fails
    probe = Probe(initial=25)  # rows 0-24, then 25-37 in the batch that fails
    bridge.from_jvm(source, schema=ID_NAME).subscribe(probe)
    probe.await_items(25)
    probe.request(100)
    probe.await_done()
    assert isinstance(probe.error, JvmValueError)
    assert probe.error.java_message is not None and probe.error.java_message.startswith(message)
    assert probe.items == [(i, f"name {i}") for i in range(37)]  # the failing batch's rows before it too
    # At once if no request is under way upstream, else when that request returns (it may return
    # after Python heard the error: the source emits inside request).
    wait_for(lambda: int(source.cancels()) == 1, "the source cancelled")
    probe.assert_rules_held()
    assert_nothing_left(bridge)


def test_a_getter_that_throws_names_the_row_and_the_column(bridge: Bridge) -> None:
    schema = pa.schema([("id", pa.int64()), ("broken", pa.string())])
    with pytest.raises(JvmValueError) as failure:
        take_all(bridge, row_sources(bridge).people(5), schema=schema)
    message = str(failure.value.java_message)
    assert message.startswith("row 0: column 'broken' of an io.github.rspy.bridge.testing.RowSources$Person")
    assert "getBroken() threw java.lang.IllegalStateException: no broken value for 0" in message
    assert_nothing_left(bridge)


def test_a_column_the_rows_do_not_have_is_named(bridge: Bridge) -> None:
    schema = pa.schema([("id", pa.int64()), ("colour", pa.string())])
    with pytest.raises(
        JvmValueError,
        match=r"row 0: an io\.github\.rspy\.bridge\.testing\.RowSources\$Point has no "
        r"column 'colour' \(its columns: \[id, name, score, even, tag, maybe\]\)",
    ):
        take_all(bridge, row_sources(bridge).points(5), schema=schema)
    assert_nothing_left(bridge)


# The option itself, checked when it is given.


@pytest.mark.parametrize("direction", ["from_jvm", "to_jvm"])
def test_a_schema_that_is_not_a_pyarrow_schema_is_a_type_error(bridge: Bridge, direction: str) -> None:
    for given, shown in [
        ({"id": "int64"}, "dict {'id'"),
        ([pa.field("id", pa.int64())], "list [pyarrow.Field"),
        ("x", "str 'x'"),
    ]:
        with pytest.raises(
            TypeError,
            match=re.escape(f"schema must be a pyarrow.Schema (pyarrow.schema([...])), got {shown}"),
        ):
            call(bridge, direction, given)


@pytest.mark.parametrize("direction", ["from_jvm", "to_jvm"])
def test_a_schema_rows_cannot_carry_is_a_value_error_naming_the_column(
    bridge: Bridge, direction: str
) -> None:
    cases = [
        (
            pa.schema([("id", pa.int64()), ("tags", pa.list_(pa.string()))]),
            "schema: column 'tags' has type list<item: string>",
        ),
        (pa.schema([("n", pa.uint32())]), "schema: column 'n' has type uint32, which rows cannot carry"),
        (pa.schema([]), "schema has no columns"),
        (pa.schema([("a", pa.int64()), ("a", pa.string())]), "schema has two columns named 'a'"),
    ]
    for schema, message in cases:
        with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
            call(bridge, direction, schema)


@pytest.mark.parametrize("direction", ["from_jvm", "to_jvm"])
def test_a_schema_without_pyarrow_is_an_import_error(
    bridge: Bridge, direction: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow now fails
    with pytest.raises(ImportError, match="schema= needs pyarrow, which is not installed"):
        call(bridge, direction, ID_NAME)


def test_a_schema_on_a_bridge_without_arrow_java_is_refused(
    bridge: Bridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bridge._host, "arrow", False)
    for direction in ("from_jvm", "to_jvm"):
        with pytest.raises(rs.ReactiveStreamsError, match="schema= needs Arrow Java in the JVM"):
            call(bridge, direction, ID_NAME)


def call(bridge: Bridge, direction: str, schema: Any) -> Any:
    if direction == "from_jvm":
        return bridge.from_jvm(bridge.jvm.io.github.rspy.bridge.testing.Sources.rows(3), schema=schema)
    return bridge.to_jvm(rs.from_iterable([(1, "a")]), schema=schema)


def test_arrow_batches_are_not_rows_of_a_schema_and_are_released(bridge: Bridge) -> None:
    arrow_sources = bridge.jvm.io.github.rspy.bridge.testing.ArrowSources
    with pytest.raises(
        JvmValueError, match=r"^java\.lang\.IllegalArgumentException: row 0: an Arrow record batch"
    ):
        take_all(bridge, arrow_sources.reusedRoot(5, 100), schema=ID_NAME)
    assert_arrow_sources_released(bridge)
    assert_nothing_left(bridge)


def test_encode_elements_sends_rows_and_batches_as_arrow_and_refuses_a_mix() -> None:
    import pyarrow as pa

    from reactive_streams.jvm import decode_values, encode_elements

    rows = [(i, f"n{i}") for i in range(100)]
    assert encode_elements(rows)[:1] == b"A" and list(decode_values(encode_elements(rows))) == rows
    batch = pa.record_batch([pa.array([1, 2])], names=["id"])
    assert encode_elements([batch, batch])[:1] == b"B"
    assert encode_elements([1, 2, 3])[:1] == b"q"  # values as the codec makes them
    with pytest.raises(TypeError, match=r"holds pyarrow\.RecordBatches and other values"):
        encode_elements([batch, (1,)])
