"""Reactive Streams where the data is: publishers, subscribers and processors per partition, in
the executors' Python workers (PySpark's Python Data Source API and ``mapInArrow``, so classic
and Spark Connect alike). The driver decides offsets only.

- `register_source`: a replayable publisher per partition, read within Spark's read limit;
- `register_sink`: a subscriber per write task, fed at its own demand;
- `map_partitions`: a processor per partition.

Their public names are exported by ``reactive_streams.spark``.
"""

from ._processor import map_partitions as map_partitions
from ._read import PartitionError as PartitionError
from ._sink import SinkCommit as SinkCommit
from ._sink import register_sink as register_sink
from ._source import DEFAULT_RECORDS_PER_PARTITION as DEFAULT_RECORDS_PER_PARTITION
from ._source import register_source as register_source

__all__ = [
    "DEFAULT_RECORDS_PER_PARTITION",
    "PartitionError",
    "SinkCommit",
    "map_partitions",
    "register_sink",
    "register_source",
]
