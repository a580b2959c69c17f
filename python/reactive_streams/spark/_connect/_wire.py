"""The messages of the wire to the Connect server plugin (``io.github.rspy.spark.connect``), its
timeouts and its errors; `_connection` makes the calls.

A Call is an ``Any`` holding a ``Call`` message (spark/src/main/proto/rspy_connect.proto): the
stream, a body and one op with its fields; the server answers with ``Status`` (an event with its
fields), ``Elements`` (the stream's id and a batch in the bridge's codec) or Arrow batches.
Callers write an op as a dict (``{"op": "demand", "stream": s, "n": 1}``) and read a Status as
one (``{"event": "ok", "stream": s, ...}``); both are checked against the .proto's messages, so a
misspelt field or a value of the wrong type raises here, before anything is sent.
"""

from __future__ import annotations

import contextlib
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..._errors import ReactiveStreamsError
from ...jvm import error_from_java
from .._configure import CONNECT_COMMAND_PLUGIN, CONNECT_STATUS_PLUGIN
from ._messages import as_dict, message

__all__ = [
    "ConnectionLostError",
    "Reply",
    "Watched",
    "decode_reply",
    "decode_status",
    "encode_call",
    "missing_plugin",
    "new_stream_id",
    "status_error",
]

_TYPE = "type.googleapis.com/io.github.rspy.connect."
CALL, STATUS, ELEMENTS = _TYPE + "Call", _TYPE + "Status", _TYPE + "Elements"
#: What a stream may go without hearing from the server (it sends a heartbeat every second).
LOST_AFTER = 5.0
#: What a call may wait for the server's first reply: the first call of a session makes the
#: session and its planner on the server, which can take seconds on a loaded server.
FIRST_REPLY_WITHIN = 60.0
#: How often the open streams' leases are renewed (the server's idle timeout is 10 s by default).
KEEPALIVE_EVERY = 1.0


class ConnectionLostError(ReactiveStreamsError):
    """The Spark Connect server went away, or stopped answering, while a stream was live."""


def new_stream_id() -> str:
    return uuid.uuid4().hex


def encode_call(op: dict[str, Any], body: bytes | None = None) -> Any:
    """The ``Any`` of one Call: ``op`` names the op (the .proto's ``Call.op``), ``stream`` its
    stream, and the other keys its fields; a push's ``end`` is ``complete`` or ``error``."""
    from google.protobuf import any_pb2

    fields = dict(op)
    name = fields.pop("op")
    stream = fields.pop("stream", None) or ""
    if name == "push" and fields.get("end") is not None:
        fields["end"] = f"END_{fields['end'].upper()}"  # the .proto's Call.End, by name
    fields = {key: value for key, value in fields.items() if value is not None}  # None: unset
    make = message("Call")
    try:
        call = make(stream=stream, body=body or b"", **{name: fields})
    except (TypeError, ValueError) as exc:  # protobuf's own words may not name the field
        bad = [key for key in fields if not _fits(make, name, key, fields[key])]
        raise type(exc)(
            f"the Connect call {name!r} does not fit the .proto"
            f"{' in ' + ', '.join(map(repr, bad)) if bad else ''}: {exc}"
        ) from exc
    return any_pb2.Any(type_url=CALL, value=call.SerializeToString())


def _fits(make: Any, name: str, key: str, value: Any) -> bool:
    try:
        make(**{name: {key: value}})
    except (TypeError, ValueError):
        return False
    return True


def decode_status(data: bytes) -> dict[str, Any]:
    """A Status as a dict: ``event`` (the .proto's ``Status.event``), ``stream`` (None if
    empty), and the event's fields."""
    status = message("Status").FromString(data)
    event = status.WhichOneof("event")
    fields = as_dict(getattr(status, event)) if event else {}
    return {"event": event, "stream": status.stream or None, **fields}


@dataclass
class Reply:
    """One reply of a call: ``status`` (a dict), ``elements`` (codec bytes) or ``arrow`` (IPC);
    ``stream`` is the stream it is of, on a reply path (None on a call of one stream)."""

    kind: str
    status: dict[str, Any] = field(default_factory=dict)
    data: bytes = b""
    stream: str | None = None


def decode_reply(response: Any) -> Reply | None:
    """The Reply in an ExecutePlanResponse; None if it carries none of ours."""
    if response.HasField("extension"):
        any_reply = response.extension
        if any_reply.type_url == ELEMENTS:
            elements = message("Elements").FromString(any_reply.value)
            return Reply("elements", data=elements.data, stream=elements.stream or None)
        if any_reply.type_url == STATUS:
            status = decode_status(any_reply.value)
            return Reply("status", status=status, stream=status["stream"])
    elif response.HasField("arrow_batch"):
        return Reply("arrow", data=response.arrow_batch.data)
    return None


def status_error(status: dict[str, Any]) -> ReactiveStreamsError:
    """A Status ``error`` event as the exception it reports (a `JvmError`)."""
    return error_from_java(
        status.get("java_class") or "java.lang.Exception", status.get("message"), status.get("stack", "")
    )


def missing_plugin() -> ReactiveStreamsError:
    return ReactiveStreamsError(
        "the Spark Connect server does not have reactive-streams' plugin: start it with "
        "`python -m reactive_streams.spark.connect_server`, or with the confs of "
        "reactive_streams.spark.connect_confs(): spark.jars=<reactive_streams.spark.spark_classpath()>, "
        f"spark.connect.extensions.command.classes={CONNECT_COMMAND_PLUGIN} and "
        f"spark.connect.extensions.getStatus.classes={CONNECT_STATUS_PLUGIN}"
    )


def refused_by_server(exc: BaseException) -> ReactiveStreamsError | None:
    """The one-line error for a call the server refused this client (``UNAUTHENTICATED``: no
    token, or not its token; ``PERMISSION_DENIED``), or whose TLS handshake failed (a
    certificate this client does not trust, or no TLS where the server's proxy speaks it), or
    None for any other failure. ``exc`` is grpc's error, or PySpark's exception that wraps it."""
    try:
        import grpc
    except ImportError:  # a classic session's client: no gRPC, nothing of Connect's to refuse
        return None

    status, details = None, None
    if isinstance(exc, grpc.RpcError) and callable(getattr(exc, "code", None)):
        status = exc.code()
        details = exc.details() if callable(getattr(exc, "details", None)) else None
    if status is None:  # PySpark's SparkConnectGrpcException: grpc's repr in its message
        text = str(exc)
        found = re.search(r"status = StatusCode\.(\w+)", text)
        status = getattr(grpc.StatusCode, found[1], None) if found else None
        said = re.search(r'details = "([^"]*)"', text)
        details = said[1] if said else None
    if status == grpc.StatusCode.UNAVAILABLE:
        return _tls_failed(str(details or ""))
    if status not in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
        return None
    reason = " ".join(str(details or "no reason given").split())  # one line
    return ReactiveStreamsError(
        f"the Spark Connect server refused this client: {reason} ({status.name}); give the "
        "server's token in the URL (sc://host:port/;token=...) or SPARK_CONNECT_AUTHENTICATE_TOKEN"
    )


# What gRPC's UNAVAILABLE says of a handshake that failed: BoringSSL's reason (a certificate
# not trusted), or a peer that is no TLS server, or no TLS client of a TLS server.
_HANDSHAKE = re.compile(r"(?:Ssl handshake failed|SSL_ERROR_\w+|TSI_\w+|ssl_transport)", re.IGNORECASE)
_TLS_REASON = re.compile(r"OPENSSL_internal:(.*)$|(WRONG_VERSION_NUMBER.*)$", re.IGNORECASE)


def _tls_failed(details: str) -> ReactiveStreamsError | None:
    if "Failed parsing HTTP/2" in details or "http1.x server" in details:
        # No HTTP/2 came back: plain gRPC to a TLS port (nginx answers with HTTP/1's 400), or to
        # a server of another kind.
        http1 = re.search(r"Trying to connect an http1\.x server \(([^)]*)\)", details)
        answer = f"an HTTP/1 server ({http1[1]})" if http1 else "not HTTP/2"
        return ReactiveStreamsError(
            f"the Spark Connect server's address did not answer as gRPC does ({answer}): if it is a "
            "TLS proxy, give use_ssl=true (or a token) in the URL"
        )
    if not _HANDSHAKE.search(details):
        return None
    details = re.sub(r":\s*OK\s*$", "", details.strip())  # gRPC's own status, after BoringSSL's
    said = _TLS_REASON.search(details)
    reason = " ".join((said[1] or said[2]).split()) if said else " ".join(details.split())[-200:]
    return ReactiveStreamsError(
        f"the TLS handshake with the Spark Connect server (or its proxy) failed: {reason}; trust "
        "the CA that signed its certificate (GRPC_DEFAULT_SSL_ROOTS_FILE_PATH, or a ChannelBuilder "
        "of your own), and give use_ssl=true or a token in the URL only where the server speaks TLS"
    )


@contextlib.contextmanager
def server_refusals_named() -> Iterator[None]:
    """PySpark's own calls to the server, with a refusal of this client raised as
    `refused_by_server`'s one line (from None: grpc's repr says nothing more)."""
    try:
        yield
    except ReactiveStreamsError:
        raise
    except Exception as exc:
        refused = refused_by_server(exc)
        if refused is None:
            raise
        raise refused from None


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
