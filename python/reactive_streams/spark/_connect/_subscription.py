"""A subscription to a server stream of elements on Spark Connect: `jvm_publisher`'s on a Connect
session, and a registered subscriber's rows."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from ..._api import Publisher, Subscriber, Subscription
from ..._demand import MAX_DEMAND, Demand, Drain, run_out, subscribe_and_start
from ..._gauges import StreamState, state_of
from ..._rules import log_subscriber_failure, require_not_none, signal_terminal
from ...jvm import decode_values
from ._connection import connection
from ._wire import Reply, new_stream_id, status_error

__all__ = ["ConnectSubscription", "JvmPublisher"]

_MAX_BATCH = 65_536  # elements per reply from the server


class JvmPublisher(Publisher[Any]):
    """`jvm_publisher` on a Connect session: a stream per subscriber, on the session's reply path."""

    def __init__(self, spark: Any, name: str, arg: str | None) -> None:
        self._connection = connection(spark)
        self._name, self._arg = name, arg

    def subscribe(self, subscriber: Subscriber[Any]) -> None:
        """One ``subscribe`` call to the server per subscriber (§1.9)."""
        require_not_none(subscriber, "subscriber", "§1.9")
        header = {"op": "subscribe", "name": self._name, "arg": self._arg}
        subscription = ConnectSubscription(subscriber, self._connection, header)
        subscribe_and_start(subscriber, subscription)  # §1.9, §2.13


class ConnectSubscription(Subscription):
    """A subscription to a server stream that sends elements within demand: a JVM publisher
    (``subscribe``) or a registered subscriber's rows (``register_subscriber``).

    The stream is opened on the session's reply path, whose reading thread hands it the
    server's replies (`on_reply`), queued; a `Drain` delivers them within demand (§1.1),
    serially (§1.3), on whichever thread signals it, in runs to a subscriber's
    ``on_next_batch`` if it has one. ``request`` records demand and sends it (§3.4: it never
    waits for the server); demand made before the server has opened the stream waits for it.
    Status events other than the stream's own go to ``on_status``, on the reading thread;
    `opened` is set once the server has opened the stream, or failed to."""

    def __init__(
        self,
        subscriber: Subscriber[Any],
        connection: Any,
        header: dict[str, Any],
        on_status: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self._subscriber: Subscriber[Any] | None = subscriber  # None once ended (§3.13)
        self._on_next_batch = getattr(subscriber, "on_next_batch", None)
        self._connection = connection
        self._on_status = on_status
        self._header = {"max_batch": _MAX_BATCH, **header, "stream": new_stream_id()}
        self.stream: str = self._header["stream"]
        self.opened = threading.Event()
        self.open_error: BaseException | None = None  # why the server did not open the stream
        self._demand = Demand()
        self._chunks: deque[Sequence[Any]] = deque()  # decoded replies, delivered in place
        self._delivering: Any = None  # the run the pass is delivering: a cancel empties it (§3.6)
        self._offset = 0  # how much of the first chunk is delivered
        self._ended = False  # the server's stream ended: complete, error or lost
        self._end_error: BaseException | None = None
        self._error: BaseException | None = None  # a §3.9 error for the drain
        self._cancelled = False
        self._opened = False
        self._unsent = 0  # demand made before the server opened the stream
        self._left = False  # the stream left the reply path
        self._drain = Drain(self._pass)
        # For `stream_state`, counted per request and per delivered run, never per element.
        self._requested_in_all = self._delivered = 0
        self._since = time.monotonic()  # the last delivered run's end

    def stream_state(self) -> StreamState | None:
        """What this client holds for the subscriber (replies arrived, not yet delivered), the
        demand not yet met, and on whom the stream waits: the server's publisher (the producer)
        or the subscriber. Read on the client alone: no call to the server."""
        with self._drain.lock:
            if self._subscriber is None or self._cancelled or (self._ended and not self._chunks):
                return None
            held = sum(map(len, self._chunks)) - self._offset
            if self._delivering is not None:
                held += len(self._delivering)  # handed to the subscriber, which is still on it
            return state_of(
                "connect",
                f"{self._header.get('name') or self._header.get('op')} (stream {self.stream})",
                requested=self._requested_in_all,
                delivered=self._delivered,
                held=held,
                since=self._since,
            )

    def start(self) -> None:
        """Open the server's stream, on the session's reply path."""
        self._connection.join(self.stream, self, self._header)

    def request(self, n: int) -> None:
        """Add ``n`` (§3.8) and send it to the server's JVM subscription as ``request(n)``;
        ``n <= 0`` ends the stream with §3.9's error and cancels the server's."""
        drain = self._drain
        with drain.lock:
            if self._cancelled or self._subscriber is None:
                return  # §3.6
            error = self._demand.add(n)
            if error is None:
                self._requested_in_all = min(MAX_DEMAND, self._requested_in_all + n)  # §3.17
            if error is not None:
                if self._error is None:
                    self._error = error
                self._cancel_locked()
            elif self._opened:
                self._connection.send({"op": "demand", "stream": self.stream, "n": n})
            else:
                self._unsent = min(self._unsent + n, (1 << 63) - 1)
            run = drain.signal_locked()
        if run:
            drain.passes()

    def cancel(self) -> None:
        """Cancel the server's subscription (§3.5); nothing more is delivered (§3.13)."""
        drain = self._drain
        with drain.lock:
            self._cancel_locked()
            run = drain.signal_locked()
        if run:
            drain.passes()

    def _cancel_locked(self) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        if self._delivering is not None:
            del self._delivering[:]  # the run under way stops at its next element (§3.6)
        if self._opened and not self._ended:
            self._leave("cancel")

    def on_reply(self, reply: Reply) -> None:
        """One reply of the server's stream, on the reply path's reading thread."""
        if reply.kind == "elements":
            items = decode_values(reply.data)
            with self._drain.lock:
                self._chunks.append(items)
        else:
            event = reply.status.get("event")
            if event == "opened":
                self._on_opened()
            elif event in ("complete", "cancelled", "closed"):
                self._end(None)
                return
            elif event == "error":
                self._end(status_error(reply.status))  # the publisher's error (a JvmError)
                return
            elif self._on_status is not None:
                self._on_status(reply.status)
        self._drain.signal()

    def on_end(self, error: BaseException) -> None:
        """The stream ends without its end reply: its server is gone (`ConnectionLostError`),
        or refused to open it (an unknown name, say)."""
        self._end(error)

    def _on_opened(self) -> None:
        self.opened.set()
        with self._drain.lock:
            self._opened = True
            unsent, self._unsent = self._unsent, 0
            if self._cancelled:
                self._leave("cancel")
            elif unsent:
                self._connection.send({"op": "demand", "stream": self.stream, "n": unsent})

    def _leave(self, op: str | None = None) -> None:
        """(Once.) The stream leaves the path and its lease ends; ``op`` tells the server."""
        if not self._left:
            self._left = True
            self._connection.leave(self.stream, op)

    def _end(self, error: BaseException | None) -> None:
        with self._drain.lock:
            if self._ended:
                return
            self._ended = True
            self._end_error = error
            self._leave()
        if not self.opened.is_set():
            self.open_error = error
            self.opened.set()
        self._drain.signal()

    def _pass(self) -> None:
        subscriber = self._subscriber
        if subscriber is None:
            return
        while True:
            with self._drain.lock:
                if self._error is not None or self._cancelled:
                    break
                want = self._demand.outstanding
                chunks = self._chunks
                if not chunks:
                    if self._ended:
                        break
                    return  # the reader signals the drain when elements arrive
                if want == 0:
                    return  # a request signals the drain again
                head, start = chunks[0], self._offset
                count = min(want, len(head) - start)
                if start + count == len(head):
                    chunks.popleft()
                    self._offset = 0
                else:
                    self._offset = start + count
                # A copy of its own (a slice), which a cancel may empty while it is delivered.
                batch = self._delivering = head[start : start + count]
            try:
                if self._on_next_batch is not None:
                    self._on_next_batch(batch if type(batch) is list else list(batch))  # §1.1: within demand
                else:
                    run_out(map(subscriber.on_next, batch))  # §1.1: within demand
            except Exception as exc:
                log_subscriber_failure(subscriber, "on_next", exc)  # §2.13
                self.cancel()
            with self._drain.lock:
                self._delivering = None
                self._demand.produced(count)
                self._delivered += count
                self._since = time.monotonic()
        with self._drain.lock:
            error = self._error
            if error is None and not self._cancelled:
                error = self._end_error  # None: on_complete (§1.5)
                quiet = False
            else:
                quiet = error is None  # a cancel: no signal (§3.13)
            self._subscriber = None  # §3.13
            self._chunks.clear()
        if not quiet:
            signal_terminal(subscriber, error)
