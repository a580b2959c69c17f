"""Spark's rows across the bridge as Arrow (the Spark jar's ``SparkRowReader``, found by the
bridge's ``RowReader`` SPI): a ``Row`` with a schema arrives as a ``pyspark.sql.Row``, one without
as a tuple, a ``GenericInternalRow`` as a tuple of plain values, their dates, timestamps and
decimals as Python's; with ``schema=`` they take its names and types."""

from __future__ import annotations

import datetime
import decimal
import gc
from typing import Any

import pytest
from pyspark.sql import Row

import reactive_streams as rs
from reactive_streams.jvm import Bridge, JvmValueError

from ..jvm.kit import Kit

pa = pytest.importorskip("pyarrow")


def spark_rows(bridge: Bridge) -> Any:
    return bridge.jvm.io.github.rspy.spark.testing.SparkRows


def take_all(bridge: Bridge, rows: Any, prefetch: int = 4096, schema: Any = None) -> list[Any]:
    """The JVM list ``rows`` through ``Flux.fromIterable`` and the bridge."""
    publisher = Kit(bridge).Flux.fromIterable(rows)
    return list(rs.iterate(bridge.from_jvm(publisher, schema=schema), prefetch=prefetch))


def assert_nothing_left(bridge: Bridge) -> None:
    assert bridge.live_streams == 0
    assert Kit(bridge).live_adapters() == 0
    gc.collect()
    assert int(bridge.runtime.arrowAllocatedBytes()) == 0


def test_the_rows_of_a_dataset_arrive_as_pyspark_rows_like_collect_gives(
    spark_session: Any, spark_bridge: Bridge
) -> None:
    df = spark_session.range(200).selectExpr(
        "id", "CAST(id AS STRING) AS name", "id / 4 AS ratio", "id % 2 = 0 AS even"
    )
    before = int(spark_bridge.runtime.arrowBatches())
    rows = take_all(spark_bridge, df._jdf.collectAsList())
    assert rows == df.collect()
    assert all(isinstance(row, Row) for row in rows)
    assert rows[5].name == "5" and rows[5]["ratio"] == 1.25 and rows[5].asDict() == df.collect()[5].asDict()
    assert int(spark_bridge.runtime.arrowBatches()) > before
    assert_nothing_left(spark_bridge)


def test_rows_with_a_schema_are_rows_in_batches_of_any_size(spark_bridge: Bridge) -> None:
    rows = take_all(spark_bridge, spark_rows(spark_bridge).withSchema(5), prefetch=1)
    assert rows == [Row(id=i, name=f"n{i}", score=i / 2) for i in range(5)]
    assert [row.__fields__ for row in rows[:1]] == [["id", "name", "score"]]


def test_rows_without_a_schema_arrive_as_tuples(spark_bridge: Bridge) -> None:
    rows = take_all(spark_bridge, spark_rows(spark_bridge).withoutSchema(30))
    assert rows == [(i, f"n{i}") for i in range(30)]
    assert all(type(row) is tuple for row in rows)


def test_generic_internal_rows_arrive_as_tuples_of_plain_values(spark_bridge: Bridge) -> None:
    rows = take_all(spark_bridge, spark_rows(spark_bridge).internal(30))
    assert rows == [(i, f"n{i}", None) for i in range(30)]  # UTF8String as str


def test_rows_with_dates_arrive_as_rows_of_python_dates_with_a_schema_or_without(
    spark_bridge: Bridge,
) -> None:
    """Spark's ``java.sql.Date``, ``Timestamp`` (an instant: an aware datetime in UTC, where
    ``collect()`` gives the session's local wall time) and ``BigDecimal``, by default too."""
    inferred = take_all(spark_bridge, spark_rows(spark_bridge).dated(20))
    assert inferred[3] == Row(
        id=3,
        day=datetime.date(2024, 1, 1),
        at=datetime.datetime(2024, 1, 1, 0, 0, 3, tzinfo=datetime.timezone.utc),
        amount=decimal.Decimal("0.03"),
    )
    assert isinstance(inferred[3], Row) and inferred[3].at.tzinfo is datetime.timezone.utc
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            ("day", pa.date32()),
            ("at", pa.timestamp("us", tz="UTC")),
            ("amount", pa.decimal128(10, 2)),
        ]
    )
    rows = take_all(spark_bridge, spark_rows(spark_bridge).dated(20), schema=schema)
    assert rows[3] == Row(
        id=3,
        day=datetime.date(2024, 1, 1),
        at=datetime.datetime(2024, 1, 1, 0, 0, 3, tzinfo=datetime.timezone.utc),
        amount=decimal.Decimal("0.03"),
    )
    assert isinstance(rows[3], Row) and rows[3].__fields__ == ["id", "day", "at", "amount"]
    assert_nothing_left(spark_bridge)


def test_a_schema_takes_rows_by_name_or_by_position(spark_bridge: Bridge) -> None:
    by_name = pa.schema([("score", pa.float32()), ("id", pa.int32())])
    assert take_all(spark_bridge, spark_rows(spark_bridge).withSchema(3), schema=by_name)[2] == Row(
        score=1.0, id=2
    )
    by_position = pa.schema([("key", pa.int64()), ("label", pa.string())])
    rows = take_all(spark_bridge, spark_rows(spark_bridge).withoutSchema(3), schema=by_position)
    assert rows[2] == Row(key=2, label="n2") and rows[2].label == "n2"
    internal = take_all(
        spark_bridge,
        spark_rows(spark_bridge).internal(3),
        schema=pa.schema([("a", pa.int64()), ("b", pa.string()), ("c", pa.float64())]),
    )
    assert internal == [(i, f"n{i}", None) for i in range(3)]


def test_a_spark_row_that_does_not_fit_the_schema_is_named(spark_bridge: Bridge) -> None:
    schema = pa.schema([("id", pa.int64()), ("missing", pa.string())])
    with pytest.raises(JvmValueError) as failure:
        take_all(spark_bridge, spark_rows(spark_bridge).withSchema(3), schema=schema)
    assert str(failure.value.java_message).startswith(
        "row 0: an org.apache.spark.sql.catalyst.expressions.GenericRowWithSchema has no column 'missing' "
        "(its columns: [id, name, score])"
    )
    not_null = pa.schema(
        [
            pa.field("id", pa.int64()),
            pa.field("name", pa.string()),
            pa.field("c", pa.string(), nullable=False),
        ]
    )
    with pytest.raises(
        JvmValueError, match=r"row 0, column 'c' \(string, not null\): null, in a column that is not"
    ):
        take_all(spark_bridge, spark_rows(spark_bridge).internal(3), schema=not_null)
    assert_nothing_left(spark_bridge)
