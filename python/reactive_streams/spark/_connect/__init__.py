"""The Spark Connect client: what ``reactive_streams.spark`` does on a Connect session, through
the server plugin ``io.github.rspy.spark.connect`` (docs/connect-wire.md).

- `_messages`: the wire's protobuf messages, built from spark/src/main/proto/rspy_connect.proto;
- `_wire`: the messages (Calls, replies) and the errors;
- `_channel`: the gRPC channel of the client's own;
- `_connection`: a session's calls, its quick ops, leases and watchdog (`Connection`);
- `_mux`: the session's one reply path, which every stream's replies share;
- `_subscription`: streams of elements (`jvm_publisher`, a registered subscriber's rows);
- `_streaming`: the ``reactive-streams`` source and sink's registrations;
- `_dataframe`: DataFrames fetched partition by partition, and publishers uploaded as DataFrames.

The rest of ``reactive_streams.spark`` uses the names below only.
"""

from ._connection import reach_server as reach_server
from ._dataframe import ConnectPartitions as ConnectPartitions
from ._dataframe import upload_dataframe as upload_dataframe
from ._streaming import register_publisher as register_publisher
from ._streaming import register_subscriber as register_subscriber
from ._streaming import stream_stats as stream_stats
from ._streaming import unregister as unregister
from ._subscription import JvmPublisher as JvmPublisher
from ._wire import ConnectionLostError as ConnectionLostError
from ._wire import server_refusals_named as server_refusals_named

__all__ = [
    "ConnectPartitions",
    "ConnectionLostError",
    "JvmPublisher",
    "reach_server",
    "register_publisher",
    "register_subscriber",
    "server_refusals_named",
    "stream_stats",
    "unregister",
    "upload_dataframe",
]
