"""`Bridge.spark`: a bridge inside PySpark's own gateway, its life tied to its SparkContext's.

It needs PySpark (imported when called) and the Spark connectors' jar on the driver, never
``reactive_streams.spark``: that package builds on this one, not the other way round.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from .._errors import ReactiveStreamsError
from .._rules import describe

__all__ = ["driver_gateway", "watch_spark_context"]

logger = logging.getLogger("reactive_streams.jvm")


def driver_gateway(spark: Any) -> Any:
    """The Py4J gateway of ``spark``'s driver, its callback server started.

    Raises:
        TypeError: ``spark`` is not a SparkSession.
        ReactiveStreamsError: a Spark Connect session (no JVM gateway).
    """
    if type(spark).__module__.startswith("pyspark.sql.connect"):
        raise ReactiveStreamsError(
            "Bridge.spark() needs a classic SparkSession with a JVM gateway, and a Spark Connect "
            "session has none: on Connect, reactive_streams.spark's functions (jvm_publisher, "
            "publisher_from_dataframe, register_publisher, ...) work through its server plugin; see "
            "docs/spark.md, Spark Connect"
        )
    from pyspark.sql import SparkSession

    if not isinstance(spark, SparkSession):
        raise TypeError(f"Bridge.spark() needs a pyspark.sql.SparkSession, got {describe(spark)}")
    gateway = getattr(getattr(spark, "_sc", None), "_gateway", None)
    if gateway is None:
        raise ReactiveStreamsError(
            "Bridge.spark() needs a classic SparkSession with a JVM gateway; this session has none. "
            "Use Bridge.py4j() or Bridge.jpype() for a JVM of your own, or a classic SparkSession"
        )
    from pyspark.java_gateway import ensure_callback_server_started

    ensure_callback_server_started(gateway)  # type: ignore[no-untyped-call]
    return gateway


def watch_spark_context(runtime: Any, spark: Any) -> Callable[[], None] | None:
    """When ``spark``'s SparkContext stops, close ``runtime`` (a bridge's ``BridgeRuntime``)
    with that reason: the bridge's close listener hears it and ends its streams. Returns what
    removes the listener again; None if the Spark connectors' jar is not on the classpath."""
    lifecycle = spark.sparkContext._jvm.io.github.rspy.spark.common.SparkLifecycle
    try:
        watch = lifecycle.watch(runtime, spark._jsc.sc())
    except Exception:  # the Spark connectors' jar is not on the classpath
        logger.debug("the SparkContext's stop will not end this bridge's streams", exc_info=True)
        return None

    def stop_watching() -> None:
        try:
            watch.close()
        except Exception:  # the SparkContext or its JVM is gone: nothing is registered any more
            logger.debug("removing the SparkContext listener failed", exc_info=True)

    return stop_watching
