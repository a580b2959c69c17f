"""The jars the package carries (`_jars`): Arrow Java, in PySpark 4's version, on the classpath of
the JVMs the bridge starts (standalone and JPype; Spark's driver has its own)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reactive_streams.jvm import Bridge
from reactive_streams.jvm._jars import arrow_classpath

ARROW_VERSION = "19.0.0"


def test_the_package_carries_arrow_java_with_its_c_data_interface() -> None:
    names = {Path(jar).name for jar in arrow_classpath()}
    assert {f"arrow-vector-{ARROW_VERSION}.jar", f"arrow-c-data-{ARROW_VERSION}.jar"} <= names


def test_arrow_java_is_the_version_pyspark_carries() -> None:
    pyspark = pytest.importorskip("pyspark")
    spark_jars = {p.name for p in (Path(pyspark.__file__).parent / "jars").glob("arrow-vector-*.jar")}
    assert spark_jars == {f"arrow-vector-{ARROW_VERSION}.jar"}


@pytest.fixture(params=["py4j", "jpype"])
def started_bridge(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue(f"{request.param}_bridge")


def test_arrow_vectors_work_in_the_jvms_the_bridge_starts(started_bridge: Bridge) -> None:
    arrow = started_bridge.jvm.org.apache.arrow
    allocator = arrow.memory.RootAllocator()
    try:
        vector = arrow.vector.BigIntVector("n", allocator)
        vector.allocateNew(1000)  # direct memory: needs java.nio opened to Arrow
        for index in range(10):
            vector.set(index, index * 3)
        vector.setValueCount(10)
        assert [int(vector.get(index)) for index in range(10)] == [index * 3 for index in range(10)]
        assert int(allocator.getAllocatedMemory()) > 0
        vector.close()
        assert int(allocator.getAllocatedMemory()) == 0
    finally:
        allocator.close()


def test_jpype_hands_pyarrow_a_jvm_batch_through_the_c_data_interface(jpype_bridge: Bridge) -> None:
    pyarrow = pytest.importorskip("pyarrow")
    arrow = jpype_bridge.jvm.org.apache.arrow
    allocator = arrow.memory.RootAllocator()
    try:
        vector = arrow.vector.BigIntVector("n", allocator)
        vector.allocateNew(4)
        for index in range(4):
            vector.set(index, 10 + index)
        vector.setValueCount(4)
        root = arrow.vector.VectorSchemaRoot.of(vector)
        array = arrow.c.ArrowArray.allocateNew(allocator)
        schema = arrow.c.ArrowSchema.allocateNew(allocator)
        arrow.c.Data.exportVectorSchemaRoot(allocator, root, None, array, schema)
        batch = pyarrow.RecordBatch._import_from_c(int(array.memoryAddress()), int(schema.memoryAddress()))
        array.close()
        schema.close()
        root.close()
        assert batch.to_pydict() == {"n": [10, 11, 12, 13]}
        assert int(allocator.getAllocatedMemory()) > 0  # pyarrow holds the JVM's buffers: no copy
        del batch
        assert int(allocator.getAllocatedMemory()) == 0  # and gives them back when it lets go
    finally:
        allocator.close()
