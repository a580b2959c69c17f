"""A Python subscriber of the ``reactive-streams`` sink, as the sink sees it.

The sink sends each row as a tuple of plain values (the form that crosses the bridge by value,
in batches); `RowSubscriber` makes ``pyspark.sql.Row``s of them, with the column names read once
from the JVM, and reports through the sink's ``SinkLink`` what its subscriber processed (so that
a micro-batch's commit waits for it) or raised on (so that the query fails, §2.13). The last row
of a micro-batch comes as a list: processing is reported after it, one crossing per micro-batch.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from .._api import Subscriber, Subscription

__all__ = ["RowSubscriber"]

logger = logging.getLogger("reactive_streams.spark")


class RowSubscriber(Subscriber[Any]):
    """Wraps the user's subscriber for ``bridge.subscriber_to_jvm``.

    The bridge delivers each batch to `on_next_batch` (one crossing per batch); the user's
    subscriber still sees one ``on_next`` per row, or one ``on_next_batch`` of ``Row``s if it
    has one. An exception from the user's subscriber is reported to the sink and raised on, so
    the bridge cancels the subscription and logs it (§2.13) and the query fails naming it.
    """

    def __init__(self, inner: Subscriber[Any], link: Any) -> None:
        from pyspark.sql import Row

        self._inner = inner
        self._link = link  # the JVM SinkLink
        self._row = Row
        self._fields: list[str] = []
        self._on_next_batch = getattr(inner, "on_next_batch", None)
        self._unreported = 0  # rows processed since the last report to the sink

    def on_subscribe(self, subscription: Subscription) -> None:
        self._fields = [str(name) for name in self._link.fieldNames()]  # set before onSubscribe
        try:
            self._inner.on_subscribe(subscription)
        except Exception as exc:
            self._report(0, exc)
            raise

    def on_next(self, item: Any) -> None:
        self.on_next_batch([item])

    def on_next_batch(self, items: Sequence[Any]) -> None:
        new, row_type, fields = tuple.__new__, self._row, self._fields
        if self._on_next_batch is not None:
            rows = []
            for values in items:
                row = new(row_type, values)
                row.__dict__["__fields__"] = fields  # as Row.__setattr__ does, without the call
                rows.append(row)
            try:
                self._on_next_batch(rows)
            except Exception as exc:
                self._report(len(rows), exc)
                raise
            self._processed(len(rows), items)
            return
        on_next = self._inner.on_next
        done = 0
        try:
            for done, values in enumerate(items, 1):  # noqa: B007 (read on a raise)
                row = new(row_type, values)
                row.__dict__["__fields__"] = fields
                on_next(row)
        except Exception as exc:
            self._report(done, exc)
            raise
        self._processed(len(items), items)

    def on_error(self, exc: BaseException) -> None:
        self._inner.on_error(exc)

    def on_complete(self) -> None:
        self._inner.on_complete()

    def _processed(self, rows: int, items: Sequence[Any]) -> None:
        self._unreported += rows
        if items and type(items[-1]) is list:  # a micro-batch's last row: its commit waits for this
            rows, self._unreported = self._unreported, 0
            self._link.processed(rows)

    def _report(self, processed: int, exc: BaseException) -> None:
        """Tell the sink its subscriber raised, after ``processed`` rows (the last one raised)."""
        processed, self._unreported = self._unreported + processed, 0
        try:
            self._link.raised(processed, f"{type(exc).__qualname__}: {exc}")
        except Exception:  # the JVM is gone: the bridge ends the stream anyway
            logger.debug("could not report a subscriber's failure to the sink", exc_info=True)

    def __repr__(self) -> str:
        return f"<rows to {self._inner!r}>"
