"""Sources: publishers made from values or functions (`just`, `empty`, `never`, `error`, `range`,
`repeat`, `defer`, `generate`).

Those that emit elements are `from_iterable` over an iterable made for them, so they keep every
rule the way it does (its drain emits only what is demanded, §1.1, on the requesting thread,
without recursion, §3.3); `never` and `error` are subscriptions of their own on the same kit.
"""

from __future__ import annotations

import builtins
import itertools
from collections.abc import Callable, Iterator
from typing import Any, Generic, NoReturn, TypeVar

from ._api import Publisher, Subscriber
from ._demand import Drain, DrainedSubscription, subscribe_and_start
from ._fluent import fluent
from ._iterable import from_iterable
from ._rules import describe, require_callable, require_not_none, require_publisher, signal_terminal

__all__ = ["defer", "empty", "error", "generate", "just", "never", "range", "repeat"]

T = TypeVar("T")
S = TypeVar("S")


def _check_count(count: object, what: str) -> int:
    if isinstance(count, bool) or not isinstance(count, int):
        raise TypeError(f"{what} needs an int, got {describe(count)}")
    if count < 0:
        raise ValueError(f"{what} needs count >= 0, got {count}")
    return count


@fluent
def just(*values: T) -> Publisher[T]:
    """``(T...) -> Publisher[T]``: a publisher of ``values``, in order, to every subscriber.

    Emits on the requesting thread only what is requested (§1.1) and completes with the last
    value, at once when there is none (§1.2). ``None`` is refused here, not signalled later
    (§2.13).

    >>> list(rs.just(1, 2, 3).iterate())
    [1, 2, 3]

    Asks nothing of anyone: emits at most the demand (§1.1), on the requesting thread, without
    recursion (§3.3); a cancel stops it and drops the subscriber (§3.12, §3.13).

    Raises:
        NullElementError: a value is None.
    """
    for value in values:
        require_not_none(value, "a value of just(*values)", "§2.13")
    return from_iterable(values)


_EMPTY: Publisher[Any] = from_iterable(())


@fluent
def empty() -> Publisher[NoReturn]:
    """A publisher that completes right after ``on_subscribe``, without a request (§1.2, §2.9).

    Rules: §1.2, §2.9 (completion without a request); §1.9; a cancel finds nothing left to stop
    (§3.6).
    """
    return _EMPTY


@fluent
def never() -> Publisher[NoReturn]:
    """A publisher that signals ``on_subscribe`` and nothing more, whatever is requested; a §3.9
    request is still signalled as ``on_error``, and a cancel drops the subscriber (§3.13).

    Rules: §1.9, §3.9 (the only signal it may send), §3.13 (a cancel drops the subscriber).
    """
    return _Never()


@fluent
def error(exception: BaseException) -> Publisher[NoReturn]:
    """A publisher that signals ``on_error(exception)`` right after ``on_subscribe``, without a
    request (§1.4, §2.10). Every subscriber gets the same exception object.

    Rules: §1.4, §1.9, §2.10; a cancel after it does nothing (§3.6).

    Raises:
        TypeError: ``exception`` is not an exception (a class is refused: pass ``Boom("...")``).
    """
    if not isinstance(exception, BaseException):
        raise TypeError(f"error(exception) needs an exception instance, got {describe(exception)}")
    return _Error(exception)


@fluent
def range(start: int, count: int) -> Publisher[int]:
    """The ``count`` ints ``start, start + 1, ...``: ``from_iterable(builtins.range(start, start +
    count))``, completing with the last.

    >>> list(rs.range(5, 3).iterate())
    [5, 6, 7]

    Emits at most the demand (§1.1), on the requesting thread, without recursion (§3.3), and
    completes with the last (§1.5); a cancel stops it and drops the subscriber (§3.12, §3.13).

    Raises:
        TypeError: ``start`` or ``count`` is not an int. ValueError: ``count`` is negative.
    """
    if isinstance(start, bool) or not isinstance(start, int):
        raise TypeError(f"range(start, count) needs an int start, got {describe(start)}")
    _check_count(count, "range(start, count)")
    return from_iterable(builtins.range(start, start + count))


@fluent
def repeat(value: T, count: int | None = None) -> Publisher[T]:
    """``value`` ``count`` times (without end when ``count`` is None), emitted only as requested.

    Emits at most the demand (§1.1), on the requesting thread, without recursion (§3.3); a
    cancel stops it and drops the subscriber (§3.12, §3.13).

    Raises:
        NullElementError: ``value`` is None. TypeError, ValueError: ``count`` is not an int >= 0.
    """
    require_not_none(value, "repeat(value)", "§2.13")
    if count is None:
        return from_iterable(_Reiterable(lambda: itertools.repeat(value)))
    return from_iterable(_Repeated(value, _check_count(count, "repeat(value, count)")))


@fluent
def defer(factory: Callable[[], Publisher[T]]) -> Publisher[T]:
    """A publisher that calls ``factory()`` for each subscriber and subscribes it to the publisher
    that returns: each subscriber gets one of its own (rs's ``Start``), made only when it
    subscribes. A ``factory`` that raises, or returns what is not a publisher, is signalled as
    ``on_error`` after ``on_subscribe`` (§1.9), never raised.

    Demand and cancel go to the publisher made for the subscriber, which keeps the rules for
    them; ``factory()`` is called once per subscriber.

    Raises:
        TypeError: ``factory`` is not callable.
    """
    require_callable(factory, "defer(factory)")
    return _Deferred(factory)


@fluent
def generate(state: S, step: Callable[[S], tuple[T, S] | None]) -> Publisher[T]:
    """A source written as a function: ``step(state)`` returns ``(element, next_state)``, or None
    at the end, and is called only when there is demand, once per element (§1.1), on the
    requesting thread. Each subscriber starts from ``state``: keep it immutable (an int, a tuple)
    so that subscribers do not share it. An exception from ``step`` ends the stream with it (§1.4).

    >>> countdown = rs.generate(3, lambda n: (n, n - 1) if n > 0 else None)
    >>> list(countdown.iterate())
    [3, 2, 1]

    A cancel stops the calls and drops the subscriber and its state (§3.12, §3.13); ``step``
    runs on the requesting thread, never recursively (§3.3).

    Raises:
        TypeError: ``step`` is not callable.
    """
    require_callable(step, "generate(state, step)")
    return from_iterable(_Reiterable(lambda: _generated(state, step)))


class _Repeated(Generic[T]):
    """``value``, ``count`` times: sized, so that the stream completes with the last."""

    __slots__ = ("_count", "_value")

    def __init__(self, value: T, count: int) -> None:
        self._value, self._count = value, count

    def __iter__(self) -> Iterator[T]:
        return itertools.repeat(self._value, self._count)

    def __len__(self) -> int:
        return self._count


class _Reiterable(Generic[T]):
    """A fresh iterator from ``make()`` for each subscriber."""

    __slots__ = ("_make",)

    def __init__(self, make: Callable[[], Iterator[T]]) -> None:
        self._make = make

    def __iter__(self) -> Iterator[T]:
        return self._make()


def _generated(state: S, step: Callable[[S], tuple[T, S] | None]) -> Iterator[T]:
    """The elements ``step`` makes from ``state`` on, one per ``next()``."""
    while True:
        produced = step(state)
        if produced is None:
            return
        if not isinstance(produced, tuple) or len(produced) != 2:
            raise TypeError(
                "generate(state, step): step(state) must return (element, next_state), or None to "
                f"end, got {describe(produced)}"
            )
        element, state = produced
        yield element


class _Deferred(Publisher[T]):
    __slots__ = ("_factory",)

    def __init__(self, factory: Callable[[], Publisher[T]]) -> None:
        self._factory = factory

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        """Subscribe ``subscriber`` to a publisher made for it (§1.9)."""
        require_not_none(subscriber, "subscriber", "§1.9")
        try:
            publisher = self._factory()
            require_publisher(publisher, "defer(factory)'s factory() result")
        except Exception as exc:
            _Error(exc).subscribe(subscriber)  # §1.9: signalled after on_subscribe, never raised
            return
        publisher.subscribe(subscriber)


class _Never(Publisher[NoReturn]):
    __slots__ = ()

    def subscribe(self, subscriber: Subscriber[NoReturn]) -> None:
        """Signal ``on_subscribe``, then nothing but a §3.9 error."""
        subscribe_and_start(subscriber, _Quiet(subscriber, None))


class _Error(Publisher[NoReturn]):
    __slots__ = ("_exception",)

    def __init__(self, exception: BaseException) -> None:
        self._exception = exception

    def subscribe(self, subscriber: Subscriber[NoReturn]) -> None:
        """Signal ``on_subscribe``, then ``on_error`` (§1.9, §2.10)."""
        subscribe_and_start(subscriber, _Quiet(subscriber, self._exception))


class _Quiet(DrainedSubscription[Any]):
    """A subscription that emits no element: its drain signals the given error (or a §3.9 one)
    and ends; without an error, it waits for a cancel."""

    __slots__ = ("__weakref__", "_failure")

    def __init__(self, subscriber: Subscriber[Any], failure: BaseException | None) -> None:
        super().__init__(subscriber, Drain(self._signal))
        self._failure = failure

    def cancel(self) -> None:
        """Drop the subscriber (§3.5, §3.13)."""
        with self._drain.lock:
            self._subscriber = None

    def _signal(self) -> None:
        with self._drain.lock:
            subscriber = self._subscriber
            error = self._failure if self._failure is not None else self._error  # or §3.9's
            if subscriber is None or error is None:
                return
            self._subscriber = None  # §1.7, §3.13
        signal_terminal(subscriber, error)
