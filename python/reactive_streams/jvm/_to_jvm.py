"""Python → JVM: Python publishers seen from Java.

Java's ``FromPythonPublisher`` calls a `PythonPublisherFactory` (the Java interface
``PythonPublisherFactory``) once per Java subscriber; it subscribes a `ToJvmSubscriber` to the
Python publisher, which pushes what it receives to the Java ``FromPythonPublisher.Handle``, in
batches, through one flush `Drain` (so pushes stay in order). The handle asks for demand and
cancels through the subscriber's `PythonSource` (the Java interface ``PythonSource``).
"""

from __future__ import annotations

import datetime
import itertools
import pickle
import threading
import time
import weakref
from collections import deque
from decimal import Decimal
from functools import partial
from itertools import repeat, starmap
from typing import Any
from uuid import UUID

from .. import _finalizer
from .._api import Publisher, Subscriber, Subscription
from .._demand import MAX_DEMAND, Demand, Drain
from .._errors import NullElementError
from .._gauges import StreamState, state_of
from .._rules import log_subscriber_failure, require_not_none
from ._arrow import (
    ExportedBatches,
    SchemaEncoder,
    encode_batches,
    is_record_batch,
    is_record_batch_type,
    rows_batch,
    rows_bytes,
)
from ._backend import JavaInterface
from ._codec import encode
from ._errors import python_error_parts
from ._host import StreamHost

__all__ = ["PythonPublisherFactory", "PythonSource", "ToJvmSubscriber"]

CHANNEL_MIN_BYTES = 4096  # smaller batches go inline: one call instead of a frame and a call
PUSH_BYTES = 4 << 20  # most bytes of Arrow batches in one push (at least one batch)
_VALUE_TYPES = frozenset({int, float, str, bytes, bytearray, bool, list, tuple, dict}) | frozenset(
    {datetime.date, datetime.datetime, Decimal, UUID}  # LocalDate, LocalDateTime or Instant, BigDecimal, UUID
)
_get_ident = threading.get_ident
_NONE_TYPE = type(None)


class _Chunk:
    """Elements that came in one ``on_next_batch``: one entry of the buffer (the list itself,
    not a copy: the publisher hands it over), with the set of their types."""

    __slots__ = ("items", "kinds")

    def __init__(self, items: list[Any], kinds: set[type]) -> None:
        self.items = items
        self.kinds = kinds


def _items_of(entry: Any) -> Any:
    return entry.items if type(entry) is _Chunk else (entry,)


class PythonPublisherFactory:
    """The Python end of one Java ``FromPythonPublisher``, which calls `subscribe` (as the Java
    interface ``PythonPublisherFactory``) once per Java subscriber."""

    def __init__(self, host: StreamHost, publisher: Publisher[Any], schema: Any = None) -> None:
        self._host = host
        self._publisher = publisher
        self._schema = schema  # a pyarrow.Schema (checked) every element must be a row of, or None

    def subscribe(self, handle: Any) -> Any:
        """Subscribe a `ToJvmSubscriber` pushing to ``handle`` (a ``FromPythonPublisher.Handle``);
        returns its `PythonSource`, as a proxy for Java."""
        subscriber = ToJvmSubscriber(self._host, handle, self._schema)
        self._host.track(subscriber)
        proxy = self._host.backend.proxy(subscriber.source, JavaInterface.PYTHON_SOURCE)
        try:
            self._publisher.subscribe(subscriber)
        except Exception as exc:  # the Python publisher broke §1.9 by raising
            subscriber.on_error(exc)
        return proxy


class PythonSource:
    """What the JVM holds of a `ToJvmSubscriber`: Java's ``FromPythonPublisher.Handle`` calls it
    (as the Java interface ``PythonSource``) to request and cancel. Cleared when the stream ends,
    so that the subscriber lives exactly as long as the Python publisher holds it (see
    ``pythonReleased`` in Java)."""

    def __init__(self, subscriber: ToJvmSubscriber) -> None:
        self.subscriber: ToJvmSubscriber | None = subscriber

    def request(self, n: int) -> None:
        subscriber = self.subscriber
        if subscriber is not None:
            subscriber.request(n)

    def cancel(self) -> None:
        subscriber, self.subscriber = self.subscriber, None
        if subscriber is not None:
            subscriber.cancel()


def _python_released(handle: Any) -> None:
    """A ToJvmSubscriber was garbage-collected: let the JVM drop its subscriber (§3.13)."""
    try:
        handle.pythonReleased()
    except Exception:  # the JVM or the bridge is gone: nothing is held there any more
        pass


class ToJvmSubscriber(Subscriber[Any]):
    """Subscribes to a Python publisher on behalf of a Java subscriber and pushes what it
    receives to the subscriber's ``FromPythonPublisher.Handle``; the handle's requests and
    cancel arrive through `source`."""

    _COMPLETE = object()

    def __init__(self, host: StreamHost, handle: Any, schema: Any = None) -> None:
        self._host = host
        self._handle: Any = handle
        self._rows = None if schema is None else SchemaEncoder(schema)  # the user's schema, if any
        self._lock = threading.Lock()
        self._upstream: Subscription | None = None
        self._early_demand = Demand()  # requested before the publisher's on_subscribe
        self._cancelled = False
        # Elements on their way to Java: on_next appends, the flush loop takes. A deque needs no
        # lock for that, and on_next runs once per element (§1.3: one emitter at a time).
        self._buffer: deque[Any] = deque()
        self._terminal: Any = None  # _COMPLETE or the error
        self._drain = Drain(self._flush_pass, lock=self._lock)
        self._flush_scheduled = False  # a flush task is queued on the host's pool
        self._requesting = 0  # ident of the thread inside request()
        self._stream_id = 0  # its pushes' id on the data channel, once it has pushed one there
        self.source = PythonSource(self)
        # For `stream_state`, counted per request and per push, never per element.
        self._requested_in_all = self._pushed = 0
        self._since = time.monotonic()  # the last push to Java
        _finalizer.start()
        # Not on the collecting thread: it may be mid-reply on its own Py4J connection.
        release = weakref.finalize(self, _finalizer.defer, partial(_python_released, handle))
        release.atexit = False

    def request(self, n: int) -> None:
        """Demand from the Java subscriber, through `source`."""
        n = int(n)  # a plain int: JPype passes Java's long as its own int subclass
        with self._lock:
            self._requested_in_all = min(MAX_DEMAND, self._requested_in_all + n)  # §3.17
            upstream = self._upstream
            if upstream is None:
                self._early_demand.add(n)  # Java checked n (§3.9); §3.17 capped here
                return
        self._requesting = _get_ident()
        try:
            upstream.request(n)  # a synchronous publisher emits into the buffer right here
        finally:
            self._requesting = 0
        self.flush()

    def stream_state(self) -> StreamState | None:
        """What this stream holds on Python's side, the Java subscriber's demand not yet met,
        and on whom it waits: the Python publisher (the producer) or the Java subscriber."""
        with self._lock:
            if self._cancelled or self._terminal is not None:
                return None
        held = sum(len(entry.items) if type(entry) is _Chunk else 1 for entry in list(self._buffer))
        return state_of(
            "to_jvm",
            f"stream to the JVM at {id(self):#x}",
            requested=self._requested_in_all,
            delivered=self._pushed,
            held=held,
            since=self._since,
        )

    def cancel(self) -> None:
        """Cancel the Python publisher and drop the JVM handle (§3.13); idempotent."""
        with self._lock:
            upstream, self._upstream = self._upstream, None
            self._cancelled = True
            self._buffer.clear()
        if upstream is not None:
            upstream.cancel()
        self._release()

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "subscription", "§2.13")
        with self._lock:
            refuse = self._upstream is not None or self._cancelled
            if not refuse:
                self._upstream = subscription
            early, self._early_demand.outstanding = self._early_demand.outstanding, 0
        if refuse:
            subscription.cancel()  # §2.5, or the Java side already cancelled
        elif early:
            self.request(early)

    def on_next(self, item: Any) -> None:
        if item is None:  # §2.13: raise, and end the Java side's stream too, so it cannot hang
            error = NullElementError("§2.13: the Python publisher emitted None")
            self._end(error)
            raise error
        if self._cancelled:
            return  # §2.8: late elements are dropped
        self._buffer.append(item)
        if self._requesting != _get_ident():
            self._schedule_flush()  # emitted on a thread of the publisher's own

    def on_next_batch(self, items: list[Any]) -> None:
        """Elements in bulk, from a publisher that emits lists (`from_iterable` does): one call,
        not one per element; the same rules as `on_next`."""
        kinds = set(map(type, items))  # a None shows here; every check of the push reads them
        if _NONE_TYPE in kinds:
            for item in items[: next(index for index, item in enumerate(items) if item is None) + 1]:
                self.on_next(item)  # the elements before it go first; the None raises (§2.13)
        if self._cancelled:
            return  # §2.8: late elements are dropped
        self._buffer.append(_Chunk(items if type(items) is list else list(items), kinds))  # taken whole
        if self._requesting != _get_ident():
            self._schedule_flush()  # emitted on a thread of the publisher's own

    def on_error(self, exc: BaseException) -> None:
        require_not_none(exc, "error", "§2.13")
        self._end(exc)

    def on_complete(self) -> None:
        self._end(self._COMPLETE)

    def _end(self, terminal: Any) -> None:
        with self._lock:
            if self._cancelled or self._terminal is not None:
                return
            self._terminal = terminal
        if self._requesting != _get_ident():
            self._schedule_flush()

    def _schedule_flush(self) -> None:
        """One queued flush task at a time, not one per element: a flush takes all there is."""
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self._host.submit(self._drain.signal)

    def flush(self) -> None:
        """Push what has arrived, in order, one pusher at a time."""
        self._drain.signal()

    def _flush_pass(self) -> None:
        self._flush_scheduled = False  # an element appended from now on schedules another
        with self._lock:
            terminal = self._terminal  # before taking elements: all emitted before it are there
            handle = None if self._cancelled else self._handle
        buffer = self._buffer
        entries = list(starmap(buffer.popleft, repeat((), len(buffer))))  # in C; on_next may append meanwhile
        kinds = None
        if len(entries) == 1 and type(entries[0]) is _Chunk:
            batch: list[Any] = entries[0].items  # the bulk path: one list, as it came
            kinds = entries[0].kinds
        elif _Chunk in set(map(type, entries)):
            batch = [
                item for entry in entries for item in (entry.items if type(entry) is _Chunk else (entry,))
            ]
        else:
            batch = entries
        if len(batch) > self._host.max_buffered:
            self._host.note_buffered(len(batch))
        if handle is not None:
            self._pushed += len(batch)
            self._since = time.monotonic()
            try:
                self._push(handle, batch, terminal, kinds)
            except Exception as exc:
                self._push_failed(handle, exc)

    def _push(self, handle: Any, elements: list[Any], terminal: Any, kinds: set[type] | None) -> None:
        """``elements`` in batches of at most ``max_batch``, then ``terminal``; ``kinds``: the
        set of the elements' types, if known."""
        size = self._host.settings.max_batch  # a pickle per chunk: Pyrolite slows down on huge lists
        if len(elements) > size:
            kinds = None  # each chunk's own
        for start in range(0, len(elements), size):
            chunk = elements if len(elements) <= size else elements[start : start + size]
            if not self._push_batch(handle, chunk, kinds):
                return
        if terminal is not None:
            self._release()
            if terminal is self._COMPLETE:
                handle.pushComplete()
            else:
                handle.pushError(*python_error_parts(terminal))

    def _push_batch(self, handle: Any, batch: list[Any], kinds: set[type] | None) -> bool:
        if self._rows is not None:
            return self._push_rows(handle, self._rows, batch)
        if kinds is None:
            kinds = set(map(type, batch))  # once per batch: every check below reads it
        if self._host.arrow and len(kinds) > 1 and any(map(is_record_batch_type, kinds)):
            for run in runs_of_record_batches(batch):  # in order: batches and other elements
                if not self._push_run(handle, run, set(map(type, run))):
                    return False
            return True
        return self._push_run(handle, batch, kinds)

    def _push_run(self, handle: Any, run: list[Any], kinds: set[type]) -> bool:
        """A run of one kind of element: record batches, rows, values or JVM objects."""
        if self._host.arrow:
            if any(map(is_record_batch_type, kinds)):
                for chunk in chunks_of_bytes(run, PUSH_BYTES):  # a bounded crossing, however many
                    if self._host.arrow_c_data:  # in process: buffers shared, not copied
                        with ExportedBatches(chunk) as exported:
                            handle.pushArrowC(self._host.backend.long_array(exported.addresses))
                    else:
                        self._push_bytes(handle, encode_batches(chunk))
                return True
            if kinds == {tuple} or kinds == {dict}:
                return self._push_rows_arrow(handle, run, kinds) or self._push_values(handle, run, kinds)
        return self._push_values(handle, run, kinds)

    def _push_rows_arrow(self, handle: Any, rows: list[Any], kinds: set[type]) -> bool:
        """Tuples or dicts as Arrow rows, if they fit (`rows_batch`): in process through the C
        Data Interface (the JVM reads pyarrow's buffers: no bytes written, copied or read),
        else as IPC bytes. The JVM makes its rows of them on its pool while Python goes on."""
        made = rows_batch(rows, kinds)
        if made is None:
            return False
        kind, record_batch = made
        if self._host.arrow_c_data:
            with ExportedBatches([record_batch]) as exported:
                handle.pushArrowRowsC(kind, self._host.backend.long_array(exported.addresses))
        else:
            self._push_bytes(handle, rows_bytes(kind, record_batch))
        return True

    def _push_rows(self, handle: Any, rows: SchemaEncoder, batch: list[Any]) -> bool:
        """Rows of the user's schema, as Arrow: the rows before a bad one go, then the error,
        with the Python publisher cancelled."""
        payloads, error = rows.encode(batch)
        for payload in payloads:
            self._push_bytes(handle, payload)
        if error is None:
            return True
        self.cancel()
        handle.pushError(*python_error_parts(error))  # §1.4, after the rows before the bad one
        return False

    def _push_values(self, handle: Any, batch: list[Any], kinds: set[type]) -> bool:
        backend = self._host.backend
        if kinds <= _VALUE_TYPES:
            try:
                payload = encode(batch, kinds)
            except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
                handle.pushObjects(backend.object_array(batch))  # JVM objects nested in values
            else:
                self._push_bytes(handle, payload)
        elif all(backend.is_jvm_object(x) or type(x) in _VALUE_TYPES for x in batch):
            handle.pushObjects(backend.object_array(batch))
        else:
            bad = next(x for x in batch if not backend.is_jvm_object(x) and type(x) not in _VALUE_TYPES)
            self._fail_unsendable(handle, bad)
            return False
        return True

    def _push_bytes(self, handle: Any, payload: bytes) -> None:
        """A batch's bytes to Java: a frame on the data channel and the call that takes it, if
        it is large and there is one; else inline in the call (Py4J's text or JPype's copy)."""
        channel = self._host.channel
        if channel is None or len(payload) < CHANNEL_MIN_BYTES:
            handle.push(self._host.backend.java_bytes(payload))
            return
        if not self._stream_id:
            self._stream_id = channel.new_id()
        channel.push(self._stream_id, payload)
        handle.pushFrame(self._stream_id)

    def _fail_unsendable(self, handle: Any, item: Any) -> None:
        error = TypeError(
            f"an element of type {type(item).__qualname__} cannot cross to the JVM: elements must be "
            "values (None, bool, int, float, str, bytes, and lists, tuples and dicts of them) or JVM objects"
        )
        self.cancel()
        handle.pushError(*python_error_parts(error))

    def _push_failed(self, handle: Any, exc: BaseException) -> None:
        """A push failed: the JVM is gone (nobody to tell), or this side could not make the
        batch (an element whose pickling raised, say): the Java subscriber gets the error, so
        that its stream ends instead of waiting for ever (§1.4). Upstream is cancelled either way."""
        self.cancel()
        if self._host.backend.call_failed(exc):
            return
        log_subscriber_failure(self, "push", exc)
        try:
            handle.pushError(*python_error_parts(exc))
        except Exception as error:  # the JVM went meanwhile (its streams went with it), or refused
            if not self._host.backend.call_failed(error):
                log_subscriber_failure(self, "pushError", error)  # a flush pass must not raise

    def _release(self) -> None:
        self._handle = None  # §3.13
        self.source.subscriber = None
        self._host.forget(self)

    def shutdown(self) -> None:
        """The bridge closed or its JVM went: cancel the Python publisher (the runtime ends the
        Java subscriber's stream, or the JVM is gone)."""
        self.cancel()


def chunks_of_bytes(batches: list[Any], limit: int) -> list[list[Any]]:
    """``batches`` (``pyarrow.RecordBatch``es) in order, cut where a chunk would pass ``limit``
    bytes (each chunk at least one batch)."""
    chunks: list[list[Any]] = [[]]
    size = 0
    for batch in batches:
        if chunks[-1] and size + batch.nbytes > limit:
            chunks.append([])
            size = 0
        chunks[-1].append(batch)
        size += batch.nbytes
    return chunks


def runs_of_record_batches(batch: list[Any]) -> list[list[Any]]:
    """``batch`` cut into runs of ``pyarrow.RecordBatch``es and runs of other elements, in order."""
    return [list(run) for _, run in itertools.groupby(batch, is_record_batch)]
