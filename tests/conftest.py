"""Session-wide JVM fixtures: one SparkSession, one standalone Py4J JVM and JPype's in-process
JVM, shared by every test that needs them (starting a JVM costs seconds)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
TEST_JARS = sorted(str(p) for p in (ROOT / "build" / "test-jars").glob("*.jar"))
BACKENDS = ["spark", "py4j", "jpype"]


@pytest.fixture(scope="session")
def test_jars() -> list[str]:
    if not TEST_JARS:
        pytest.fail("build/test-jars is empty: run `gradle pythonJars` (./run-tests does)")
    return TEST_JARS


@pytest.fixture(scope="session")
def spark_session() -> Iterator[Any]:
    from pyspark.sql import SparkSession

    from reactive_streams import spark as rss

    spark = (
        rss.configure(SparkSession.builder.master("local[2]"), TEST_JARS)
        .appName("reactive-streams-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    yield spark
    spark.stop()


@pytest.fixture(scope="session")
def spark_bridge(spark_session: Any) -> Iterator[Any]:
    from reactive_streams.jvm import Bridge

    with Bridge.spark(spark_session) as bridge:
        yield bridge


@pytest.fixture(scope="session")
def py4j_bridge(test_jars: list[str]) -> Iterator[Any]:
    from reactive_streams.jvm import Bridge

    with Bridge.py4j(test_jars) as bridge:
        yield bridge


@pytest.fixture(scope="session")
def jpype_bridge(test_jars: list[str]) -> Iterator[Any]:
    from reactive_streams.jvm import Bridge

    with Bridge.jpype(test_jars) as bridge:
        yield bridge


@pytest.fixture(params=BACKENDS)
def bridge(request: pytest.FixtureRequest) -> Any:
    """The session's bridge on each backend in turn."""
    return request.getfixturevalue(f"{request.param}_bridge")


@pytest.fixture(scope="session")
def pekko() -> Iterator[Any]:
    """``pekko(bridge)``: one Pekko ActorSystem per JVM, terminated at the end of the session."""
    systems: dict[int, Any] = {}

    def system_for(bridge: Any) -> Any:
        key = id(bridge)
        if key not in systems:
            systems[key] = bridge.jvm.org.apache.pekko.actor.ActorSystem.create("tests")
        return systems[key]

    yield system_for
    for system in systems.values():
        try:
            system.terminate()
        except Exception:
            pass
