"""`StreamHost`: what a bridge's adapters share (its backend, settings and ``BridgeRuntime``, the
live-adapter set, the pool that pushes Python elements to Java), and how their streams end when
the bridge closes or its JVM goes. A `Bridge` makes one and lends it to every adapter, which
therefore never sees the Bridge itself. On the Py4J backends it holds the bridge's data channel."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from ._backend import Backend
from ._channel import DataChannel
from ._errors import BridgeClosedError
from ._settings import BridgeSettings

__all__ = ["Adapter", "CloseListener", "StreamHost"]


class Adapter(Protocol):
    """One stream's Python side, as the host ends it."""

    def shutdown(self) -> None:
        """The bridge closed or its JVM went (`StreamHost.closed_error` says which): end the
        stream on the Python side. The JVM side is ended by the runtime, or gone."""


class StreamHost:
    """The live streams of one bridge, and the means its adapters share."""

    def __init__(
        self, backend: Backend, settings: BridgeSettings, runtime: Any, channel: DataChannel | None = None
    ) -> None:
        self.backend = backend
        self.settings = settings
        self.runtime = runtime  # the Java BridgeRuntime
        self.channel = channel  # large batches to Python, on the Py4J backends
        self.arrow = False  # rows and record batches cross as Arrow (both sides have it)
        self.arrow_c_data = False  # record batches cross through the C Data Interface (in process)
        self.max_buffered = 0  # see Bridge.max_buffered
        self.closed_error: BridgeClosedError | None = None  # set once, when the host closes
        self._lock = threading.Lock()
        self._live: set[Adapter] = set()
        self._pool: ThreadPoolExecutor | None = None

    @property
    def closed(self) -> bool:
        return self.closed_error is not None

    @property
    def live_count(self) -> int:
        with self._lock:
            return len(self._live)

    def check_open(self) -> None:
        if self.closed_error is not None:
            raise BridgeClosedError("this bridge is closed")

    def track(self, adapter: Adapter) -> None:
        with self._lock:
            self._live.add(adapter)

    def adapters(self) -> list[Adapter]:
        """The live adapters, a copy."""
        with self._lock:
            return list(self._live)

    def forget(self, adapter: Adapter) -> None:
        with self._lock:
            self._live.discard(adapter)

    def note_buffered(self, count: int) -> None:
        if count > self.max_buffered:
            self.max_buffered = count  # a statistic: a lost race only under-reports by a little

    def submit(self, task: Callable[[], None]) -> None:
        """Run ``task`` on the pool that pushes elements emitted on a publisher's own thread;
        dropped once the host is closed (its streams are ended then)."""
        with self._lock:
            if self._pool is None and self.closed_error is None:
                self._pool = ThreadPoolExecutor(4, thread_name_prefix="rs-bridge-push")
            pool = self._pool
        if pool is None:
            return
        try:
            pool.submit(task)
        except RuntimeError:  # shut down meanwhile: close() ends the stream
            pass

    def close(self, error: BridgeClosedError, release: Callable[[], None] | None = None) -> bool:
        """End every live stream with ``error``, once; False if the host was closed already.
        ``release`` runs first, after the live streams were taken: the JVM side, if it is still
        there, ends its halves of them. The backend is the bridge's to close."""
        with self._lock:
            if self.closed_error is not None:
                return False
            self.closed_error = error
            live = list(self._live)
            pool, self._pool = self._pool, None
        if self.channel is not None:
            self.channel.expect_close()  # the JVM's end may go first, with the runtime
        if release is not None:
            release()
        if self.channel is not None:
            self.channel.close()  # after release: a drain still running finds no frame, and stops
        for adapter in live:
            adapter.shutdown()
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        return True


class CloseListener:
    """Hears the JVM side close the runtime for a reason of its own (``BridgeRuntime.close(reason)``,
    as when a SparkContext stops): the host's streams end with ``BridgeClosedError(reason)``.
    The backend stays open until the bridge is closed: this runs on a JVM thread, and a JVM the
    bridge started must not stop under it.

    It holds the host weakly: the runtime holds this listener for good, and a host holds the
    runtime, so a strong reference would keep both alive across the two collectors.
    """

    def __init__(self, host: StreamHost) -> None:
        self._host = weakref.ref(host)

    def closed(self, reason: str) -> None:
        host = self._host()
        if host is not None:
            host.close(BridgeClosedError(str(reason)))
