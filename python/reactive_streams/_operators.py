"""Operators whose demand is a function of their downstream's: map and filter here, and the
base every operator is built on; take, skip and batch, which count elements, in ``_counting``.

Each one is both the upstream's `Subscriber` and the downstream's `Subscription`. They are
relays: they keep no queue and need no drain of their own, because every signal they send
downstream (terminal ones included) is sent while they handle a signal from upstream, so it
goes out inside the upstream's drain pass and stays serial (§1.3). ``request`` and ``cancel``
go straight upstream, with the demand arithmetic the operator needs taken from the kit
(``_demand``). A request with ``n <= 0`` is passed upstream unchanged, so the upstream
publisher signals the §3.9 error from its drain, which then flows down through the operator.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from ._api import Publisher, Subscriber, Subscription
from ._demand import run_out
from ._errors import NullElementError
from ._rules import (
    accept_subscription,
    index_of_none,
    log_subscriber_failure,
    require_callable,
    require_not_none,
    signal_terminal,
)

__all__ = [
    "CANCELLED",
    "DISCARD",
    "FilterPublisher",
    "MapPublisher",
    "OperatorPublisher",
    "OperatorSubscriber",
]

T = TypeVar("T")
R = TypeVar("R")


class _Discard(Subscriber[Any]):
    """Stands in for a downstream that has cancelled, so a racing signal reaches nobody (§3.13)."""

    def on_subscribe(self, subscription: Subscription) -> None:
        subscription.cancel()

    def on_next(self, item: Any) -> None:
        pass

    def on_error(self, exc: BaseException) -> None:
        pass

    def on_complete(self) -> None:
        pass


DISCARD = _Discard()


class _CancelledSubscription(Subscription):
    def request(self, n: int) -> None:
        pass

    def cancel(self) -> None:
        pass


CANCELLED = _CancelledSubscription()


class OperatorSubscriber(Subscriber[T], Subscription, Generic[T, R]):
    """Pass-through plumbing shared by the operators; subclasses override ``on_next``."""

    __slots__ = ("_done", "_downstream", "_emitting", "_upstream")

    def __init__(self, downstream: Subscriber[R]) -> None:
        self._downstream: Subscriber[R] = downstream
        self._upstream: Subscription | None = None
        self._done = False
        self._emitting: list[R] = []  # a batch going out one on_next at a time

    # Subscriber side (signals from upstream).

    def on_subscribe(self, subscription: Subscription) -> None:
        if not accept_subscription(subscription, self._upstream):
            return
        self._upstream = subscription
        try:
            self._downstream.on_subscribe(self)
        except Exception as exc:
            self._downstream_failed("on_subscribe", exc)

    def on_error(self, exc: BaseException) -> None:
        require_not_none(exc, "error", "§2.13")
        self._terminate(exc)

    def on_complete(self) -> None:
        self._terminate(None)

    # Subscription side (signals from downstream).

    def request(self, n: int) -> None:
        upstream = self._upstream
        if upstream is not None and not self._done:
            upstream.request(n)  # §3.9 errors come back through on_error

    def cancel(self) -> None:
        self._done = True  # §3.7: further calls find nothing left to do
        upstream, self._upstream = self._upstream, CANCELLED
        self._downstream = DISCARD  # §3.13
        self._emitting.clear()  # the rest of a batch going out is not sent (§3.12)
        if upstream is not None:
            upstream.cancel()

    # Helpers.

    def _emit(self, item: R) -> None:
        try:
            self._downstream.on_next(item)
        except Exception as exc:
            self._downstream_failed("on_next", exc)

    def _emit_batch(self, items: list[R]) -> None:
        """A non-empty list downstream: as one ``on_next_batch`` if the downstream has one (the
        list is then its own), else one ``on_next`` each, looped in C over a copy that a cancel
        empties, so that nothing follows it (§3.12)."""
        downstream = self._downstream
        on_next_batch = getattr(downstream, "on_next_batch", None)
        try:
            if on_next_batch is not None:
                on_next_batch(items)
            else:
                self._emitting = emitting = list(items)
                run_out(map(downstream.on_next, emitting))
        except Exception as exc:
            self._downstream_failed("on_next" if on_next_batch is None else "on_next_batch", exc)

    def _stop(self, error: BaseException | None) -> None:
        """Cancel upstream, then signal ``error`` (user code failed, §1.4), or None: complete."""
        upstream = self._upstream
        if upstream is not None:
            upstream.cancel()
        self._terminate(error)

    def _terminate(self, error: BaseException | None) -> None:
        if self._done:
            return  # §1.7
        self._done = True
        downstream, self._downstream = self._downstream, DISCARD
        self._upstream = CANCELLED
        signal_terminal(downstream, error)

    def _downstream_failed(self, method: str, exc: BaseException) -> None:
        downstream = self._downstream
        self.cancel()  # §2.13: the subscription is considered cancelled
        log_subscriber_failure(downstream, method, exc)


class OperatorPublisher(Publisher[R], Generic[T, R]):
    """An operator's publisher: subscribers subscribe to ``source`` through its `_operator`."""

    __slots__ = ("_source",)

    def __init__(self, source: Publisher[T]) -> None:
        self._source = source

    def subscribe(self, subscriber: Subscriber[R]) -> None:
        """Subscribe ``subscriber`` through the operator (§1.9)."""
        require_not_none(subscriber, "subscriber", "§1.9")
        self._source.subscribe(self._operator(subscriber))

    @abstractmethod
    def _operator(self, downstream: Subscriber[R]) -> Subscriber[T]:
        """The operator's subscriber to ``source``, for ``downstream``."""


class MapPublisher(OperatorPublisher[T, R]):
    """``publisher.map(function)``."""

    __slots__ = ("_function",)

    def __init__(self, source: Publisher[T], function: Callable[[T], R]) -> None:
        require_callable(function, "map(function)")
        super().__init__(source)
        self._function = function

    def _operator(self, downstream: Subscriber[R]) -> Subscriber[T]:
        return _MapSubscriber(downstream, self._function)


class _MapSubscriber(OperatorSubscriber[T, R]):
    __slots__ = ("_function",)

    def __init__(self, downstream: Subscriber[R], function: Callable[[T], R]) -> None:
        super().__init__(downstream)
        self._function = function

    def on_next(self, item: T) -> None:
        if self._done:
            return  # §2.8: late elements after cancel or failure are dropped
        try:
            result = self._function(item)
        except Exception as exc:
            self._stop(exc)
            return
        if result is None:
            self._stop(NullElementError("§2.13: the map function returned None"))
            return
        try:  # `_emit`, inlined: the call per element cost map → filter ~30% of its throughput
            self._downstream.on_next(result)
        except Exception as exc:
            self._downstream_failed("on_next", exc)

    def on_next_batch(self, items: list[T]) -> None:
        """The function over a list, in C; the results before a failure, or before a None, go
        downstream first, then the failure (§1.4, §2.13)."""
        if self._done:
            return  # §2.8
        results: list[R] = []
        failure: BaseException | None = None
        try:
            results.extend(map(self._function, items))  # keeps what came before a raise
        except Exception as exc:
            failure = exc
        at = index_of_none(results)
        if at >= 0:
            del results[at:]
            failure = NullElementError("§2.13: the map function returned None")
        if results:
            self._emit_batch(results)
        if failure is not None:
            self._stop(failure)


class FilterPublisher(OperatorPublisher[T, T]):
    """``publisher.filter(predicate)``."""

    __slots__ = ("_predicate",)

    def __init__(self, source: Publisher[T], predicate: Callable[[T], object]) -> None:
        require_callable(predicate, "filter(predicate)")
        super().__init__(source)
        self._predicate = predicate

    def _operator(self, downstream: Subscriber[T]) -> Subscriber[T]:
        return _FilterSubscriber(downstream, self._predicate)


class _FilterSubscriber(OperatorSubscriber[T, T]):
    __slots__ = ("_predicate",)

    def __init__(self, downstream: Subscriber[T], predicate: Callable[[T], object]) -> None:
        super().__init__(downstream)
        self._predicate = predicate

    def on_next(self, item: T) -> None:
        if self._done:
            return
        try:
            keep = self._predicate(item)
        except Exception as exc:
            self._stop(exc)
            return
        if keep:
            try:  # `_emit`, inlined, as in map
                self._downstream.on_next(item)
            except Exception as exc:
                self._downstream_failed("on_next", exc)
        elif (upstream := self._upstream) is not None:
            upstream.request(1)  # replace the dropped element, so demand is met exactly

    def on_next_batch(self, items: list[T]) -> None:
        """The predicate over a list, in C; the dropped elements are replaced by one request."""
        if self._done:
            return  # §2.8
        kept: list[T] = []
        try:
            kept.extend(filter(self._predicate, items))  # keeps what passed before a raise
        except Exception as exc:
            if kept:
                self._emit_batch(kept)
            self._stop(exc)
            return
        if kept:
            self._emit_batch(kept)
        dropped = len(items) - len(kept)
        if dropped and not self._done and (upstream := self._upstream) is not None:
            upstream.request(dropped)  # replace the dropped elements, so demand is met exactly
