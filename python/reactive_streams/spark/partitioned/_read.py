"""One partition of a micro-batch, read in an executor's Python worker: the user's factory makes
the partition's publisher from its start offset, and exactly the batch's elements are requested
from it, a bounded number at a time, then it is cancelled (§3.5). Each chunk of elements goes to
Spark as one Arrow batch."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..._api import Publisher, Subscriber
from ..._demand import add_capped
from ..._errors import ReactiveStreamsError
from ..._iterate import iterate
from ..._operators import OperatorPublisher, OperatorSubscriber
from ..._rules import describe, index_of_none
from .._convert import arrow_batches_of

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.types import StructType

__all__ = ["PartitionError", "read_partition"]


class PartitionError(ReactiveStreamsError):
    """A partition of a partitioned source, sink or processor failed: the message names the
    partition (and the offsets or batch), and the cause is chained."""


def read_partition(
    where: str,
    make: Callable[[], object],
    count: int | None,
    start: int,
    schema: StructType,
    arrow_schema: pa.Schema,
    prefetch: int,
) -> Iterator[pa.RecordBatch]:
    """The ``count`` elements (None: all) of the publisher ``make()`` returns, as Arrow batches of
    ``schema``; ``start`` numbers the first (errors name a row by its offset). At most
    ``prefetch`` elements are requested ahead of those converted (§1.1: a publisher that emits
    more than requested, or a ``None`` (§2.13), fails the partition). Fewer than ``count``
    elements before completion fail it too: the offsets promised them."""
    try:
        publisher = make()
    except PartitionError:
        raise
    except Exception as exc:
        raise PartitionError(f"{where}: the factory raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(publisher, Publisher):
        raise PartitionError(
            f"{where}: the factory must return a reactive_streams.Publisher, got {describe(publisher)}"
        )
    # A chunk being converted and at most two more requested or buffered: never more than
    # ``prefetch`` held (the ``held`` of RS_PARTITION_STATS shows it).
    chunk = max(1, prefetch // 3 if count is None else min(count, prefetch // 3))
    read = 0
    held = 0  # the most elements received and not yet handed to Spark (RS_PARTITION_STATS)
    # take(count) never asks for more than the batch admits.
    guard = GuardPublisher(publisher, where)
    guarded: Publisher[Any] = guard
    if count is not None:
        guarded = guarded.take(count)
    elements = iterate(guarded.batch(chunk), prefetch=2)
    try:
        with elements:
            for rows in elements:
                held = max(held, guard.received - read)
                yield from arrow_batches_of(rows, schema, arrow_schema, start + read)
                read += len(rows)
    except PartitionError:
        raise
    except Exception as exc:
        of = "" if count is None else f" of {count}"
        raise PartitionError(f"{where}: {type(exc).__name__} after {read}{of} elements: {exc}") from exc
    _record_stats(where, read, held, prefetch)
    if count is not None and read < count:
        raise PartitionError(
            f"{where}: the publisher completed after {read} of the {count} elements the offsets "
            f"admitted; a partition's publisher must replay its elements from any offset, and a "
            f"bounded source must say where each partition ends (latest=)"
        )


STATS_VARIABLE = "RS_PARTITION_STATS"
"""A diagnostic: when a worker's environment names a file here, each partition read appends a
JSON line to it: the elements read, the most held at once, the prefetch, the worker's peak RSS."""


def _record_stats(where: str, read: int, held: int, prefetch: int) -> None:
    path = os.environ.get(STATS_VARIABLE)
    if not path:
        return
    import resource  # Unix only, as Spark's Python workers are

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    line = {
        "where": where,
        "read": read,
        "held": held,
        "prefetch": prefetch,
        "pid": os.getpid(),
        "rss_mib": rss,
    }
    with open(path, "a") as stats:
        stats.write(json.dumps(line) + "\n")


class GuardPublisher(OperatorPublisher[Any, Any]):
    """Its source's elements, as long as the source keeps §1.1 (never more than requested) and
    §2.13 (no ``None``); a breach cancels the source and signals a `PartitionError` naming
    ``where`` and the rule, where a subscriber would otherwise drop it or hang."""

    def __init__(self, source: Publisher[Any], where: str) -> None:
        super().__init__(source)
        self._where = where
        self._subscriber: _GuardSubscriber | None = None

    @property
    def received(self) -> int:
        """Elements its (one) subscription has let through so far."""
        subscriber = self._subscriber
        return 0 if subscriber is None else subscriber.received

    def _operator(self, downstream: Subscriber[Any]) -> Subscriber[Any]:
        self._subscriber = _GuardSubscriber(downstream, self._where)
        return self._subscriber


class _GuardSubscriber(OperatorSubscriber[Any, Any]):
    def __init__(self, downstream: Subscriber[Any], where: str) -> None:
        super().__init__(downstream)
        self._where = where
        self._requested = 0
        self._received = 0
        self._lock = threading.Lock()

    def request(self, n: int) -> None:
        if isinstance(n, int) and n > 0:
            with self._lock:
                self._requested = add_capped(self._requested, n)  # §3.17
        super().request(n)

    @property
    def received(self) -> int:
        return self._received

    def _admit(self, count: int) -> bool:
        with self._lock:
            self._received += count
            received, requested = self._received, self._requested
        if received <= requested:
            return True
        self._stop(
            PartitionError(
                f"{self._where}: the publisher broke §1.1: it emitted element {received} "
                f"with {requested} requested"
            )
        )
        return False

    def _refuse_none(self) -> None:
        self._stop(PartitionError(f"{self._where}: the publisher broke §2.13: it emitted None"))

    def on_next(self, item: Any) -> None:
        if self._done:
            return  # §2.8
        if item is None:
            self._refuse_none()
        elif self._admit(1):
            self._emit(item)

    def on_next_batch(self, items: list[Any]) -> None:
        if self._done:
            return  # §2.8
        if not self._admit(len(items)):
            return
        at = index_of_none(items)
        if at >= 0:
            if at:
                self._emit_batch(items[:at])
            self._refuse_none()
        elif items:
            self._emit_batch(items)
