"""A Connect session's streams on the server plugin: the reply path they share, the thread that
sends their quick ops and renews their leases, and their end before the session's. Its calls
themselves are `ServerCalls`' (``_calls.py``)."""

from __future__ import annotations

import logging
import threading
import time
import weakref
from typing import Any

from ..._errors import ReactiveStreamsError
from ..._gauges import StreamState
from ._calls import ServerCalls, end_streams_before_the_session
from ._channel import OwnChannel, own_channel
from ._mux import ReplyPath, StreamReceiver
from ._wire import KEEPALIVE_EVERY, ConnectionLostError, Watched, status_error

__all__ = ["Connection", "connection"]

logger = logging.getLogger("reactive_streams.spark")


class Connection(ServerCalls):
    """One Connect session's calls (`ServerCalls`), the session's reply path (a `ReplyPath`,
    which every stream's replies share), and one daemon thread that sends the quick
    ops (opening streams, demand, cancel, keepalive) in batches and watches the live calls. The
    thread runs only while there are open streams.

    Watched calls (the reply path, DataFrame fetches) and the thread's quick ops go through a
    gRPC channel of the connection's own (`own_channel`: faster round trips), opened by the
    first and closed with the thread."""

    def __init__(self, spark: Any) -> None:
        super().__init__(spark.client)
        self._session = weakref.ref(spark)
        self._lock = threading.Condition()
        self._pending: list[dict[str, Any]] = []  # quick ops waiting for the thread
        self._open: set[str] = set()  # streams whose leases are renewed
        self._watched: set[Watched] = set()
        self._thread: threading.Thread | None = None
        self._own: OwnChannel | None = None  # the streams' and the thread's, while it runs
        self._path: ReplyPath | None = None  # the reply path streams join now; guarded by _lock
        self._paths: set[ReplyPath] = set()  # paths whose call has not ended; guarded by _lock
        self._suspects: set[str] = set()  # streams the last keepalive said were unknown; guarded by _lock
        self._closed = False  # the session closes or has closed: no stream opens, no op is sent
        # Sink streams a query claimed: they end when it ends, told by Spark's listener bus.
        self._query_bound: set[str] = set()  # guarded by _lock
        end_streams_before_the_session(self._client, self.shutdown)

    # -- streams on the reply path ------------------------------------------------------------

    def join(self, stream: str, receiver: StreamReceiver, op: dict[str, Any]) -> None:
        """Open ``stream`` on the server with ``op`` (a quick op, sent in turn with the others),
        its replies going to ``receiver`` on the session's reply path, opened for it if need be;
        its lease is renewed from then on, until `leave`."""
        while True:
            with self._lock:
                if self._closed:
                    raise ReactiveStreamsError(f"the Spark Connect session is closed: {stream} cannot open")
                path = self._path
                if path is None:
                    path = self._path = ReplyPath(self)
                    self._paths.add(path)
                    start = True
                else:
                    start = False
            if start:
                path.start()
            if path.join(stream, receiver, op):
                return
            with self._lock:  # it ended meanwhile: another
                if self._path is path:
                    self._path = None

    def leave(self, stream: str, op: str | None = None) -> None:
        """``stream`` ended (or ends: ``op`` is cancel or close): no more lease, no more replies."""
        with self._lock:
            paths = list(self._paths)
            if stream in self._query_bound:
                self._query_bound.discard(stream)
                self._lock.notify_all()
        for path in paths:
            path.leave(stream)
        self.close(stream, op)

    def bound_to_query(self, stream: str) -> None:
        """A query claimed ``stream`` (a registered subscriber): it ends when the query ends, and
        `shutdown` lets it end so after stopping the query."""
        with self._lock:
            self._query_bound.add(stream)

    @property
    def closed(self) -> bool:
        """Whether the session closes or has closed (`shutdown`)."""
        return self._closed

    def shutdown(self, timeout: float = 10.0) -> None:
        """The session closes (``spark.stop()``): ends every stream of ours on the server first,
        so that no operation of ours is still attached when the session is released (Spark would
        log each as detached, and fail its call with ``INVALID_CURSOR.DISCONNECTED``), and no
        keepalive reaches a session that is gone. Streams with a lease of their own are cancelled
        (their jobs with them), each reply path is closed (the server ends the streams still on
        it, and their subscribers hear `on_end`), the DataFrame fetches in flight are cancelled;
        then it waits, at most ``timeout`` seconds, for those calls and the lease thread to end.

        While a reply path is open (streams of ours on it), the session's streaming queries are
        stopped before them (closing the session stops them anyway): a query that reads a
        registered publisher or writes to a registered subscriber stops as ``query.stop()`` stops
        it, instead of failing when its client's stream ends or being interrupted by the
        session's release; and their registered subscribers hear ``on_complete`` before the
        paths close (at most ``timeout`` seconds: Spark tells a query's end after its stop
        returns). A path a lost server ended is gone by then: no call waits on it."""
        with self._lock:
            if self._closed:
                return
            live = bool(self._paths)  # registrations are on a path (none once a lost server ended it)
        if live:
            self._stop_queries()
        with self._lock:
            if self._closed:
                return
            # A stopped query's sink completes once Spark's listener bus reports the query's
            # end, after stop() returned: its subscriber hears on_complete, not the path's close.
            self._lock.wait_for(lambda: not self._query_bound, timeout)
            self._closed = True
            paths = list(self._paths)
            self._path = None
            on_paths = {path.id for path in paths}
            self._pending.extend({"op": "cancel", "stream": s} for s in sorted(self._open - on_paths))
            self._pending.extend({"op": "close", "stream": path.id} for path in paths)
            self._open.clear()
            watched = list(self._watched)
            if self._pending:
                self._start_locked()
            thread = self._thread
            self._lock.notify()
        for call in watched:  # a fetch's lease is cancelled above, and its call here
            self._lose(call, ReactiveStreamsError("the Spark Connect session closed"))
        for path in paths:
            path.wait_ended(timeout)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        with self._lock:
            left = len(self._paths) + len(self._watched) + len(self._pending)
        if left:
            logger.debug("the Spark Connect session closes with %d calls or ops of ours left", left)

    def _stop_queries(self) -> None:
        spark = self._session()
        try:
            queries = [] if spark is None else list(spark.streams.active)
        except Exception:
            logger.debug("cannot list the closing session's streaming queries", exc_info=True)
            return
        for query in queries:
            try:
                query.stop()
            except Exception:  # the session's release stops it
                logger.debug("stopping query %s of a closing session failed", query.id, exc_info=True)

    def stream_states(self) -> list[StreamState]:
        """Each live stream of this session's reply paths that keeps a state (`stream_state`)."""
        with self._lock:
            paths = list(self._paths)
        states = []
        for path in paths:
            for receiver in path.receivers():
                state_of = getattr(receiver, "stream_state", None)
                state = state_of() if state_of is not None else None
                if state is not None:
                    states.append(state)
        return states

    def path_ended(self, path: ReplyPath) -> None:
        """(The path's reading thread.) ``path``'s call ended: streams join another."""
        with self._lock:
            self._paths.discard(path)
            if self._path is path:
                self._path = None

    @property
    def reply_paths(self) -> int:
        """The reply paths whose call is live: one while there are streams (two while one closes)."""
        with self._lock:
            return len(self._paths)

    # -- the lease thread ---------------------------------------------------------------------

    def _watch(self, watched: Watched) -> OwnChannel:
        with self._lock:  # watched before the thread can close the channel it uses
            own = self._own_locked()
            watched.heard = time.monotonic()
            self._watched.add(watched)
            self._start_locked()
        return own

    def open(self, stream: str) -> None:
        """Renew ``stream``'s lease from now on, until `close`."""
        with self._lock:
            if self._closed:
                return
            self._open.add(stream)
            self._start_locked()

    def close(self, stream: str, op: str | None = None) -> None:
        """Stop renewing ``stream``'s lease; send ``op`` (cancel, close) for it if given."""
        with self._lock:
            self._open.discard(stream)
        if op is not None:
            self.send({"op": op, "stream": stream})

    def send(self, op: dict[str, Any]) -> None:
        """Send a quick op soon, without waiting (demand: §3.4, request returns at once). The
        thread sends the ops in order, each ``request(n)`` as it was made: exact demand.

        It sends them with blocking calls, one batch at a time: a GetStatus future would cost a
        thread per call (gRPC runs a channel's futures on a thread of its own, started whenever
        the channel has no call left, which between two requests it has not)."""
        with self._lock:
            if self._closed:
                return  # the session's streams have ended (§3.6: demand and cancel are no-ops then)
            self._pending.append(op)
            self._start_locked()
            self._lock.notify()

    def unwatch(self, watched: Watched) -> None:
        with self._lock:
            self._watched.discard(watched)

    def _start_locked(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="rs-connect-lease", daemon=True)
            self._thread.start()

    def _own_locked(self) -> OwnChannel:
        if self._own is None:
            self._own = own_channel(self._client)
        return self._own

    def _run(self) -> None:
        renewed = time.monotonic()
        while True:
            with self._lock:
                path = self._path
            if path is not None and path.close_if_idle(time.monotonic()):
                with self._lock:
                    if self._path is path:
                        self._path = None
            with self._lock:
                if not (self._pending or self._open or self._watched or self._paths):
                    self._thread = None  # nothing to do: the thread ends, a new stream starts one
                    own, self._own = self._own, None
                    if own is not None:
                        own.close()  # no call uses it: only this thread's and watched calls do
                    return
                if not self._pending:
                    self._lock.wait(0.25)
                pending, self._pending = self._pending, []
                now = time.monotonic()
                if now - renewed >= KEEPALIVE_EVERY and self._open:
                    pending.append({"op": "keepalive", "streams": sorted(self._open)})
                    renewed = now
                overdue = [w for w in self._watched if now - w.heard > w.silence]
                own = self._own_locked() if pending else None
            for watched in overdue:
                self._lose(
                    watched,
                    ConnectionLostError(f"the Spark Connect server sent nothing for {watched.silence:.0f} s"),
                )
            if pending:
                try:
                    replies = self.quick(pending, own=own)  # at most LOST_AFTER (the first: see quick)
                except Exception as exc:
                    self._lose_all(exc)
                else:
                    self._refused(pending, replies)
                    self._unknown(pending, replies)

    def _unknown(self, ops: list[dict[str, Any]], replies: list[dict[str, Any]]) -> None:
        """Ends each stream on a reply path that the server said twice running (a second
        apart) it does not know (``keepalive``'s ``unknown``: neither open nor lately ended
        there, say a stream reaped while its client was frozen), with an error: its subscriber
        hears it rather than waiting for replies that will not come. A stream whose end is on
        its way is among the ``ended`` ones, and waits for it."""
        unknown: set[str] = set()
        for op, reply in zip(ops, replies, strict=True):
            if op.get("op") == "keepalive" and reply.get("event") == "ok":
                unknown.update(str(stream) for stream in reply.get("unknown", ()))
        if not any(op.get("op") == "keepalive" for op in ops):
            return
        with self._lock:
            twice, self._suspects = unknown & self._suspects, unknown
            paths = list(self._paths)
        for stream in twice:
            error = ReactiveStreamsError(
                f"the Spark Connect server no longer knows stream {stream} (it was not open there, "
                "nor lately ended): it was lost on the server, with no end sent"
            )
            if any([path.refused(stream, error) for path in paths]):
                logger.warning("%s", error)
                self.close(stream)

    def _refused(self, ops: list[dict[str, Any]], replies: list[dict[str, Any]]) -> None:
        """Ends the call of each stream whose quick op the server refused (an ``error`` reply),
        with that error, and cancels the stream on the server: its subscriber hears the error
        instead of waiting for elements that will not come. Other streams go on."""
        for op, reply in zip(ops, replies, strict=True):
            if reply.get("event") != "error":
                continue
            error = status_error(reply)
            logger.warning(
                "the Spark Connect server refused %s op for stream %s: %s",
                op.get("op"),
                op.get("stream"),
                error,
            )
            stream = op.get("stream")
            with self._lock:
                calls = [w for w in self._watched if stream is not None and w.stream == stream]
                paths = list(self._paths)
            for watched in calls:
                self._lose(watched, error)
            joined = any([path.refused(stream, error) for path in paths]) if stream is not None else False
            if (calls or joined) and op.get("op") not in ("cancel", "close"):
                self.send({"op": "cancel", "stream": stream})  # the server's side goes now too

    def _lose_all(self, error: BaseException) -> None:
        """End every live call with ``error``, why quick ops failed: a server that does not
        answer within LOST_AFTER, is gone, or refuses our ops (no plugin)."""
        logger.debug("quick ops to the Spark Connect server failed: %s", error)
        error.__traceback__ = None
        kind = ConnectionLostError if isinstance(error, ConnectionLostError) else ReactiveStreamsError
        with self._lock:
            lost = list(self._watched)
        for watched in lost:
            self._lose(watched, kind(str(error)))

    def _lose(self, watched: Watched, reason: ReactiveStreamsError) -> None:
        watched.lost = reason
        self.unwatch(watched)
        if watched.call is not None:
            watched.call.cancel()


_lock = threading.Lock()
_connections: weakref.WeakKeyDictionary[Any, Connection] = weakref.WeakKeyDictionary()


def connection(spark: Any) -> Connection:
    """The `Connection` of a Connect SparkSession, made on first use."""
    with _lock:
        made = _connections.get(spark)
        if made is None:
            made = _connections[spark] = Connection(spark)
        return made


def existing_connection(spark: Any) -> Connection | None:
    """The `Connection` of a Connect SparkSession, if one was made; None before first use."""
    with _lock:
        return _connections.get(spark)


def reach_server(spark: Any) -> None:
    """Raise at once, in one line, if ``spark``'s server refuses this client or its TLS
    handshake fails (`Connection.reach`): before PySpark's own calls, whose retries would
    wait some ten minutes on a handshake that cannot succeed."""
    connection(spark).reach()
