"""Rows as Arrow, JVM -> Python (`_arrow`, Java's ``ArrowRows``): a batch of ``Object[]`` or
``Map`` rows of values crosses as one Arrow record batch, on every backend, and arrives as the
tuples and dicts the pickled path gives; any batch that fits no schema crosses pickled."""

from __future__ import annotations

import gc
import json
import os
from typing import Any

import pytest

import reactive_streams as rs
from reactive_streams.jvm import Bridge

from ..support import WAIT, Probe, wait_for
from .kit import assert_arrow_sources_released

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


def arrow_from_python(bridge: Bridge) -> int:
    return int(bridge.runtime.arrowBatchesFromPython())


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
    before, before_from_python = arrow_batches(bridge), arrow_from_python(bridge)
    through_arrow = round_trip(bridge, rows)
    assert arrow_batches(bridge) > before
    assert arrow_from_python(bridge) > before_from_python  # Python -> JVM as Arrow too
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
        ("an int beyond 64 bits, which Arrow cannot carry", [(index, 2**70 + index) for index in range(100)]),
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
    before, before_from_python = arrow_batches(bridge), arrow_from_python(bridge)
    back = round_trip(bridge, rows)
    assert arrow_batches(bridge) == before, name
    assert arrow_from_python(bridge) == before_from_python, name
    assert back == pickled(bridge, rows), name
    assert [type(v) for row in back for v in (row if isinstance(row, tuple) else [row])] == [
        type(v) for row in pickled(bridge, rows) for v in (row if isinstance(row, tuple) else [row])
    ]


def test_demand_counts_rows_and_stays_exact(own_bridge: Bridge) -> None:
    bridge = own_bridge  # maxQueued is the runtime's most ever: this stream's alone
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
    assert_arrow_sources_released(bridge)  # the publisher closed its root
    if bridge._host.arrow_c_data:  # in process, pyarrow holds the copies the JVM made...
        assert int(bridge.runtime.arrowAllocatedBytes()) > 0
    del batches, table
    # ...and gives them back when it lets go (the drain's thread may hold its last list a moment)
    wait_for(lambda: gc.collect() >= 0 and int(bridge.runtime.arrowAllocatedBytes()) == 0, "copies freed")


def test_batches_a_python_subscriber_never_took_are_freed(bridge: Bridge) -> None:
    probe = Probe(initial=2)
    bridge.from_jvm(arrow_sources(bridge).reusedRoot(40, 1000)).subscribe(probe)
    probe.await_items(2)
    probe.cancel()
    wait_for(lambda: int(bridge.runtime.liveAdapters()) == 0, "the stream ended")
    del probe
    gc.collect()
    assert int(bridge.runtime.arrowAllocatedBytes()) == 0


def test_batches_queued_for_a_python_subscriber_that_cancels_are_freed(bridge: Bridge) -> None:
    import time

    def slow_then_cancel(probe: Probe, batch: Any) -> None:
        if len(probe.items) == 1:  # once: the rest of a batch already sent may still arrive (§2.8)
            time.sleep(0.3)  # meanwhile the publisher, on a thread of its own, queues the rest
            probe.cancel()

    parallel = bridge.jvm.reactor.core.scheduler.Schedulers.parallel()
    batches = arrow_sources(bridge).sameRoot(50, 1000).subscribeOn(parallel)
    probes = [Probe(initial=50, on_next_hook=slow_then_cancel)]
    bridge.from_jvm(batches).subscribe(probes[0])
    wait_for(lambda: probes[0].cancelled and int(bridge.runtime.liveAdapters()) == 0, "the stream ended")
    probes.clear()
    gc.collect()
    assert int(bridge.runtime.arrowAllocatedBytes()) == 0  # the copies never sent were closed


def test_a_batch_python_cannot_read_ends_the_stream_at_both_ends(
    bridge: Bridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reactive_streams.jvm import _from_jvm

    def unreadable(payload: Any) -> Any:
        raise ValueError("no reader for these bytes")

    monkeypatch.setattr(_from_jvm, "decode_batch", unreadable)
    from .kit import Kit

    kit = Kit(bridge)
    upstream = kit.recording_range(1_000_000)
    probe = kit.probe_of(upstream, 100)
    assert probe.done.wait(WAIT)
    assert isinstance(probe.error, rs.ReactiveStreamsError)
    assert "could not be read: no reader for these bytes" in str(probe.error)
    wait_for(lambda: int(upstream.cancels()) == 1, "the JVM publisher cancelled")
    wait_for(lambda: int(bridge.runtime.liveAdapters()) == 0 and bridge.live_streams == 0, "both ends ended")


def test_demand_counts_batches(bridge: Bridge) -> None:
    probe = Probe(initial=3)
    bridge.from_jvm(arrow_sources(bridge).reusedRoot(10, 100)).subscribe(probe)
    probe.await_items(3)
    assert len(probe.items) == 3
    probe.request(7)
    assert probe.done.wait(WAIT) and probe.completed and probe.violations == []
    assert [batch.num_rows for batch in probe.items] == [100] * 10


# Python -> JVM: tuples and dicts as rows, pyarrow.RecordBatch as VectorSchemaRoot.


def collected(bridge: Bridge, publisher: rs.Publisher[Any]) -> Any:
    """What a Reactor subscriber collects of a Python publisher, as a Java List."""
    flux = bridge.jvm.reactor.core.publisher.Flux
    java = bridge.to_jvm(publisher)
    return getattr(flux, "from_" if bridge.backend == "jpype" else "from")(java).collectList().block()


def java_value_classes(bridge: Bridge, rows: Any) -> list[str]:
    return [str(name) for name in bridge.jvm.io.github.rspy.bridge.testing.Types.rowValueClassNames(rows)]


def test_python_rows_arrive_in_java_as_the_pickle_gives_them(bridge: Bridge) -> None:
    rows = [
        (index, index * 0.5, f"s{index}", index % 2 == 0, bytes([index % 256]), None, 2**40)
        for index in range(64)
    ]
    as_arrow = java_value_classes(bridge, collected(bridge, rs.from_iterable(rows)))
    one_by_one = [
        java_value_classes(bridge, collected(bridge, rs.from_iterable([row])))  # batches of one: pickled
        for row in rows[:2]
    ]
    assert as_arrow[:14] == one_by_one[0] + one_by_one[1]
    assert as_arrow[:7] == [
        "java.lang.Integer",
        "java.lang.Double",
        "java.lang.String",
        "java.lang.Boolean",
        "[B",
        "null",
        "java.lang.Long",
    ]


def test_python_dicts_arrive_in_java_as_hash_maps(bridge: Bridge) -> None:
    rows = [{"id": index, "name": f"n{index}"} for index in range(100)]
    back = round_trip(bridge, rows)
    assert back == rows
    java = collected(bridge, rs.from_iterable(rows))
    assert str(java.get(5).getClass().getName()) == "java.util.HashMap"
    assert java_value_classes(bridge, java)[:2] == ["java.lang.Integer", "java.lang.String"]


def test_record_batches_arrive_in_java_as_vector_schema_roots(bridge: Bridge) -> None:
    import pyarrow

    batches = [
        pyarrow.record_batch({"id": list(range(b * 100, b * 100 + 100)), "name": [f"n{b}"] * 100})
        for b in range(20)
    ]
    roots = collected(bridge, rs.from_iterable(batches))
    assert int(roots.size()) == 20
    assert str(roots.get(0).getClass().getName()) == "org.apache.arrow.vector.VectorSchemaRoot"
    values = [int(v) for v in arrow_sources(bridge).firstColumnsAndClose(roots)]
    assert values == list(range(2_000))
    assert int(bridge.runtime.arrowAllocatedBytes()) == 0  # the subscriber closed what it owned


def test_record_batches_and_other_elements_cross_in_order(bridge: Bridge) -> None:
    import pyarrow

    batch = pyarrow.record_batch({"id": [1, 2, 3]})
    items: list[Any] = [batch, batch, "between", 7, batch, (1, "x")]
    java = collected(bridge, rs.from_iterable(items))
    names = [str(name) for name in bridge.jvm.io.github.rspy.bridge.testing.Types.classNames(java)]
    root = "org.apache.arrow.vector.VectorSchemaRoot"
    assert names == [root, root, "java.lang.String", "java.lang.Integer", root, "[Ljava.lang.Object;"]
    roots = bridge.jvm.java.util.ArrayList()
    for index in (0, 1, 4):
        roots.add(java.get(index))
    assert [int(v) for v in arrow_sources(bridge).firstColumnsAndClose(roots)] == [1, 2, 3] * 3
    assert int(bridge.runtime.arrowAllocatedBytes()) == 0


class _NoSubscription:
    def request(self, n: int) -> None:
        pass

    def cancel(self) -> None:
        pass


def test_a_root_sent_after_the_python_subscriber_cancelled_is_not_kept(bridge: Bridge) -> None:
    """§2.8: a publisher may still signal onNext after a cancel. The batch is not copied for a
    Python side that is gone (on JPype a copy would hold the runtime's Arrow memory for good)."""
    probe = Probe(initial=0)
    java = bridge.subscriber_to_jvm(probe)
    java.onSubscribe(bridge.proxy(_NoSubscription(), "org.reactivestreams.Subscription"))
    wait_for(lambda: probe.subscription is not None, "on_subscribe")
    live = int(bridge.runtime.liveAdapters())  # this stream's Java subscriber among them
    assert probe.subscription is not None
    probe.subscription.cancel()
    wait_for(lambda: int(bridge.runtime.liveAdapters()) < live, "the Java subscriber ended by the cancel")
    root = arrow_sources(bridge).batch(0, 100)
    try:
        java.onNext(root)  # as the TCK's whitebox does after a cancel (§2.8)
    finally:
        root.close()
    gc.collect()
    assert int(bridge.runtime.arrowAllocatedBytes()) == 0
    assert probe.items == []


def test_roots_a_java_subscriber_never_received_are_closed(bridge: Bridge) -> None:
    import pyarrow

    batches = [pyarrow.record_batch({"id": list(range(100))}) for _ in range(20)]
    recording = bridge.jvm.io.github.rspy.bridge.testing.RecordingSubscriber(20, 0).failOn(1)
    bridge.to_jvm(rs.from_iterable(batches)).subscribe(recording)
    assert recording.awaitItems(1, int(WAIT * 1000))
    arrow_sources(bridge).firstColumnsAndClose(recording.items())  # the one it got is its own
    wait_for(lambda: int(bridge.runtime.arrowAllocatedBytes()) == 0, "the undelivered roots closed")
    wait_for(lambda: bridge.live_streams == 0, "the stream ended")


def test_arrow_bytes_the_jvm_cannot_read_fail_the_java_stream(
    bridge: Bridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow

    from reactive_streams.jvm import _to_jvm

    def cut_short(run: list[Any]) -> bytes:  # each batch's stream cut in half, its length kept true
        whole = encode_batches(run)
        half = whole[5 : 5 + (len(whole) - 5) // 2]
        return b"B" + len(half).to_bytes(4, "little") + half

    encode_batches = _to_jvm.encode_batches
    monkeypatch.setattr(_to_jvm, "encode_batches", cut_short)
    monkeypatch.setattr(bridge._host, "arrow_c_data", False)  # JPype too: as IPC bytes
    recording = bridge.jvm.io.github.rspy.bridge.testing.RecordingSubscriber(10, 0)
    bridge.to_jvm(rs.from_iterable([pyarrow.record_batch({"id": [1]})] * 3)).subscribe(recording)
    assert recording.awaitDone(int(WAIT * 1000))
    assert "cannot read Arrow batches from Python" in str(recording.errorMessage())
    assert int(recording.count()) == 0
    wait_for(lambda: bridge.live_streams == 0 and int(bridge.runtime.liveAdapters()) == 0, "both sides ended")
    assert int(bridge.runtime.arrowAllocatedBytes()) == 0


def test_c_data_structs_the_jvm_cannot_import_fail_the_java_stream(
    jpype_bridge: Bridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ctypes

    import pyarrow

    from reactive_streams.jvm import _to_jvm

    bridge = jpype_bridge
    assert bridge._host.arrow_c_data

    class Released(_to_jvm.ExportedBatches):  # structs already released: nothing to import
        def __init__(self, batches: list[Any]) -> None:
            self._structs = []
            self._memory = [ctypes.create_string_buffer(80) for _ in range(2 * len(batches))]
            self.addresses = [ctypes.addressof(memory) for memory in self._memory]

    monkeypatch.setattr(_to_jvm, "ExportedBatches", Released)
    recording = bridge.jvm.io.github.rspy.bridge.testing.RecordingSubscriber(10, 0)
    bridge.to_jvm(rs.from_iterable([pyarrow.record_batch({"id": [1]})] * 3)).subscribe(recording)
    assert recording.awaitDone(int(WAIT * 1000))
    assert "cannot import Arrow batches from Python" in str(recording.errorMessage())
    assert int(recording.count()) == 0
    wait_for(lambda: bridge.live_streams == 0 and int(bridge.runtime.liveAdapters()) == 0, "both sides ended")
    assert int(bridge.runtime.arrowAllocatedBytes()) == 0


def test_batches_cross_through_the_c_data_interface_in_process_and_as_bytes_elsewhere(bridge: Bridge) -> None:
    import pyarrow

    assert bridge._host.arrow_c_data == (bridge.backend == "jpype")
    pool = pyarrow.default_memory_pool()
    batches = [pyarrow.record_batch({"id": list(range(n, n + 1000))}) for n in range(0, 20_000, 1000)]
    held = pool.bytes_allocated()
    roots = collected(bridge, rs.from_iterable(batches))
    java_data = int(roots.get(3).getVector(0).getDataBuffer().memoryAddress())
    python_data = batches[3].column(0).buffers()[1].address
    assert (java_data == python_data) == bridge._host.arrow_c_data  # in process: shared, not copied
    values = [int(v) for v in arrow_sources(bridge).firstColumnsAndClose(roots)]
    assert values == list(range(20_000))
    assert int(bridge.runtime.arrowAllocatedBytes()) == 0
    del batches
    gc.collect()
    assert pool.bytes_allocated() <= held  # what Java held went back to pyarrow


def test_record_batches_round_trip_through_the_jvm_and_leave_nothing_behind(bridge: Bridge) -> None:
    import pyarrow

    batches = [
        pyarrow.record_batch({"id": list(range(n, n + 500)), "name": ["x"] * 500})
        for n in range(0, 10_000, 500)
    ]
    back = list(rs.iterate(bridge.from_jvm(bridge.to_jvm(rs.from_iterable(batches))), prefetch=4))
    assert [batch.to_pydict() for batch in back] == [batch.to_pydict() for batch in batches]
    del back
    gc.collect()
    wait_for(lambda: int(bridge.runtime.liveAdapters()) == 0, "both streams ended")
    # the roots the bridge made, it closed (the drain's thread may hold its last list a moment)
    wait_for(lambda: gc.collect() >= 0 and int(bridge.runtime.arrowAllocatedBytes()) == 0, "roots closed")


_RSS_ROUNDS = """
import gc, json, sys
import pyarrow
import reactive_streams as rs
from reactive_streams.jvm import Bridge

def rss(pid="self"):
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmRSS:"))

backend, jars = sys.argv[1], sys.argv[2:]
# One size, touched at start: neither a growing heap nor the first touch of its pages is RSS
# growth (without AlwaysPreTouch, G1 reaching pages the warm-up had not showed as 20-150 MiB).
heap = ["-Xms512m", "-Xmx512m", "-XX:+AlwaysPreTouch"]  # 256m ran out under load
if backend == "jpype":
    import jpype
    from reactive_streams.jvm import bridge_classpath
    from reactive_streams.jvm._jars import ARROW_JVM_OPTIONS, arrow_classpath

    jpype.startJVM(*ARROW_JVM_OPTIONS, *heap, classpath=[*bridge_classpath(), *arrow_classpath(), *jars])
    bridge = Bridge.jpype(jars)
else:
    bridge = Bridge.py4j(jars, jvm_options=heap)
arrow = bridge.jvm.io.github.rspy.bridge.testing.ArrowSources
pids = ["self"] + ([bridge.jvm_process.pid] if bridge.jvm_process is not None else [])
python_batches = [pyarrow.record_batch({"id": list(range(1000)), "name": ["x" * 12] * 1000})] * 100

def round_of(batches):
    received = rs.iterate(bridge.from_jvm(arrow.sameRoot(batches, 1000)), prefetch=16)
    assert sum(batch.num_rows for batch in received) == batches * 1000  # each dropped once counted
    for _ in range(batches // 100):
        assert int(arrow.countRowsAndClose(bridge.to_jvm(rs.from_iterable(python_batches)))) == 100_000
    gc.collect()

round_of(15_000)  # warm-up: the JVM sizes its heap, the allocators their arenas
settled = [rss(pid) for pid in pids]
round_of(10_000)
growth = [rss(pid) - before for pid, before in zip(pids, settled)]
print(json.dumps({"growth": growth, "allocated": int(bridge.runtime.arrowAllocatedBytes())}))
bridge.close()
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="RSS is read from /proc")
@pytest.mark.parametrize("backend", ["jpype", "py4j"])
@pytest.mark.timeout(600)
def test_ten_thousand_arrow_batches_each_way_keep_rss_flat(backend: str, test_jars: list[str]) -> None:
    """In a process of its own, as a user's would be, with a JVM heap of one size (a heap
    that grows is not a leak), after a warm-up long enough for the allocators to reach their
    high-water marks (glibc keeps a thread's arena at its peak; Netty its pooled chunks)."""
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", _RSS_ROUNDS, backend, *test_jars],
        capture_output=True,
        text=True,
        timeout=540,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    measured = json.loads(result.stdout.strip().splitlines()[-1])
    assert measured["allocated"] == 0
    growth = measured["growth"]  # Python's (with JPype's JVM) and the Py4J JVM's, in MiB
    assert all(mib < 48 for mib in growth), f"RSS grew by {growth} MiB over 10^4 batches each way"
