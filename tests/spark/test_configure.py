"""rss.configure: the bridge jars on spark.jars, without Spark's own artifacts twice."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession

from reactive_streams import spark as rss
from reactive_streams.jvm import bridge_classpath

from ..conftest import TEST_JARS


def names(jars: list[str]) -> set[str]:
    return {Path(j).name for j in jars}


def test_spark_classpath_has_the_bridge_and_not_what_spark_ships() -> None:
    jars = rss.spark_classpath(TEST_JARS)
    assert "reactive-streams-py-bridge.jar" in names(jars)
    assert not any(n.startswith(("scala-library", "slf4j-api", "slf4j-nop", "pickle-")) for n in names(jars))
    assert len(names(jars)) == len(jars)  # no artifact twice
    assert set(bridge_classpath()) - {j for j in bridge_classpath() if "pickle" in j} <= set(jars)


def test_configure_keeps_jars_already_set() -> None:
    builder = SparkSession.Builder().config("spark.jars", "/opt/mine.jar")
    configured = rss.configure(builder)
    jars = configured._options["spark.jars"].split(",")
    assert jars[0] == "/opt/mine.jar" and "reactive-streams-py-bridge.jar" in names(jars)
