"""One bridge per SparkSession, shared by every function of ``reactive_streams.spark``."""

from __future__ import annotations

import threading
import weakref
from typing import Any

from ..jvm import Bridge, BridgeSettings
from ._checks import require_classic_session, require_library_jars

__all__ = ["bridge", "new_bridge"]

_lock = threading.Lock()
_bridges: weakref.WeakKeyDictionary[Any, Bridge] = weakref.WeakKeyDictionary()


def bridge(spark: Any) -> Bridge:
    """The bridge that ``spark``'s streams and conversions share, made on first use.

    Every ``reactive_streams.spark`` function uses it, so a job that converts a publisher per
    batch adds no threads, sockets or listeners. It closes when the session's SparkContext
    stops (ending its live streams with ``on_error(BridgeClosedError)``); the next call then
    makes a new one. Closing it yourself ends the streams that use it, the same way.

    Args:
        spark: a classic SparkSession built with ``reactive_streams.spark.configure``.

    Raises:
        TypeError: ``spark`` is not a SparkSession.
        ReactiveStreamsError: the session has no JVM gateway (Spark Connect), or the bridge's
            jars are not on the driver's classpath.
    """
    require_classic_session(spark, "reactive_streams.spark")  # before it is used as a weak key
    require_library_jars(spark, "reactive_streams.spark.bridge()")
    with _lock:
        shared = _bridges.get(spark)
        if shared is None or shared.closed:
            shared = Bridge.spark(spark)
            _bridges[spark] = shared
        return shared


def new_bridge(spark: Any, settings: BridgeSettings | None = None) -> Bridge:
    """A new bridge inside ``spark``'s driver gateway, with ``settings`` (`Bridge.spark`); most
    code wants the session's shared one, `bridge`. When the SparkContext stops, the bridge's
    streams end with ``on_error(BridgeClosedError)``; the gateway stays PySpark's.

    Raises:
        TypeError: ``spark`` is not a SparkSession.
        ReactiveStreamsError: a Spark Connect session (no JVM gateway), or the bridge's jars
            are not on the driver's classpath.
    """
    chosen = settings if settings is not None else BridgeSettings()
    return Bridge.spark(
        spark,
        max_batch=chosen.max_batch,
        demand_window=chosen.demand_window,
        threads=chosen.threads,
        data_channel=chosen.data_channel,
        linger=chosen.linger,
    )
