"""A Connect session's one reply path: every stream's replies on one long call, read by one thread.

The client opens one ``mux`` call (an ExecutePlan) per session while it has streams; each
stream (a subscription, a registration) is opened by a quick op naming the path, and the
server's one thread for the path sends every stream's replies on it, each naming its stream. A
`FrameReader` reads them and hands each to its stream's `StreamReceiver`, on the reading thread,
and hands the reading on to a new thread when a delivery stalls: a subscriber blocking in
``on_next`` holds up no other stream. So a thousand streams cost the client one reading thread
(and the server one), not a thousand.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from typing import Any, Protocol

from ..._errors import ReactiveStreamsError
from ..._frames import FrameReader
from ._wire import ConnectionLostError, Reply, Watched, new_stream_id, status_error

__all__ = ["ReplyPath", "StreamReceiver"]

logger = logging.getLogger("reactive_streams.spark")

#: How long a path with no stream stays open for the next one, before it closes.
LINGER = 2.0


class StreamReceiver(Protocol):
    """One stream's end of the path: its replies, one at a time and in order (§1.3), then,
    unless a reply ended it, why the path ended (`on_end`)."""

    def on_reply(self, reply: Reply) -> None:
        """One reply of the stream's."""

    def on_end(self, error: BaseException) -> None:
        """The stream ends without its end reply: the path or the server is gone, or the server
        refused the op that opens it."""


class ReplyPath:
    """The ``mux`` call of a `Connection` (``connection``), and the streams on it."""

    def __init__(self, connection: Any) -> None:
        self.id = new_stream_id()
        self._connection = connection
        self._lock = threading.Lock()
        self._receivers: dict[str, StreamReceiver] = {}  # guarded by _lock
        self._backlog: list[dict[str, Any]] = []  # opening ops sent once the path is open
        self._opened = False
        self._ended = False  # guarded by _lock: no stream joins any more
        self._idle_since = time.monotonic()  # when the last stream left; guarded by _lock
        self._watched = Watched()
        self._replies: Iterator[Reply] | None = None
        self._done = threading.Event()  # the call has ended and its streams have heard it
        self._frames: FrameReader[str, Reply] = FrameReader(
            self._next, self._reading_ended, name="rs-connect-replies"
        )

    def start(self) -> None:
        """Open the call (on the reading thread) and renew its lease."""
        self._connection.open(self.id)
        self._replies = self._connection.execute(
            {"op": "mux", "stream": self.id}, watched=self._watched, errors_raised=False
        )
        self._frames.start()

    def join(self, stream: str, receiver: StreamReceiver, op: dict[str, Any]) -> bool:
        """Serve ``stream`` on this path, opening it on the server with ``op`` (which the path
        names); False if the path has ended."""
        with self._lock:
            if self._ended:
                return False
            self._receivers[stream] = receiver
            self._frames.register(stream, receiver.on_reply)
            op = {**op, "mux": self.id}
            if not self._opened:
                self._backlog.append(op)
                return True
        self._send_open(op)
        return True

    def _send_open(self, op: dict[str, Any]) -> None:
        """The op that opens a stream, then its lease: no keepalive names a stream before the
        op that opens it (the server would not know it)."""
        self._connection.send(op)
        self._connection.open(op["stream"])

    def leave(self, stream: str) -> None:
        """``stream`` ended: later replies of its are dropped (§2.8)."""
        with self._lock:
            if self._receivers.pop(stream, None) is not None and not self._receivers:
                self._idle_since = time.monotonic()
            self._frames.unregister(stream)

    def refused(self, stream: str, error: BaseException) -> bool:
        """The server refused an op of ``stream``'s: it ends with ``error``; whether it was here."""
        with self._lock:
            receiver = self._receivers.pop(stream, None)
        if receiver is None:
            return False
        self._frames.unregister(stream)
        receiver.on_end(error)
        return True

    def close_if_idle(self, now: float) -> bool:
        """(The connection's lease thread.) Ends the path if no stream has used it for
        `LINGER` seconds: nothing joins it from now on. Whether it ended."""
        with self._lock:
            if self._ended or self._receivers or now - self._idle_since < LINGER:
                return False
            self._ended = True
        self._connection.close(self.id, "close")
        return True

    @property
    def streams(self) -> int:
        with self._lock:
            return len(self._receivers)

    def receivers(self) -> list[StreamReceiver]:
        """The streams this path serves now."""
        with self._lock:
            return list(self._receivers.values())

    @property
    def readers(self) -> int:
        """Reading threads: one, plus any stuck in a slow delivery."""
        return self._frames.readers

    def stop(self) -> None:
        """Wait for the reading threads after the call ended."""
        self._frames.stop()

    def wait_ended(self, timeout: float) -> bool:
        """Wait, at most ``timeout`` seconds, for the call to end (the connection closed the
        path); whether it did."""
        return self._done.wait(timeout)

    def _next(self) -> tuple[str, Reply] | None:
        """The next reply of a stream; the path's own replies (opened, heartbeats) are handled
        here. None at the call's end; a lost server raises."""
        replies = self._replies
        assert replies is not None
        for reply in replies:
            stream = reply.stream
            if stream is not None and stream != self.id:
                return stream, reply
            event = reply.status.get("event")
            if event == "opened":
                with self._lock:
                    self._opened = True
                    backlog, self._backlog = self._backlog, []
                for op in backlog:
                    self._send_open(op)
            elif event == "error":
                raise status_error(reply.status)
            elif event == "cancelled":
                raise ConnectionLostError(
                    f"the Spark Connect server ended the reply path: {reply.status.get('reason')}"
                )
        return None

    def _reading_ended(self, error: BaseException | None) -> None:
        """The call ended: every stream still on it ends with why."""
        try:
            self._end_streams(error)
        finally:
            self._done.set()

    def _end_streams(self, error: BaseException | None) -> None:
        with self._lock:
            self._ended = True
            receivers, self._receivers = self._receivers, {}
        self._connection.close(self.id)
        self._connection.path_ended(self)
        if not receivers:
            return
        if self._connection.closed:
            error = ReactiveStreamsError("the Spark Connect session closed while the stream was open")
        elif error is None:
            error = ConnectionLostError("the Spark Connect server ended the reply path")
        elif not isinstance(error, ReactiveStreamsError):
            error = ConnectionLostError(f"the reply path from the Spark Connect server failed: {error}")
        logger.debug("the reply path %s ended with %d streams: %s", self.id, len(receivers), error)
        for stream, receiver in receivers.items():
            self._frames.unregister(stream)
            try:
                receiver.on_end(error)
            except Exception:
                logger.exception("ending stream %s failed", stream)
