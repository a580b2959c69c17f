"""`jvm_publisher` on a classic session: a publisher registered by name in the driver's JVM
(the same test streams as the Connect tests), through the session's bridge."""

from __future__ import annotations

from typing import Any

import pytest

import reactive_streams as rs
from reactive_streams import spark as rss
from reactive_streams.jvm import JvmValueError

from ..support import Probe
from .connect_kit import SPARK_TESTING


@pytest.fixture(scope="module")
def streams(spark_session: Any) -> Any:
    testing = spark_session.sparkContext._jvm
    for part in SPARK_TESTING.split("."):
        testing = getattr(testing, part)
    testing.register()
    return spark_session


def test_a_registered_publisher_and_a_factory_by_name(streams: Any) -> None:
    assert list(rss.jvm_publisher(streams, "longs", "1000").iterate()) == list(range(1000))
    assert list(rss.jvm_publisher(streams, "values").iterate()) == ["a", 1.5, True, [None, 2], 7]


def test_demand_reaches_the_jvm_publisher(streams: Any) -> None:
    probe = Probe(initial=3)
    rss.jvm_publisher(streams, "longs").subscribe(probe)
    probe.await_items(3)
    probe.request(4)
    probe.await_items(7)
    assert probe.items == list(range(7))
    probe.cancel()
    probe.assert_rules_held()


def test_an_unknown_name_is_on_error_listing_the_names(streams: Any) -> None:
    probe = Probe(initial=1)
    rss.jvm_publisher(streams, "no-such-stream").subscribe(probe)
    probe.await_done()
    assert isinstance(probe.error, JvmValueError)
    assert "no-such-stream" in str(probe.error) and "longs" in str(probe.error)


def test_a_failing_publisher_is_on_error(streams: Any) -> None:
    probe = Probe(initial=1)
    rss.jvm_publisher(streams, "failing").subscribe(probe)
    probe.await_done()
    assert isinstance(probe.error, rs.JvmError) and probe.error.java_message == "failing on purpose"


def test_bad_arguments_are_refused_at_once(streams: Any) -> None:
    with pytest.raises(TypeError, match="name"):
        rss.jvm_publisher(streams, "")
    with pytest.raises(TypeError, match="arg"):
        rss.jvm_publisher(streams, "longs", 5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="SparkSession"):
        rss.jvm_publisher(object(), "longs")
