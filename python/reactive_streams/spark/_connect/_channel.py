"""The gRPC channel of a `Connection`'s own, for its streams and quick ops, beside PySpark's.

It differs from the client's channel in two ways, both for the round trip of a ``request(n)``,
which a subscriber that asks again only once its elements have arrived waits for every time:

- replies are read on the thread that reads the call (gRPC's single-threaded unary-stream
  mode), with no hop through gRPC's polling thread per reply;
- a bearer token goes as a header of each call, rather than as call credentials, which gRPC
  runs as Python on a thread of its own for every call (measured: 0.6 ms a quick op with them,
  0.36 ms without).

A channel builder of another kind than PySpark's default (say, a vendor's) keeps its own way of
authenticating: its channel is made by the builder itself, with the single-threaded mode added.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass
from typing import Any

__all__ = ["OwnChannel", "finish", "own_channel"]

logger = logging.getLogger("reactive_streams.spark")


@dataclass(frozen=True)
class OwnChannel:
    """A channel (None: the client's own, which the connection must not close), its stub, and
    the metadata every call on it sends."""

    channel: Any
    stub: Any
    metadata: list[tuple[str, str]]

    def close(self) -> None:
        if self.channel is not None:
            self.channel.close()


def own_channel(client: Any) -> OwnChannel:
    """A channel to ``client``'s server like its own (target, credentials, options,
    interceptors, headers); the client's own channel if one cannot be made."""
    from pyspark.sql.connect.proto import base_pb2_grpc

    builder = client._builder
    metadata = list(builder.metadata())
    try:
        channel, token = _token_as_header(builder)
        if channel is None:
            made = copy.copy(builder)  # a builder of another kind: its own channel, in our mode
            made._channel_options = [*builder._channel_options, _single_threaded()]
            channel = made.toChannel()
    except Exception:  # a builder of yet another shape: the client's channel does the same, slower
        logger.debug("no channel of our own for Spark Connect calls; using the client's", exc_info=True)
        return OwnChannel(None, client._stub, metadata)
    if token is not None:
        metadata.append(("authorization", f"Bearer {token}"))
    stub = base_pb2_grpc.SparkConnectServiceStub(channel)  # type: ignore[no-untyped-call]
    return OwnChannel(channel, stub, metadata)


def _options(builder: Any) -> list[tuple[str, Any]]:
    effective = getattr(builder, "_effective_channel_options", None)  # keepalives (PySpark 4.1+)
    options = effective() if effective is not None else builder._channel_options
    return [*options, _single_threaded()]


def _token_as_header(builder: Any) -> tuple[Any, str | None]:
    """PySpark's default builder's channel, with its token left for a header: (channel, token);
    (None, None) for a builder of another kind."""
    import grpc
    from pyspark.sql.connect.client.core import DefaultChannelBuilder

    if type(builder).toChannel is not DefaultChannelBuilder.toChannel:
        return None, None
    options = _options(builder)
    if not builder.secure:
        channel = grpc.insecure_channel(builder.endpoint, options=options)
    else:
        local = not builder.use_ssl and builder._host == "localhost"
        credentials = grpc.local_channel_credentials() if local else grpc.ssl_channel_credentials()
        channel = grpc.secure_channel(builder.endpoint, credentials, options=options)
    if builder._interceptors:
        channel = grpc.intercept_channel(channel, *builder._interceptors)
    return channel, builder.token


def finish(call: Any) -> None:
    """Cancel ``call`` (a no-op once it has ended) and, if it is single-threaded, read the
    events it still owes: nothing else reads them, and until they are read the call keeps its
    connection open, even after its channel is closed."""
    call.cancel()
    consume = getattr(call, "_consume_next_event", None)  # gRPC's _SingleThreadedRendezvous
    state = getattr(call, "_state", None)
    try:
        while consume is not None and state is not None and state.due:
            consume()  # at once: a cancelled call's operations all complete
    except Exception:
        logger.debug("reading a cancelled call's last events failed", exc_info=True)


def _single_threaded() -> tuple[str, int]:
    import grpc

    return (grpc.experimental.ChannelOptions.SingleThreadedUnaryStream, 1)
