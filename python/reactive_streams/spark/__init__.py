"""Spark interop: the bridge inside PySpark's own JVM gateway, and, on Spark Connect, a server
plugin of its own (same functions: ``jvm_publisher``, ``publisher_from_dataframe``,
``arrow_batches_from_dataframe``, ``dataframe_from_publisher``).

from pyspark.sql import SparkSession
from reactive_streams import spark as rss
spark = rss.configure(SparkSession.builder).getOrCreate()            # classic
spark = rss.configure(SparkSession.builder.remote("local[2]")).getOrCreate()  # Connect, embedded

Where the data is: ``register_source``, ``register_sink`` and ``map_partitions`` run publishers,
subscribers and processors per partition in the executors' Python workers.
"""

from ._configure import CONNECT_COMMAND_PLUGIN as CONNECT_COMMAND_PLUGIN
from ._configure import CONNECT_SERVER_PLUGIN as CONNECT_SERVER_PLUGIN
from ._configure import CONNECT_STATUS_PLUGIN as CONNECT_STATUS_PLUGIN
from ._configure import LOCAL_CHECKPOINTS as LOCAL_CHECKPOINTS
from ._configure import configure as configure
from ._configure import connect_confs as connect_confs
from ._configure import spark_classpath as spark_classpath
from ._connect import ConnectionLostError as ConnectionLostError
from ._dataframe import arrow_batches_from_dataframe as arrow_batches_from_dataframe
from ._dataframe import dataframe_from_publisher as dataframe_from_publisher
from ._dataframe import publisher_from_dataframe as publisher_from_dataframe
from ._jvm_publisher import jvm_publisher as jvm_publisher
from ._progress import describe_streams as describe_streams
from ._progress import sink_progress as sink_progress
from ._progress import source_progress as source_progress
from ._session import bridge as bridge
from ._session import new_bridge as new_bridge
from ._sink import SinkSubscription as SinkSubscription
from ._streaming import FORMAT as FORMAT
from ._streaming import Registration as Registration
from ._streaming import input_exhausted as input_exhausted
from ._streaming import register_publisher as register_publisher
from ._streaming import register_subscriber as register_subscriber
from ._streaming import stream_stats as stream_stats
from ._streaming import unregister as unregister
from .partitioned import DEFAULT_RECORDS_PER_PARTITION as DEFAULT_RECORDS_PER_PARTITION
from .partitioned import PartitionError as PartitionError
from .partitioned import SinkCommit as SinkCommit
from .partitioned import map_partitions as map_partitions
from .partitioned import register_sink as register_sink
from .partitioned import register_source as register_source

__all__ = [
    "CONNECT_COMMAND_PLUGIN",
    "CONNECT_SERVER_PLUGIN",
    "CONNECT_STATUS_PLUGIN",
    "DEFAULT_RECORDS_PER_PARTITION",
    "FORMAT",
    "LOCAL_CHECKPOINTS",
    "ConnectionLostError",
    "PartitionError",
    "Registration",
    "SinkCommit",
    "SinkSubscription",
    "arrow_batches_from_dataframe",
    "bridge",
    "configure",
    "connect_confs",
    "dataframe_from_publisher",
    "describe_streams",
    "input_exhausted",
    "jvm_publisher",
    "map_partitions",
    "new_bridge",
    "publisher_from_dataframe",
    "register_publisher",
    "register_sink",
    "register_source",
    "register_subscriber",
    "sink_progress",
    "source_progress",
    "spark_classpath",
    "stream_stats",
    "unregister",
]
