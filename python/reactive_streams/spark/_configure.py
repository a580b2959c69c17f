"""`configure`: puts the bridge's jars on a SparkSession's classpath, as delta-spark's helper does."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..jvm._jars import bridge_classpath, spark_connector_jars

__all__ = ["configure", "spark_classpath"]

_VERSION = re.compile(r"[-_]\d[\w.\-]*\.jar$")


def _artifact(jar: str) -> str:
    """``scala-library-2.13.14.jar`` -> ``scala-library``."""
    return _VERSION.sub("", Path(jar).name)


def spark_classpath(extra_jars: Iterable[str] = ()) -> list[str]:
    """The bridge's jars and ``extra_jars``, less the artifacts Spark already ships (Spark's own
    copy wins: its Scala library, SLF4J, Pyrolite) and duplicates by artifact."""
    try:
        import pyspark
    except ImportError:
        spark_jars: set[str] = set()
    else:
        spark_jars = {_artifact(str(j)) for j in (Path(pyspark.__file__).parent / "jars").glob("*.jar")}
    chosen: list[str] = []
    seen = set(spark_jars)
    for jar in [*bridge_classpath(), *spark_connector_jars(), *extra_jars]:
        name = _artifact(jar)
        if name not in seen:
            seen.add(name)
            chosen.append(str(jar))
    return chosen


def configure(builder: Any, extra_jars: Iterable[str] = ()) -> Any:
    """Add the bridge's jars (and ``extra_jars``: Reactor, Pekko, your own) to ``spark.jars`` of
    a ``SparkSession.Builder``, keeping jars already set there; returns the builder.

    Call it before ``getOrCreate()``: the jars join the driver's classpath when the JVM starts.
    """
    current = [j for j in str(builder._options.get("spark.jars", "")).split(",") if j]
    jars = [*current, *(j for j in spark_classpath(extra_jars) if j not in current)]
    return builder.config("spark.jars", ",".join(jars))
