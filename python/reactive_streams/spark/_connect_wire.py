"""The client's side of the wire to the Connect server plugin (``io.github.rspy.spark.connect``).

Every call goes through here, because it needs PySpark's private client API: the public
``execute_command`` cannot read extension replies, and PySpark's retrying path waits about ten
minutes on a server that is gone. So calls are raw, non-reattachable, and never retried: a
lost server is a `ConnectionLostError` within seconds.

A Call is an ``Any`` whose value is ``{1: header JSON, 2: body}`` in protobuf's encoding; the
server answers with ``Status`` (JSON), ``Elements`` (the bridge's batch codec) or Arrow batches.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .._errors import ReactiveStreamsError
from ..jvm import error_from_java
from ._configure import CONNECT_COMMAND_PLUGIN, CONNECT_STATUS_PLUGIN
from ._connect_channel import OwnChannel, finish, own_channel

__all__ = ["ConnectionLostError", "Reply", "Watched", "connection", "new_stream_id"]

logger = logging.getLogger("reactive_streams.spark")

_TYPE = "type.googleapis.com/io.github.rspy.connect."
CALL, STATUS, ELEMENTS = _TYPE + "Call", _TYPE + "Status", _TYPE + "Elements"
#: What a stream may go without hearing from the server (it sends a heartbeat every second).
LOST_AFTER = 5.0
#: What a call may wait for the server's first reply: the first call of a session makes the
#: session and its planner on the server, which can take seconds on a loaded server.
FIRST_REPLY_WITHIN = 60.0
#: How often the open streams' leases are renewed (the server's idle timeout is 10 s by default).
KEEPALIVE_EVERY = 1.0
_QUICK_TIMEOUT = LOST_AFTER


class ConnectionLostError(ReactiveStreamsError):
    """The Spark Connect server went away, or stopped answering, while a stream was live."""


def new_stream_id() -> str:
    return uuid.uuid4().hex


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def encode_call(header: dict[str, Any], body: bytes | None = None) -> Any:
    """The ``Any`` of one Call: protobuf fields 1 (header JSON) and 2 (body)."""
    from google.protobuf import any_pb2

    head = json.dumps(header).encode()
    value = b"\x0a" + _varint(len(head)) + head
    if body is not None:
        value += b"\x12" + _varint(len(body)) + body
    return any_pb2.Any(type_url=CALL, value=value)


@dataclass
class Reply:
    """One reply of a call: ``status`` (a dict), ``elements`` (codec bytes) or ``arrow`` (IPC)."""

    kind: str
    status: dict[str, Any] = field(default_factory=dict)
    data: bytes = b""


def status_error(status: dict[str, Any]) -> ReactiveStreamsError:
    """A Status ``error`` event as the exception it reports (a `JvmError`)."""
    return error_from_java(
        status.get("class", "java.lang.Exception"), status.get("message"), status.get("stack", "")
    )


def _missing_plugin() -> ReactiveStreamsError:
    return ReactiveStreamsError(
        "the Spark Connect server does not have reactive-streams' plugin: start it with "
        "`python -m reactive_streams.spark.connect_server`, or with the confs of "
        "reactive_streams.spark.connect_confs(): spark.jars=<reactive_streams.spark.spark_classpath()>, "
        f"spark.connect.extensions.command.classes={CONNECT_COMMAND_PLUGIN} and "
        f"spark.connect.extensions.getStatus.classes={CONNECT_STATUS_PLUGIN}"
    )


class Watched:
    """A live call the connection watches: it is cancelled and marked ``lost`` when nothing
    was heard on it for `LOST_AFTER` seconds (a stopped or unreachable server), or before its
    first reply for `FIRST_REPLY_WITHIN` seconds."""

    __slots__ = ("call", "heard", "lost", "silence", "stream")

    def __init__(self) -> None:
        self.call: Any = None
        self.stream: str | None = None  # the stream the call carries (its header's), if any
        self.heard = time.monotonic()
        self.lost: ReactiveStreamsError | None = None  # why the connection cancelled the call
        self.silence = FIRST_REPLY_WITHIN  # the longest it may go unheard


class Connection:
    """One Connect session's calls: raw ExecutePlan calls, and one daemon thread that sends
    the quick ops (demand, cancel, keepalive) in batches and watches the live calls. The
    thread runs only while there are open streams.

    Stream calls (watched ones) and the thread's quick ops go through a gRPC channel of the
    connection's own (`own_channel`: faster round trips), opened by the first and closed with
    the thread."""

    def __init__(self, spark: Any) -> None:
        self._client = spark.client
        self._lock = threading.Condition()
        self._pending: list[dict[str, Any]] = []  # quick ops waiting for the thread
        self._open: set[str] = set()  # streams whose leases are renewed
        self._watched: set[Watched] = set()
        self._thread: threading.Thread | None = None
        self._own: OwnChannel | None = None  # the streams' and the thread's, while it runs
        self._status_path = True  # GetStatus extensions, until the server shows it has none
        self._session_made = False  # whether a call of ours made the session on the server

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
                if response.HasField("extension"):
                    any_reply = response.extension
                    if any_reply.type_url == ELEMENTS:
                        yield Reply("elements", data=any_reply.value)
                    elif any_reply.type_url == STATUS:
                        status = json.loads(any_reply.value)
                        if status.get("event") == "error" and errors_raised:
                            raise status_error(status)
                        if status.get("event") != "heartbeat":
                            yield Reply("status", status=status)
                elif response.HasField("arrow_batch"):
                    yield Reply("arrow", data=response.arrow_batch.data)
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
        replies = [json.loads(r.value) for r in response.extensions if r.type_url == STATUS]
        if len(replies) != len(calls):  # no status plugin on this server: commands instead
            self._status_path = False
            return self.quick(calls, body, own)
        return replies

    def _rpc_error(self, exc: Any, watched: Watched | None) -> Exception:
        import grpc

        code = exc.code()
        if watched is not None and watched.lost is not None:
            return watched.lost
        if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            return ConnectionLostError(
                f"the Spark Connect server is unreachable ({code.name}): {exc.details()}"
            )
        if code == grpc.StatusCode.CANCELLED:
            return ConnectionLostError("the call to the Spark Connect server was cancelled")
        if "NO_HANDLER_FOR_EXTENSION" in str(exc.details()):
            return _missing_plugin()
        try:
            self._client._handle_error(exc)
        except Exception as mapped:
            return mapped
        return ReactiveStreamsError(str(exc.details()))  # pragma: no cover - _handle_error raises

    # -- the lease thread ---------------------------------------------------------------------

    def open(self, stream: str) -> None:
        """Renew ``stream``'s lease from now on, until `close`."""
        with self._lock:
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
                if not (self._pending or self._open or self._watched):
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
            with self._lock:
                calls = [
                    w for w in self._watched if op.get("stream") is not None and w.stream == op.get("stream")
                ]
            for watched in calls:
                self._lose(watched, error)
            if calls and op.get("op") not in ("cancel", "close"):
                self.send({"op": "cancel", "stream": op["stream"]})  # the server's side goes now too

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
