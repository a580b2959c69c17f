"""Python subscribers of JVM publishers: `Sink` implements the Java interface ``PythonSink``.

The Java ``ToPythonSubscriber`` calls it, a batch per crossing, and it calls a Python
subscriber, an ``on_next`` per element. Demand requested during a callback is returned with it:
no crossing of its own (§3.3). `JvmPublisher` is a JVM publisher seen from Python.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .._api import Publisher, Subscriber, Subscription
from .._demand import Demand, check_request
from .._errors import IllegalDemandError
from .._rules import log_subscriber_failure, require_not_none, signal_terminal
from ._codec import decode
from ._errors import BridgeClosedError, jvm_error

if TYPE_CHECKING:
    from ._bridge import Bridge

__all__ = ["JvmPublisher", "JvmSubscription", "Sink"]

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
        self._pending = Demand()  # demand requested during that callback
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
        pending, self._pending.outstanding = self._pending.outstanding, 0
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
        checked = check_request(n)
        if isinstance(checked, IllegalDemandError):
            if self._subscriber is None:
                return  # §3.6
            self._invalid = checked
            if self._delivering != threading.get_ident():
                self._call_java(lambda java: java.request(-1))
            return
        if self._delivering == threading.get_ident():
            self._pending.add(checked)  # added, never kept with max (§3.8); returned with the callback
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
