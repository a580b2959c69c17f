"""DataFrames over Spark Connect: a DataFrame's partitions fetched from the server plugin as
demand requires, and a publisher's chunks uploaded to become a DataFrame on the server."""

from __future__ import annotations

import queue
import threading
import uuid
from collections import deque
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ..._errors import ReactiveStreamsError
from .._partitions import PartitionFetcher
from ._connection import connection
from ._wire import Watched, new_stream_id

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

__all__ = ["ConnectPartitions", "upload_dataframe"]


class ConnectPartitions(PartitionFetcher):
    """A Connect DataFrame's partitions: ``open_dataframe`` plans it on the server (in the
    client's session), and each ``fetch`` call runs one partition's job there and answers
    with its Arrow batches, handed on as they arrive. Cancelling cancels the server's jobs (by
    the stream's job tag) and the calls in flight."""

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
        self.arrow_schema = pa.ipc.read_schema(pa.py_buffer(opened["schema"]))
        self._in_flight: set[Watched] = set()
        self._lock = threading.Lock()
        self._arriving: deque[queue.SimpleQueue[Any]] = deque()  # the partitions fetched ahead
        self._current: queue.SimpleQueue[Any] | None = None  # the partition being delivered
        self._stopped = False  # cancelled or closed: nothing more is submitted

    def next(self) -> Iterator[pa.RecordBatch] | None:
        """The next partition's batches as they arrive (the first is delivered while the rest
        are still on their way), the partitions after it fetched meanwhile, at most
        ``prefetch`` ahead; None after the last."""
        with self._lock:
            # The first partition's job runs alone, so that its first batch comes soonest;
            # the prefetch starts when it is in (see _fetch_into).
            self._fill_locked(self._prefetch if self._submitted else 0)
            if not self._arriving:
                return None
            self._current = self._arriving.popleft()
            return _drained(self._current)

    def _fill_locked(self, ahead: int) -> None:
        while not self._stopped and self._submitted < self.count and len(self._arriving) <= ahead:
            arrived: queue.SimpleQueue[Any] = queue.SimpleQueue()
            self._arriving.append(arrived)
            self._fetcher.submit(self._fetch_into, self._submitted, arrived)
            self._submitted += 1

    def _fetch_into(self, index: int, arrived: queue.SimpleQueue[Any]) -> None:
        import pyarrow as pa

        with self._lock:
            self.jobs_started += 1
        watched = Watched()
        self._in_flight.add(watched)
        header = {"op": "fetch", "stream": self.stream, "partition": index}
        try:
            for reply in self._connection.execute(header, watched=watched):
                if reply.kind == "arrow":
                    arrived.put(pa.ipc.open_stream(reply.data).read_next_batch())
                elif reply.status.get("event") == "cancelled":
                    raise ReactiveStreamsError(f"partition {index}'s job was cancelled on the server")
                elif reply.status.get("event") == "unknown":  # never an empty partition instead
                    raise ReactiveStreamsError(
                        f"the server no longer has this DataFrame's stream to fetch partition {index} "
                        "from (its session ended, or it went unrenewed past the idle timeout)"
                    )
        except BaseException as exc:
            arrived.put(exc)
        else:
            arrived.put(_END)
            if index == 0:  # partition 0 is being delivered: ``prefetch`` more, no further
                with self._lock:
                    self._fill_locked(self._prefetch - 1)
        finally:
            self._in_flight.discard(watched)

    def cancel(self) -> None:
        with self._lock:
            self._stopped = True
        super().cancel()
        self._connection.close(self.stream, "cancel")  # the server cancels the stream's jobs
        for watched in list(self._in_flight):
            call = watched.call
            if call is not None:
                call.cancel()
        with self._lock:
            waiting = [*self._arriving, *([self._current] if self._current is not None else [])]
        for arrived in waiting:  # a fetch that never started must not leave the pass waiting
            arrived.put(ReactiveStreamsError("the pass over the DataFrame was cancelled"))

    def close(self) -> None:
        with self._lock:
            self._stopped = True
        super().close()
        self._connection.close(self.stream, "close")


_END = object()  # a partition's last batch has arrived


def _drained(arrived: queue.SimpleQueue[Any]) -> Iterator[pa.RecordBatch]:
    while True:
        item = arrived.get()
        if item is _END:
            return
        if isinstance(item, BaseException):
            raise item
        yield item


#: About how many bytes of Arrow data one upload call carries: chunks are combined up to this, so
#: that a call's round trip is paid per few MiB, not per chunk of ``chunk_size`` rows.
UPLOAD_BYTES = 4 << 20


def _upload_messages(chunks: Iterable[pa.RecordBatch]) -> Iterator[bytes]:
    """``chunks`` as IPC record batch messages of about `UPLOAD_BYTES` each, in order: Python
    holds at most that much more than one chunk."""
    group: list[pa.RecordBatch] = []
    size = 0
    for batch in chunks:
        group.append(batch)
        size += batch.nbytes
        if size >= UPLOAD_BYTES:
            yield from _combined(group)
            group, size = [], 0
    if group:
        yield from _combined(group)


def _combined(group: list[pa.RecordBatch]) -> list[bytes]:
    """The batches of ``group`` as one message (none if all are empty; one batch as it is)."""
    import pyarrow as pa

    batches = group if len(group) == 1 else pa.Table.from_batches(group).combine_chunks().to_batches()
    return [batch.serialize().to_pybytes() for batch in batches]


def upload_dataframe(spark: Any, chunks: Iterable[pa.RecordBatch], schema: StructType) -> DataFrame:
    """A DataFrame on the server, of ``chunks`` sent about `UPLOAD_BYTES` of Arrow data a call
    (the server keeps them in its block manager, as classic mode does); the server forgets it
    when the DataFrame is garbage-collected or the session ends."""
    wire = connection(spark)
    stream = new_stream_id()
    wire.open(stream)
    finished = False
    try:
        for message in _upload_messages(chunks):
            wire.command({"op": "upload_append", "stream": stream}, message)
        df_id = str(uuid.uuid4())
        wire.command({"op": "upload_finish", "stream": stream, "schema": schema.json(), "df_id": df_id})
        finished = True
    finally:
        wire.close(stream, None if finished else "close")
    return spark._create_remote_dataframe(df_id)  # type: ignore[no-any-return]
