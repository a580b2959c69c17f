"""DataFrames over Spark Connect: a DataFrame's partitions fetched from the server plugin as
demand requires, and a publisher's chunks uploaded to become a DataFrame on the server."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .._errors import ReactiveStreamsError
from ._connect_wire import Watched, connection, new_stream_id
from ._partitions import PartitionFetcher

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

__all__ = ["ConnectPartitions", "upload_dataframe"]


class ConnectPartitions(PartitionFetcher):
    """A Connect DataFrame's partitions: ``open_dataframe`` plans it on the server (in the
    client's session), and each ``fetch`` call runs one partition's job there and answers
    with its Arrow batches. Cancelling cancels the server's jobs (by the stream's job tag)
    and the call in flight."""

    def __init__(self, df: DataFrame, prefetch: int, max_records_per_batch: int) -> None:
        import pyarrow as pa

        # The partitions asked for and prefetched are computed at once, each its own job on the
        # server (classic mode runs them one after another in the driver the client shares).
        super().__init__(prefetch, workers=1 + prefetch)
        session = df.sparkSession
        self._connection = connection(session)
        self.group = self.stream = new_stream_id()
        relation = df._plan.plan(session.client)  # type: ignore[operator]
        opened = self._connection.command(
            {"op": "open_dataframe", "stream": self.stream, "max_records_per_batch": max_records_per_batch},
            relation.SerializeToString(),
        )
        self._connection.open(self.stream)  # its lease, renewed until the pass ends
        self.count = int(opened["partitions"])
        self.arrow_schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(opened["schema"])))
        self._in_flight: set[Watched] = set()

    def fetch(self, index: int) -> list[pa.RecordBatch]:
        import pyarrow as pa

        watched = Watched()
        self._in_flight.add(watched)
        batches: list[pa.RecordBatch] = []
        header = {"op": "fetch", "stream": self.stream, "partition": index}
        try:
            for reply in self._connection.execute(header, watched=watched):
                if reply.kind == "arrow":
                    batches.append(pa.ipc.open_stream(reply.data).read_next_batch())
                elif reply.status.get("event") == "cancelled":
                    raise ReactiveStreamsError(f"partition {index}'s job was cancelled on the server")
        finally:
            self._in_flight.discard(watched)
        return batches

    def cancel(self) -> None:
        super().cancel()
        self._connection.close(self.stream, "cancel")  # the server cancels the stream's jobs
        for watched in list(self._in_flight):
            call = watched.call
            if call is not None:
                call.cancel()

    def close(self) -> None:
        super().close()
        self._connection.close(self.stream, "close")


def upload_dataframe(spark: Any, chunks: Iterable[pa.RecordBatch], schema: StructType) -> DataFrame:
    """A DataFrame on the server, of ``chunks`` sent one call each (the server keeps them, as
    classic mode keeps them in the driver); the server forgets it when the DataFrame is
    garbage-collected or the session ends."""
    wire = connection(spark)
    stream = new_stream_id()
    wire.open(stream)
    finished = False
    try:
        for batch in chunks:
            wire.command({"op": "upload_append", "stream": stream}, batch.serialize().to_pybytes())
        df_id = str(uuid.uuid4())
        wire.command({"op": "upload_finish", "stream": stream, "schema": schema.json(), "df_id": df_id})
        finished = True
    finally:
        wire.close(stream, None if finished else "close")
    return spark._create_remote_dataframe(df_id)  # type: ignore[no-any-return]
