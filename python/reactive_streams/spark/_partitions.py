"""Fetching a DataFrame's partitions in order, at most ``prefetch`` ahead of the one asked for:
the part that classic mode (the driver's JVM, through Py4J) and Spark Connect (the server
plugin) share."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["PartitionFetcher"]


class PartitionFetcher:
    """Partitions fetched in order, on ``workers`` threads (so that up to ``workers`` partition
    jobs run at once), at most ``prefetch`` ahead of the one asked for: a subclass sets
    ``count`` and ``arrow_schema``, and fetches partition ``index`` as its Arrow batches in
    `fetch`."""

    count: int
    arrow_schema: pa.Schema
    group: str  # what cancel stops: a job group (classic), a stream (Connect)

    def __init__(self, prefetch: int, workers: int = 1, **executor: Any) -> None:
        self._prefetch = prefetch
        self._fetcher = ThreadPoolExecutor(workers, thread_name_prefix="rs-dataframe-fetch", **executor)
        self._futures: deque[Future[list[pa.RecordBatch]]] = deque()
        self._submitted = 0
        self._count_lock = threading.Lock()
        self.jobs_started = 0

    def fetch(self, index: int) -> list[pa.RecordBatch]:
        raise NotImplementedError

    def _counted_fetch(self, index: int) -> list[pa.RecordBatch]:
        with self._count_lock:
            self.jobs_started += 1
        return self.fetch(index)

    def next(self) -> Iterable[pa.RecordBatch] | None:
        """The next partition's batches (blocking while it is computed), None after the last."""
        while self._submitted < self.count and len(self._futures) <= self._prefetch:
            self._futures.append(self._fetcher.submit(self._counted_fetch, self._submitted))
            self._submitted += 1
        if not self._futures:
            return None
        return self._futures.popleft().result()

    def cancel(self) -> None:
        """Stop fetching, and stop a running job."""
        self._fetcher.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stop fetching: the pass is over."""
        self._fetcher.shutdown(wait=False, cancel_futures=True)
