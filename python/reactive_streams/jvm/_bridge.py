"""`Bridge`: Reactive Streams across the Python/JVM boundary, on one of three backends."""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .._api import Processor, Publisher, Subscriber, Subscription
from .._closing import Closing
from .._errors import ReactiveStreamsError
from .._rules import describe
from ._backend import Backend
from ._classpath import ClasspathLike, classpath_entries
from ._errors import BridgeClosedError
from ._sink import JvmPublisher, Sink
from ._source import PublisherFactory, Source

__all__ = ["Bridge"]

logger = logging.getLogger("reactive_streams.jvm")

_SINK = "io.github.rspy.bridge.PythonSink"
_FACTORY = "io.github.rspy.bridge.PythonPublisherFactory"
_CLOSE_LISTENER = "io.github.rspy.bridge.BridgeRuntime$CloseListener"
DEFAULT_MAX_BATCH = 8192


class Bridge(Closing):
    """Connects Python publishers and subscribers with the JVM's ``org.reactivestreams`` (and
    ``java.util.concurrent.Flow``), with demand kept exact end to end.

    Make one with `Bridge.spark`, `Bridge.py4j` or `Bridge.jpype`; use it as a context manager
    or call `close`, which ends every live stream (``on_error(BridgeClosedError)`` on the Python
    side, cancel on the JVM side) and releases what the bridge owns.

    Elements cross in batches of at most ``max_batch``: values (None, bool, int, float, str,
    bytes, lists, tuples, dicts) by value, pickled; other JVM objects as references. A Python
    ``int`` arrives in Java as ``Integer``, ``Long`` or ``BigInteger`` by size, a tuple as
    ``Object[]``, a list as ``ArrayList``, a dict as ``HashMap``, bytes as ``byte[]``.

    A Python subscriber of a JVM publisher gets one ``on_next`` per element, unless it has an
    ``on_next_batch(items)`` method: then it gets each batch as a list, in one call, for bulk
    data (the demand it signals still counts elements).
    """

    def __init__(self, backend: Backend, *, max_batch: int = DEFAULT_MAX_BATCH) -> None:
        try:
            _check_max_batch(max_batch)
        except BaseException:
            backend.close()
            raise
        self._backend = backend
        self.max_batch = max_batch
        self.max_buffered = 0  # see the property's docs
        self._lock = threading.Lock()
        self._live: set[Sink | Source] = set()
        self._closed = False
        self._pool: ThreadPoolExecutor | None = None
        self._spark_watch: Any = None  # the SparkContext listener of Bridge.spark, removed on close
        try:
            self._runtime = backend.new_runtime(max_batch)
        except BaseException:
            backend.close()
            raise
        backend.on_death(self._jvm_died)

    # Construction.

    @classmethod
    def spark(cls, spark: Any, *, max_batch: int = DEFAULT_MAX_BATCH) -> Bridge:
        """A bridge inside the Spark driver's own Py4J gateway (no new port; its auth secret
        and callback server). The bridge jars must be on the driver's classpath: build the
        session with ``reactive_streams.spark.configure(SparkSession.builder)``. Spark Connect
        sessions have no JVM gateway and are refused with a clear error."""
        from ._py4j import Py4JBackend

        _check_max_batch(max_batch)
        bridge = cls(Py4JBackend.from_spark(spark), max_batch=max_batch)
        bridge._end_with_spark(spark)
        return bridge

    @classmethod
    def py4j(
        cls,
        classpath: ClasspathLike = (),
        *,
        max_batch: int = DEFAULT_MAX_BATCH,
        java: str | os.PathLike[str] = "java",
        jvm_options: str | Iterable[str] = (),
    ) -> Bridge:
        """A bridge to a JVM it starts and owns, through a standalone Py4J gateway (pinned
        threads, as PySpark's, with an auth secret). The JVM stops on `close` or when this
        process exits. Every argument is checked before the JVM starts.

        Args:
            classpath: jars, folders or glob patterns besides the bridge's own; a single path
                is one entry (see `classpath_entries`).
            max_batch: most elements in one crossing, >= 1.
            java: the ``java`` executable, by name on ``PATH`` or by path.
            jvm_options: options for ``java`` (``["-Xmx1g"]``); a single str is split as a
                shell would (``"-Xmx1g -Dkey=value"``).
        """
        from ._py4j import Py4JBackend

        _check_max_batch(max_batch)
        jars = classpath_entries(classpath)
        command = _java_command(java)
        options = _jvm_options(jvm_options)
        return cls(Py4JBackend.standalone(jars, command, options), max_batch=max_batch)

    @classmethod
    def jpype(cls, classpath: ClasspathLike = (), *, max_batch: int = DEFAULT_MAX_BATCH) -> Bridge:
        """A bridge to this process's JVM through JPype, started (with the bridge's jars and
        ``classpath``: jars, folders or glob patterns, a single path being one entry) if it is
        not running yet. `close` leaves the JVM running: JPype cannot start a second one in a
        process. Every argument is checked before the JVM starts."""
        from ._jpype import JPypeBackend

        _check_max_batch(max_batch)
        return cls(JPypeBackend.join(classpath_entries(classpath)), max_batch=max_batch)

    # The JVM.

    @property
    def jvm(self) -> Any:
        """A package view of the JVM (``bridge.jvm.java.lang.System``), as ``spark._jvm``."""
        return self._backend.jvm

    @property
    def runtime(self) -> Any:
        """The Java ``BridgeRuntime`` (``liveAdapters()`` counts the JVM side's live streams)."""
        return self._runtime

    @property
    def backend(self) -> str:
        """``"spark"``, ``"py4j"`` or ``"jpype"``."""
        return self._backend.name

    @property
    def closed(self) -> bool:
        """Whether `close` was called or the JVM died."""
        return self._closed

    max_buffered: int
    """The most elements the Python side ever held for one stream (a batch being delivered, or
    elements waiting to be pushed to Java); never more than the demand signalled. The JVM side's
    counterpart is ``bridge.runtime.maxQueued()``."""

    @property
    def live_streams(self) -> int:
        """Streams whose Python side has not ended."""
        with self._lock:
            return len(self._live)

    # The four directions.

    def from_jvm(self, java_publisher: Any) -> Publisher[Any]:
        """A JVM ``org.reactivestreams.Publisher`` or ``java.util.concurrent.Flow.Publisher``
        as a Python `Publisher`: each Python subscriber gets its own JVM subscription, fed in
        batches, never more than it requested (§1.1)."""
        self._check_open()
        if not self._backend.is_jvm_object(java_publisher) or not self._runtime.isPublisher(java_publisher):
            hint = "; it is a Python publisher already" if isinstance(java_publisher, Publisher) else ""
            raise TypeError(
                "from_jvm() needs a JVM org.reactivestreams.Publisher or Flow.Publisher, "
                f"got {describe(java_publisher)}{hint}"
            )
        return JvmPublisher(self, java_publisher)

    def to_jvm(self, publisher: Publisher[Any], *, flow: bool = False) -> Any:
        """A Python `Publisher` as a Java ``org.reactivestreams.Publisher`` (or, with
        ``flow=True``, a ``Flow.Publisher``). Each Java subscriber gets its own Python
        subscription; Python is asked for exactly what the Java subscriber requests."""
        self._check_open()
        if not isinstance(publisher, Publisher):
            hint = ""
            if self._backend.is_jvm_object(publisher):
                hint = "; it is a JVM object already"
            elif isinstance(publisher, Iterable) and not isinstance(publisher, (str, bytes)):
                hint = "; for the elements of a list or another iterable, pass rs.from_iterable(...)"
            raise TypeError(f"to_jvm() needs a reactive_streams.Publisher, got {describe(publisher)}{hint}")
        java = self._runtime.fromPython(self._backend.proxy(PublisherFactory(self, publisher), _FACTORY))
        return self._runtime.toFlowPublisher(java) if flow else java

    def subscriber_to_jvm(self, subscriber: Subscriber[Any], *, flow: bool = False) -> Any:
        """A Python `Subscriber` as a Java ``org.reactivestreams.Subscriber`` (or
        ``Flow.Subscriber``), for one subscription (§2.5 cancels a second)."""
        self._check_open()
        if not isinstance(subscriber, Subscriber):
            raise TypeError(f"subscriber_to_jvm() needs a reactive_streams.Subscriber, got {subscriber!r}")
        java = self._new_sink(subscriber)
        return self._runtime.toFlowSubscriber(java) if flow else java

    def processor_to_jvm(self, processor: Processor[Any, Any], *, flow: bool = False) -> Any:
        """A Python `Processor` as a Java ``org.reactivestreams.Processor`` (or
        ``Flow.Processor``): its subscriber side fed from Java, its publisher side read by Java."""
        self._check_open()
        if not isinstance(processor, Processor):
            raise TypeError(f"processor_to_jvm() needs a reactive_streams.Processor, got {processor!r}")
        java_input = self._new_sink(processor)
        java_output = self._runtime.fromPython(
            self._backend.proxy(PublisherFactory(self, processor), _FACTORY)
        )
        java = self._runtime.processor(java_input, java_output)
        return self._runtime.toFlowProcessor(java) if flow else java

    # Closing.

    def close(self) -> None:
        """End every live stream and release the bridge's proxies, threads and sockets; for
        `Bridge.py4j`, stop its JVM. Idempotent."""
        self._shutdown(BridgeClosedError("the bridge was closed"), close_runtime=True)

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{self.live_streams} live streams"
        return f"<Bridge {self._backend.name}, {state}>"

    # Internals shared with the adapters.

    def _new_sink(self, subscriber: Subscriber[Any]) -> Any:
        sink = Sink(self, subscriber)
        java = self._runtime.toPython(self._backend.proxy(sink, _SINK))
        sink.attach(java)
        self._track(sink)
        return java

    def _subscribe_jvm(self, java_publisher: Any, subscriber: Subscriber[Any]) -> None:
        try:
            self._check_open()
            java = self._new_sink(subscriber)
            self._runtime.subscribe(java_publisher, java)
        except BridgeClosedError as exc:
            _fail_subscriber(subscriber, exc)
        except Exception as exc:
            if not self._backend.call_failed(exc):
                raise
            _fail_subscriber(subscriber, BridgeClosedError(f"the JVM is unreachable: {exc}"))

    def _note_buffered(self, count: int) -> None:
        if count > self.max_buffered:
            self.max_buffered = count  # a statistic: a lost race only under-reports by a little

    def _track(self, adapter: Sink | Source) -> None:
        with self._lock:
            self._live.add(adapter)

    def _forget(self, adapter: Sink | Source) -> None:
        with self._lock:
            self._live.discard(adapter)

    def _submit(self, task: Callable[[], None]) -> None:
        with self._lock:
            if self._pool is None and not self._closed:
                self._pool = ThreadPoolExecutor(4, thread_name_prefix="rs-bridge-push")
            pool = self._pool
        if pool is None:
            return
        try:
            pool.submit(task)
        except RuntimeError:  # shut down meanwhile: close() ends the stream
            pass

    def _check_open(self) -> None:
        if self._closed:
            raise BridgeClosedError("this bridge is closed")

    def _end_with_spark(self, spark: Any) -> None:
        """When the SparkContext stops, end this bridge's streams with ``on_error`` (the JVM
        lives on: PySpark keeps its gateway)."""
        lifecycle = self.jvm.io.github.rspy.spark.SparkLifecycle
        try:
            self._runtime.addCloseListener(self._backend.proxy(_CloseListener(self), _CLOSE_LISTENER))
            self._spark_watch = lifecycle.watch(self._runtime, spark._jsc.sc())
        except Exception:  # the Spark connectors' jar is not on the classpath: nothing to watch
            logger.debug("the SparkContext's stop will not end this bridge's streams", exc_info=True)

    def _jvm_died(self, reason: str) -> None:
        logger.warning("the JVM behind %r died: %s", self, reason)
        self._shutdown(BridgeClosedError(f"the JVM died: {reason}"), close_runtime=False)

    def _shutdown(self, error: BridgeClosedError, *, close_runtime: bool) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            live = list(self._live)
            pool, self._pool = self._pool, None
            watch, self._spark_watch = self._spark_watch, None
        if watch is not None and close_runtime:  # (else Spark is stopping it, or the JVM is gone)
            try:
                watch.close()
            except Exception:  # the SparkContext or its JVM is gone: nothing is registered any more
                logger.debug("removing the SparkContext listener failed", exc_info=True)
        if close_runtime:
            try:
                self._runtime.close()
            except Exception as exc:
                if not self._backend.call_failed(exc):
                    logger.exception("closing the JVM side of the bridge failed")
        for adapter in live:
            adapter.abort(error)
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        self._backend.close()


class _CloseListener:
    """Hears the JVM side close for a reason of its own (the SparkContext stopped)."""

    class Java:
        implements = (_CLOSE_LISTENER,)

    def __init__(self, bridge: Bridge) -> None:
        self._bridge = bridge

    def closed(self, reason: str) -> None:
        self._bridge._shutdown(BridgeClosedError(str(reason)), close_runtime=False)


def _check_max_batch(max_batch: object) -> None:
    if isinstance(max_batch, bool) or not isinstance(max_batch, int) or max_batch < 1:
        raise ValueError(f"max_batch must be an int >= 1 (elements per crossing), got {max_batch!r}")


def _java_command(java: object) -> str:
    """The ``java`` executable, found before anything starts."""
    if not isinstance(java, (str, os.PathLike)) or isinstance(java, (bytes, bytearray)):
        raise TypeError(f"java must be the java executable's name or path (a str), got {describe(java)}")
    command = os.fspath(java)
    if shutil.which(command) is None:
        raise ReactiveStreamsError(
            f"java executable not found: {command!r}; install a JDK 17 (PySpark 4 needs it too) or "
            "pass java='/path/to/bin/java'"
        )
    return command


def _jvm_options(options: object) -> list[str]:
    if isinstance(options, str):
        return shlex.split(options)
    if isinstance(options, Iterable) and not isinstance(options, (bytes, bytearray)):
        chosen = list(options)
        if all(isinstance(option, str) for option in chosen):
            return chosen
    raise TypeError(f"jvm_options must be a list of str (or one str), got {describe(options)}")


def _fail_subscriber(subscriber: Subscriber[Any], error: BaseException) -> None:
    """§1.9: even a refusal starts with on_subscribe."""
    subscriber.on_subscribe(_NoSubscription())
    subscriber.on_error(error)


class _NoSubscription(Subscription):
    def request(self, n: int) -> None:
        pass

    def cancel(self) -> None:
        pass
