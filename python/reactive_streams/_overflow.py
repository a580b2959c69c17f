"""Backpressure strategies for a source that does not wait (a hot one, `interval`, a
`SubmissionPublisher` fed without looking): each asks upstream for everything and chooses what
becomes of the elements the subscriber has not asked for. `on_backpressure_buffer` holds a
bounded number, `on_backpressure_drop` drops them, `on_backpressure_latest` keeps the newest.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from ._api import Subscriber
from ._compose import operator
from ._demand import MAX_DEMAND
from ._errors import MissingDemandError
from ._fluent import fluent
from ._held import HeldPublisher, HeldRelay, QueuedRelay
from ._operator_types import SameOperator
from ._rules import describe, require_callable, require_not_none

__all__ = ["on_backpressure_buffer", "on_backpressure_drop", "on_backpressure_latest"]

T = TypeVar("T")

Overflow = Literal["error", "drop_oldest", "drop_latest"]
_OVERFLOWS = ("error", "drop_oldest", "drop_latest")


@fluent
def on_backpressure_buffer(
    capacity: int, overflow: Overflow = "error", *, on_dropped: Callable[[Any], object] | None = None
) -> SameOperator:
    """``int -> (Publisher[T] -> Publisher[T])``: upstream asked for everything; what the
    subscriber has not asked for yet waits in a queue of at most ``capacity`` elements, sent in
    order as demand comes (§1.1). When an element comes to a full queue, ``overflow`` decides:

    - ``"error"`` (the default): the stream ends at once with `MissingDemandError` naming the
      element, the queue is dropped and upstream cancelled (Reactor's ``onBackpressureBuffer(n)``);
    - ``"drop_oldest"``: the oldest queued element is dropped to make room;
    - ``"drop_latest"``: the element that came is dropped.

    A dropped element is given to ``on_dropped``, when given, on upstream's thread; if it raises,
    the stream ends with that error. The end from upstream goes out after what is queued. A
    cancel drops the queue and cancels upstream (§3.12); a §3.9 request is signalled.

    Raises:
        TypeError, ValueError: ``capacity`` is not an int >= 1, ``overflow`` not one of the three,
            ``on_dropped`` not callable.
    """
    if isinstance(capacity, bool) or not isinstance(capacity, int):
        raise TypeError(f"on_backpressure_buffer(capacity) needs an int, got {describe(capacity)}")
    if capacity < 1:
        raise ValueError(f"on_backpressure_buffer(capacity) needs capacity >= 1, got {capacity}")
    if overflow not in _OVERFLOWS:
        raise ValueError(f"on_backpressure_buffer(overflow=) needs one of {_OVERFLOWS}, got {overflow!r}")
    if on_dropped is not None:
        require_callable(on_dropped, "on_backpressure_buffer(on_dropped=)")
    name = f"on_backpressure_buffer({capacity}, {overflow!r})"
    return operator(
        "on_backpressure_buffer",
        lambda source: HeldPublisher(source, lambda d: _Queue(d, name, capacity, overflow, on_dropped)),
    )


@fluent
def on_backpressure_drop(on_dropped: Callable[[Any], object] | None = None) -> SameOperator:
    """``Publisher[T] -> Publisher[T]``: upstream asked for everything; an element that comes
    when the subscriber has asked for none is dropped (given to ``on_dropped``, when given, on
    upstream's thread; if it raises, the stream ends with that error). Nothing is held beyond
    what was asked for (§1.1). The end passes on after the elements asked for; a cancel reaches
    upstream (§3.12); a §3.9 request is signalled.

    Raises:
        TypeError: ``on_dropped`` is not callable.
    """
    if on_dropped is not None:
        require_callable(on_dropped, "on_backpressure_drop(on_dropped)")
    return operator(
        "on_backpressure_drop",
        lambda source: HeldPublisher(
            source, lambda d: _Queue(d, "on_backpressure_drop", None, "drop_latest", on_dropped)
        ),
    )


@fluent
def on_backpressure_latest() -> SameOperator:
    """``Publisher[T] -> Publisher[T]``: upstream asked for everything; the subscriber gets the
    newest element when it asks: one that comes before the last is sent replaces it, so at most
    one is held. The end goes out after it; a cancel reaches upstream (§3.12); a §3.9 request is
    signalled.
    """
    return operator("on_backpressure_latest", lambda source: HeldPublisher(source, _Latest))


class _Queue(QueuedRelay[T]):
    """At most ``capacity`` elements not yet asked for (None: at most the demand outstanding)."""

    def __init__(
        self,
        downstream: Subscriber[T],
        name: str,
        capacity: int | None,
        overflow: str,
        on_dropped: Callable[[Any], object] | None,
    ) -> None:
        super().__init__(downstream)
        self._name, self._capacity, self._overflow, self._on_dropped = name, capacity, overflow, on_dropped

    def _started(self) -> None:
        self._upstream.request(MAX_DEMAND)  # §3.17: everything; this operator chooses what to keep

    def on_next(self, item: T) -> None:
        require_not_none(item, "element", "§2.13")
        dropped: Any = None
        with self._lock:
            if self._ended or self._cancelled or self._error is not None:
                return  # §2.8
            queue = self._queue
            room = self._capacity if self._capacity is not None else self._demand.outstanding
            if len(queue) < room:
                queue.append(item)
            elif self._overflow == "drop_oldest":
                dropped = queue.popleft()
                queue.append(item)
            elif self._overflow == "drop_latest":
                dropped = item
            else:
                self._error = MissingDemandError(
                    f"{self._name}: the queue is full ({self._capacity} elements the subscriber has not "
                    f"asked for) and element {reprlib.repr(item)} came; it is lost, and the stream ends. "
                    "Pass overflow='drop_oldest' or 'drop_latest' to keep going"
                )
                self._clear_locked()
            run = self._drain.signal_locked()
        if dropped is not None and self._on_dropped is not None:
            try:
                self._on_dropped(dropped)
            except Exception as exc:
                self._fail(exc)
        if run:
            self._drain.passes()


_EMPTY: Any = object()


class _Latest(HeldRelay[T, T]):
    """The newest element not yet asked for, in one slot."""

    def __init__(self, downstream: Subscriber[T]) -> None:
        super().__init__(downstream)
        self._latest: Any = _EMPTY

    def _started(self) -> None:
        self._upstream.request(MAX_DEMAND)  # §3.17

    def on_next(self, item: T) -> None:
        require_not_none(item, "element", "§2.13")
        with self._lock:
            if self._ended or self._cancelled:
                return  # §2.8
            self._latest = item
            run = self._drain.signal_locked()
        if run:
            self._drain.passes()

    def _take_locked(self, n: int) -> list[T]:
        latest, self._latest = self._latest, _EMPTY
        return [] if latest is _EMPTY else [latest]

    def _held_locked(self) -> bool:
        return self._latest is not _EMPTY

    def _clear_locked(self) -> None:
        self._latest = _EMPTY
