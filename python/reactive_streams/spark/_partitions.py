"""Fetching a DataFrame's partitions in order, at most ``prefetch`` ahead of the one asked for
(the part that classic mode, through Py4J, and Spark Connect share), and the pass that delivers
their rows within demand: to a DataFrame's subscriber, or to a write task's."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from queue import Empty, SimpleQueue
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from .._api import Subscriber, Subscription
from .._chunks import RowColumns
from .._demand import Demand, Drain
from .._rules import log_subscriber_failure, signal_terminal
from ._convert import spark_error

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["PartitionFetcher", "PartitionSource", "PartitionSubscription", "PassThread"]

T = TypeVar("T")


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


class PartitionSource(Protocol):
    """What a `PartitionSubscription` passes over: partitions to open, each batch's elements."""

    def open(self) -> PartitionFetcher: ...

    def items(self, batches: Iterable[pa.RecordBatch]) -> Iterator[RowColumns[Any] | list[Any]]: ...


class PassThread:
    """Where a pass over a DataFrame runs its drain's passes: a daemon thread of its own, which
    may block while a partition's job runs and never holds up the interpreter's exit (a live
    pass over a stopped SparkContext must not hang it). The thread stays while requests keep
    coming (starting one for each request cost more than delivering the rows it asked for), and
    ends `LINGER` seconds after the last, or as soon as the pass is over (`close`)."""

    LINGER = 2.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._work: SimpleQueue[Callable[[], None]] = SimpleQueue()
        self._thread: threading.Thread | None = None
        self._closed = False

    def __call__(self, passes: Callable[[], None]) -> None:
        """The drain's ``run_on``: run ``passes`` on the thread (started if it is not running)."""
        with self._lock:
            self._work.put(passes)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="rs-dataframe", daemon=True)
                self._thread.start()

    def close(self) -> None:
        """The pass is over: the thread ends once it has nothing left to run."""
        with self._lock:
            self._closed = True

    def _run(self) -> None:
        work = self._work
        while True:
            try:
                passes = work.get(timeout=self.LINGER)
            except Empty:
                idle = True
            else:
                idle = False
                passes()
                del passes  # what it holds goes before the wait for the next
            with self._lock:
                if work.empty() and (self._closed or idle):
                    self._thread = None
                    return


class PartitionSubscription(Subscription, Generic[T]):
    """One pass over a `PartitionSource`'s partitions (a DataFrame's, a write task's): a `Drain`
    on a daemon thread fetches and delivers, serially (§1.3), only while there is demand (§1.1);
    ``request`` and ``cancel`` only record and signal it (§3.4, §3.5). Fetching a partition
    blocks that thread, never a caller."""

    def __init__(self, subscriber: Subscriber[T], publisher: PartitionSource) -> None:
        self._subscriber: Subscriber[T] | None = subscriber  # None once ended (§3.13)
        self._publisher = publisher
        self._demand = Demand()
        self._error: BaseException | None = None  # a §3.9 error waiting for the drain
        self._cancelled = False
        self._partitions: PartitionFetcher | None = None
        self._items: RowColumns[T] | list[T] = []  # the current Arrow batch's, not yet delivered
        self._batches: Iterator[RowColumns[Any] | list[Any]] = iter(())
        self._runner = PassThread()
        self._drain = Drain(self._pass, run_on=self._runner)

    def start(self) -> None:
        """Nothing to do: the first request starts the pass."""

    @property
    def job_group(self) -> str | None:
        """The Spark job group of this pass's partition jobs (None before the first request)."""
        partitions = self._partitions
        return None if partitions is None else partitions.group

    def request(self, n: int) -> None:
        """Add demand (§3.8, §3.17); ``n <= 0`` ends the stream with §3.9's error."""
        drain = self._drain
        with drain.lock:
            if self._cancelled or self._subscriber is None:
                return  # §3.6
            error = self._demand.add(n)
            if error is not None and self._error is None:
                self._error = error
            run = drain.signal_locked()
        if run:
            drain.passes()

    def cancel(self) -> None:
        """Stop: no more partitions are computed, a running job is cancelled (§3.5, §3.13)."""
        drain = self._drain
        with drain.lock:
            if self._cancelled:
                return
            self._cancelled = True
            partitions = self._partitions
            run = drain.signal_locked()
        if partitions is not None:
            partitions.cancel()  # a fetch under way in the pass fails, and the pass ends
        if run:
            drain.passes()

    def _pass(self) -> None:
        subscriber = self._subscriber
        if subscriber is None:
            return
        try:
            while True:
                with self._drain.lock:
                    error, cancelled, want = self._error, self._cancelled, self._demand.outstanding
                if error is not None:
                    self._end(subscriber, error)  # §3.9
                    return
                if cancelled:
                    self._end(None, None)
                    return
                if want == 0:
                    return  # a request signals the drain again
                if self._items:
                    self._deliver(subscriber, want)
                elif not self._next_items():
                    self._end(subscriber, None)  # §1.5: after the last partition
                    return
        except Exception as exc:
            with self._drain.lock:
                stopped = self._cancelled and self._error is None
            self._end(None if stopped else subscriber, spark_error(exc))

    def _next_items(self) -> bool:
        """Refill ``_items`` from the current partition's next Arrow batch, or the next
        partition (blocking while its job runs); False after the last."""
        partitions = self._partitions
        if partitions is None:
            partitions = self._publisher.open()
            with self._drain.lock:
                self._partitions = partitions
                cancelled = self._cancelled
            if cancelled:
                partitions.cancel()
                return True  # the loop sees the cancel
        while True:
            batch = next(self._batches, None)
            if batch is not None:
                self._items = batch
                return True
            data = partitions.next()
            if data is None:
                return False
            self._batches = self._publisher.items(data)

    def _deliver(self, subscriber: Subscriber[T], want: int) -> None:
        """Up to ``want`` of the rows at hand (§1.1): in one ``on_next_batch`` to a subscriber
        that takes many at once (unmade, as a `LazyChunk`, if it takes those: `iterate`'s), else
        one ``on_next`` each."""
        items, count, sent = self._items, min(want, len(self._items)), 0
        part: Iterable[T]
        if isinstance(items, RowColumns):
            part = items.take(count)
        else:
            part, items[:count] = items[:count], []
        on_next_batch = getattr(subscriber, "on_next_batch", None)
        try:
            if on_next_batch is not None:
                sent = count
                lazy = getattr(subscriber, "lazy_batches", False)
                on_next_batch(part if lazy or isinstance(part, list) else list(part))
            else:
                for item in part:
                    if self._cancelled:
                        break
                    subscriber.on_next(item)  # §1.1
                    sent += 1
        except Exception as exc:
            self.cancel()
            method = "on_next" if on_next_batch is None else "on_next_batch"
            log_subscriber_failure(subscriber, method, exc)  # §2.13
        with self._drain.lock:
            self._demand.produced(sent)

    def _end(self, subscriber: Subscriber[T] | None, error: BaseException | None) -> None:
        """Release the pass (partitions, subscriber); signal ``subscriber``, if given."""
        with self._drain.lock:
            self._cancelled = True  # §1.6
            self._subscriber = None  # §3.13
            partitions = self._partitions
        self._items = []
        self._runner.close()
        if partitions is not None:
            partitions.close()
        if subscriber is not None:
            signal_terminal(subscriber, error)
