"""`Bridge`: Reactive Streams across the Python/JVM boundary, on one of three backends."""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterable
from typing import Any

from .._api import Processor, Publisher, Subscriber
from .._closing import Closing
from .._errors import ReactiveStreamsError
from .._gauges import StreamState
from .._rules import describe
from ._arrow import available as arrow_available
from ._arrow import schema_bytes
from ._backend import Backend, JavaInterface
from ._classpath import ClasspathLike, classpath_entries
from ._errors import BridgeClosedError
from ._from_jvm import JvmPublisher, PythonSink, to_python_subscriber
from ._host import CloseListener, StreamHost
from ._settings import DEFAULT_LINGER, DEFAULT_MAX_BATCH, DEFAULT_THREADS, BridgeSettings
from ._to_jvm import PythonPublisherFactory
from ._view import JvmView

__all__ = ["Bridge"]

logger = logging.getLogger("reactive_streams.jvm")


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

    def __init__(self, backend: Backend, settings: BridgeSettings | None = None) -> None:
        self.settings = settings if settings is not None else BridgeSettings()
        self._lock = threading.Lock()
        self._close_callbacks: list[Callable[[], object]] | None = []  # None once close() took them
        runtime: Any = None
        channel = None
        try:
            runtime = backend.new_runtime(self.settings)
            channel = backend.open_data_channel(runtime) if self.settings.data_channel else None
            arrow = bool(runtime.useArrowRows(arrow_available()))  # where both sides can
            self._host = StreamHost(backend, self.settings, runtime, channel)
            self._host.arrow = arrow
            self._host.arrow_c_data = arrow and bool(runtime.useArrowCData(backend.in_process))
            runtime.addCloseListener(backend.proxy(CloseListener(self._host), JavaInterface.CLOSE_LISTENER))
        except BaseException:
            if channel is not None:
                channel.close()
            if runtime is not None:
                try:
                    runtime.close()
                except Exception:
                    logger.debug("closing a runtime that did not start failed", exc_info=True)
            backend.close()
            raise
        backend.on_death(self._jvm_died)

    @classmethod
    def spark(
        cls,
        spark: Any,
        *,
        max_batch: int = DEFAULT_MAX_BATCH,
        demand_window: int | None = None,
        threads: int = DEFAULT_THREADS,
        data_channel: bool = True,
        linger: float = DEFAULT_LINGER,
    ) -> Bridge:
        """A bridge inside the Spark driver's own Py4J gateway (no new port; its auth secret
        and callback server), whose streams end when the SparkContext stops. The bridge jars
        must be on the driver's classpath: build the session with
        ``reactive_streams.spark.configure(SparkSession.builder)``. Spark Connect sessions have
        no JVM gateway and are refused with a clear error."""
        from ._spark_gateway import driver_gateway, watch_spark_context

        settings = BridgeSettings(max_batch, demand_window, threads, data_channel, linger)
        bridge = cls.py4j_gateway(driver_gateway(spark), settings, name="spark")
        stop_watching = watch_spark_context(bridge.runtime, spark)  # ends its streams when Spark stops
        if stop_watching is not None:
            bridge.on_close(stop_watching)
        return bridge

    @classmethod
    def py4j_gateway(
        cls, gateway: Any, settings: BridgeSettings | None = None, *, name: str = "gateway"
    ) -> Bridge:
        """A bridge on a Py4J gateway that stays yours (a pinned-thread ``ClientServer`` whose
        callback server is started, as PySpark's): `close` ends the bridge's streams and
        leaves the gateway and its JVM running. ``name`` is what `backend` reports."""
        from ._py4j import Py4JBackend

        settings = settings if settings is not None else BridgeSettings()
        return cls(Py4JBackend.on_gateway(gateway, name), settings)

    @classmethod
    def py4j(
        cls,
        classpath: ClasspathLike = (),
        *,
        max_batch: int = DEFAULT_MAX_BATCH,
        demand_window: int | None = None,
        threads: int = DEFAULT_THREADS,
        java: str | os.PathLike[str] = "java",
        jvm_options: str | Iterable[str] = (),
        data_channel: bool = True,
        linger: float = DEFAULT_LINGER,
    ) -> Bridge:
        """A bridge to a JVM it starts and owns, through a standalone Py4J gateway (pinned
        threads, as PySpark's, with an auth secret). The JVM stops on `close` or when this
        process exits. Every argument is checked before the JVM starts.

        Args:
            classpath: jars, folders or glob patterns besides the bridge's own; a single path
                is one entry (see `classpath_entries`).
            max_batch, demand_window, threads, data_channel, linger: see `BridgeSettings`.
            java: the ``java`` executable, by name on ``PATH`` or by path.
            jvm_options: options for ``java`` (``["-Xmx1g"]``); a single str is split as a
                shell would (``"-Xmx1g -Dkey=value"``).
        """
        from ._py4j import Py4JBackend

        settings = BridgeSettings(max_batch, demand_window, threads, data_channel, linger)
        jars = classpath_entries(classpath)
        command = _java_command(java)
        options = _jvm_options(jvm_options)
        return cls(Py4JBackend.standalone(jars, command, options), settings)

    @classmethod
    def jpype(
        cls,
        classpath: ClasspathLike = (),
        *,
        max_batch: int = DEFAULT_MAX_BATCH,
        demand_window: int | None = None,
        threads: int = DEFAULT_THREADS,
        linger: float = DEFAULT_LINGER,
    ) -> Bridge:
        """A bridge to this process's JVM through JPype, started (with the bridge's jars and
        ``classpath``: jars, folders or glob patterns, a single path being one entry) if it is
        not running yet. `close` leaves the JVM running: JPype cannot start a second one in a
        process. Every argument is checked before the JVM starts."""
        from ._jpype import JPypeBackend

        settings = BridgeSettings(max_batch, demand_window, threads, linger=linger)
        return cls(JPypeBackend.join(classpath_entries(classpath)), settings)

    @property
    def jvm(self) -> Any:
        """A package view of the JVM (``bridge.jvm.java.lang.System``), as ``spark._jvm``.

        A class that is not on the JVM's classpath raises `JvmClassNotFoundError` (also an
        ``AttributeError`` and a ``TypeError``), naming the classpath and how to add to it: on
        JPype when it is reached, on Py4J (which takes it for a package) when it is called.
        """
        return JvmView(self._host.backend)

    @property
    def runtime(self) -> Any:
        """The Java ``BridgeRuntime`` (``liveAdapters()`` counts the JVM side's live streams)."""
        return self._host.runtime

    @property
    def backend(self) -> str:
        """``"spark"``, ``"py4j"`` or ``"jpype"``."""
        return self._host.backend.name

    @property
    def jvm_process(self) -> subprocess.Popen[bytes] | None:
        """The JVM's process for `Bridge.py4j` (which started it), else None."""
        return self._host.backend.process

    @property
    def max_batch(self) -> int:
        """Most elements in one crossing: ``settings.max_batch``."""
        return self.settings.max_batch

    @property
    def closed(self) -> bool:
        """Whether `close` was called, the JVM side closed the bridge's runtime (the SparkContext
        of `Bridge.spark` stopped), or the JVM died."""
        return self._host.closed

    @property
    def max_buffered(self) -> int:
        """The most elements the Python side ever held for one stream (a batch being delivered,
        or elements waiting to be pushed to Java); never more than the demand signalled. The JVM
        side's counterpart is ``bridge.runtime.maxQueued()``."""
        return self._host.max_buffered

    @property
    def live_streams(self) -> int:
        """Streams whose Python side has not ended."""
        return self._host.live_count

    def describe(self) -> list[StreamState]:
        """Every live stream of this bridge as a `reactive_streams.StreamState`: JVM → Python
        (``kind`` ``"from_jvm"``: the elements the JVM side holds for the Python subscriber, its
        demand not yet met, and whether it waits on the JVM publisher or on the subscriber) and
        Python → JVM (``"to_jvm"``: what Python holds for the Java subscriber, its demand not yet
        met). A stuck stream names its side, and since when (``waiting_since``). The JVM side's
        own account, as text: ``bridge.runtime.describe()``."""
        states = []
        for adapter in self._host.adapters():
            state_of = getattr(adapter, "stream_state", None)
            state = state_of() if state_of is not None else None
            if state is not None:
                states.append(state)
        return states

    def from_jvm(self, java_publisher: Any, *, schema: Any = None) -> Publisher[Any]:
        """A JVM ``org.reactivestreams.Publisher`` or ``java.util.concurrent.Flow.Publisher``
        as a Python `Publisher`: each Python subscriber gets its own JVM subscription, fed in
        batches, never more than it requested (§1.1).

        Rows (``Object[]``, ``Map``, Java records, Spark's ``Row``) cross as Arrow record batches
        by default, with a schema inferred from each batch, and arrive as tuples, dicts or
        ``pyspark.sql.Row``s; see docs/bridge.md.

        Args:
            java_publisher: the JVM publisher.
            schema: a ``pyarrow.Schema`` every element must be a row of: each batch then crosses
                as Arrow with exactly these column names and types (JavaBeans too, by their
                getters). A row that does not fit it, a null in a column that is not nullable, or
                a value its column cannot hold ends the stream with ``on_error`` (a
                `JvmValueError` naming the row, counted from 0, and the column) after the rows
                before it, and cancels the JVM publisher. Needs pyarrow (``ImportError``
                otherwise); anything but a ``pyarrow.Schema`` is a ``TypeError``, a type rows
                cannot carry a ``ValueError``.
        """
        self._host.check_open()
        backend = self._host.backend
        if not backend.is_jvm_object(java_publisher) or not self.runtime.isPublisher(java_publisher):
            hint = "; it is a Python publisher already" if isinstance(java_publisher, Publisher) else ""
            raise TypeError(
                "from_jvm() needs a JVM org.reactivestreams.Publisher or Flow.Publisher, "
                f"got {describe(java_publisher)}{hint}"
            )
        encoded = None if schema is None else self._row_schema(schema)
        return JvmPublisher(self._host, java_publisher, encoded)

    def to_jvm(self, publisher: Publisher[Any], *, flow: bool = False, schema: Any = None) -> Any:
        """A Python `Publisher` as a Java ``org.reactivestreams.Publisher`` (or, with
        ``flow=True``, a ``Flow.Publisher``). Each Java subscriber gets its own Python
        subscription; Python is asked for exactly what the Java subscriber requests.

        Args:
            publisher: the Python publisher.
            flow: make it a ``java.util.concurrent.Flow.Publisher``.
            schema: a ``pyarrow.Schema`` every element must be a row of (a tuple or list by
                position, a dict with exactly its column names as keys): each batch then crosses
                as Arrow, and Java gets ``Object[]``s or ``HashMap``s whose values have their
                column's Java type (``int32`` → ``Integer``, ``date32`` → ``LocalDate``, ...; see
                docs/bridge.md). A row that does not fit ends the Java subscriber's stream with
                ``onError(IllegalArgumentException)`` naming the row and column, after the rows
                before it, and cancels the Python publisher. Checked as `from_jvm` checks it.
        """
        self._host.check_open()
        if not isinstance(publisher, Publisher):
            hint = ""
            if self._host.backend.is_jvm_object(publisher):
                hint = "; it is a JVM object already"
            elif isinstance(publisher, Iterable) and not isinstance(publisher, (str, bytes)):
                hint = "; for the elements of a list or another iterable, pass rs.from_iterable(...)"
            raise TypeError(f"to_jvm() needs a reactive_streams.Publisher, got {describe(publisher)}{hint}")
        if schema is not None:
            self._row_schema(schema)
        java = self._from_python(publisher, schema)
        return self.runtime.toFlowPublisher(java) if flow else java

    def subscriber_to_jvm(self, subscriber: Subscriber[Any], *, flow: bool = False) -> Any:
        """A Python `Subscriber` as a Java ``org.reactivestreams.Subscriber`` (or
        ``Flow.Subscriber``), for one subscription (§2.5 cancels a second)."""
        self._host.check_open()
        if not isinstance(subscriber, Subscriber):
            raise TypeError(f"subscriber_to_jvm() needs a reactive_streams.Subscriber, got {subscriber!r}")
        java = to_python_subscriber(self._host, subscriber)
        return self.runtime.toFlowSubscriber(java) if flow else java

    def release_subscriber(self, subscriber: Subscriber[Any]) -> bool:
        """Let go of ``subscriber``'s `subscriber_to_jvm` proxies that no JVM publisher has
        subscribed, for one that never will be (handed to a JVM registry, say, and withdrawn
        before use): they signal nothing (no subscription began: §1.9 asks for none), cancel a
        subscription offered later (§2.5), and the bridge no longer holds the subscriber.
        Whether one was let go; a subscribed proxy's stream goes on and ends as streams do.
        Anything but a `Subscriber` is a ``TypeError``."""
        if not isinstance(subscriber, Subscriber):
            raise TypeError(f"release_subscriber() needs a reactive_streams.Subscriber, got {subscriber!r}")
        released = False
        for adapter in self._host.adapters():
            if isinstance(adapter, PythonSink) and adapter.delivers_to(subscriber):
                released = adapter.release_unsubscribed() or released
        return released

    def processor_to_jvm(self, processor: Processor[Any, Any], *, flow: bool = False) -> Any:
        """A Python `Processor` as a Java ``org.reactivestreams.Processor`` (or
        ``Flow.Processor``): its subscriber side fed from Java, its publisher side read by Java."""
        self._host.check_open()
        if not isinstance(processor, Processor):
            raise TypeError(f"processor_to_jvm() needs a reactive_streams.Processor, got {processor!r}")
        java_input = to_python_subscriber(self._host, processor)
        java = self.runtime.processor(java_input, self._from_python(processor))
        return self.runtime.toFlowProcessor(java) if flow else java

    def _row_schema(self, schema: object) -> bytes:
        """The ``schema=`` option, checked, in Arrow's IPC format."""
        encoded = schema_bytes(schema)
        if not self._host.arrow:
            raise ReactiveStreamsError(
                "schema= needs Arrow Java in the JVM, and this bridge's JVM cannot run it (not on its "
                "classpath, or java.nio not opened to it: --add-opens=java.base/java.nio=ALL-UNNAMED)"
            )
        return encoded

    def _from_python(self, publisher: Publisher[Any], schema: Any = None) -> Any:
        """A Java ``FromPythonPublisher`` of ``publisher``."""
        factory = PythonPublisherFactory(self._host, publisher, schema)
        return self.runtime.fromPython(self.proxy(factory, JavaInterface.PYTHON_PUBLISHER_FACTORY))

    def proxy(self, obj: Any, interface: str) -> Any:
        """``obj`` as an implementation of the Java ``interface`` (its fully qualified name), to
        pass to Java, on any backend: Java calls ``obj``'s methods by their Java names. The
        proxy holds ``obj`` for as long as Java holds the proxy.

        For interfaces the bridge does not cover itself, as the TCK's factory::

            factory = bridge.proxy(MyFactory(), "io.github.rspy.tck.TckFactory")
        """
        return self._host.backend.proxy(obj, interface)

    def box(self, value: Any) -> Any:
        """``value`` as an argument for a Java ``Object`` parameter, boxed as elements are (an
        int as ``Integer`` when it fits in 32 bits, else ``Long``), so that it equals in Java the
        same value crossing in a stream, on any backend."""
        return self._host.backend.box(value)

    def error_for_java(self, exc: BaseException) -> BaseException:
        """What to raise from a Python method that Java called through a `proxy`, so that Java
        gets ``exc`` as an exception with its Python type, message and traceback, on any
        backend: ``raise bridge.error_for_java(exc) from exc``."""
        return self._host.backend.error_for_java(exc)

    def on_close(self, callback: Callable[[], object]) -> None:
        """Call ``callback()`` once when `close` closes this bridge, before the JVM side of its
        streams ends: to release what you tied to the bridge (``Bridge.spark`` removes its
        SparkContext listener this way). Callbacks run in the order they were added; one that
        raises is logged and the others still run. They do not run when the bridge ended
        without `close` (its JVM died, or the JVM side closed it: its SparkContext stopped).

        Raises:
            BridgeClosedError: the bridge is closed already.
        """
        with self._lock:
            if self._close_callbacks is not None and not self._host.closed:
                self._close_callbacks.append(callback)
                return
        raise BridgeClosedError("this bridge is closed")

    def close(self) -> None:
        """End every live stream and release the bridge's proxies, threads and sockets; for
        `Bridge.py4j`, stop its JVM. Idempotent."""
        self._host.close(BridgeClosedError("the bridge was closed"), release=self._release)
        self._host.backend.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self.live_streams} live streams"
        return f"<Bridge {self.backend}, {state}>"

    def _release(self) -> None:
        """The first part of `close`: the on_close callbacks, then the JVM side's streams."""
        with self._lock:
            callbacks, self._close_callbacks = self._close_callbacks or [], None
        for callback in callbacks:
            try:
                callback()
            except Exception:
                logger.exception("an on_close callback of %r failed", self)
        try:
            self.runtime.close()
        except Exception as exc:
            if not self._host.backend.call_failed(exc):
                logger.exception("closing the JVM side of the bridge failed")

    def _jvm_died(self, reason: str) -> None:
        logger.warning("the JVM behind %r died: %s", self, reason)
        self._host.close(BridgeClosedError(f"the JVM died: {reason}"))
        self._host.backend.close()


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
