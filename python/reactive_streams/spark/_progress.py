"""`source_progress`: a streaming query's sources as its last progress reports them, with the
partitioned sources' lag: how many offsets each partition is behind the ``latest`` its
`register_source` gives, as Kafka's source reports it."""

from __future__ import annotations

import json
from typing import Any

from .._gauges import StreamState
from .._rules import describe
from ._checks import is_connect, require_classic_session
from ._streaming import _field

__all__ = ["describe_streams", "sink_progress", "source_progress"]


def source_progress(query: Any) -> list[dict[str, Any]]:
    """Each source of ``query``'s last progress (``query.lastProgress``, classic or Spark
    Connect), or of a progress report given instead (an entry of ``query.recentProgress``):
    its ``description``, ``startOffset``, ``endOffset``, ``latestOffset`` and
    ``metrics`` as Spark reports them, the offsets parsed from JSON. For a source whose end and
    latest offsets are both partitions' counts (`register_source` with ``latest=``, PySpark 4.2
    or later), also ``minOffsetsBehindLatest``, ``avgOffsetsBehindLatest`` and
    ``maxOffsetsBehindLatest``: how far the partitions are behind where ``latest`` said they
    ended when the batch was planned (Kafka's source reports the same in its metrics; a Python
    data source cannot report metrics, so they are computed here). An empty list before the
    first progress.

    Raises:
        TypeError: ``query`` is neither a ``StreamingQuery`` nor a progress report.
    """
    if hasattr(query, "lastProgress"):
        progress = query.lastProgress
    elif isinstance(query, dict) or hasattr(type(query), "sources"):
        progress = query
    else:
        raise TypeError(f"query must be a StreamingQuery or a progress report, got {type(query).__name__}")
    if not progress:
        return []
    found = []
    for source in _field(progress, "sources") or []:
        entry: dict[str, Any] = {
            "description": _field(source, "description"),
            **{name: _parsed(_field(source, name)) for name in ("startOffset", "endOffset", "latestOffset")},
            "metrics": dict(_field(source, "metrics") or {}),
        }
        behind = _behind(entry["endOffset"], entry["latestOffset"])
        if behind:
            entry["minOffsetsBehindLatest"] = min(behind)
            entry["avgOffsetsBehindLatest"] = sum(behind) / len(behind)
            entry["maxOffsetsBehindLatest"] = max(behind)
        found.append(entry)
    return found


def sink_progress(query: Any) -> dict[str, Any] | None:
    """The figures of ``query``'s `register_sink` sink (a partitioned sink), classic or Spark
    Connect, summed by its commits since the query (its id: across restarts on its checkpoint)
    first wrote to the sink on this driver's host; None before its first micro-batch commits,
    or for a query writing elsewhere:

    - ``deliveredRows``, ``lastBatchRows``: rows handed to subscribers, in all and in the last
      committed micro-batch (``batchId``, ``lastBatchTasks`` write tasks; ``batches`` in all);
    - ``lastBatchWaitMs``: how long the last batch's slowest task waited for its subscriber (in
      its signal methods, with none of its demand left, and for its ``completion``): what a slow
      subscriber costs the batch; ``lastBatchTaskWaitMs``, the sum over the batch's tasks;
      ``totalWaitMs``, the ``lastBatchWaitMs`` of every batch summed;
    - ``queryId``, ``sink`` (the registered name) and ``timestamp`` (UTC, of the commit).

    They are not in ``query.lastProgress``: Spark asks only JVM sinks for metrics
    (``ReportsSinkMetrics``), and a Python data source's commit runs in a Python worker of the
    driver, with no way to the progress. It writes them to a file of the driver's host
    (``reactive-streams-sinks-<uid>/<query id>.json`` in its temporary folder), read here in a
    classic session, and by the server plugin over Spark Connect.

    Raises:
        TypeError: ``query`` is not a ``StreamingQuery``.
    """
    if type(query).__name__ != "StreamingQuery" or not hasattr(query, "id"):
        raise TypeError(f"sink_progress(query) needs a StreamingQuery, got {describe(query)}")
    if is_connect(query):
        from ._connect._streaming import sink_figures

        return sink_figures(query._session, query.id)
    from .partitioned._sink_figures import read_figures

    return read_figures(query.id)


def _parsed(offset: Any) -> Any:
    if isinstance(offset, str):
        try:
            return json.loads(offset)
        except ValueError:
            return offset
    return offset


def _behind(end: Any, latest: Any) -> list[int]:
    """Each partition's ``latest - end``, if both are partitions' counts (``{"0": n, ...}``)."""
    if not isinstance(end, dict) or not isinstance(latest, dict) or not end or set(end) != set(latest):
        return []
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (*end.values(), *latest.values())):
        return []
    return [max(0, latest[p] - end[p]) for p in sorted(end, key=str)]


def describe_streams(spark: Any) -> list[StreamState]:
    """Each live stream of ``spark``'s session as a `reactive_streams.StreamState`: what is held
    for its consumer, the demand not yet met, and whether it waits on its producer or its
    consumer, since when. On a classic session, its bridge's streams (``bridge(spark).describe()``:
    JVM publishers read from Python, registered subscribers, Python publishers feeding the JVM);
    on Spark Connect, this client's streams (JVM publishers read through `jvm_publisher`, and
    registered subscribers' rows), as the client sees them, with no call to the server.

    Raises:
        TypeError: ``spark`` is not a SparkSession.
    """
    if is_connect(spark):
        from pyspark.sql.connect.session import SparkSession as ConnectSession

        if not isinstance(spark, ConnectSession):  # a Connect DataFrame, say
            raise TypeError(
                f"describe_streams(spark) needs a pyspark.sql.SparkSession, got {describe(spark)}"
            )
        from ._connect._connection import existing_connection

        made = existing_connection(spark)  # none made yet: no stream either
        return [] if made is None else made.stream_states()
    require_classic_session(spark, "describe_streams(spark)")
    from ._session import bridge

    return bridge(spark).describe()
