"""JVM → Python: Python subscribers of JVM publishers.

The Java ``ToPythonSubscriber`` subscribes to the JVM publisher and signals a `PythonSink`, a
batch per crossing: on JPype by calling it (it implements the Java interface ``PythonSink``),
and on the Py4J backends as frames on the bridge's data channel (`on_frame`). The sink calls the
Python subscriber, an ``on_next`` per element, and returns the demand requested during the
delivery with it (on JPype, as the call's result; on the channel, as a frame after it, and
within a large batch after each `FLUSH_EVERY` elements, so that the JVM's next batch is under way
while this one is delivered): no call back into the subscriber (§3.3). `JvmPublisher` is a JVM
publisher seen from Python; `to_python_subscriber` makes the Java subscriber for a Python one.
"""

from __future__ import annotations

import itertools
import struct
import threading
import time
from collections.abc import Callable
from typing import Any

from .._api import Publisher, Subscriber, Subscription
from .._demand import MAX_DEMAND, Demand, check_request, run_out
from .._errors import IllegalDemandError, ReactiveStreamsError
from .._gauges import StreamState, state_of
from .._rules import log_subscriber_failure, require_not_none, signal_terminal
from ._arrow import import_c_batches
from ._backend import JavaInterface
from ._channel import COMPLETE, ERROR, NEXT, OBJECTS, SUBSCRIBE
from ._codec import Batch, decode_batch
from ._errors import BridgeClosedError, error_from_java
from ._host import StreamHost

__all__ = ["JvmPublisher", "JvmSubscription", "PythonSink", "to_python_subscriber"]

FLUSH_EVERY = 1024  # a channel batch's demand goes back after each this many elements


class PythonSink:
    """The Python end of one Java ``ToPythonSubscriber``, which signals it one signal at a time:
    by calling it (JPype: the Java interface ``PythonSink``), or as frames on the data channel
    (`on_frame`, stream `stream_id`). Delivers to one Python subscriber."""

    def __init__(self, host: StreamHost, subscriber: Subscriber[Any], stream_id: int = 0) -> None:
        self._host = host
        self._subscriber: Subscriber[Any] | None = subscriber
        self._lock = threading.RLock()  # delivery vs. abort(): signals stay serial (§1.3)
        self._delivering = 0  # ident of the thread inside a callback
        self._pending = Demand()  # demand requested during that callback
        self._invalid: IllegalDemandError | None = None
        self.stream_id = stream_id  # on the data channel; 0 when Java calls this sink
        self.java: Any = None  # the ToPythonSubscriber, set by attach()
        self.subscription = JvmSubscription(self)
        # For `stream_state`, counted per request and per batch, never per element.
        self._requested_in_all = self._delivered = 0
        self._since = time.monotonic()  # the last delivery's end

    def stream_state(self) -> StreamState | None:
        """What the JVM side holds for the Python subscriber (arrived from the JVM publisher,
        not yet delivered), the subscriber's demand not yet met, and on whom the stream waits:
        the JVM publisher (the producer) or the Python subscriber. Asks the JVM for one count."""
        if self._subscriber is None or self.java is None:
            return None
        arrived = self._call_java(lambda java: int(java.arrived()))
        if arrived is None or self._subscriber is None:
            return None  # the JVM is gone, or the stream ended meanwhile
        return state_of(
            "from_jvm",
            f"stream from the JVM {self.stream_id or id(self):#x}",
            requested=self._requested_in_all,
            delivered=self._delivered,
            held=max(0, arrived - self._delivered),
            since=self._since,
        )

    def attach(self, java_subscriber: Any) -> None:
        self.java = java_subscriber

    def onSubscribe(self) -> int:
        with self._lock:
            subscriber = self._subscriber
            if subscriber is None:
                return 0
            self._delivering = threading.get_ident()
            try:
                subscriber.on_subscribe(self.subscription)
            except Exception as exc:
                self._subscriber_failed(subscriber, "on_subscribe", exc)
                return 0
            finally:
                self._delivering = 0
            return self._take_pending()

    def onNextBatch(self, payload: Any) -> int:
        return self._deliver_decoded(lambda: decode_batch(self._host.backend.bytes_of(payload)))

    def onNextObjects(self, items: Any) -> int:
        return self._deliver(self._host.backend.list_of(items))

    def onNextValues(self, payload: Any, references: Any) -> int:
        backend = self._host.backend  # the pickle's persistent ids index the references
        return self._deliver_decoded(
            lambda: decode_batch(backend.bytes_of(payload), backend.list_of(references))
        )

    def onNextArrowC(self, addresses: Any) -> int:
        return self._deliver_decoded(lambda: import_c_batches(list(addresses)))

    def onError(self, java_class: Any, message: Any, stack: Any, throwable: Any) -> None:
        error: BaseException = self._invalid or error_from_java(java_class, message, stack, throwable)
        self._terminate(error)

    def onComplete(self) -> None:
        self._terminate(None)

    def on_frame(self, kind: int, payload: bytes | bytearray) -> None:
        """One signal from the data channel, in order (§1.3); the demand requested meanwhile
        goes back as one frame (§3.3)."""
        if kind == NEXT:
            demand = self._deliver_decoded(lambda: decode_batch(payload))
        elif kind == OBJECTS:
            items = self._call_java(lambda java: java.takeObjects())  # waiting in Java, in order
            if items is None:
                return  # the JVM is gone: the stream has ended
            references = self._host.backend.list_of(items)
            if payload:  # a pickle whose persistent ids are indexes in those references
                demand = self._deliver_decoded(lambda: decode_batch(payload, references))
            else:  # the batch itself
                demand = self._deliver(references)
        elif kind == SUBSCRIBE:
            demand = self.onSubscribe()
        elif kind == COMPLETE:
            self._terminate(None)
            return
        elif kind == ERROR:
            java_class, message, stack = _texts(payload)
            throwable = self._call_java(lambda java: java.takeError())
            self.onError(java_class, message, stack, throwable)
            return
        else:
            raise ValueError(f"a frame of kind {kind!r} for a JVM -> Python stream")
        if demand:
            self._send_demand(demand)

    def _deliver(self, items: Batch) -> int:
        self._host.note_buffered(len(items))
        with self._lock:
            subscriber = self._subscriber
            if subscriber is None:
                return 0  # cancelled: late elements are dropped (§2.8)
            self._delivering = threading.get_ident()
            on_next_batch = getattr(subscriber, "on_next_batch", None)
            try:
                if on_next_batch is not None:  # the bulk path: a list, or rows unmade if it takes them
                    lazy = getattr(subscriber, "lazy_batches", False) and hasattr(items, "clear")
                    on_next_batch(items if lazy or isinstance(items, list) else list(items))
                elif self.stream_id and len(items) > FLUSH_EVERY:
                    self._deliver_flushing(subscriber, items)
                else:
                    # One on_next per element, looped in C. After a cancel from on_next the
                    # rest of the batch may still arrive: it was requested (§2.8), and a
                    # cancelled subscriber is expected to ignore it.
                    run_out(map(subscriber.on_next, items))
            except Exception as exc:
                self._subscriber_failed(subscriber, "on_next_batch" if on_next_batch else "on_next", exc)
                return 0
            finally:
                self._delivering = 0
                self._delivered += len(items)
                self._since = time.monotonic()
            return self._take_pending()

    def _deliver_flushing(self, subscriber: Subscriber[Any], items: Batch) -> None:
        """A large batch from the data channel, `FLUSH_EVERY` elements at a time, the demand
        requested meanwhile sent after each part: the JVM's next batch is then on its way while
        this one is delivered, instead of after it. A frame is the channel's own: nothing here
        calls the subscriber back (§3.3)."""
        elements = iter(items)
        for _ in range(0, len(items) - FLUSH_EVERY, FLUSH_EVERY):
            run_out(map(subscriber.on_next, itertools.islice(elements, FLUSH_EVERY)))
            if self._pending.outstanding and self._invalid is None and self._subscriber is not None:
                self._send_demand(self._take_pending())
        run_out(map(subscriber.on_next, elements))

    def _take_pending(self) -> int:
        if self._invalid is not None:
            return -1  # §3.9: Java ends the stream, then onError delivers self._invalid
        pending, self._pending.outstanding = self._pending.outstanding, 0
        return pending

    def _terminate(self, error: BaseException | None) -> None:
        with self._lock:
            subscriber = self._end()
            if subscriber is None:
                return  # §1.7
            signal_terminal(subscriber, error)

    def abort(self, error: BaseException) -> None:
        """End the stream from the Python side (the JVM is unreachable): ``on_error``."""
        self._terminate(error)

    def delivers_to(self, subscriber: Subscriber[Any]) -> bool:
        return self._subscriber is subscriber

    def release_unsubscribed(self) -> bool:
        """Let go of the subscriber if no JVM publisher subscribed the Java side, which from now
        on refuses one (§2.5): nothing is signalled (§1.9: no subscription began). Whether it was
        let go; a subscribed stream goes on."""
        with self._lock:
            if self._subscriber is None or not self._call_java(lambda java: java.abandon()):
                return False
            self._end()
            return True

    def shutdown(self) -> None:
        """The bridge closed or its JVM went: ``on_error(BridgeClosedError)``."""
        error = self._host.closed_error
        assert error is not None  # set before the host shuts its adapters down
        self._terminate(error)

    def request(self, n: int) -> None:
        checked = check_request(n)
        if isinstance(checked, IllegalDemandError):
            if self._subscriber is None:
                return  # §3.6
            self._invalid = checked
            if self._delivering != threading.get_ident():
                self._send_demand(-1)
            return
        self._requested_in_all = min(MAX_DEMAND, self._requested_in_all + checked)  # §3.17
        if self._delivering == threading.get_ident():
            self._pending.add(checked)  # added, never kept with max (§3.8); returned with the callback
        elif self._subscriber is not None:
            self._send_demand(checked)

    def cancel(self) -> None:
        if self._end() is not None:
            self._cancel_java()

    def _cancel_java(self) -> None:
        channel = self._host.channel if self.stream_id else None
        if channel is None:
            self._call_java(lambda java: java.cancel())
        else:
            self._on_channel(channel.cancel)

    def _deliver_decoded(self, decode_items: Callable[[], Batch]) -> int:
        """Decode a batch, then deliver it; a batch this side cannot read (bytes gone wrong, a
        batch whose memory its publisher changed under the copy) ends the stream at both ends:
        ``on_error`` here, a cancel there (§1.4: nothing is left hanging)."""
        try:
            items = decode_items()
        except Exception as exc:
            error = ReactiveStreamsError(f"a batch from the JVM could not be read: {exc}")
            error.__cause__ = exc
            with self._lock:
                subscriber = self._end()
                if subscriber is not None:
                    signal_terminal(subscriber, error)
            if subscriber is not None:
                self._cancel_java()
            return 0
        return self._deliver(items)

    def _send_demand(self, n: int) -> None:
        """Demand (or -1: a §3.9 error) to the Java subscriber, which acts on it in its drain."""
        channel = self._host.channel if self.stream_id else None
        if channel is None:
            self._call_java(lambda java: java.request(n))
        else:
            self._on_channel(lambda stream_id: channel.request(stream_id, n))

    def _end(self) -> Subscriber[Any] | None:
        subscriber, self._subscriber = self._subscriber, None  # §3.13
        if subscriber is not None:
            self._host.forget(self)
            if self.stream_id and self._host.channel is not None:
                self._host.channel.unregister(self.stream_id)  # late frames are dropped (§2.8)
        return subscriber

    def _subscriber_failed(self, subscriber: Subscriber[Any], method: str, exc: BaseException) -> None:
        log_subscriber_failure(subscriber, method, exc)  # first: logged before the JVM hears of it
        self.cancel()  # §2.13

    def _on_channel(self, send: Any) -> None:
        try:
            send(self.stream_id)
        except BridgeClosedError as exc:  # the bridge is closing, or its channel broke
            self.abort(self._host.closed_error or exc)

    def _call_java(self, call: Any) -> Any:
        java = self.java
        if java is None:
            return None
        try:
            return call(java)
        except Exception as exc:  # the JVM or the gateway is gone: end the stream here
            if not self._host.backend.call_failed(exc):
                raise
            self.abort(BridgeClosedError(f"the JVM is unreachable: {exc}"))
            return None


def _texts(payload: bytes | bytearray) -> list[str | None]:
    """An ERROR frame's class name, message and stack: each its int32 length (-1: null) and UTF-8."""
    texts: list[str | None] = []
    at = 0
    for _ in range(3):
        (length,) = struct.unpack_from("<i", payload, at)
        at += 4
        texts.append(None if length < 0 else bytes(payload[at : at + length]).decode("utf-8"))
        at += max(length, 0)
    return texts


class JvmSubscription(Subscription):
    """A Python subscriber's subscription to a JVM publisher."""

    __slots__ = ("_sink",)

    def __init__(self, sink: PythonSink) -> None:
        self._sink = sink

    def request(self, n: int) -> None:
        """Add demand; inside ``on_next`` it travels back with the batch (§3.3, §3.8, §3.9)."""
        self._sink.request(n)

    def cancel(self) -> None:
        """Cancel the JVM subscription and drop the subscriber (§3.5, §3.13)."""
        self._sink.cancel()


class JvmPublisher(Publisher[Any]):
    """A JVM ``org.reactivestreams.Publisher`` or ``Flow.Publisher`` seen from Python."""

    def __init__(self, host: StreamHost, java_publisher: Any, schema: bytes | None = None) -> None:
        self._host = host
        self.java_publisher = java_publisher
        self._schema = schema  # an Arrow schema (IPC) every element must be a row of, or None

    def subscribe(self, subscriber: Subscriber[Any]) -> None:
        """Subscribe ``subscriber`` to the JVM publisher through a new ``ToPythonSubscriber``
        (§1.9); a closed bridge or a dead JVM is signalled as ``on_error(BridgeClosedError)``."""
        require_not_none(subscriber, "subscriber", "§1.9")
        host = self._host
        try:
            host.check_open()
            java = to_python_subscriber(host, subscriber, self._schema)
            host.runtime.subscribe(self.java_publisher, java)
        except BridgeClosedError as exc:
            _fail_subscriber(subscriber, exc)
        except Exception as exc:
            if not host.backend.call_failed(exc):
                raise
            _fail_subscriber(subscriber, BridgeClosedError(f"the JVM is unreachable: {exc}"))

    def __repr__(self) -> str:
        return f"JvmPublisher({self.java_publisher!r})"


def to_python_subscriber(host: StreamHost, subscriber: Subscriber[Any], schema: bytes | None = None) -> Any:
    """A new Java ``ToPythonSubscriber`` that delivers to ``subscriber`` through a `PythonSink`:
    called by Java on JPype, framed on the data channel on the Py4J backends. With ``schema``
    (an Arrow schema in IPC format) every element must be a row of it, and crosses as Arrow."""
    channel = host.channel
    rows = () if schema is None else (host.backend.java_bytes(schema),)
    if channel is None:
        sink = PythonSink(host, subscriber)
        java = host.runtime.toPython(host.backend.proxy(sink, JavaInterface.PYTHON_SINK), *rows)
    else:
        sink = PythonSink(host, subscriber, channel.new_id())
        channel.register(sink.stream_id, sink)
        try:
            java = host.runtime.toPythonOnChannel(sink.stream_id, *rows)
        except BaseException:
            channel.unregister(sink.stream_id)
            raise
    sink.attach(java)
    host.track(sink)
    return java


def _fail_subscriber(subscriber: Subscriber[Any], error: BaseException) -> None:
    """§1.9: even a refusal starts with on_subscribe."""
    subscriber.on_subscribe(_NoSubscription())
    subscriber.on_error(error)


class _NoSubscription(Subscription):
    def request(self, n: int) -> None:
        pass

    def cancel(self) -> None:
        pass
