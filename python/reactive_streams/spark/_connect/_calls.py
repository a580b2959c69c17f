"""A Connect client's raw calls to the server plugin: ExecutePlan calls, quick ops, the first
call's check, and the hooks that end a session's streams before the session.

Every call goes through here, because it needs PySpark's private client API: the public
``execute_command`` cannot read extension replies, and PySpark's retrying path waits about ten
minutes on a server that is gone. So calls are raw, non-reattachable, and never retried: a
lost server is a `ConnectionLostError` within seconds.
"""

from __future__ import annotations

import concurrent.futures
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

from ..._errors import ReactiveStreamsError
from ._channel import OwnChannel, finish
from ._wire import (
    FIRST_REPLY_WITHIN,
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

__all__ = ["ServerCalls", "end_streams_before_the_session"]

logger = logging.getLogger("reactive_streams.spark")

_QUICK_TIMEOUT = LOST_AFTER


class ServerCalls:
    """One Connect client's calls: raw ExecutePlan calls (`execute`, `command`), quick ops
    (`quick`) and the first call's check (`reach`). A watched call (one the server must keep
    answering, or it is lost) goes through the channel its subclass gives it (`_watch`), which
    also watches it until `unwatch`."""

    def __init__(self, client: Any) -> None:
        self._client = client
        # GetStatus extensions (clients before PySpark 4.2 have no such call), until the server
        # shows it has none.
        self._status_path = _client_has_get_status()
        self._session_made = False  # whether a call of ours made the session on the server
        self._checked = False  # whether `reach` has had its answer (a refusal raises, and checks again)
        # Whether a GetStatus has been answered: the first may find the server still loading the
        # plugin's status path, and waits as long as a call's first reply may (CI once saw a
        # loaded server's first answer take over LOST_AFTER, which ended every stream).
        self._status_answered = False

    def _watch(self, watched: Watched) -> OwnChannel:
        """Starts watching ``watched`` (its silence, its loss) before its call is made; returns
        the channel the call goes through."""
        raise NotImplementedError

    def unwatch(self, watched: Watched) -> None:
        """Stops watching ``watched``: its call ended."""
        raise NotImplementedError

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
            own = self._watch(watched)
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
            timeout = _QUICK_TIMEOUT if self._status_answered else FIRST_REPLY_WITHIN
            response = stub.GetStatus(request, metadata=metadata, timeout=timeout)
        except grpc.RpcError as exc:
            exc.__traceback__ = None  # no cycle through the call (see execute)
            if exc.code() == grpc.StatusCode.UNIMPLEMENTED:
                self._status_path = False
                return self.quick(calls, body, own)
            raise self._rpc_error(exc, None) from None
        client._verify_response_integrity(response)
        self._status_answered = True
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


def end_streams_before_the_session(client: Any, shutdown: Callable[[], None]) -> None:
    """Has ``client``'s ``release_session`` and ``close`` (what ``spark.stop()`` calls, in this
    order; ``close`` alone when the session is not the client's to release) call ``shutdown``
    first, which ends the session's streams. On this client object only; a client of another
    shape is left as it is."""
    for name in ("release_session", "close"):
        original = getattr(client, name, None)
        if original is None:
            continue

        def closing(*args: Any, _original: Any = original, _name: str = name, **kwargs: Any) -> Any:
            try:
                shutdown()
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


def _client_has_get_status() -> bool:
    """Whether this PySpark's Connect protocol has the GetStatus call (4.2 and later)."""
    import pyspark.sql.connect.proto as pb2

    return hasattr(pb2, "GetStatusRequest")
