"""The Python halves of the bridge's adapters.

- `_Sink` implements the Java interface ``PythonSink``: the Java ``ToPythonSubscriber`` calls
  it, a batch per crossing, and it calls a Python subscriber, an ``on_next`` per element.
  Demand requested during a callback is returned with it: no crossing of its own (§3.3).
- `_Source` implements ``PythonSource``: it subscribes to a Python publisher for a Java
  subscriber and pushes what it receives to the Java ``FromPythonPublisher.Handle``, in
  batches, through one flush loop behind a work-in-progress counter (so pushes stay in order).
- `JvmPublisher` is a JVM publisher seen from Python.
"""

from __future__ import annotations

import collections
import pickle
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .._api import Publisher, Subscriber, Subscription
from .._errors import IllegalDemandError, NullElementError
from .._rules import add_demand, checked_demand, log_subscriber_failure, require_not_none, signal_terminal
from ._codec import decode, encode
from ._errors import BridgeClosedError, jvm_error, python_error_parts

if TYPE_CHECKING:
    from ._bridge import Bridge

__all__ = ["JvmPublisher", "PublisherFactory", "Sink", "Source"]

_VALUE_TYPES = frozenset({int, float, str, bytes, bytearray, bool, list, tuple, dict})
_consume: Callable[[Iterable[Any]], None] = collections.deque(maxlen=0).extend  # runs an iterator out, in C


class Sink:
    """Python side of ``ToPythonSubscriber``: delivers to one Python subscriber."""

    class Java:
        implements = ("io.github.rspy.bridge.PythonSink",)

    def __init__(self, bridge: Bridge, subscriber: Subscriber[Any]) -> None:
        self._bridge = bridge
        self._subscriber: Subscriber[Any] | None = subscriber
        self._lock = threading.RLock()  # delivery vs. abort(): signals stay serial (§1.3)
        self._delivering = 0  # ident of the thread inside a callback
        self._pending = 0  # demand requested during that callback
        self._invalid: IllegalDemandError | None = None
        self.java: Any = None  # the ToPythonSubscriber, set by attach()
        self.subscription = JvmSubscription(self)

    def attach(self, java_subscriber: Any) -> None:
        self.java = java_subscriber

    # PythonSink: called by the Java drain loop, one call at a time.

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
        return self._deliver(decode(self._bridge._backend.bytes_of(payload)))

    def onNextObjects(self, items: Any) -> int:
        return self._deliver(self._bridge._backend.list_of(items))

    def onError(self, java_class: Any, message: Any, stack: Any, throwable: Any) -> None:
        error: BaseException = self._invalid or jvm_error(java_class, message, stack, throwable)
        self._terminate(error)

    def onComplete(self) -> None:
        self._terminate(None)

    # The rest.

    def _deliver(self, items: Sequence[Any]) -> int:
        self._bridge._note_buffered(len(items))
        with self._lock:
            subscriber = self._subscriber
            if subscriber is None:
                return 0  # cancelled: late elements are dropped (§2.8)
            self._delivering = threading.get_ident()
            on_next_batch = getattr(subscriber, "on_next_batch", None)
            try:
                if on_next_batch is not None:
                    on_next_batch(items if isinstance(items, list) else list(items))  # the bulk path
                else:
                    # One on_next per element, looped in C. After a cancel from on_next the
                    # rest of the batch may still arrive: it was requested (§2.8), and a
                    # cancelled subscriber is expected to ignore it.
                    _consume(map(subscriber.on_next, items))
            except Exception as exc:
                self._subscriber_failed(subscriber, "on_next_batch" if on_next_batch else "on_next", exc)
                return 0
            finally:
                self._delivering = 0
            return self._take_pending()

    def _take_pending(self) -> int:
        if self._invalid is not None:
            return -1  # §3.9: Java ends the stream, then onError delivers self._invalid
        pending, self._pending = self._pending, 0
        return pending

    def _terminate(self, error: BaseException | None) -> None:
        with self._lock:
            subscriber = self._end()
            if subscriber is None:
                return  # §1.7
            signal_terminal(subscriber, error)

    def abort(self, error: BaseException) -> None:
        """End the stream from the Python side (bridge closed, JVM gone): ``on_error``."""
        self._terminate(error)

    def request(self, n: int) -> None:
        checked = checked_demand(n)
        if isinstance(checked, IllegalDemandError):
            if self._subscriber is None:
                return  # §3.6
            self._invalid = checked
            if self._delivering != threading.get_ident():
                self._call_java(lambda java: java.request(-1))
            return
        if self._delivering == threading.get_ident():
            self._pending = add_demand(self._pending, checked)  # returned with the callback
        elif self._subscriber is not None:
            self._call_java(lambda java: java.request(checked))

    def cancel(self) -> None:
        if self._end() is not None:
            self._call_java(lambda java: java.cancel())

    def _end(self) -> Subscriber[Any] | None:
        subscriber, self._subscriber = self._subscriber, None  # §3.13
        if subscriber is not None:
            self._bridge._forget(self)
        return subscriber

    def _subscriber_failed(self, subscriber: Subscriber[Any], method: str, exc: BaseException) -> None:
        self.cancel()  # §2.13
        log_subscriber_failure(subscriber, method, exc)

    def _call_java(self, call: Any) -> None:
        java = self.java
        if java is None:
            return
        try:
            call(java)
        except Exception as exc:  # the JVM or the gateway is gone: end the stream here
            if not self._bridge._backend.call_failed(exc):
                raise
            self.abort(BridgeClosedError(f"the JVM is unreachable: {exc}"))


class JvmSubscription(Subscription):
    """A Python subscriber's subscription to a JVM publisher."""

    __slots__ = ("_sink",)

    def __init__(self, sink: Sink) -> None:
        self._sink = sink

    def request(self, n: int) -> None:
        """Add demand; inside ``on_next`` it travels back with the batch (§3.3, §3.8, §3.9)."""
        self._sink.request(n)

    def cancel(self) -> None:
        """Cancel the JVM subscription and drop the subscriber (§3.5, §3.13)."""
        self._sink.cancel()


class JvmPublisher(Publisher[Any]):
    """A JVM ``org.reactivestreams.Publisher`` or ``Flow.Publisher`` seen from Python."""

    def __init__(self, bridge: Bridge, java_publisher: Any) -> None:
        self._bridge = bridge
        self.java_publisher = java_publisher

    def subscribe(self, subscriber: Subscriber[Any]) -> None:
        """Subscribe ``subscriber`` to the JVM publisher (§1.9); a closed bridge or a dead JVM
        is signalled as ``on_error(BridgeClosedError)``."""
        require_not_none(subscriber, "subscriber", "§1.9")
        self._bridge._subscribe_jvm(self.java_publisher, subscriber)

    def __repr__(self) -> str:
        return f"JvmPublisher({self.java_publisher!r})"


class PublisherFactory:
    """Python side of ``FromPythonPublisher``: one `Source` per Java subscriber."""

    class Java:
        implements = ("io.github.rspy.bridge.PythonPublisherFactory",)

    def __init__(self, bridge: Bridge, publisher: Publisher[Any]) -> None:
        self._bridge = bridge
        self._publisher = publisher

    def subscribe(self, handle: Any) -> Any:
        source = Source(self._bridge, handle)
        self._bridge._track(source)
        proxy = self._bridge._backend.proxy(source.forwarder, "io.github.rspy.bridge.PythonSource")
        try:
            self._publisher.subscribe(source)
        except Exception as exc:  # the Python publisher broke §1.9 by raising
            source.on_error(exc)
        return proxy


class _SourceForwarder:
    """What the JVM holds of a `Source`: cleared when the stream ends, so that the Source lives
    exactly as long as the Python publisher holds it (see ``pythonReleased`` in Java)."""

    class Java:
        implements = ("io.github.rspy.bridge.PythonSource",)

    def __init__(self, source: Source) -> None:
        self.source: Source | None = source

    def request(self, n: int) -> None:
        source = self.source
        if source is not None:
            source.request(n)

    def cancel(self) -> None:
        source, self.source = self.source, None
        if source is not None:
            source.cancel()


def _python_released(handle: Any) -> None:
    """A Source was garbage-collected: let the JVM drop its subscriber (§3.13)."""
    try:
        handle.pythonReleased()
    except Exception:  # the JVM or the bridge is gone: nothing is held there any more
        pass


class Source(Subscriber[Any]):
    """Subscribes to a Python publisher on behalf of a Java subscriber and pushes to it."""

    _COMPLETE = object()

    def __init__(self, bridge: Bridge, handle: Any) -> None:
        self._bridge = bridge
        self._handle: Any = handle
        self._lock = threading.Lock()
        self._upstream: Subscription | None = None
        self._early_demand = 0  # requested before the publisher's on_subscribe
        self._cancelled = False
        self._buffer: list[Any] = []
        self._terminal: Any = None  # _COMPLETE or the error
        self._wip = 0
        self._requesting = 0  # ident of the thread inside request()
        self.forwarder = _SourceForwarder(self)
        release = weakref.finalize(self, _python_released, handle)
        release.atexit = False

    # PythonSource: called by the Java drain loop.

    def request(self, n: int) -> None:
        n = int(n)  # a plain int: JPype passes Java's long as its own int subclass
        with self._lock:
            upstream = self._upstream
            if upstream is None:
                self._early_demand = add_demand(self._early_demand, n)
                return
        self._requesting = threading.get_ident()
        try:
            upstream.request(n)  # a synchronous publisher emits into the buffer right here
        finally:
            self._requesting = 0
        self.flush()

    def cancel(self) -> None:
        with self._lock:
            upstream, self._upstream = self._upstream, None
            self._cancelled = True
            self._buffer = []
        if upstream is not None:
            upstream.cancel()
        self._release()

    # Subscriber: signals from the Python publisher.

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "subscription", "§2.13")
        with self._lock:
            refuse = self._upstream is not None or self._cancelled
            if not refuse:
                self._upstream = subscription
            early, self._early_demand = self._early_demand, 0
        if refuse:
            subscription.cancel()  # §2.5, or the Java side already cancelled
        elif early:
            self.request(early)

    def on_next(self, item: Any) -> None:
        if item is None:  # §2.13: raise, and end the Java side's stream too, so it cannot hang
            error = NullElementError("§2.13: the Python publisher emitted None")
            self._end(error)
            raise error
        with self._lock:
            if self._cancelled:
                return
            self._buffer.append(item)
            buffered = len(self._buffer)
        if buffered > self._bridge.max_buffered:
            self._bridge._note_buffered(buffered)
        if self._requesting != threading.get_ident():
            self._bridge._submit(self.flush)

    def on_error(self, exc: BaseException) -> None:
        require_not_none(exc, "error", "§2.13")
        self._end(exc)

    def on_complete(self) -> None:
        self._end(self._COMPLETE)

    def _end(self, terminal: Any) -> None:
        with self._lock:
            if self._cancelled or self._terminal is not None:
                return
            self._terminal = terminal
        if self._requesting != threading.get_ident():
            self._bridge._submit(self.flush)

    # The flush loop: pushes in order, one pusher at a time.

    def flush(self) -> None:
        with self._lock:
            self._wip += 1
            if self._wip != 1:
                return
        missed = 1
        while True:
            with self._lock:
                batch, self._buffer = self._buffer, []
                terminal = self._terminal
                handle = None if self._cancelled else self._handle
            if handle is not None:
                try:
                    self._push(handle, batch, terminal)
                except Exception as exc:
                    self._push_failed(exc)
            with self._lock:
                self._wip -= missed
                missed = self._wip
                if missed == 0:
                    return

    def _push(self, handle: Any, elements: list[Any], terminal: Any) -> None:
        size = self._bridge.max_batch  # a pickle per chunk: Pyrolite slows down on huge lists
        for start in range(0, len(elements), size):
            if not self._push_batch(handle, elements[start : start + size]):
                return
        if terminal is not None:
            self._release()
            if terminal is self._COMPLETE:
                handle.pushComplete()
            else:
                handle.pushError(*python_error_parts(terminal))

    def _push_batch(self, handle: Any, batch: list[Any]) -> bool:
        backend = self._bridge._backend
        if set(map(type, batch)) <= _VALUE_TYPES:
            try:
                payload = encode(batch)
            except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
                handle.pushObjects(backend.object_array(batch))  # JVM objects nested in values
            else:
                handle.push(backend.java_bytes(payload))
        elif all(backend.is_jvm_object(x) or type(x) in _VALUE_TYPES for x in batch):
            handle.pushObjects(backend.object_array(batch))
        else:
            bad = next(x for x in batch if not backend.is_jvm_object(x) and type(x) not in _VALUE_TYPES)
            self._fail_unsendable(handle, bad)
            return False
        return True

    def _fail_unsendable(self, handle: Any, item: Any) -> None:
        error = TypeError(
            f"an element of type {type(item).__qualname__} cannot cross to the JVM: elements must be "
            "values (None, bool, int, float, str, bytes, and lists, tuples and dicts of them) or JVM objects"
        )
        self.abort(error)
        handle.pushError(*python_error_parts(error))

    def _push_failed(self, exc: BaseException) -> None:
        """The JVM refused a push (gone, or the Java side ended the stream): stop upstream."""
        self.abort(exc)
        if not self._bridge._backend.call_failed(exc):
            log_subscriber_failure(self, "push", exc)

    def _release(self) -> None:
        self._handle = None  # §3.13
        self.forwarder.source = None
        self._bridge._forget(self)

    def abort(self, error: BaseException) -> None:
        """The bridge is closing, the JVM is gone or refused a push: cancel the Python publisher."""
        with self._lock:
            upstream, self._upstream = self._upstream, None
            self._cancelled = True
            self._buffer = []
        if upstream is not None:
            upstream.cancel()
        self._release()
