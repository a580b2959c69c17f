"""Multicast: one subscription to a source, shared by many subscribers.

`publish` and `replay` make a `ConnectablePublisher`: subscribers join it, and `connect`
subscribes the source once for all of them (``auto_connect(n)`` at the n-th subscriber,
``ref_count(n)`` likewise, and it cancels the source when the last one leaves); `share` is
``publish().ref_count()``.

One hub per connection (`reactive_streams._hub`) holds what came from the source, paced by the
slowest subscriber: a stalled subscriber stops the source, and nothing is buffered without bound.
"""

from __future__ import annotations

import threading
from functools import partial
from typing import Protocol, TypeVar

from ._api import ConnectablePublisher, Connection, Publisher, Subscriber
from ._compose import operator
from ._fluent import fluent
from ._hub import Hub
from ._operator_types import SameOperator
from ._rules import describe, require_not_none

__all__ = ["publish", "replay", "share"]

T = TypeVar("T")


class ConnectableOperator(Protocol):
    """``Publisher[T] -> ConnectablePublisher[T]``: what `publish` and `replay` return."""

    def __call__(self, source: Publisher[T], /) -> ConnectablePublisher[T]: ...


def _check_count(n: object, what: str, least: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{what} needs an int, got {describe(n)}")
    if n < least:
        raise ValueError(f"{what} needs an int >= {least}, got {n}")
    return n


def _check_prefetch(prefetch: object, what: str) -> int:
    if isinstance(prefetch, bool) or not isinstance(prefetch, int) or prefetch < 1:
        raise ValueError(f"{what} needs an int >= 1, got {describe(prefetch)}")
    return prefetch


@fluent
def publish(prefetch: int = 256) -> ConnectableOperator:
    """``int -> (Publisher[T] -> ConnectablePublisher[T])``: a publisher that subscribers join
    and that subscribes the source once, when connected (`ConnectablePublisher.connect`,
    ``auto_connect``, ``ref_count``). Each subscriber gets what comes after it joins, paced by
    the slowest: at most ``prefetch`` elements are held beyond what every subscriber has had.

    Raises:
        ValueError: ``prefetch`` is not an int >= 1.
    """
    size = _check_prefetch(prefetch, "publish(prefetch)")
    return operator("publish", lambda source: _HubPublisher(source, size, 0))  # type: ignore[return-value]


@fluent
def replay(n: int, prefetch: int = 256) -> ConnectableOperator:
    """``int -> (Publisher[T] -> ConnectablePublisher[T])``: as `publish`, and each subscriber
    that joins first gets the last ``n`` elements the source sent (all of them, if it has
    ended: a late subscriber then gets them and the end). Holds at most ``n`` plus ``prefetch``.

    Raises:
        TypeError, ValueError: ``n`` is not an int >= 0, ``prefetch`` not an int >= 1.
    """
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"replay(n) needs an int, got {describe(n)}")
    if n < 0:
        raise ValueError(f"replay(n) needs n >= 0, got {n}")
    size = _check_prefetch(prefetch, "replay(prefetch)")
    return operator("replay", lambda source: _HubPublisher(source, size, n))  # type: ignore[return-value]


@fluent
def share(prefetch: int = 256) -> SameOperator:
    """``Publisher[T] -> Publisher[T]``: ``publish(prefetch).ref_count(1)``: the source is
    subscribed when the first subscriber comes and cancelled when the last one leaves; one that
    comes after that subscribes it again.

    Raises:
        ValueError: ``prefetch`` is not an int >= 1.
    """
    size = _check_prefetch(prefetch, "share(prefetch)")
    return operator("share", lambda source: _HubPublisher(source, size, 0).ref_count(1))


class _HubPublisher(ConnectablePublisher[T]):
    """A `ConnectablePublisher` whose connections are hubs: one current at a time."""

    def __init__(self, source: Publisher[T], prefetch: int, history: int) -> None:
        self._source, self._prefetch, self._history = source, prefetch, history
        self._lock = threading.Lock()
        self._hub: Hub[T] | None = None

    def _current(self, fresh: bool = False) -> Hub[T]:
        with self._lock:
            hub = self._hub
            if hub is None or hub.disconnected or (fresh and hub.ended):
                hub = self._hub = Hub(self._source, self._prefetch, self._history)
            return hub

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        """Join the current connection (§1.9); the subscriber gets what comes after it joins."""
        require_not_none(subscriber, "subscriber", "§1.9")
        self._current().join(subscriber, None)

    def connect(self) -> Connection:
        """See `ConnectablePublisher.connect`."""
        hub = self._current(fresh=True)
        hub.connect()
        return Connection(partial(hub.disconnect, notify=True))

    def auto_connect(self, n: int = 1) -> Publisher[T]:
        """See `ConnectablePublisher.auto_connect`."""
        _check_count(n, "auto_connect(n)", 0)
        return _AutoConnect(self, n)

    def ref_count(self, n: int = 1) -> Publisher[T]:
        """See `ConnectablePublisher.ref_count`."""
        _check_count(n, "ref_count(n)", 1)
        return _RefCount(self, n)

    def _forget(self, hub: Hub[T]) -> None:
        with self._lock:
            if self._hub is hub:
                self._hub = None


class _AutoConnect(Publisher[T]):
    __slots__ = ("_connectable", "_joined", "_lock", "_n")

    def __init__(self, connectable: _HubPublisher[T], n: int) -> None:
        self._connectable, self._n, self._joined = connectable, n, 0
        self._lock = threading.Lock()
        if n == 0:
            connectable.connect()

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        """Join; the n-th subscriber connects (§1.9)."""
        require_not_none(subscriber, "subscriber", "§1.9")
        if not self._connectable._current().join(subscriber, None):
            return  # §1.10: subscribed twice; not counted
        with self._lock:
            self._joined += 1
            now = self._joined == self._n
        if now:
            self._connectable.connect()


class _RefCount(Publisher[T]):
    __slots__ = ("_connectable", "_counts", "_lock", "_n")

    def __init__(self, connectable: _HubPublisher[T], n: int) -> None:
        self._connectable, self._n = connectable, n
        self._lock = threading.Lock()
        self._counts: dict[int, int] = {}  # subscribers joined, by hub

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        """Join; the n-th subscriber connects, and the last to leave cancels the source (§1.9)."""
        require_not_none(subscriber, "subscriber", "§1.9")
        with self._lock:  # the hub taken and counted at once: the last to leave cannot forget it meanwhile
            hub = self._connectable._current(fresh=True)  # one that ended is done: subscribe again
            count = self._counts[id(hub)] = self._counts.get(id(hub), 0) + 1
        if not hub.join(subscriber, lambda: self._left(hub)):
            self._left(hub)  # §1.10: not joined, not counted
        elif count == self._n:
            hub.connect()

    def _left(self, hub: Hub[T]) -> None:
        with self._lock:
            count = self._counts[id(hub)] - 1
            if count:
                self._counts[id(hub)] = count
                return
            del self._counts[id(hub)]
            # The next subscriber joins a new connection; forgotten under the lock that counts, or
            # one that took this hub before would join it after its source is cancelled, and hang.
            self._connectable._forget(hub)
        hub.disconnect(notify=False)
