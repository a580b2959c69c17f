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
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from ..._errors import ReactiveStreamsError
from ...jvm import error_from_java
from .._configure import CONNECT_COMMAND_PLUGIN, CONNECT_STATUS_PLUGIN

__all__ = [
    "ConnectionLostError",
    "Reply",
    "Watched",
    "decode_reply",
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
    """One reply of a call: ``status`` (a dict), ``elements`` (codec bytes) or ``arrow`` (IPC);
    ``stream`` is the stream it is of, on a reply path (None on a call of one stream)."""

    kind: str
    status: dict[str, Any] = field(default_factory=dict)
    data: bytes = b""
    stream: str | None = None


_elements_class: Any = None


def _elements(value: bytes) -> Any:
    """An Elements reply's message: ``stream`` (1, a string) and ``data`` (2, bytes)."""
    global _elements_class
    if _elements_class is None:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

        proto = descriptor_pb2.FileDescriptorProto(
            name="rspy_connect_elements.proto", package="io.github.rspy.connect", syntax="proto3"
        )
        message = proto.message_type.add(name="Elements")
        field_type = descriptor_pb2.FieldDescriptorProto
        message.field.add(
            name="stream", number=1, type=field_type.TYPE_STRING, label=field_type.LABEL_OPTIONAL
        )
        message.field.add(name="data", number=2, type=field_type.TYPE_BYTES, label=field_type.LABEL_OPTIONAL)
        pool = descriptor_pool.DescriptorPool()
        pool.Add(proto)
        _elements_class = message_factory.GetMessageClass(
            pool.FindMessageTypeByName("io.github.rspy.connect.Elements")
        )
    return _elements_class.FromString(value)


def decode_reply(response: Any) -> Reply | None:
    """The Reply in an ExecutePlanResponse; None if it carries none of ours."""
    if response.HasField("extension"):
        any_reply = response.extension
        if any_reply.type_url == ELEMENTS:
            elements = _elements(any_reply.value)
            return Reply("elements", data=elements.data, stream=elements.stream or None)
        if any_reply.type_url == STATUS:
            status = json.loads(any_reply.value)
            return Reply("status", status=status, stream=status.get("stream"))
    elif response.HasField("arrow_batch"):
        return Reply("arrow", data=response.arrow_batch.data)
    return None


def status_error(status: dict[str, Any]) -> ReactiveStreamsError:
    """A Status ``error`` event as the exception it reports (a `JvmError`)."""
    return error_from_java(
        status.get("class", "java.lang.Exception"), status.get("message"), status.get("stack", "")
    )


def missing_plugin() -> ReactiveStreamsError:
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
