"""Structured Streaming with Reactive Streams: the ``reactive-streams`` source and sink.

A JVM-side registry (``io.github.rspy.spark.StreamRegistry``) names publishers and
subscribers; a streaming query reads from a name or writes to one::

    rss.register_publisher(spark, "events", rs.from_iterable(events))
    df = (spark.readStream.format("reactive-streams").option("publisher", "events")
          .option("maxRecordsPerTrigger", 500).schema("id LONG, name STRING").load())

    rss.register_subscriber(spark, "out", my_subscriber)          # gets pyspark.sql.Row items
    df.writeStream.format("reactive-streams").option("subscriber", "out") \\
        .option("checkpointLocation", path).start()

The functions here talk to the driver's JVM through the session's shared bridge
(`reactive_streams.spark.bridge`), or on Spark Connect to the server plugin
(`_connect`).
"""

from __future__ import annotations

import weakref
from typing import Any

from .._api import Publisher, Subscriber
from .._errors import ReactiveStreamsError
from .._rules import describe
from ..jvm import Bridge
from . import _connect
from ._checks import is_connect, iterable_hint, require_classic_session, require_library_jars
from ._session import bridge as session_bridge
from ._sink import ArrowBatchSubscriber, RowSubscriber

__all__ = [
    "FORMAT",
    "Registration",
    "input_exhausted",
    "register_publisher",
    "register_subscriber",
    "stream_stats",
    "unregister",
]

#: The Python subscribers each session bridge registered, by name, until they are unregistered:
#: one no query took is then let go of (`Bridge.release_subscriber`), not held for good.
_registered_subscribers: weakref.WeakKeyDictionary[Bridge, dict[str, Subscriber[Any]]] = (
    weakref.WeakKeyDictionary()
)

FORMAT = "reactive-streams"
"""The short name of the streaming source and sink (``spark.readStream.format(FORMAT)``)."""

_REGISTRY_CLASS = "io.github.rspy.spark.StreamRegistry"


class Registration:
    """A name registered for the ``reactive-streams`` format, as `register_publisher` and
    `register_subscriber` return it: `unregister` frees it, and so does leaving a ``with``
    block::

        with rss.register_publisher(spark, "events", publisher):
            query = spark.readStream.format("reactive-streams").option("publisher", "events")...
    """

    def __init__(self, spark: Any, name: str) -> None:
        self._spark = spark
        self.name = name

    def unregister(self) -> bool:
        """Free the name (see `unregister`); whether it was still registered."""
        return unregister(self._spark, self.name)

    def __enter__(self) -> Registration:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.unregister()

    def __repr__(self) -> str:
        return f"<Registration {self.name!r}>"


def register_publisher(spark: Any, name: str, publisher: Publisher[Any] | object) -> Registration:
    """Register ``publisher`` as ``name``, for ``spark.readStream.format("reactive-streams")
    .option("publisher", name).schema(...)``.

    The source's options: ``maxRecordsPerTrigger`` (the most one micro-batch takes, default
    100,000), ``prefetch`` (micro-batches' worth requested ahead, default 1) and
    ``failOnDataLoss`` (default true). The source never holds more than ``maxRecordsPerTrigger ×
    (1 + prefetch)`` elements, counting demand it signalled and has not yet received (§1.1 end
    to end), so the next batch is ready when Spark asks. Before it answers a trigger with less
    than a full batch, it lets the publisher answer the demand under way:
    ``processAllAvailable`` returns once everything the publisher had ready is processed, and
    ``Trigger.AvailableNow`` stops once the publisher has completed or has nothing ready;
    ``Trigger.Once`` runs one batch of what is ready (up to the bound); continuous triggers are
    refused.

    Each element becomes a row: a tuple or list positionally, a dict by column name, anything
    else as the one column of a one-column schema; columns may be boolean, tinyint, smallint,
    int, bigint, float, double, string or binary, and ``None`` is null. An element that does not
    fit, or an ``on_error``, fails the query with a clear error (the publisher's own exception,
    as the bridge carries it) once the elements before it are processed. On classic Spark, a
    Python publisher's rows stay in the Arrow batches they cross the bridge in, when their
    columns are the source's (integers for bigint, floats for double, str, bool, bytes), and
    Spark reads them as columns (``ColumnarBatch``); other rows are written into Arrow batches
    one by one, with the same checks.

    Elements may also be Arrow batches, all of them (``pyarrow.RecordBatch`` from Python, or a
    JVM publisher's ``VectorSchemaRoot``, copied as it arrives), whose columns are the schema's
    by name and type (``df.toArrow()``'s types): Spark reads them as columns, offsets and
    ``maxRecordsPerTrigger`` count rows, a micro-batch ends at a batch's end (one larger than
    the limit crosses whole), and demand counts batches: one first, then as many as the bound
    holds were each as large as the largest so far. Their data reaches the executors through
    Spark's block manager (a broadcast per partition, destroyed once the micro-batch is
    committed), not inside the tasks. After ``on_complete``
    and the last batch, the progress metric ``sources[0].metrics["exhausted"]`` is ``"true"``;
    the query stays active until stopped (use ``Trigger.AvailableNow`` to end with the input).

    On a Spark Connect session, ``publisher`` must be a Python publisher: the name is this
    session's own (other sessions' queries cannot see it), the server's demand reaches it as
    each ``request(n)``, and what it emits is pushed to the server, never beyond that demand
    (§1.1). If this client goes away, the queries reading the name fail with
    ``ClientLostException`` within the server's idle timeout, or stop with the source's
    ``option("onClientLoss", "stop")``; if the server goes away, its subscriptions are
    cancelled (§3.5).

    Restarts: a publisher is not replayable. A stopped query keeps the elements it received and
    Spark did not commit, and a restart of it on the same checkpoint, in the same driver,
    continues with them: nothing is lost or repeated. It then subscribes again to the publisher
    registered under ``name`` (a cold publisher such as ``rs.from_iterable(list)`` starts over
    from its first element). If the elements of a planned batch are gone (the driver stopped),
    the query fails saying so, or with ``failOnDataLoss=false`` goes on, counting them in the
    ``lostElements`` metric.

    Args:
        spark: a SparkSession built with ``reactive_streams.spark.configure`` (classic or Connect).
        name: the name the source's ``publisher`` option refers to; unique among registered
            publishers and subscribers.
        publisher: a `reactive_streams.Publisher` (it crosses the bridge with exact demand), or
            a JVM ``org.reactivestreams.Publisher`` or ``java.util.concurrent.Flow.Publisher``
            object of this session's JVM (``spark._jvm...``).

    Returns:
        A `Registration`: ``unregister()`` it, or use it as a context manager, to free the name.

    Raises:
        TypeError: ``name`` is not a non-empty str, or ``publisher`` is neither kind.
        ReactiveStreamsError: ``name`` is taken, the Spark connectors jar is not on the
            driver's classpath, or a Connect server lacks the plugin or cannot be reached.
    """
    _check_name(name)
    refused = TypeError(
        "register_publisher() needs a reactive_streams.Publisher, or a JVM org.reactivestreams.Publisher "
        f"or Flow.Publisher, got {describe(publisher)}{iterable_hint(publisher)}"
    )
    if is_connect(spark):
        if not isinstance(publisher, Publisher):
            raise refused
        _connect.register_publisher(spark, name, publisher)
        return Registration(spark, name)
    bridge, registry = _bridge_and_registry(spark, publisher, Publisher, refused, "register_publisher()")
    if isinstance(publisher, Publisher):
        java_publisher = bridge.to_jvm(publisher)
    elif registry.isPublisher(publisher):
        java_publisher = publisher
    else:
        raise refused
    _check_free(registry, name)
    _call(f"registering the publisher {name!r}", registry.registerPublisher, name, java_publisher)
    return Registration(spark, name)


def register_subscriber(
    spark: Any,
    name: str,
    subscriber: Subscriber[Any] | object,
    *,
    arrow_batches: bool = False,
    max_records_per_batch: int = 0,
) -> Registration:
    """Register ``subscriber`` as ``name``, for ``df.writeStream.format("reactive-streams")
    .option("subscriber", name)``.

    The first query writing to ``name`` subscribes it, once (§2.5: another query, or a restart
    of that one, needs a new subscriber under a new name). Each micro-batch's rows are delivered
    in order, only as the subscriber requests them (§1.1): the batch's commit waits until the
    subscriber has requested and processed them all, so a slow subscriber slows the query. The
    driver holds one micro-batch's rows as bytes (bound them with the source's
    ``maxRecordsPerTrigger``) and makes a row into a value only as it is delivered; between the
    driver and a Python subscriber the bridge holds no more than its outstanding demand.

    Its subscription keeps the rules: ``request(n <= 0)`` ends the stream with
    ``on_error(IllegalDemandError)`` (§3.9), demand is capped at 2**63-1 (§3.17), after
    ``cancel()`` the rows of that and later batches are dropped while the query goes on (§3.13:
    the subscriber is released). A subscriber that raises from ``on_next`` (or ``on_subscribe``)
    has its subscription cancelled and the error logged (§2.13), and the query stops with an
    error naming ``name`` and the exception. When the query stops, the subscriber gets
    ``on_complete`` (``on_error`` if the query failed) shortly after, from the driver's listener
    bus. ``query.stop()`` while a commit waits for demand interrupts it without logging errors.

    Restarts deliver nothing twice: the sink delivers each (query id, epoch) at most once. A
    batch that Spark re-runs on the same checkpoint (after a stop or a failure during the batch)
    delivers only the rows the earlier run did not, to the new run's subscriber, and a batch
    delivered in full is not delivered again (the row a subscriber raised on counts as
    delivered). The record of how far delivery got is kept in the query's checkpoint
    (``reactive-streams-sink/``, written before the commit returns), so this holds across
    driver restarts too; only a driver that dies while it delivers a batch leaves that batch's
    rows since its last record to be delivered again. A Python subscriber's subscription is an
    `SinkSubscription`: inside ``on_next`` its ``epoch`` (and ``query_id``) say which micro-batch
    the row belongs to, for writes of its own that must be idempotent, as ``foreachBatch`` gives
    ``batch_id``; a JVM subscriber's is an ``io.github.rspy.spark.sink.SinkEpochs``.

    On a Spark Connect session, ``subscriber`` must be a Python subscriber; the name is this
    session's own. It gets ``on_subscribe`` when a query claims it, its rows within the demand
    it signals, and the commit waits as above. If this client goes away, the query fails with
    ``ClientLostException`` at its next commit, or stops with the sink's
    ``option("onClientLoss", "stop")``; if the server goes away, it gets
    ``on_error(ConnectionLostError)``.

    A Python subscriber receives ``pyspark.sql.Row`` objects (nested structs as dicts, arrays
    as lists, maps as dicts, decimals as ``Decimal``, binary as ``bytes``, dates and timestamps
    as ISO-8601 strings), or, if it has an ``on_next_batch``, lists of them. They are instances
    of a ``Row`` subclass that holds the column names, so that a row costs no dict of its own;
    they pickle as plain Rows. A JVM subscriber receives ``org.apache.spark.sql.Row`` objects.

    With ``arrow_batches=True``, a Python subscriber receives each micro-batch as
    ``pyarrow.RecordBatch``es instead, of at most ``max_records_per_batch`` rows (0: Spark's
    ``spark.sql.execution.arrow.maxRecordsPerBatch``), with the types ``df.toArrow()`` gives,
    and its demand counts batches. The driver makes each batch only when the subscriber's demand
    reaches it; everything above holds for batches as for rows (the rows of a batch the
    subscriber raised on count as delivered).

    Args:
        spark: a SparkSession built with ``reactive_streams.spark.configure`` (classic or Connect).
        name: the name the sink's ``subscriber`` option refers to; unique among registered
            publishers and subscribers.
        subscriber: a `reactive_streams.Subscriber`, or a JVM ``org.reactivestreams.Subscriber``
            or ``Flow.Subscriber`` object of this session's JVM.
        arrow_batches: deliver ``pyarrow.RecordBatch``es instead of rows (Python subscribers).
        max_records_per_batch: the most rows in one batch, or 0 for Spark's default.

    Returns:
        A `Registration`: ``unregister()`` it, or use it as a context manager, to free the name.

    Raises:
        TypeError: ``name`` is not a non-empty str, or ``subscriber`` is neither kind.
        ValueError: ``arrow_batches`` is not a bool, ``max_records_per_batch`` is not an int
            >= 0, is given without ``arrow_batches``, or ``arrow_batches`` is asked of a JVM
            subscriber.
        ReactiveStreamsError: ``name`` is taken, the Spark connectors jar is not on the
            driver's classpath, or a Connect server lacks the plugin or cannot be reached.
    """
    _check_name(name)
    batch_rows = _check_batches(arrow_batches, max_records_per_batch)
    refused = TypeError(
        "register_subscriber() needs a reactive_streams.Subscriber, or a JVM "
        f"org.reactivestreams.Subscriber or Flow.Subscriber, got {describe(subscriber)}"
    )
    if is_connect(spark):
        if not isinstance(subscriber, Subscriber):
            raise refused
        _connect.register_subscriber(spark, name, subscriber, batch_rows)
        return Registration(spark, name)
    bridge, registry = _bridge_and_registry(spark, subscriber, Subscriber, refused, "register_subscriber()")
    if isinstance(subscriber, Subscriber):
        _check_free(registry, name)
        if batch_rows is None:
            link = bridge.jvm.io.github.rspy.spark.sink.SinkLink()
            wrapped: Subscriber[Any] = RowSubscriber(subscriber, link)
        else:
            link = bridge.jvm.io.github.rspy.spark.sink.SinkLink(batch_rows)
            wrapped = ArrowBatchSubscriber(subscriber, link)
        java_subscriber = bridge.subscriber_to_jvm(wrapped)
        register = registry.registerPythonSubscriber
        try:
            _call(f"registering the subscriber {name!r}", register, name, java_subscriber, link)
        except BaseException:
            bridge.release_subscriber(wrapped)
            raise
        _registered_subscribers.setdefault(bridge, {})[name] = wrapped
    elif registry.isSubscriber(subscriber):
        if batch_rows is not None:
            raise ValueError(
                "register_subscriber(arrow_batches=True) is for Python subscribers: a JVM subscriber "
                "receives org.apache.spark.sql.Row objects"
            )
        _check_free(registry, name)
        _call(f"registering the subscriber {name!r}", registry.registerSubscriber, name, subscriber)
    else:
        raise refused
    return Registration(spark, name)


def _check_batches(arrow_batches: object, max_records_per_batch: object) -> int | None:
    """The rows per Arrow batch the sink's link asks for (0: Spark's default), or None for rows."""
    if not isinstance(arrow_batches, bool):
        raise ValueError(f"arrow_batches must be a bool, got {arrow_batches!r}")
    if (
        isinstance(max_records_per_batch, bool)
        or not isinstance(max_records_per_batch, int)
        or not 0 <= max_records_per_batch < 2**31
    ):
        raise ValueError(
            f"max_records_per_batch must be an int >= 0 (0: Spark's default), got {max_records_per_batch!r}"
        )
    if not arrow_batches:
        if max_records_per_batch:
            raise ValueError(
                "max_records_per_batch needs arrow_batches=True: rows are delivered one at a time"
            )
        return None
    return max_records_per_batch


def unregister(spark: Any, name: str) -> bool:
    """Free ``name``; whether it was registered.

    Only the name is freed: a running query keeps the publisher or subscriber it took (stop the
    query to end its stream).

    Args:
        spark: the SparkSession the name was registered with.
        name: a registered name.

    Raises:
        TypeError: ``name`` is not a non-empty str.
    """
    _check_name(name)
    if is_connect(spark):
        return _connect.unregister(spark, name)
    bridge = session_bridge(spark)
    freed = bool(_registry(bridge).unregister(name))
    wrapped = _registered_subscribers.get(bridge, {}).pop(name, None)
    if wrapped is not None:  # unless a query took it, nothing will: the bridge lets go of it
        bridge.release_subscriber(wrapped)
    return freed


def stream_stats(spark: Any, name: str) -> dict[str, int]:
    """The counters that show demand bounding every buffer for a registered ``name``.

    Returns:
        ``requested``: demand the source signalled to the publisher, or the subscriber to the
        sink (capped at 2**63-1, §3.17); ``elements``: elements the source received, or rows (or
        Arrow batches) the sink delivered; ``arrow_rows``: rows that crossed as Arrow columns (the
        source's: a publisher's Arrow batches, and a Python publisher's rows whose columns are
        the source's; the sink's: rows made into Arrow columns for its subscriber, which a
        classic Python subscriber's rows of integers, floats, booleans, strings and binary are,
        but each micro-batch's last, and every row of a subscriber of Arrow batches);
        ``buffered`` and ``max_buffered``: elements held now and at most (the
        source: received and not yet released by a finished batch, never above its demand bound
        ``maxRecordsPerTrigger × (1 + prefetch)`` (in rows: a publisher of Arrow batches passes
        it by at most one batch larger than all before it); the sink: handed over and not yet delivered,
        never above the subscriber's outstanding demand); ``dropped``: rows the sink did not
        deliver after a cancel or the end of the stream; ``parked``: elements that stopped
        queries kept for their restarts (each query's last planned batch, which a restart may
        run again, and what it received after that).

    Raises:
        TypeError: ``name`` is not a non-empty str.
        ReactiveStreamsError: nothing is registered as ``name``.
    """
    _check_name(name)
    if is_connect(spark):
        return _connect.stream_stats(spark, name)
    registry = _registry(session_bridge(spark))
    if not registry.isRegistered(name):
        raise ReactiveStreamsError(f"nothing is registered as {name!r}")
    stats = _call(f"reading the counters of {name!r}", registry.statsMap, name)
    return {str(key): int(value) for key, value in stats.items()}


def input_exhausted(query: Any) -> bool:
    """Whether a streaming query has consumed all its input: true once, in the query's last
    progress, every ``reactive-streams`` source reports that its publisher completed (§1.4,
    §1.5) and that every element it sent has been processed (the source's ``exhausted``
    metric). False before the first progress.

    With ``trigger(availableNow=True)`` the query stops by itself at that point; on other
    triggers, poll this, then ``query.stop()``.

    Args:
        query: a ``pyspark.sql.streaming.StreamingQuery``.

    Raises:
        ReactiveStreamsError: the query's progress names sources, none of them ``reactive-streams``.
    """
    progress = getattr(query, "lastProgress", None)
    if progress is None and not hasattr(query, "lastProgress"):
        raise TypeError(f"query must be a StreamingQuery, got {type(query).__name__}")
    if not progress:
        return False
    sources = _field(progress, "sources") or []
    ours = [_field(s, "metrics") or {} for s in sources if "exhausted" in (_field(s, "metrics") or {})]
    if not ours:
        described = ", ".join(str(_field(s, "description")) for s in sources) or "none"
        raise ReactiveStreamsError(
            f"the query reads no {FORMAT} source (its sources: {described}), so it cannot tell "
            "when a publisher is exhausted"
        )
    return all(metrics["exhausted"] == "true" for metrics in ours)


def _field(progress: Any, name: str) -> Any:
    """A field of a progress report: a dict (classic), or PySpark 4's progress objects, whose
    attributes hold the fields (on Connect their dict entries may be empty)."""
    if hasattr(type(progress), name):
        return getattr(progress, name)
    return progress.get(name) if isinstance(progress, dict) else None


def _bridge_and_registry(
    spark: Any, value: object, kind: type, refused: TypeError, caller: str
) -> tuple[Bridge, Any]:
    """The session's bridge and the registry, for registering ``value``: a Python ``kind`` or a
    JVM object; anything else is ``refused``, before the session's bridge is made. A session
    without the library's jars is refused saying so (the format name fails then too)."""
    if not isinstance(value, kind) and not _is_jvm_object(value):
        raise refused
    require_classic_session(spark, caller)
    require_library_jars(spark, caller)
    bridge = session_bridge(spark)
    return bridge, _registry(bridge)


def _registry(bridge: Bridge) -> Any:
    from py4j.java_gateway import JavaClass

    registry = bridge.jvm
    for part in _REGISTRY_CLASS.split("."):
        registry = getattr(registry, part)
    if not isinstance(registry, JavaClass):
        raise ReactiveStreamsError(
            f"{_REGISTRY_CLASS} is not on the Spark driver's classpath: build the session with "
            "reactive_streams.spark.configure(SparkSession.builder) before the SparkContext starts"
        )
    return registry


def _is_jvm_object(obj: object) -> bool:
    from py4j.java_gateway import JavaObject

    return isinstance(obj, JavaObject)


def _check_name(name: object) -> None:
    if not isinstance(name, str) or not name:
        raise TypeError(f"a stream name must be a non-empty str, got {name!r}")


def _check_free(registry: Any, name: str) -> None:
    if registry.isRegistered(name):
        raise ReactiveStreamsError(f"the name {name!r} is already registered: unregister it first")


def _call(what: str, method: Any, *args: Any) -> Any:
    """A registry call, with a Java exception turned into a `ReactiveStreamsError`."""
    try:
        return method(*args)
    except Exception as exc:
        java = getattr(exc, "java_exception", None)
        message = java.getMessage() if java is not None else str(exc)
        raise ReactiveStreamsError(f"{what}: {message}") from exc
