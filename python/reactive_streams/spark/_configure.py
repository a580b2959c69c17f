"""`configure`: puts the bridge's jars on a SparkSession's classpath, as delta-spark's helper does."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .._errors import ReactiveStreamsError
from .._rules import describe
from ..jvm import ClasspathLike, bridge_classpath, classpath_entries

__all__ = ["LOCAL_CHECKPOINTS", "configure", "spark_classpath", "spark_connector_jars"]

LOCAL_CHECKPOINTS = "io.github.rspy.spark.LocalCheckpointFileManager"
"""The checkpoint manager `configure(..., fast_local_checkpoints=True)` sets: local (``file:``)
checkpoints written without Hadoop's child processes; other file systems as Spark does."""
_CHECKPOINT_MANAGER = "spark.sql.streaming.checkpointFileManagerClass"

_VERSION = re.compile(r"[-_]\d[\w.\-]*\.jar$")
#: Artifacts kept off a driver's classpath although Spark does not ship them: Spark logs through
#: its own SLF4J binding, and the TCK's no-op one (for the JVMs the bridge starts) must not compete.
_NOT_FOR_SPARK = frozenset({"slf4j-nop"})
_CONNECTOR_JARS = Path(__file__).resolve().parent.parent / "_jars" / "spark"  # the wheel carries them


def _artifact(jar: str) -> str:
    """``scala-library-2.13.14.jar`` -> ``scala-library``."""
    return _VERSION.sub("", Path(jar).name)


def spark_connector_jars() -> list[str]:
    """The Spark connectors' jar (DataFrame and streaming support), built against PySpark's
    jars; it belongs on a Spark driver's classpath only (`configure` puts it there)."""
    jars = sorted(str(p) for p in _CONNECTOR_JARS.glob("*.jar"))
    if not jars:
        raise ReactiveStreamsError(
            f"the Spark connectors jar is missing from {_CONNECTOR_JARS}; build it with "
            "`gradle -PsparkJars=<pyspark>/jars pythonJars` (./run-tests and ./run-demo do it)"
        )
    return jars


def spark_classpath(extra_jars: ClasspathLike = ()) -> list[str]:
    """The bridge's jars and ``extra_jars``, less the artifacts Spark already ships (Spark's own
    copy wins: its Scala library, SLF4J, Pyrolite), the TCK's SLF4J no-op binding, and duplicates
    by artifact.

    ``extra_jars`` is a jar, a folder (its jars), a glob pattern (``libs/*.jar``), or a list of
    them; each is checked now (it exists, it is a readable jar), so a bad one fails here rather
    than when the SparkContext starts, or later, as missing classes.

    Raises:
        TypeError: ``extra_jars`` is neither a path nor a list of paths.
        ReactiveStreamsError: an entry does not exist, matches no jar, or is not a jar.
    """
    extra = classpath_entries(extra_jars, argument="extra_jars", folders=False)
    try:
        import pyspark
    except ImportError:
        spark_jars: set[str] = set()
    else:
        spark_jars = {_artifact(str(j)) for j in (Path(pyspark.__file__).parent / "jars").glob("*.jar")}
    chosen: list[str] = []
    seen = set(spark_jars) | _NOT_FOR_SPARK
    for jar in [*bridge_classpath(), *spark_connector_jars(), *extra]:
        name = _artifact(jar)
        if name not in seen:
            seen.add(name)
            chosen.append(str(jar))
    return chosen


def configure(builder: Any, extra_jars: ClasspathLike = (), *, fast_local_checkpoints: bool = False) -> Any:
    """Add the bridge's jars (and ``extra_jars``: Reactor, Pekko, your own) to ``spark.jars`` of
    a ``SparkSession.Builder``, keeping jars already set there; returns the builder.

    Call it before ``getOrCreate()``: the jars join the driver's classpath when the JVM starts.

    Args:
        builder: a ``SparkSession.Builder``.
        extra_jars: more jars for the driver's classpath: a jar, a folder (every jar in it), a
            glob pattern (``libs/*.jar``), or a list of them, checked now (see `spark_classpath`).
        fast_local_checkpoints: write the checkpoints of streaming queries on local (``file:``)
            paths with `LOCAL_CHECKPOINTS`, which spares the ~10 child processes (``chmod``,
            ``readlink``) that Hadoop starts per checkpoint file without its native library:
            about 80 ms of every micro-batch. Files still appear atomically; no ``.crc`` files
            are written. Other file systems keep Spark's own manager. For one query instead,
            set ``spark.sql.streaming.checkpointFileManagerClass`` to `LOCAL_CHECKPOINTS`
            before ``start()``.
    """
    options = getattr(builder, "_options", None)
    if not isinstance(options, dict) or not callable(getattr(builder, "config", None)):
        raise TypeError(
            f"configure() needs a SparkSession.Builder (SparkSession.builder), got {describe(builder)}; "
            "call it before getOrCreate(): the jars join the driver's classpath when its JVM starts"
        )
    current = [j for j in str(options.get("spark.jars", "")).split(",") if j]
    jars = [*current, *(j for j in spark_classpath(extra_jars) if j not in current)]
    builder = builder.config("spark.jars", ",".join(jars))
    if fast_local_checkpoints:
        builder = builder.config(_CHECKPOINT_MANAGER, LOCAL_CHECKPOINTS)
    return builder
