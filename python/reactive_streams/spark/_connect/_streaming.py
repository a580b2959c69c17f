"""The ``reactive-streams`` source and sink for a Spark Connect client: what `register_publisher`,
`register_subscriber`, `unregister` and `stream_stats` do on a Connect session.

A registration is a stream on the session's reply path, which lives as long as the name is
registered or a query holds it, and carries the server's notices:

- a publisher's: ``subscribe``, ``demand`` and ``cancel`` for each subscription the source makes
  (the server's ``ClientPublisher``). Here each one subscribes the user's publisher, requests
  exactly what the source requested, and a pusher thread sends what it emits with ``push`` ops,
  never more than requested (§1.1);
- a subscriber's: ``subscribed`` with the column names when a query claims it, then its rows,
  within the demand the user's subscriber signals (a `ConnectSubscription`), and what it
  processed or raised back to the sink.

The server that goes away ends every registration: the publisher's subscriptions are cancelled,
the subscriber gets ``on_error(ConnectionLostError)``.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import deque
from collections.abc import Sequence
from typing import Any

from ..._api import Publisher, Subscriber, Subscription
from ..._errors import ReactiveStreamsError
from ..._rules import signal_or_cancel
from ...jvm import encode_elements
from .._sink import ArrowBatchSubscriber, RowSubscriber
from ._connection import Connection, connection
from ._subscription import ConnectSubscription
from ._wire import ConnectionLostError, Reply, new_stream_id, status_error

__all__ = ["register_publisher", "register_subscriber", "stream_stats", "unregister"]

logger = logging.getLogger("reactive_streams.spark")

#: The most elements one push carries.
MAX_PUSH = 65_536
#: The most rows in one reply to a registered subscriber: small enough that the client decodes
#: and delivers one while the server encodes the next.
SINK_BATCH = 8_192
#: The most Arrow batches in one reply to a subscriber of batches (each up to Spark's 10,000 rows).
SINK_ARROW_BATCHES = 4
#: The most bytes of Arrow record batches in one push (at least one batch): a push is one call,
#: and one that takes long looks to the source like a publisher with nothing ready.
PUSH_BYTES = 4 << 20
#: How long registering may take (the first call to a server can wait for the session).
_OPEN_TIMEOUT = 120.0


def register_publisher(spark: Any, name: str, publisher: Publisher[Any]) -> None:
    """Register ``publisher`` as ``name`` in the server, for this session's queries only."""
    registration = _PublisherRegistration(connection(spark), name, publisher)
    registration.start()
    _await_open(registration.opened, lambda: registration.open_error, f"registering the publisher {name!r}")


def register_subscriber(
    spark: Any, name: str, subscriber: Subscriber[Any], batch_rows: int | None = None
) -> None:
    """Register ``subscriber`` as ``name`` in the server, for this session's queries only; it
    gets rows, or Arrow batches of ``batch_rows`` (0: Spark's default) if that is not None."""
    link = _SinkLink(connection(spark))
    header: dict[str, Any] = {"op": "register_subscriber", "name": name, "max_batch": SINK_BATCH}
    wrapped: _SinkRows | _SinkBatches
    if batch_rows is None:
        wrapped = _SinkRows(subscriber, link)
    else:
        wrapped = _SinkBatches(subscriber, link)
        header.update(max_batch=SINK_ARROW_BATCHES, arrow_batch_rows=batch_rows)
    link.rows = wrapped
    subscription = ConnectSubscription(wrapped, link.connection, header, on_status=link.on_status)
    link.subscription = subscription
    subscription.start()
    _await_open(subscription.opened, lambda: subscription.open_error, f"registering the subscriber {name!r}")


def unregister(spark: Any, name: str) -> bool:
    """Free this session's ``name``; whether it was registered."""
    (reply,) = connection(spark).quick([{"op": "unregister", "name": name}])
    _raise_if_error(reply)
    return bool(reply.get("registered"))


def stream_stats(spark: Any, name: str) -> dict[str, int]:
    """The counters of this session's ``name`` (or a name the server registered)."""
    (reply,) = connection(spark).quick([{"op": "registry_stats", "name": name}])
    _raise_if_error(reply)
    if not reply.get("registered"):
        raise ReactiveStreamsError(f"nothing is registered as {name!r}")
    return {str(key): int(value) for key, value in reply["counters"].items()}


def sink_figures(spark: Any, query_id: str) -> dict[str, Any] | None:
    """A partitioned sink's figures of query ``query_id``, as the server's host has them
    (`rss.sink_progress`), or None if it has none."""
    (reply,) = connection(spark).quick([{"op": "sink_progress", "query": query_id}])
    _raise_if_error(reply)
    figures = reply.get("figures") or ""
    return json.loads(figures) if figures else None


def _raise_if_error(reply: dict[str, Any]) -> None:
    if reply.get("event") == "error":
        raise status_error(reply)


def _await_open(opened: threading.Event, error: Any, what: str) -> None:
    if not opened.wait(_OPEN_TIMEOUT):
        raise ReactiveStreamsError(
            f"{what}: the Spark Connect server did not answer in {_OPEN_TIMEOUT:.0f} s"
        )
    failure = error()
    if failure is not None:
        raise ReactiveStreamsError(f"{what}: {failure}") from failure


class _ClaimedLater(Subscriber[Any]):
    """A sink subscriber whose ``on_subscribe`` waits for a query to claim it: a registration
    that ends before that (its server gone) signals ``on_subscribe`` first (§1.9)."""

    subscribed = False

    def on_subscribe(self, subscription: Subscription) -> None:
        self.subscribed = True
        super().on_subscribe(subscription)  # type: ignore[safe-super]

    def on_error(self, exc: BaseException) -> None:
        self._subscribe_ended()
        super().on_error(exc)  # type: ignore[safe-super]

    def on_complete(self) -> None:
        self._subscribe_ended()
        super().on_complete()  # type: ignore[safe-super]

    def _subscribe_ended(self) -> None:
        if not self.subscribed:
            self.on_subscribe(_Ended())


class _SinkRows(_ClaimedLater, RowSubscriber):
    """`RowSubscriber`, claimed later."""


class _SinkBatches(_ClaimedLater, ArrowBatchSubscriber):
    """`ArrowBatchSubscriber`, claimed later; each batch arrives as an Arrow IPC stream."""

    def on_next_batch(self, items: Sequence[Any]) -> None:
        super().on_next_batch([_read_batch(stream) for stream in items])


def _batches_within(items: list[Any], budget: int) -> int:
    """How many leading ``items`` a push takes: record batches (anything with ``nbytes`` and
    ``num_rows``) up to ``budget`` bytes, at least one; other elements all."""
    total = 0
    for count, item in enumerate(items):
        size = getattr(item, "nbytes", None) if hasattr(item, "num_rows") else None
        if size is None:
            return len(items) if count == 0 else count
        total += int(size)
        if total > budget and count > 0:
            return count
    return len(items)


def _read_batch(stream: Any) -> Any:
    """The one record batch of an Arrow IPC stream's bytes."""
    import pyarrow as pa

    with pa.ipc.open_stream(pa.py_buffer(stream)) as reader:
        return reader.read_next_batch()


class _Ended(Subscription):
    """The subscription of a registration that ended before a query claimed it."""

    def request(self, n: int) -> None:
        """Nothing will come (§3.6)."""

    def cancel(self) -> None:
        """Nothing to stop (§3.5)."""


class _SinkLink:
    """The sink's `SinkLink`, as `RowSubscriber` uses it, over the registration's stream."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.subscription: ConnectSubscription | None = None
        self.rows: _SinkRows | _SinkBatches | None = None
        self._fields: list[str] = []
        self._query_id: str | None = None

    def fieldNames(self) -> list[str]:
        return self._fields

    def epoch(self) -> int:
        """The epoch of the micro-batch being delivered, asked of the server (once per micro-batch);
        -1 if the server is gone: the stream then ends with ``on_error(ConnectionLostError)``,
        after the rows that arrived, as it would without this call (the subscriber is not the
        one that failed, so it gets no quiet cancel)."""
        subscription = self.subscription
        if subscription is None:
            return -1
        try:
            (reply,) = self.connection.quick([{"op": "sink_epoch", "stream": subscription.stream}])
        except ConnectionLostError as exc:
            logger.debug("no epoch for a micro-batch of stream %s: %s", subscription.stream, exc)
            return -1
        _raise_if_error(reply)
        query = reply.get("query")
        self._query_id = None if query is None else str(query)
        return int(reply.get("epoch", -1))

    def queryId(self) -> str | None:
        return self._query_id

    def processed(self, rows: int) -> None:
        self._send({"op": "sink_processed", "rows": rows})

    def raised(self, processed: int, error: str) -> None:
        self._send({"op": "sink_raised", "rows": processed, "error": error})

    def _send(self, op: dict[str, Any]) -> None:
        subscription = self.subscription
        if subscription is not None:
            self.connection.send({**op, "stream": subscription.stream})

    def on_status(self, status: dict[str, Any]) -> None:
        """``subscribed``: a query claimed the subscriber; it gets ``on_subscribe`` now (§1.9:
        first; nothing else can come before its demand)."""
        subscription, rows = self.subscription, self.rows
        if status.get("event") != "subscribed" or subscription is None or rows is None:
            return
        self._fields = [str(f) for f in status.get("fields", [])]
        self.connection.bound_to_query(subscription.stream)
        signal_or_cancel(rows, "on_subscribe", subscription, subscription.cancel)  # §2.13


class _PublisherRegistration:
    """A registered publisher: the reader of its stream's notices, and one `_Feed` for each
    subscription the server's source makes."""

    def __init__(self, connection: Connection, name: str, publisher: Publisher[Any]) -> None:
        self._connection = connection
        self._name = name
        self._publisher = publisher
        self._header = {"op": "register_publisher", "stream": new_stream_id(), "name": name, "max_batch": 1}
        self.stream: str = str(self._header["stream"])
        self.opened = threading.Event()
        self.open_error: BaseException | None = None
        self._lock = threading.Condition()
        self._feeds: dict[int, _Feed] = {}  # guarded by _lock
        self._ready: deque[_Feed] = deque()  # feeds with something to push; guarded by _lock
        self._ended = False  # guarded by _lock

    def start(self) -> None:
        threading.Thread(target=self._push, name="rs-connect-push", daemon=True).start()
        self._connection.join(self.stream, self, self._header)

    def on_reply(self, reply: Reply) -> None:
        """One notice of the registration's stream, on the reply path's reading thread."""
        event = reply.status.get("event")
        if event == "opened":
            self.opened.set()
        elif event == "subscribe":
            self._subscribe(int(reply.status["sub"]))
        elif event == "demand":
            feed = self._feed(reply.status)
            if feed is not None:
                feed.request(int(reply.status["n"]))
        elif event == "cancel":
            feed = self._feed(reply.status, remove=True)
            if feed is not None:
                feed.cancel()
        elif event in ("complete", "cancelled", "closed"):
            self._end(None)
        elif event == "error":
            self._end(status_error(reply.status))

    def on_end(self, error: BaseException) -> None:
        """The registration ends without its end reply: a lost server (`ConnectionLostError`),
        a refused name."""
        self._end(error)

    def _end(self, error: BaseException | None) -> None:
        with self._lock:
            if self._ended:
                return
            self._ended = True
            feeds, self._feeds = list(self._feeds.values()), {}
            self._lock.notify_all()
        self._connection.leave(self.stream)
        if not self.opened.is_set():
            self.open_error = error
            self.opened.set()
        elif error is not None and self._connection.closed:  # spark.stop(): the session ends it
            logger.debug("the publisher registered as %r ends with its session: %s", self._name, error)
        elif error is not None:
            logger.warning(
                "the publisher registered as %r lost its Spark Connect server: %s", self._name, error
            )
        for feed in feeds:
            feed.cancel()  # the server is gone or let the name go: nothing can be pushed

    def _subscribe(self, number: int) -> None:
        feed = _Feed(self, number)
        with self._lock:
            self._feeds[number] = feed
        try:
            self._publisher.subscribe(feed)  # §1.9
        except Exception as exc:
            logger.warning("subscribe() of the publisher registered as %r raised", self._name, exc_info=True)
            feed.on_error(exc)

    def _feed(self, status: dict[str, Any], remove: bool = False) -> _Feed | None:
        with self._lock:
            number = int(status["sub"])
            return self._feeds.pop(number, None) if remove else self._feeds.get(number)

    def ready(self, feed: _Feed) -> None:
        """``feed`` has elements or its end to push."""
        with self._lock:
            if not feed.queued:
                feed.queued = True
                self._ready.append(feed)
                self._lock.notify()

    def _push(self) -> None:
        """Sends what the feeds hold, one push at a time (the server signals a subscription's
        elements serially, §1.3), each feed's elements in order; ends with the registration."""
        while True:
            with self._lock:
                while not self._ready and not self._ended:
                    self._lock.wait()
                if not self._ready:
                    return
                feed = self._ready.popleft()
                feed.queued = False
            items, end, error = feed.take(MAX_PUSH)
            if not items and end is None:
                continue
            self._send(feed, items, end, error)
            if feed.has_more():
                self.ready(feed)

    def _send(self, feed: _Feed, items: list[Any], end: str | None, error: str | None) -> None:
        header: dict[str, Any] = {
            "op": "push",
            "stream": self.stream,
            "sub": feed.number,
            "end": end,
            "error": error,
        }
        try:
            body = encode_elements(items) if items else None
        except Exception as exc:  # not a value: the subscription fails, naming it
            feed.cancel()
            header.update(
                end="error", error=f"an element cannot cross Spark Connect: {type(exc).__name__}: {exc}"
            )
            body = None
        try:
            (reply,) = self._connection.quick([header], body)
            _raise_if_error(reply)
        except Exception as exc:
            logger.warning("pushing to the source of %r failed: %s", self._name, exc)
            feed.cancel()  # the server refused it (§1.1, an element it cannot read) or is gone
            return
        if reply.get("event") in ("cancelled", "unknown"):
            feed.cancel()  # the source let it go while this push was on its way, or is gone


class _Feed(Subscriber[Any]):
    """The user's publisher's subscriber on behalf of one subscription of the server's source:
    requests what the source requests (§3.8: as the same ``request(n)``), holds what it emits
    until the pusher sends it."""

    def __init__(self, registration: _PublisherRegistration, number: int) -> None:
        self.number = number
        self.queued = False  # in the registration's ready queue; guarded by its lock
        self._registration = registration
        self._lock = threading.Lock()
        self._subscription: Subscription | None = None
        self._unsent_demand = 0  # demand before on_subscribe
        self._items: list[Any] = []
        self._end: str | None = None  # "complete" or "error", to push after the items
        self._end_taken = False
        self._error: str | None = None
        self._cancelled = False

    def on_subscribe(self, subscription: Subscription) -> None:
        with self._lock:
            if self._subscription is not None or self._cancelled:
                cancel = True  # §2.5, or the source already let it go
            else:
                cancel = False
                self._subscription = subscription
                unsent, self._unsent_demand = self._unsent_demand, 0
        if cancel:
            subscription.cancel()
        elif unsent:
            subscription.request(unsent)

    def on_next(self, item: Any) -> None:
        self.on_next_batch([item])

    def on_next_batch(self, items: Sequence[Any]) -> None:
        """Elements in bulk (``from_iterable`` gives them so), within the demand (§1.1)."""
        with self._lock:
            if self._cancelled:
                return  # §2.8: after a cancel
            first = not self._items
            self._items.extend(items)
        if first and items:
            self._registration.ready(self)

    def on_error(self, exc: BaseException) -> None:
        self._finish("error", f"{type(exc).__qualname__}: {exc}")

    def on_complete(self) -> None:
        self._finish("complete", None)

    def _finish(self, end: str, error: str | None) -> None:
        with self._lock:
            if self._cancelled or self._end is not None:
                return
            self._end, self._error = end, error
        self._registration.ready(self)

    def request(self, n: int) -> None:
        with self._lock:
            subscription = self._subscription
            if subscription is None:
                self._unsent_demand += n
                return
        subscription.request(n)

    def cancel(self) -> None:
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
            subscription, self._subscription = self._subscription, None
            self._items.clear()
        if subscription is not None:
            subscription.cancel()  # §3.5

    def take(self, most: int) -> tuple[list[Any], str | None, str | None]:
        """Up to ``most`` items, and the end if they are the last ones (it is taken once)."""
        with self._lock:
            if self._cancelled:
                return [], None, None
            most = min(most, _batches_within(self._items, PUSH_BYTES))
            items = self._items[:most]
            del self._items[:most]
            if self._items or self._end is None or self._end_taken:
                return items, None, None
            self._end_taken = True
            return items, self._end, self._error

    def has_more(self) -> bool:
        with self._lock:
            return not self._cancelled and (
                bool(self._items) or (self._end is not None and not self._end_taken)
            )
