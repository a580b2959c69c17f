"""`jvm_publisher`: a publisher registered by name in the Spark driver's JVM, read from Python,
on a classic session (through the bridge) and on a Spark Connect session (through the plugin)."""

from __future__ import annotations

from typing import Any

from .._api import Publisher, Subscriber, Subscription
from .._demand import subscribe_and_start
from .._rules import describe, require_not_none, signal_terminal
from . import _connect
from ._checks import is_connect

__all__ = ["jvm_publisher"]


def jvm_publisher(spark: Any, name: str, arg: str | None = None) -> Publisher[Any]:
    """A cold publisher over the JVM publisher registered in the Spark driver as ``name``
    (``StreamRegistry.registerPublisher``, or ``registerPublisherFactory``, which makes one
    per subscriber from ``arg``), on a classic or a Spark Connect session alike.

    Each ``subscribe`` subscribes to the JVM publisher anew; ``request(n)`` reaches the JVM
    subscription as the same ``request(n)`` (§3.8), ``cancel`` as ``cancel`` (§3.5). On Spark
    Connect, elements must be values (numbers, strings, booleans, bytes, None, lists and maps of
    them) or rows (``Object[]`` and ``Map`` rows of values, Java records, Spark ``Row``s: they
    cross as Arrow and arrive as tuples, dicts and ``pyspark.sql.Row``s, as on a classic
    session); other Java objects cannot cross. An unknown name ends the subscription with
    ``on_error`` listing the registered names.

    On Spark Connect, the server never holds more than the outstanding demand; a stream whose
    server goes away ends with ``on_error(ConnectionLostError)`` within seconds, and a client
    that goes away has its server-side subscriptions cancelled within the server's idle
    timeout (``spark.rspy.connect.idleTimeout``, 10 s by default).

    Raises:
        TypeError: ``spark`` is not a SparkSession, or ``name``/``arg`` not strings.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"jvm_publisher(): name must be a non-empty str, got {describe(name)}")
    if arg is not None and not isinstance(arg, str):
        raise TypeError(f"jvm_publisher(): arg must be a str or None, got {describe(arg)}")
    if is_connect(spark):
        return _connect.JvmPublisher(spark, name, arg)
    from ._checks import require_classic_session, require_library_jars

    require_classic_session(spark, "jvm_publisher()")
    require_library_jars(spark, "jvm_publisher()")
    return _ClassicJvmPublisher(spark, name, arg)


class _ClassicJvmPublisher(Publisher[Any]):
    """Looks the name up at each subscribe, in the session's JVM, and bridges it."""

    def __init__(self, spark: Any, name: str, arg: str | None) -> None:
        self._spark, self._name, self._arg = spark, name, arg

    def subscribe(self, subscriber: Subscriber[Any]) -> None:
        """Subscribe ``subscriber`` to the named JVM publisher (§1.9); an unknown name is
        ``on_error`` after ``on_subscribe``."""
        require_not_none(subscriber, "subscriber", "§1.9")
        from ._convert import spark_error
        from ._session import bridge

        shared = bridge(self._spark)
        registry = self._spark.sparkContext._jvm.io.github.rspy.spark.StreamRegistry
        try:
            jpublisher = registry.publisher(self._name, self._arg)
        except Exception as exc:  # an unknown name, a failing factory: as a JvmError
            subscribe_and_start(subscriber, _Failed(subscriber, spark_error(exc)))
            return
        shared.from_jvm(jpublisher).subscribe(subscriber)


class _Failed(Subscription):
    """A subscription that only signals an error (§1.9: after ``on_subscribe``)."""

    def __init__(self, subscriber: Subscriber[Any], error: BaseException) -> None:
        self._subscriber: Subscriber[Any] | None = subscriber
        self._error = error

    def start(self) -> None:
        subscriber, self._subscriber = self._subscriber, None
        if subscriber is not None:
            signal_terminal(subscriber, self._error)

    def request(self, n: int) -> None:
        """Nothing to deliver (§3.6)."""

    def cancel(self) -> None:
        """§3.5: nothing to stop."""
        self._subscriber = None
