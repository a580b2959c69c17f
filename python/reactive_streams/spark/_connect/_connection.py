"""A Connect session's calls to the server plugin: raw ExecutePlan calls, quick ops, leases.

Every call goes through here, because it needs PySpark's private client API: the public
``execute_command`` cannot read extension replies, and PySpark's retrying path waits about ten
minutes on a server that is gone. So calls are raw, non-reattachable, and never retried: a
lost server is a `ConnectionLostError` within seconds.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import time
import weakref
from collections.abc import Iterator
from typing import Any

from ..._errors import ReactiveStreamsError
from ..._gauges import StreamState
from ._channel import OwnChannel, finish, own_channel
from ._mux import ReplyPath, StreamReceiver
from ._wire import (
    KEEPALIVE_EVERY,
    LOST_AFTER,
    STATUS,
    ConnectionLostError,
    Reply,
    Watched,
    decode_reply,
    decode_status,
    encode_call,
    missing_plugin,
    refused_by_server,
    status_error,
)

__all__ = ["Connection", "connection"]

logger = logging.getLogger("reactive_streams.spark")

_QUICK_TIMEOUT = LOST_AFTER


class Connection:
    """One Connect session's calls: raw ExecutePlan calls, the session's reply path (a
    `ReplyPath`, which every stream's replies share), and one daemon thread that sends the quick
    ops (opening streams, demand, cancel, keepalive) in batches and watches the live calls. The
    thread runs only while there are open streams.

    Watched calls (the reply path, DataFrame fetches) and the thread's quick ops go through a
    gRPC channel of the connection's own (`own_channel`: faster round trips), opened by the
    first and closed with the thread."""

    def __init__(self, spark: Any) -> None:
        self._client = spark.client
        self._session = weakref.ref(spark)
        self._lock = threading.Condition()
        self._pending: list[dict[str, Any]] = []  # quick ops waiting for the thread
        self._open: set[str] = set()  # streams whose leases are renewed
        self._watched: set[Watched] = set()
        self._thread: threading.Thread | None = None
        self._own: OwnChannel | None = None  # the streams' and the thread's, while it runs
        # GetStatus extensions (clients before PySpark 4.2 have no such call), until the server
        # shows it has none.
        self._status_path = _client_has_get_status()
        self._session_made = False  # whether a call of ours made the session on the server
        self._path: ReplyPath | None = None  # the reply path streams join now; guarded by _lock
        self._paths: set[ReplyPath] = set()  # paths whose call has not ended; guarded by _lock
        self._suspects: set[str] = set()  # streams the last keepalive said were unknown; guarded by _lock
        self._closed = False  # the session closes or has closed: no stream opens, no op is sent
        # Sink streams a query claimed: they end when it ends, told by Spark's listener bus.
        self._query_bound: set[str] = set()  # guarded by _lock
        self._checked = False  # whether `reach` has had its answer (a refusal raises, and checks again)
        _end_streams_before_the_session(self._client, self)

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

    # -- calls --------------------------------------------------------------------------------

    def execute(
        self,
        header: dict[str, Any],
        body: bytes | None = None,
        watched: Watched | None = None,
        errors_raised: bool = True,
    ) -> Iterator[Reply]:
        """The replies of one ExecutePlan call carrying ``header`` and ``body``; a Status
        ``error`` event is raised as its exception (a reply if not ``errors_raised``), a lost
        server as `ConnectionLostError`."""
        import grpc
        import pyspark.sql.connect.proto as pb2

        self.reach()
        client = self._client
        request = client._execute_plan_request_with_metadata()
        request.request_options.append(
            pb2.ExecutePlanRequest.RequestOption(reattach_options=pb2.ReattachOptions(reattachable=False))
        )
        client._set_command_in_plan(request.plan, pb2.Command(extension=encode_call(header, body)))
        if watched is None:
            call = client._stub.ExecutePlan(request, metadata=client._builder.metadata())
        else:
            watched.stream = header.get("stream")
            with self._lock:  # watched before the thread can close the channel it uses
                own = self._own_locked()
                watched.heard = time.monotonic()
                self._watched.add(watched)
                self._start_locked()
            call = watched.call = own.stub.ExecutePlan(request, metadata=own.metadata)
            if watched.lost is not None:  # lost before it had a call to cancel
                call.cancel()
        self._session_made = True
        try:
            for response in call:
                client._verify_response_integrity(response)
                if watched is not None:
                    watched.heard = time.monotonic()
                    watched.silence = LOST_AFTER
                reply = decode_reply(response)
                if reply is None or reply.status.get("event") == "heartbeat":
                    continue
                if reply.status.get("event") == "error" and errors_raised:
                    raise status_error(reply.status)
                yield reply
        except grpc.RpcError as exc:
            error = self._rpc_error(exc, watched)
            # The error is the call itself, and its traceback refers back to it: a cycle that
            # only the garbage collector would free, running grpc's __del__ on whatever thread
            # it interrupts, which can deadlock grpc's own locks. So no call ends in a cycle.
            exc.__traceback__ = None
            raise error from None
        finally:
            finish(call)  # a caller may stop reading early (at a stream's end event)
            call = None
            if watched is not None:
                watched.call = None
                self.unwatch(watched)

    def command(
        self, header: dict[str, Any], body: bytes | None = None, errors_raised: bool = True
    ) -> dict[str, Any]:
        """The last Status of a call that answers at once (open, upload, stats); an ``error``
        is raised, or if not ``errors_raised`` returned as GetStatus returns it."""
        last: dict[str, Any] = {}
        for reply in self.execute(header, body, errors_raised=errors_raised):
            if reply.kind == "status":
                last = reply.status
        return last

    def quick(
        self, calls: list[dict[str, Any]], body: bytes | None = None, own: OwnChannel | None = None
    ) -> list[dict[str, Any]]:
        """Quick ops, answered in order: through GetStatus extensions (no operation, no
        thread on the server) if the server has the status plugin, else as commands. ``body``
        goes with the last call (a push's elements); ``own`` is the channel to use, if not the
        client's. An op the server refused is an ``error`` reply on either path (its caller
        decides), a server that fails the call itself an exception."""
        import grpc
        import pyspark.sql.connect.proto as pb2

        bodies = [None] * (len(calls) - 1) + [body]
        if not (self._status_path and self._session_made):
            # GetStatus finds only sessions the server has: an ExecutePlan makes it first.
            self._session_made = True
            return [self.command(c, b, errors_raised=False) for c, b in zip(calls, bodies, strict=True)]
        client = self._client
        request = pb2.GetStatusRequest(session_id=client._session_id, client_type=client._builder.userAgent)
        if client._user_id:
            request.user_context.user_id = client._user_id
        if client._server_session_id:
            request.client_observed_server_side_session_id = client._server_session_id
        request.extensions.extend(encode_call(c, b) for c, b in zip(calls, bodies, strict=True))
        stub, metadata = (
            (client._stub, client._builder.metadata()) if own is None else (own.stub, own.metadata)
        )
        try:
            response = stub.GetStatus(request, metadata=metadata, timeout=_QUICK_TIMEOUT)
        except grpc.RpcError as exc:
            exc.__traceback__ = None  # no cycle through the call (see execute)
            if exc.code() == grpc.StatusCode.UNIMPLEMENTED:
                self._status_path = False
                return self.quick(calls, body, own)
            raise self._rpc_error(exc, None) from None
        client._verify_response_integrity(response)
        replies = [decode_status(r.value) for r in response.extensions if r.type_url == STATUS]
        if len(replies) != len(calls):  # no status plugin on this server: commands instead
            self._status_path = False
            return self.quick(calls, body, own)
        return replies

    def reach(self) -> None:
        """Before the first call of ours, one call without PySpark's retries: those retry a
        failed TLS handshake, as any UNAVAILABLE, for some ten minutes, where a refusal or a
        handshake that failed is raised at once, in one line (`refused_by_server`). Any other
        failure is left to the calls themselves (and their retries), and not checked again: a
        server not up yet would otherwise cost every call this check's deadline."""
        if self._checked:
            return
        import grpc
        import pyspark.sql.connect.proto as pb2

        client = self._client
        request = client._config_request_with_metadata()
        request.operation.CopyFrom(
            pb2.ConfigRequest.Operation(get_option=pb2.ConfigRequest.GetOption(keys=["spark.app.name"]))
        )
        try:
            client._stub.Config(request, metadata=client._builder.metadata(), timeout=_QUICK_TIMEOUT)
        except grpc.RpcError as exc:
            exc.__traceback__ = None  # no cycle through the call (see execute)
            refused = refused_by_server(exc)
            if refused is not None:
                raise refused from None
            logger.debug("the first call's check failed (%s); the calls go on", exc.code())
        self._checked = True

    def _rpc_error(self, exc: Any, watched: Watched | None) -> Exception:
        import grpc

        code = exc.code()
        if watched is not None and watched.lost is not None:
            return watched.lost
        refused = refused_by_server(exc)
        if refused is not None:
            return refused
        if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            return ConnectionLostError(
                f"the Spark Connect server is unreachable ({code.name}): {exc.details()}"
            )
        if code == grpc.StatusCode.CANCELLED:
            return ConnectionLostError("the call to the Spark Connect server was cancelled")
        if "NO_HANDLER_FOR_EXTENSION" in str(exc.details()):
            return missing_plugin()
        try:
            self._client._handle_error(exc)
        except Exception as mapped:
            return mapped
        return ReactiveStreamsError(str(exc.details()))  # pragma: no cover - _handle_error raises

    # -- the lease thread ---------------------------------------------------------------------

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
                    replies = self.quick(pending, own=own)  # at most LOST_AFTER: the watchdog waits no longer
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


def _end_streams_before_the_session(client: Any, connection: Connection) -> None:
    """Has ``client``'s ``release_session`` and ``close`` (what ``spark.stop()`` calls, in this
    order; ``close`` alone when the session is not the client's to release) end ``connection``'s
    streams first. On this client object only; a client of another shape is left as it is."""
    for name in ("release_session", "close"):
        original = getattr(client, name, None)
        if original is None:
            continue

        def closing(*args: Any, _original: Any = original, _name: str = name, **kwargs: Any) -> Any:
            try:
                connection.shutdown()
                if _name == "release_session":
                    _wait_for_execution_releases(client)
            except Exception:  # the session closes regardless
                logger.debug("ending the streams of a closing Spark Connect session failed", exc_info=True)
            return _original(*args, **kwargs)

        try:
            setattr(client, name, closing)
        except (AttributeError, TypeError):  # pragma: no cover - a client that takes no attributes
            logger.debug("cannot hook %s of %r: its streams end with the session", name, client)


def _wait_for_execution_releases(client: Any, timeout: float = 10.0) -> None:
    """PySpark's client releases each finished execution with a ReleaseExecute sent from a thread
    pool, and its ``stop()`` releases the session before ``close()`` waits for them: one still on
    its way then reaches a released session, and the server logs ``SessionHolder not found`` and an
    ``ERROR`` with ``INVALID_HANDLE.SESSION_CLOSED``. Wait for them before the session goes (the
    client's own list of them, as its ``close`` reads it; a client without one is left as it is)."""
    pending = getattr(client, "_release_futures", None)
    if pending:
        concurrent.futures.wait(list(pending), timeout=timeout)


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


def _client_has_get_status() -> bool:
    """Whether this PySpark's Connect protocol has the GetStatus call (4.2 and later)."""
    import pyspark.sql.connect.proto as pb2

    return hasattr(pb2, "GetStatusRequest")
