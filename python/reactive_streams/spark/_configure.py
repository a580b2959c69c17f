"""`configure`: puts the bridge's jars on a SparkSession's classpath, as delta-spark's helper does;
`connect_confs`: what a Spark Connect server needs for the same."""

from __future__ import annotations

import functools
import os
import re
import sys
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .._errors import ReactiveStreamsError
from .._rules import describe
from ..jvm import ClasspathLike, bridge_classpath, classpath_entries

__all__ = [
    "CONNECT_COMMAND_PLUGIN",
    "CONNECT_STATUS_PLUGIN",
    "LOCAL_CHECKPOINTS",
    "configure",
    "connect_confs",
    "spark_classpath",
    "spark_connector_jars",
]

LOCAL_CHECKPOINTS = "io.github.rspy.spark.LocalCheckpointFileManager"
"""The checkpoint manager `configure(..., fast_local_checkpoints=True)` sets: local (``file:``)
checkpoints written without Hadoop's child processes; other file systems as Spark does."""
_CHECKPOINT_MANAGER = "spark.sql.streaming.checkpointFileManagerClass"

CONNECT_COMMAND_PLUGIN = "io.github.rspy.spark.connect.RspyCommandPlugin"
"""The Spark Connect command plugin (``spark.connect.extensions.command.classes``) that serves
the bridge's calls on a Connect server."""
CONNECT_STATUS_PLUGIN = "io.github.rspy.spark.connect.RspyStatusPlugin"
"""The Spark Connect GetStatus plugin (``spark.connect.extensions.getStatus.classes``) that
serves the bridge's quick calls (demand, cancel, keep-alive) on a Connect server."""
CONNECT_SERVER_PLUGIN = "io.github.rspy.spark.connect.ServerPlugin"
"""The Spark plugin (``spark.plugins``) of a Connect server: sets Spark Connect's per-call INFO
loggers to WARN (unless its log4j2 configuration names them, or ``spark.rspy.connect.quiet`` is
``false``), and stops a server `ConnectServer` started when the process that started it ends."""
#: Static confs whose values are comma-separated lists: we add to them and keep what is there.
_LIST_CONFS = frozenset(
    {
        "spark.jars",
        "spark.plugins",
        "spark.connect.extensions.command.classes",
        "spark.connect.extensions.getStatus.classes",
    }
)
_EXTENSIONS = {
    "spark.connect.extensions.command.classes": CONNECT_COMMAND_PLUGIN,
    "spark.connect.extensions.getStatus.classes": CONNECT_STATUS_PLUGIN,
    "spark.plugins": CONNECT_SERVER_PLUGIN,
}

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
    """The bridge's jars and ``extra_jars`` (as absolute paths), less the artifacts Spark
    already ships (Spark's own copy wins: its Scala library, SLF4J, Pyrolite), the TCK's SLF4J
    no-op binding, and duplicates by artifact.

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
            chosen.append(os.path.abspath(jar))  # a server started elsewhere reads them too
    return chosen


def connect_confs(extra_jars: ClasspathLike = ()) -> dict[str, str]:
    """The static confs a Spark Connect server needs to serve this library's clients: the
    bridge's jars (and ``extra_jars``) in ``spark.jars``, the Connect plugins
    (`CONNECT_COMMAND_PLUGIN`, `CONNECT_STATUS_PLUGIN`), and the server's Spark plugin
    (`CONNECT_SERVER_PLUGIN`, in ``spark.plugins``), which keeps Spark Connect from logging an
    INFO line for every call (every ``request(n)``).

    Pass them when the server starts (``spark-submit --conf k=v`` or ``spark-defaults.conf``):
    a running server cannot load jars. `reactive_streams.spark.connect_server` starts a local
    server with them. If the server already sets ``spark.jars``, ``spark.plugins`` or the
    extension classes, join the values with commas.

    Args:
        extra_jars: more jars for the server's classpath (Reactor, Pekko, your publishers), as
            `spark_classpath` takes them (checked now).

    Raises:
        ReactiveStreamsError: an ``extra_jars`` entry is missing or not a jar, or the bridge's
            jars are not built.
    """
    return {"spark.jars": ",".join(spark_classpath(extra_jars)), **_EXTENSIONS}


def merge_confs(current: Mapping[str, str], added: Mapping[str, str]) -> dict[str, str]:
    """``current`` updated with ``added``, where the list confs (``spark.jars``, the Connect
    extension classes) keep their current entries and gain the new ones, without duplicates."""
    merged = dict(current)
    for key, value in added.items():
        merged[key] = _joined(merged.get(key), value.split(",")) if key in _LIST_CONFS else value
    return merged


def _joined(current: str | None, added: Iterable[str]) -> str:
    entries = [e for e in str(current or "").split(",") if e]
    return ",".join([*entries, *(e for e in added if e and e not in entries)])


def _connect_target(options: Mapping[str, Any]) -> str | None:
    """The Connect URL or master a builder's ``getOrCreate()`` would use, as PySpark decides it
    (``pyspark.sql.session``, 4.x), or None for a classic session."""
    remote = options.get("spark.remote", os.environ.get("SPARK_REMOTE"))
    if remote is None:
        api_mode = str(options.get("spark.api.mode", os.environ.get("SPARK_API_MODE", ""))).lower()
        if api_mode != "connect":
            return None
        remote = options.get("spark.master", os.environ.get("MASTER", "local"))
    return str(remote)


def _without_params(url: str) -> str:
    """``sc://host:port/;token=...`` -> ``sc://host:port``: never print a token."""
    return url.split(";", 1)[0].rstrip("/")


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
            before ``start()``. With a cluster's master (``spark://``, YARN, Kubernetes) it
            warns: a ``file:`` checkpoint location there must be a folder every host mounts.

    Python workers: with a local or ``local-cluster`` master, or a local Connect server, they
    start this interpreter (``sys.executable``: it has this package and pyarrow, which the
    executors' readers, writers and processors need) unless ``PYSPARK_PYTHON`` or
    ``spark.pyspark.python`` says otherwise; the conf's value is put in ``PYSPARK_PYTHON``,
    the one PySpark reads. A cluster's workers need the package shipped (docs/spark.md).

    Spark Connect: a builder that starts its own local server (``.remote("local[2]")``, or
    ``spark.api.mode=connect`` with a master) gets the jars and the Connect plugins
    (`connect_confs`), added to the extension classes already set. With
    ``spark.local.connect.reuse``, they reach only a server that this run starts, not one it
    reuses. The session PySpark then makes would warn (``UserWarning: Failed to set spark.jars
    ... [CANNOT_MODIFY_CONFIG]``) that it cannot set those static confs again: the builder's
    ``getOrCreate()`` and ``create()`` ignore those warnings (not with
    ``spark.local.connect.reuse``, where the server may lack them). A builder for a running
    server (``.remote("sc://...")``) is refused: a running
    server cannot load jars; start it with them (`reactive_streams.spark.connect_server`).

    Raises:
        TypeError: ``builder`` is not a ``SparkSession.Builder``.
        ReactiveStreamsError: the builder connects to a running Spark Connect server, or an
            ``extra_jars`` entry is bad (see `spark_classpath`).
    """
    options = getattr(builder, "_options", None)
    if not isinstance(options, dict) or not callable(getattr(builder, "config", None)):
        raise TypeError(
            f"configure() needs a SparkSession.Builder (SparkSession.builder), got {describe(builder)}; "
            "call it before getOrCreate(): the jars join the driver's classpath when its JVM starts"
        )
    target = _connect_target(options)
    if target is not None and target.startswith("sc://"):
        raise ReactiveStreamsError(
            f"configure() cannot add jars to a running Spark Connect server ({_without_params(target)}): "
            "start the server with them, e.g. `python -m reactive_streams.spark.connect_server` "
            "(or reactive_streams.spark.connect_server.ConnectServer), or pass "
            "reactive_streams.spark.connect_confs() to its spark-submit, then connect with "
            ".remote(url) and no configure()"
        )
    if target is None:
        added = {"spark.jars": ",".join(spark_classpath(extra_jars))}
    else:  # a local Connect server, started by getOrCreate() with the builder's confs (its SparkConf)
        added = connect_confs(extra_jars)
    current = {k: str(options[k]) for k in added if k in options}
    for key, value in merge_confs(current, added).items():
        builder = builder.config(key, value)
    if fast_local_checkpoints:
        builder = builder.config(_CHECKPOINT_MANAGER, LOCAL_CHECKPOINTS)
        _warn_if_cluster(options, target)
    use_this_python_for_workers(options, target)
    if target is not None:
        _quiet_when_set_again(builder, sorted(added))
    return builder


_CLUSTER_MASTERS = ("spark://", "yarn", "k8s://", "mesos://")


def _warn_if_cluster(options: Mapping[str, Any], target: str | None) -> None:
    """`fast_local_checkpoints` with a master whose executors may be other hosts: say what it
    then needs (docs/deploy.md, Checkpoints)."""
    master = str(options.get("spark.master", os.environ.get("MASTER", "")))
    if target is not None and not target.startswith("sc://"):
        master = target  # a Connect server this builder starts, on that master
    if not master.startswith(_CLUSTER_MASTERS):
        return
    warnings.warn(
        f"fast_local_checkpoints on a cluster (master {master}): local (file:) checkpoints are "
        "written by whichever host writes them, the driver (offsets, commits) and the executors "
        "(state), so a file: checkpointLocation must be a folder every host mounts at the same "
        "path, as with Spark's own manager; on HDFS or an object store this setting changes "
        "nothing (docs/deploy.md, Checkpoints)",
        UserWarning,
        stacklevel=3,
    )


def _quiet_when_set_again(builder: Any, keys: list[str]) -> None:
    """Keep the session a Connect builder makes from warning that it cannot set ``keys``.

    PySpark starts the embedded server with the builder's confs, then sets every one of them
    again on the new session (twice), where the server refuses each static conf and PySpark
    turns the refusal into a ``UserWarning`` (``Failed to set spark.jars to ... due to
    [CANNOT_MODIFY_CONFIG]``): four of them, twice, for confs the server was just started
    with. Those warnings, and no other, are ignored while ``getOrCreate()`` or ``create()``
    runs; with ``spark.local.connect.reuse`` the server may be one an earlier run started
    without them, so they are left to say so.
    """
    refused = "|".join(re.escape(key) for key in keys)
    pattern = rf"Failed to set (?:{refused}) to .* due to \[CANNOT_MODIFY_(?:STATIC_)?CONFIG\]"
    for name in ("getOrCreate", "create"):
        make = getattr(builder, name, None)
        if callable(make):
            setattr(builder, name, _quietly(make, builder, pattern))


def _quietly(make: Any, builder: Any, pattern: str) -> Any:
    @functools.wraps(make)
    def quietly() -> Any:
        options = getattr(builder, "_options", {})
        reuse = options.get("spark.local.connect.reuse", os.environ.get("SPARK_LOCAL_CONNECT_REUSE", ""))
        if str(reuse).lower() in ("1", "true"):
            return make()
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=pattern, category=UserWarning)
            return make()

    return quietly


def use_this_python_for_workers(options: dict[str, Any], target: str | None) -> None:
    """Local and ``local-cluster`` masters (and a local Connect server): Python workers start
    this interpreter, which has this package and pyarrow, unless ``PYSPARK_PYTHON`` or
    ``spark.pyspark.python`` names one. PySpark reads only ``PYSPARK_PYTHON`` when it makes its
    SparkContext (the conf counts for spark-submit), so the conf's value is put there too."""
    master = str(target if target is not None else options.get("spark.master", os.environ.get("MASTER", "")))
    if not master and "PYSPARK_GATEWAY_PORT" not in os.environ:
        master = "local"  # PySpark's default; under spark-submit, its master decides
    if not master.startswith("local") or os.environ.get("PYSPARK_PYTHON"):
        return
    os.environ["PYSPARK_PYTHON"] = str(options.get("spark.pyspark.python") or sys.executable)
