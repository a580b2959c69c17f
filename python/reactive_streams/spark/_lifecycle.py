"""A Spark bridge's life tied to its SparkContext's. `Bridge.spark` calls it; it needs nothing
of the bridge but its Java ``BridgeRuntime``, so it imports nothing of ``reactive_streams.jvm``."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

__all__ = ["watch_spark_context"]

logger = logging.getLogger("reactive_streams.spark")


def watch_spark_context(runtime: Any, spark: Any) -> Callable[[], None] | None:
    """When ``spark``'s SparkContext stops, close ``runtime`` (a bridge's ``BridgeRuntime``) with
    that reason: the bridge's close listener hears it and ends its streams with
    ``on_error(BridgeClosedError)`` (the JVM lives on: PySpark keeps its gateway).

    Returns:
        what removes the SparkContext listener again, for ``bridge.on_close``; None if the
        Spark connectors' jar is not on the driver's classpath (nothing is watched then).
    """
    lifecycle = spark.sparkContext._jvm.io.github.rspy.spark.SparkLifecycle
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
