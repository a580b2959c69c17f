"""A Python subscriber of the ``reactive-streams`` sink, as the sink sees it.

The sink sends each row as a tuple of plain values (the form that crosses the bridge by value,
in batches); `RowSubscriber` makes ``pyspark.sql.Row``s of them, with the column names read once
from the JVM, and reports through the sink's ``SinkLink`` what its subscriber processed (so that
a micro-batch's commit waits for it) or raised on (so that the query fails, §2.13). The last row
of a micro-batch comes as a list: processing is reported after it, one crossing per micro-batch.
Its first row has the micro-batch's epoch read from the sink, which the subscriber sees on its
`SinkSubscription`.

`ArrowBatchSubscriber` is the same for a subscriber of ``pyarrow.RecordBatch``es: the sink makes
each micro-batch into Arrow batches, one element each, and its demand counts batches; the rows of
the batches of each crossing are reported once they are processed, and the epoch is read from
the sink only when the subscriber asks for it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from .._api import Subscriber, Subscription
from .._demand import run_out
from ._convert import row_type

__all__ = ["ArrowBatchSubscriber", "RowSubscriber", "SinkSubscription"]

logger = logging.getLogger("reactive_streams.spark")


class SinkSubscription(Subscription):
    """The subscription a subscriber of the ``reactive-streams`` sink gets (`register_subscriber`):
    the bridge's, which it passes `request` and `cancel` to, and the micro-batch the rows being
    delivered belong to, so that the subscriber can make its own writes idempotent, as
    ``foreachBatch`` does with its ``batch_id``. A re-run of a micro-batch (after a stop, a
    failure or a driver restart) keeps its epoch; the sink delivers each (query id, epoch) at
    most once, but a driver that dies during a delivery re-delivers that micro-batch's rows
    from the last record it saved, and the epoch is how a subscriber recognises them.

    Read `epoch` and `query_id` inside ``on_next`` (or ``on_next_batch``): they are the current
    row's.
    """

    __slots__ = ("_inner", "_rows")

    def __init__(self, inner: Subscription, rows: RowSubscriber | ArrowBatchSubscriber) -> None:
        self._inner = inner
        self._rows = rows

    def request(self, n: int) -> None:
        """Demand for ``n`` more rows, or Arrow batches for a subscriber of batches (§3.9 for
        ``n <= 0``), as the bridge's subscription takes it."""
        self._inner.request(n)

    def cancel(self) -> None:
        """Rows of this and later micro-batches are dropped; the query goes on (§3.5, §3.13)."""
        self._inner.cancel()

    @property
    def epoch(self) -> int:
        """The epoch (batch id) of the micro-batch being delivered; -1 before its first row."""
        return self._rows.epoch

    @property
    def query_id(self) -> str | None:
        """The id of the streaming query writing to the sink (kept in its checkpoint), or None
        before its first row."""
        return self._rows.query_id

    def __repr__(self) -> str:
        return f"<sink subscription, epoch {self.epoch}, query {self.query_id}>"


class _LinkedSubscriber(Subscriber[Any]):
    """What both wrappers share: the user's subscriber, the sink's ``SinkLink``, and how a
    failure of the user's subscriber is reported to the sink."""

    def __init__(self, inner: Subscriber[Any], link: Any) -> None:
        self._inner = inner
        self._link = link  # the JVM SinkLink
        self._on_next_batch = getattr(inner, "on_next_batch", None)

    def on_subscribe(self, subscription: Subscription) -> None:
        try:
            self._inner.on_subscribe(SinkSubscription(subscription, self))  # type: ignore[arg-type]
        except Exception as exc:
            self._report(0, exc)
            raise

    def on_error(self, exc: BaseException) -> None:
        self._inner.on_error(exc)

    def on_complete(self) -> None:
        self._inner.on_complete()

    def _report(self, processed: int, exc: BaseException) -> None:
        """Tell the sink its subscriber raised, after ``processed`` rows (the last one raised)."""
        try:
            self._link.raised(processed, f"{type(exc).__qualname__}: {exc}")
        except Exception:  # the JVM is gone: the bridge ends the stream anyway
            logger.debug("could not report a subscriber's failure to the sink", exc_info=True)


class RowSubscriber(_LinkedSubscriber):
    """Wraps the user's subscriber for ``bridge.subscriber_to_jvm``.

    The bridge delivers each batch to `on_next_batch` (one crossing per batch); the user's
    subscriber still sees one ``on_next`` per row, or one ``on_next_batch`` of ``Row``s if it
    has one. An exception from the user's subscriber is reported to the sink and raised on, so
    the bridge cancels the subscription and logs it (§2.13) and the query fails naming it.
    """

    def __init__(self, inner: Subscriber[Any], link: Any) -> None:
        super().__init__(inner, link)
        self._make: Callable[[Any], Any] = tuple
        self._unreported = 0  # rows processed since the last report to the sink
        self._starting = True  # the next row is a micro-batch's first: its epoch is read then
        self.epoch = -1
        self.query_id: str | None = None

    def on_subscribe(self, subscription: Subscription) -> None:
        fields = [str(name) for name in self._link.fieldNames()]  # set before onSubscribe
        self._make = partial(tuple.__new__, row_type(fields))
        super().on_subscribe(subscription)

    def on_next(self, item: Any) -> None:
        self.on_next_batch([item])

    def on_next_batch(self, items: Sequence[Any]) -> None:
        if self._starting and items:
            self._starting = False
            try:
                self.epoch = int(self._link.epoch())  # set before its first row was handed over
                if self.query_id is None:
                    self.query_id = self._link.queryId()
            except Exception as exc:  # the sink fails the query, naming it, instead of a bare cancel
                self._report(0, exc)
                raise
        if self._on_next_batch is not None:
            rows = list(map(self._make, items))
            try:
                self._on_next_batch(rows)
            except Exception as exc:
                self._report(len(rows), exc)
                raise
        else:
            left = iter(items)
            try:
                run_out(map(self._inner.on_next, map(self._make, left)))  # a row at a time, in C
            except Exception as exc:
                self._report(len(items) - sum(1 for _ in left), exc)  # the row it raised on counts
                raise
        self._processed(len(items), items)

    def _processed(self, rows: int, items: Sequence[Any]) -> None:
        self._unreported += rows
        if items and type(items[-1]) is list:  # a micro-batch's last row: its commit waits for this
            self._starting = True
            rows, self._unreported = self._unreported, 0
            self._link.processed(rows)

    def _report(self, processed: int, exc: BaseException) -> None:
        processed, self._unreported = self._unreported + processed, 0  # and those not yet reported
        super()._report(processed, exc)

    def __repr__(self) -> str:
        return f"<rows to {self._inner!r}>"


class ArrowBatchSubscriber(_LinkedSubscriber):
    """Wraps the user's subscriber of ``pyarrow.RecordBatch``es for ``bridge.subscriber_to_jvm``.

    The bridge delivers the sink's Arrow batches to `on_next_batch`, one crossing's worth at a
    time; the user's subscriber sees one ``on_next`` per batch, or one ``on_next_batch`` of them
    if it has one. After each crossing, the rows processed are reported to the sink (its commit
    waits for them); an exception is reported, with the rows of the batch it raised on counted
    as delivered, and raised on (§2.13).
    """

    def __init__(self, inner: Subscriber[Any], link: Any) -> None:
        super().__init__(inner, link)
        self._epoch: int | None = None  # of the batches being delivered, read when asked for
        self._query_id: str | None = None

    @property
    def epoch(self) -> int:
        # Read when asked: while a batch is being processed its micro-batch cannot be committed
        # (the commit waits for this crossing's report), so the sink's epoch is the batch's.
        if self._epoch is None:
            self._epoch = int(self._link.epoch())
        return self._epoch

    @property
    def query_id(self) -> str | None:
        if self._query_id is None:
            self._query_id = self._link.queryId()
        return self._query_id

    def on_next(self, item: Any) -> None:
        self.on_next_batch([item])

    def on_next_batch(self, items: Sequence[Any]) -> None:
        self._epoch = None
        rows = sum(batch.num_rows for batch in items)
        if self._on_next_batch is not None:
            try:
                self._on_next_batch(list(items))
            except Exception as exc:
                self._report(rows, exc)
                raise
        else:
            done = 0
            for batch in items:
                try:
                    self._inner.on_next(batch)
                except Exception as exc:
                    self._report(done + batch.num_rows, exc)  # the batch it raised on counts
                    raise
                done += batch.num_rows
        self._link.processed(rows)

    def __repr__(self) -> str:
        return f"<Arrow batches to {self._inner!r}>"
