"""Recovering from errors, on the `Arbiter`: `catch`, `on_error_return` and `retry`.

The source that takes over after an error is asked for exactly the demand still outstanding:
what was delivered before the error is never asked for again, and nothing requested is lost.
An error that a §3.9 request of the downstream's own caused is never recovered from; a handler
or predicate that raises ends the stream with what it raised (its ``__context__`` is the
error it was handling).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, TypeVar

from ._api import Publisher, Subscriber
from ._arbiter import Arbiter, ArbiterPublisher
from ._compose import operator
from ._errors import NullElementError
from ._fluent import fluent
from ._iterable import from_iterable
from ._later import DelayedSubscribe
from ._operator_types import SameOperator, UnionOperator
from ._rules import describe, require_callable, require_publisher
from ._schedulers import Scheduler
from ._time_args import scheduler_arg, seconds_arg

__all__ = ["catch", "on_error_return", "retry"]

T = TypeVar("T")
R = TypeVar("R")


@fluent
def catch(handler: Callable[[BaseException], Publisher[R]]) -> UnionOperator[R]:
    """``(Exception -> Publisher[R]) -> (Publisher[T] -> Publisher[T | R])``: the source's
    elements; if it fails, ``handler(error)``'s publisher continues the stream (rs's ``Catch``),
    once: an error of that publisher ends the stream. The handler may raise the error to pass it
    on (``raise error``), or raise another, which ends the stream.

    The source is asked for the demand as it comes; the handler's publisher, for exactly the
    demand outstanding (§1.1). A cancel reaches whichever is subscribed (§3.12); a §3.9 request
    is signalled and never recovered from (§3.9).
    """
    require_callable(handler, "catch(handler)")
    return operator("catch", lambda source: _RecoverPublisher(source, lambda: _Catch(handler)))


@fluent
def on_error_return(value: R | Callable[[BaseException], R]) -> UnionOperator[R]:
    """``(R | Exception -> R) -> (Publisher[T] -> Publisher[T | R])``: the source's elements; if
    it fails, one last element, then completion: ``value``, or ``value(error)`` when it is
    callable. The element goes out when there is demand for it (§1.1).

    Demand passes to the source as it comes; the last element waits for demand (§1.1). A cancel
    reaches the source (§3.12); a §3.9 request is signalled and never recovered from (§3.9).

    Raises:
        NullElementError: ``value`` is None.
    """
    if value is None:
        raise NullElementError("§2.13: on_error_return(value) needs a value, got None")

    def fallback(error: BaseException) -> Publisher[Any]:
        element = value(error) if callable(value) else value
        if element is None:
            raise NullElementError("§2.13: on_error_return's function returned None") from error
        return from_iterable((element,))

    return operator("on_error_return", lambda source: _RecoverPublisher(source, lambda: _Catch(fallback)))


@fluent
def retry(
    times: int | None,
    *,
    when: Callable[[BaseException], object] | None = None,
    backoff: float | None = None,
    max_backoff: float | None = None,
    jitter: float = 0.5,
    scheduler: Scheduler | None = None,
) -> SameOperator:
    """``(int | None) -> (Publisher[T] -> Publisher[T])``: the source's elements; if it fails
    (and ``when(error)`` is true, when given), it is subscribed again, at most ``times`` times in
    all (``None``: without limit), and the new subscription is asked for the demand outstanding,
    never again for what was delivered. The last error, or one ``when`` declines, ends the
    stream. A source that fails at once is subscribed again in a loop, not by recursion.

    With ``backoff`` (seconds), the k-th retry (k = 0, 1, ...) waits ``backoff × 2**k``, at most
    ``max_backoff`` (default: no bound), give or take ``jitter × `` that (a fraction in [0, 1],
    default 0.5), never less than ``backoff`` nor more than ``max_backoff``: Reactor's
    ``Retry.backoff``. The wait is kept by ``scheduler`` (default: `default_scheduler`); a
    cancel meanwhile stops its timer.

    Each subscription is asked for exactly the demand outstanding (§1.1); a cancel reaches the
    current one (§3.12); a §3.9 request is signalled and never retried (§3.9).

    Raises:
        TypeError, ValueError: ``times`` is not None or an int >= 0; ``when`` is not callable;
            ``backoff`` or ``max_backoff`` not seconds > 0, ``max_backoff < backoff``; ``jitter``
            not in [0, 1]; ``scheduler`` not a `Scheduler` that can wait; ``max_backoff``,
            ``jitter`` or ``scheduler`` without ``backoff``.
    """
    if times is not None and (isinstance(times, bool) or not isinstance(times, int)):
        raise TypeError(f"retry(times) needs an int or None, got {describe(times)}")
    if times is not None and times < 0:
        raise ValueError(f"retry(times) needs times >= 0, got {times}")
    if when is not None:
        require_callable(when, "retry(when=)")
    waits = _backoff(backoff, max_backoff, jitter, scheduler)
    return operator(
        "retry", lambda source: _RecoverPublisher(source, lambda: _Retry(source, times, when, waits))
    )


class _Backoff:
    """The wait before each retry: ``first × 2**k``, bounded, with jitter (Reactor's)."""

    def __init__(self, first: float, most: float, jitter: float, scheduler: Scheduler) -> None:
        self.first, self.most, self.jitter, self.scheduler = first, most, jitter, scheduler

    def seconds(self, attempt: int) -> float:
        base = min(self.first * 2.0 ** min(attempt, 1023), self.most)
        spread = base * self.jitter
        low = max(self.first, base - spread)
        high = min(self.most, base + spread)
        return low + random.random() * (high - low) if high > low else base


def _backoff(
    backoff: float | None, max_backoff: float | None, jitter: float, scheduler: Scheduler | None
) -> _Backoff | None:
    if backoff is None:
        if max_backoff is not None or jitter != 0.5 or scheduler is not None:
            raise ValueError("retry(max_backoff=, jitter=, scheduler=) need retry(backoff=) as well")
        return None
    first = seconds_arg(backoff, "retry(backoff=)", positive=True)
    most = float("inf")
    if max_backoff is not None:
        most = seconds_arg(max_backoff, "retry(max_backoff=)", positive=True)
    if most < first:
        raise ValueError(f"retry(max_backoff=) needs max_backoff >= backoff, got {max_backoff} < {backoff}")
    if isinstance(jitter, bool) or not isinstance(jitter, (int, float)) or not 0 <= jitter <= 1:
        raise ValueError(f"retry(jitter=) needs a fraction in [0, 1], got {describe(jitter)}")
    return _Backoff(first, most, float(jitter), scheduler_arg(scheduler, "retry(scheduler=)"))


class _Policy:
    """What to subscribe after an error: a publisher, or None to signal the error."""

    def after(self, error: BaseException) -> Publisher[Any] | None:
        raise NotImplementedError


class _Catch(_Policy):
    def __init__(self, handler: Callable[[BaseException], Publisher[Any]]) -> None:
        self._handler: Callable[[BaseException], Publisher[Any]] | None = handler

    def after(self, error: BaseException) -> Publisher[Any] | None:
        handler, self._handler = self._handler, None  # once: the fallback's error is the end
        if handler is None:
            return None
        publisher = handler(error)
        require_publisher(publisher, "catch(handler)'s handler result")
        return publisher


class _Retry(_Policy):
    def __init__(
        self,
        source: Publisher[Any],
        times: int | None,
        when: Callable[[BaseException], object] | None,
        backoff: _Backoff | None,
    ):
        self._source, self._left, self._when, self._backoff = source, times, when, backoff
        self._attempt = 0

    def after(self, error: BaseException) -> Publisher[Any] | None:
        if self._left == 0:
            return None
        if self._when is not None and not self._when(error):
            return None
        if self._left is not None:
            self._left -= 1
        backoff, attempt = self._backoff, self._attempt
        self._attempt += 1
        if backoff is None:
            return self._source
        return DelayedSubscribe(self._source, backoff.seconds(attempt), backoff.scheduler)


class _RecoverPublisher(ArbiterPublisher[T]):
    __slots__ = ("_policy", "_source")

    def __init__(self, source: Publisher[Any], policy: Callable[[], _Policy]) -> None:
        self._source, self._policy = source, policy

    def _arbiter(self, downstream: Subscriber[T]) -> Arbiter[T]:
        return _Recovering(downstream, self._source, self._policy())  # its state, per subscriber


class _Recovering(Arbiter[T]):
    def __init__(self, downstream: Subscriber[T], source: Publisher[Any], policy: _Policy) -> None:
        super().__init__(downstream)
        self._source, self._policy = source, policy

    def _first(self) -> Publisher[Any] | None:
        return self._source

    def _after_error(self, error: BaseException) -> Publisher[Any] | None:
        return self._policy.after(error)
