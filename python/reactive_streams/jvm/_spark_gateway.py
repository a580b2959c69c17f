"""`Bridge.spark`: a bridge inside PySpark's own gateway, its life tied to its SparkContext's.

It needs PySpark (imported when called) and the Spark connectors' jar on the driver, never
``reactive_streams.spark``: that package builds on this one, not the other way round.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable
from pathlib import PurePath
from typing import Any

from .._errors import ReactiveStreamsError
from .._rules import describe
from ._jars import BRIDGE_CLASS

__all__ = ["driver_gateway", "require_library_jars", "watch_spark_context"]

logger = logging.getLogger("reactive_streams.jvm")

#: A class of each of the library's jars that a Spark driver needs: the bridge's, and the Spark
#: connectors' (DataFrames, the "reactive-streams" format, the Connect plugins).
_LIBRARY_CLASSES = (BRIDGE_CLASS, "io.github.rspy.spark.common.SparkLifecycle")
#: Their jars' file names, as `configure` puts them in ``spark.jars``.
_LIBRARY_JARS = frozenset({"reactive-streams-py-bridge.jar", "reactive-streams-py-spark.jar"})
#: The SparkContexts whose JVM has them (a Py4J round trip a check, made once per context).
_verified: weakref.WeakSet[Any] = weakref.WeakSet()


def require_library_jars(spark: Any, caller: str) -> None:
    """Raise, saying what to do, unless the JVM behind ``spark`` (a classic SparkSession) can
    load the library's jars: the session was built without `reactive_streams.spark.configure`,
    or with it but in a Python process whose JVM an earlier session had already started.

    Raises:
        ReactiveStreamsError: the jars are not on the driver's classpath (the message says
            whether the session must be built with ``configure`` or the process started again).
    """
    from py4j.java_gateway import JavaClass

    context = spark.sparkContext
    if context in _verified:
        return
    missing = []
    for name in _LIBRARY_CLASSES:
        found = context._jvm
        for part in name.split("."):
            found = getattr(found, part)
        if not isinstance(found, JavaClass):
            missing.append(name)
    if not missing:
        _verified.add(context)
        return
    listed = (context.getConf().get("spark.jars") or "").split(",")
    configured = bool(_LIBRARY_JARS & {PurePath(jar).name for jar in listed})
    format_too = (
        'Without them Spark cannot find the "reactive-streams" format either: '
        'spark.readStream.format("reactive-streams") fails with [DATA_SOURCE_NOT_FOUND].'
    )
    if configured:
        raise ReactiveStreamsError(
            f"{caller} needs the reactive-streams jars on the Spark driver's classpath. This session "
            "was built with reactive_streams.spark.configure(), but its JVM had started earlier in "
            "this Python process without them: PySpark keeps one JVM a process, a session stopped and "
            "built again reuses it, and a JVM cannot add jars to its classpath once it runs. Start the "
            "Python process again, and build its first SparkSession with "
            f"reactive_streams.spark.configure(SparkSession.builder). {format_too}"
        )
    raise ReactiveStreamsError(
        f"{caller} needs the reactive-streams jars on the Spark driver's classpath, and this "
        "session's JVM has none: build the session with "
        "reactive_streams.spark.configure(SparkSession.builder), before the process's first "
        f"SparkSession starts its JVM. {format_too}"
    )


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
    require_library_jars(spark, "Bridge.spark()")
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
