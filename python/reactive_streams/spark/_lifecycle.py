"""A Spark bridge's life tied to its SparkContext's."""

from __future__ import annotations

import logging
from typing import Any

from ..jvm import Bridge

__all__ = ["end_with_spark_context"]

logger = logging.getLogger("reactive_streams.spark")


def end_with_spark_context(bridge: Bridge, spark: Any) -> None:
    """When ``spark``'s SparkContext stops, end ``bridge``'s streams with
    ``on_error(BridgeClosedError)`` (the JVM lives on: PySpark keeps its gateway); closing the
    bridge first removes the SparkContext listener again.

    Java's ``SparkLifecycle.watch`` closes the bridge's runtime with a reason, which the
    bridge's close listener hears. Without the Spark connectors' jar there is nothing to watch:
    the bridge then ends only when closed.
    """
    lifecycle = bridge.jvm.io.github.rspy.spark.SparkLifecycle
    try:
        watch = lifecycle.watch(bridge.runtime, spark._jsc.sc())
    except Exception:  # the Spark connectors' jar is not on the classpath
        logger.debug("the SparkContext's stop will not end this bridge's streams", exc_info=True)
        return

    def stop_watching() -> None:
        try:
            watch.close()
        except Exception:  # the SparkContext or its JVM is gone: nothing is registered any more
            logger.debug("removing the SparkContext listener failed", exc_info=True)

    bridge.on_close(stop_watching)
