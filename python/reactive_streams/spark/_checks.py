"""Argument checks shared by the Spark functions: a classic SparkSession or DataFrame, told
apart from a Spark Connect one (which has no JVM gateway) and from anything else."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._errors import ReactiveStreamsError
from .._rules import describe
from ..jvm import require_library_jars

__all__ = [
    "is_connect",
    "iterable_hint",
    "require_classic_session",
    "require_java_dataframe",
    "require_library_jars",
]

_CONNECT = "pyspark.sql.connect"


def is_connect(value: object) -> bool:
    """Whether ``value`` is a Spark Connect SparkSession or DataFrame (no JVM gateway)."""
    return type(value).__module__.startswith(_CONNECT)


def require_classic_session(spark: object, caller: str) -> None:
    """Raise unless ``spark`` is a classic ``pyspark.sql.SparkSession``.

    Raises:
        ReactiveStreamsError: ``spark`` is a Spark Connect session.
        TypeError: ``spark`` is not a SparkSession at all.
    """
    if is_connect(spark):
        raise ReactiveStreamsError(
            f"{caller} needs a classic SparkSession with a JVM gateway; this is a Spark Connect session "
            "(Spark Connect sessions have no _jvm). On Spark Connect, use reactive_streams.spark's "
            "jvm_publisher(spark, name), publisher_from_dataframe(df), arrow_batches_from_dataframe(df) and "
            "dataframe_from_publisher(spark, publisher, schema), which work through the server plugin "
            "(python -m reactive_streams.spark.connect_server); for a bridge, use a classic SparkSession "
            "built with reactive_streams.spark.configure(SparkSession.builder), or Bridge.py4j() or "
            "Bridge.jpype()"
        )
    from pyspark.sql import SparkSession

    if not isinstance(spark, SparkSession):
        raise TypeError(f"{caller} needs a pyspark.sql.SparkSession, got {describe(spark)}")


def require_java_dataframe(df: object, caller: str) -> Any:
    """The JVM side (``_jdf``) of a classic ``pyspark.sql.DataFrame``.

    Raises:
        ReactiveStreamsError: ``df`` is a Spark Connect DataFrame.
        TypeError: ``df`` is not a DataFrame at all.
    """
    if is_connect(df):
        raise ReactiveStreamsError(
            f"{caller} got a Spark Connect DataFrame, which has no JVM side: the Spark interop needs "
            "a DataFrame of a classic SparkSession"
        )
    from pyspark.sql import DataFrame

    jdf = getattr(df, "_jdf", None) if isinstance(df, DataFrame) else None
    if jdf is None:
        raise TypeError(f"{caller} expects a pyspark.sql.DataFrame, got {describe(df)}")
    return jdf


def iterable_hint(value: object) -> str:
    """What to say when a list (or another iterable) is given where a publisher belongs."""
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        return "; for the elements of a list or another iterable, pass rs.from_iterable([...])"
    return ""
