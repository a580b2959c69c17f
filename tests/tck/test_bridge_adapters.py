"""The TCK judges the bridge's adapters: a JVM publisher seen from Python and handed back
(``to_jvm(from_jvm(...))``), on every backend, and the Flow variants."""

from __future__ import annotations

from typing import Any

import reactive_streams as rs
from reactive_streams.tck import (
    FlowPublisherVerification,
    PublisherVerification,
    SubscriberWhiteboxVerification,
    WhiteboxProbe,
)

from .test_core_publishers import failed, source
from .test_core_subscribers import Keep


class _JvmHandedBack(PublisherVerification):
    """A Reactor Flux, seen from Python (from_jvm), through a Python operator, handed back to
    the JVM (to_jvm): both adapters and a Python stage between them."""

    def create_publisher(self, elements: int) -> rs.Publisher[Any]:
        longs = self.bridge.jvm.io.github.rspy.bridge.testing.Sources.longRange(elements)
        return self.bridge.from_jvm(longs).map(lambda x: x)

    def create_failed_publisher(self) -> rs.Publisher[Any]:
        jvm = self.bridge.jvm
        error = jvm.java.lang.IllegalStateException("failed JVM publisher")
        return self.bridge.from_jvm(jvm.reactor.core.publisher.Flux.error(error))


class TestJvmPublisherHandedBackOnJPype(_JvmHandedBack):
    backend = "jpype"


class TestJvmPublisherHandedBackOnPy4J(_JvmHandedBack):
    backend = "py4j"


class TestJvmPublisherHandedBackOnSpark(_JvmHandedBack):
    backend = "spark"


class _JvmRecordsHandedBack(_JvmHandedBack):
    """As `_JvmHandedBack`, of Java records: every batch crosses as Arrow, as dicts."""

    def create_publisher(self, elements: int) -> rs.Publisher[Any]:
        records = self.bridge.jvm.io.github.rspy.bridge.testing.RowSources.pointRange(elements)
        return self.bridge.from_jvm(records).map(lambda x: x)


class TestJvmRecordsHandedBackOnJPype(_JvmRecordsHandedBack):
    backend = "jpype"


class TestJvmRecordsHandedBackOnPy4J(_JvmRecordsHandedBack):
    backend = "py4j"


class TestJvmRecordsHandedBackOnSpark(_JvmRecordsHandedBack):
    backend = "spark"


class _JvmRowsOfASchemaHandedBack(_JvmHandedBack):
    """As tests/tck/test_arrow_paths.py's `_JvmRowsHandedBack` (``Object[]`` rows: the three
    optional multicast tests skip), with a schema: every batch crosses as Arrow of its types."""

    def create_publisher(self, elements: int) -> rs.Publisher[Any]:
        import pyarrow as pa

        rows = self.bridge.jvm.io.github.rspy.bridge.testing.Sources.rowRange(elements)
        schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string())])
        return self.bridge.from_jvm(rows, schema=schema).map(lambda x: x)


class TestJvmRowsOfASchemaHandedBackOnJPype(_JvmRowsOfASchemaHandedBack):
    backend = "jpype"


class TestJvmRowsOfASchemaHandedBackOnPy4J(_JvmRowsOfASchemaHandedBack):
    backend = "py4j"


class TestJvmRowsOfASchemaHandedBackOnSpark(_JvmRowsOfASchemaHandedBack):
    backend = "spark"


class TestPythonPublisherOnPy4J(PublisherVerification):
    backend = "py4j"

    def create_publisher(self, elements: int) -> rs.Publisher[Any]:
        return rs.from_iterable(source(elements))

    def create_failed_publisher(self) -> rs.Publisher[Any]:
        return failed()


class TestPythonSubscriberOnSpark(SubscriberWhiteboxVerification):
    backend = "spark"

    def create_subscriber(self, probe: WhiteboxProbe) -> rs.Subscriber[Any]:
        return probe.wrap(Keep(batch=4))


class TestFlowPublisher(FlowPublisherVerification):
    def create_publisher(self, elements: int) -> rs.Publisher[Any]:
        return rs.from_iterable(source(elements))

    def create_failed_publisher(self) -> rs.Publisher[Any]:
        return failed()
