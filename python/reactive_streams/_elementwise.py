"""Element-wise operators, as functions for `pipe` and as `Publisher` methods: `map`, `filter`,
`scan`, `take_while`, `skip_while` and `distinct_until_changed` here (relays on ``_operators``'
base: no queue, demand passed upstream, lists passed on as lists when the source sends them).

An operator that drops an element asks upstream for one more in its place, so downstream
demand is met exactly (§1.1); one that knows the stream is over (`take_while`) cancels upstream
before its last signal. A user function that raises cancels upstream and ends the stream with
the exception, after the elements that came before it (§1.4, §2.13).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import accumulate, dropwhile, takewhile
from typing import Any, TypeVar, overload

from ._api import Publisher, Subscriber
from ._compose import operator
from ._errors import NullElementError
from ._fluent import MISSING, Missing, fluent
from ._operator_types import Operator, SameOperator
from ._operators import CANCELLED, FilterPublisher, MapPublisher, OperatorPublisher, OperatorSubscriber
from ._rules import index_of_none, require_callable, require_not_none
from ._sequence import SequencePublisher
from ._sources import just

__all__ = ["distinct_until_changed", "filter", "map", "scan", "skip_while", "take_while"]

T = TypeVar("T")
R = TypeVar("R")


@fluent
def map(function: Callable[[T], R]) -> Operator[T, R]:
    """``(T -> R) -> (Publisher[T] -> Publisher[R])``: each element through ``function``.

    Demand and cancel pass through unchanged. An exception from ``function`` cancels upstream
    and becomes ``on_error``; a ``None`` result is a §2.13 violation, signalled as
    ``NullElementError``.

    Demand passes through unchanged. Cancel passes upstream at once (§3.12, §3.13); a §3.9
    request is passed up and signalled (§3.9).
    """
    require_callable(function, "map(function)")
    return operator("map", lambda source: MapPublisher(source, function))


@fluent
def filter(predicate: Callable[[T], object]) -> Operator[T, T]:
    """``(T -> bool) -> (Publisher[T] -> Publisher[T])``: the elements for which ``predicate``
    is true. Each dropped one is asked for again upstream (one request per list), so downstream
    demand is met exactly (§1.1).

    Cancel passes upstream at once (§3.12, §3.13); a §3.9 request is passed up and signalled
    (§3.9); an exception from ``predicate`` cancels upstream, then ``on_error`` (§2.13).
    """
    require_callable(predicate, "filter(predicate)")
    return operator("filter", lambda source: FilterPublisher(source, predicate))


@overload
def scan(accumulator: Callable[[T, T], T]) -> Operator[T, T]: ...
@overload
def scan(accumulator: Callable[[R, T], R], initial: R) -> Operator[T, R]: ...
@fluent
def scan(accumulator: Callable[[Any, Any], Any], initial: object = MISSING) -> Operator[Any, Any]:
    """``((R, T) -> R, R) -> (Publisher[T] -> Publisher[R])``: the running values of
    ``accumulator``, as ``itertools.accumulate`` gives them: without ``initial``, the first
    element as it is, then ``accumulator(value, element)`` for each next one; with it,
    ``initial`` first (on the first request, before upstream is subscribed), then one value per
    element.

    Demand passes through (one value per element); with ``initial``, the request that takes it
    asks upstream for one fewer. An exception from ``accumulator`` cancels upstream and becomes
    ``on_error``, after the values before it; a ``None`` value is a ``NullElementError`` (§2.13).

    Cancel passes upstream at once (§3.12, §3.13); a §3.9 request is passed up and signalled
    (§3.9).
    """
    require_callable(accumulator, "scan(accumulator)")
    if initial is MISSING:
        return operator("scan", lambda source: _ScanPublisher(source, accumulator, MISSING))
    require_not_none(initial, "scan(accumulator, initial)'s initial", "§2.13")
    return operator(
        "scan",
        lambda source: SequencePublisher((just(initial), _ScanPublisher(source, accumulator, initial))),
    )


@fluent
def take_while(predicate: Callable[[T], object]) -> Operator[T, T]:
    """``(T -> bool) -> (Publisher[T] -> Publisher[T])``: the elements up to the first for which
    ``predicate`` is false, which is dropped: upstream is cancelled there, and the stream
    completes (as ``itertools.takewhile``). Demand passes through.

    Demand passes through. Cancel passes upstream at once (§3.12, §3.13); a §3.9 request is
    passed up and signalled (§3.9); an exception from ``predicate`` cancels upstream, then
    ``on_error`` (§2.13).
    """
    require_callable(predicate, "take_while(predicate)")
    return operator("take_while", lambda source: _PredicatePublisher(source, predicate, _TakeWhile))


@fluent
def skip_while(predicate: Callable[[T], object]) -> Operator[T, T]:
    """``(T -> bool) -> (Publisher[T] -> Publisher[T])``: the elements from the first for which
    ``predicate`` is false on (as ``itertools.dropwhile``). Each one skipped is asked for again
    upstream (§1.1); after the first false the predicate is not called again.

    Cancel passes upstream at once (§3.12, §3.13); a §3.9 request is passed up and signalled
    (§3.9); an exception from ``predicate`` cancels upstream, then ``on_error`` (§2.13).
    """
    require_callable(predicate, "skip_while(predicate)")
    return operator("skip_while", lambda source: _PredicatePublisher(source, predicate, _SkipWhile))


@overload
def distinct_until_changed() -> SameOperator: ...
@overload
def distinct_until_changed(key: Callable[[T], object]) -> Operator[T, T]: ...
@fluent
def distinct_until_changed(key: Callable[[Any], object] | None = None) -> Operator[Any, Any]:
    """``(T -> K) -> (Publisher[T] -> Publisher[T])``: each element whose key (the element
    itself without ``key``) differs (``!=``) from the previous element's; the others are
    dropped, and each is asked for again upstream (§1.1). An exception from ``key`` or from
    the comparison ends the stream with it.

    Cancel passes upstream at once (§3.12, §3.13); a §3.9 request is passed up and signalled
    (§3.9).
    """
    if key is not None:
        require_callable(key, "distinct_until_changed(key)")
    return operator("distinct_until_changed", lambda source: _DistinctPublisher(source, key))


class _ScanPublisher(OperatorPublisher[T, R]):
    __slots__ = ("_accumulator", "_seed")

    def __init__(self, source: Publisher[T], accumulator: Callable[[R, T], R], seed: R | Missing) -> None:
        super().__init__(source)
        self._accumulator, self._seed = accumulator, seed

    def _operator(self, downstream: Subscriber[R]) -> Subscriber[T]:
        return _ScanSubscriber(downstream, self._accumulator, self._seed)


class _ScanSubscriber(OperatorSubscriber[T, R]):
    __slots__ = ("_accumulator", "_value")

    def __init__(
        self, downstream: Subscriber[R], accumulator: Callable[[R, T], R], seed: R | Missing
    ) -> None:
        super().__init__(downstream)
        self._accumulator = accumulator
        self._value: Any = seed  # the last value out; MISSING before the first

    def on_next(self, item: T) -> None:
        if self._done:
            return  # §2.8
        value = self._value
        if value is MISSING:
            value = item
        else:
            try:
                value = self._accumulator(value, item)
            except Exception as exc:
                self._stop(exc)
                return
            if value is None:
                self._stop(NullElementError("§2.13: the scan accumulator returned None"))
                return
        self._value = value
        self._emit(value)

    def on_next_batch(self, items: list[T]) -> None:
        """The running values over a list, in C (``accumulate``); those before a failure, or
        before a None, go first (§1.4, §2.13)."""
        if self._done:
            return  # §2.8
        values: list[Any] = []
        failure: BaseException | None = None
        try:
            if self._value is MISSING:
                values.extend(accumulate(items, self._accumulator))
            else:
                running = accumulate(items, self._accumulator, initial=self._value)
                next(running)  # the value already out
                values.extend(running)  # keeps what came before a raise
        except Exception as exc:
            failure = exc
        at = index_of_none(values)
        if at >= 0:
            del values[at:]
            failure = NullElementError("§2.13: the scan accumulator returned None")
        if values:
            self._value = values[-1]
            self._emit_batch(values)
        if failure is not None:
            self._stop(failure)


class _PredicatePublisher(OperatorPublisher[T, T]):
    __slots__ = ("_kind", "_predicate")

    def __init__(
        self, source: Publisher[T], predicate: Callable[[T], object], kind: type[_TakeWhile[T]]
    ) -> None:
        super().__init__(source)
        self._predicate, self._kind = predicate, kind

    def _operator(self, downstream: Subscriber[T]) -> Subscriber[T]:
        return self._kind(downstream, self._predicate)


class _TakeWhile(OperatorSubscriber[T, T]):
    __slots__ = ("_predicate",)

    def __init__(self, downstream: Subscriber[T], predicate: Callable[[T], object]) -> None:
        super().__init__(downstream)
        self._predicate = predicate

    def on_next(self, item: T) -> None:
        if self._done:
            return  # §2.8
        try:
            keep = self._predicate(item)
        except Exception as exc:
            self._stop(exc)
            return
        if keep:
            self._emit(item)
        else:
            self._stop(None)  # upstream cancelled, then on_complete

    def on_next_batch(self, items: list[T]) -> None:
        """The list up to the first false (``takewhile``, in C); at that element upstream is
        cancelled before what was kept goes out, and the stream completes."""
        if self._done:
            return  # §2.8
        kept: list[T] = []
        failure: BaseException | None = None
        try:
            kept.extend(takewhile(self._predicate, items))  # keeps what came before a raise
        except Exception as exc:
            failure = exc
        if failure is None and len(kept) == len(items):
            self._emit_batch(kept)
            return
        upstream, self._upstream = self._upstream, CANCELLED  # the answer is known (§3.7: once)
        if upstream is not None:
            upstream.cancel()
        if kept:
            self._emit_batch(kept)
        self._terminate(failure)


class _SkipWhile(_TakeWhile[T]):
    __slots__ = ("_skipping",)

    def __init__(self, downstream: Subscriber[T], predicate: Callable[[T], object]) -> None:
        super().__init__(downstream, predicate)
        self._skipping = True

    def on_next(self, item: T) -> None:
        if self._done:
            return  # §2.8
        if self._skipping:
            try:
                skip = self._predicate(item)
            except Exception as exc:
                self._stop(exc)
                return
            if skip:
                if (upstream := self._upstream) is not None:
                    upstream.request(1)  # in place of the one skipped (§1.1)
                return
            self._skipping = False
        self._emit(item)

    def on_next_batch(self, items: list[T]) -> None:
        """While skipping, the list past the first false (``dropwhile``, in C), and one request
        for as many as were skipped; then lists pass as they are."""
        if self._done:
            return  # §2.8
        if not self._skipping:
            self._emit_batch(items)
            return
        rest: list[T] = []
        try:
            rest.extend(dropwhile(self._predicate, items))
        except Exception as exc:
            self._stop(exc)
            return
        skipped = len(items) - len(rest)
        if rest:
            self._skipping = False
            self._emit_batch(rest)
        if skipped and not self._done and (upstream := self._upstream) is not None:
            upstream.request(skipped)  # in place of those skipped (§1.1)


class _DistinctPublisher(OperatorPublisher[T, T]):
    __slots__ = ("_key",)

    def __init__(self, source: Publisher[T], key: Callable[[T], object] | None) -> None:
        super().__init__(source)
        self._key = key

    def _operator(self, downstream: Subscriber[T]) -> Subscriber[T]:
        return _DistinctSubscriber(downstream, self._key)


class _DistinctSubscriber(OperatorSubscriber[T, T]):
    __slots__ = ("_key", "_last")

    def __init__(self, downstream: Subscriber[T], key: Callable[[T], object] | None) -> None:
        super().__init__(downstream)
        self._key = key
        self._last: Any = MISSING  # the previous element's key

    def on_next(self, item: T) -> None:
        if self._done:
            return  # §2.8
        last = self._last
        try:
            key = item if self._key is None else self._key(item)
            changed = last is MISSING or key != last
        except Exception as exc:
            self._stop(exc)
            return
        self._last = key
        if changed:
            self._emit(item)
        elif (upstream := self._upstream) is not None:
            upstream.request(1)  # in place of the one dropped (§1.1)

    def on_next_batch(self, items: list[T]) -> None:
        """The changed elements of a list, and one request for as many as were dropped."""
        if self._done:
            return  # §2.8
        kept: list[T] = []
        keep = kept.append
        function, last = self._key, self._last
        failure: BaseException | None = None
        try:
            if function is None:
                for item in items:
                    if last is MISSING or item != last:
                        keep(item)
                    last = item
            else:
                for item in items:
                    key = function(item)
                    if last is MISSING or key != last:
                        keep(item)
                    last = key
        except Exception as exc:
            failure = exc
        self._last = last
        if kept:
            self._emit_batch(kept)
        if failure is not None:
            self._stop(failure)
            return
        dropped = len(items) - len(kept)
        if dropped and not self._done and (upstream := self._upstream) is not None:
            upstream.request(dropped)  # in place of those dropped (§1.1)
