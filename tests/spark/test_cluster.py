"""The Spark connectors on a real multi-JVM cluster, ``local-cluster[2,1,1024]``, in a child
process of their own (cluster_script.py): the rows of ``dataframe_from_publisher`` read by
executors from the driver's block manager, the source's rows read by executor tasks, and the
sink's rows, written by executors, delivered on the driver with their epochs; and the
partitioned source, sink and processor run in the executors, surviving a killed Python worker
and a killed executor."""

from __future__ import annotations

import pytest

from ..conftest import TEST_JARS
from .kit import run_script


@pytest.mark.timeout(660)
def test_the_connectors_on_a_local_cluster() -> None:
    outcome, _ = run_script("cluster_script.py", TEST_JARS, timeout=600)

    assert outcome["block_managers"] == 3  # the driver's and two executors'
    df = outcome["dataframe"]
    assert df["count"] == 100_000 and df["sum"] == 100_000 * 99_999 // 2 and df["partitions"] >= 3
    assert df["jvms"] and df["driver"] not in df["jvms"]  # executor JVMs read the driver's blocks
    source = outcome["source"]
    sizes = source.pop("batch_sizes")
    assert source == {"rows": 50_000, "sum": 50_000 * 49_999 // 2, "names": 50_000}
    # maxRecordsPerTrigger bounds each batch; a batch may also end when the publisher pauses (a
    # busy machine: the source takes what is ready after 100 ms), so there may be more than five
    assert sum(sizes) == 50_000 and max(sizes) <= 10_000 and len(sizes) >= 5, sizes
    assert outcome["arrow_source"] == {"rows": 50_000, "sum": 50_000 * 49_999 // 2, "columnar": True}
    assert outcome["sink"] == outcome["arrow_sink"] == {"values": True, "epochs": True}
    assert outcome["sink_rows_in_memory"] == 0  # the local-mode handover stays out of a cluster's way
    # Partitioned, in the executors' Python workers: a worker and an executor killed mid-batch,
    # their tasks retried, every element in the Parquet files exactly once; none made here.
    source = outcome["partitioned_source"]
    assert source["killed"] == ["executor", "worker"]
    assert source["rows"] == source["distinct"] == 3_600  # 1,000 a partition, then 200 more
    # Read in Python workers, none the driver: how many is the scheduler's (a reused worker may
    # commit every task, the killed ones' rows never being committed; CI saw one pid, once).
    assert source["driver_made"] == 0 and source["pids"] >= 1 and source["exact_demand"]
    assert source["restarts_at"] == [1_000]  # the second run began at the committed offsets
    assert outcome["partitioned_failure"] == {"named": True, "active": 0}
    sink = outcome["partitioned_sink"]
    assert sink["streamed"] == {"count": 1_000, "sum": 2 * 2 * sum(range(500))}  # from a stream, per batch
    del sink["streamed"]
    assert sink == {"count": 10_000, "sum": 2 * sum(range(10_000)), "tasks": 4, "driver_made": 0}
    # A JVM factory's partitions, made in the executors' JVMs, not the driver's
    jvm = outcome["jvm_partitioned"]
    assert jvm["rows"] == jvm["distinct"] == 3_000 and not jvm["in_driver_jvm"] and jvm["jvms"] >= 1
