"""A bridge inside PySpark's own gateway, its life tied to its SparkContext's."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from .._errors import ReactiveStreamsError
from ..jvm import Bridge, BridgeSettings
from ._checks import require_classic_session

__all__ = ["new_bridge"]

logger = logging.getLogger("reactive_streams.spark")


def new_bridge(spark: Any, settings: BridgeSettings | None = None) -> Bridge:
    """A new bridge inside ``spark``'s driver gateway (`Bridge.spark` is this); most code wants
    the session's shared one, `reactive_streams.spark.bridge`. When the SparkContext stops, the
    bridge's streams end with ``on_error(BridgeClosedError)``; the gateway stays PySpark's.

    Raises:
        TypeError: ``spark`` is not a SparkSession.
        ReactiveStreamsError: a Spark Connect session (no JVM gateway), or the bridge's jars
            are not on the driver's classpath.
    """
    require_classic_session(spark, "Bridge.spark()")
    gateway = getattr(getattr(spark, "_sc", None), "_gateway", None)
    if gateway is None:
        raise ReactiveStreamsError(
            "Bridge.spark() needs a classic SparkSession with a JVM gateway; this session has none. "
            "Use Bridge.py4j() or Bridge.jpype() for a JVM of your own, or a classic SparkSession"
        )
    from pyspark.java_gateway import ensure_callback_server_started

    ensure_callback_server_started(gateway)  # type: ignore[no-untyped-call]
    bridge = Bridge.py4j_gateway(gateway, settings, name="spark")
    stop_watching = _watch_spark_context(bridge.runtime, spark)
    if stop_watching is not None:
        bridge.on_close(stop_watching)
    return bridge


def _watch_spark_context(runtime: Any, spark: Any) -> Callable[[], None] | None:
    """When ``spark``'s SparkContext stops, close ``runtime`` (a bridge's ``BridgeRuntime``)
    with that reason: the bridge's close listener hears it and ends its streams. Returns what
    removes the listener again; None if the Spark connectors' jar is not on the classpath."""
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
