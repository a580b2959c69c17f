"""Rows as Arrow, JVM -> Python (`_arrow`, Java's ``ArrowRows``): a batch of ``Object[]`` or
``Map`` rows of values crosses as one Arrow record batch, on every backend, and arrives as the
tuples and dicts the pickled path gives; any batch that fits no schema crosses pickled."""

from __future__ import annotations

import decimal
import gc
from typing import Any

import pytest

import reactive_streams as rs
from reactive_streams.jvm import Bridge

from ..support import WAIT, Probe

pytest.importorskip("pyarrow")


def sources(bridge: Bridge) -> Any:
    return bridge.jvm.io.github.rspy.bridge.testing.Sources


def take_all(bridge: Bridge, java_publisher: Any, prefetch: int = 4096) -> list[Any]:
    return list(rs.iterate(bridge.from_jvm(java_publisher), prefetch=prefetch))


def round_trip(bridge: Bridge, rows: list[Any], prefetch: int = 4096) -> list[Any]:
    """Python rows to Java (tuples become Object[], dicts HashMaps) and back."""
    return take_all(bridge, bridge.to_jvm(rs.from_iterable(rows)), prefetch)


def pickled(bridge: Bridge, rows: list[Any]) -> list[Any]:
    """The same round trip with batches of one row, which never go as Arrow."""
    return round_trip(bridge, rows, prefetch=1)


def arrow_batches(bridge: Bridge) -> int:
    return int(bridge.runtime.arrowBatches())


def test_object_array_rows_arrive_as_tuples_through_arrow(bridge: Bridge) -> None:
    before = arrow_batches(bridge)
    rows = take_all(bridge, sources(bridge).rows(10_000))
    assert rows == [(index, f"name {index % 1000}") for index in range(10_000)]
    assert all(type(row) is tuple for row in rows)
    assert arrow_batches(bridge) > before


def test_map_rows_arrive_as_dicts_through_arrow(bridge: Bridge) -> None:
    before = arrow_batches(bridge)
    rows = take_all(bridge, sources(bridge).mapRows(5_000))
    assert rows == [{"id": index, "name": f"name {index}"} for index in range(5_000)]
    assert arrow_batches(bridge) > before


def test_every_value_arrow_carries_keeps_its_python_type(bridge: Bridge) -> None:
    rows = [
        (
            index,
            index * 0.5,
            f"text {index} ✓ 𝄞",
            index % 2 == 0,
            bytes([index % 256, 0]),
            None,
            2**40 + index,
        )
        for index in range(500)
    ]
    before = arrow_batches(bridge)
    through_arrow = round_trip(bridge, rows)
    assert arrow_batches(bridge) > before
    assert through_arrow == pickled(bridge, rows) == rows
    assert [type(v) for row in through_arrow for v in row] == [type(v) for row in rows for v in row]


def test_java_narrow_numbers_arrive_as_the_pickled_path_gives_them(bridge: Bridge) -> None:
    through_arrow = take_all(bridge, sources(bridge).narrowRows(100))
    one_by_one = take_all(bridge, sources(bridge).narrowRows(100), prefetch=1)
    assert through_arrow == one_by_one
    assert through_arrow[3] == (3, 3, 1.5, 3.0, None)
    assert [type(v) for v in through_arrow[3]] == [int, int, float, float, type(None)]


def test_dict_rows_round_trip_with_their_keys(bridge: Bridge) -> None:
    rows = [{"a": index, "b": str(index), "c": None} for index in range(300)]
    assert round_trip(bridge, rows) == rows


@pytest.mark.parametrize(
    ("name", "rows"),
    [
        (
            "a column mixing ints and floats",
            [(index, index if index % 2 else index / 2) for index in range(100)],
        ),
        ("a value Arrow is not given here", [(index, decimal.Decimal(index)) for index in range(100)]),
        ("rows of different widths", [(index,) * (1 + index % 3) for index in range(100)]),
        ("nested values", [(index, [index, index]) for index in range(100)]),
        ("dicts with different keys", [{"k" + str(index % 2): index} for index in range(100)]),
        ("dicts with int keys", [{index: index} for index in range(100)]),
        ("not rows at all", [f"s{index}" for index in range(100)]),
    ],
)
def test_a_batch_that_fits_no_schema_crosses_pickled_with_todays_types(
    bridge: Bridge, name: str, rows: list[Any]
) -> None:
    before = arrow_batches(bridge)
    back = round_trip(bridge, rows)
    assert arrow_batches(bridge) == before, name
    assert back == pickled(bridge, rows), name
    assert [type(v) for row in back for v in (row if isinstance(row, tuple) else [row])] == [
        type(v) for row in pickled(bridge, rows) for v in (row if isinstance(row, tuple) else [row])
    ]


def test_demand_counts_rows_and_stays_exact(bridge: Bridge) -> None:
    probe = Probe(initial=37)
    bridge.from_jvm(sources(bridge).rows(1_000)).subscribe(probe)
    probe.await_items(37)
    assert len(probe.items) == 37
    probe.request(963)
    assert probe.done.wait(WAIT) and probe.completed and probe.violations == []
    assert len(probe.items) == 1_000
    assert bridge.runtime.maxQueued() <= bridge.settings.window


def test_ten_thousand_batches_leave_the_arrow_allocator_at_zero(bridge: Bridge) -> None:
    count = 0

    class Rows(rs.Subscriber[Any]):
        def on_subscribe(self, subscription: rs.Subscription) -> None:
            self.subscription = subscription
            subscription.request(16)  # one Arrow batch of 16 rows per request

        def on_next(self, item: Any) -> None:
            nonlocal count
            count += 1
            if count % 16 == 0:
                self.subscription.request(16)

        def on_error(self, exc: BaseException) -> None:
            raise AssertionError(exc)

        def on_complete(self) -> None:
            done.set()

    import threading

    done = threading.Event()
    before = arrow_batches(bridge)
    bridge.from_jvm(sources(bridge).rows(160_000)).subscribe(Rows())
    assert done.wait(WAIT * 2)
    assert count == 160_000
    assert arrow_batches(bridge) - before >= 9_000  # a few batches may be short of 16 and go pickled
    gc.collect()
    assert int(bridge.runtime.arrowAllocatedBytes()) == 0


def test_without_pyarrow_the_jvm_is_told_to_pickle_rows(py4j_bridge: Bridge) -> None:
    runtime = py4j_bridge.jvm.io.github.rspy.bridge.BridgeRuntime(64, 64, 1)
    try:
        assert runtime.useArrowRows(False) is False
        assert runtime.arrowBatches() == 0
    finally:
        runtime.close()


# Arrow batches: a JVM Publisher<VectorSchemaRoot> arrives as pyarrow.RecordBatches.


def arrow_sources(bridge: Bridge) -> Any:
    return bridge.jvm.io.github.rspy.bridge.testing.ArrowSources


def test_vector_schema_roots_arrive_as_record_batches_one_on_next_each(bridge: Bridge) -> None:
    import pyarrow

    batches = take_all(bridge, arrow_sources(bridge).reusedRoot(50, 1000), prefetch=8)
    assert len(batches) == 50
    assert all(isinstance(batch, pyarrow.RecordBatch) for batch in batches)
    assert batches[0].schema.names == ["id", "value", "name"]
    # the publisher refilled one root for every batch: each arrived as it was when emitted
    table = pyarrow.Table.from_batches(batches)
    assert table.column("id").to_pylist() == list(range(50_000))
    assert table.column("name").to_pylist()[12_345] == "name 12345"
    assert int(arrow_sources(bridge).allocatedBytes()) == 0  # the publisher closed its root


def test_demand_counts_batches(bridge: Bridge) -> None:
    probe = Probe(initial=3)
    bridge.from_jvm(arrow_sources(bridge).reusedRoot(10, 100)).subscribe(probe)
    probe.await_items(3)
    assert len(probe.items) == 3
    probe.request(7)
    assert probe.done.wait(WAIT) and probe.completed and probe.violations == []
    assert [batch.num_rows for batch in probe.items] == [100] * 10
